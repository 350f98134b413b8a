//! Extraction into a staging directory, verification of a staged skill, and
//! the atomic commit.

use std::io::Read;
use std::path::{Path, PathBuf};

use agent_manifest::Manifest;
use agent_trust::{PublicKey, TrustStore};
use semver::Version;

use crate::format::PermissionRef;
use crate::skills_dir::{self, DirLock};
use crate::{Progress, RegistryError, fault};

/// The most an artifact may expand to (64 MiB).
pub const MAX_UNPACKED_BYTES: u64 = 64 * 1024 * 1024;
const MAX_ENTRIES: usize = 10_000;

/// A skill that was installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: Version,
    /// Where it is now (`<dest_dir>/<name>`).
    pub dir: PathBuf,
    /// Hex SHA-256 of the unsigned component.
    pub digest: String,
    /// Hex SHA-256 of its `SKILL.yaml` (stored grants are bound to it).
    pub manifest_sha256: String,
    /// What it may do, from its manifest.
    pub permissions: Vec<PermissionRef>,
}

/// The permissions a manifest declares, each scoped by its `exec`, `hosts`
/// or `env` entries (one record per scope), sorted.
pub fn manifest_permissions(m: &Manifest) -> Vec<PermissionRef> {
    let mut out = Vec::new();
    for p in &m.permissions {
        let scopes = m.scopes_of(*p);
        if scopes.is_empty() {
            out.push(PermissionRef {
                permission: p.as_str().to_string(),
                scope: None,
            });
        } else {
            for s in scopes {
                out.push(PermissionRef {
                    permission: p.as_str().to_string(),
                    scope: Some(s),
                });
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every file a manifest names, relative to its directory: SKILL.yaml, the
/// component, prompt and context files, tool schemas, security and wiki files.
pub(crate) fn named_files(m: &Manifest) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = m.named_files().into_iter().map(PathBuf::from).collect();
    out.push(PathBuf::from(agent_manifest::MANIFEST_FILE));
    out.sort();
    out.dedup();
    out
}

/// A staging directory inside `dest_dir`, removed on drop unless committed.
/// It holds the directory's lock from creation to commit (see
/// [`crate::skills_dir`]), so recovery in another process never takes it
/// for a leftover.
pub(crate) struct Staging {
    dir: Option<tempfile::TempDir>,
    created_dest: Option<PathBuf>,
    lock: Option<DirLock>,
}

impl Staging {
    /// Takes `dest_dir`'s lock (waiting for another install or remove),
    /// recovers what interrupted ones left, and creates the staging directory.
    pub(crate) fn new(dest_dir: &Path) -> Result<Staging, RegistryError> {
        let created_dest = if dest_dir.exists() {
            None
        } else {
            std::fs::create_dir_all(dest_dir).map_err(|e| RegistryError::io(dest_dir, e))?;
            Some(dest_dir.to_path_buf())
        };
        let mut staging = Staging {
            dir: None,
            created_dest,
            lock: None,
        };
        let lock = DirLock::acquire(dest_dir)?;
        skills_dir::recover(dest_dir, &lock)?;
        staging.lock = Some(lock);
        staging.dir = Some(
            tempfile::Builder::new()
                .prefix(skills_dir::STAGING_PREFIX)
                .tempdir_in(dest_dir)
                .map_err(|e| RegistryError::io(dest_dir, e))?,
        );
        Ok(staging)
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.as_ref().map(|d| d.path()).unwrap_or(Path::new(""))
    }

    /// Puts the staged tree in place as `dest_dir/name`, replacing an
    /// existing install atomically ([`skills_dir::put_in_place`]).
    pub(crate) fn commit(mut self, dest_dir: &Path, name: &str) -> Result<PathBuf, RegistryError> {
        fault::point("install:staged");
        let (Some(lock), Some(dir)) = (&self.lock, &self.dir) else {
            return Err(RegistryError::Invalid(
                "internal: a staging directory committed twice".into(),
            ));
        };
        let target = skills_dir::put_in_place(dir.path(), dest_dir, name, lock)?;
        if let Some(dir) = self.dir.take() {
            let _ = dir.keep();
        }
        self.created_dest = None;
        Ok(target)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        drop(self.dir.take());
        drop(self.lock.take());
        if let Some(d) = &self.created_dest {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// Extracts a `.tar.gz` into `dir`, refusing `..`, absolute paths, links,
/// devices and more than [`MAX_UNPACKED_BYTES`].
pub(crate) fn extract(
    archive: &[u8],
    dir: &Path,
    artifact: &str,
    progress: &dyn Progress,
) -> Result<(), RegistryError> {
    let bad = |entry: &str, why: &str| RegistryError::UnsafePath {
        file: artifact.to_string(),
        field: format!("entry `{entry}`"),
        message: format!("{why}; the artifact is unsafe, refusing it"),
    };
    let io = |e: std::io::Error| {
        RegistryError::format(artifact, None, format!("not a valid .tar.gz: {e}"))
    };
    progress.start(&format!("extract {artifact}"), Some(archive.len() as u64));
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let mut total: u64 = 0;
    for (count, entry) in tar.entries().map_err(io)?.enumerate() {
        let mut entry = entry.map_err(io)?;
        if count >= MAX_ENTRIES {
            return Err(RegistryError::TooLarge {
                file: artifact.into(),
                message: format!("more than {MAX_ENTRIES} entries"),
            });
        }
        let raw = String::from_utf8_lossy(&entry.path_bytes()).to_string();
        let kind = entry.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) {
            return Err(bad(
                &raw,
                &format!(
                    "is a {kind:?} entry (only regular files and directories are allowed; links and devices are refused)"
                ),
            ));
        }
        if raw.starts_with('/') || raw.contains('\\') || raw.contains(':') {
            return Err(bad(&raw, "has an absolute path"));
        }
        let mut rel = PathBuf::new();
        for part in raw.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    return Err(bad(
                        &raw,
                        "contains `..` and would leave the skill directory",
                    ));
                }
                p => rel.push(p),
            }
        }
        if rel.as_os_str().is_empty() {
            continue;
        }
        let out = dir.join(&rel);
        if kind.is_dir() {
            std::fs::create_dir_all(&out).map_err(|e| RegistryError::io(&out, e))?;
            continue;
        }
        if let Some(parent) = out.parent() {
            std::fs::create_dir_all(parent).map_err(|e| RegistryError::io(parent, e))?;
        }
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&out)
            .map_err(|e| RegistryError::io(&out, e))?;
        let remaining = MAX_UNPACKED_BYTES - total;
        let n =
            copy_entry(&mut (&mut entry).take(remaining + 1), &mut file).map_err(|e| match e {
                CopyError::Archive(e) => io(e),
                CopyError::Write(e) => RegistryError::io(&out, e),
            })?;
        total += n;
        if total > MAX_UNPACKED_BYTES {
            return Err(RegistryError::TooLarge {
                file: artifact.into(),
                message: format!("unpacks to more than {MAX_UNPACKED_BYTES} bytes"),
            });
        }
        progress.advance(n);
    }
    progress.finish(&format!("extract {artifact}"));
    Ok(())
}

/// Which side of [`copy_entry`] failed: a corrupt archive is not a full disk.
enum CopyError {
    Archive(std::io::Error),
    Write(std::io::Error),
}

/// Copies an archive entry to its file, telling read errors (the archive)
/// from write errors (the disk: no space left on device, quota).
fn copy_entry(from: &mut impl Read, to: &mut impl std::io::Write) -> Result<u64, CopyError> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CopyError::Archive(e)),
        };
        to.write_all(&buf[..n]).map_err(CopyError::Write)?;
        total += n as u64;
    }
}

/// What the staged skill must be (from the index), when installing from one.
pub(crate) struct Expected<'a> {
    pub rec: &'a crate::VersionRecord,
    pub versions_file: &'a str,
    /// The component key from the index's `keys/`.
    pub key: PublicKey,
}

/// What [`check_staged`] verified.
pub(crate) struct Staged {
    pub manifest: Manifest,
    /// Hex SHA-256 of the unsigned component.
    pub digest: String,
    /// Hex SHA-256 of `SKILL.yaml`.
    pub manifest_sha256: String,
}

/// Verifies a staged skill: manifest, the signature by a trusted key over
/// the component, `SKILL.yaml` and every file it names, and, when `expected`
/// is given, that everything matches the index.
pub(crate) fn check_staged(
    dir: &Path,
    expected: Option<&Expected<'_>>,
    trust: &TrustStore,
) -> Result<Staged, RegistryError> {
    let (manifest, manifest_bytes) =
        Manifest::from_file_with_bytes(&dir.join(agent_manifest::MANIFEST_FILE))?;
    let manifest_sha256 = hex::encode(agent_trust::sha256(&manifest_bytes));
    let mismatch =
        |field: &str, expected: String, found: String, e: &Expected<'_>| RegistryError::Mismatch {
            field: field.into(),
            expected,
            found,
            recorded_in: e.versions_file.to_string(),
        };
    if let Some(e) = expected {
        if manifest.name != e.rec.name {
            return Err(mismatch(
                "SKILL.yaml field `name`",
                e.rec.name.clone(),
                manifest.name.clone(),
                e,
            ));
        }
        if manifest.version != e.rec.version {
            return Err(mismatch(
                "SKILL.yaml field `version`",
                e.rec.version.to_string(),
                manifest.version.to_string(),
                e,
            ));
        }
        let perms = manifest_permissions(&manifest);
        if perms != e.rec.permissions {
            let show = |v: &[PermissionRef]| {
                v.iter()
                    .map(|p| match &p.scope {
                        Some(s) => format!("{}({s})", p.permission),
                        None => p.permission.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(mismatch(
                "SKILL.yaml field `permissions`",
                show(&e.rec.permissions),
                show(&perms),
                e,
            ));
        }
    }
    let Some(component) = manifest.component_path(dir) else {
        return Err(RegistryError::format(
            "SKILL.yaml",
            Some("implementation.component"),
            "missing: a skill installed this way needs a signed component",
        ));
    };
    let comp_name = manifest
        .implementation
        .as_ref()
        .map(|i| i.component.display().to_string())
        .unwrap_or_default();
    let bytes = std::fs::read(&component).map_err(|e| RegistryError::io(&component, e))?;
    let split = agent_trust::split(&bytes).map_err(|source| RegistryError::Trust {
        file: comp_name.clone(),
        source,
    })?;
    let digest = hex::encode(agent_trust::sha256(split.unsigned));
    if let Some(e) = expected {
        if digest != e.rec.component.sha256 {
            return Err(RegistryError::DigestMismatch {
                file: comp_name,
                recorded_in: format!("{} (component.sha256)", e.versions_file),
                expected: e.rec.component.sha256.clone(),
                found: digest,
            });
        }
        let Some(block) = &split.block else {
            return Err(RegistryError::Trust {
                file: comp_name,
                source: agent_trust::TrustError::Unsigned,
            });
        };
        if block.key != e.key || block.key.id().0 != e.rec.component.key_id {
            return Err(mismatch(
                "component signer",
                e.rec.component.key_id.clone(),
                block.key.id().0,
                e,
            ));
        }
        if hex::encode(block.signature) != e.rec.component.signature {
            return Err(mismatch(
                "component signature",
                e.rec.component.signature.clone(),
                hex::encode(block.signature),
                e,
            ));
        }
    }
    let staged = |manifest: Manifest| Staged {
        manifest,
        digest: digest.clone(),
        manifest_sha256: manifest_sha256.clone(),
    };
    let trust_err = |file: String, source| RegistryError::Trust { file, source };
    let verified = agent_trust::verify(&bytes, |k| trust.is_trusted(k))
        .map_err(|source| trust_err(comp_name.clone(), source))?;
    verified
        .statement
        .check_files(&manifest.signed_files(), |rel| {
            if rel == agent_manifest::MANIFEST_FILE {
                Ok(manifest_bytes.clone())
            } else {
                agent_trust::read_skill_file(dir, rel)
            }
        })
        .map_err(|source| trust_err(agent_manifest::MANIFEST_FILE.to_string(), source))?;
    Ok(staged(manifest))
}

/// `agent skill install ./path`: copies the files the manifest in `src`
/// names into a staging directory in `dest_dir`, verifies the signature by a
/// trusted key over the component, `SKILL.yaml` and those files, and renames
/// it to `dest_dir/<name>` atomically. An unsigned component is refused
/// ([`RegistryError::UnsignedInstall`]): installed skills load only signed.
///
/// # Errors
/// Manifest, trust, I/O errors; nothing is left behind on failure.
pub fn install_from_dir(
    src: &Path,
    dest_dir: &Path,
    trust: &TrustStore,
) -> Result<Installed, RegistryError> {
    install_staged(src, &src.display().to_string(), dest_dir, trust)
}

fn install_staged(
    src: &Path,
    from: &str,
    dest_dir: &Path,
    trust: &TrustStore,
) -> Result<Installed, RegistryError> {
    let manifest = Manifest::load_dir(src)?;
    let staging = Staging::new(dest_dir)?;
    for rel in named_files(&manifest) {
        let from = src.join(&rel);
        let meta = std::fs::symlink_metadata(&from).map_err(|e| RegistryError::io(&from, e))?;
        if !meta.is_file() {
            return Err(RegistryError::Invalid(format!(
                "{}: named by SKILL.yaml but not a regular file (symlinks are not copied)",
                from.display()
            )));
        }
        let to = staging.path().join(&rel);
        if let Some(p) = to.parent() {
            std::fs::create_dir_all(p).map_err(|e| RegistryError::io(p, e))?;
        }
        std::fs::copy(&from, &to).map_err(|e| RegistryError::io(&from, e))?;
    }
    let staged = check_staged(staging.path(), None, trust).map_err(|e| match e {
        RegistryError::Trust {
            source: agent_trust::TrustError::Unsigned,
            ..
        } => RegistryError::UnsignedInstall {
            name: manifest.name.clone(),
            from: from.to_string(),
        },
        e => e,
    })?;
    let name = staged.manifest.name.clone();
    let dir = staging.commit(dest_dir, &name)?;
    Ok(Installed {
        permissions: manifest_permissions(&staged.manifest),
        name,
        version: staged.manifest.version,
        dir,
        digest: staged.digest,
        manifest_sha256: staged.manifest_sha256,
    })
}

/// `agent skill install git+URL[#rev]`: clones the skill repository (its
/// `SKILL.yaml` at the root) into `cache_dir` and installs it like
/// [`install_from_dir`], requiring a component signed by a trusted key.
///
/// # Errors
/// Git, manifest, trust and I/O errors.
pub fn install_from_git(
    url: &str,
    rev: Option<&str>,
    cache_dir: &Path,
    dest_dir: &Path,
    trust: &TrustStore,
    progress: &dyn Progress,
) -> Result<Installed, RegistryError> {
    let checkout = crate::source::git_checkout(url, rev, cache_dir, progress)?;
    let from = match rev {
        Some(rev) => format!("{url}#{rev}"),
        None => url.to_string(),
    };
    install_staged(&checkout, &from, dest_dir, trust)
}

/// Removes `dest_dir/<name>` atomically, under the directory's lock (see
/// [`crate::skills_dir`]).
///
/// # Errors
/// [`RegistryError::NotInstalled`], or an I/O error.
pub fn remove(dest_dir: &Path, name: &str) -> Result<(), RegistryError> {
    if !agent_manifest::is_skill_name(name) {
        return Err(RegistryError::Invalid(format!(
            "`{name}` is not a valid skill name"
        )));
    }
    let not_installed = || RegistryError::NotInstalled {
        name: name.into(),
        dir: dest_dir.to_path_buf(),
    };
    if !dest_dir.is_dir() {
        return Err(not_installed());
    }
    let lock = DirLock::acquire(dest_dir)?;
    skills_dir::recover(dest_dir, &lock)?;
    if std::fs::symlink_metadata(dest_dir.join(name)).is_err() {
        return Err(not_installed());
    }
    skills_dir::remove_skill(dest_dir, name, &lock)
}

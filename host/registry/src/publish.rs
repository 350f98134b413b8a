//! Creating and publishing to an index, and checking one.

use std::path::{Path, PathBuf};

use agent_manifest::Manifest;
use agent_trust::{SecretKey, TrustStore};

use crate::format::{
    ComponentRef, INDEX_FORMAT, IndexEntry, IndexFile, Metadata, Snapshot, SnapshotSig,
    VersionRecord, check_index, format_time, parse_time, parse_yaml, sha256_hex, to_yaml,
    versions_path,
};
use crate::index::{parse_version_record, read_key, snapshot_message, verify_snapshot_sig};
use crate::install::{Expected, check_staged, extract, manifest_permissions, named_files};
use crate::publish_steps::{
    artifact_ref, check_artifact, open_index, record_version, unpublished, write_version,
};
use crate::source::{Files, write_atomic};
use crate::{NoProgress, RegistryError};

/// Creates an empty index in `dir`: `index.yaml` (no skills), `skills/`,
/// `artifacts/`, `keys/`. The snapshot is written and signed at the first
/// publish.
///
/// # Errors
/// An existing `index.yaml`, or an I/O error.
pub fn init(dir: &Path) -> Result<(), RegistryError> {
    let index = dir.join("index.yaml");
    if index.exists() {
        return Err(RegistryError::Invalid(format!(
            "{}: already exists; this is an index already",
            index.display()
        )));
    }
    for sub in ["skills", "artifacts", "keys"] {
        let p = dir.join(sub);
        std::fs::create_dir_all(&p).map_err(|e| RegistryError::io(&p, e))?;
    }
    let empty = IndexFile {
        format: INDEX_FORMAT,
        skills: Vec::new(),
    };
    write_atomic(&index, to_yaml(&empty)?.as_bytes())
}

/// What to publish.
pub struct PublishRequest<'a> {
    /// The component to sign and publish.
    pub component: &'a Path,
    /// The skill's `SKILL.yaml`; the files it names are read next to it.
    pub manifest: &'a Path,
    /// The publisher's secret key: signs the component and the snapshot.
    pub key: &'a SecretKey,
    /// The index directory.
    pub index: &'a Path,
    /// How long the new snapshot is valid (default 365 days).
    pub expires_in: time::Duration,
}

fn read(path: &Path) -> Result<Vec<u8>, RegistryError> {
    std::fs::read(path).map_err(|e| RegistryError::io(path, e))
}

/// Publishes a skill version: signs the component, packs the artifact,
/// writes the versions file, metadata, `index.yaml`, `keys/<id>.pub`, and
/// re-signs the snapshot with version + 1.
///
/// # Errors
/// A version already published, a manifest without a component, a broken
/// index, or I/O errors.
pub fn publish(req: &PublishRequest) -> Result<VersionRecord, RegistryError> {
    let root = req.index;
    let (index_path, index) = open_index(root)?;
    let manifest = Manifest::from_file(req.manifest)?;
    let skill_dir = req.manifest.parent().unwrap_or(Path::new("."));
    let Some(implementation) = &manifest.implementation else {
        return Err(RegistryError::format(
            req.manifest.display().to_string(),
            Some("implementation.component"),
            "missing: a published skill needs a component",
        ));
    };
    let vrel = unpublished(root, &index, &manifest.name, &manifest.version)?;

    // Sign the component, SKILL.yaml and every file it names; pack exactly those bytes.
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for rel in manifest.signed_files() {
        let bytes = if rel == agent_manifest::MANIFEST_FILE {
            read(req.manifest)?
        } else {
            agent_trust::read_skill_file(skill_dir, &rel).map_err(|message| {
                RegistryError::Invalid(format!(
                    "{}: named by {} but {message}",
                    skill_dir.join(&rel).display(),
                    req.manifest.display()
                ))
            })?
        };
        files.push((rel, bytes));
    }
    let signed = agent_trust::sign(&read(req.component)?, &files, req.key.signing_key()).map_err(
        |source| RegistryError::Trust {
            file: req.component.display().to_string(),
            source,
        },
    )?;
    let split = agent_trust::split(&signed).map_err(|source| RegistryError::Trust {
        file: req.component.display().to_string(),
        source,
    })?;
    let digest = hex::encode(agent_trust::sha256(split.unsigned));
    let signature = split
        .block
        .as_ref()
        .map(|b| hex::encode(b.signature))
        .unwrap_or_default();
    let comp_rel: PathBuf = manifest.resolve_path(Path::new(""), &implementation.component);
    let mut entries: Vec<(String, Vec<u8>)> = Vec::new();
    for rel in named_files(&manifest) {
        let name = rel.to_string_lossy().replace('\\', "/");
        let bytes = if rel == comp_rel {
            signed.clone()
        } else {
            files
                .iter()
                .find(|(p, _)| *p == name)
                .map(|(_, b)| b.clone())
                .ok_or_else(|| {
                    RegistryError::Invalid(format!("{name}: named by the manifest but not signed"))
                })?
        };
        entries.push((name, bytes));
    }
    let archive = pack(&entries, root)?;
    let artifact = artifact_ref(&manifest.name, &manifest.version, &archive);
    let key_id = req.key.public().id().0;
    let now = time::OffsetDateTime::now_utc();
    let rec = VersionRecord {
        name: manifest.name.clone(),
        version: manifest.version.clone(),
        published: format_time(now),
        artifact: artifact.clone(),
        component: ComponentRef {
            sha256: digest,
            signature,
            key_id: key_id.clone(),
        },
        permissions: manifest_permissions(&manifest),
        min_agent_version: manifest.compatibility.agent_version.clone(),
    };
    let metadata = Metadata {
        name: manifest.name.clone(),
        description: manifest.description.clone(),
        author: manifest.author.clone(),
        license: manifest.license.clone(),
        homepage: manifest.homepage.clone(),
        keywords: manifest.triggers.keywords.clone(),
    };
    write_version(root, &archive, &artifact, &vrel, &rec, &metadata)?;
    let key_path = root.join(format!("keys/{key_id}.pub"));
    if !key_path.exists() {
        write_atomic(&key_path, req.key.public().to_file_line("").as_bytes())?;
    }
    record_version(
        &index_path,
        index,
        IndexEntry {
            name: manifest.name.clone(),
            description: manifest.description.clone(),
            latest: manifest.version.clone(),
            versions: vec![manifest.version.clone()],
            keywords: manifest.triggers.keywords.clone(),
            author: manifest.author.clone(),
        },
    )?;
    resign_snapshot(root, req.key, now + req.expires_in)?;
    Ok(rec)
}

/// A `.tar.gz` of `entries` (path, bytes): regular files, mode 0644, mtime 0.
pub(crate) fn pack(entries: &[(String, Vec<u8>)], root: &Path) -> Result<Vec<u8>, RegistryError> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (name, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder
            .append_data(&mut header, name, bytes.as_slice())
            .map_err(|e| RegistryError::io(Path::new(name), e))?;
    }
    builder
        .into_inner()
        .and_then(|gz| gz.finish())
        .map_err(|e| RegistryError::io(root, e))
}

/// Every `skills/*/versions/*.yaml` under `root`, relative, sorted.
pub(crate) fn versions_files(root: &Path) -> Result<Vec<String>, RegistryError> {
    let mut out = Vec::new();
    let skills = root.join("skills");
    let Ok(rd) = std::fs::read_dir(&skills) else {
        return Ok(out);
    };
    for skill in rd {
        let skill = skill.map_err(|e| RegistryError::io(&skills, e))?;
        let vdir = skill.path().join("versions");
        let Ok(vs) = std::fs::read_dir(&vdir) else {
            continue;
        };
        for v in vs {
            let v = v.map_err(|e| RegistryError::io(&vdir, e))?;
            let file = v.file_name().to_string_lossy().to_string();
            if file.ends_with(".yaml") {
                out.push(format!(
                    "skills/{}/versions/{file}",
                    skill.file_name().to_string_lossy()
                ));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Writes `snapshot.yaml` (previous version + 1, digests of `index.yaml`
/// and every versions file) and signs it into `snapshot.sig`.
pub(crate) fn resign_snapshot(
    root: &Path,
    key: &SecretKey,
    expires: time::OffsetDateTime,
) -> Result<u64, RegistryError> {
    use ed25519_dalek::Signer;
    let snap_path = root.join("snapshot.yaml");
    let previous = if snap_path.exists() {
        parse_yaml::<Snapshot>(&read(&snap_path)?, "snapshot.yaml")?.version
    } else {
        0
    };
    let mut versions = std::collections::BTreeMap::new();
    for rel in versions_files(root)? {
        versions.insert(rel.clone(), sha256_hex(&read(&root.join(&rel))?));
    }
    let snapshot = Snapshot {
        version: previous + 1,
        expires: format_time(expires),
        index: sha256_hex(&read(&root.join("index.yaml"))?),
        versions,
    };
    let bytes = to_yaml(&snapshot)?.into_bytes();
    let sig = key.signing_key().sign(&snapshot_message(&bytes));
    let sig_file = SnapshotSig {
        key_id: key.public().id().0,
        signature: hex::encode(sig.to_bytes()),
    };
    let key_path = root.join(format!("keys/{}.pub", sig_file.key_id));
    if !key_path.exists() {
        write_atomic(&key_path, key.public().to_file_line("").as_bytes())?;
    }
    write_atomic(&snap_path, &bytes)?;
    write_atomic(&root.join("snapshot.sig"), to_yaml(&sig_file)?.as_bytes())?;
    Ok(snapshot.version)
}

/// The result of [`verify_index`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// The snapshot version, when it could be read.
    pub snapshot_version: Option<u64>,
    /// Skills in `index.yaml`.
    pub skills: usize,
    /// Versions files checked.
    pub versions: usize,
    /// Every problem found, one sentence each naming the file.
    pub problems: Vec<String>,
}

impl VerifyReport {
    /// Whether no problem was found.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Checks every signature and digest of the index in `dir`: the snapshot
/// signature (and, with `trust`, that its key is trusted), expiry at `now`,
/// `index.yaml` and each versions file against the snapshot, each versions
/// file against its artifact, and each artifact's content (manifest, component
/// digest and signature).
///
/// # Errors
/// Only when `dir` holds no `index.yaml`; everything else is a problem in the report.
pub fn verify_index(
    dir: &Path,
    trust: Option<&TrustStore>,
    now: time::OffsetDateTime,
) -> Result<VerifyReport, RegistryError> {
    if !dir.join("index.yaml").is_file() {
        return Err(RegistryError::Invalid(format!(
            "{}: no index.yaml; not a registry index",
            dir.display()
        )));
    }
    let files = Files::Dir(dir.to_path_buf());
    let mut report = VerifyReport::default();
    let p = &mut report.problems;
    let snapshot = (|| -> Result<Snapshot, RegistryError> {
        let sig: SnapshotSig =
            parse_yaml(&files.read("snapshot.sig", &NoProgress)?, "snapshot.sig")?;
        let snap_bytes = files.read("snapshot.yaml", &NoProgress)?;
        let key = read_key(&files, &sig.key_id, "snapshot.sig", "key_id", &NoProgress)?;
        verify_snapshot_sig(&snap_bytes, &sig, &key)?;
        if let Some(t) = trust
            && !t.is_trusted(&key)
        {
            return Err(RegistryError::UntrustedIndexKey {
                key_id: sig.key_id.clone(),
                key_file: format!("keys/{}.pub", sig.key_id),
            });
        }
        parse_yaml(&snap_bytes, "snapshot.yaml")
    })();
    let snapshot = match snapshot {
        Ok(s) => Some(s),
        Err(e) => {
            p.push(e.to_string());
            None
        }
    };
    let index_bytes = files.read("index.yaml", &NoProgress)?;
    if let Some(s) = &snapshot {
        report.snapshot_version = Some(s.version);
        match parse_time(&s.expires, "snapshot.yaml", "expires") {
            Ok(t) if t <= now => p.push(
                RegistryError::Expired {
                    expires: s.expires.clone(),
                }
                .to_string(),
            ),
            Ok(_) => {}
            Err(e) => p.push(e.to_string()),
        }
        let d = sha256_hex(&index_bytes);
        if d != s.index {
            p.push(
                RegistryError::DigestMismatch {
                    file: "index.yaml".into(),
                    recorded_in: "snapshot.yaml (index)".into(),
                    expected: s.index.clone(),
                    found: d,
                }
                .to_string(),
            );
        }
    }
    let index = parse_yaml::<IndexFile>(&index_bytes, "index.yaml")
        .and_then(|i| check_index(&i).map(|()| i));
    let index = match index {
        Ok(i) => i,
        Err(e) => {
            p.push(e.to_string());
            IndexFile {
                format: INDEX_FORMAT,
                skills: Vec::new(),
            }
        }
    };
    report.skills = index.skills.len();
    let on_disk = versions_files(dir)?;
    for rel in &on_disk {
        if let Some(s) = &snapshot
            && !s.versions.contains_key(rel)
        {
            p.push(RegistryError::NotInSnapshot { file: rel.clone() }.to_string());
        }
    }
    if let Some(s) = &snapshot {
        for (rel, expected) in &s.versions {
            match files.read(rel, &NoProgress) {
                Ok(b) => {
                    let d = sha256_hex(&b);
                    if d != *expected {
                        p.push(
                            RegistryError::DigestMismatch {
                                file: rel.clone(),
                                recorded_in: "snapshot.yaml (versions)".into(),
                                expected: expected.clone(),
                                found: d,
                            }
                            .to_string(),
                        );
                    }
                }
                Err(e) => p.push(e.to_string()),
            }
        }
    }
    for entry in &index.skills {
        match files
            .read(&format!("skills/{}/metadata.yaml", entry.name), &NoProgress)
            .and_then(|b| {
                parse_yaml::<Metadata>(&b, &format!("skills/{}/metadata.yaml", entry.name))
            }) {
            Ok(m) if m.name != entry.name => p.push(format!(
                "skills/{}/metadata.yaml: field `name`: is `{}`, expected `{}`",
                entry.name, m.name, entry.name
            )),
            Ok(_) => {}
            Err(e) => p.push(e.to_string()),
        }
        if entry.versions.iter().max() != Some(&entry.latest) {
            p.push(format!(
                "index.yaml: skill `{}`: `latest` {} is not the highest published version",
                entry.name, entry.latest
            ));
        }
        for v in &entry.versions {
            let rel = versions_path(&entry.name, v);
            report.versions += 1;
            if let Err(e) = check_version(dir, &files, &rel, trust) {
                p.push(e.to_string());
            }
        }
    }
    Ok(report)
}

/// Checks one versions file against its artifact and the artifact's content.
fn check_version(
    dir: &Path,
    files: &Files,
    rel: &str,
    trust: Option<&TrustStore>,
) -> Result<(), RegistryError> {
    let bytes = files.read(rel, &NoProgress)?;
    if crate::index_instructions::record_kind(&bytes, rel)? != crate::KIND_COMPONENT {
        let rec = crate::index_instructions::parse_instruction_record(&bytes, rel)?;
        let archive = files.read(&rec.artifact.path, &NoProgress)?;
        return check_artifact(&archive, &rec.artifact, format!("{rel} (artifact)"));
    }
    let rec = parse_version_record(&bytes, rel)?;
    let archive = files.read(&rec.artifact.path, &NoProgress)?;
    check_artifact(&archive, &rec.artifact, format!("{rel} (artifact)"))?;
    let key = read_key(
        files,
        &rec.component.key_id,
        rel,
        "component.key_id",
        &NoProgress,
    )?;
    let tmp = tempfile::tempdir().map_err(|e| RegistryError::io(dir, e))?;
    extract(&archive, tmp.path(), &rec.artifact.path, &NoProgress)?;
    let own;
    let trust = match trust {
        Some(t) => t,
        None => {
            // Without a trust store, check the signature against the key the index names.
            let kd = tempfile::tempdir().map_err(|e| RegistryError::io(dir, e))?;
            let mut t = TrustStore::load(kd.path()).map_err(|source| RegistryError::Trust {
                file: rel.into(),
                source,
            })?;
            t.trust(key, "index")
                .map_err(|source| RegistryError::Trust {
                    file: rel.into(),
                    source,
                })?;
            own = t;
            &own
        }
    };
    check_staged(
        tmp.path(),
        Some(&Expected {
            rec: &rec,
            versions_file: rel,
            key,
        }),
        trust,
    )?;
    Ok(())
}

//! Opening a verified index, searching it, resolving and installing.

use std::collections::BTreeMap;
use std::path::Path;

use agent_trust::{PublicKey, TrustStore};
use semver::{Version, VersionReq};

use crate::format::{
    IndexEntry, IndexFile, Snapshot, SnapshotSig, VersionRecord, check_index, check_key_id,
    check_name, check_rel_path, parse_time, parse_yaml, sha256_hex, versions_path,
};
use crate::index_instructions::InstructionRecord;
use crate::install::{Expected, Installed, Staging, check_staged, extract, manifest_permissions};
use crate::source::Files;
use crate::{IndexSource, Progress, RegistryError};

/// The highest versions seen before from one index; loaded from and saved
/// to the agent store by the caller.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// The highest snapshot version seen.
    pub snapshot: Option<u64>,
    /// The highest version seen of each skill.
    pub skills: BTreeMap<String, Version>,
}

impl Seen {
    /// Records a snapshot version (keeps the highest).
    pub fn saw_snapshot(&mut self, version: u64) {
        self.snapshot = Some(self.snapshot.map_or(version, |s| s.max(version)));
    }

    /// Records a skill version (keeps the highest).
    pub fn saw_skill(&mut self, name: &str, version: &Version) {
        let e = self
            .skills
            .entry(name.to_string())
            .or_insert_with(|| version.clone());
        if *e < *version {
            *e = version.clone();
        }
    }
}

/// What [`Index::resolve_any`] found.
#[derive(Debug, Clone)]
pub enum Resolved {
    /// A signed component skill.
    Component(VersionRecord),
    /// A SKILL.md instruction skill.
    Instructions(InstructionRecord),
}

/// An index whose snapshot signature, expiry, version and `index.yaml`
/// digest have been verified.
#[derive(Debug, Clone)]
pub struct Index {
    files: Files,
    snapshot: Snapshot,
    entries: Vec<IndexEntry>,
}

/// Reads and checks `keys/<id>.pub`: it parses and its id is `id`.
pub(crate) fn read_key(
    files: &Files,
    id: &str,
    file: &str,
    field: &str,
    progress: &dyn Progress,
) -> Result<PublicKey, RegistryError> {
    check_key_id(id, file, field)?;
    let rel = format!("keys/{id}.pub");
    let bytes = files.read(&rel, progress)?;
    let text = String::from_utf8_lossy(&bytes);
    let (key, _) = PublicKey::parse(&text).map_err(|source| RegistryError::Trust {
        file: rel.clone(),
        source,
    })?;
    if key.id().0 != id {
        return Err(RegistryError::format(
            &rel,
            None,
            format!(
                "holds key {}, not {id}; the index is inconsistent",
                key.id()
            ),
        ));
    }
    Ok(key)
}

/// Verifies `sig` over `snapshot_bytes` with `key`.
pub(crate) fn verify_snapshot_sig(
    snapshot_bytes: &[u8],
    sig: &SnapshotSig,
    key: &PublicKey,
) -> Result<(), RegistryError> {
    use ed25519_dalek::Verifier;
    let bad = || RegistryError::BadSnapshotSignature {
        key_id: sig.key_id.clone(),
    };
    let raw = hex::decode(&sig.signature).map_err(|_| bad())?;
    let raw: [u8; 64] = raw.try_into().map_err(|_| bad())?;
    let vk = ed25519_dalek::VerifyingKey::from_bytes(key.as_bytes()).map_err(|_| bad())?;
    vk.verify(
        &snapshot_message(snapshot_bytes),
        &ed25519_dalek::Signature::from_bytes(&raw),
    )
    .map_err(|_| bad())
}

pub(crate) fn snapshot_message(snapshot_bytes: &[u8]) -> Vec<u8> {
    let mut m = crate::format::SNAPSHOT_CONTEXT.to_vec();
    m.extend_from_slice(&agent_trust::sha256(snapshot_bytes));
    m
}

impl Index {
    /// Fetches the index and verifies steps 1–4 of `docs/registry.md` for
    /// the snapshot and `index.yaml`: signature by a key in `keys/` that
    /// `trust` trusts, not expired at `now`, version not below
    /// `seen.snapshot`, and `index.yaml`'s digest.
    ///
    /// # Errors
    /// A distinct [`RegistryError`] per failed check.
    pub fn open(
        source: &IndexSource,
        cache_dir: &Path,
        trust: &TrustStore,
        seen: &Seen,
        now: time::OffsetDateTime,
        progress: &dyn Progress,
    ) -> Result<Index, RegistryError> {
        let files = match source {
            IndexSource::Https(base) => Files::Https(base.clone()),
            other => Files::Dir(crate::source::fetch(other, cache_dir, progress)?),
        };
        let sig_bytes = files.read("snapshot.sig", progress)?;
        let snap_bytes = files.read("snapshot.yaml", progress)?;
        let sig: SnapshotSig = parse_yaml(&sig_bytes, "snapshot.sig")?;
        let key = read_key(&files, &sig.key_id, "snapshot.sig", "key_id", progress)?;
        if !trust.is_trusted(&key) {
            return Err(RegistryError::UntrustedIndexKey {
                key_id: sig.key_id.clone(),
                key_file: format!("keys/{}.pub", sig.key_id),
            });
        }
        verify_snapshot_sig(&snap_bytes, &sig, &key)?;
        let snapshot: Snapshot = parse_yaml(&snap_bytes, "snapshot.yaml")?;
        let expires = parse_time(&snapshot.expires, "snapshot.yaml", "expires")?;
        if expires <= now {
            return Err(RegistryError::Expired {
                expires: snapshot.expires.clone(),
            });
        }
        if let Some(seen_v) = seen.snapshot
            && snapshot.version < seen_v
        {
            return Err(RegistryError::SnapshotRollback {
                seen: seen_v,
                found: snapshot.version,
            });
        }
        let index_bytes = files.read("index.yaml", progress)?;
        let digest = sha256_hex(&index_bytes);
        if digest != snapshot.index {
            return Err(RegistryError::DigestMismatch {
                file: "index.yaml".into(),
                recorded_in: "snapshot.yaml (index)".into(),
                expected: snapshot.index.clone(),
                found: digest,
            });
        }
        let index: IndexFile = parse_yaml(&index_bytes, "index.yaml")?;
        check_index(&index)?;
        Ok(Index {
            files,
            snapshot,
            entries: index.skills,
        })
    }

    /// The verified snapshot's version (store it as seen).
    pub fn snapshot_version(&self) -> u64 {
        self.snapshot.version
    }

    /// The skills in `index.yaml`.
    pub fn skills(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// Skills whose name, description or keywords contain `query`
    /// (case-insensitive): exact name first, then name matches, then the
    /// rest, each group by name. An empty query lists everything.
    pub fn search(&self, query: &str) -> Vec<&IndexEntry> {
        let q = query.trim().to_lowercase();
        let mut hits: Vec<(u8, &IndexEntry)> = self
            .entries
            .iter()
            .filter_map(|e| {
                let name = e.name.to_lowercase();
                let rank = if q.is_empty() || name == q {
                    0
                } else if name.contains(&q) {
                    1
                } else if e.description.to_lowercase().contains(&q)
                    || e.keywords.iter().any(|k| k.to_lowercase().contains(&q))
                {
                    2
                } else {
                    return None;
                };
                Some((rank, e))
            })
            .collect();
        hits.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.name.cmp(&b.1.name)));
        hits.into_iter().map(|(_, e)| e).collect()
    }

    /// Picks the version to install — `latest` without a requirement, else
    /// the highest matching one — refusing rollbacks against `seen`, and
    /// reads its versions file, checked against the snapshot.
    ///
    /// # Errors
    /// Unknown skill, no match, rollback, a versions file not in the
    /// snapshot or with another digest, or a malformed one.
    pub fn resolve(
        &self,
        name: &str,
        req: Option<&VersionReq>,
        seen: &Seen,
    ) -> Result<VersionRecord, RegistryError> {
        let (rel, bytes, chosen) = self.resolve_file(name, req, seen)?;
        if crate::index_instructions::record_kind(&bytes, &rel)?
            != crate::index_instructions::KIND_COMPONENT
        {
            return Err(RegistryError::format(
                &rel,
                Some("kind"),
                format!(
                    "`{name}` {chosen} is a SKILL.md instruction skill, not a component; \
                     `agent skill update` does not update instruction skills yet — reinstall \
                     it with `agent skill install {name} --index ...`"
                ),
            ));
        }
        let rec = parse_version_record(&bytes, &rel)?;
        if rec.name != name || rec.version != chosen {
            return Err(RegistryError::format(
                &rel,
                Some("name"),
                format!(
                    "describes `{}` {} but the file is for `{name}` {chosen}",
                    rec.name, rec.version
                ),
            ));
        }
        Ok(rec)
    }

    /// Like [`Index::resolve`], for either kind: a component record or an instruction record.
    ///
    /// # Errors
    /// As [`Index::resolve`], and an unknown `kind` (update agent).
    pub fn resolve_any(
        &self,
        name: &str,
        req: Option<&VersionReq>,
        seen: &Seen,
    ) -> Result<Resolved, RegistryError> {
        let (rel, bytes, chosen) = self.resolve_file(name, req, seen)?;
        if crate::index_instructions::record_kind(&bytes, &rel)?
            == crate::index_instructions::KIND_COMPONENT
        {
            return self.resolve(name, req, seen).map(Resolved::Component);
        }
        let rec = crate::index_instructions::parse_instruction_record(&bytes, &rel)?;
        if rec.name != name || rec.version != chosen {
            return Err(RegistryError::format(
                &rel,
                Some("name"),
                format!(
                    "describes `{}` {} but the file is for `{name}` {chosen}",
                    rec.name, rec.version
                ),
            ));
        }
        Ok(Resolved::Instructions(rec))
    }

    /// Installs an instruction record: the artifact's size and sha256 checked against the
    /// versions file, unpacked, `check`ed (the content scan), and put in place as
    /// `dest_dir/<name>` under the same lock and rename as every install.
    ///
    /// # Errors
    /// A digest mismatch naming the artifact, a broken archive, or `check`'s refusal.
    pub fn install_instructions(
        &self,
        rec: &InstructionRecord,
        dest_dir: &Path,
        check: &mut dyn FnMut(&Path) -> Result<(), String>,
        progress: &dyn Progress,
    ) -> Result<std::path::PathBuf, RegistryError> {
        crate::index_instructions::install_instruction_record(
            &self.files,
            rec,
            dest_dir,
            check,
            progress,
        )
    }

    fn resolve_file(
        &self,
        name: &str,
        req: Option<&VersionReq>,
        seen: &Seen,
    ) -> Result<(String, Vec<u8>, Version), RegistryError> {
        let entry = self
            .entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| RegistryError::UnknownSkill {
                name: name.to_string(),
            })?;
        let seen_v = seen.skills.get(name);
        if let Some(s) = seen_v
            && entry.latest < *s
        {
            return Err(RegistryError::SkillRollback {
                name: name.into(),
                seen: s.to_string(),
                offered: entry.latest.to_string(),
            });
        }
        let chosen = match req {
            None => entry.latest.clone(),
            Some(r) => entry
                .versions
                .iter()
                .filter(|v| r.matches(v))
                .max()
                .cloned()
                .ok_or_else(|| RegistryError::NoMatchingVersion {
                    name: name.into(),
                    req: r.to_string(),
                    published: entry
                        .versions
                        .iter()
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?,
        };
        if let Some(s) = seen_v
            && chosen < *s
        {
            return Err(RegistryError::SkillRollback {
                name: name.into(),
                seen: s.to_string(),
                offered: chosen.to_string(),
            });
        }
        let rel = versions_path(name, &chosen);
        let expected = self
            .snapshot
            .versions
            .get(&rel)
            .ok_or_else(|| RegistryError::NotInSnapshot { file: rel.clone() })?;
        let bytes = self.files.read(&rel, &crate::NoProgress)?;
        let digest = sha256_hex(&bytes);
        if digest != *expected {
            return Err(RegistryError::DigestMismatch {
                file: rel,
                recorded_in: "snapshot.yaml (versions)".into(),
                expected: expected.clone(),
                found: digest,
            });
        }
        Ok((rel, bytes, chosen))
    }

    /// Downloads, verifies (steps 6–9) and installs `rec` into
    /// `dest_dir/<name>` atomically; on any failure nothing is left behind
    /// and an existing install is intact.
    ///
    /// # Errors
    /// A distinct [`RegistryError`] per failed check.
    pub fn install(
        &self,
        rec: &VersionRecord,
        dest_dir: &Path,
        trust: &TrustStore,
        agent_version: &Version,
        progress: &dyn Progress,
    ) -> Result<Installed, RegistryError> {
        let vfile = versions_path(&rec.name, &rec.version);
        check_name(&rec.name, &vfile, "name")?;
        check_rel_path(&rec.artifact.path, &vfile, "artifact.path")?;
        if let Some(req) = &rec.min_agent_version
            && !req.matches(agent_version)
        {
            return Err(RegistryError::Incompatible {
                name: rec.name.clone(),
                version: rec.version.to_string(),
                req: req.to_string(),
                agent: agent_version.to_string(),
            });
        }
        let key = read_key(
            &self.files,
            &rec.component.key_id,
            &vfile,
            "component.key_id",
            progress,
        )?;
        if !trust.is_trusted(&key) {
            return Err(RegistryError::Trust {
                file: format!("keys/{}.pub", rec.component.key_id),
                source: agent_trust::TrustError::UntrustedKey { key_id: key.id() },
            });
        }
        let archive = self.files.read(&rec.artifact.path, progress)?;
        if archive.len() as u64 != rec.artifact.size {
            return Err(RegistryError::Mismatch {
                field: format!("size ({})", rec.artifact.path),
                expected: rec.artifact.size.to_string(),
                found: archive.len().to_string(),
                recorded_in: vfile.clone(),
            });
        }
        let digest = sha256_hex(&archive);
        if digest != rec.artifact.sha256 {
            return Err(RegistryError::DigestMismatch {
                file: rec.artifact.path.clone(),
                recorded_in: format!("{vfile} (artifact.sha256)"),
                expected: rec.artifact.sha256.clone(),
                found: digest,
            });
        }
        let staging = Staging::new(dest_dir)?;
        extract(&archive, staging.path(), &rec.artifact.path, progress)?;
        let expected = Expected {
            rec,
            versions_file: &vfile,
            key,
        };
        let staged = check_staged(staging.path(), Some(&expected), trust)?;
        let dir = staging.commit(dest_dir, &rec.name)?;
        Ok(Installed {
            name: rec.name.clone(),
            version: rec.version.clone(),
            dir,
            digest: staged.digest,
            manifest_sha256: staged.manifest_sha256,
            permissions: manifest_permissions(&staged.manifest),
        })
    }
}

/// Parses and checks a versions file.
pub(crate) fn parse_version_record(
    bytes: &[u8],
    file: &str,
) -> Result<VersionRecord, RegistryError> {
    let rec: VersionRecord = parse_yaml(bytes, file)?;
    check_name(&rec.name, file, "name")?;
    check_rel_path(&rec.artifact.path, file, "artifact.path")?;
    check_key_id(&rec.component.key_id, file, "component.key_id")?;
    Ok(rec)
}

//! Re-signing every published version of an index with a (new) key,
//! without rebuilding anything: for a key rotation, and to move artifacts
//! signed in agent 0.1.0's component-only format to signatures that cover
//! the manifest and the files it names.

use std::path::Path;

use agent_manifest::Manifest;
use agent_trust::SecretKey;

use crate::format::{Snapshot, SnapshotSig, parse_yaml, sha256_hex, to_yaml};
use crate::index::{parse_version_record, read_key, verify_snapshot_sig};
use crate::index_instructions::{KIND_COMPONENT, parse_instruction_record, record_kind};
use crate::install::{extract, named_files};
use crate::publish::{pack, resign_snapshot, versions_files};
use crate::publish_steps::check_artifact;
use crate::source::{Files, write_atomic};
use crate::{NoProgress, RegistryError};

/// One re-signed version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resigned {
    /// `skills/<name>/versions/<version>.yaml`.
    pub versions_file: String,
    /// The key that had signed its component.
    pub old_key_id: String,
}

/// What [`resign_index`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResignReport {
    /// Every re-signed version, in versions-file order.
    pub versions: Vec<Resigned>,
    /// SKILL.md instruction records (`kind: instructions`), checked against their artifacts
    /// and kept as they are: they carry no signature of their own, the new snapshot covers
    /// them.
    pub kept: Vec<String>,
    /// The new snapshot version.
    pub snapshot_version: u64,
}

fn read(path: &Path) -> Result<Vec<u8>, RegistryError> {
    std::fs::read(path).map_err(|e| RegistryError::io(path, e))
}

/// Re-signs the index in `root` with `key`: checks the current snapshot's
/// signature (by the key its `snapshot.sig` names, from `keys/`) and that
/// every versions file and artifact has the digest recorded for it, then for
/// every component version unpacks the artifact, signs its component, `SKILL.yaml` and
/// the files it names in the current format, packs it again (the component's
/// unsigned bytes, and so `component.sha256`, are unchanged), rewrites the
/// versions file and finally the snapshot (version + 1, expiring
/// `expires_in` from now).
///
/// Nothing is re-signed unless everything verified first, so a tampered
/// index is never laundered under the new key.
///
/// # Errors
/// A snapshot, digest or artifact that does not verify, or I/O errors.
pub fn resign_index(
    root: &Path,
    key: &SecretKey,
    expires_in: time::Duration,
) -> Result<ResignReport, RegistryError> {
    let files = Files::Dir(root.to_path_buf());
    let sig: SnapshotSig = parse_yaml(&read(&root.join("snapshot.sig"))?, "snapshot.sig")?;
    let snap_bytes = read(&root.join("snapshot.yaml"))?;
    let snap_key = read_key(&files, &sig.key_id, "snapshot.sig", "key_id", &NoProgress)?;
    verify_snapshot_sig(&snap_bytes, &sig, &snap_key)?;
    let snapshot: Snapshot = parse_yaml(&snap_bytes, "snapshot.yaml")?;

    let mut plans = Vec::new();
    let mut kept = Vec::new();
    for rel in versions_files(root)? {
        let bytes = read(&root.join(&rel))?;
        let found = sha256_hex(&bytes);
        let recorded = snapshot
            .versions
            .get(&rel)
            .ok_or_else(|| RegistryError::NotInSnapshot { file: rel.clone() })?;
        if found != *recorded {
            return Err(RegistryError::DigestMismatch {
                file: rel.clone(),
                recorded_in: "snapshot.yaml (versions)".into(),
                expected: recorded.clone(),
                found,
            });
        }
        if record_kind(&bytes, &rel)? != KIND_COMPONENT {
            let rec = parse_instruction_record(&bytes, &rel)?;
            let archive = files.read(&rec.artifact.path, &NoProgress)?;
            check_artifact(&archive, &rec.artifact, format!("{rel} (artifact)"))?;
            kept.push(rel);
            continue;
        }
        let rec = parse_version_record(&bytes, &rel)?;
        let archive = files.read(&rec.artifact.path, &NoProgress)?;
        let found = sha256_hex(&archive);
        if found != rec.artifact.sha256 {
            return Err(RegistryError::DigestMismatch {
                file: rec.artifact.path.clone(),
                recorded_in: format!("{rel} (artifact.sha256)"),
                expected: rec.artifact.sha256.clone(),
                found,
            });
        }
        plans.push((rel, rec, archive));
    }

    let mut report = Vec::new();
    let mut outputs = Vec::new();
    for (rel, mut rec, archive) in plans {
        let tmp = tempfile::tempdir().map_err(|e| RegistryError::io(root, e))?;
        let dir = tmp.path();
        extract(&archive, dir, &rec.artifact.path, &NoProgress)?;
        let (manifest, manifest_bytes) =
            Manifest::from_file_with_bytes(&dir.join(agent_manifest::MANIFEST_FILE))?;
        let comp_rel = manifest
            .implementation
            .as_ref()
            .map(|i| {
                manifest
                    .resolve_path(Path::new(""), &i.component)
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .ok_or_else(|| {
                RegistryError::format(
                    format!("{} SKILL.yaml", rec.artifact.path),
                    Some("implementation.component"),
                    "missing: a published skill needs a component",
                )
            })?;
        let file_err = |rel: &str, message: String| {
            RegistryError::Invalid(format!("{}: {rel} {message}", rec.artifact.path))
        };
        let mut signed_files = Vec::new();
        for f in manifest.signed_files() {
            let bytes = if f == agent_manifest::MANIFEST_FILE {
                manifest_bytes.clone()
            } else {
                agent_trust::read_skill_file(dir, &f).map_err(|m| file_err(&f, m))?
            };
            signed_files.push((f, bytes));
        }
        // The component may be larger than a covered file may be (the
        // extraction already bounded it); it is not a symbolic link, since
        // extraction creates regular files only.
        let comp_path = dir.join(&comp_rel);
        let component = read(&comp_path)?;
        let trust_err = |source| RegistryError::Trust {
            file: format!("{} {comp_rel}", rec.artifact.path),
            source,
        };
        let signed =
            agent_trust::sign(&component, &signed_files, key.signing_key()).map_err(trust_err)?;
        let split = agent_trust::split(&signed).map_err(trust_err)?;
        let digest = hex::encode(agent_trust::sha256(split.unsigned));
        if digest != rec.component.sha256 {
            return Err(RegistryError::DigestMismatch {
                file: format!("{} {comp_rel}", rec.artifact.path),
                recorded_in: format!("{rel} (component.sha256)"),
                expected: rec.component.sha256.clone(),
                found: digest,
            });
        }
        let mut entries = Vec::new();
        for name in named_files(&manifest) {
            let name = name.to_string_lossy().replace('\\', "/");
            let bytes = if name == comp_rel {
                signed.clone()
            } else {
                signed_files
                    .iter()
                    .find(|(p, _)| *p == name)
                    .map(|(_, b)| b.clone())
                    .ok_or_else(|| file_err(&name, "is named but not signed".into()))?
            };
            entries.push((name, bytes));
        }
        let packed = pack(&entries, root)?;
        let old_key_id = std::mem::replace(&mut rec.component.key_id, key.public().id().0);
        rec.component.signature = split
            .block
            .as_ref()
            .map(|b| hex::encode(b.signature))
            .unwrap_or_default();
        rec.artifact.sha256 = sha256_hex(&packed);
        rec.artifact.size = packed.len() as u64;
        let record = to_yaml(&rec)?;
        outputs.push((rec.artifact.path.clone(), packed, rel.clone(), record));
        report.push(Resigned {
            versions_file: rel,
            old_key_id,
        });
    }
    // Everything was re-signed in memory: only now is anything written.
    for (artifact, packed, rel, record) in outputs {
        write_atomic(&root.join(artifact), &packed)?;
        write_atomic(&root.join(rel), record.as_bytes())?;
    }
    let now = time::OffsetDateTime::now_utc();
    let snapshot_version = resign_snapshot(root, key, now + expires_in)?;
    Ok(ResignReport {
        versions: report,
        kept,
        snapshot_version,
    })
}

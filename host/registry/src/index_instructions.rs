//! SKILL.md instruction skills in a signed index (docs/registry.md, "Kinds"): a versions
//! file with `kind: instructions`, an artifact of the skill directory, and no component.
//! The artifact is covered by the snapshot's digest of the versions file, which records the
//! artifact's sha256; there is no signature of its own.

use std::path::{Path, PathBuf};

use agent_trust::SecretKey;
use semver::Version;
use serde::{Deserialize, Serialize};

use crate::RegistryError;
use crate::format::{
    ArtifactRef, IndexEntry, Metadata, check_name, check_rel_path, format_time, parse_yaml,
    versions_path,
};
use crate::install::extract;
use crate::publish_steps::{
    artifact_ref, check_artifact, open_index, record_version, unpublished, write_version,
};

/// The `kind` of a versions file holding a SKILL.md instruction skill.
pub const KIND_INSTRUCTIONS: &str = "instructions";
/// The `kind` of a component versions file (the default when `kind` is absent).
pub const KIND_COMPONENT: &str = "component";

/// `skills/<name>/versions/<ver>.yaml` of an instruction skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstructionRecord {
    /// Always [`KIND_INSTRUCTIONS`].
    pub kind: String,
    /// The skill's name.
    pub name: String,
    /// This version.
    pub version: Version,
    /// When it was published (RFC 3339).
    pub published: String,
    /// The archive of the skill directory.
    pub artifact: ArtifactRef,
}

#[derive(Deserialize)]
struct KindPeek {
    #[serde(default)]
    kind: Option<String>,
}

/// The `kind` of a versions file: `component` when absent (every file written before kinds
/// existed). Refuses an unknown kind, telling the user to update agent.
pub(crate) fn record_kind(bytes: &[u8], file: &str) -> Result<String, RegistryError> {
    let peek: KindPeek = parse_yaml(bytes, file)?;
    let kind = peek.kind.unwrap_or_else(|| KIND_COMPONENT.to_string());
    if kind != KIND_COMPONENT && kind != KIND_INSTRUCTIONS {
        return Err(RegistryError::format(
            file,
            Some("kind"),
            format!(
                "unknown kind `{kind}`; this agent knows `{KIND_COMPONENT}` and \
                 `{KIND_INSTRUCTIONS}` — update agent to install it"
            ),
        ));
    }
    Ok(kind)
}

/// Parses and checks an instruction versions file.
pub(crate) fn parse_instruction_record(
    bytes: &[u8],
    file: &str,
) -> Result<InstructionRecord, RegistryError> {
    let rec: InstructionRecord = parse_yaml(bytes, file)?;
    check_name(&rec.name, file, "name")?;
    check_rel_path(&rec.artifact.path, file, "artifact.path")?;
    Ok(rec)
}

/// What to publish: a SKILL.md directory, already content-scanned by the caller.
pub struct InstructionPublish<'a> {
    /// The skill directory (holds `SKILL.md`).
    pub dir: &'a Path,
    /// The skill's name (SKILL.md frontmatter `name`).
    pub name: &'a str,
    /// The version to publish.
    pub version: &'a Version,
    /// One-line description (frontmatter `description`).
    pub description: &'a str,
    /// Signs the snapshot.
    pub key: &'a SecretKey,
    /// The index directory.
    pub index: &'a Path,
    /// How long the new snapshot is valid.
    pub expires_in: time::Duration,
}

/// Publishes an instruction skill: packs the directory (hidden entries skipped, a symlink
/// refused), writes the artifact, the versions file (`kind: instructions`), `index.yaml`, and
/// re-signs the snapshot.
///
/// # Errors
/// A version already published, a name already published as a component, a broken index,
/// a symlink, or I/O errors.
pub fn publish_instructions(req: &InstructionPublish) -> Result<InstructionRecord, RegistryError> {
    let root = req.index;
    let (index_path, index) = open_index(root)?;
    check_name(
        req.name,
        &req.dir.join("SKILL.md").display().to_string(),
        "name",
    )?;
    let vrel = unpublished(root, &index, req.name, req.version)?;
    let mut entries = Vec::new();
    collect(req.dir, "", &mut entries)?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let archive = crate::publish::pack(&entries, root)?;
    let artifact = artifact_ref(req.name, req.version, &archive);
    let now = time::OffsetDateTime::now_utc();
    let rec = InstructionRecord {
        kind: KIND_INSTRUCTIONS.to_string(),
        name: req.name.to_string(),
        version: req.version.clone(),
        published: format_time(now),
        artifact: artifact.clone(),
    };
    let metadata = Metadata {
        name: req.name.to_string(),
        description: req.description.to_string(),
        author: None,
        license: None,
        homepage: None,
        keywords: Vec::new(),
    };
    write_version(root, &archive, &artifact, &vrel, &rec, &metadata)?;
    record_version(
        &index_path,
        index,
        IndexEntry {
            name: req.name.to_string(),
            description: req.description.to_string(),
            latest: req.version.clone(),
            versions: vec![req.version.clone()],
            keywords: Vec::new(),
            author: None,
        },
    )?;
    crate::publish::resign_snapshot(root, req.key, now + req.expires_in)?;
    Ok(rec)
}

fn collect(
    dir: &Path,
    prefix: &str,
    out: &mut Vec<(String, Vec<u8>)>,
) -> Result<(), RegistryError> {
    let rd = std::fs::read_dir(dir).map_err(|e| RegistryError::io(dir, e))?;
    for e in rd {
        let e = e.map_err(|err| RegistryError::io(dir, err))?;
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        let path = e.path();
        let rel = format!("{prefix}{name}");
        let meta = std::fs::symlink_metadata(&path).map_err(|err| RegistryError::io(&path, err))?;
        if meta.is_dir() {
            collect(&path, &format!("{rel}/"), out)?;
        } else if meta.is_file() {
            let bytes = std::fs::read(&path).map_err(|err| RegistryError::io(&path, err))?;
            out.push((rel, bytes));
        } else {
            return Err(RegistryError::Invalid(format!(
                "{}: not a regular file or directory (symlinks are not published)",
                path.display()
            )));
        }
    }
    Ok(())
}

/// Fetches `rec`'s artifact, checks its size and sha256 against the versions file (itself
/// checked against the signed snapshot by `resolve`), unpacks it, lets `check` (the content
/// scan) inspect the copy, and installs it through [`crate::install_instruction_dir`].
///
/// # Errors
/// A size or digest mismatch naming the artifact, a broken archive, or `check`'s refusal.
pub(crate) fn install_instruction_record(
    files: &crate::source::Files,
    rec: &InstructionRecord,
    dest_dir: &Path,
    check: &mut dyn FnMut(&Path) -> Result<(), String>,
    progress: &dyn crate::Progress,
) -> Result<PathBuf, RegistryError> {
    let vfile = versions_path(&rec.name, &rec.version);
    let archive = files.read(&rec.artifact.path, progress)?;
    check_artifact(
        &archive,
        &rec.artifact,
        format!("{vfile} (artifact.sha256)"),
    )?;
    // Unpacked outside the skills directory: `install_instruction_dir` takes its lock.
    let unpacked = tempfile::tempdir().map_err(|e| RegistryError::io(dest_dir, e))?;
    extract(&archive, unpacked.path(), &rec.artifact.path, progress)?;
    crate::install_instruction_dir(unpacked.path(), dest_dir, &rec.name, check)
}

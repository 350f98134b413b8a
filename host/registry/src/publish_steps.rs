//! Steps every kind of versions file shares (components in `publish.rs`, SKILL.md
//! instructions in `index_instructions.rs`): opening `index.yaml`, refusing a version
//! already published, writing a version's artifact, versions file and metadata, recording
//! it in `index.yaml`, and checking an artifact against the digest and size its versions
//! file records.

use std::path::{Path, PathBuf};

use semver::Version;

use crate::RegistryError;
use crate::format::{
    ArtifactRef, IndexEntry, IndexFile, Metadata, check_index, parse_yaml, sha256_hex, to_yaml,
    versions_path,
};
use crate::source::write_atomic;

/// `index.yaml` of the index in `root`, read and checked, with its path.
///
/// # Errors
/// No `index.yaml` (saying how to create one), or a broken one.
pub(crate) fn open_index(root: &Path) -> Result<(PathBuf, IndexFile), RegistryError> {
    let index_path = root.join("index.yaml");
    if !index_path.is_file() {
        return Err(RegistryError::Invalid(format!(
            "{}: no index.yaml; create the index first with `agent registry init {}`",
            root.display(),
            root.display()
        )));
    }
    let bytes = std::fs::read(&index_path).map_err(|e| RegistryError::io(&index_path, e))?;
    let index: IndexFile = parse_yaml(&bytes, "index.yaml")?;
    check_index(&index)?;
    Ok((index_path, index))
}

/// `name`'s versions file for `version`, refused when that version is already published.
///
/// # Errors
/// [`RegistryError::AlreadyPublished`].
pub(crate) fn unpublished(
    root: &Path,
    index: &IndexFile,
    name: &str,
    version: &Version,
) -> Result<String, RegistryError> {
    let vrel = versions_path(name, version);
    let already = index
        .skills
        .iter()
        .any(|e| e.name == name && e.versions.contains(version));
    if already || root.join(&vrel).exists() {
        return Err(RegistryError::AlreadyPublished {
            name: name.to_string(),
            version: version.to_string(),
            index: root.to_path_buf(),
        });
    }
    Ok(vrel)
}

/// Records `entry`'s one version in `index` (a new entry, or one more version of an existing
/// one, whose `latest` and listed fields are updated) and writes `index.yaml`.
///
/// # Errors
/// I/O errors.
pub(crate) fn record_version(
    index_path: &Path,
    mut index: IndexFile,
    entry: IndexEntry,
) -> Result<(), RegistryError> {
    match index.skills.iter_mut().find(|e| e.name == entry.name) {
        Some(e) => {
            e.versions.extend(entry.versions);
            e.versions.sort();
            e.latest = e.versions.iter().max().cloned().unwrap_or(entry.latest);
            e.description = entry.description;
            e.keywords = entry.keywords;
            e.author = entry.author;
        }
        None => index.skills.push(entry),
    }
    index.skills.sort_by(|a, b| a.name.cmp(&b.name));
    write_atomic(index_path, to_yaml(&index)?.as_bytes())
}

/// Checks `archive` against the digest and size `art` records (in `recorded_in`).
///
/// # Errors
/// [`RegistryError::DigestMismatch`] naming the artifact and both digests.
pub(crate) fn check_artifact(
    archive: &[u8],
    art: &ArtifactRef,
    recorded_in: String,
) -> Result<(), RegistryError> {
    let digest = sha256_hex(archive);
    if digest != art.sha256 || archive.len() as u64 != art.size {
        return Err(RegistryError::DigestMismatch {
            file: art.path.clone(),
            recorded_in,
            expected: format!("{} ({} bytes)", art.sha256, art.size),
            found: format!("{digest} ({} bytes)", archive.len()),
        });
    }
    Ok(())
}

/// `artifacts/<name>-<version>.tar.gz` holding `archive`, with its digest and size.
pub(crate) fn artifact_ref(name: &str, version: &Version, archive: &[u8]) -> ArtifactRef {
    ArtifactRef {
        path: format!("artifacts/{name}-{version}.tar.gz"),
        sha256: sha256_hex(archive),
        size: archive.len() as u64,
    }
}

/// Writes a new version: its artifact (`archive` at `art.path`), its versions file `vrel`
/// (`record`) and the skill's `metadata.yaml`.
///
/// # Errors
/// I/O errors.
pub(crate) fn write_version<R: serde::Serialize>(
    root: &Path,
    archive: &[u8],
    art: &ArtifactRef,
    vrel: &str,
    record: &R,
    metadata: &Metadata,
) -> Result<(), RegistryError> {
    write_atomic(&root.join(&art.path), archive)?;
    write_atomic(&root.join(vrel), to_yaml(record)?.as_bytes())?;
    write_atomic(
        &root.join(format!("skills/{}/metadata.yaml", metadata.name)),
        to_yaml(metadata)?.as_bytes(),
    )
}

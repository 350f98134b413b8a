//! The index files: their serde shapes, parsing with errors that name the
//! file and field, and path rules.

use std::collections::BTreeMap;

use semver::{Version, VersionReq};
use serde::{Deserialize, Serialize};

use crate::RegistryError;
use agent_bounded::Limits;

/// The only `format` of `index.yaml` this crate reads.
pub const INDEX_FORMAT: u32 = 1;
/// Domain-separation prefix of the snapshot signature.
pub const SNAPSHOT_CONTEXT: &[u8] = b"agent-registry-snapshot-v1";

/// `index.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct IndexFile {
    pub format: u32,
    #[serde(default)]
    pub skills: Vec<IndexEntry>,
}

/// One skill in `index.yaml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexEntry {
    /// The skill's name.
    pub name: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// The version installed when none is asked for.
    pub latest: Version,
    /// Every published version, ascending.
    pub versions: Vec<Version>,
    /// Search keywords.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// The author, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
}

/// `skills/<name>/metadata.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Metadata {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub homepage: Option<String>,
    #[serde(default)]
    pub keywords: Vec<String>,
}

/// Where the artifact is and what it must hash to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArtifactRef {
    /// Path relative to the index root (`artifacts/<name>-<ver>.tar.gz`).
    pub path: String,
    /// SHA-256 of the archive, hex.
    pub sha256: String,
    /// Size of the archive in bytes.
    pub size: u64,
}

/// The signed component inside the artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentRef {
    /// SHA-256 of the unsigned component bytes (as agent-trust computes it), hex.
    pub sha256: String,
    /// The ed25519 signature embedded in the component, hex (64 bytes).
    pub signature: String,
    /// Id of the signing key; its public key is `keys/<key_id>.pub`.
    pub key_id: String,
}

/// A permission the skill declares, with its scope (`exec` program,
/// `hosts` pattern or `env` variable) when it has one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionRef {
    /// The permission, e.g. `shell:exec`.
    pub permission: String,
    /// Its scope, e.g. `git`; none means the whole permission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// `skills/<name>/versions/<ver>.yaml`: one published version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VersionRecord {
    /// The skill's name.
    pub name: String,
    /// This version.
    pub version: Version,
    /// When it was published (RFC 3339).
    pub published: String,
    /// The archive.
    pub artifact: ArtifactRef,
    /// The component in the archive.
    pub component: ComponentRef,
    /// What the skill may do.
    #[serde(default)]
    pub permissions: Vec<PermissionRef>,
    /// The agent versions it runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_agent_version: Option<VersionReq>,
}

/// `snapshot.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Snapshot {
    pub version: u64,
    pub expires: String,
    pub index: String,
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
}

/// `snapshot.sig`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SnapshotSig {
    pub key_id: String,
    pub signature: String,
}

/// Parses YAML into `T`, naming `file` and the offending field on error.
pub(crate) fn parse_yaml<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    file: &str,
) -> Result<T, RegistryError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| RegistryError::format(file, None, "not valid UTF-8"))?;
    agent_bounded::parse_yaml(text, file, Limits::DATA).map_err(|e| match e {
        agent_bounded::Error::Limit(e) => {
            let at = e
                .position()
                .map(|(line, _)| format!(" (line {line})"))
                .unwrap_or_default();
            RegistryError::format(file, None, format!("{}{at}", e.reason()))
        }
        agent_bounded::Error::Parse(e) => {
            let at = e
                .location()
                .map(|l| format!(" (line {})", l.line()))
                .unwrap_or_default();
            RegistryError::format(
                file,
                None,
                format!("{e}{at}; see docs/registry.md for the format"),
            )
        }
    })
}

pub(crate) fn to_yaml<T: Serialize>(value: &T) -> Result<String, RegistryError> {
    serde_yaml::to_string(value)
        .map_err(|e| RegistryError::Invalid(format!("cannot write YAML: {e}")))
}

/// Hex SHA-256.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(agent_trust::sha256(bytes))
}

/// Checks a `/`-separated path relative to the index root: not empty, not
/// absolute, no backslash, no `..`, `.` or empty component.
pub(crate) fn check_rel_path(path: &str, file: &str, field: &str) -> Result<(), RegistryError> {
    let bad = |why: &str| RegistryError::UnsafePath {
        file: file.to_string(),
        field: field.to_string(),
        message: format!("artifact location `{path}` {why}; refusing it"),
    };
    if path.is_empty() {
        return Err(bad("is empty"));
    }
    if path.starts_with('/') || path.contains(':') {
        return Err(bad("is absolute; it must be relative to the index root"));
    }
    if path.contains('\\') || path.contains('\0') {
        return Err(bad("contains a backslash or NUL; use `/`"));
    }
    if path.split('/').any(|c| c == "..") {
        return Err(bad("leaves the index"));
    }
    if path.split('/').any(|c| c.is_empty() || c == ".") {
        return Err(bad("has an empty or `.` component"));
    }
    Ok(())
}

/// Checks a skill name from the index before it is used in a path.
pub(crate) fn check_name(name: &str, file: &str, field: &str) -> Result<(), RegistryError> {
    if agent_manifest::is_skill_name(name) {
        Ok(())
    } else {
        Err(RegistryError::format(
            file,
            Some(field),
            format!("`{name}` is not a valid skill name (lowercase letters, digits and `-`)"),
        ))
    }
}

/// Checks a key id (16 lowercase hex digits) before it is used in a path.
pub(crate) fn check_key_id(id: &str, file: &str, field: &str) -> Result<(), RegistryError> {
    if id.len() == 16
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        Ok(())
    } else {
        Err(RegistryError::format(
            file,
            Some(field),
            format!("`{id}` is not a key id (16 lowercase hex digits)"),
        ))
    }
}

/// The versions file path of `name` `version`.
pub(crate) fn versions_path(name: &str, version: &Version) -> String {
    format!("skills/{name}/versions/{version}.yaml")
}

/// Validates the parsed `index.yaml`.
pub(crate) fn check_index(index: &IndexFile) -> Result<(), RegistryError> {
    const FILE: &str = "index.yaml";
    if index.format != INDEX_FORMAT {
        return Err(RegistryError::format(
            FILE,
            Some("format"),
            format!(
                "format {} is not supported (this agent reads format {INDEX_FORMAT}); upgrade agent",
                index.format
            ),
        ));
    }
    let mut names = std::collections::BTreeSet::new();
    for (i, e) in index.skills.iter().enumerate() {
        check_name(&e.name, FILE, &format!("skills[{i}].name"))?;
        if !names.insert(e.name.as_str()) {
            return Err(RegistryError::format(
                FILE,
                Some(&format!("skills[{i}].name")),
                format!("skill `{}` is listed twice", e.name),
            ));
        }
        if !e.versions.contains(&e.latest) {
            return Err(RegistryError::format(
                FILE,
                Some(&format!("skills[{i}].latest")),
                format!("`{}` is not one of the skill's `versions`", e.latest),
            ));
        }
    }
    Ok(())
}

/// Parses an RFC 3339 time, naming the file and field.
pub(crate) fn parse_time(
    s: &str,
    file: &str,
    field: &str,
) -> Result<time::OffsetDateTime, RegistryError> {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).map_err(|e| {
        RegistryError::format(
            file,
            Some(field),
            format!("`{s}` is not an RFC 3339 time ({e})"),
        )
    })
}

/// Formats an RFC 3339 time.
pub(crate) fn format_time(t: time::OffsetDateTime) -> String {
    t.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn artifact_paths_must_stay_inside_the_index() {
        assert!(check_rel_path("artifacts/a-1.0.0.tar.gz", "f", "artifact.path").is_ok());
        for bad in [
            "../x",
            "artifacts/../../x",
            "/etc/passwd",
            "a\\b",
            "",
            "a//b",
            "./a",
            "c:/x",
        ] {
            let err = check_rel_path(bad, "f", "artifact.path").unwrap_err();
            assert!(err.to_string().contains("refusing"), "{bad}: {err}");
        }
        let err = check_rel_path("../x", "f", "artifact.path").unwrap_err();
        assert!(
            err.to_string()
                .contains("artifact location `../x` leaves the index"),
            "{err}"
        );
    }

    #[test]
    fn a_deeply_nested_index_is_refused_at_once_naming_file_line_and_limit() {
        // 200 KB of `[`: serde_yaml refused it too, but only after 9 s of
        // parsing; the limit refuses it before serde_yaml sees it.
        let text = format!("format: 1\nskills: {}", "[".repeat(200_000));
        let started = std::time::Instant::now();
        let err = parse_yaml::<IndexFile>(text.as_bytes(), "index.yaml").unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(
            err.to_string(),
            "index.yaml: YAML nested deeper than the limit of 128 levels; flatten the \
             document (line 2)"
        );
    }

    #[test]
    fn index_errors_name_file_and_field() {
        let err =
            parse_yaml::<IndexFile>(b"format: 1\nskills: [{name: a}]\n", "index.yaml").unwrap_err();
        assert!(err.to_string().starts_with("index.yaml:"), "{err}");
        let idx: IndexFile = parse_yaml(
            b"format: 1\nskills: [{name: a, latest: 2.0.0, versions: [1.0.0]}]\n",
            "index.yaml",
        )
        .expect("parse");
        let err = check_index(&idx).unwrap_err();
        assert!(err.to_string().contains("skills[0].latest"), "{err}");
        let idx: IndexFile = parse_yaml(b"format: 2\n", "index.yaml").expect("parse");
        assert!(
            check_index(&idx)
                .unwrap_err()
                .to_string()
                .contains("format 2")
        );
        assert!(check_key_id("../../etc", "snapshot.sig", "key_id").is_err());
    }
}

//! The crate's error type: every variant names the file (or source) and,
//! where useful, the field, and says what to do.

use std::path::PathBuf;

/// Why a registry operation failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The index source string could not be understood.
    #[error("index source `{source_text}`: {message}")]
    Source {
        /// The text given.
        source_text: String,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Running `git` failed.
    #[error("git {action} failed for `{url}`: {message}")]
    Git {
        /// What was attempted (clone, fetch, checkout).
        action: String,
        /// The repository URL.
        url: String,
        /// git's own message, or why it could not run.
        message: String,
    },
    /// Downloading a file failed.
    #[error("cannot download {url}: {message}")]
    Http {
        /// The URL.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// An index file is missing, is not valid YAML, or a field is wrong.
    #[error("{file}: {}{message}", field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default())]
    Format {
        /// The file, relative to the index root.
        file: String,
        /// The field, when one field is wrong.
        field: Option<String>,
        /// What is wrong and what is expected.
        message: String,
    },
    /// The snapshot signature does not verify.
    #[error(
        "snapshot.sig: the signature (key {key_id}) does not match snapshot.yaml: the index was changed after it was signed; do not use it and tell its publisher"
    )]
    BadSnapshotSignature {
        /// The key named in snapshot.sig.
        key_id: String,
    },
    /// The snapshot is signed by a key the user does not trust.
    #[error(
        "snapshot.sig: the index is signed by key {key_id}, which you do not trust (if you trust this index's publisher: `agent keys trust {key_file}`)"
    )]
    UntrustedIndexKey {
        /// The key id.
        key_id: String,
        /// Where the key file is in the index.
        key_file: String,
    },
    /// The snapshot has expired: it may be a frozen (stale) copy.
    #[error(
        "snapshot.yaml: field `expires`: the index snapshot expired at {expires}; it may be a stale (frozen) mirror. Ask the publisher to re-publish or re-sign it"
    )]
    Expired {
        /// The expiry time as written.
        expires: String,
    },
    /// The snapshot is older than one seen before.
    #[error(
        "snapshot.yaml: field `version`: rollback: snapshot version {found} is older than version {seen} seen before from this index; someone may be replaying an old index. Refusing it"
    )]
    SnapshotRollback {
        /// The highest version seen before.
        seen: u64,
        /// The version offered.
        found: u64,
    },
    /// A file's digest differs from the one its signed parent records.
    #[error(
        "{file}: sha256 {found} does not match {expected} recorded in {recorded_in}: the file was changed after the index was signed; refusing it"
    )]
    DigestMismatch {
        /// The file whose digest is wrong.
        file: String,
        /// Where the expected digest is recorded.
        recorded_in: String,
        /// The recorded digest.
        expected: String,
        /// The actual digest.
        found: String,
    },
    /// A versions file is not listed in the snapshot.
    #[error(
        "{file}: not listed in snapshot.yaml `versions`, so it is not covered by the index signature; refusing it"
    )]
    NotInSnapshot {
        /// The versions file.
        file: String,
    },
    /// A skill version older than one seen before is offered.
    #[error(
        "skill `{name}`: rollback: the index offers {offered}, but {seen} was seen before from this index; refusing the older version"
    )]
    SkillRollback {
        /// The skill.
        name: String,
        /// The highest version seen before.
        seen: String,
        /// The version offered.
        offered: String,
    },
    /// No skill of that name in the index.
    #[error("no skill named `{name}` in the index (try `agent skill search`)")]
    UnknownSkill {
        /// The name asked for.
        name: String,
    },
    /// No published version matches the requirement.
    #[error("skill `{name}`: no published version matches `{req}` (published: {published})")]
    NoMatchingVersion {
        /// The skill.
        name: String,
        /// The requirement.
        req: String,
        /// The published versions.
        published: String,
    },
    /// A path from the index or an artifact would leave its directory.
    #[error("{file}: field `{field}`: {message}")]
    UnsafePath {
        /// The file naming the path.
        file: String,
        /// The field or entry.
        field: String,
        /// What is wrong, e.g. "artifact location `../x` leaves the index".
        message: String,
    },
    /// The artifact is larger than allowed.
    #[error("{file}: {message}")]
    TooLarge {
        /// The artifact or file.
        file: String,
        /// Which limit.
        message: String,
    },
    /// The artifact's content does not match what the index says.
    #[error(
        "the artifact's {field} is `{found}` but {recorded_in} says `{expected}`; the artifact does not belong to this index entry, refusing it"
    )]
    Mismatch {
        /// What differs, e.g. "SKILL.yaml field `name`".
        field: String,
        /// The value recorded in the index.
        expected: String,
        /// The value found.
        found: String,
        /// The index file recording `expected`.
        recorded_in: String,
    },
    /// `agent skill install` of an unsigned skill: an installed skill is
    /// verified by a trusted key at every load, where `--allow-unsigned`
    /// never applies, so it could never be used.
    #[error(
        "skill `{name}` ({from}) is not signed, and an installed skill must be: it is verified by a trusted key at every load, and --allow-unsigned never applies to installed skills. Sign it with your key (once: `agent keys generate --trust`; then `agent skill build DIR`, or `agent skill sign DIR --key FILE`) and install again; to try it unsigned while developing, load it from its directory without installing it: `agent --allow-unsigned --skills DIR ...`"
    )]
    UnsignedInstall {
        /// The skill's name.
        name: String,
        /// Where it was installed from (a directory or git URL).
        from: String,
    },
    /// A component signature or key problem.
    #[error("{file}: {source}")]
    Trust {
        /// The component or key file.
        file: String,
        /// The trust error.
        source: agent_trust::TrustError,
    },
    /// The skill manifest is invalid.
    #[error(transparent)]
    Manifest(#[from] agent_manifest::ManifestError),
    /// The skill needs another agent version.
    #[error(
        "skills/{name}/versions/{version}.yaml: field `min_agent_version`: skill `{name}` {version} requires agent {req}, but this is agent {agent}; upgrade agent or pick another version"
    )]
    Incompatible {
        /// The skill.
        name: String,
        /// Its version.
        version: String,
        /// The requirement.
        req: String,
        /// This agent's version.
        agent: String,
    },
    /// The version is already in the index.
    #[error(
        "skill `{name}` {version} is already published in {index}; published versions never change — bump `version` in SKILL.yaml"
    )]
    AlreadyPublished {
        /// The skill.
        name: String,
        /// The version.
        version: String,
        /// The index directory.
        index: PathBuf,
    },
    /// The skill is not installed.
    #[error("skill `{name}` is not installed in {}", dir.display())]
    NotInstalled {
        /// The skill.
        name: String,
        /// The directory looked in.
        dir: PathBuf,
    },
    /// Anything else the user must fix, with the message saying what.
    #[error("{0}")]
    Invalid(String),
}

impl RegistryError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> RegistryError {
        RegistryError::Io {
            path: path.into(),
            source,
        }
    }

    pub(crate) fn format(
        file: impl Into<String>,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> RegistryError {
        RegistryError::Format {
            file: file.into(),
            field: field.map(str::to_string),
            message: message.into(),
        }
    }
}

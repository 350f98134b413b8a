//! The store's error type.

use std::path::PathBuf;

/// Why a [`Store`](crate::Store) operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Another process kept the database (or its writer lock) for longer than the operation was
    /// willing to wait.
    #[error(
        "{} stayed locked by another process for {} s (an older `agent` that keeps it open, or one stopped in the middle of a write); close that process and try again (`fuser {}` shows it)",
        path.display(),
        waited.as_secs(),
        path.display()
    )]
    Locked {
        /// The database file.
        path: PathBuf,
        /// How long the operation waited.
        waited: std::time::Duration,
    },
    /// The file is damaged: redb found pages it cannot read (overwritten or zeroed outside it).
    #[error(
        "the database {} is damaged ({detail}); run `agent doctor --repair` to set it aside as {}.damaged-<time> and recreate it with the grants, sessions and install records that can still be read",
        path.display(),
        path.display()
    )]
    Damaged {
        /// The database file.
        path: PathBuf,
        /// What redb reported.
        detail: String,
    },
    /// The database's directory could not be created.
    #[error("cannot create the directory for {}: {source}", path.display())]
    CreateDir {
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The database file could not be opened (not a redb file, wrong format, I/O error).
    #[error("cannot open the database {}: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        source: redb::DatabaseError,
    },
    /// The database was written by a newer `agent` with a schema this one does not know.
    #[error(
        "the database {} has schema version {found}, newer than this agent supports ({supported}); upgrade agent",
        path.display()
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The schema version found in the file.
        found: u64,
        /// The newest schema version this build understands.
        supported: u64,
    },
    /// A damaged database could not be renamed out of the way.
    #[error("cannot set the damaged database {} aside as {}: {source}", path.display(), to.display())]
    SetAside {
        /// The database file.
        path: PathBuf,
        /// Where it was to go.
        to: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A read or write failed inside redb.
    #[error("database {}: {source}", path.display())]
    Database {
        /// The database file.
        path: PathBuf,
        /// The underlying error.
        source: redb::Error,
    },
    /// A record could not be decoded: the file holds something this build cannot read.
    #[error("database {}: table `{table}` holds an unreadable record under `{key}`: {message}", path.display())]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// The table.
        table: &'static str,
        /// The record's key, for display.
        key: String,
        /// What is wrong with it.
        message: String,
    },
    /// A record could not be encoded.
    #[error("cannot encode a record for table `{table}`: {source}")]
    Encode {
        /// The table.
        table: &'static str,
        /// The underlying error.
        source: serde_json::Error,
    },
    /// No session has this id, or no session id starts with this prefix.
    #[error("no session matches `{id}`")]
    SessionNotFound {
        /// The id or prefix that was looked up.
        id: String,
    },
    /// More than one session id starts with this prefix.
    #[error(
        "`{prefix}` matches {} sessions ({}); give more of the id",
        matches.len(),
        matches.join(", ")
    )]
    AmbiguousSession {
        /// The prefix that was looked up.
        prefix: String,
        /// The ids it matches, in ascending order.
        matches: Vec<String>,
    },
}

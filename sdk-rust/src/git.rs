//! The project's git repository: reading (permission `git:read`) and
//! committing or branching (permission `git:write`).

use crate::Error;
use crate::host::{git as read, git_write as write};

pub use crate::host::git::{Commit, FileStatus};

/// Working tree status.
///
/// # Errors
///
/// [`Error`] when `git:read` is not granted or git fails.
pub fn status() -> Result<Vec<FileStatus>, Error> {
    read::status().map_err(|e| Error::from_wit("git", e))
}

/// Unified diff between two revisions: `base` `None` means the index, `head`
/// `None` the working tree; `paths` limits it when not empty.
///
/// # Errors
///
/// As [`status`].
pub fn diff(base: Option<&str>, head: Option<&str>, paths: &[String]) -> Result<String, Error> {
    read::diff(base, head, paths).map_err(|e| Error::from_wit("git", e))
}

/// Up to `max` commits reachable from `rev` (default `HEAD`), newest first.
///
/// # Errors
///
/// As [`status`].
pub fn log(max: u32, rev: Option<&str>) -> Result<Vec<Commit>, Error> {
    read::log(max, rev).map_err(|e| Error::from_wit("git", e))
}

/// A commit's message and patch, as `git show` prints it.
///
/// # Errors
///
/// As [`status`].
pub fn show(rev: &str) -> Result<String, Error> {
    read::show(rev).map_err(|e| Error::from_wit("git", e))
}

/// Commits `paths` (all staged changes when empty) with `message`; returns
/// the new commit id.
///
/// # Errors
///
/// [`Error`] when `git:write` is not granted or git fails.
pub fn commit(message: &str, paths: &[String]) -> Result<String, Error> {
    write::commit(message, paths).map_err(|e| Error::from_wit("git-write", e))
}

/// Creates branch `name` at `start` (default `HEAD`) without switching.
///
/// # Errors
///
/// As [`commit`].
pub fn branch(name: &str, start: Option<&str>) -> Result<(), Error> {
    write::branch(name, start).map_err(|e| Error::from_wit("git-write", e))
}

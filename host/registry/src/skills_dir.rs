//! A skills directory on disk and its crash safety: the lock, the atomic
//! steps of install, replace and remove, and the recovery of whatever an
//! interrupted one left behind.
//!
//! Every entry this crate creates besides the installed skills is a
//! dot-entry, and discovery never loads a dot-directory:
//!
//! - `.agent-lock`: the lock file (see [`DirLock`]);
//! - `.agent-staging-XXXXXX`: an install being unpacked and verified; after a
//!   replace by exchange, the previous version on its way out;
//! - `.agent-old-<name>-<pid>`: the previous version set aside by a replace
//!   where the exchange is not available (its name is the journal: it says
//!   which skill it belongs to);
//! - `.agent-removing-<name>-<pid>`: a skill being removed.
//!
//! Recovery ([`recover`], under the lock) deletes staging and removing
//! entries, and resolves an `.agent-old-<name>-…` entry: when `<name>` is in
//! place the replace had finished (the aside is deleted: rolled forward),
//! otherwise the previous version is renamed back (rolled back). Either way
//! exactly one valid version of the skill remains.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use crate::RegistryError;
use crate::fault;

/// The lock file in a skills directory.
pub const LOCK_FILE: &str = ".agent-lock";
/// The name prefix of staging directories.
pub(crate) const STAGING_PREFIX: &str = ".agent-staging-";
const ASIDE_PREFIX: &str = ".agent-old-";
const REMOVING_PREFIX: &str = ".agent-removing-";

/// An exclusive lock on a skills directory: held by an install from the
/// creation of its staging directory to its commit, by a remove, and by
/// recovery. Readers (discovery) take none: every change is a rename, and
/// dot-entries are never loaded.
///
/// Released (the lock file deleted while still held, then closed) on drop,
/// and by the kernel when the process dies, so a killed install never
/// blocks the next one (its lock file is deleted by the next [`tidy`]). A
/// waiter whose file was deleted under it sees that the path no longer
/// names its file, and locks the new one.
pub(crate) struct DirLock {
    file: File,
    path: PathBuf,
}

impl DirLock {
    /// Waits for the lock on `dir` (created when missing).
    pub(crate) fn acquire(dir: &Path) -> Result<DirLock, RegistryError> {
        loop {
            if let Some(lock) = Self::open(dir, true)? {
                return Ok(lock);
            }
        }
    }

    /// The lock on `dir` if no other process holds it.
    pub(crate) fn try_acquire(dir: &Path) -> Result<Option<DirLock>, RegistryError> {
        Self::open(dir, false)
    }

    fn open(dir: &Path, wait: bool) -> Result<Option<DirLock>, RegistryError> {
        let path = dir.join(LOCK_FILE);
        let io = |e| RegistryError::io(&path, e);
        loop {
            let file = match OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
            {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir_all(dir).map_err(|e| RegistryError::io(dir, e))?;
                    continue;
                }
                Err(e) => return Err(io(e)),
            };
            if wait {
                file.lock().map_err(io)?;
            } else {
                match file.try_lock() {
                    Ok(()) => {}
                    Err(TryLockError::WouldBlock) => return Ok(None),
                    Err(TryLockError::Error(e)) => return Err(io(e)),
                }
            }
            if names_file(&path, &file) {
                return Ok(Some(DirLock { file, path }));
            }
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// Whether `path` still names the open `file` (the previous holder may have
/// deleted it while this process waited).
#[cfg(unix)]
fn names_file(path: &Path, file: &File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(path), file.metadata()) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn names_file(path: &Path, _file: &File) -> bool {
    path.exists()
}

/// What recovery did with one leftover of an interrupted operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovered {
    /// An interrupted install's staging directory (or, after a replace by
    /// exchange, the previous version) was deleted.
    Staging(PathBuf),
    /// A replace was interrupted before the new version was in place: the
    /// previous version was restored.
    RolledBack(String),
    /// A replace was interrupted after the new version was in place: the
    /// previous version, set aside, was deleted.
    RolledForward(String),
    /// An interrupted remove was finished.
    Removed(String),
}

impl std::fmt::Display for Recovered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Recovered::Staging(p) => {
                write!(f, "deleted {}, left by an interrupted install", p.display())
            }
            Recovered::RolledBack(n) => write!(
                f,
                "an update of `{n}` was interrupted; the previous version is back in place"
            ),
            Recovered::RolledForward(n) => write!(
                f,
                "an update of `{n}` was interrupted after the new version was in place; deleted the previous one"
            ),
            Recovered::Removed(n) => write!(f, "finished an interrupted remove of `{n}`"),
        }
    }
}

/// The leftover an entry name is, if it is one of this crate's.
enum Leftover<'a> {
    Staging,
    Aside(Option<&'a str>),
    Removing(Option<&'a str>),
}

fn leftover(file_name: &str) -> Option<Leftover<'_>> {
    if file_name.starts_with(STAGING_PREFIX) {
        Some(Leftover::Staging)
    } else if let Some(rest) = file_name.strip_prefix(ASIDE_PREFIX) {
        Some(Leftover::Aside(skill_of(rest)))
    } else {
        file_name
            .strip_prefix(REMOVING_PREFIX)
            .map(|rest| Leftover::Removing(skill_of(rest)))
    }
}

/// The skill name of `<name>-<pid>` (the name may contain hyphens, the pid
/// is the last part).
fn skill_of(rest: &str) -> Option<&str> {
    let (name, pid) = rest.rsplit_once('-')?;
    let pid_ok = !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit());
    (pid_ok && agent_manifest::is_skill_name(name)).then_some(name)
}

/// Whether `dir` holds a leftover of an interrupted operation, or a lock
/// file (held by a live one, or left by a killed one: released by tidying).
fn has_leftovers(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        name == LOCK_FILE || leftover(&name).is_some()
    })
}

/// At the start of a command: recovers what interrupted installs, replaces
/// and removes left in `dir` (see the module documentation), unless another
/// process holds the directory's lock (its operation is live; it recovers
/// under the lock itself). Takes the lock only when there is something to
/// do, so an untouched directory is never written.
///
/// # Errors
/// An I/O error on the lock or on a leftover.
pub fn tidy(dir: &Path) -> Result<Vec<Recovered>, RegistryError> {
    if !has_leftovers(dir) {
        return Ok(Vec::new());
    }
    match DirLock::try_acquire(dir)? {
        Some(lock) => recover(dir, &lock),
        None => Ok(Vec::new()),
    }
}

/// Recovers every leftover in `dir`; `_lock` proves the caller holds the
/// lock, so no live operation owns them.
pub(crate) fn recover(dir: &Path, _lock: &DirLock) -> Result<Vec<Recovered>, RegistryError> {
    let entries = std::fs::read_dir(dir).map_err(|e| RegistryError::io(dir, e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut done = Vec::new();
    for file_name in names {
        let Some(kind) = leftover(&file_name) else {
            continue;
        };
        let path = dir.join(&file_name);
        match kind {
            Leftover::Staging => {
                remove_any(&path)?;
                done.push(Recovered::Staging(path));
            }
            Leftover::Removing(name) => {
                remove_any(&path)?;
                done.push(match name {
                    Some(n) => Recovered::Removed(n.to_string()),
                    None => Recovered::Staging(path),
                });
            }
            Leftover::Aside(Some(name)) if !exists(&dir.join(name)) => {
                rename(&path, &dir.join(name))?;
                done.push(Recovered::RolledBack(name.to_string()));
            }
            Leftover::Aside(name) => {
                remove_any(&path)?;
                done.push(match name {
                    Some(n) => Recovered::RolledForward(n.to_string()),
                    None => Recovered::Staging(path),
                });
            }
        }
    }
    Ok(done)
}

/// Puts the verified tree at `staged` in place as `dir/name`, in one atomic
/// step: a rename when there is no `name` yet; else an exchange of the two
/// (Linux `renameat2(RENAME_EXCHANGE)`), after which `staged` holds the
/// previous version and is deleted; where the exchange is not available, the
/// previous version is renamed aside first ([`replace_by_move_aside`]).
pub(crate) fn put_in_place(
    staged: &Path,
    dir: &Path,
    name: &str,
    _lock: &DirLock,
) -> Result<PathBuf, RegistryError> {
    let target = dir.join(name);
    if !exists(&target) {
        rename(staged, &target)?;
        fault::point("install:after-rename");
        return Ok(target);
    }
    if !fault::exchange_disabled() && exchange(staged, &target)? {
        fault::point("install:after-exchange");
        // The previous version is a staging entry now: never loaded, and
        // deleted by the next recovery if this fails.
        let _ = remove_any(staged);
        return Ok(target);
    }
    replace_by_move_aside(staged, &target, dir, name)?;
    Ok(target)
}

/// Replaces `target` in two renames, the previous version set aside under a
/// name that records the skill's (recovery rolls back or forward from it).
fn replace_by_move_aside(
    staged: &Path,
    target: &Path,
    dir: &Path,
    name: &str,
) -> Result<(), RegistryError> {
    let aside = dir.join(format!("{ASIDE_PREFIX}{name}-{}", std::process::id()));
    if exists(&aside) {
        remove_any(&aside)?;
    }
    rename(target, &aside)?;
    fault::point("install:after-aside");
    if let Err(e) = rename(staged, target) {
        let _ = std::fs::rename(&aside, target);
        return Err(e);
    }
    fault::point("install:after-replace");
    let _ = remove_any(&aside);
    Ok(())
}

/// Swaps `a` and `b` atomically; `false` when the system or the file
/// system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> Result<bool, RegistryError> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(true),
        Err(Errno::INVAL | Errno::NOSYS | Errno::NOTSUP) => Ok(false),
        Err(e) => Err(RegistryError::io(b, e.into())),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_a: &Path, _b: &Path) -> Result<bool, RegistryError> {
    Ok(false)
}

/// Removes `dir/name` atomically: renamed to a dot-entry (no longer
/// loaded), then deleted. A failed delete leaves only that dot-entry, which
/// the next recovery deletes.
pub(crate) fn remove_skill(dir: &Path, name: &str, _lock: &DirLock) -> Result<(), RegistryError> {
    let target = dir.join(name);
    let doomed = dir.join(format!("{REMOVING_PREFIX}{name}-{}", std::process::id()));
    if exists(&doomed) {
        remove_any(&doomed)?;
    }
    rename(&target, &doomed)?;
    fault::point("remove:after-rename");
    let _ = remove_any(&doomed);
    Ok(())
}

fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

fn rename(from: &Path, to: &Path) -> Result<(), RegistryError> {
    std::fs::rename(from, to).map_err(|e| RegistryError::io(to, e))
}

/// Deletes a file, a symlink (not its target) or a directory tree.
fn remove_any(p: &Path) -> Result<(), RegistryError> {
    let meta = std::fs::symlink_metadata(p).map_err(|e| RegistryError::io(p, e))?;
    if meta.is_dir() {
        std::fs::remove_dir_all(p).map_err(|e| RegistryError::io(p, e))
    } else {
        std::fs::remove_file(p).map_err(|e| RegistryError::io(p, e))
    }
}

#[cfg(test)]
#[path = "skills_dir_tests.rs"]
mod tests;

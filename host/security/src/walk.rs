//! The project walk: every file, dotfiles and dot-directories included. Only
//! `.git/` itself, the ignore files (`.gitignore`, `.ignore`, `.agentignore`,
//! `.git/info/exclude`; see [`crate::exclude`]) and the `.security.yaml`
//! allowlist paths exclude anything, and each exclusion is counted per
//! source ([`Exclusion`]). Size and binary skips, language detection,
//! lockfiles set aside for the dependency audit.
//! A directory or file that cannot be read is not skipped quietly: it is a
//! [`Unreadable`] entry, and the audit that meets one is incomplete.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::exclude::Excluder;
pub use crate::exclude::{ALLOWLIST_SOURCE, Exclusion};
use crate::paths::PathPatterns;

/// Files larger than this are skipped by default (1 MiB).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Lockfiles may be larger than source files; this is their cap (64 MiB).
pub const MAX_LOCKFILE_BYTES: u64 = 64 * 1024 * 1024;

/// How many leading bytes are checked for NUL (binary detection).
pub const BINARY_PROBE: usize = 8 * 1024;

/// Walk settings.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Skip files larger than this.
    pub max_file_bytes: u64,
    /// Only these relative paths (diff scope), when set.
    pub only: Option<BTreeSet<String>>,
    /// `.security.yaml` `allowlist.paths`: files they match are not scanned
    /// (their findings would be dropped); counted as an [`Exclusion`].
    pub allowlist: PathPatterns,
}

impl Default for WalkOptions {
    fn default() -> WalkOptions {
        WalkOptions {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            only: None,
            allowlist: PathPatterns::default(),
        }
    }
}

/// One file to scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkedFile {
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// Absolute (or root-joined) path on disk.
    pub abs: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// The language of its grammar, by extension.
    pub language: Option<&'static str>,
}

/// Why a file was not scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// Larger than the size limit.
    TooLarge,
    /// Contains NUL in its first 8 KiB (as git decides). Text in another
    /// encoding than UTF-8 is scanned, not skipped.
    Binary,
}

/// A file not scanned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// Relative path.
    pub path: String,
    /// Why.
    pub reason: SkipReason,
}

/// A directory or file the walk (or the scan) could not read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unreadable {
    /// Relative path (`.` for the root itself).
    pub path: String,
    /// Why, as the operating system said it.
    pub message: String,
}

/// The result of a walk.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// Files to scan, sorted by path.
    pub files: Vec<WalkedFile>,
    /// Lockfiles (also in `files` when small enough to scan).
    pub lockfiles: Vec<WalkedFile>,
    /// Files skipped by size.
    pub skipped: Vec<Skipped>,
    /// Directories and files that could not be read, sorted by path.
    pub unreadable: Vec<Unreadable>,
    /// What each ignore file and the allowlist excluded, sorted by source.
    pub excluded: Vec<Exclusion>,
}

/// Walks `root`.
///
/// # Errors
/// When `root` is not a readable directory.
pub fn walk(root: &Path, opts: &WalkOptions) -> anyhow::Result<Walk> {
    if !root.is_dir() {
        anyhow::bail!("{}: not a directory", root.display());
    }
    let excluder = Arc::new(Excluder::new(root));
    let filter = Arc::clone(&excluder);
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .parents(false)
        .follow_links(false)
        .filter_entry(move |e| {
            e.depth() == 0
                || (e.file_name().to_str() != Some(".git")
                    && !filter.excludes(e.path(), e.file_type().is_some_and(|t| t.is_dir())))
        });
    let mut out = Walk::default();
    let mut allowlisted = 0;
    for entry in builder.build() {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                let Some(u) = unreadable(root, &e) else {
                    continue;
                };
                // In diff scope only what may hold a changed file matters.
                let wanted = opts.only.as_ref().is_none_or(|only| {
                    u.path == "."
                        || only
                            .iter()
                            .any(|f| f == &u.path || f.starts_with(&format!("{}/", u.path)))
                });
                if wanted {
                    out.unreadable.push(u);
                }
                continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let abs = entry.path().to_path_buf();
        let Ok(rel) = abs.strip_prefix(root) else {
            continue;
        };
        let rel = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        if let Some(only) = &opts.only
            && !only.contains(&rel)
        {
            continue;
        }
        let listed = opts.allowlist.matches(&rel);
        let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
        let file = WalkedFile {
            language: agent_syntax::language_for_path(&rel),
            path: rel,
            abs,
            size,
        };
        if agent_deps::is_lockfile(&file.path) && size <= MAX_LOCKFILE_BYTES {
            out.lockfiles.push(file.clone());
        }
        if listed {
            allowlisted += 1;
            continue;
        }
        if size > opts.max_file_bytes {
            out.skipped.push(Skipped {
                path: file.path,
                reason: SkipReason::TooLarge,
            });
            continue;
        }
        out.files.push(file);
    }
    out.files.sort_by(|a, b| a.path.cmp(&b.path));
    out.lockfiles.sort_by(|a, b| a.path.cmp(&b.path));
    out.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    out.unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    out.excluded = excluder.counts();
    if allowlisted > 0 {
        out.excluded.push(Exclusion {
            source: ALLOWLIST_SOURCE.to_string(),
            files: allowlisted,
            directories: 0,
        });
        out.excluded.sort_by(|a, b| a.source.cmp(&b.source));
    }
    Ok(out)
}

/// The path (relative to `root`) and the cause of a walk error that leaves
/// part of the tree unread: an I/O error (a directory that cannot be
/// listed) or a symlink loop. A bad line in an ignore file is not one (the
/// walk goes on without that line).
fn unreadable(root: &Path, e: &ignore::Error) -> Option<Unreadable> {
    fn parts(e: &ignore::Error) -> Option<(Option<&Path>, String)> {
        match e {
            ignore::Error::WithPath { path, err } => parts(err).map(|(_, m)| (Some(&**path), m)),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                parts(err)
            }
            ignore::Error::Io(io) => Some((None, io.to_string())),
            ignore::Error::Loop { child, .. } => Some((Some(&**child), e.to_string())),
            _ => None,
        }
    }
    let (path, message) = parts(e)?;
    Some(Unreadable {
        path: path.map_or_else(|| ".".to_string(), |p| relative(root, p)),
        message,
    })
}

/// `path` relative to `root`, `/`-separated (`.` for the root).
fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let s = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/");
    if s.is_empty() { ".".to_string() } else { s }
}

/// Reads a file as text: `Ok(None)` when it is binary (NUL in the first
/// 8 KiB, as git decides). Text that is not UTF-8 (Latin-1, Windows-1252, a
/// stray byte) is scanned all the same: each invalid byte becomes U+FFFD, so
/// lines keep their numbers and a token next to an `é` is still found.
///
/// # Errors
/// I/O errors, and an error when `path` is not a regular file (a FIFO put in
/// a file's place after the walk is refused without blocking).
pub fn read_text(path: &Path, max: u64) -> std::io::Result<Option<String>> {
    let mut f = agent_runtime::open_regular(path)?;
    let mut bytes = Vec::new();
    f.by_ref().take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other("larger than the size limit"));
    }
    let probe = &bytes[..bytes.len().min(BINARY_PROBE)];
    if probe.contains(&0) {
        return Ok(None);
    }
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
}

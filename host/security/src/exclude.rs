//! Which ignore file excludes a path, and how many paths each one excluded.
//!
//! The walk reads every file, dotfiles included; only these exclude:
//! `.agentignore`, `.ignore` and `.gitignore` in any directory of the tree
//! (a deeper file wins over a shallower one of the same kind; across kinds
//! `.agentignore` beats `.ignore`, which beats `.gitignore`, as ripgrep
//! orders its own ignore files), then the root's `.git/info/exclude`. A
//! `!pattern` re-includes. Each exclusion is counted under the ignore file
//! that decided it; an excluded directory counts once (what is inside is
//! never listed, so it is not counted file by file).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde::{Deserialize, Serialize};

/// The ignore files of one directory, in precedence order (highest first).
pub const IGNORE_FILES: [&str; 3] = [".agentignore", ".ignore", ".gitignore"];

/// The source name of the `.security.yaml` allowlist in [`Exclusion`].
pub const ALLOWLIST_SOURCE: &str = ".security.yaml allowlist.paths";

/// What one ignore file (or the allowlist) kept out of the audit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exclusion {
    /// The ignore file, relative to the root (`web/.gitignore`,
    /// `.git/info/exclude`), or [`ALLOWLIST_SOURCE`].
    pub source: String,
    /// Files it excluded.
    pub files: usize,
    /// Directories it excluded (each counted once, not walked).
    pub directories: usize,
}

/// One ignore file, compiled.
struct IgnoreFile {
    source: String,
    matcher: Gitignore,
}

/// Decides exclusions during the walk and counts them.
pub(crate) struct Excluder {
    root: PathBuf,
    /// Per directory: its ignore files by kind (index into [`IGNORE_FILES`]).
    dirs: Mutex<HashMap<PathBuf, Arc<[Option<IgnoreFile>; 3]>>>,
    exclude: Option<IgnoreFile>,
    counts: Mutex<BTreeMap<String, Exclusion>>,
}

impl Excluder {
    /// An excluder for the tree at `root`.
    pub(crate) fn new(root: &Path) -> Excluder {
        Excluder {
            root: root.to_path_buf(),
            dirs: Mutex::new(HashMap::new()),
            exclude: compile(root, &root.join(".git/info/exclude"), ".git/info/exclude"),
            counts: Mutex::new(BTreeMap::new()),
        }
    }

    /// Whether `path` (under the root) is excluded; counts it when it is.
    pub(crate) fn excludes(&self, path: &Path, is_dir: bool) -> bool {
        let Some(source) = self.decide(path, is_dir) else {
            return false;
        };
        if let Ok(mut counts) = self.counts.lock() {
            let e = counts.entry(source.clone()).or_insert_with(|| Exclusion {
                source,
                ..Exclusion::default()
            });
            if is_dir {
                e.directories += 1;
            } else {
                e.files += 1;
            }
        }
        true
    }

    /// The counts, sorted by source.
    pub(crate) fn counts(&self) -> Vec<Exclusion> {
        self.counts
            .lock()
            .map(|c| c.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The ignore file that excludes `path`, if any.
    fn decide(&self, path: &Path, is_dir: bool) -> Option<String> {
        let parents: Vec<Arc<[Option<IgnoreFile>; 3]>> = path
            .ancestors()
            .skip(1)
            .take_while(|d| d.starts_with(&self.root))
            .map(|d| self.dir(d))
            .collect();
        for kind in 0..IGNORE_FILES.len() {
            for files in &parents {
                let Some(f) = &files[kind] else { continue };
                match f.matcher.matched(path, is_dir) {
                    Match::None => {}
                    Match::Ignore(_) => return Some(f.source.clone()),
                    Match::Whitelist(_) => return None,
                }
            }
        }
        let f = self.exclude.as_ref()?;
        match f.matcher.matched(path, is_dir) {
            Match::Ignore(_) => Some(f.source.clone()),
            _ => None,
        }
    }

    /// The ignore files of `dir`, read once.
    fn dir(&self, dir: &Path) -> Arc<[Option<IgnoreFile>; 3]> {
        if let Ok(dirs) = self.dirs.lock()
            && let Some(found) = dirs.get(dir)
        {
            return Arc::clone(found);
        }
        let rel = dir.strip_prefix(&self.root).unwrap_or(dir);
        let files = Arc::new(IGNORE_FILES.map(|name| {
            let source = rel.join(name).to_string_lossy().replace('\\', "/");
            compile(dir, &dir.join(name), &source)
        }));
        if let Ok(mut dirs) = self.dirs.lock() {
            dirs.insert(dir.to_path_buf(), Arc::clone(&files));
        }
        files
    }
}

/// Compiles the ignore file at `file` (patterns relative to `dir`); `None`
/// when there is none. A bad line is left out, as git does.
fn compile(dir: &Path, file: &Path, source: &str) -> Option<IgnoreFile> {
    if !file.is_file() {
        return None;
    }
    let mut b = GitignoreBuilder::new(dir);
    // Partial errors (a bad glob on one line) leave the other lines in.
    let _ = b.add(file);
    let matcher = b.build().ok()?;
    if matcher.is_empty() {
        return None;
    }
    Some(IgnoreFile {
        source: source.to_string(),
        matcher,
    })
}

/// One line for the summaries (every output format):
/// `excluded: .gitignore 2 files, 1 directory; web/.ignore 1 directory`;
/// `None` when nothing was excluded.
pub fn summary(excluded: &[Exclusion]) -> Option<String> {
    fn n(count: usize, one: &str, many: &str) -> Option<String> {
        match count {
            0 => None,
            1 => Some(format!("1 {one}")),
            _ => Some(format!("{count} {many}")),
        }
    }
    let parts: Vec<String> = excluded
        .iter()
        .filter(|e| e.files + e.directories > 0)
        .map(|e| {
            let what: Vec<String> = [
                n(e.files, "file", "files"),
                n(e.directories, "directory", "directories"),
            ]
            .into_iter()
            .flatten()
            .collect();
            format!("{} {}", e.source, what.join(", "))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("excluded: {}", parts.join("; ")))
}

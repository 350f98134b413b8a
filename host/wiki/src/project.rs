//! Stages 1–2 over a directory: the walk, every file scanned and
//! classified, the modules, the graph, a content hash per module.

use std::collections::BTreeMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::classifiers::Classifiers;
use crate::graph::{self, Graph};
use crate::modules::{self, FileClass, Module};
use crate::scan::{self, FileScan};

/// Files larger than this are listed but not parsed.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Directories never walked.
const SKIPPED_DIRS: &[&str] = &[
    "target",
    "node_modules",
    "__pycache__",
    "dist",
    "build",
    "venv",
    ".venv",
    "vendor",
];

/// What the pipeline knows of a project.
#[derive(Debug, Clone, Default)]
pub struct Project {
    /// The project's directory name.
    pub name: String,
    /// Every file's scan (relative path → scan).
    pub scans: BTreeMap<String, FileScan>,
    /// Every file's class.
    pub classes: BTreeMap<String, FileClass>,
    /// The modules.
    pub modules: Vec<Module>,
    /// Their graph.
    pub graph: Graph,
    /// Module → sha-256 of its files' paths and contents.
    pub hashes: BTreeMap<String, String>,
}

impl Project {
    /// A module by name.
    pub fn module(&self, name: &str) -> Option<&Module> {
        self.modules.iter().find(|m| m.name == name)
    }

    /// The modules holding an entry point.
    pub fn entry_modules(&self) -> Vec<String> {
        self.modules
            .iter()
            .filter(|m| {
                m.files
                    .iter()
                    .any(|f| self.scans.get(f).is_some_and(|s| s.entry_point))
            })
            .map(|m| m.name.clone())
            .collect()
    }

    /// Lines of a module's files of class `class`.
    pub fn lines(&self, module: &Module, class: FileClass) -> usize {
        module
            .files
            .iter()
            .filter(|f| self.classes.get(*f) == Some(&class))
            .filter_map(|f| self.scans.get(f))
            .map(|s| s.lines)
            .sum()
    }

    /// Whether a path is one of the project's files.
    pub fn has_file(&self, path: &str) -> bool {
        self.scans.contains_key(path)
    }
}

/// Walks `root` (skipping hidden directories, build output and `skip`, the
/// wiki's own directory) and runs stages 1–2.
///
/// # Errors
/// `root` cannot be read.
pub fn analyse(root: &Path, skip: Option<&Path>) -> std::io::Result<Project> {
    analyse_with(root, skip, &Classifiers::default())
}

/// [`analyse`] with the skills' file `classifiers` tried first.
///
/// # Errors
/// `root` cannot be read.
pub fn analyse_with(
    root: &Path,
    skip: Option<&Path>,
    classifiers: &Classifiers,
) -> std::io::Result<Project> {
    let mut texts: BTreeMap<String, String> = BTreeMap::new();
    walk(root, root, skip, &mut texts)?;
    Ok(from_texts_with(
        root.file_name()
            .map_or_else(|| "project".into(), |n| n.to_string_lossy().into_owned()),
        texts,
        classifiers,
    ))
}

/// Stages 1–2 over files already read (relative path → text).
pub fn from_texts(name: String, texts: BTreeMap<String, String>) -> Project {
    from_texts_with(name, texts, &Classifiers::default())
}

/// [`from_texts`] with the skills' file `classifiers` tried first.
pub fn from_texts_with(
    name: String,
    texts: BTreeMap<String, String>,
    classifiers: &Classifiers,
) -> Project {
    let files: Vec<String> = texts.keys().cloned().collect();
    let scans: BTreeMap<String, FileScan> = texts
        .iter()
        .map(|(p, t)| (p.clone(), scan::scan(p, t)))
        .collect();
    let classes = texts
        .iter()
        .map(|(p, t)| {
            let class = classifiers
                .class_of(p)
                .unwrap_or_else(|| modules::classify(p, t));
            (p.clone(), class)
        })
        .collect();
    let modules = modules::detect(&files, &|p| texts.get(p).cloned());
    let graph = graph::build(&modules, &scans);
    let hashes = modules
        .iter()
        .map(|m| {
            let mut h = Sha256::new();
            for f in &m.files {
                h.update(f.as_bytes());
                h.update([0]);
                h.update(texts[f].as_bytes());
                h.update([0]);
            }
            (m.name.clone(), hex::encode(h.finalize()))
        })
        .collect();
    Project {
        name,
        scans,
        classes,
        modules,
        graph,
        hashes,
    }
}

fn walk(
    root: &Path,
    dir: &Path,
    skip: Option<&Path>,
    out: &mut BTreeMap<String, String>,
) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        if kind.is_dir() {
            if name.starts_with('.') || SKIPPED_DIRS.contains(&name.as_str()) {
                continue;
            }
            if skip.is_some_and(|s| path == s) {
                continue;
            }
            walk(root, &path, skip, out)?;
        } else if kind.is_file() {
            if name.starts_with('.') && name != ".gitignore" {
                continue;
            }
            if e.metadata().map_or(true, |m| m.len() > MAX_FILE_BYTES) {
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let Ok(rel) = path.strip_prefix(root) else {
                continue;
            };
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.insert(rel.join("/"), text);
        }
    }
    Ok(())
}

//! `list_dir`: a directory's entries, sorted, directories marked with `/`.

use std::path::Path;

use agent_skill_sdk::ToolError;
use agent_skill_sdk::fs::{self, Access};
use serde::Deserialize;

use crate::text;

/// At most this many entries are listed.
pub const MAX_ENTRIES: usize = 1000;

/// Input of `list_dir` (schema: `schemas/list_dir.json`).
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The directory (default: the project root).
    #[serde(default)]
    pub path: String,
}

/// One directory entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file name.
    pub name: String,
    /// What it is.
    pub kind: Kind,
}

/// What an [`Entry`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A directory.
    Dir,
    /// A file of this many bytes.
    File(u64),
    /// A symbolic link to this target (as written in the link).
    Link(String),
    /// Something else (a socket, a device...).
    Other,
}

/// Runs `list_dir` with the project mounted at `root`.
pub fn run(root: &Path, input: &Input) -> Result<String, ToolError> {
    let path = fs::resolve(root, &input.path)?;
    let shown = text::rel(root, &path);
    let read = std::fs::read_dir(&path).map_err(|e| fs::io_error(&e, &path, Access::Read))?;
    let mut entries = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| fs::io_error(&e, &path, Access::Read))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = match entry.file_type() {
            Ok(t) if t.is_dir() => Kind::Dir,
            Ok(t) if t.is_file() => Kind::File(entry.metadata().map(|m| m.len()).unwrap_or(0)),
            Ok(t) if t.is_symlink() => Kind::Link(
                std::fs::read_link(entry.path())
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|_| "(target not readable)".to_string()),
            ),
            _ => Kind::Other,
        };
        entries.push(Entry { name, kind });
    }
    Ok(format_listing(&shown, entries))
}

/// Sorts and formats the entries of directory `shown`.
pub fn format_listing(shown: &str, mut entries: Vec<Entry>) -> String {
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    let dirs = entries.iter().filter(|e| e.kind == Kind::Dir).count();
    let others = entries.len() - dirs;
    let dir = if shown == "." {
        "./".to_string()
    } else {
        format!("{shown}/")
    };
    if entries.is_empty() {
        return format!("{dir} is empty\n");
    }
    let mut out = format!(
        "{dir} ({}, {})\n",
        text::count(dirs, "directory", "directories"),
        text::count(others, "file", "files")
    );
    for entry in entries.iter().take(MAX_ENTRIES) {
        match &entry.kind {
            Kind::Dir => out.push_str(&format!("{}/\n", entry.name)),
            Kind::File(size) => {
                out.push_str(&format!("{}  {}\n", entry.name, text::human_size(*size)));
            }
            Kind::Link(target) => out.push_str(&format!("{} -> {target}\n", entry.name)),
            Kind::Other => out.push_str(&format!("{}  (special file)\n", entry.name)),
        }
    }
    if entries.len() > MAX_ENTRIES {
        out.push_str(&format!(
            "[{} more entries not shown; use search or a narrower directory]\n",
            entries.len() - MAX_ENTRIES
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(name: &str, kind: Kind) -> Entry {
        Entry {
            name: name.into(),
            kind,
        }
    }

    #[test]
    fn entries_are_sorted_with_sizes_and_slashes() {
        let out = format_listing(
            "src",
            vec![
                e("main.rs", Kind::File(1536)),
                e("bin", Kind::Dir),
                e("Cargo.toml", Kind::File(12)),
                e("link", Kind::Link("../x".into())),
            ],
        );
        assert_eq!(
            out,
            "src/ (1 directory, 3 files)\nCargo.toml  12 B\nbin/\nlink -> ../x\nmain.rs  1.5 KiB\n"
        );
    }

    #[test]
    fn the_root_and_empty_directories() {
        assert_eq!(format_listing(".", vec![]), "./ is empty\n");
        let out = format_listing(".", vec![e("a", Kind::Dir)]);
        assert!(out.starts_with("./ (1 directory, 0 files)\n"));
    }

    #[test]
    fn long_listings_are_capped() {
        let many = (0..MAX_ENTRIES + 3)
            .map(|i| e(&format!("f{i:05}"), Kind::File(1)))
            .collect();
        let out = format_listing("d", many);
        assert!(out.ends_with("[3 more entries not shown; use search or a narrower directory]\n"));
    }
}

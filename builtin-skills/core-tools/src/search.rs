//! `search`: a regular expression over the project's text files, honouring
//! `.gitignore` and `.ignore` files, skipping `.git/`, hidden directories,
//! symbolic links and binary files.

use std::path::Path;

use agent_skill_sdk::ToolError;
use agent_skill_sdk::fs::{self, Access};
use regex_lite::Regex;
use serde::Deserialize;

use crate::gitignore::{IgnoreFile, IgnoreStack};
use crate::text;

/// At most this many matching lines are reported.
pub const MAX_MATCHES: usize = 200;
/// Matching lines are cut to this many characters.
const MAX_LINE_CHARS: usize = 240;
/// Files bigger than this are skipped (generated or data files, mostly).
const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;
/// The ignore files read in every directory, lowest precedence first.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// Input of `search` (schema: `schemas/search.json`).
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The regular expression (Rust `regex` syntax, as `regex-lite` takes it).
    pub pattern: String,
    /// Where to search: a directory or a file (default: the project root).
    #[serde(default)]
    pub path: String,
}

/// What a search found.
#[derive(Debug, Default)]
struct Found {
    /// `path:line: text` lines.
    lines: Vec<String>,
    /// Whether the search stopped at [`MAX_MATCHES`].
    truncated: bool,
    /// Text files searched.
    files: usize,
    /// Files skipped for their size.
    too_big: usize,
}

/// Runs `search` with the project mounted at `root`.
pub fn run(root: &Path, input: &Input) -> Result<String, ToolError> {
    let regex = Regex::new(&input.pattern)
        .map_err(|e| ToolError::invalid_input(format!("`pattern` is not a valid regex: {e}")))?;
    let start = fs::resolve(root, &input.path)?;
    let meta = std::fs::metadata(&start).map_err(|e| fs::io_error(&e, &start, Access::Read))?;
    let mut found = Found::default();
    if meta.is_file() {
        search_file(root, &start, &regex, &mut found)?;
    } else {
        let mut ignores = IgnoreStack::new();
        load_ancestor_ignores(root, &start, &mut ignores);
        walk(root, &start, &regex, &mut ignores, &mut found)?;
    }
    Ok(report(&input.pattern, &text::rel(root, &start), &found))
}

/// Formats what was found.
fn report(pattern: &str, shown: &str, found: &Found) -> String {
    let mut out = String::new();
    if found.lines.is_empty() {
        out.push_str(&format!(
            "no matches for /{pattern}/ in {shown} ({} searched)\n",
            text::count(found.files, "file", "files")
        ));
    } else {
        for line in &found.lines {
            out.push_str(line);
            out.push('\n');
        }
        if found.truncated {
            out.push_str(&format!(
                "[stopped at {MAX_MATCHES} matches: narrow the pattern or the path]\n"
            ));
        }
    }
    if found.too_big > 0 {
        out.push_str(&format!(
            "[skipped {} over {}]\n",
            text::count(found.too_big, "file", "files"),
            text::human_size(MAX_FILE_BYTES)
        ));
    }
    out
}

/// Pushes the ignore files of `root` and of each directory between it and
/// `start` (exclusive), so that a search below the root still honours them.
fn load_ancestor_ignores(root: &Path, start: &Path, ignores: &mut IgnoreStack) {
    push_git_exclude(root, ignores);
    let Ok(below) = start.strip_prefix(root) else {
        return;
    };
    let mut dir = root.to_path_buf();
    push_ignore_files(root, &dir, ignores);
    for component in below.components() {
        dir.push(component);
        if dir != start {
            push_ignore_files(root, &dir, ignores);
        }
    }
}

/// Pushes `.git/info/exclude` of the project, if any (lowest precedence).
fn push_git_exclude(root: &Path, ignores: &mut IgnoreStack) {
    if let Ok(text) = std::fs::read_to_string(root.join(".git/info/exclude")) {
        let file = IgnoreFile::parse(&text);
        if !file.is_empty() {
            ignores.push("", file);
        }
    }
}

/// Pushes the ignore files found in `dir`.
fn push_ignore_files(root: &Path, dir: &Path, ignores: &mut IgnoreStack) {
    let rel = match text::rel(root, dir) {
        r if r == "." => String::new(),
        r => r,
    };
    for name in IGNORE_FILES {
        if let Ok(text) = std::fs::read_to_string(dir.join(name)) {
            let file = IgnoreFile::parse(&text);
            if !file.is_empty() {
                ignores.push(&rel, file);
            }
        }
    }
}

/// Searches directory `dir` and below, in name order.
fn walk(
    root: &Path,
    dir: &Path,
    regex: &Regex,
    ignores: &mut IgnoreStack,
    found: &mut Found,
) -> Result<(), ToolError> {
    let depth = ignores.len();
    push_ignore_files(root, dir, ignores);
    let read = std::fs::read_dir(dir).map_err(|e| fs::io_error(&e, dir, Access::Read))?;
    let mut entries: Vec<_> = read.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        if found.truncated {
            break;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let path = entry.path();
        let rel = text::rel(root, &path);
        if kind.is_dir() {
            if name.starts_with('.') || ignores.is_ignored(&rel, true) {
                continue;
            }
            walk(root, &path, regex, ignores, found)?;
        } else if kind.is_file() && !ignores.is_ignored(&rel, false) {
            search_file(root, &path, regex, found)?;
        }
    }
    ignores.truncate(depth);
    Ok(())
}

/// Searches one file; binary, unreadable and oversized files are skipped.
fn search_file(
    root: &Path,
    path: &Path,
    regex: &Regex,
    found: &mut Found,
) -> Result<(), ToolError> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_FILE_BYTES) {
        found.too_big += 1;
        return Ok(());
    }
    let Ok(bytes) = std::fs::read(path) else {
        return Ok(());
    };
    if text::looks_binary(&bytes) {
        return Ok(());
    }
    found.files += 1;
    let content = String::from_utf8_lossy(&bytes);
    let rel = text::rel(root, path);
    for (i, line) in content.lines().enumerate() {
        if regex.is_match(line) {
            if found.lines.len() >= MAX_MATCHES {
                found.truncated = true;
                break;
            }
            let line = line.strip_suffix('\r').unwrap_or(line);
            found.lines.push(format!(
                "{rel}:{}: {}",
                i + 1,
                text::clip(line.trim_end(), MAX_LINE_CHARS)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{create_dir_all, write};

    fn project() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
        let files: &[(&str, &[u8])] = &[
            (".gitignore", b"target/\n*.log\n!keep.log\n/local.txt\n"),
            ("src/main.rs", b"fn main() {\n    let needle = 1;\n}\n"),
            ("src/lib.rs", b"// needle in lib\n"),
            ("src/local.txt", b"needle: not anchored here\n"),
            ("local.txt", b"needle: ignored at the root\n"),
            ("target/debug/out.rs", b"needle in target\n"),
            ("app.log", b"needle in a log\n"),
            ("keep.log", b"needle kept\n"),
            (".hidden/x.rs", b"needle hidden\n"),
            (".git/config", b"needle git\n"),
            ("img.png", b"\x89PNG\0needle"),
            ("docs/.ignore", b"draft.md\n"),
            ("docs/draft.md", b"needle draft\n"),
            ("docs/final.md", b"Needle final\n"),
        ];
        for (path, content) in files {
            let full = dir.path().join(path);
            if let Some(parent) = full.parent() {
                create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
            }
            write(full, content).unwrap_or_else(|e| panic!("{e}"));
        }
        dir
    }

    fn search(root: &Path, pattern: &str, path: &str) -> String {
        let input = Input {
            pattern: pattern.into(),
            path: path.into(),
        };
        run(root, &input).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn honours_ignore_files_and_skips_hidden_and_binary() {
        let dir = project();
        let out = search(dir.path(), "needle", "");
        assert_eq!(
            out,
            "keep.log:1: needle kept\n\
             src/lib.rs:1: // needle in lib\n\
             src/local.txt:1: needle: not anchored here\n\
             src/main.rs:2:     let needle = 1;\n"
        );
    }

    #[test]
    fn case_insensitive_flag_and_subdirectories() {
        let dir = project();
        assert_eq!(
            search(dir.path(), "(?i)needle", "docs"),
            "docs/final.md:1: Needle final\n"
        );
    }

    #[test]
    fn a_file_path_searches_that_file_even_if_ignored() {
        let dir = project();
        assert_eq!(
            search(dir.path(), "needle", "app.log"),
            "app.log:1: needle in a log\n"
        );
    }

    #[test]
    fn no_match_and_bad_patterns() {
        let dir = project();
        let out = search(dir.path(), "nothing-like-this", "src");
        assert_eq!(
            out,
            "no matches for /nothing-like-this/ in src (3 files searched)\n"
        );
        let err = run(
            dir.path(),
            &Input {
                pattern: "(".into(),
                path: String::new(),
            },
        );
        assert!(matches!(err, Err(ToolError::InvalidInput(m)) if m.contains("not a valid regex")));
    }

    #[test]
    fn output_is_capped() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let many: String = (0..MAX_MATCHES + 5).map(|i| format!("hit {i}\n")).collect();
        write(dir.path().join("a.txt"), many).unwrap_or_else(|e| panic!("{e}"));
        let out = search(dir.path(), "hit", "");
        assert_eq!(out.lines().count(), MAX_MATCHES + 1);
        assert!(out.ends_with("[stopped at 200 matches: narrow the pattern or the path]\n"));
    }
}

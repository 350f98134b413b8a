//! `edit`: replace one exact occurrence of a text in a file.

use std::path::Path;

use agent_skill_sdk::ToolError;
use agent_skill_sdk::fs::{self, Access};
use serde::Deserialize;

use crate::text;

/// At most this many lines of each side are shown in the summary.
const SHOWN_LINES: usize = 12;
/// At most this many match locations are listed when `old` is ambiguous.
const LISTED_MATCHES: usize = 10;

/// Input of `edit` (schema: `schemas/edit.json`).
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The file, relative to the project root, or its absolute path in the project
    /// (on the host, or under `/project`).
    pub path: String,
    /// The exact text to replace; it must occur exactly once.
    pub old: String,
    /// The replacement.
    pub new: String,
}

/// Runs `edit` with the project mounted at `root`.
pub fn run(root: &Path, input: &Input) -> Result<String, ToolError> {
    let path = fs::resolve(root, &input.path)?;
    let shown = text::rel(root, &path);
    let bytes = std::fs::read(&path).map_err(|e| fs::io_error(&e, &path, Access::Read))?;
    if text::looks_binary(&bytes) {
        return Err(ToolError::invalid_input(format!(
            "`{shown}` is a binary file; edit changes text only"
        )));
    }
    let content = String::from_utf8(bytes).map_err(|_| {
        ToolError::invalid_input(format!(
            "`{shown}` is not valid UTF-8; editing it as text would corrupt it"
        ))
    })?;
    let edited = apply(&content, &input.old, &input.new, &shown)?;
    std::fs::write(&path, &edited.content).map_err(|e| fs::io_error(&e, &path, Access::Write))?;
    Ok(edited.summary)
}

/// The result of [`apply`].
#[derive(Debug, PartialEq, Eq)]
pub struct Edited {
    /// The new file content.
    pub content: String,
    /// What changed, for the model: a header and a unified-diff-like hunk.
    pub summary: String,
}

/// Replaces the one occurrence of `old` in `content` (a file shown as
/// `shown`) with `new`.
pub fn apply(content: &str, old: &str, new: &str, shown: &str) -> Result<Edited, ToolError> {
    if old.is_empty() {
        return Err(ToolError::invalid_input(
            "`old` is empty: give the exact text to replace (use write_file to create or overwrite a whole file)",
        ));
    }
    if old == new {
        return Err(ToolError::invalid_input(
            "`old` and `new` are the same: nothing to change",
        ));
    }
    let mut old = old.to_string();
    let mut new = new.to_string();
    let mut positions = find_all(content, &old);
    // A model usually writes `\n`; a CRLF file needs `\r\n`.
    if positions.is_empty()
        && content.contains("\r\n")
        && old.contains('\n')
        && !old.contains("\r\n")
    {
        let crlf_old = old.replace('\n', "\r\n");
        let crlf_positions = find_all(content, &crlf_old);
        if !crlf_positions.is_empty() {
            old = crlf_old;
            new = new.replace("\r\n", "\n").replace('\n', "\r\n");
            positions = crlf_positions;
        }
    }
    match positions.as_slice() {
        [] => Err(ToolError::invalid_input(not_found_message(
            content, &old, shown,
        ))),
        [at] => Ok(replace_at(content, *at, &old, &new, shown)),
        many => {
            let lines: Vec<String> = many
                .iter()
                .take(LISTED_MATCHES)
                .map(|&at| line_of(content, at).to_string())
                .collect();
            let more = if many.len() > LISTED_MATCHES {
                ", ..."
            } else {
                ""
            };
            Err(ToolError::invalid_input(format!(
                "`old` matches {} times in `{shown}` (at lines {}{more}); include more of the \
                 surrounding lines in `old` so that it matches exactly once",
                many.len(),
                lines.join(", ")
            )))
        }
    }
}

/// Byte offsets of the non-overlapping occurrences of `needle`.
fn find_all(haystack: &str, needle: &str) -> Vec<usize> {
    haystack.match_indices(needle).map(|(at, _)| at).collect()
}

/// The 1-based line number of byte offset `at`.
fn line_of(content: &str, at: usize) -> usize {
    content[..at].bytes().filter(|&b| b == b'\n').count() + 1
}

/// Builds the new content and the summary of the change.
fn replace_at(content: &str, at: usize, old: &str, new: &str, shown: &str) -> Edited {
    let end = at + old.len();
    let mut edited = String::with_capacity(content.len() - old.len() + new.len());
    edited.push_str(&content[..at]);
    edited.push_str(new);
    edited.push_str(&content[end..]);

    // The changed lines: the whole lines around the match, on both sides.
    let line_start = content[..at].rfind('\n').map_or(0, |p| p + 1);
    let line_end = if end > line_start && content.as_bytes()[end - 1] == b'\n' {
        end
    } else {
        content[end..]
            .find('\n')
            .map_or(content.len(), |p| end + p + 1)
    };
    let tail = line_end - end;
    let old_block = &content[line_start..line_end];
    let new_block = &edited[line_start..at + new.len() + tail];

    let first = line_of(content, line_start);
    let old_lines = block_lines(old_block);
    let new_lines = block_lines(new_block);
    let range = |n: usize| match n {
        0 => format!("{first},0"),
        1 => first.to_string(),
        n => format!("{first},{n}"),
    };
    let describe = |n: usize| match n {
        0 => "nothing".to_string(),
        1 => format!("line {first}"),
        n => format!("lines {first}-{}", first + n - 1),
    };
    let mut summary = format!(
        "edited {shown}: {} replaced by {}\n@@ -{} +{} @@\n",
        describe(old_lines.len()),
        describe(new_lines.len()),
        range(old_lines.len()),
        range(new_lines.len()),
    );
    push_side(&mut summary, '-', &old_lines);
    push_side(&mut summary, '+', &new_lines);
    Edited {
        content: edited,
        summary,
    }
}

/// The lines of a block of whole lines, without their endings.
fn block_lines(block: &str) -> Vec<&str> {
    if block.is_empty() {
        return Vec::new();
    }
    block
        .strip_suffix('\n')
        .unwrap_or(block)
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// Appends one side of the hunk, shortened when long.
fn push_side(out: &mut String, sign: char, lines: &[&str]) {
    for line in lines.iter().take(SHOWN_LINES) {
        out.push(sign);
        out.push_str(&text::clip(line, 200));
        out.push('\n');
    }
    if lines.len() > SHOWN_LINES {
        out.push_str(&format!(
            "{sign}... ({} not shown)\n",
            text::count(lines.len() - SHOWN_LINES, "line", "lines")
        ));
    }
}

/// Why `old` was not found, with a hint when a whitespace-insensitive
/// search finds it.
fn not_found_message(content: &str, old: &str, shown: &str) -> String {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let first = old.lines().map(str::trim).find(|l| !l.is_empty());
    let near = first.and_then(|first| {
        let first = squash(first);
        content
            .lines()
            .position(|l| squash(l).contains(&first))
            .map(|i| i + 1)
    });
    let hint = match near {
        Some(line) if squash(content).contains(&squash(old)) => format!(
            "it does match at line {line} if whitespace is ignored: copy the text exactly as \
             the file has it (indentation, tabs or spaces, trailing spaces, line breaks)"
        ),
        Some(line) => format!(
            "its first line appears at line {line} but the rest differs: read the file again \
             and copy the text exactly, whitespace included"
        ),
        None => "check whitespace and indentation, and read the file again: it may have changed"
            .to_string(),
    };
    format!("`old` was not found in `{shown}`; {hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(content: &str, old: &str, new: &str) -> Result<Edited, String> {
        apply(content, old, new, "f.rs").map_err(|e| e.to_string())
    }

    #[test]
    fn one_match_is_replaced_with_a_hunk() {
        let content = "fn a() {\n    1\n}\nfn b() {}\n";
        let e = edit(content, "    1\n", "    2\n    3\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.content, "fn a() {\n    2\n    3\n}\nfn b() {}\n");
        assert_eq!(
            e.summary,
            "edited f.rs: line 2 replaced by lines 2-3\n@@ -2 +2,2 @@\n-    1\n+    2\n+    3\n"
        );
    }

    #[test]
    fn a_match_inside_a_line_shows_the_whole_line() {
        let e =
            edit("let x = 1;\nlet y = 2;\n", "y = 2", "y = 3").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.content, "let x = 1;\nlet y = 3;\n");
        assert!(
            e.summary
                .ends_with("@@ -2 +2 @@\n-let y = 2;\n+let y = 3;\n"),
            "{}",
            e.summary
        );
    }

    #[test]
    fn deleting_whole_lines() {
        let e = edit("a\nb\nc\n", "b\n", "").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.content, "a\nc\n");
        assert!(
            e.summary
                .starts_with("edited f.rs: line 2 replaced by nothing\n@@ -2 +2,0 @@\n-b\n"),
            "{}",
            e.summary
        );
    }

    #[test]
    fn no_match_says_so_and_hints_at_whitespace() {
        let err = edit("fn main() {\n\tprintln!();\n}\n", "    println!();", "x")
            .err()
            .unwrap_or_default();
        assert!(err.contains("`old` was not found in `f.rs`"), "{err}");
        assert!(err.contains("at line 2 if whitespace is ignored"), "{err}");
        let err = edit("abc\n", "xyz", "x").err().unwrap_or_default();
        assert!(err.contains("check whitespace"), "{err}");
    }

    #[test]
    fn several_matches_ask_for_context() {
        let err = edit("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 3")
            .err()
            .unwrap_or_default();
        assert!(err.contains("matches 2 times"), "{err}");
        assert!(err.contains("at lines 1, 3"), "{err}");
        assert!(err.contains("more of the surrounding lines"), "{err}");
    }

    #[test]
    fn crlf_files_accept_lf_text() {
        let e = edit("a\r\nb\r\nc\r\n", "a\nb\n", "a\nB\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(e.content, "a\r\nB\r\nc\r\n");
        assert!(
            e.summary.ends_with("@@ -1,2 +1,2 @@\n-a\n-b\n+a\n+B\n"),
            "{}",
            e.summary
        );
    }

    #[test]
    fn empty_or_identical_old_is_invalid() {
        assert!(edit("a", "", "b").is_err_and(|e| e.contains("`old` is empty")));
        assert!(edit("a", "a", "a").is_err_and(|e| e.contains("nothing to change")));
    }

    #[test]
    fn long_sides_are_shortened() {
        let old: String = (0..30).map(|i| format!("l{i}\n")).collect();
        let e = edit(&old, &old, "one\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(
            e.summary.contains("-... (18 lines not shown)\n+one\n"),
            "{}",
            e.summary
        );
        assert!(
            e.summary
                .starts_with("edited f.rs: lines 1-30 replaced by line 1\n@@ -1,30 +1 @@")
        );
    }
}

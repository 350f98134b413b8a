//! Small, allocation-free recognisers for pieces of a log line.

use crate::event::Level;

/// Removes ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL`
/// or `ESC ] … ESC \`, and two-byte `ESC X`) from `line` into `out`.
pub fn strip_ansi(line: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while let Some(off) = memchr::memchr(0x1b, &line[i..]) {
        out.extend_from_slice(&line[i..i + off]);
        i += off + 1;
        match line.get(i) {
            Some(b'[') => {
                i += 1;
                while i < line.len() && !(0x40..=0x7e).contains(&line[i]) {
                    i += 1;
                }
                i += 1;
            }
            Some(b']') => {
                i += 1;
                while i < line.len() {
                    if line[i] == 0x07 {
                        i += 1;
                        break;
                    }
                    if line[i] == 0x1b && line.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            Some(_) => i += 1,
            None => {}
        }
        i = i.min(line.len());
    }
    out.extend_from_slice(&line[i..]);
}

/// A line of the form `LEFT: LEVEL: MESSAGE` where LEFT is empty, a tool
/// (`clang`, `ld`, `xcodebuild`) or a path with an optional `:line[:column]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawDiagnostic<'a> {
    /// The path or tool; empty for a bare `error: …`.
    pub left: &'a str,
    /// Whether `left` is a path (has a `/` or a `.`) rather than a tool name.
    pub is_path: bool,
    /// 1-based, 0 when absent.
    pub line: u32,
    /// 1-based, 0 when absent.
    pub column: u32,
    /// The level.
    pub level: Level,
    /// `fatal error` (clang) was written.
    pub fatal: bool,
    /// Swift's runtime `Fatal error` was written (a crash, not a compile error).
    pub runtime_fatal: bool,
    /// Everything after `LEVEL: `.
    pub message: &'a str,
}

const LEVELS: &[(&str, Level, u8)] = &[
    ("error: ", Level::Error, 0),
    ("warning: ", Level::Warning, 0),
    ("note: ", Level::Note, 0),
    ("remark: ", Level::Note, 0),
    ("fatal error: ", Level::Error, 1),
    ("Fatal error: ", Level::Error, 2),
];

fn level_at(rest: &str) -> Option<(Level, u8, usize)> {
    LEVELS
        .iter()
        .find(|(word, _, _)| rest.starts_with(word))
        .map(|&(word, level, fatal)| (level, fatal, word.len()))
}

/// Recognises `LEFT: LEVEL: MESSAGE` at the start of an unindented line.
/// Indented lines are never diagnostics (they are command echoes, source
/// excerpts or script output), nor is a LEFT with spaces that is not a path.
pub fn diagnostic(line: &str) -> Option<RawDiagnostic<'_>> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let (left, rest) = if let Some((level, fatal, len)) = level_at(line) {
        ("", (level, fatal, &line[len..]))
    } else {
        let bytes = line.as_bytes();
        let mut from = 0;
        loop {
            let at = from + memchr::memchr(b':', &bytes[from..])?;
            let after = &line[at + 1..];
            if let Some(stripped) = after.strip_prefix(' ')
                && let Some((level, fatal, len)) = level_at(stripped)
            {
                break (&line[..at], (level, fatal, &stripped[len..]));
            }
            from = at + 1;
        }
    };
    let (level, fatal, message) = rest;
    let (path, line_no, column) = split_location(left);
    let is_path = path.contains('/') || path.contains('.');
    if !is_path && path.contains(' ') {
        return None;
    }
    if path.contains('"') || path.contains('\'') || path.contains('|') {
        return None;
    }
    Some(RawDiagnostic {
        left: path,
        is_path,
        line: line_no,
        column,
        level,
        fatal: fatal == 1,
        runtime_fatal: fatal == 2,
        message,
    })
}

/// `path:12:5` → (`path`, 12, 5); `path:12` → (`path`, 12, 0); `path` → (`path`, 0, 0).
pub fn split_location(left: &str) -> (&str, u32, u32) {
    let Some((head, last)) = left.rsplit_once(':') else {
        return (left, 0, 0);
    };
    let Ok(n) = last.parse::<u32>() else {
        return (left, 0, 0);
    };
    match head.rsplit_once(':') {
        Some((path, l)) if !path.is_empty() => match l.parse::<u32>() {
            Ok(line) => (path, line, n),
            Err(_) => (head, n, 0),
        },
        _ => (head, n, 0),
    }
}

/// Splits Xcode's `… (in target 'App' from project 'App')` suffix off a message.
pub fn split_target(message: &str) -> (&str, Option<&str>, Option<&str>) {
    let trimmed = message.trim_end();
    if let Some(open) = trimmed.rfind(" (in target '")
        && trimmed.ends_with("')")
    {
        let inner = &trimmed[open + " (in target '".len()..trimmed.len() - 2];
        let (target, project) = match inner.split_once("' from project '") {
            Some((t, p)) => (t, Some(p)),
            None => (inner, None),
        };
        return (&trimmed[..open], Some(target), project);
    }
    if let Some(open) = trimmed.rfind(" (in project '")
        && trimmed.ends_with("')")
    {
        let project = &trimmed[open + " (in project '".len()..trimmed.len() - 2];
        return (&trimmed[..open], None, Some(project));
    }
    (trimmed, None, None)
}

/// `(0.123 seconds)` or `0.123 seconds` anywhere in `text` → 0.123.
pub fn seconds(text: &str) -> Option<f64> {
    let end = text.rfind(" seconds")?;
    let start = text[..end]
        .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map_or(0, |i| i + 1);
    text[start..end].parse().ok()
}

/// Whether an indented line looks like a compiler's caret/underline line
/// (`    ^~~~`), or a Swift 5.9+ numbered excerpt line (`12 | code`,
/// `   | `- error: …`).
pub fn is_excerpt(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with('^') || t.starts_with('~') {
        return t.chars().all(|c| matches!(c, '^' | '~' | ' ' | '\t'))
            || t.starts_with("^~")
            || t == "^";
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let after = &t[digits..];
    after.starts_with(" |") || after == "|" || after.starts_with("|")
}

/// The first `count` characters of `text` (at a char boundary), with `…` when cut.
pub fn shorten(text: &str, count: usize) -> String {
    match text.char_indices().nth(count) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(s: &str) -> String {
        let mut out = Vec::new();
        strip_ansi(s.as_bytes(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn colour_codes_are_removed() {
        assert_eq!(strip("\x1b[1m\x1b[31merror: \x1b[0mboom"), "error: boom");
        assert_eq!(strip("\x1b]8;;file:///a\x07link\x1b]8;;\x07"), "link");
        assert_eq!(strip("a\x1b"), "a");
        assert_eq!(strip("\x1b[38;5;196"), "");
    }

    #[test]
    fn locations_split_from_the_right() {
        assert_eq!(split_location("/a/b.swift:12:5"), ("/a/b.swift", 12, 5));
        assert_eq!(split_location("/a/b.swift:12"), ("/a/b.swift", 12, 0));
        assert_eq!(split_location("/a/b.swift"), ("/a/b.swift", 0, 0));
        assert_eq!(split_location("C:x"), ("C:x", 0, 0));
    }

    #[test]
    fn diagnostics_need_a_path_a_tool_or_nothing_before_the_level() {
        let d = diagnostic("/Users/me/My App/A.swift:3:7: warning: unused").unwrap();
        assert_eq!(
            (d.left, d.line, d.column, d.message),
            ("/Users/me/My App/A.swift", 3, 7, "unused")
        );
        assert!(diagnostic("Processing file: error: nope").is_none());
        assert!(diagnostic("    /a.swift:1:1: error: indented").is_none());
        let d = diagnostic("clang: error: linker command failed").unwrap();
        assert_eq!((d.left, d.is_path), ("clang", false));
        let d = diagnostic("error: fatalError").unwrap();
        assert_eq!(d.left, "");
        assert!(
            diagnostic("A.swift:1: Fatal error: nil")
                .unwrap()
                .runtime_fatal
        );
        assert!(
            diagnostic("a.m:1:2: fatal error: 'x.h' file not found")
                .unwrap()
                .fatal
        );
    }

    #[test]
    fn target_suffixes_are_split_off() {
        assert_eq!(
            split_target(
                "Signing for \"App\" requires a development team. (in target 'App' from project 'Demo')"
            ),
            (
                "Signing for \"App\" requires a development team.",
                Some("App"),
                Some("Demo")
            )
        );
        assert_eq!(split_target("plain"), ("plain", None, None));
    }

    #[test]
    fn seconds_and_excerpts() {
        assert_eq!(seconds("passed (0.012 seconds)."), Some(0.012));
        assert_eq!(seconds("passed after 1.5 seconds with 1 issue."), Some(1.5));
        assert!(is_excerpt("        ^~~~"));
        assert!(is_excerpt("3 | foo()"));
        assert!(is_excerpt("  | `- error: cannot find 'foo' in scope"));
        assert!(!is_excerpt("    cd /Users/me"));
        assert_eq!(shorten("héllo", 2), "hé…");
    }
}

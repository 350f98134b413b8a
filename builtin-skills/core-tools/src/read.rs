//! `read_file`: a text file, or a range of its lines, capped.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use agent_skill_sdk::ToolError;
use agent_skill_sdk::fs::{self, Access};
use serde::Deserialize;

use crate::text::{self, SNIFF_BYTES};

/// At most this many lines per call.
pub const MAX_LINES: usize = 2000;
/// At most this many bytes of content per call.
pub const MAX_BYTES: usize = 100 * 1024;
/// Longer lines are cut (minified files would fill the output otherwise).
pub const MAX_LINE_CHARS: usize = 2000;
/// The total line count is reported only for files up to this size (the
/// rest of a bigger file is not read just to count it).
const COUNT_LIMIT: u64 = 32 * 1024 * 1024;

/// Input of `read_file` (schema: `schemas/read_file.json`).
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The file, relative to the project root, or its absolute path in the project
    /// (on the host, or under `/project`).
    pub path: String,
    /// First line to show, 1-based (default 1).
    pub start_line: Option<u32>,
    /// Last line to show, inclusive (default: the cap).
    pub end_line: Option<u32>,
}

/// Runs `read_file` with the project mounted at `root`.
pub fn run(root: &Path, input: &Input) -> Result<String, ToolError> {
    let path = fs::resolve(root, &input.path)?;
    let shown = text::rel(root, &path);
    let meta = std::fs::metadata(&path).map_err(|e| fs::io_error(&e, &path, Access::Read))?;
    if meta.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "`{shown}` is a directory: use list_dir to see what it holds"
        )));
    }
    let file = File::open(&path).map_err(|e| fs::io_error(&e, &path, Access::Read))?;
    let reader = BufReader::with_capacity(SNIFF_BYTES, file);
    render(reader, &shown, input.start_line, input.end_line, meta.len()).map_err(|e| match e {
        RenderError::Tool(t) => t,
        RenderError::Io(io) => fs::io_error(&io, &path, Access::Read),
    })
}

/// Why [`render`] failed.
#[derive(Debug)]
pub enum RenderError {
    /// An answer for the model.
    Tool(ToolError),
    /// Reading failed.
    Io(std::io::Error),
}

impl From<ToolError> for RenderError {
    fn from(e: ToolError) -> Self {
        RenderError::Tool(e)
    }
}

impl From<std::io::Error> for RenderError {
    fn from(e: std::io::Error) -> Self {
        RenderError::Io(e)
    }
}

/// Renders lines `start..=end` of the file behind `reader` (`size` bytes,
/// shown as `shown`), with notes when the output is partial.
pub fn render(
    mut reader: impl BufRead,
    shown: &str,
    start: Option<u32>,
    end: Option<u32>,
    size: u64,
) -> Result<String, RenderError> {
    let start = start.unwrap_or(1) as usize;
    if start == 0 {
        return Err(
            ToolError::invalid_input("`start_line` is 1-based: use 1 for the first line").into(),
        );
    }
    let end = end.map(|e| e as usize);
    if let Some(end) = end
        && end < start
    {
        return Err(ToolError::invalid_input(format!(
            "`end_line` ({end}) is before `start_line` ({start})"
        ))
        .into());
    }
    if text::looks_binary(reader.fill_buf()?) {
        return Err(ToolError::invalid_input(format!(
            "`{shown}` is a binary file ({}); read_file shows text only",
            text::human_size(size)
        ))
        .into());
    }

    let mut out = String::new();
    let mut line = Vec::new();
    let mut line_no = 0usize;
    let mut shown_from = None;
    let mut shown_to = 0usize;
    let mut shown_count = 0usize;
    let mut capped = false;
    let mut lossy = false;
    let mut eof = false;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            eof = true;
            break;
        }
        line_no += 1;
        if line_no < start {
            continue;
        }
        if end.is_some_and(|e| line_no > e) {
            break;
        }
        if shown_count >= MAX_LINES || out.len() >= MAX_BYTES {
            capped = true;
            break;
        }
        let content = line.strip_suffix(b"\n").unwrap_or(&line);
        let content = content.strip_suffix(b"\r").unwrap_or(content);
        let decoded = String::from_utf8_lossy(content);
        lossy |= matches!(decoded, std::borrow::Cow::Owned(_));
        out.push_str(&text::clip(&decoded, MAX_LINE_CHARS));
        out.push('\n');
        shown_from.get_or_insert(line_no);
        shown_to = line_no;
        shown_count += 1;
    }

    // The total is known once the whole file has been read.
    let total = if eof {
        Some(line_no)
    } else if size <= COUNT_LIMIT {
        let mut rest = 0usize;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line)? == 0 {
                break;
            }
            rest += 1;
        }
        Some(line_no + rest)
    } else {
        None
    };

    let Some(from) = shown_from else {
        return if total == Some(0) {
            Ok(format!("`{shown}` is empty"))
        } else {
            Err(ToolError::invalid_input(format!(
                "`{shown}` has {}; `start_line` {start} is past its end",
                text::count(total.unwrap_or(line_no), "line", "lines")
            ))
            .into())
        };
    };

    let mut notes = Vec::new();
    let whole = from == 1 && total == Some(shown_to);
    if !whole {
        notes.push(match total {
            Some(total) => format!("lines {from}-{shown_to} of {total}"),
            None => format!(
                "lines {from}-{shown_to}; the file is {} and goes on",
                text::human_size(size)
            ),
        });
    }
    if capped {
        notes.push(format!(
            "output capped at {MAX_LINES} lines or {} per call: continue with start_line {}",
            text::human_size(MAX_BYTES as u64),
            shown_to + 1
        ));
    }
    if lossy {
        notes.push("bytes that are not valid UTF-8 are shown as U+FFFD".to_string());
    }
    if !notes.is_empty() {
        out.push_str(&format!("\n[{}]\n", notes.join("; ")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(content: &str, start: Option<u32>, end: Option<u32>) -> Result<String, String> {
        render(
            content.as_bytes(),
            "f.txt",
            start,
            end,
            content.len() as u64,
        )
        .map_err(|e| match e {
            RenderError::Tool(t) => t.to_string(),
            RenderError::Io(io) => io.to_string(),
        })
    }

    #[test]
    fn a_whole_small_file_comes_back_as_it_is() {
        assert_eq!(read("a\nb\n", None, None), Ok("a\nb\n".into()));
        assert_eq!(read("a\r\nb", None, None), Ok("a\nb\n".into()));
        assert_eq!(read("", None, None), Ok("`f.txt` is empty".into()));
    }

    #[test]
    fn ranges_say_where_they_are() {
        let file = "1\n2\n3\n4\n5\n";
        assert_eq!(
            read(file, Some(2), Some(3)),
            Ok("2\n3\n\n[lines 2-3 of 5]\n".into())
        );
        assert_eq!(
            read(file, Some(4), None),
            Ok("4\n5\n\n[lines 4-5 of 5]\n".into())
        );
        assert_eq!(
            read(file, Some(5), Some(99)),
            Ok("5\n\n[lines 5-5 of 5]\n".into())
        );
    }

    #[test]
    fn bad_ranges_are_invalid_input() {
        let file = "1\n2\n";
        assert!(read(file, Some(0), None).is_err_and(|e| e.contains("1-based")));
        assert!(read(file, Some(2), Some(1)).is_err_and(|e| e.contains("before")));
        assert!(read(file, Some(3), None).is_err_and(|e| e.contains("has 2 lines")));
    }

    #[test]
    fn binary_files_are_refused() {
        let e = read("PK\u{3}\u{4}\0\0", None, None);
        assert!(e.is_err_and(|e| e.contains("binary file")));
    }

    #[test]
    fn big_files_are_capped_with_a_way_on() {
        let file: String = (1..=MAX_LINES + 10).map(|i| format!("{i}\n")).collect();
        let out = read(&file, None, None).unwrap_or_default();
        assert!(out.starts_with("1\n2\n"));
        assert!(out.contains(&format!(
            "{MAX_LINES}\n\n[lines 1-{MAX_LINES} of {}",
            MAX_LINES + 10
        )));
        assert!(out.contains(&format!("continue with start_line {}", MAX_LINES + 1)));
    }

    #[test]
    fn long_lines_are_cut_and_bad_utf8_is_noted() {
        let long = "x".repeat(MAX_LINE_CHARS + 5);
        let out = read(&long, None, None).unwrap_or_default();
        assert!(out.contains("[line cut at 2000 characters]"));
        let out = render(&b"caf\xe9\n"[..], "f", None, None, 5)
            .map_err(|_| ())
            .unwrap_or_default();
        assert!(out.starts_with("caf\u{FFFD}\n"));
        assert!(out.contains("U+FFFD"));
    }
}

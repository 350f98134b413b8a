//! Reading a log of any size line by line in bounded memory.

use std::io::{self, BufRead};

use crate::parser::Parser;
use crate::report::{Options, Report};

/// Bytes kept of one line (the rest of a longer line is skipped, and the
/// line is counted in [`crate::Summary::truncated_lines`]).
pub const MAX_LINE: usize = 64 * 1024;

/// Calls `each(line, truncated)` for every line of `reader` (without the
/// newline), holding at most `max_line` bytes of a line in memory.
///
/// # Errors
/// The reader's own I/O errors.
pub fn for_each_line<R: BufRead>(
    mut reader: R,
    max_line: usize,
    mut each: impl FnMut(&[u8], bool),
) -> io::Result<()> {
    let mut line = Vec::with_capacity(1024.min(max_line));
    let mut truncated = false;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if !line.is_empty() || truncated {
                each(&line, truncated);
            }
            return Ok(());
        }
        let (chunk, used, end) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], i + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = max_line - line.len();
        if chunk.len() > room {
            truncated = true;
        }
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        reader.consume(used);
        if end {
            each(&line, truncated);
            line.clear();
            truncated = false;
        }
    }
}

/// Parses a whole log from `reader` into a [`Report`], streaming: memory
/// stays bounded by [`MAX_LINE`] and the report's limits whatever the size.
///
/// # Errors
/// The reader's own I/O errors.
pub fn parse_reader<R: BufRead>(reader: R, options: Options) -> io::Result<Report> {
    let mut parser = Parser::new();
    let mut report = Report::new(options);
    for_each_line(reader, MAX_LINE, |line, truncated| {
        report.count_line(truncated);
        for event in parser.push(line) {
            report.add(event);
        }
    })?;
    for event in parser.finish() {
        report.add(event);
    }
    Ok(report)
}

/// Parses a log held in memory.
pub fn parse_str(log: &str, options: Options) -> Report {
    // Reading from a byte slice cannot fail.
    parse_reader(log.as_bytes(), options).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_and_crlf_and_last_lines_kept() {
        let mut lines = Vec::new();
        let input = format!("a\r\n{}\nlast", "x".repeat(100));
        for_each_line(
            io::BufReader::with_capacity(8, input.as_bytes()),
            10,
            |l, t| lines.push((String::from_utf8_lossy(l).into_owned(), t)),
        )
        .unwrap();
        assert_eq!(
            lines,
            vec![
                ("a\r".to_string(), false),
                ("x".repeat(10), true),
                ("last".to_string(), false)
            ]
        );
    }
}

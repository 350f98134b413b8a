//! Reading a log of any size line by line in bounded memory.

use std::collections::VecDeque;
use std::io::{self, BufRead};

use crate::event::Event;

use crate::parser::Parser;
use crate::report::{Options, Report};

/// Bytes kept of one line (the rest of a longer line is skipped, and the
/// line is counted in [`crate::Summary::truncated_lines`]).
pub const MAX_LINE: usize = 64 * 1024;

/// Reads lines of at most `max_line` bytes from a `BufRead`; the rest of a
/// longer line is skipped and the line marked truncated.
#[derive(Debug)]
pub struct LineReader<R> {
    reader: R,
    max_line: usize,
    line: Vec<u8>,
    done: bool,
}

impl<R: BufRead> LineReader<R> {
    /// Lines of `reader`, at most `max_line` bytes each.
    pub fn new(reader: R, max_line: usize) -> LineReader<R> {
        LineReader {
            reader,
            max_line,
            line: Vec::with_capacity(1024.min(max_line)),
            done: false,
        }
    }

    /// The next line without its newline, and whether it was cut; `None` at the end.
    ///
    /// # Errors
    /// The reader's own I/O errors.
    pub fn next_line(&mut self) -> io::Result<Option<(&[u8], bool)>> {
        self.line.clear();
        let mut truncated = false;
        loop {
            if self.done {
                return Ok(None);
            }
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                self.done = true;
                if self.line.is_empty() && !truncated {
                    return Ok(None);
                }
                return Ok(Some((&self.line, truncated)));
            }
            let (chunk, used, end) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            let room = self.max_line - self.line.len();
            if chunk.len() > room {
                truncated = true;
            }
            self.line.extend_from_slice(&chunk[..chunk.len().min(room)]);
            self.reader.consume(used);
            if end {
                return Ok(Some((&self.line, truncated)));
            }
        }
    }
}

/// Calls `each(line, truncated)` for every line of `reader` (without the
/// newline), holding at most `max_line` bytes of a line in memory.
///
/// # Errors
/// The reader's own I/O errors.
pub fn for_each_line<R: BufRead>(
    reader: R,
    max_line: usize,
    mut each: impl FnMut(&[u8], bool),
) -> io::Result<()> {
    let mut lines = LineReader::new(reader, max_line);
    while let Some((line, truncated)) = lines.next_line()? {
        each(line, truncated);
    }
    Ok(())
}

/// The events of a log read from a `BufRead`, as they complete: an
/// iterator over `io::Result<Event>` in bounded memory.
#[derive(Debug)]
pub struct Events<R> {
    lines: LineReader<R>,
    parser: Parser,
    ready: VecDeque<Event>,
    finished: bool,
}

impl<R: BufRead> Events<R> {
    /// The events of `reader`.
    pub fn new(reader: R) -> Events<R> {
        Events {
            lines: LineReader::new(reader, MAX_LINE),
            parser: Parser::new(),
            ready: VecDeque::new(),
            finished: false,
        }
    }
}

impl<R: BufRead> Iterator for Events<R> {
    type Item = io::Result<Event>;

    fn next(&mut self) -> Option<io::Result<Event>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if self.finished {
                return None;
            }
            match self.lines.next_line() {
                Ok(Some((line, _))) => self.ready.extend(self.parser.push(line)),
                Ok(None) => {
                    self.finished = true;
                    self.ready.extend(self.parser.finish());
                }
                Err(e) => {
                    self.finished = true;
                    return Some(Err(e));
                }
            }
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

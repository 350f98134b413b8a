//! An incremental Server-Sent Events parser.
//!
//! Bytes may arrive in arbitrary pieces: split inside a line, a field name
//! or a UTF-8 character, with several events in one piece. Lines end with
//! `\n`, `\r\n` or `\r`; lines starting with `:` are comments; an event ends
//! at a blank line; several `data:` lines are joined with `\n`.
//!
//! Each byte is scanned once, however the line is split (a line arriving in
//! many pieces is not rescanned from its start), so a huge event costs time
//! in proportion to its size. The parser holds at most the bytes pushed
//! since the last complete line: callers bound it by bounding what they
//! push (the providers stop at `max_response_bytes`).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when given.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Incremental parser state.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    /// How far `buf` has been scanned for a line ending.
    scanned: usize,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the events they complete.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut start = 0;
        let mut i = self.scanned;
        while i < self.buf.len() {
            match self.buf[i] {
                b'\n' => {
                    let line = self.buf[start..i].to_vec();
                    self.line(&line, &mut out);
                    i += 1;
                    start = i;
                }
                b'\r' => {
                    if i + 1 == self.buf.len() {
                        // Might be the first half of "\r\n": wait for more.
                        break;
                    }
                    let line = self.buf[start..i].to_vec();
                    self.line(&line, &mut out);
                    i += if self.buf[i + 1] == b'\n' { 2 } else { 1 };
                    start = i;
                }
                _ => i += 1,
            }
        }
        self.buf.drain(..start);
        self.scanned = i - start;
        out
    }

    /// Ends the stream: a last line without a line ending is processed and
    /// a pending event is dispatched.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.buf);
        self.scanned = 0;
        let rest = rest.strip_suffix(b"\r").unwrap_or(&rest);
        if !rest.is_empty() {
            self.line(rest, &mut out);
        }
        self.line(b"", &mut out);
        out
    }

    fn line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event = None;
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.find(':') {
            Some(pos) => {
                let v = &line[pos + 1..];
                (&line[..pos], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&line[..], ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_string()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: Option<&str>, data: &str) -> SseEvent {
        SseEvent {
            event: event.map(str::to_string),
            data: data.to_string(),
        }
    }

    fn parse_in_pieces(input: &[u8], sizes: &[usize]) -> Vec<SseEvent> {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        let mut pos = 0;
        let mut k = 0;
        while pos < input.len() {
            let n = sizes[k % sizes.len()].min(input.len() - pos);
            out.extend(p.push(&input[pos..pos + n]));
            pos += n;
            k += 1;
        }
        out.extend(p.finish());
        out
    }

    const STREAM: &str = ": keep-alive comment\r\n\
        event: message_start\r\n\
        data: {\"a\":\"h\u{e9}llo \u{1f600}\"}\r\n\
        \r\n\
        event: ping\n\
        data: {}\n\
        \n\
        data: line one\n\
        data:line two\n\
        data\n\
        \n\
        :only a comment\n\
        \n\
        event: delta\r\
        data: cr-only\r\
        \r\
        data: [DONE]\n\n";

    fn expected() -> Vec<SseEvent> {
        vec![
            ev(Some("message_start"), "{\"a\":\"h\u{e9}llo \u{1f600}\"}"),
            ev(Some("ping"), "{}"),
            ev(None, "line one\nline two\n"),
            ev(Some("delta"), "cr-only"),
            ev(None, "[DONE]"),
        ]
    }

    #[test]
    fn whole_input() {
        assert_eq!(
            parse_in_pieces(STREAM.as_bytes(), &[usize::MAX]),
            expected()
        );
    }

    #[test]
    fn every_split_position_and_size() {
        let bytes = STREAM.as_bytes();
        for size in 1..=9 {
            assert_eq!(parse_in_pieces(bytes, &[size]), expected(), "size {size}");
        }
        for sizes in [[1, 3, 2, 7], [5, 1, 1, 4], [2, 9, 1, 3]] {
            assert_eq!(parse_in_pieces(bytes, &sizes), expected(), "{sizes:?}");
        }
        // Every single split point into two pieces.
        for cut in 0..=bytes.len() {
            let mut p = SseParser::new();
            let mut out = p.push(&bytes[..cut]);
            out.extend(p.push(&bytes[cut..]));
            out.extend(p.finish());
            assert_eq!(out, expected(), "cut at {cut}");
        }
    }

    #[test]
    fn unterminated_last_event_is_flushed_by_finish() {
        let mut p = SseParser::new();
        assert!(p.push(b"event: x\ndata: tail").is_empty());
        assert_eq!(p.finish(), vec![ev(Some("x"), "tail")]);
    }

    /// A 16 MB event in 4 KB pieces: each byte is scanned once. Rescanning
    /// the buffer for each piece (as before) is quadratic: 32 GB of scans,
    /// minutes instead of milliseconds.
    #[test]
    fn a_huge_event_in_small_pieces_is_parsed_in_linear_time() {
        let mut body = b"data: ".to_vec();
        body.extend(std::iter::repeat_n(b'a', 16 * 1024 * 1024));
        body.extend_from_slice(b"\n\n");
        let started = std::time::Instant::now();
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for piece in body.chunks(4096) {
            out.extend(p.push(piece));
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 16 * 1024 * 1024);
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    }

    #[test]
    fn blank_line_without_data_dispatches_nothing() {
        let mut p = SseParser::new();
        assert!(p.push(b"event: lonely\n\n\n").is_empty());
        assert_eq!(p.push(b"data: x\n\n"), vec![ev(None, "x")]);
    }
}

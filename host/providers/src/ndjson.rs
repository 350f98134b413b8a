//! An incremental newline-delimited JSON splitter.
//!
//! Bytes may arrive in arbitrary pieces; complete, non-blank lines are
//! returned (with `\r\n` endings handled), each decoded as UTF-8 only once
//! whole, so a character split across pieces is not damaged. Each byte is
//! scanned once, however a line is split.

/// Incremental splitter state.
#[derive(Debug, Default)]
pub struct NdjsonParser {
    buf: Vec<u8>,
    /// How far `buf` has been scanned for a line ending.
    scanned: usize,
}

impl NdjsonParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; returns the complete non-blank lines, trimmed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<String> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        let mut start = 0;
        for i in self.scanned..self.buf.len() {
            if self.buf[i] == b'\n' {
                push_line(&self.buf[start..i], &mut out);
                start = i + 1;
            }
        }
        self.scanned = self.buf.len() - start;
        self.buf.drain(..start);
        out
    }

    /// Ends the stream: returns a last line that had no line ending.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        self.scanned = 0;
        push_line(&std::mem::take(&mut self.buf), &mut out);
        out
    }
}

fn push_line(line: &[u8], out: &mut Vec<String>) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if !text.is_empty() {
        out.push(text.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = "{\"a\":\"caf\u{e9} \u{1f680}\"}\r\n\n{\"b\":2}\n   \n{\"c\":3}";

    fn expected() -> Vec<String> {
        vec![
            "{\"a\":\"caf\u{e9} \u{1f680}\"}".to_string(),
            "{\"b\":2}".to_string(),
            "{\"c\":3}".to_string(),
        ]
    }

    #[test]
    fn any_chunking_gives_the_same_lines() {
        let bytes = STREAM.as_bytes();
        for size in 1..=8 {
            let mut p = NdjsonParser::new();
            let mut out = Vec::new();
            for piece in bytes.chunks(size) {
                out.extend(p.push(piece));
            }
            out.extend(p.finish());
            assert_eq!(out, expected(), "size {size}");
        }
        for cut in 0..=bytes.len() {
            let mut p = NdjsonParser::new();
            let mut out = p.push(&bytes[..cut]);
            out.extend(p.push(&bytes[cut..]));
            out.extend(p.finish());
            assert_eq!(out, expected(), "cut {cut}");
        }
    }

    /// A 16 MB line in 4 KB pieces is scanned once, not once per piece.
    #[test]
    fn a_huge_line_in_small_pieces_is_split_in_linear_time() {
        let mut body = vec![b'"'; 16 * 1024 * 1024];
        body.push(b'\n');
        let started = std::time::Instant::now();
        let mut p = NdjsonParser::new();
        let mut out = Vec::new();
        for piece in body.chunks(4096) {
            out.extend(p.push(piece));
        }
        assert_eq!(out.len(), 1);
        let took = started.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
    }

    #[test]
    fn several_lines_in_one_piece() {
        let mut p = NdjsonParser::new();
        assert_eq!(p.push(b"{}\n{}\n{"), vec!["{}", "{}"]);
        assert_eq!(p.push(b"}\n"), vec!["{}"]);
        assert!(p.finish().is_empty());
    }
}

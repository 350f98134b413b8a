//! Lines of any size read from a stream into one reused buffer: a line
//! longer than [`MAX_LINE`] is cut there (the rest skipped, counted), so
//! memory stays bounded whatever the input.

use std::io::{BufRead, ErrorKind};

/// The most bytes of one line kept.
pub const MAX_LINE: usize = 64 * 1024;

/// Reads lines (without their `\n` / `\r\n`) from a buffered reader.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Lines cut at [`MAX_LINE`].
    pub cut: u64,
    /// Bytes read.
    pub bytes: u64,
}

impl<R: BufRead> LineReader<R> {
    pub fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: Vec::with_capacity(1024),
            cut: 0,
            bytes: 0,
        }
    }

    /// The next line, or `None` at the end of the input.
    ///
    /// # Errors
    /// The reader's I/O error.
    pub fn next_line(&mut self) -> std::io::Result<Option<&[u8]>> {
        self.buf.clear();
        let mut any = false;
        let mut cut = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match memchr_nl(chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let room = MAX_LINE.saturating_sub(self.buf.len());
            let keep = take.min(room);
            self.buf.extend_from_slice(&chunk[..keep]);
            if keep < take {
                cut = true;
            }
            self.inner.consume(take);
            self.bytes += take as u64;
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if cut {
            self.cut += 1;
        }
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some(&self.buf))
    }
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_crlf_last_line_without_newline_and_a_cut_line() {
        let long = "x".repeat(MAX_LINE + 10);
        let input = format!("a\r\nb\n{long}\nc");
        let mut r = LineReader::new(std::io::BufReader::with_capacity(7, input.as_bytes()));
        let mut got = Vec::new();
        while let Some(l) = r.next_line().expect("read") {
            got.push(l.len());
        }
        assert_eq!(got, vec![1, 1, MAX_LINE, 1]);
        assert_eq!(r.cut, 1);
        assert_eq!(r.bytes, input.len() as u64);
    }
}

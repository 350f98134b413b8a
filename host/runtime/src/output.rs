//! A guest's stdout/stderr: the first `cap` bytes are kept, the rest is
//! counted and dropped. Writes never fail, so a chatty guest is not killed
//! for printing (wasmtime's `MemoryOutputPipe` refuses writes once full,
//! which makes Rust's `println!` panic).

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

#[derive(Debug, Default)]
struct Inner {
    kept: Vec<u8>,
    dropped: usize,
}

/// A shared, capped capture of what a guest prints.
#[derive(Debug, Clone)]
pub struct CappedOutput {
    cap: usize,
    inner: Arc<Mutex<Inner>>,
}

impl CappedOutput {
    /// Keeps at most `cap` bytes.
    pub fn new(cap: usize) -> CappedOutput {
        CappedOutput {
            cap,
            inner: Arc::new(Mutex::new(Inner::default())),
        }
    }

    fn push(&self, bytes: &[u8]) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let room = self.cap.saturating_sub(inner.kept.len());
        let take = bytes.len().min(room);
        inner.kept.extend_from_slice(&bytes[..take]);
        inner.dropped += bytes.len() - take;
    }

    /// What was kept, as text, with a note when output was dropped.
    pub fn text(&self) -> String {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut text = String::from_utf8_lossy(&inner.kept).into_owned();
        if inner.dropped > 0 {
            text.push_str(&format!(
                "\n[{} more bytes of output dropped]",
                inner.dropped
            ));
        }
        text
    }
}

impl IsTerminal for CappedOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedOutput {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CappedOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for CappedOutput {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.push(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(64 * 1024)
    }
}

impl tokio::io::AsyncWrite for CappedOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

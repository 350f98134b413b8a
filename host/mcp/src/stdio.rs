//! A stdio server's output streams: each line of its standard output checked before rmcp
//! reads it, and the end of its standard error quoted in errors.

use std::sync::{Arc, Mutex};

use crate::client::lock;

/// The server's standard output as rmcp reads it, line by line: each non-empty line must be
/// JSON and at most `max` bytes. The first that is not ends the stream, with the reason in
/// `broken` (an excerpt of the line, or its size).
pub(crate) fn checked_lines(
    stdout: tokio::process::ChildStdout,
    max: usize,
    broken: Arc<Mutex<Option<String>>>,
) -> tokio::io::DuplexStream {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
    let (mut to_rmcp, from_server) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = (&mut reader)
                .take(max as u64 + 1)
                .read_until(b'\n', &mut line)
                .await;
            let Ok(n) = read else { break };
            if n == 0 {
                break;
            }
            let body = line.trim_ascii();
            let why = if line.len() > max && !line.ends_with(b"\n") {
                Some(format!(
                    "it wrote a message longer than {max} bytes (mcp.max_result_bytes plus framing)"
                ))
            } else if !body.is_empty()
                && serde_json::from_slice::<serde::de::IgnoredAny>(body).is_err()
            {
                let text = String::from_utf8_lossy(body);
                let excerpt: String = text.chars().take(80).collect();
                Some(format!("it wrote a line that is not JSON-RPC: {excerpt:?}"))
            } else {
                None
            };
            if let Some(why) = why {
                *lock(&broken) = Some(why);
                break;
            }
            if to_rmcp.write_all(&line).await.is_err() {
                break;
            }
        }
        let _ = to_rmcp.shutdown().await;
    });
    from_server
}

pub(crate) fn stderr_note(tail: &Arc<Mutex<Vec<u8>>>) -> String {
    let t = lock(tail);
    let text = String::from_utf8_lossy(&t);
    let text = text.trim();
    if text.is_empty() {
        String::new()
    } else {
        let last: Vec<&str> = text.lines().rev().take(5).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        format!("; it said: {}", last.join(" | "))
    }
}

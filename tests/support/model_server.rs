//! A scripted model server: a real HTTP/1.1 server on 127.0.0.1 that replays
//! canned responses in each provider's wire format, records every request,
//! and can split streamed bodies into tiny, separately flushed pieces.
//!
//! It can also misbehave the way broken servers and flaky proxies do: cut
//! the connection part-way through a body ([`Reply::cut_at`]), send huge
//! events (any body), tool arguments that are not JSON
//! ([`Wire::raw_tool`]) and many tool calls in one answer
//! ([`Wire::many_tools`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted response.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
    /// When set, the body is sent chunked in pieces of 1..=max bytes, each
    /// flushed separately, with `delay` between pieces.
    pub split: Option<(usize, Duration)>,
    /// When set, only this many bytes of the body are sent, then the
    /// connection is closed (the headers still announce the whole body).
    pub cut_at: Option<usize>,
}

impl Reply {
    /// A 200 `text/event-stream` response.
    pub fn sse(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into(),
            split: None,
            cut_at: None,
        }
    }

    /// A 200 `application/x-ndjson` response.
    pub fn ndjson(body: impl Into<Vec<u8>>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "application/x-ndjson".into())],
            body: body.into(),
            split: None,
            cut_at: None,
        }
    }

    /// An error status with a JSON body.
    pub fn error(status: u16, body: &Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
            split: None,
            cut_at: None,
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sends the body in pieces of 1..=`max` bytes with `delay` between.
    pub fn split(mut self, max: usize, delay: Duration) -> Self {
        self.split = Some((max.max(1), delay));
        self
    }

    /// Sends only the first `bytes` bytes of the body, then closes the
    /// connection: a stream cut mid-answer.
    pub fn cut_at(mut self, bytes: usize) -> Self {
        self.cut_at = Some(bytes);
        self
    }
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The method.
    pub method: String,
    /// The path.
    pub path: String,
    /// The headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Null` when it is not JSON).
    pub body: Value,
    /// When its body had been read (to tell requests that overlapped from
    /// requests made one after another).
    pub at: std::time::Instant,
}

impl Recorded {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Default)]
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    seen: Mutex<Vec<Recorded>>,
}

/// The running server; stops when dropped.
pub struct ModelServer {
    url: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ModelServer {
    /// Starts a server that answers requests with `script`, in order
    /// (a 500 once the script is exhausted). Must run inside a tokio runtime.
    pub async fn start(script: Vec<Reply>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            seen: Mutex::new(Vec::new()),
        });
        let s = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = serve(sock, &s).await;
                });
            }
        });
        Ok(Self { url, shared, task })
    }

    /// The base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.seen).clone()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

async fn serve(mut sock: TcpStream, shared: &Shared) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(p) = find(&buf, b"\r\n\r\n") {
            break p;
        }
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_string();
    let path = first.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    lock(&shared.seen).push(Recorded {
        method,
        path,
        headers,
        body: json,
        at: std::time::Instant::now(),
    });
    let reply = lock(&shared.script).pop_front().unwrap_or_else(|| {
        Reply::error(
            500,
            &serde_json::json!({"error": {"message": "model server: script exhausted"}}),
        )
    });
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\nconnection: close\r\n",
        reply.status
    );
    for (n, v) in &reply.headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    let sent = reply
        .cut_at
        .unwrap_or(reply.body.len())
        .min(reply.body.len());
    match reply.split {
        None => {
            head.push_str(&format!("content-length: {}\r\n\r\n", reply.body.len()));
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(&reply.body[..sent]).await?;
        }
        Some((max, delay)) => {
            head.push_str("transfer-encoding: chunked\r\n\r\n");
            sock.write_all(head.as_bytes()).await?;
            sock.flush().await?;
            let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
            let mut pos = 0;
            while pos < sent {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let n = (1 + (seed >> 33) as usize % max).min(sent - pos);
                let piece = &reply.body[pos..pos + n];
                sock.write_all(format!("{n:x}\r\n").as_bytes()).await?;
                sock.write_all(piece).await?;
                sock.write_all(b"\r\n").await?;
                sock.flush().await?;
                pos += n;
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
            }
            if reply.cut_at.is_none() {
                sock.write_all(b"0\r\n\r\n").await?;
            }
        }
    }
    sock.flush().await?;
    sock.shutdown().await
}

/// An Anthropic SSE body: `event: NAME` + `data: JSON` per event.
pub fn anthropic_sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {}\n\n",
                e["type"].as_str().unwrap_or("message"),
                e
            )
        })
        .collect()
}

/// An OpenAI SSE body: `data: JSON` per chunk, then `data: [DONE]`.
pub fn openai_sse(chunks: &[Value]) -> String {
    let mut s: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    s.push_str("data: [DONE]\n\n");
    s
}

/// An NDJSON body: one JSON object per line.
pub fn ndjson(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Scripted turns in each provider's wire format, as the end-to-end tests
/// replay them: a tool call (40 input / 30 output tokens) and a text answer
/// (50 / 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wire {
    /// Anthropic Messages SSE.
    Anthropic,
    /// OpenAI-compatible chat completions SSE.
    OpenAi,
    /// Ollama NDJSON.
    Ollama,
}

impl Wire {
    /// The `--provider` name.
    pub fn name(self) -> &'static str {
        match self {
            Wire::Anthropic => "anthropic",
            Wire::OpenAi => "openai",
            Wire::Ollama => "ollama",
        }
    }

    /// A turn that calls tool `name` with `input` (call id `id`).
    pub fn tool(self, id: &str, name: &str, input: &Value) -> Reply {
        match self {
            Wire::Anthropic => Reply::sse(anthropic_sse(&[
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 40, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
                json!({"type": "message_stop"}),
            ])),
            Wire::OpenAi => Reply::sse(openai_sse(&[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}}]}, "finish_reason": null}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 30}}),
            ])),
            Wire::Ollama => Reply::ndjson(ndjson(&[
                json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": input}}]}, "done": false}),
                json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 40, "eval_count": 30}),
            ])),
        }
    }

    /// A turn that calls tool `name` with `raw` as its arguments, sent as
    /// they are (they need not be JSON; for Ollama, as a JSON string).
    pub fn raw_tool(self, id: &str, name: &str, raw: &str) -> Reply {
        match self {
            Wire::Anthropic => Reply::sse(anthropic_sse(&[
                json!({"type": "message_start", "message": {"usage": {"input_tokens": 40, "output_tokens": 1}}}),
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": raw}}),
                json!({"type": "content_block_stop", "index": 0}),
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
                json!({"type": "message_stop"}),
            ])),
            Wire::OpenAi => Reply::sse(openai_sse(&[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": raw}}]}, "finish_reason": null}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 30}}),
            ])),
            Wire::Ollama => Reply::ndjson(ndjson(&[
                json!({"message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": raw}}]}, "done": false}),
                json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 40, "eval_count": 30}),
            ])),
        }
    }

    /// A turn that calls tool `name` with `input` `count` times in one
    /// answer (call ids `call_0`, `call_1`, ...).
    pub fn many_tools(self, count: usize, name: &str, input: &Value) -> Reply {
        let ids: Vec<String> = (0..count).map(|i| format!("call_{i}")).collect();
        match self {
            Wire::Anthropic => {
                let mut events = vec![
                    json!({"type": "message_start", "message": {"usage": {"input_tokens": 40, "output_tokens": 1}}}),
                ];
                for (i, id) in ids.iter().enumerate() {
                    events.extend([
                        json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                        json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
                        json!({"type": "content_block_stop", "index": i}),
                    ]);
                }
                events.extend([
                    json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
                    json!({"type": "message_stop"}),
                ]);
                Reply::sse(anthropic_sse(&events))
            }
            Wire::OpenAi => {
                let calls: Vec<Value> = ids
                    .iter()
                    .enumerate()
                    .map(|(i, id)| json!({"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": input.to_string()}}))
                    .collect();
                Reply::sse(openai_sse(&[
                    json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": calls}, "finish_reason": null}]}),
                    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                    json!({"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 30}}),
                ]))
            }
            Wire::Ollama => {
                let calls: Vec<Value> = ids
                    .iter()
                    .map(|id| json!({"id": id, "function": {"name": name, "arguments": input}}))
                    .collect();
                Reply::ndjson(ndjson(&[
                    json!({"message": {"role": "assistant", "content": "", "tool_calls": calls}, "done": false}),
                    json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 40, "eval_count": 30}),
                ]))
            }
        }
    }

    /// A turn that answers `text` and ends.
    pub fn answer(self, text: &str) -> Reply {
        match self {
            Wire::Anthropic => anthropic_answer(&[text]),
            Wire::OpenAi => Reply::sse(openai_sse(&[
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": 12}}),
            ])),
            Wire::Ollama => Reply::ndjson(ndjson(&[
                json!({"message": {"role": "assistant", "content": text}, "done": false}),
                json!({"message": {"role": "assistant", "content": ""}, "done": true, "done_reason": "stop", "prompt_eval_count": 50, "eval_count": 12}),
            ])),
        }
    }
}

/// An Anthropic answer streamed as one text delta per item of `deltas`.
pub fn anthropic_answer<S: AsRef<str>>(deltas: &[S]) -> Reply {
    let mut events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 50, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ];
    for d in deltas {
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": d.as_ref()}}));
    }
    events.extend([
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 12}}),
        json!({"type": "message_stop"}),
    ]);
    Reply::sse(anthropic_sse(&events))
}

/// A two-thread tokio runtime for a test's model server.
pub fn tokio_rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The JSON events of `agent run --output jsonl` (panics on a line that is
/// not JSON).
pub fn jsonl(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

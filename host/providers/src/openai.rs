//! OpenAI-compatible chat completions.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use serde_json::{Value, json};

use crate::http::{Body, ProviderConfig, send_with_retry};
use crate::sse::SseParser;
use crate::types::{Accumulator, Emitter, tool_end};
use crate::{
    BoxFuture, CancellationToken, Completion, ContentBlock, EventSink, Message, Provider,
    ProviderError, Request, Role, StopReason, StreamEvent, ToolDef,
};

const NAME: &str = "openai";

/// An OpenAI-compatible chat completions API:
/// `POST {base}/chat/completions`, streamed as SSE.
#[derive(Debug, Clone)]
pub struct OpenAiProvider {
    config: ProviderConfig,
    key: String,
    client: reqwest::Client,
}

impl OpenAiProvider {
    /// A provider; the key is the configured one or `OPENAI_API_KEY`.
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let key = config.resolve_key("OPENAI_API_KEY")?;
        let client = config.client()?;
        Ok(Self {
            config,
            key,
            client,
        })
    }

    /// The JSON body sent for `req`.
    pub fn request_body(&self, req: &Request) -> Value {
        let model = self.config.model_for(req);
        let mut messages = Vec::new();
        if let Some(system) = &req.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for m in &req.messages {
            messages.extend(wire_messages(m));
        }
        let mut body = json!({
            "model": model,
            "messages": messages,
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": req.max_tokens,
        });
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        if !req.tools.is_empty() {
            body["tools"] = function_tools(&req.tools);
        }
        body
    }

    async fn run(
        &self,
        req: &Request,
        cancel: &CancellationToken,
        sink: &mut EventSink<'_>,
    ) -> Result<Completion, ProviderError> {
        let body = self.request_body(req);
        let url = self.config.url("/chat/completions");
        let resp = send_with_retry(NAME, &self.config.retry, cancel, || {
            self.client
                .post(&url)
                .bearer_auth(&self.key)
                .header("accept", "text/event-stream")
                .json(&body)
        })
        .await?;
        let mut resp = Body::new(NAME, resp, self.config.max_response_bytes);
        let mut out = Emitter {
            acc: Accumulator::new(),
            sink,
        };
        let mut state = State::default();
        let mut parser = SseParser::new();
        'read: while let Some(chunk) = resp.next(cancel).await? {
            for ev in parser.push(&chunk) {
                if state.data(&ev.data, &mut out)? {
                    break 'read;
                }
            }
        }
        if !state.done {
            for ev in parser.finish() {
                if state.data(&ev.data, &mut out)? {
                    break;
                }
            }
        }
        if !state.done {
            // Some compatible servers end without `[DONE]`.
            if state.finish.is_none() {
                return Err(resp.ended_before("a finish_reason"));
            }
            state.end(&mut out)?;
        }
        Ok(out.acc.finish())
    }
}

impl Provider for OpenAiProvider {
    fn name(&self) -> &str {
        NAME
    }

    fn stream<'a>(
        &'a self,
        req: &'a Request,
        cancel: &'a CancellationToken,
        on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(self.run(req, cancel, on_event))
    }
}

/// Tools in the `{"type": "function", "function": {...}}` shape shared by
/// OpenAI and Ollama.
pub(crate) fn function_tools(tools: &[ToolDef]) -> Value {
    tools
        .iter()
        .map(|t| {
            json!({
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            })
        })
        .collect()
}

/// One neutral message as OpenAI messages: tool results become `tool`
/// messages, the rest of a user message's text a `user` message.
fn wire_messages(m: &Message) -> Vec<Value> {
    let mut out = Vec::new();
    let text = m.text();
    match m.role {
        Role::User => {
            for b in &m.content {
                if let ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } = b
                {
                    out.push(
                        json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}),
                    );
                }
            }
            if !text.is_empty() || out.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
        }
        Role::Assistant => {
            let calls: Vec<Value> = m
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => Some(json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments(input)},
                    })),
                    _ => None,
                })
                .collect();
            let mut msg = json!({
                "role": "assistant",
                "content": if text.is_empty() { Value::Null } else { json!(text) },
            });
            if !calls.is_empty() {
                msg["tool_calls"] = Value::Array(calls);
            }
            out.push(msg);
        }
    }
    out
}

/// A call's `arguments` string: the JSON of its input, or, for arguments
/// that were not JSON (kept as a string), exactly what the model sent.
fn arguments(input: &Value) -> String {
    match input {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

fn malformed(message: impl Into<String>) -> ProviderError {
    ProviderError::MalformedStream {
        provider: NAME.to_string(),
        message: message.into(),
    }
}

struct Call {
    id: String,
    args: String,
}

#[derive(Default)]
struct State {
    calls: BTreeMap<u64, Call>,
    finish: Option<StopReason>,
    tools_ended: bool,
    done: bool,
}

impl State {
    /// Handles one `data:` payload; true at `[DONE]`.
    fn data(&mut self, data: &str, out: &mut Emitter<'_, '_>) -> Result<bool, ProviderError> {
        if data.trim() == "[DONE]" {
            if self.finish.is_none() {
                return Err(malformed("[DONE] without a finish_reason"));
            }
            self.end(out)?;
            return Ok(true);
        }
        let v: Value = crate::types::parse_json(data, "chunk")
            .map_err(|e| malformed(format!("bad JSON chunk ({e}): {data}")))?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(ProviderError::Stream {
                provider: NAME.to_string(),
                kind: v
                    .pointer("/error/type")
                    .or_else(|| v.pointer("/error/code"))
                    .and_then(Value::as_str)
                    .unwrap_or("error")
                    .to_string(),
                message: crate::error::error_message(data),
            });
        }
        if let Some(choice) = v.pointer("/choices/0") {
            let delta = &choice["delta"];
            if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                out.emit(StreamEvent::TextDelta(t.to_string()));
            }
            if let Some(calls) = delta["tool_calls"].as_array() {
                for c in calls {
                    self.tool_delta(c, out)?;
                }
            }
            if let Some(r) = choice["finish_reason"].as_str() {
                self.finish = Some(match r {
                    "stop" => StopReason::EndTurn,
                    "tool_calls" | "function_call" => StopReason::ToolUse,
                    "length" => StopReason::MaxTokens,
                    other => StopReason::Other(other.to_string()),
                });
                self.end_tools(out)?;
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            out.emit(StreamEvent::Usage {
                input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
                output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
            });
        }
        Ok(false)
    }

    fn tool_delta(&mut self, c: &Value, out: &mut Emitter<'_, '_>) -> Result<(), ProviderError> {
        // A delta without an index continues the last call unless it
        // carries a new id.
        let index = match c["index"].as_u64() {
            Some(i) => i,
            None if c["id"].is_string() => self.calls.len() as u64,
            None => self.calls.keys().next_back().copied().unwrap_or(0),
        };
        if let Entry::Vacant(slot) = self.calls.entry(index) {
            let id = c["id"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{index}"));
            let name = c
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(format!("tool call {index} starts without a name")))?;
            out.emit(StreamEvent::ToolUseStart {
                index: index as usize,
                id: id.clone(),
                name: name.to_string(),
            });
            slot.insert(Call {
                id,
                args: String::new(),
            });
        }
        if let (Some(call), Some(part)) = (
            self.calls.get_mut(&index),
            c.pointer("/function/arguments").and_then(Value::as_str),
        ) && !part.is_empty()
        {
            call.args.push_str(part);
            out.emit(StreamEvent::ToolInputDelta {
                id: call.id.clone(),
                partial_json: part.to_string(),
            });
        }
        Ok(())
    }

    fn end_tools(&mut self, out: &mut Emitter<'_, '_>) -> Result<(), ProviderError> {
        if self.tools_ended {
            return Ok(());
        }
        self.tools_ended = true;
        for call in std::mem::take(&mut self.calls).into_values() {
            out.emit(tool_end(call.id, &call.args));
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_, '_>) -> Result<(), ProviderError> {
        self.end_tools(out)?;
        self.done = true;
        let reason = self.finish.clone().unwrap_or(StopReason::EndTurn);
        out.emit(StreamEvent::Stop { reason });
        Ok(())
    }
}

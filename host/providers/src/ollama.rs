//! Ollama's chat API.

use serde_json::{Value, json};

use crate::http::{Body, ProviderConfig, send_with_retry};
use crate::ndjson::NdjsonParser;
use crate::openai::function_tools;
use crate::types::{Accumulator, Emitter, object_input, tool_end};
use crate::{
    BoxFuture, CancellationToken, Completion, ContentBlock, EventSink, Provider, ProviderError,
    Request, Role, StopReason, StreamEvent,
};

const NAME: &str = "ollama";

/// Ollama's chat API: `POST {base}/api/chat`, streamed as NDJSON.
#[derive(Debug, Clone)]
pub struct OllamaProvider {
    config: ProviderConfig,
    client: reqwest::Client,
}

impl OllamaProvider {
    /// A provider; Ollama needs no key (a configured one is sent as a
    /// bearer token, for proxies that want one).
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let client = config.client()?;
        Ok(Self { config, client })
    }

    /// The JSON body sent for `req`.
    pub fn request_body(&self, req: &Request) -> Value {
        let model = self.config.model_for(req);
        let mut messages = Vec::new();
        if let Some(system) = &req.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for m in &req.messages {
            let text = m.text();
            match m.role {
                Role::User => {
                    let mut any_result = false;
                    for b in &m.content {
                        if let ContentBlock::ToolResult {
                            tool_use_id,
                            content,
                            ..
                        } = b
                        {
                            any_result = true;
                            let name = tool_name(req, tool_use_id);
                            let mut msg = json!({"role": "tool", "content": content});
                            if let Some(name) = name {
                                msg["tool_name"] = json!(name);
                            }
                            messages.push(msg);
                        }
                    }
                    if !text.is_empty() || !any_result {
                        messages.push(json!({"role": "user", "content": text}));
                    }
                }
                Role::Assistant => {
                    let calls: Vec<Value> = m
                        .content
                        .iter()
                        .filter_map(|b| match b {
                            ContentBlock::ToolUse { name, input, .. } => Some(
                                json!({"function": {"name": name, "arguments": object_input(input)}}),
                            ),
                            _ => None,
                        })
                        .collect();
                    let mut msg = json!({"role": "assistant", "content": text});
                    if !calls.is_empty() {
                        msg["tool_calls"] = Value::Array(calls);
                    }
                    messages.push(msg);
                }
            }
        }
        let mut options = json!({"num_predict": req.max_tokens});
        if let Some(t) = req.temperature {
            options["temperature"] = json!(t);
        }
        let mut body = json!({
            "model": model,
            "messages": messages,
            "stream": true,
            "options": options,
        });
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
        let url = self.config.url("/api/chat");
        let resp = send_with_retry(NAME, &self.config.retry, cancel, || {
            let b = self.client.post(&url).json(&body);
            match &self.config.api_key {
                Some(k) => b.bearer_auth(k),
                None => b,
            }
        })
        .await?;
        let mut resp = Body::new(NAME, resp, self.config.max_response_bytes);
        let mut out = Emitter {
            acc: Accumulator::new(),
            sink,
        };
        let mut state = State::default();
        let mut parser = NdjsonParser::new();
        'read: while let Some(chunk) = resp.next(cancel).await? {
            for line in parser.push(&chunk) {
                if state.line(&line, &mut out)? {
                    break 'read;
                }
            }
        }
        if !state.done {
            for line in parser.finish() {
                if state.line(&line, &mut out)? {
                    break;
                }
            }
        }
        if !state.done {
            return Err(resp.ended_before("a line with done: true"));
        }
        Ok(out.acc.finish())
    }
}

/// The name of the tool called with `id` earlier in the conversation.
fn tool_name<'r>(req: &'r Request, id: &str) -> Option<&'r str> {
    req.messages
        .iter()
        .flat_map(|m| &m.content)
        .find_map(|b| match b {
            ContentBlock::ToolUse { id: i, name, .. } if i == id => Some(name.as_str()),
            _ => None,
        })
}

impl Provider for OllamaProvider {
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

#[derive(Default)]
struct State {
    calls: usize,
    done: bool,
}

impl State {
    /// Handles one line; true at `done: true`.
    fn line(&mut self, line: &str, out: &mut Emitter<'_, '_>) -> Result<bool, ProviderError> {
        let v: Value =
            crate::types::parse_json(line, "line").map_err(|e| ProviderError::MalformedStream {
                provider: NAME.to_string(),
                message: format!("bad JSON line ({e}): {line}"),
            })?;
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            return Err(ProviderError::Stream {
                provider: NAME.to_string(),
                kind: "error".to_string(),
                message: err
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| err.to_string()),
            });
        }
        let msg = &v["message"];
        if let Some(t) = msg["content"].as_str().filter(|t| !t.is_empty()) {
            out.emit(StreamEvent::TextDelta(t.to_string()));
        }
        if let Some(calls) = msg["tool_calls"].as_array() {
            for c in calls {
                let f = &c["function"];
                let index = self.calls;
                self.calls += 1;
                let id = c["id"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("call_{index}"));
                let name = f["name"].as_str().unwrap_or_default().to_string();
                // Ollama sends an object; some models and proxies a string
                // of JSON, which may not be JSON at all.
                let raw = match &f["arguments"] {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                out.emit(StreamEvent::ToolUseStart {
                    index,
                    id: id.clone(),
                    name,
                });
                out.emit(StreamEvent::ToolInputDelta {
                    id: id.clone(),
                    partial_json: raw.clone(),
                });
                out.emit(tool_end(id, &raw));
            }
        }
        if v["done"].as_bool() == Some(true) {
            out.emit(StreamEvent::Usage {
                input_tokens: v["prompt_eval_count"].as_u64().unwrap_or(0),
                output_tokens: v["eval_count"].as_u64().unwrap_or(0),
            });
            let reason = match v["done_reason"].as_str() {
                _ if self.calls > 0 => StopReason::ToolUse,
                Some("stop") | None => StopReason::EndTurn,
                Some("length") => StopReason::MaxTokens,
                Some(other) => StopReason::Other(other.to_string()),
            };
            out.emit(StreamEvent::Stop { reason });
            self.done = true;
            return Ok(true);
        }
        Ok(false)
    }
}

//! The Anthropic Messages API.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::http::{Body, ProviderConfig, send_with_retry};
use crate::sse::{SseEvent, SseParser};
use crate::types::{Accumulator, Emitter, object_input, tool_end};
use crate::{
    BoxFuture, CancellationToken, Completion, ContentBlock, EventSink, Provider, ProviderError,
    Request, Role, StopReason, StreamEvent,
};

const NAME: &str = "anthropic";

/// Anthropic's Messages API: `POST {base}/v1/messages`, streamed as SSE.
#[derive(Debug, Clone)]
pub struct AnthropicProvider {
    config: ProviderConfig,
    key: String,
    client: reqwest::Client,
}

impl AnthropicProvider {
    /// A provider; the key is the configured one or `ANTHROPIC_API_KEY`.
    pub fn new(config: ProviderConfig) -> Result<Self, ProviderError> {
        let key = config.resolve_key("ANTHROPIC_API_KEY")?;
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
        let messages: Vec<Value> = req
            .messages
            .iter()
            .map(|m| {
                json!({
                    "role": match m.role { Role::User => "user", Role::Assistant => "assistant" },
                    "content": m.content.iter().map(block_json).collect::<Vec<_>>(),
                })
            })
            .collect();
        let mut body = json!({
            "model": model,
            "max_tokens": req.max_tokens,
            "stream": true,
            "messages": messages,
        });
        if let Some(system) = &req.system {
            body["system"] = json!(system);
        }
        if let Some(t) = req.temperature {
            body["temperature"] = json!(t);
        }
        if !req.tools.is_empty() {
            body["tools"] = req
                .tools
                .iter()
                .map(|t| {
                    json!({"name": t.name, "description": t.description, "input_schema": t.input_schema})
                })
                .collect();
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
        let url = self.config.url("/v1/messages");
        let resp = send_with_retry(NAME, &self.config.retry, cancel, || {
            self.client
                .post(&url)
                .header("x-api-key", &self.key)
                .header("anthropic-version", "2023-06-01")
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
        while let Some(chunk) = resp.next(cancel).await? {
            for ev in parser.push(&chunk) {
                state.event(&ev, &mut out)?;
            }
        }
        for ev in parser.finish() {
            state.event(&ev, &mut out)?;
        }
        if !out.acc.is_stopped() {
            return Err(resp.ended_before("message_stop"));
        }
        Ok(out.acc.finish())
    }
}

impl Provider for AnthropicProvider {
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

fn block_json(b: &ContentBlock) -> Value {
    match b {
        ContentBlock::Text(t) => json!({"type": "text", "text": t}),
        ContentBlock::ToolUse { id, name, input } => {
            json!({"type": "tool_use", "id": id, "name": name, "input": object_input(input)})
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => json!({
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content,
            "is_error": is_error,
        }),
    }
}

fn malformed(message: impl Into<String>) -> ProviderError {
    ProviderError::MalformedStream {
        provider: NAME.to_string(),
        message: message.into(),
    }
}

enum Block {
    Text,
    Tool { id: String, json: String },
}

#[derive(Default)]
struct State {
    blocks: HashMap<u64, Block>,
    input_tokens: u64,
    output_tokens: u64,
    stop: Option<StopReason>,
}

fn stop_reason(s: &str) -> StopReason {
    match s {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        other => StopReason::Other(other.to_string()),
    }
}

impl State {
    fn event(&mut self, ev: &SseEvent, out: &mut Emitter<'_, '_>) -> Result<(), ProviderError> {
        let data: Value = crate::types::parse_json(&ev.data, "event")
            .map_err(|e| malformed(format!("bad JSON in event ({e}): {}", ev.data)))?;
        let kind = ev
            .event
            .as_deref()
            .or_else(|| data.get("type").and_then(Value::as_str))
            .unwrap_or("");
        let u64_at = |p: &str| data.pointer(p).and_then(Value::as_u64);
        match kind {
            "message_start" => {
                self.input_tokens = u64_at("/message/usage/input_tokens").unwrap_or(0);
                self.output_tokens = u64_at("/message/usage/output_tokens").unwrap_or(0);
                out.emit(StreamEvent::Usage {
                    input_tokens: self.input_tokens,
                    output_tokens: self.output_tokens,
                });
            }
            "content_block_start" => {
                let index = u64_at("/index").ok_or_else(|| malformed("block without index"))?;
                let block = &data["content_block"];
                match block["type"].as_str() {
                    Some("tool_use") => {
                        let id = block["id"].as_str().unwrap_or_default().to_string();
                        let name = block["name"].as_str().unwrap_or_default().to_string();
                        out.emit(StreamEvent::ToolUseStart {
                            index: index as usize,
                            id: id.clone(),
                            name,
                        });
                        self.blocks.insert(
                            index,
                            Block::Tool {
                                id,
                                json: String::new(),
                            },
                        );
                    }
                    _ => {
                        if let Some(t) = block["text"].as_str().filter(|t| !t.is_empty()) {
                            out.emit(StreamEvent::TextDelta(t.to_string()));
                        }
                        self.blocks.insert(index, Block::Text);
                    }
                }
            }
            "content_block_delta" => {
                let index = u64_at("/index").ok_or_else(|| malformed("delta without index"))?;
                let delta = &data["delta"];
                match (delta["type"].as_str(), self.blocks.get_mut(&index)) {
                    (Some("text_delta"), _) => {
                        let t = delta["text"].as_str().unwrap_or_default();
                        out.emit(StreamEvent::TextDelta(t.to_string()));
                    }
                    (Some("input_json_delta"), Some(Block::Tool { id, json })) => {
                        let part = delta["partial_json"].as_str().unwrap_or_default();
                        json.push_str(part);
                        out.emit(StreamEvent::ToolInputDelta {
                            id: id.clone(),
                            partial_json: part.to_string(),
                        });
                    }
                    (Some("input_json_delta"), _) => {
                        return Err(malformed(format!(
                            "input_json_delta for block {index}, which is not a tool_use"
                        )));
                    }
                    // thinking, signature, citations: not surfaced.
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = u64_at("/index").ok_or_else(|| malformed("stop without index"))?;
                if let Some(Block::Tool { id, json }) = self.blocks.remove(&index) {
                    out.emit(tool_end(id, &json));
                }
            }
            "message_delta" => {
                if let Some(r) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop = Some(stop_reason(r));
                }
                if let Some(n) = u64_at("/usage/output_tokens") {
                    self.output_tokens = n;
                }
                if let Some(n) = u64_at("/usage/input_tokens") {
                    self.input_tokens = n;
                }
                out.emit(StreamEvent::Usage {
                    input_tokens: self.input_tokens,
                    output_tokens: self.output_tokens,
                });
            }
            "message_stop" => {
                let reason = self.stop.take().unwrap_or(StopReason::EndTurn);
                out.emit(StreamEvent::Stop { reason });
            }
            "error" => {
                return Err(ProviderError::Stream {
                    provider: NAME.to_string(),
                    kind: data
                        .pointer("/error/type")
                        .and_then(Value::as_str)
                        .unwrap_or("error")
                        .to_string(),
                    message: crate::error::error_message(&ev.data),
                });
            }
            // "ping" and future event types.
            _ => {}
        }
        Ok(())
    }
}

//! Provider-neutral messages, requests, stream events and their accumulation.

use serde_json::Value;

/// Who wrote a message.
///
/// Tool results are [`ContentBlock::ToolResult`] blocks in a [`Role::User`]
/// message (the model Anthropic uses); providers that want a separate `tool`
/// role get them converted on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user, or the host returning tool results.
    User,
    /// The model.
    Assistant,
}

/// One block of a message's content.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock {
    /// Plain text.
    Text(String),
    /// A tool call made by the model.
    ToolUse {
        /// The call's id, echoed by the matching [`ContentBlock::ToolResult`].
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments, a JSON object.
        input: Value,
    },
    /// The result of a tool call, sent back to the model.
    ToolResult {
        /// The id of the [`ContentBlock::ToolUse`] this answers.
        tool_use_id: String,
        /// The result as text.
        content: String,
        /// Whether the tool failed.
        is_error: bool,
    },
}

/// A message of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// Its content, in order.
    pub content: Vec<ContentBlock>,
}

impl Message {
    /// A user message holding one text block.
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::Text(text.into())],
        }
    }

    /// An assistant message holding one text block.
    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![ContentBlock::Text(text.into())],
        }
    }

    /// The concatenation of the message's text blocks.
    pub fn text(&self) -> String {
        text_of(&self.content)
    }
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// A JSON Schema for its input.
    pub input_schema: Value,
}

/// A request to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The model name; when empty, the provider's configured model.
    pub model: String,
    /// The system prompt.
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolDef>,
    /// The maximum number of tokens to generate.
    pub max_tokens: u32,
    /// The sampling temperature.
    pub temperature: Option<f32>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// It hit `max_tokens`.
    MaxTokens,
    /// It produced a stop sequence.
    StopSequence,
    /// Another reason, as the provider named it.
    Other(String),
}

/// Token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Tokens of the prompt.
    pub input_tokens: u64,
    /// Tokens generated.
    pub output_tokens: u64,
}

/// One event of a streamed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// More text.
    TextDelta(String),
    /// A tool call begins.
    ToolUseStart {
        /// Its position among the answer's content blocks or tool calls.
        index: usize,
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// More of a tool call's JSON arguments (not valid JSON on its own).
    ToolInputDelta {
        /// The call's id.
        id: String,
        /// The next piece of the arguments.
        partial_json: String,
    },
    /// A tool call is complete.
    ToolUseEnd {
        /// The call's id.
        id: String,
        /// The parsed arguments.
        input: Value,
    },
    /// A tool call is complete but its arguments are not JSON (common with
    /// small local models). The call stays in the message with `raw` as a
    /// JSON string for its input, so that it can be answered with an error
    /// and the model can retry.
    ToolInputInvalid {
        /// The call's id.
        id: String,
        /// The arguments exactly as the model sent them.
        raw: String,
        /// Why they are not JSON (the parser's message).
        error: String,
    },
    /// Token counts so far (totals, not increments).
    Usage {
        /// Tokens of the prompt.
        input_tokens: u64,
        /// Tokens generated so far.
        output_tokens: u64,
    },
    /// The answer is complete.
    Stop {
        /// Why the model stopped.
        reason: StopReason,
    },
}

/// The result of a streamed call.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The assistant message.
    pub message: Message,
    /// Token counts.
    pub usage: Usage,
    /// Why the model stopped.
    pub stop_reason: StopReason,
    /// The tool calls of [`Completion::message`] whose arguments were not
    /// JSON, in order.
    pub invalid_inputs: Vec<InvalidToolInput>,
}

/// A tool call whose arguments could not be parsed; see
/// [`StreamEvent::ToolInputInvalid`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidToolInput {
    /// The call's id.
    pub id: String,
    /// The arguments exactly as the model sent them.
    pub raw: String,
    /// The parser's message.
    pub error: String,
}

/// Builds the final [`Completion`] from [`StreamEvent`]s.
#[derive(Debug, Default)]
pub struct Accumulator {
    content: Vec<ContentBlock>,
    usage: Usage,
    stop: Option<StopReason>,
    invalid: Vec<InvalidToolInput>,
}

impl Accumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one event into account.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::TextDelta(t) => match self.content.last_mut() {
                Some(ContentBlock::Text(s)) => s.push_str(t),
                _ => self.content.push(ContentBlock::Text(t.clone())),
            },
            StreamEvent::ToolUseStart { id, name, .. } => {
                self.content.push(ContentBlock::ToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: Value::Object(serde_json::Map::new()),
                })
            }
            StreamEvent::ToolInputDelta { .. } => {}
            StreamEvent::ToolUseEnd { id, input } => self.set_input(id, input.clone()),
            StreamEvent::ToolInputInvalid { id, raw, error } => {
                self.set_input(id, Value::String(raw.clone()));
                self.invalid.push(InvalidToolInput {
                    id: id.clone(),
                    raw: raw.clone(),
                    error: error.clone(),
                });
            }
            StreamEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                self.usage = Usage {
                    input_tokens: *input_tokens,
                    output_tokens: *output_tokens,
                }
            }
            StreamEvent::Stop { reason } => self.stop = Some(reason.clone()),
        }
    }

    fn set_input(&mut self, id: &str, value: Value) {
        let found = self.content.iter_mut().rev().find_map(|b| match b {
            ContentBlock::ToolUse { id: i, input, .. } if i == id => Some(input),
            _ => None,
        });
        if let Some(slot) = found {
            *slot = value;
        }
    }

    /// The text streamed so far (all text blocks).
    pub fn text(&self) -> String {
        text_of(&self.content)
    }

    /// Whether a [`StreamEvent::Stop`] was seen.
    pub fn is_stopped(&self) -> bool {
        self.stop.is_some()
    }

    /// The completion; the stop reason defaults to
    /// `Other("incomplete")` when no stop event was seen.
    pub fn finish(self) -> Completion {
        Completion {
            message: Message {
                role: Role::Assistant,
                content: self.content,
            },
            usage: self.usage,
            stop_reason: self
                .stop
                .unwrap_or_else(|| StopReason::Other("incomplete".to_string())),
            invalid_inputs: self.invalid,
        }
    }
}

/// Passes each event to the caller's callback and to an accumulator.
pub(crate) struct Emitter<'a, 'b> {
    pub(crate) acc: Accumulator,
    pub(crate) sink: &'a mut (dyn FnMut(StreamEvent) + Send + 'b),
}

impl Emitter<'_, '_> {
    pub(crate) fn emit(&mut self, event: StreamEvent) {
        self.acc.push(&event);
        (self.sink)(event);
    }
}

/// The end of a tool call whose arguments were accumulated as `raw`:
/// [`StreamEvent::ToolUseEnd`] with the parsed arguments (empty means `{}`),
/// or [`StreamEvent::ToolInputInvalid`] when they are not JSON.
pub(crate) fn tool_end(id: String, raw: &str) -> StreamEvent {
    if raw.trim().is_empty() {
        return StreamEvent::ToolUseEnd {
            id,
            input: Value::Object(serde_json::Map::new()),
        };
    }
    match agent_bounded::parse_json(raw, "tool arguments", agent_bounded::Limits::MESSAGE) {
        Ok(input) => StreamEvent::ToolUseEnd { id, input },
        Err(e) => StreamEvent::ToolInputInvalid {
            id,
            raw: raw.to_string(),
            error: e.to_string(),
        },
    }
}

/// A call's input as an API that demands a JSON object receives it: an
/// input that is not an object (the raw text of invalid arguments) is sent
/// as `{}`; the tool result that answers the call quotes the problem.
pub(crate) fn object_input(input: &Value) -> Value {
    if input.is_object() {
        input.clone()
    } else {
        Value::Object(serde_json::Map::new())
    }
}

/// Why a JSON document from the model server was not read.
pub(crate) type JsonError = agent_bounded::Error<serde_json::Error>;

/// The concatenation of the text blocks among `blocks`.
fn text_of(blocks: &[ContentBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

/// Parses one JSON document the model server sent (a stream chunk or line,
/// tool arguments, an error body), within the limits on size and depth;
/// `origin` names it in the error.
pub(crate) fn parse_json(text: &str, origin: &str) -> Result<Value, JsonError> {
    agent_bounded::parse_json(text, origin, agent_bounded::Limits::DATA)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deeply_nested_tool_arguments_are_refused_by_the_depth_limit_not_the_parser() {
        // A model (or a proxy) may send anything as arguments: 200 KB of `[`
        // is refused before serde_json reads it, with the limit in the message.
        let raw = "[".repeat(200_000);
        let started = std::time::Instant::now();
        let end = tool_end("c0".into(), &raw);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let StreamEvent::ToolInputInvalid { error, .. } = end else {
            panic!("not refused: {end:?}");
        };
        assert_eq!(
            error,
            "tool arguments: line 1, column 65: JSON nested deeper than the limit of 64 \
             levels; flatten the document"
        );
        let flat = tool_end("c1".into(), r#"{"path": [[["a"]]]}"#);
        let StreamEvent::ToolUseEnd { input, .. } = flat else {
            panic!("refused: {flat:?}");
        };
        assert_eq!(input, json!({"path": [[["a"]]]}));
    }

    #[test]
    fn accumulates_text_and_tools() {
        let mut acc = Accumulator::new();
        for e in [
            StreamEvent::TextDelta("Hel".into()),
            StreamEvent::TextDelta("lo".into()),
            StreamEvent::ToolUseStart {
                index: 1,
                id: "t1".into(),
                name: "read".into(),
            },
            StreamEvent::ToolInputDelta {
                id: "t1".into(),
                partial_json: "{\"p\":".into(),
            },
            StreamEvent::ToolUseEnd {
                id: "t1".into(),
                input: json!({"p": 1}),
            },
            StreamEvent::Usage {
                input_tokens: 3,
                output_tokens: 4,
            },
            StreamEvent::Stop {
                reason: StopReason::ToolUse,
            },
        ] {
            acc.push(&e);
        }
        let c = acc.finish();
        assert_eq!(
            c.message.content,
            vec![
                ContentBlock::Text("Hello".into()),
                ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "read".into(),
                    input: json!({"p": 1})
                }
            ]
        );
        assert_eq!(
            c.usage,
            Usage {
                input_tokens: 3,
                output_tokens: 4
            }
        );
        assert_eq!(c.stop_reason, StopReason::ToolUse);
    }
}

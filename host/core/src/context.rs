//! The context window manager: estimates the size of the conversation and
//! shrinks it before a request when it exceeds the token budget.
//!
//! Shrinking happens in two steps, each only when still over budget:
//! 1. [`trim_tool_results`] replaces the content of the oldest tool results
//!    (never those of the latest turn) by a short placeholder;
//! 2. [`summarize`] asks the model for a summary of the oldest part of the
//!    conversation and replaces that part by one user message, keeping the
//!    most recent turns verbatim and never separating a tool call from its
//!    result.

use agent_providers::{
    CancellationToken, Completion, ContentBlock, Message, Provider, ProviderError, Request, Role,
    StreamEvent,
};

/// The default token budget of the conversation sent to the model.
pub const DEFAULT_CONTEXT_BUDGET: usize = 100_000;

/// Characters per token assumed by the estimate.
pub const CHARS_PER_TOKEN: usize = 4;

/// Fixed tokens added per message (role, framing) by the estimate.
pub const MESSAGE_OVERHEAD_TOKENS: usize = 4;

/// The start of the placeholder that replaces a trimmed tool output.
pub const TRIMMED_PREFIX: &str = "[tool output trimmed:";

/// The start of the message that replaces a summarised part.
pub const SUMMARY_PREFIX: &str = "Summary of the earlier conversation: ";

/// The instruction given to the model when summarising.
pub const SUMMARY_INSTRUCTION: &str = "You summarise conversations between a user and an \
AI agent that uses tools. Write a concise summary of the conversation below that keeps every \
fact, decision, file name, command, result and open task needed to continue the work. Answer \
with the summary only.";

/// Longest text of one block copied into the summarisation transcript.
const TRANSCRIPT_BLOCK_LIMIT: usize = 4_000;

/// Estimated tokens of a number of characters: `ceil(chars / CHARS_PER_TOKEN)`.
fn chars_to_tokens(chars: usize) -> usize {
    chars.div_ceil(CHARS_PER_TOKEN)
}

/// Estimated tokens of one message.
///
/// The heuristic: about [`CHARS_PER_TOKEN`] characters per token for text
/// and tool results, a tool call counted by its name plus the length of its
/// serialized JSON input, ids counted as text, plus
/// [`MESSAGE_OVERHEAD_TOKENS`] per message.
pub fn estimate_message_tokens(message: &Message) -> usize {
    let chars: usize = message
        .content
        .iter()
        .map(|b| match b {
            ContentBlock::Text(t) => t.chars().count(),
            ContentBlock::ToolUse { id, name, input } => {
                id.chars().count() + name.chars().count() + input.to_string().chars().count()
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => tool_use_id.chars().count() + content.chars().count(),
        })
        .sum();
    MESSAGE_OVERHEAD_TOKENS + chars_to_tokens(chars)
}

/// Estimated tokens of a conversation: the sum of
/// [`estimate_message_tokens`] over its messages.
pub fn estimate_tokens(messages: &[Message]) -> usize {
    messages.iter().map(estimate_message_tokens).sum()
}

/// Index where the latest turn starts: the last assistant message (the
/// conversation's end when there is none). Messages from there on are never
/// trimmed.
fn latest_turn_start(messages: &[Message]) -> usize {
    messages
        .iter()
        .rposition(|m| m.role == Role::Assistant)
        .unwrap_or(messages.len())
}

/// Replaces the content of the oldest tool results by
/// `[tool output trimmed: N bytes]`, oldest first, until the estimate is at
/// most `budget`. Results of the latest turn (from the last assistant
/// message on) and results already trimmed are left alone. Returns how many
/// results were trimmed.
pub fn trim_tool_results(messages: &mut [Message], budget: usize) -> usize {
    let mut total = estimate_tokens(messages);
    if total <= budget {
        return 0;
    }
    let protected = latest_turn_start(messages);
    let mut trimmed = 0;
    for message in messages.iter_mut().take(protected) {
        if message.role != Role::User {
            continue;
        }
        for i in 0..message.content.len() {
            if total <= budget {
                return trimmed;
            }
            let before = estimate_message_tokens(message);
            let Some(ContentBlock::ToolResult { content, .. }) = message.content.get_mut(i) else {
                continue;
            };
            if content.starts_with(TRIMMED_PREFIX) {
                continue;
            }
            let placeholder = format!("{TRIMMED_PREFIX} {} bytes]", content.len());
            if placeholder.len() >= content.len() {
                continue;
            }
            *content = placeholder;
            trimmed += 1;
            let after = estimate_message_tokens(message);
            total = total.saturating_sub(before.saturating_sub(after));
        }
    }
    trimmed
}

/// Where the summarised part ends: the kept part starts at an assistant
/// message (so it follows the summary's user message, and a tool call stays
/// with its results, which come right after it). Prefers the longest kept
/// part whose estimate fits in half the budget; otherwise keeps only the
/// latest turn. `None` when there is nothing before the latest turn.
fn summary_split(messages: &[Message], budget: usize) -> Option<usize> {
    let candidates: Vec<usize> = messages
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, m)| m.role == Role::Assistant)
        .map(|(i, _)| i)
        .collect();
    let target = budget / 2;
    candidates
        .iter()
        .copied()
        .find(|&k| estimate_tokens(&messages[k..]) <= target)
        .or_else(|| candidates.last().copied())
}

/// Cuts `text` to at most `limit` characters, marking the cut.
fn clip(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}… [{} more bytes]", &text[..at], text.len() - at),
        None => text.to_string(),
    }
}

/// Renders messages as a plain-text transcript (the summarisation request
/// carries no tool blocks, so it needs no tool definitions).
fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        let who = match m.role {
            Role::User => "User",
            Role::Assistant => "Assistant",
        };
        for b in &m.content {
            let line = match b {
                ContentBlock::Text(t) => format!("{who}: {}", clip(t, TRANSCRIPT_BLOCK_LIMIT)),
                ContentBlock::ToolUse { name, input, .. } => format!(
                    "{who} called tool `{name}` with {}",
                    clip(&input.to_string(), TRANSCRIPT_BLOCK_LIMIT)
                ),
                ContentBlock::ToolResult {
                    content, is_error, ..
                } => format!(
                    "Tool {}: {}",
                    if *is_error { "error" } else { "result" },
                    clip(content, TRANSCRIPT_BLOCK_LIMIT)
                ),
            };
            out.push_str(&line);
            out.push_str("\n\n");
        }
    }
    out
}

/// What [`summarize`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summarized {
    /// How many messages were replaced by the summary (0: nothing changed).
    pub replaced: usize,
    /// The summarisation call's completion, for its token usage.
    pub completion: Option<Completion>,
}

/// When the estimate exceeds `budget`, asks `provider` (a request without
/// tools, with [`SUMMARY_INSTRUCTION`] as system prompt) to summarise the
/// oldest part of the conversation and replaces that part by one user
/// message starting with [`SUMMARY_PREFIX`]. The most recent turns are kept
/// verbatim (at least the latest one), and the kept part starts at an
/// assistant message, so no tool call is separated from its result. Nothing
/// changes when under budget, when there is nothing before the latest turn,
/// or when the model answers with no text.
///
/// # Errors
/// The provider's error; `messages` is then unchanged.
pub async fn summarize(
    provider: &dyn Provider,
    model: &str,
    max_tokens: u32,
    messages: &mut Vec<Message>,
    budget: usize,
    cancel: &CancellationToken,
) -> Result<Summarized, ProviderError> {
    if estimate_tokens(messages) <= budget {
        return Ok(Summarized::default());
    }
    let Some(split) = summary_split(messages, budget) else {
        return Ok(Summarized::default());
    };
    let req = Request {
        model: model.to_string(),
        system: Some(SUMMARY_INSTRUCTION.to_string()),
        messages: vec![Message::user(format!(
            "Summarise this conversation:\n\n{}",
            transcript(&messages[..split])
        ))],
        tools: Vec::new(),
        max_tokens,
        temperature: None,
    };
    let mut ignore = |_: StreamEvent| {};
    let completion = provider.stream(&req, cancel, &mut ignore).await?;
    let summary = completion.message.text();
    let summary = summary.trim();
    if summary.is_empty() {
        return Ok(Summarized {
            replaced: 0,
            completion: Some(completion),
        });
    }
    messages.splice(
        ..split,
        std::iter::once(Message::user(format!("{SUMMARY_PREFIX}{summary}"))),
    );
    Ok(Summarized {
        replaced: split,
        completion: Some(completion),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_providers::{BoxFuture, StopReason, Usage};
    use serde_json::json;
    use std::sync::Mutex;

    /// A provider that answers every request with a fixed text and records
    /// the requests.
    struct FixedSummary {
        text: String,
        requests: Mutex<Vec<Request>>,
    }

    impl FixedSummary {
        fn new(text: &str) -> Self {
            Self {
                text: text.to_string(),
                requests: Mutex::new(Vec::new()),
            }
        }
    }

    impl Provider for FixedSummary {
        fn name(&self) -> &str {
            "fixed"
        }

        fn stream<'a>(
            &'a self,
            req: &'a Request,
            _cancel: &'a CancellationToken,
            on_event: &'a mut agent_providers::EventSink<'a>,
        ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
            Box::pin(async move {
                self.requests.lock().unwrap().push(req.clone());
                on_event(StreamEvent::TextDelta(self.text.clone()));
                Ok(Completion {
                    message: Message::assistant(self.text.clone()),
                    usage: Usage {
                        input_tokens: 10,
                        output_tokens: 5,
                    },
                    stop_reason: StopReason::EndTurn,
                    invalid_inputs: Vec::new(),
                })
            })
        }
    }

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.to_string(),
                name: "read".to_string(),
                input: json!({"path": format!("file-{id}")}),
            }],
        }
    }

    fn result(id: &str, size: usize) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id.to_string(),
                content: "x".repeat(size),
                is_error: false,
            }],
        }
    }

    /// A prompt, then `n` tool rounds with outputs of `size` bytes.
    fn conversation(n: usize, size: usize) -> Vec<Message> {
        let mut m = vec![Message::user("do the thing")];
        for i in 0..n {
            let id = format!("t{i}");
            m.push(call(&id));
            m.push(result(&id, size));
        }
        m
    }

    fn result_content(m: &Message) -> &str {
        match &m.content[0] {
            ContentBlock::ToolResult { content, .. } => content,
            _ => panic!("not a tool result"),
        }
    }

    /// Every tool call is answered in the next message and every result
    /// answers a call in the previous one.
    fn assert_pairs_intact(messages: &[Message]) {
        for (i, m) in messages.iter().enumerate() {
            for b in &m.content {
                if let ContentBlock::ToolResult { tool_use_id, .. } = b {
                    let prev = &messages[i - 1];
                    assert!(prev.content.iter().any(
                        |p| matches!(p, ContentBlock::ToolUse { id, .. } if id == tool_use_id)
                    ));
                }
                if let ContentBlock::ToolUse { id, .. } = b
                    && let Some(next) = messages.get(i + 1)
                {
                    assert!(next.content.iter().any(|p| matches!(
                        p,
                        ContentBlock::ToolResult { tool_use_id, .. } if tool_use_id == id
                    )));
                }
            }
        }
    }

    #[test]
    fn estimate_is_monotonic() {
        let mut messages = Vec::new();
        let mut last = estimate_tokens(&messages);
        assert_eq!(last, 0);
        for m in conversation(5, 100) {
            messages.push(m);
            let now = estimate_tokens(&messages);
            assert!(now > last);
            last = now;
        }
        let short = estimate_message_tokens(&Message::user("abcd"));
        let long = estimate_message_tokens(&Message::user("abcd".repeat(10)));
        assert_eq!(short, MESSAGE_OVERHEAD_TOKENS + 1);
        assert_eq!(long, MESSAGE_OVERHEAD_TOKENS + 10);
        let small = estimate_message_tokens(&call("a"));
        let mut big = call("a");
        big.content[0] = ContentBlock::ToolUse {
            id: "a".into(),
            name: "read".into(),
            input: json!({"path": "x".repeat(400)}),
        };
        assert!(estimate_message_tokens(&big) > small + 90);
    }

    #[test]
    fn nothing_changes_under_budget() {
        let mut messages = conversation(3, 1000);
        let before = messages.clone();
        let budget = estimate_tokens(&messages);
        assert_eq!(trim_tool_results(&mut messages, budget), 0);
        assert_eq!(messages, before);
        let provider = FixedSummary::new("S");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let done = rt
            .block_on(summarize(
                &provider,
                "",
                100,
                &mut messages,
                budget,
                &CancellationToken::new(),
            ))
            .unwrap();
        assert_eq!(done.replaced, 0);
        assert!(done.completion.is_none());
        assert_eq!(messages, before);
        assert!(provider.requests.lock().unwrap().is_empty());
    }

    #[test]
    fn trims_oldest_results_only_until_under_budget() {
        let mut messages = conversation(4, 4000);
        let full = estimate_tokens(&messages);
        // Trimming one result saves about 1000 tokens: ask for 1500 less.
        let budget = full - 1500;
        let trimmed = trim_tool_results(&mut messages, budget);
        assert_eq!(trimmed, 2);
        assert!(estimate_tokens(&messages) <= budget);
        assert_eq!(
            result_content(&messages[2]),
            "[tool output trimmed: 4000 bytes]"
        );
        assert_eq!(
            result_content(&messages[4]),
            "[tool output trimmed: 4000 bytes]"
        );
        assert_eq!(result_content(&messages[6]).len(), 4000);
        assert_eq!(result_content(&messages[8]).len(), 4000);
        assert_pairs_intact(&messages);
    }

    #[test]
    fn never_trims_the_latest_turn() {
        let mut messages = conversation(3, 4000);
        let trimmed = trim_tool_results(&mut messages, 0);
        assert_eq!(trimmed, 2);
        assert_eq!(result_content(&messages[6]).len(), 4000);
        // Trimming again changes nothing.
        let before = messages.clone();
        assert_eq!(trim_tool_results(&mut messages, 0), 0);
        assert_eq!(messages, before);
    }

    #[test]
    fn summarizes_oldest_messages_keeping_pairs() {
        let mut messages = conversation(6, 400);
        let original = messages.clone();
        let budget = estimate_tokens(&messages) / 2;
        let provider = FixedSummary::new("the user asked; files were read");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let done = rt
            .block_on(summarize(
                &provider,
                "m",
                256,
                &mut messages,
                budget,
                &CancellationToken::new(),
            ))
            .unwrap();
        assert!(done.replaced > 0);
        assert_eq!(
            messages[0],
            Message::user("Summary of the earlier conversation: the user asked; files were read")
        );
        // The rest is the original tail, verbatim, starting at a tool call.
        assert_eq!(messages[1..], original[done.replaced..]);
        assert_eq!(messages[1].role, Role::Assistant);
        assert!(messages.len() >= 3);
        assert_eq!(messages.last(), original.last());
        assert!(estimate_tokens(&messages) <= budget);
        assert_pairs_intact(&messages);
        // The request had no tools and carried the old part as text.
        let reqs = provider.requests.lock().unwrap();
        assert_eq!(reqs.len(), 1);
        assert!(reqs[0].tools.is_empty());
        assert_eq!(reqs[0].model, "m");
        assert_eq!(reqs[0].system.as_deref(), Some(SUMMARY_INSTRUCTION));
        let text = reqs[0].messages[0].text();
        assert!(text.contains("do the thing"));
        assert!(text.contains("called tool `read`"));
        assert!(
            reqs[0]
                .messages
                .iter()
                .all(|m| m.content.iter().all(|b| matches!(b, ContentBlock::Text(_))))
        );
    }

    #[test]
    fn summary_keeps_latest_turn_when_it_alone_is_too_big() {
        let mut messages = conversation(3, 400);
        messages.push(call("big"));
        messages.push(result("big", 40_000));
        let original = messages.clone();
        let provider = FixedSummary::new("S");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let done = rt
            .block_on(summarize(
                &provider,
                "",
                100,
                &mut messages,
                1000,
                &CancellationToken::new(),
            ))
            .unwrap();
        assert_eq!(done.replaced, original.len() - 2);
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[1..], original[original.len() - 2..]);
        assert_pairs_intact(&messages);
    }

    #[test]
    fn summary_needs_something_before_the_latest_turn() {
        let mut messages = vec![Message::user("x".repeat(10_000))];
        let before = messages.clone();
        let provider = FixedSummary::new("S");
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let done = rt
            .block_on(summarize(
                &provider,
                "",
                100,
                &mut messages,
                10,
                &CancellationToken::new(),
            ))
            .unwrap();
        assert_eq!(done.replaced, 0);
        assert_eq!(messages, before);
    }
}

//! The events of a run and the conversation rebuilt from them.

use agent_providers::{ContentBlock, Message, Role};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopKind {
    /// The model ended its turn with an answer.
    EndTurn,
    /// The turn limit was reached.
    MaxTurns,
    /// The wall-clock limit was reached.
    Timeout,
    /// The run was cancelled through [`crate::Agent::cancel`].
    Cancelled,
}

/// One thing that happened in a run, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// The user's message that starts (or continues) the session.
    User {
        /// The text.
        text: String,
    },
    /// A model turn begins.
    TurnStart {
        /// The turn number in this run, from 1.
        turn: u32,
    },
    /// More of the model's text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// The model called a tool.
    ToolCall {
        /// The call's id.
        id: String,
        /// The skill that provides the tool (empty when unknown).
        skill: String,
        /// The tool's own name.
        tool: String,
        /// The name the model used (`<skill>__<tool>` for clashing names).
        name: String,
        /// The input.
        input: Value,
    },
    /// A tool call's result.
    ToolResult {
        /// The call's id.
        id: String,
        /// The output or the error text.
        output: String,
        /// Whether it failed.
        is_error: bool,
    },
    /// An approval decision for a tool that requires it.
    Approval {
        /// The tool.
        tool: String,
        /// Whether it may run.
        approved: bool,
        /// Why.
        reason: String,
    },
    /// A capability was refused.
    Denial {
        /// The skill.
        skill: String,
        /// The permission.
        permission: String,
        /// Why.
        reason: String,
    },
    /// Token usage of one turn.
    Usage {
        /// Prompt tokens.
        input_tokens: u64,
        /// Generated tokens.
        output_tokens: u64,
    },
    /// The conversation was shrunk to fit the context budget.
    Context {
        /// Tool outputs replaced by a placeholder.
        trimmed_results: usize,
        /// Oldest messages replaced by a summary (0: none).
        summarized_messages: usize,
        /// The estimated tokens of the conversation afterwards.
        estimated_tokens: usize,
    },
    /// A skill is active in this run.
    Activated {
        /// The skill.
        skill: String,
        /// Why it is active (trigger, `--skills`, dependency...).
        reason: String,
    },
    /// A tool call was refused before it ran: by the active skills'
    /// constraints or by a hook. The model is told `reason`.
    Refused {
        /// The call's id.
        id: String,
        /// The tool's name as the model used it.
        tool: String,
        /// `constraints` or `hook:<skill>`.
        by: String,
        /// Why.
        reason: String,
    },
    /// A hook changed something.
    Hook {
        /// The hook's skill.
        skill: String,
        /// The phase, e.g. `on_before_tool_call`.
        phase: String,
        /// What it changed.
        change: String,
    },
    /// A transform skill rewrote the final output.
    Transformed {
        /// The transform skill.
        skill: String,
    },
    /// Something went wrong that did not stop the run (a failing hook or
    /// transform, an unreadable prompt file...).
    Warning {
        /// What happened.
        message: String,
    },
    /// The model's answer broke off mid-stream (the connection failed, or
    /// the stream ended before its last event). The text streamed before
    /// the break precedes this event. `retrying`: the request is sent again
    /// and the partial answer is superseded by the next one; otherwise the
    /// run fails, and the partial answer stays in the conversation, marked
    /// as interrupted.
    Interrupted {
        /// What happened.
        message: String,
        /// Which attempt broke off, from 1.
        attempt: u32,
        /// Whether the request is sent again.
        retrying: bool,
    },
    /// The run failed (the provider could not answer).
    Error {
        /// What failed.
        message: String,
    },
    /// The run ended.
    Final {
        /// The final answer.
        text: String,
        /// Turns taken.
        turns: u32,
        /// Why it stopped.
        stop: StopKind,
    },
}

/// Rebuilds the conversation from a session's logged events (as written by
/// [`crate::Agent::run`]); unreadable events are skipped.
pub fn history_from_events(events: &[Value]) -> Vec<Message> {
    let mut messages = Vec::new();
    let mut assistant: Vec<ContentBlock> = Vec::new();
    let mut results: Vec<ContentBlock> = Vec::new();
    fn flush(messages: &mut Vec<Message>, role: Role, blocks: &mut Vec<ContentBlock>) {
        if !blocks.is_empty() {
            messages.push(Message {
                role,
                content: std::mem::take(blocks),
            });
        }
    }
    for v in events {
        let Ok(event) = serde_json::from_value::<AgentEvent>(v.clone()) else {
            continue;
        };
        match event {
            AgentEvent::User { text } => {
                flush(&mut messages, Role::Assistant, &mut assistant);
                flush(&mut messages, Role::User, &mut results);
                messages.push(Message::user(text));
            }
            AgentEvent::TurnStart { .. } | AgentEvent::Final { .. } => {
                flush(&mut messages, Role::Assistant, &mut assistant);
                flush(&mut messages, Role::User, &mut results);
            }
            AgentEvent::Interrupted {
                message, retrying, ..
            } => {
                if retrying {
                    // Superseded by the next attempt's answer.
                    assistant.clear();
                } else if let Some(ContentBlock::Text(t)) = assistant.last_mut() {
                    t.push_str(&interrupted_marker(&message));
                }
            }
            AgentEvent::TextDelta { text } => match assistant.last_mut() {
                Some(ContentBlock::Text(t)) => t.push_str(&text),
                _ => assistant.push(ContentBlock::Text(text)),
            },
            AgentEvent::ToolCall {
                id, name, input, ..
            } => assistant.push(ContentBlock::ToolUse { id, name, input }),
            AgentEvent::ToolResult {
                id,
                output,
                is_error,
            } => {
                flush(&mut messages, Role::Assistant, &mut assistant);
                results.push(ContentBlock::ToolResult {
                    tool_use_id: id,
                    content: output,
                    is_error,
                });
            }
            AgentEvent::Approval { .. }
            | AgentEvent::Denial { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::Context { .. }
            | AgentEvent::Activated { .. }
            | AgentEvent::Refused { .. }
            | AgentEvent::Hook { .. }
            | AgentEvent::Transformed { .. }
            | AgentEvent::Warning { .. }
            | AgentEvent::Error { .. } => {}
        }
    }
    flush(&mut messages, Role::Assistant, &mut assistant);
    flush(&mut messages, Role::User, &mut results);
    // A conversation must not end with a dangling tool call without result,
    // nor hold an assistant turn whose tool calls were never answered.
    sanitize(messages)
}

/// The note that ends a partial answer kept after its stream broke off.
pub fn interrupted_marker(message: &str) -> String {
    format!("\n\n[interrupted: {message}]")
}

fn sanitize(messages: Vec<Message>) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for m in messages {
        if m.role == Role::User
            && m.content
                .iter()
                .all(|b| matches!(b, ContentBlock::ToolResult { .. }))
            && !out.last().is_some_and(|p| p.role == Role::Assistant)
        {
            continue;
        }
        out.push(m);
    }
    // Drop a trailing assistant message whose tool calls have no results.
    if let Some(last) = out.last()
        && last.role == Role::Assistant
        && last
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolUse { .. }))
    {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_are_tagged() {
        let e = AgentEvent::TurnStart { turn: 1 };
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            json!({"type": "turn_start", "turn": 1})
        );
        let f = AgentEvent::Final {
            text: "x".into(),
            turns: 2,
            stop: StopKind::MaxTurns,
        };
        assert_eq!(serde_json::to_value(&f).unwrap()["stop"], "max_turns");
    }

    #[test]
    fn rebuilds_the_conversation() {
        let events: Vec<Value> = [
            AgentEvent::User { text: "hi".into() },
            AgentEvent::TurnStart { turn: 1 },
            AgentEvent::TextDelta { text: "Rea".into() },
            AgentEvent::TextDelta { text: "d".into() },
            AgentEvent::ToolCall {
                id: "t1".into(),
                skill: "core-tools".into(),
                tool: "read_file".into(),
                name: "read_file".into(),
                input: json!({"path": "a"}),
            },
            AgentEvent::ToolResult {
                id: "t1".into(),
                output: "A".into(),
                is_error: false,
            },
            AgentEvent::Usage {
                input_tokens: 1,
                output_tokens: 2,
            },
            AgentEvent::TurnStart { turn: 2 },
            AgentEvent::TextDelta {
                text: "done".into(),
            },
            AgentEvent::Final {
                text: "done".into(),
                turns: 2,
                stop: StopKind::EndTurn,
            },
        ]
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
        let h = history_from_events(&events);
        assert_eq!(h.len(), 4);
        assert_eq!(h[0], Message::user("hi"));
        assert_eq!(
            h[1].content,
            vec![
                ContentBlock::Text("Read".into()),
                ContentBlock::ToolUse {
                    id: "t1".into(),
                    name: "read_file".into(),
                    input: json!({"path": "a"})
                }
            ]
        );
        assert_eq!(h[2].role, Role::User);
        assert_eq!(h[3], Message::assistant("done"));
    }

    /// A cut-off answer that was sent again is superseded by the retry's;
    /// one that ended the run stays, marked as interrupted.
    #[test]
    fn an_interrupted_answer_is_superseded_or_marked() {
        let to_values = |evs: &[AgentEvent]| -> Vec<Value> {
            evs.iter()
                .map(|e| serde_json::to_value(e).unwrap())
                .collect()
        };
        let cut = |retrying: bool| AgentEvent::Interrupted {
            message: "cut".into(),
            attempt: 1,
            retrying,
        };
        let partial = AgentEvent::TextDelta {
            text: "The no".into(),
        };
        let retried = to_values(&[
            AgentEvent::User { text: "hi".into() },
            AgentEvent::TurnStart { turn: 1 },
            partial.clone(),
            cut(true),
            AgentEvent::TextDelta {
                text: "The notes say 42.".into(),
            },
        ]);
        assert_eq!(
            history_from_events(&retried),
            vec![Message::user("hi"), Message::assistant("The notes say 42.")]
        );
        let failed = to_values(&[
            AgentEvent::User { text: "hi".into() },
            AgentEvent::TurnStart { turn: 1 },
            partial,
            cut(false),
        ]);
        assert_eq!(
            history_from_events(&failed),
            vec![
                Message::user("hi"),
                Message::assistant("The no\n\n[interrupted: cut]")
            ]
        );
    }

    #[test]
    fn drops_unanswered_tool_calls() {
        let events: Vec<Value> = [
            AgentEvent::User { text: "hi".into() },
            AgentEvent::TurnStart { turn: 1 },
            AgentEvent::ToolCall {
                id: "t1".into(),
                skill: String::new(),
                tool: "x".into(),
                name: "x".into(),
                input: json!({}),
            },
        ]
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
        assert_eq!(history_from_events(&events), vec![Message::user("hi")]);
    }
}

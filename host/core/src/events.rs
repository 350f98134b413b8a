//! The conversation rebuilt from a session's logged events.

use agent_providers::{ContentBlock, Message, Role};
use serde_json::Value;

pub use agent_protocol::{AgentEvent, StopKind};

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

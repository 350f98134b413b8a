//! The transcript: the core's [`AgentEvent`]s folded into cells, plus what
//! the status line shows. The same events the headless JSONL carries, so the
//! two front ends cannot drift.

use agent_protocol::{AgentEvent, StopKind};
use serde_json::Value;

/// One block of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// The user's message.
    User(String),
    /// The model's text (Markdown), growing while it streams.
    Assistant(String),
    /// A tool call and, once it returned, its result.
    Tool(ToolCell),
    /// A note from the front end or the core (approvals, refusals, warnings).
    Notice(NoticeKind, String),
}

/// How a notice is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Information.
    Info,
    /// A warning.
    Warning,
    /// An error, a denial or a refusal.
    Error,
}

/// A tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCell {
    /// The call's id.
    pub id: String,
    /// The skill providing the tool (empty when unknown).
    pub skill: String,
    /// The tool.
    pub tool: String,
    /// Its input.
    pub input: Value,
    /// The result (output, is_error) once it came back.
    pub result: Option<(String, bool)>,
    /// Whether its approval was refused.
    pub refused: Option<String>,
}

/// The transcript and the run's figures.
#[derive(Debug, Clone, Default)]
pub struct Transcript {
    /// The cells, oldest first.
    pub cells: Vec<Cell>,
    /// Input tokens of the latest request: the conversation's size.
    pub context_tokens: u64,
    /// Tokens used in this session (input + output, every request).
    pub total_tokens: u64,
    /// The skills active in the latest run.
    pub active_skills: Vec<String>,
    /// Whether a turn is running.
    pub running: bool,
}

impl Transcript {
    /// Folds one event in.
    pub fn apply(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::User { text } => {
                self.running = true;
                self.active_skills.clear();
                self.cells.push(Cell::User(text.clone()));
            }
            AgentEvent::TurnStart { .. } => {}
            AgentEvent::TextDelta { text } => match self.cells.last_mut() {
                Some(Cell::Assistant(t)) => t.push_str(text),
                _ => self.cells.push(Cell::Assistant(text.clone())),
            },
            AgentEvent::ToolCall {
                id,
                skill,
                tool,
                input,
                ..
            } => self.cells.push(Cell::Tool(ToolCell {
                id: id.clone(),
                skill: skill.clone(),
                tool: tool.clone(),
                input: input.clone(),
                result: None,
                refused: None,
            })),
            AgentEvent::ToolResult {
                id,
                output,
                is_error,
            } => {
                if let Some(cell) = self.tool_mut(id) {
                    cell.result = Some((output.clone(), *is_error));
                }
            }
            AgentEvent::Approval {
                tool,
                approved: false,
                reason,
            } => {
                let found = self.cells.iter_mut().rev().find_map(|c| match c {
                    Cell::Tool(t)
                        if t.result.is_none()
                            && (t.tool == *tool || tool.ends_with(&format!("__{}", t.tool))) =>
                    {
                        Some(t)
                    }
                    _ => None,
                });
                match found {
                    Some(t) => t.refused = Some(reason.clone()),
                    None => {
                        self.notice(NoticeKind::Error, format!("{tool} not approved: {reason}"))
                    }
                }
            }
            AgentEvent::Approval { .. }
            | AgentEvent::Hook { .. }
            | AgentEvent::Transformed { .. } => {}
            AgentEvent::Denial {
                skill,
                permission,
                reason,
            } => self.notice(
                NoticeKind::Error,
                format!("denied: {skill} {permission}: {reason}"),
            ),
            AgentEvent::Usage {
                input_tokens,
                output_tokens,
            } => {
                self.context_tokens = *input_tokens;
                self.total_tokens += input_tokens + output_tokens;
            }
            AgentEvent::Context {
                trimmed_results,
                summarized_messages,
                estimated_tokens,
            } => {
                self.context_tokens = *estimated_tokens as u64;
                self.notice(
                    NoticeKind::Info,
                    format!(
                        "context fitted to the budget: {trimmed_results} tool output(s) trimmed, {summarized_messages} message(s) summarised"
                    ),
                );
            }
            AgentEvent::Activated { skill, .. } => {
                if !self.active_skills.contains(skill) {
                    self.active_skills.push(skill.clone());
                }
            }
            AgentEvent::Refused {
                tool, by, reason, ..
            } => {
                self.notice(
                    NoticeKind::Error,
                    format!("refused {tool} ({by}): {reason}"),
                );
            }
            AgentEvent::Warning { message } => self.notice(NoticeKind::Warning, message.clone()),
            AgentEvent::Interrupted {
                message,
                attempt,
                retrying,
            } => {
                // A notice cell ends the partial answer: a retry's text
                // starts a cell of its own.
                let what = if *retrying {
                    format!("{message}; sending the request again (attempt {attempt} broke off)")
                } else {
                    format!("{message}; the partial answer above is kept, marked as interrupted")
                };
                self.notice(NoticeKind::Warning, what);
            }
            AgentEvent::Error { message } => {
                self.running = false;
                self.notice(NoticeKind::Error, message.clone());
            }
            AgentEvent::Final { text, stop, turns } => {
                self.running = false;
                // A rewritten or transformed answer replaces the streamed one.
                if let Some(Cell::Assistant(t)) = self.cells.last_mut() {
                    if !text.is_empty() && t != text {
                        *t = text.clone();
                    }
                } else if !text.is_empty() && !self.answered_since_user(text) {
                    self.cells.push(Cell::Assistant(text.clone()));
                }
                match stop {
                    StopKind::EndTurn => {}
                    StopKind::MaxTurns => self.notice(
                        NoticeKind::Warning,
                        format!("stopped at the turn limit ({turns} turns)"),
                    ),
                    StopKind::Timeout => {
                        self.notice(NoticeKind::Warning, "stopped at the time limit".into())
                    }
                    StopKind::Cancelled => self.notice(NoticeKind::Warning, "cancelled".into()),
                }
            }
        }
    }

    fn answered_since_user(&self, text: &str) -> bool {
        self.cells
            .iter()
            .rev()
            .take_while(|c| !matches!(c, Cell::User(_)))
            .any(|c| matches!(c, Cell::Assistant(t) if t == text))
    }

    fn tool_mut(&mut self, id: &str) -> Option<&mut ToolCell> {
        self.cells.iter_mut().rev().find_map(|c| match c {
            Cell::Tool(t) if t.id == id => Some(t),
            _ => None,
        })
    }

    /// Adds a notice.
    pub fn notice(&mut self, kind: NoticeKind, text: String) {
        self.cells.push(Cell::Notice(kind, text));
    }
}

/// A short one-line summary of a tool's input: its `path`, `program` or
/// `pattern` when it has one, else compact JSON.
pub fn input_summary(input: &Value) -> String {
    if let Some(p) = input.get("program").and_then(Value::as_str) {
        let args: Vec<&str> = input
            .get("args")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        return std::iter::once(p).chain(args).collect::<Vec<_>>().join(" ");
    }
    for key in ["path", "pattern", "query", "url"] {
        if let Some(v) = input.get(key).and_then(Value::as_str) {
            return v.to_string();
        }
    }
    input.to_string()
}

/// A summary of a tool's output: its first line and how many more there are.
pub fn result_summary(output: &str) -> String {
    let mut lines = output.lines();
    let first = lines.next().unwrap_or("").trim();
    let more = lines.count();
    let first: String = first.chars().take(100).collect();
    match more {
        0 if first.is_empty() => "(no output)".to_string(),
        0 => first,
        n => format!("{first} (+{n} more line{})", if n == 1 { "" } else { "s" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_fold_into_cells_and_figures() {
        let mut t = Transcript::default();
        for e in [
            AgentEvent::User { text: "hi".into() },
            AgentEvent::Activated {
                skill: "core-tools".into(),
                reason: "no triggers".into(),
            },
            AgentEvent::TextDelta { text: "Rea".into() },
            AgentEvent::TextDelta {
                text: "ding".into(),
            },
            AgentEvent::ToolCall {
                id: "1".into(),
                skill: "core-tools".into(),
                tool: "read_file".into(),
                name: "read_file".into(),
                input: json!({"path": "a"}),
            },
            AgentEvent::ToolResult {
                id: "1".into(),
                output: "x\ny".into(),
                is_error: false,
            },
            AgentEvent::Usage {
                input_tokens: 100,
                output_tokens: 20,
            },
            AgentEvent::Final {
                text: "Reading".into(),
                turns: 1,
                stop: StopKind::EndTurn,
            },
        ] {
            t.apply(&e);
        }
        assert_eq!(t.cells.len(), 3);
        assert_eq!(t.cells[1], Cell::Assistant("Reading".into()));
        assert!(matches!(&t.cells[2], Cell::Tool(c) if c.result == Some(("x\ny".into(), false))));
        assert_eq!((t.context_tokens, t.total_tokens), (100, 120));
        assert_eq!(t.active_skills, vec!["core-tools"]);
        assert!(!t.running);
        assert_eq!(result_summary("x\ny"), "x (+1 more line)");
    }
}

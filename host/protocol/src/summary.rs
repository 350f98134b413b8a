//! What a finished turn did, for the headless renderers' final output
//! (`agent run --output json|markdown`, the summary lines on stderr).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// The account of a turn that ran to its end (a stop reason, not an error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnSummary {
    /// The final answer (the last assistant text, after hooks and transforms).
    pub text: String,
    /// Model turns taken.
    pub turns: u32,
    /// Input tokens, summed over the turn (skills' model requests included).
    pub input_tokens: u64,
    /// Output tokens, summed likewise.
    pub output_tokens: u64,
    /// Every tool call.
    pub tool_calls: Vec<ToolCallRow>,
    /// Every capability refused during the turn.
    pub denials: Vec<DenialRow>,
    /// Problems that did not stop the turn (session log, hooks, transforms).
    pub warnings: Vec<String>,
    /// Each skill's model requests, programs and HTTP requests.
    pub skill_uses: Vec<SkillUseRow>,
    /// Tool calls whose arguments were not JSON (answered with an error).
    pub invalid_tool_calls: u32,
    /// Tool calls over the per-turn cap (answered "not run").
    pub skipped_tool_calls: u32,
    /// Answers that broke off mid-stream.
    pub interrupted_streams: u32,
    /// The turn limit in effect (after the skills' constraints).
    pub max_turns: u32,
    /// The time limit in effect (after the skills' constraints).
    pub timeout: Duration,
}

/// One tool call of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRow {
    /// The call's id.
    pub id: String,
    /// The skill (empty for an unknown tool).
    pub skill: String,
    /// The tool name as the model used it.
    pub tool: String,
    /// The input.
    pub input: serde_json::Value,
    /// The output or error text.
    pub output: String,
    /// Whether it failed.
    pub is_error: bool,
}

/// A capability refused during a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DenialRow {
    /// The skill refused.
    pub skill: String,
    /// The permission.
    pub permission: String,
    /// Why.
    pub reason: String,
}

/// What one skill used (and was refused) during a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillUseRow {
    /// The skill.
    pub skill: String,
    /// Model requests made.
    pub llm: u32,
    /// Programs run.
    pub exec: u32,
    /// HTTP requests made.
    pub http: u32,
    /// Uses refused because a budget was spent.
    pub refused: u32,
    /// The line `agent run` prints for it (`name: 1 model requests, …`).
    pub summary: String,
}

/// Where a turn failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnFailure {
    /// Before the model was asked: the session record, the skills' setup.
    Setup,
    /// The tool filter named a tool no active skill offers.
    ToolFilter,
    /// The model could not be reached or answered with an error.
    Model,
}

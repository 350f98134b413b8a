//! The events of a run, as the agent core emits them and the session log
//! stores them (one JSON object per event, tagged by `type`).

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
    /// The run was cancelled through cancellation (`Op::Interrupt`, or the run's cancellation token).
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

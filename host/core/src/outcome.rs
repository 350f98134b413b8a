//! What a run is given and what it gives back: its limits and options, the
//! outcome with every tool call and denial, and why a run failed.

use std::time::Duration;

use agent_providers::{ProviderError, RetryPolicy};
use agent_runtime::SkillUses;
use serde_json::Value;

use crate::{DEFAULT_CONTEXT_BUDGET, StopKind};

/// Limits of one run.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    /// The most model turns.
    pub max_turns: u32,
    /// Wall-clock time for the whole run.
    pub timeout: Duration,
}

impl Default for RunLimits {
    /// The configuration's defaults: 50 turns, 10 minutes.
    fn default() -> Self {
        RunLimits {
            max_turns: 50,
            timeout: Duration::from_secs(600),
        }
    }
}

/// Options of one run beyond its [`RunLimits`].
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// The token budget of the conversation sent to the model, as estimated
    /// by [`crate::context::estimate_tokens`]; larger conversations are trimmed and
    /// summarised before the request.
    pub context_budget: usize,
    /// The most tool calls run for one answer; the rest are answered "not
    /// run" (config `agent.max_tool_calls_per_turn`).
    pub max_tool_calls_per_turn: usize,
    /// How many tool calls in a row may have arguments that are not JSON
    /// before the run stops with [`AgentError::InvalidToolCalls`] (config
    /// `agent.max_invalid_tool_calls`).
    pub max_invalid_tool_calls: u32,
    /// How an answer that broke off mid-stream is sent again: the same
    /// policy as the provider's for a 5xx.
    pub stream_retry: RetryPolicy,
}

/// The default [`RunOptions::max_tool_calls_per_turn`].
pub const DEFAULT_MAX_TOOL_CALLS_PER_TURN: usize = 32;

/// The default [`RunOptions::max_invalid_tool_calls`].
pub const DEFAULT_MAX_INVALID_TOOL_CALLS: u32 = 5;

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            context_budget: DEFAULT_CONTEXT_BUDGET,
            max_tool_calls_per_turn: DEFAULT_MAX_TOOL_CALLS_PER_TURN,
            max_invalid_tool_calls: DEFAULT_MAX_INVALID_TOOL_CALLS,
            stream_retry: RetryPolicy::default(),
        }
    }
}

/// One tool call made during a run, for summaries.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ToolCallRecord {
    /// The call's id.
    pub id: String,
    /// The skill (empty for an unknown tool).
    pub skill: String,
    /// The tool name as the model used it.
    pub tool: String,
    /// The input.
    pub input: Value,
    /// The output or error text.
    pub output: String,
    /// Whether it failed.
    pub is_error: bool,
}

/// A capability refused during a run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DenialRecord {
    /// The skill refused.
    pub skill: String,
    /// The permission.
    pub permission: String,
    /// Why.
    pub reason: String,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The final answer (the last assistant text, after hooks and
    /// transforms).
    pub text: String,
    /// Turns taken in this run.
    pub turns: u32,
    /// Why it stopped.
    pub stop: StopKind,
    /// Token usage summed over the run (skills' model requests included).
    pub input_tokens: u64,
    /// Output tokens summed over the run.
    pub output_tokens: u64,
    /// Every tool call.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Every denial.
    pub denials: Vec<DenialRecord>,
    /// Problems that did not stop the run (session log, hooks, transforms).
    pub warnings: Vec<String>,
    /// Each skill's model requests, programs and HTTP requests in this run,
    /// and the uses refused because a budget was spent.
    pub skill_uses: Vec<SkillUses>,
    /// Tool calls whose arguments were not JSON (answered with an error).
    pub invalid_tool_calls: u32,
    /// Tool calls beyond `max_tool_calls_per_turn` (answered "not run").
    pub skipped_tool_calls: u32,
    /// Answers that broke off mid-stream (each was sent again, or ended
    /// the run).
    pub interrupted_streams: u32,
}

impl RunOutcome {
    /// Nothing done yet.
    pub(crate) fn empty() -> RunOutcome {
        RunOutcome {
            text: String::new(),
            turns: 0,
            stop: StopKind::EndTurn,
            input_tokens: 0,
            output_tokens: 0,
            tool_calls: Vec::new(),
            denials: Vec::new(),
            warnings: Vec::new(),
            skill_uses: Vec::new(),
            invalid_tool_calls: 0,
            skipped_tool_calls: 0,
            interrupted_streams: 0,
        }
    }
}

/// Why a run failed.
#[derive(Debug)]
pub enum AgentError {
    /// The model provider failed.
    Provider(ProviderError),
    /// The model's answer broke off mid-stream on every attempt.
    Interrupted {
        /// The last attempt's error.
        error: ProviderError,
        /// How many requests were sent.
        attempts: u32,
    },
    /// The model sent too many tool calls in a row whose arguments were
    /// not JSON.
    InvalidToolCalls {
        /// How many in a row.
        count: u32,
        /// The last parse error.
        last: String,
    },
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::Provider(e) => write!(f, "provider error: {e}"),
            AgentError::Interrupted { error, attempts } => write!(
                f,
                "provider error: {error} (on all {attempts} attempts; the text streamed so far is kept in the session, marked as interrupted)"
            ),
            AgentError::InvalidToolCalls { count, last } => write!(
                f,
                "the model sent {count} tool calls in a row whose arguments are not JSON (the last: {last}); stopped. \
                 A larger model may do better; the limit is `agent.max_invalid_tool_calls`"
            ),
        }
    }
}

impl std::error::Error for AgentError {}

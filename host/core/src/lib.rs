//! `agent-core`: the Plan → Act → Observe loop.
//!
//! An [`Agent`] sends the conversation to a model
//! [`Provider`](agent_providers::Provider), runs the tool calls it asks for
//! through the skill [`Runtime`](agent_runtime::Runtime), feeds the results back,
//! and repeats until the model ends its turn, the turn limit is reached or
//! the wall-clock deadline passes. Skills take part through [`setup()`]:
//! which are active ([`activation`]), their tools and workflows, their prompt
//! fragments ([`prompt`]), their hooks ([`hooks`]), transforms and merged
//! constraints. Everything that happens is reported as an [`AgentEvent`],
//! handed to the caller as it happens and appended to the session log when a
//! [`SessionLog`] is given; [`history_from_events`] rebuilds the
//! conversation from such a log to resume it.
//!
//! Where things are: [`agent`] (the [`Agent`] and its builder), `run` (the
//! turn loop, one method per step), `calls` (the tool calls of one answer),
//! [`router`] (the one tool router, for the model's calls and
//! `skills.invoke`), `turn` (a misbehaving model: retries, malformed and
//! surplus calls), `session_log` (events persisted), `outcome` (what a run
//! gives back), `tools` (the tools offered), [`host_tool`] (tools the host
//! provides itself, routed like the components'), `hook_calls` (hooks as the loop
//! and the router call them), `services` (what the agent lends to skills).
#![deny(missing_docs)]

pub mod activation;
pub mod agent;
mod calls;
pub mod context;
mod events;
mod hook_calls;
pub mod hooks;
pub mod host_tool;
mod outcome;
pub mod preview;
pub mod prompt;
pub mod router;
mod run;
mod services;
pub mod session;
mod session_log;
pub mod setup;
mod tools;
mod turn;

pub use agent::{Agent, AgentBuilder};
pub use context::DEFAULT_CONTEXT_BUDGET;
pub use events::{AgentEvent, StopKind, history_from_events};
pub use hooks::HookSet;
pub use host_tool::{
    FixedTools, ForkTask, Forker, HostFuture, HostOffer, HostTool, HostToolSource,
};
pub use outcome::{
    AgentError, DEFAULT_MAX_INVALID_TOOL_CALLS, DEFAULT_MAX_TOOL_CALLS_PER_TURN, DenialRecord,
    RunLimits, RunOptions, RunOutcome, ToolCallRecord,
};
pub use prompt::{BASE_INSTRUCTIONS, system_prompt};
pub use router::{ApprovalGate, requires_approval};
pub use services::{Invoker, ProviderLlm, SkillUsage};
pub use session::{Session, SessionOptions, SessionParts};
pub use session_log::SessionLog;
pub use setup::{Setup, SetupInput, setup};
pub use tools::{AgentTool, add_host_tools, collect_tools};

#[cfg(test)]
mod run_tests;

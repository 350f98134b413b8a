//! `agent-core`: the Plan → Act → Observe loop.
//!
//! An [`Agent`] sends the conversation to a model [`Provider`], runs the tool
//! calls it asks for through the skill [`Runtime`], feeds the results back,
//! and repeats until the model ends its turn, the turn limit is reached or
//! the wall-clock deadline passes. Skills take part through [`setup()`]:
//! which are active ([`activation`]), their tools and workflows, their prompt
//! fragments ([`prompt`]), their hooks ([`hooks`]), transforms and merged
//! constraints. Everything that happens is reported as an [`AgentEvent`],
//! handed to the caller as it happens and appended to the session log when a
//! [`SessionLog`] is given; [`history_from_events`] rebuilds the
//! conversation from such a log to resume it.
#![deny(missing_docs)]

pub mod activation;
pub mod context;
mod events;
pub mod hooks;
pub mod preview;
pub mod prompt;
mod services;
pub mod session;
pub mod setup;
mod turn;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agent_policy::Merged;
use agent_providers::{
    CancellationToken, ContentBlock, Message, Provider, ProviderError, Request, RetryPolicy, Role,
    ToolDef,
};
use agent_runtime::inspect::ExportKind;
use agent_runtime::{
    CallContext, GrantsAuthorizer, HookEvent, HookPhase, Runtime, Skill, SkillError, SkillUses,
    ToolSpec, TransformContext, WitMessage, WitRole, WitToolCall, WitToolResult,
};
use agent_store::{SessionStatus, Store};
use serde_json::Value;

pub use context::DEFAULT_CONTEXT_BUDGET;
pub use events::{AgentEvent, StopKind, history_from_events};
pub use hooks::HookSet;
pub use prompt::{BASE_INSTRUCTIONS, system_prompt};
pub use services::{Invoker, ProviderLlm, SkillUsage};
pub use session::{Session, SessionOptions, SessionParts};
pub use setup::{Setup, SetupInput, setup};

/// Decides whether a tool whose spec has `requires_approval` may run.
pub trait ApprovalGate: Send + Sync {
    /// Whether `skill`'s `tool` may run with `input_json`. Must not block on
    /// user input in headless runs.
    fn approve_tool(&self, skill: &str, tool: &str, input_json: &str) -> bool;

    /// Why a tool was not approved, in the words of the interface that
    /// decided (the user's next step there); shown after "not approved: ".
    fn refusal(&self) -> String;
}

/// A tool offered to the model: a tool of a tool skill, or a workflow of a
/// workflow skill.
#[derive(Debug, Clone)]
pub struct AgentTool {
    /// The name the model sees: the tool's name, or `<skill>__<tool>` when
    /// two skills offer the same name.
    pub name: String,
    /// Index of the skill in the slice given to the agent.
    pub skill: usize,
    /// The skill's name.
    pub skill_name: String,
    /// The tool's spec (for a workflow: its name, description and schema).
    pub spec: ToolSpec,
    /// Whether this is a workflow (run with `run-workflow`).
    pub workflow: bool,
}

/// Lists the tools of the `active` tool skills and the workflows of the
/// active workflow skills, naming them for the model.
///
/// # Errors
/// When a skill's tools or workflows cannot be listed.
pub async fn collect_tools(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
    active: &[usize],
) -> anyhow::Result<Vec<AgentTool>> {
    let mut raw = Vec::new();
    for &i in active {
        let Some(skill) = skills.get(i) else { continue };
        if skill.exports(ExportKind::Tool) {
            let specs = runtime
                .list_tools(skill, ctx)
                .await
                .map_err(|e| anyhow::anyhow!("listing the tools of `{}`: {e}", skill.name()))?;
            for spec in specs {
                raw.push((i, skill.name().to_string(), spec, false));
            }
        }
        if skill.exports(ExportKind::Workflow) {
            let specs = runtime
                .list_workflows(skill, ctx)
                .await
                .map_err(|e| anyhow::anyhow!("listing the workflows of `{}`: {e}", skill.name()))?;
            for w in specs {
                let spec = ToolSpec {
                    name: w.name,
                    description: w.description,
                    input_schema: w.input_schema,
                    requires_approval: false,
                };
                raw.push((i, skill.name().to_string(), spec, true));
            }
        }
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (_, _, spec, _) in &raw {
        *counts.entry(spec.name.clone()).or_default() += 1;
    }
    Ok(raw
        .into_iter()
        .map(|(skill, skill_name, spec, workflow)| {
            let name = if counts.get(&spec.name).copied().unwrap_or(0) > 1 {
                format!("{skill_name}__{}", spec.name)
            } else {
                spec.name.clone()
            };
            AgentTool {
                name,
                skill,
                skill_name,
                spec,
                workflow,
            }
        })
        .collect())
}

/// Limits of one run.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    /// The most model turns.
    pub max_turns: u32,
    /// Wall-clock time for the whole run.
    pub timeout: Duration,
}

/// Options of one run beyond its [`RunLimits`].
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// The token budget of the conversation sent to the model, as estimated
    /// by [`context::estimate_tokens`]; larger conversations are trimmed and
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

/// The run's deadline passed while summarising the conversation.
struct ContextTimeout;

/// Where events are persisted: a session of the store.
#[derive(Clone)]
pub struct SessionLog {
    /// The store.
    pub store: Arc<Store>,
    /// The session id.
    pub id: String,
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

/// Everything one run needs.
pub struct Agent<'a> {
    /// The model provider.
    pub provider: Arc<dyn Provider>,
    /// The model name (empty: the provider's configured model).
    pub model: String,
    /// The skill runtime.
    pub runtime: &'a Runtime,
    /// The call context for tool calls.
    pub ctx: Arc<CallContext>,
    /// The loaded skills.
    pub skills: &'a [Skill],
    /// The tools offered (see [`collect_tools`]).
    pub tools: Vec<AgentTool>,
    /// Only these tool names may be offered and run (`None`: all).
    pub allowlist: Option<Vec<String>>,
    /// The grants, to report denials.
    pub grants: Option<Arc<GrantsAuthorizer>>,
    /// Decides tools that require approval.
    pub gate: &'a dyn ApprovalGate,
    /// The system prompt.
    pub system: String,
    /// Limits.
    pub limits: RunLimits,
    /// `max_tokens` per request.
    pub max_tokens: u32,
    /// The active skills and why, reported at the start of the run.
    pub activated: Vec<(String, String)>,
    /// The active skills' hooks.
    pub hooks: HookSet,
    /// The active transform skills, applied in this order to the final
    /// output.
    pub transforms: Vec<usize>,
    /// The active skills' merged constraints.
    pub constraints: Option<Arc<Merged>>,
    /// The mode, for transforms (`headless`, `interactive`...).
    pub mode: String,
    /// The output format, for transforms (`text`, `markdown`, `json`...).
    pub format: String,
    /// Usage of skills' own model requests, added to the run's.
    pub skill_usage: Option<Arc<SkillUsage>>,
    /// Cancels the run from outside (the TUI's Esc): the model request in
    /// flight is aborted, tool calls not yet started are not run, and the
    /// run ends with [`StopKind::Cancelled`]. `None`: not cancellable.
    pub cancel: Option<CancellationToken>,
}

impl<'a> Agent<'a> {
    /// An agent with no skills in the loop beyond `tools`: no hooks,
    /// transforms or constraints, mode `headless`, format `text`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        provider: Arc<dyn Provider>,
        model: &str,
        runtime: &'a Runtime,
        ctx: Arc<CallContext>,
        skills: &'a [Skill],
        gate: &'a dyn ApprovalGate,
        system: String,
        limits: RunLimits,
    ) -> Agent<'a> {
        Agent {
            provider,
            model: model.to_string(),
            runtime,
            ctx,
            skills,
            tools: Vec::new(),
            allowlist: None,
            grants: None,
            gate,
            system,
            limits,
            max_tokens: 4096,
            activated: Vec::new(),
            hooks: HookSet::default(),
            transforms: Vec::new(),
            constraints: None,
            mode: "headless".to_string(),
            format: "text".to_string(),
            skill_usage: None,
            cancel: None,
        }
    }

    /// Takes the skills' part from a [`Setup`]: tools, hooks, transforms,
    /// constraints, the system prompt and the activation report.
    pub fn with_setup(mut self, setup: Setup) -> Agent<'a> {
        self.tools = setup.tools;
        self.hooks = setup.hooks;
        self.transforms = setup.transforms;
        self.constraints = Some(setup.constraints);
        self.system = setup.system;
        self.activated = setup.activation.reasons;
        self
    }

    /// Whether hooks or transforms may rewrite the model's text: then text
    /// deltas are not streamed as they arrive, and each response's final
    /// text is reported once, after the rewrite.
    pub fn rewrites_output(&self) -> bool {
        !self.transforms.is_empty() || self.hooks.listens(HookPhase::OnAfterResponse)
    }
}

/// Persists a run's events on a thread of its own, so that the loop never
/// waits for the disk: whatever has queued up since the last write goes
/// into the next transaction (group commit). Each event is on disk a few
/// milliseconds after it happened; [`SessionWriter::finish`] waits for the
/// rest.
struct SessionWriter {
    queue: Option<std::sync::mpsc::Sender<Value>>,
    thread: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl SessionWriter {
    fn start(log: SessionLog) -> SessionWriter {
        let (tx, rx) = std::sync::mpsc::channel::<Value>();
        let thread = std::thread::Builder::new()
            .name("agent-session-log".into())
            .spawn(move || {
                let mut errors = Vec::new();
                while let Ok(first) = rx.recv() {
                    let mut batch = vec![first];
                    batch.extend(rx.try_iter());
                    if let Err(e) = log.store.append_events(&log.id, &batch)
                        && errors.len() < 5
                    {
                        errors.push(format!("could not write the session log: {e}"));
                    }
                }
                errors
            });
        match thread {
            Ok(t) => SessionWriter {
                queue: Some(tx),
                thread: Some(t),
            },
            Err(_) => SessionWriter {
                queue: None,
                thread: None,
            },
        }
    }

    fn send(&self, event: &AgentEvent) -> Result<(), String> {
        let queue = self
            .queue
            .as_ref()
            .ok_or("the session log writer could not be started")?;
        let v = serde_json::to_value(event).map_err(|e| e.to_string())?;
        queue
            .send(v)
            .map_err(|_| "the session log writer stopped".to_string())
    }

    /// Writes what is queued and stops; returns the write errors.
    fn finish(&mut self) -> Vec<String> {
        self.queue.take();
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| vec!["the session log writer crashed".to_string()]),
            None => Vec::new(),
        }
    }
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        self.finish();
    }
}

struct Emitter<'s> {
    writer: Option<SessionWriter>,
    sink: &'s mut (dyn FnMut(&AgentEvent) + Send),
    warnings: Vec<String>,
}

impl Emitter<'_> {
    fn emit(&mut self, event: AgentEvent) {
        if let Some(w) = &self.writer
            && let Err(e) = w.send(&event)
            && self.warnings.len() < 5
        {
            self.warnings
                .push(format!("could not write the session log: {e}"));
        }
        (self.sink)(&event);
    }

    /// Waits until every event emitted so far is on disk.
    fn flush(&mut self) {
        if let Some(mut w) = self.writer.take() {
            let errors = w.finish();
            self.warnings.extend(errors);
        }
    }

    /// A problem that does not stop the run: an event and a warning.
    fn warn(&mut self, message: String) {
        self.emit(AgentEvent::Warning {
            message: message.clone(),
        });
        if self.warnings.len() < 50 {
            self.warnings.push(message);
        }
    }
}

fn skill_error_text(e: &SkillError) -> String {
    match e {
        SkillError::InvalidInput(m) => format!("invalid input: {m}"),
        SkillError::NotFound(m) => format!("not found: {m}"),
        SkillError::Denied(m) => format!("denied: {m}"),
        SkillError::Failed(m) => format!("failed: {m}"),
    }
}

/// The conversation as hooks see it: text per message, tool results as
/// `tool` messages.
fn wit_conversation(messages: &[Message]) -> Vec<WitMessage> {
    let mut out = Vec::with_capacity(messages.len());
    for m in messages {
        let mut text = String::new();
        let mut results = Vec::new();
        for b in &m.content {
            match b {
                ContentBlock::Text(t) => text.push_str(t),
                ContentBlock::ToolUse { name, input, .. } => {
                    if !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&format!("[tool call {name} {input}]"));
                }
                ContentBlock::ToolResult { content, .. } => results.push(content.clone()),
            }
        }
        if !text.is_empty() {
            out.push(WitMessage {
                role: match m.role {
                    Role::User => WitRole::User,
                    Role::Assistant => WitRole::Assistant,
                },
                content: text,
            });
        }
        for r in results {
            out.push(WitMessage {
                role: WitRole::Tool,
                content: r,
            });
        }
    }
    out
}

fn hook_event(phase: HookPhase, skill: &str, messages: &[Message]) -> HookEvent {
    HookEvent {
        phase,
        skill: skill.to_string(),
        conversation: wit_conversation(messages),
        tool_call: None,
        tool_result: None,
        response: None,
        findings: Vec::new(),
    }
}

/// The outcome of one tool call, as the loop records it.
struct CallResult {
    output: String,
    is_error: bool,
    skill: String,
}

impl CallResult {
    fn error(output: String, skill: &str) -> CallResult {
        CallResult {
            output,
            is_error: true,
            skill: skill.to_string(),
        }
    }
}

impl Agent<'_> {
    fn permitted(&self, t: &AgentTool) -> bool {
        let listed = self
            .allowlist
            .as_ref()
            .is_none_or(|a| a.iter().any(|n| n == &t.name || n == &t.spec.name));
        listed && self.constraint_refusal(t).is_none()
    }

    /// Why the merged skill constraints refuse `t`, if they do.
    fn constraint_refusal(&self, t: &AgentTool) -> Option<String> {
        let c = self.constraints.as_ref()?;
        c.check_tool(&t.spec.name)
            .and_then(|()| {
                if t.name == t.spec.name {
                    Ok(())
                } else {
                    c.check_tool(&t.name)
                }
            })
            .err()
    }

    fn offered(&self) -> Vec<&AgentTool> {
        self.tools.iter().filter(|t| self.permitted(t)).collect()
    }

    /// The turn and time limits after the skills' constraints (a skill's
    /// `max_steps` / `max_duration` lower [`Agent::limits`]).
    pub fn effective_limits(&self) -> RunLimits {
        let mut l = self.limits;
        if let Some(c) = &self.constraints {
            if let Some(s) = c.max_steps() {
                l.max_turns = l.max_turns.min(s.value);
            }
            if let Some(d) = c.max_duration() {
                l.timeout = l.timeout.min(d.value);
            }
        }
        l
    }

    /// Runs the loop: `history` (earlier messages, for a resumed session)
    /// plus `prompt`, until the model ends its turn or a limit is reached.
    /// Events go to `sink` and, when given, to `session`, whose meta (turns,
    /// usage, status) is updated at the end.
    ///
    /// # Errors
    /// [`AgentError::Provider`] when the model cannot be reached or answers
    /// with an error (the session is marked failed).
    pub async fn run(
        &self,
        history: Vec<Message>,
        prompt: &str,
        session: Option<SessionLog>,
        sink: &mut (dyn FnMut(&AgentEvent) + Send),
    ) -> Result<RunOutcome, AgentError> {
        let options = RunOptions::default();
        self.run_with(history, prompt, session, sink, options).await
    }

    /// Dispatches `event` to the hooks, reporting changes and problems.
    async fn dispatch(&self, event: HookEvent, em: &mut Emitter<'_>) -> hooks::HookOutcome {
        let outcome = self
            .hooks
            .dispatch(self.runtime, &self.ctx, self.skills, event)
            .await;
        for c in &outcome.changes {
            em.emit(AgentEvent::Hook {
                skill: c.skill.clone(),
                phase: hooks::phase_name(c.phase).to_string(),
                change: c.what.clone(),
            });
        }
        for e in &outcome.errors {
            em.warn(format!("hook: {e}"));
        }
        outcome
    }

    /// Dispatches a phase that concerns each active skill in turn
    /// (activation, deactivation).
    async fn dispatch_each(&self, phase: HookPhase, messages: &[Message], em: &mut Emitter<'_>) {
        if !self.hooks.listens(phase) {
            return;
        }
        for (skill, _) in &self.activated {
            self.dispatch(hook_event(phase, skill, messages), em).await;
        }
    }

    /// Like [`Agent::run`], with explicit [`RunOptions`]. Before each
    /// request, when the conversation's estimated size exceeds
    /// `options.context_budget`, old tool outputs are trimmed and then, if
    /// still needed, the oldest part is summarised by the model (see
    /// [`context`]); an [`AgentEvent::Context`] reports it.
    ///
    /// # Errors
    /// As [`Agent::run`].
    pub async fn run_with(
        &self,
        history: Vec<Message>,
        prompt: &str,
        session: Option<SessionLog>,
        sink: &mut (dyn FnMut(&AgentEvent) + Send),
        options: RunOptions,
    ) -> Result<RunOutcome, AgentError> {
        let limits = self.effective_limits();
        let deadline = tokio::time::Instant::now() + limits.timeout;
        let mut em = Emitter {
            writer: session.clone().map(SessionWriter::start),
            sink,
            warnings: Vec::new(),
        };
        let mut out = RunOutcome {
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
        };
        let mut invalid_in_a_row = 0u32;
        let uses_before = self.ctx.budget.totals();
        let mut seen_denials = self
            .grants
            .as_ref()
            .map(|g| g.grants().denials().len())
            .unwrap_or(0);
        let usage_before = self.skill_usage.as_ref().map(|u| {
            (
                u.input_tokens.load(std::sync::atomic::Ordering::Relaxed),
                u.output_tokens.load(std::sync::atomic::Ordering::Relaxed),
            )
        });
        let fresh = history.is_empty();
        let mut messages = history;
        messages.push(Message::user(prompt));
        em.emit(AgentEvent::User {
            text: prompt.to_string(),
        });
        for (skill, reason) in &self.activated {
            em.emit(AgentEvent::Activated {
                skill: skill.clone(),
                reason: reason.clone(),
            });
        }
        self.dispatch_each(HookPhase::OnActivate, &messages, &mut em)
            .await;
        if fresh && self.hooks.listens(HookPhase::OnConversationStart) {
            self.dispatch(
                hook_event(HookPhase::OnConversationStart, "", &messages),
                &mut em,
            )
            .await;
        }
        let mut system = self.system.clone();
        if self.hooks.listens(HookPhase::OnBeforePromptBuild) {
            let o = self
                .dispatch(
                    hook_event(HookPhase::OnBeforePromptBuild, "", &messages),
                    &mut em,
                )
                .await;
            for (_, text) in &o.injected {
                system.push_str("\n\n");
                system.push_str(text.trim_end());
            }
        }
        let rewrites = self.rewrites_output();
        let offered = self.offered();
        let tool_defs: Vec<ToolDef> = offered
            .iter()
            .map(|t| ToolDef {
                name: t.name.clone(),
                description: t.spec.description.clone(),
                input_schema: agent_bounded::parse_json(
                    &t.spec.input_schema,
                    "input schema",
                    agent_bounded::Limits::MESSAGE,
                )
                .unwrap_or_else(|_| serde_json::json!({"type": "object"})),
            })
            .collect();
        let cancel = self.cancel.clone().unwrap_or_default();
        let result = loop {
            if cancel.is_cancelled() {
                out.stop = StopKind::Cancelled;
                break Ok(());
            }
            if out.turns >= limits.max_turns {
                out.stop = StopKind::MaxTurns;
                break Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                out.stop = StopKind::Timeout;
                break Ok(());
            }
            out.turns += 1;
            self.ctx.budget.start_turn();
            em.emit(AgentEvent::TurnStart { turn: out.turns });
            match self
                .fit_context(
                    &mut messages,
                    options.context_budget,
                    deadline,
                    &cancel,
                    &mut out,
                )
                .await
            {
                Ok((event, failed)) => {
                    if let Some(event) = event {
                        em.emit(event);
                    }
                    if let Some(e) = failed
                        && em.warnings.len() < 5
                    {
                        em.warnings
                            .push(format!("could not summarise the conversation: {e}"));
                    }
                }
                Err(ContextTimeout) => {
                    cancel.cancel();
                    out.stop = StopKind::Timeout;
                    break Ok(());
                }
            }
            let req = Request {
                model: self.model.clone(),
                system: Some(system.clone()),
                messages: messages.clone(),
                tools: tool_defs.clone(),
                max_tokens: self.max_tokens,
                temperature: None,
            };
            let streamed = self
                .stream_turn(
                    &req,
                    &cancel,
                    deadline,
                    options.stream_retry,
                    &mut em,
                    &mut out,
                )
                .await;
            let mut completion = match streamed {
                turn::Streamed::Done(c) => c,
                turn::Streamed::Timeout => {
                    out.stop = StopKind::Timeout;
                    break Ok(());
                }
                turn::Streamed::Cancelled => {
                    out.stop = StopKind::Cancelled;
                    break Ok(());
                }
                turn::Streamed::Failed {
                    error: error @ ProviderError::Interrupted { .. },
                    attempts,
                } => break Err(AgentError::Interrupted { error, attempts }),
                turn::Streamed::Failed { error, .. } => break Err(AgentError::Provider(error)),
            };
            out.input_tokens += completion.usage.input_tokens;
            out.output_tokens += completion.usage.output_tokens;
            em.emit(AgentEvent::Usage {
                input_tokens: completion.usage.input_tokens,
                output_tokens: completion.usage.output_tokens,
            });
            let mut text = completion.message.text();
            if !text.is_empty() && self.hooks.listens(HookPhase::OnAfterResponse) {
                let mut event = hook_event(HookPhase::OnAfterResponse, "", &messages);
                event.response = Some(text.clone());
                if let Some(changed) = self.dispatch(event, &mut em).await.response {
                    text = changed;
                    replace_text(&mut completion.message, &text);
                }
            }
            if rewrites && !text.is_empty() {
                em.emit(AgentEvent::TextDelta { text: text.clone() });
            }
            if !text.is_empty() {
                out.text = text;
            }
            let calls: Vec<(String, String, Value)> = completion
                .message
                .content
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::ToolUse { id, name, input } => {
                        Some((id.clone(), name.clone(), input.clone()))
                    }
                    _ => None,
                })
                .collect();
            messages.push(Message {
                role: Role::Assistant,
                content: completion.message.content.clone(),
            });
            if calls.is_empty() {
                out.stop = StopKind::EndTurn;
                break Ok(());
            }
            let plans = turn::plan_calls(
                &calls,
                &completion.invalid_inputs,
                options.max_tool_calls_per_turn,
            );
            if calls.len() > options.max_tool_calls_per_turn {
                em.warn(turn::over_cap_warning(
                    calls.len(),
                    options.max_tool_calls_per_turn,
                ));
            }
            let mut results = Vec::new();
            let mut timed_out = false;
            let mut last_invalid = String::new();
            for ((id, name, input), plan) in calls.into_iter().zip(plans) {
                let refused = match plan {
                    turn::Plan::Run => None,
                    turn::Plan::Invalid(why) => {
                        out.invalid_tool_calls += 1;
                        invalid_in_a_row += 1;
                        last_invalid = why.clone();
                        Some(why)
                    }
                    turn::Plan::OverCap(why) => {
                        out.skipped_tool_calls += 1;
                        Some(why)
                    }
                };
                if refused.is_none() {
                    invalid_in_a_row = 0;
                }
                let r = if let Some(why) = refused {
                    em.emit(AgentEvent::ToolCall {
                        id: id.clone(),
                        skill: String::new(),
                        tool: name.clone(),
                        name: name.clone(),
                        input: input.clone(),
                    });
                    CallResult::error(why, "")
                } else if timed_out {
                    CallResult::error("not run: the run's time limit was reached".into(), "")
                } else if cancel.is_cancelled() {
                    CallResult::error("not run: the user cancelled the turn".into(), "")
                } else {
                    match tokio::time::timeout_at(
                        deadline,
                        self.run_tool(&id, &name, &input, &offered, &messages, &mut em),
                    )
                    .await
                    {
                        Ok(r) => r,
                        Err(_) => {
                            timed_out = true;
                            CallResult::error(
                                "stopped: the run's time limit was reached".into(),
                                "",
                            )
                        }
                    }
                };
                em.emit(AgentEvent::ToolResult {
                    id: id.clone(),
                    output: r.output.clone(),
                    is_error: r.is_error,
                });
                if let Some(g) = &self.grants {
                    let all = g.grants().denials();
                    for d in all.iter().skip(seen_denials) {
                        let rec = DenialRecord {
                            skill: d.skill.clone(),
                            permission: d.permission.to_string(),
                            reason: d.reason.clone(),
                        };
                        em.emit(AgentEvent::Denial {
                            skill: rec.skill.clone(),
                            permission: rec.permission.clone(),
                            reason: rec.reason.clone(),
                        });
                        out.denials.push(rec);
                    }
                    seen_denials = all.len();
                }
                out.tool_calls.push(ToolCallRecord {
                    id: id.clone(),
                    skill: r.skill,
                    tool: name,
                    input,
                    output: r.output.clone(),
                    is_error: r.is_error,
                });
                results.push(ContentBlock::ToolResult {
                    tool_use_id: id,
                    content: r.output,
                    is_error: r.is_error,
                });
            }
            messages.push(Message {
                role: Role::User,
                content: results,
            });
            if timed_out {
                out.stop = StopKind::Timeout;
                break Ok(());
            }
            if invalid_in_a_row >= options.max_invalid_tool_calls.max(1) {
                break Err(AgentError::InvalidToolCalls {
                    count: invalid_in_a_row,
                    last: last_invalid,
                });
            }
        };
        out.skill_uses = self.ctx.budget.since(&uses_before);
        if let (Some(u), Some((i0, o0))) = (&self.skill_usage, usage_before) {
            out.input_tokens += u
                .input_tokens
                .load(std::sync::atomic::Ordering::Relaxed)
                .saturating_sub(i0);
            out.output_tokens += u
                .output_tokens
                .load(std::sync::atomic::Ordering::Relaxed)
                .saturating_sub(o0);
        }
        match result {
            Ok(()) => {
                out.text = self.apply_transforms(out.text.clone(), &mut em).await;
                em.emit(AgentEvent::Final {
                    text: out.text.clone(),
                    turns: out.turns,
                    stop: out.stop,
                });
            }
            Err(e) => {
                em.emit(AgentEvent::Error {
                    message: e.to_string(),
                });
                self.dispatch_each(HookPhase::OnDeactivate, &messages, &mut em)
                    .await;
                em.flush();
                finish_session(session.as_ref(), &out, SessionStatus::Failed, &mut em);
                return Err(e);
            }
        }
        self.dispatch_each(HookPhase::OnDeactivate, &messages, &mut em)
            .await;
        let status = match out.stop {
            StopKind::EndTurn => SessionStatus::Completed,
            StopKind::MaxTurns | StopKind::Timeout | StopKind::Cancelled => {
                SessionStatus::Interrupted
            }
        };
        em.flush();
        finish_session(session.as_ref(), &out, status, &mut em);
        out.warnings = em.warnings;
        Ok(out)
    }

    /// Runs the transform skills over the final text, in order. A failing
    /// transform is skipped with a warning.
    async fn apply_transforms(&self, mut text: String, em: &mut Emitter<'_>) -> String {
        if text.is_empty() {
            return text;
        }
        let context = TransformContext {
            mode: self.mode.clone(),
            format: self.format.clone(),
        };
        for &i in &self.transforms {
            let Some(skill) = self.skills.get(i) else {
                continue;
            };
            match self
                .runtime
                .transform(skill, &self.ctx, &text, &context)
                .await
            {
                Ok(Ok(t)) => {
                    text = t;
                    em.emit(AgentEvent::Transformed {
                        skill: skill.name().to_string(),
                    });
                }
                Ok(Err(e)) => em.warn(format!(
                    "transform `{}` failed, its change was skipped: {}",
                    skill.name(),
                    skill_error_text(&e)
                )),
                Err(e) => em.warn(format!(
                    "transform `{}` failed, its change was skipped: {e}",
                    skill.name()
                )),
            }
        }
        text
    }

    /// Shrinks `messages` to `budget` estimated tokens when over it: trims
    /// old tool outputs, then summarises. Returns the event to report, if
    /// anything changed, and the summarisation's error, if it failed (the
    /// conversation is then left as trimmed). Errs only on the deadline.
    async fn fit_context(
        &self,
        messages: &mut Vec<Message>,
        budget: usize,
        deadline: tokio::time::Instant,
        cancel: &CancellationToken,
        out: &mut RunOutcome,
    ) -> Result<(Option<AgentEvent>, Option<ProviderError>), ContextTimeout> {
        if context::estimate_tokens(messages) <= budget {
            return Ok((None, None));
        }
        let trimmed_results = context::trim_tool_results(messages, budget);
        let mut summarized_messages = 0;
        let mut failed = None;
        if context::estimate_tokens(messages) > budget {
            let summarized = tokio::time::timeout_at(
                deadline,
                context::summarize(
                    self.provider.as_ref(),
                    &self.model,
                    self.max_tokens,
                    messages,
                    budget,
                    cancel,
                ),
            )
            .await
            .map_err(|_| ContextTimeout)?;
            match summarized {
                Ok(s) => {
                    if let Some(c) = &s.completion {
                        out.input_tokens += c.usage.input_tokens;
                        out.output_tokens += c.usage.output_tokens;
                    }
                    summarized_messages = s.replaced;
                }
                Err(e) => failed = Some(e),
            }
        }
        let event = (trimmed_results > 0 || summarized_messages > 0).then(|| AgentEvent::Context {
            trimmed_results,
            summarized_messages,
            estimated_tokens: context::estimate_tokens(messages),
        });
        Ok((event, failed))
    }

    async fn run_tool(
        &self,
        id: &str,
        name: &str,
        input: &Value,
        offered: &[&AgentTool],
        messages: &[Message],
        em: &mut Emitter<'_>,
    ) -> CallResult {
        let Some(tool) = offered.iter().find(|t| t.name == name) else {
            em.emit(AgentEvent::ToolCall {
                id: id.to_string(),
                skill: String::new(),
                tool: name.to_string(),
                name: name.to_string(),
                input: input.clone(),
            });
            let known = self.tools.iter().find(|t| t.name == name);
            let (why, by) = match known {
                Some(t) => match self.constraint_refusal(t) {
                    Some(reason) => (reason, "constraints"),
                    None => (
                        format!("tool `{name}` is not allowed in this run (not in --tools)"),
                        "tools",
                    ),
                },
                None => (format!("unknown tool `{name}`"), "unknown"),
            };
            if by == "constraints" {
                em.emit(AgentEvent::Refused {
                    id: id.to_string(),
                    tool: name.to_string(),
                    by: by.to_string(),
                    reason: why.clone(),
                });
                return CallResult::error(format!("refused: {why}"), "");
            }
            return CallResult::error(why, "");
        };
        let skill_name = tool.skill_name.clone();
        em.emit(AgentEvent::ToolCall {
            id: id.to_string(),
            skill: skill_name.clone(),
            tool: tool.spec.name.clone(),
            name: name.to_string(),
            input: input.clone(),
        });
        let mut input_json = input.to_string();
        if self.hooks.listens(HookPhase::OnBeforeToolCall) {
            let mut event = hook_event(HookPhase::OnBeforeToolCall, &skill_name, messages);
            event.tool_call = Some(WitToolCall {
                id: id.to_string(),
                tool: tool.spec.name.clone(),
                input: input_json.clone(),
            });
            let o = self.dispatch(event, em).await;
            if let Some(c) = o.cancelled {
                em.emit(AgentEvent::Refused {
                    id: id.to_string(),
                    tool: name.to_string(),
                    by: format!("hook:{}", c.skill),
                    reason: c.reason.clone(),
                });
                return CallResult::error(
                    format!("cancelled by hook `{}`: {}", c.skill, c.reason),
                    &skill_name,
                );
            }
            if let Some(changed) = o.tool_call {
                input_json = changed.input;
            }
        }
        if let Err(problem) =
            agent_runtime::schema::check_input(&tool.spec.input_schema, &input_json)
        {
            return CallResult::error(
                format!("invalid input for `{name}`: {problem}"),
                &skill_name,
            );
        }
        if tool.spec.requires_approval {
            let approved = self
                .gate
                .approve_tool(&skill_name, &tool.spec.name, &input_json);
            let reason = if approved {
                "approved by the run's grants".to_string()
            } else {
                self.gate.refusal()
            };
            em.emit(AgentEvent::Approval {
                tool: name.to_string(),
                approved,
                reason: reason.clone(),
            });
            if !approved {
                return CallResult::error(
                    format!("tool `{name}` was not run: not approved: {reason}"),
                    &skill_name,
                );
            }
        }
        let Some(skill) = self.skills.get(tool.skill) else {
            return CallResult::error(format!("unknown tool `{name}`"), &skill_name);
        };
        let ran = if tool.workflow {
            self.runtime
                .run_workflow(skill, &self.ctx, &tool.spec.name, &input_json)
                .await
        } else {
            self.runtime
                .call_tool(skill, &self.ctx, &tool.spec.name, &input_json)
                .await
        };
        let (mut output, mut is_error) = match ran {
            Ok((Ok(output), _logs)) => (output.text, false),
            Ok((Err(e), _logs)) => (skill_error_text(&e), true),
            Err(e) => (e.to_string(), true),
        };
        if self.hooks.listens(HookPhase::OnAfterToolResult) {
            let mut event = hook_event(HookPhase::OnAfterToolResult, &skill_name, messages);
            event.tool_call = Some(WitToolCall {
                id: id.to_string(),
                tool: tool.spec.name.clone(),
                input: input_json.clone(),
            });
            event.tool_result = Some(WitToolResult {
                id: id.to_string(),
                output: output.clone(),
                is_error,
            });
            if let Some(r) = self.dispatch(event, em).await.tool_result {
                output = r.output;
                is_error = r.is_error;
            }
        }
        CallResult {
            output,
            is_error,
            skill: skill_name,
        }
    }
}

/// Replaces the text of an assistant message (its text blocks) with `text`,
/// keeping tool calls.
fn replace_text(message: &mut Message, text: &str) {
    let mut placed = false;
    message.content.retain_mut(|b| match b {
        ContentBlock::Text(t) => {
            if placed {
                false
            } else {
                *t = text.to_string();
                placed = true;
                true
            }
        }
        _ => true,
    });
    if !placed {
        message
            .content
            .insert(0, ContentBlock::Text(text.to_string()));
    }
}

fn finish_session(
    session: Option<&SessionLog>,
    out: &RunOutcome,
    status: SessionStatus,
    em: &mut Emitter<'_>,
) {
    let Some(s) = session else { return };
    let updated = s.store.update_session(&s.id, |m| {
        m.turns = m.turns.saturating_add(out.turns);
        m.usage.input_tokens += out.input_tokens;
        m.usage.output_tokens += out.output_tokens;
        m.status = status;
    });
    if let Err(e) = updated {
        em.warnings
            .push(format!("could not update the session record: {e}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_providers::{BoxFuture, Completion, EventSink, StopReason, Usage};
    use agent_runtime::{Access, AccessRequest, Authorizer, Limits};
    use std::sync::Mutex;

    struct DenyAll;

    impl Authorizer for DenyAll {
        fn check(&self, _: &AccessRequest<'_>) -> Access {
            Access::Denied("test".into())
        }
        fn record_use(&self, _: &str, _: &str, _: &str, _: &str) {}
    }

    struct NoGate;

    impl ApprovalGate for NoGate {
        fn approve_tool(&self, _: &str, _: &str, _: &str) -> bool {
            false
        }
        fn refusal(&self) -> String {
            "the test refuses every tool".into()
        }
    }

    /// Answers summarisation requests (no tools, summary instruction) with
    /// a fixed summary and everything else with "done"; records requests.
    struct Scripted {
        requests: Arc<Mutex<Vec<Request>>>,
    }

    impl Provider for Scripted {
        fn name(&self) -> &str {
            "scripted"
        }

        fn stream<'a>(
            &'a self,
            req: &'a Request,
            _cancel: &'a CancellationToken,
            _on_event: &'a mut EventSink<'a>,
        ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
            Box::pin(async move {
                self.requests.lock().unwrap().push(req.clone());
                let text = if req.system.as_deref() == Some(context::SUMMARY_INSTRUCTION) {
                    "old work"
                } else {
                    "done"
                };
                Ok(Completion {
                    message: Message::assistant(text),
                    usage: Usage::default(),
                    stop_reason: StopReason::EndTurn,
                    invalid_inputs: Vec::new(),
                })
            })
        }
    }

    fn history(rounds: usize, size: usize) -> Vec<Message> {
        let mut m = vec![Message::user("start")];
        for i in 0..rounds {
            let id = format!("t{i}");
            m.push(Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: id.clone(),
                    name: "read".into(),
                    input: serde_json::json!({}),
                }],
            });
            m.push(Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: id,
                    content: "y".repeat(size),
                    is_error: false,
                }],
            });
        }
        m.push(Message::assistant("ok"));
        m
    }

    async fn run_once(
        history: Vec<Message>,
        budget: usize,
    ) -> (Vec<Request>, Vec<AgentEvent>, RunOutcome) {
        let dir = tempfile::tempdir().unwrap();
        let runtime = Runtime::new(None, Limits::default()).unwrap();
        let ctx = Arc::new(CallContext::new(dir.path(), "headless", Arc::new(DenyAll)).unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let mut agent = Agent::new(
            Arc::new(Scripted {
                requests: requests.clone(),
            }),
            "",
            &runtime,
            ctx,
            &[],
            &NoGate,
            "sys".into(),
            RunLimits {
                max_turns: 3,
                timeout: Duration::from_secs(30),
            },
        );
        agent.max_tokens = 256;
        let mut events = Vec::new();
        let mut sink = |e: &AgentEvent| events.push(e.clone());
        let out = agent
            .run_with(
                history,
                "next",
                None,
                &mut sink,
                RunOptions {
                    context_budget: budget,
                    ..RunOptions::default()
                },
            )
            .await
            .unwrap();
        let reqs = requests.lock().unwrap().clone();
        (reqs, events, out)
    }

    /// Streams nothing until the run is cancelled.
    struct Hanging;

    impl Provider for Hanging {
        fn name(&self) -> &str {
            "hanging"
        }

        fn stream<'a>(
            &'a self,
            _req: &'a Request,
            cancel: &'a CancellationToken,
            _on_event: &'a mut EventSink<'a>,
        ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
            Box::pin(async move {
                cancel.cancelled().await;
                Err(ProviderError::Cancelled)
            })
        }
    }

    #[tokio::test]
    async fn cancelling_stops_the_request_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = Runtime::new(None, Limits::default()).unwrap();
        let ctx = Arc::new(CallContext::new(dir.path(), "interactive", Arc::new(DenyAll)).unwrap());
        let mut agent = Agent::new(
            Arc::new(Hanging),
            "",
            &runtime,
            ctx,
            &[],
            &NoGate,
            "sys".into(),
            RunLimits {
                max_turns: 3,
                timeout: Duration::from_secs(30),
            },
        );
        let cancel = CancellationToken::new();
        agent.cancel = Some(cancel.clone());
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            cancel.cancel();
        });
        let mut events = Vec::new();
        let mut sink = |e: &AgentEvent| events.push(e.clone());
        let out = agent.run(Vec::new(), "go", None, &mut sink).await.unwrap();
        canceller.await.unwrap();
        assert_eq!(out.stop, StopKind::Cancelled);
        assert_eq!(out.turns, 1);
        assert!(matches!(
            events.last(),
            Some(AgentEvent::Final {
                stop: StopKind::Cancelled,
                ..
            })
        ));
    }

    #[tokio::test]
    async fn loop_sends_history_unchanged_under_budget() {
        let h = history(2, 100);
        let (reqs, events, out) = run_once(h.clone(), DEFAULT_CONTEXT_BUDGET).await;
        assert_eq!(out.text, "done");
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].messages[..h.len()], h[..]);
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, AgentEvent::Context { .. }))
        );
    }

    #[tokio::test]
    async fn loop_trims_old_tool_outputs_over_budget() {
        let h = history(3, 4000);
        let full = context::estimate_tokens(&h);
        let (reqs, events, _) = run_once(h, full - 500).await;
        assert_eq!(reqs.len(), 1);
        let trimmed = reqs[0].messages[2].content[0].clone();
        assert!(matches!(
            trimmed,
            ContentBlock::ToolResult { content, .. } if content == "[tool output trimmed: 4000 bytes]"
        ));
        assert!(events.iter().any(|e| matches!(
            e,
            AgentEvent::Context {
                trimmed_results: 1,
                summarized_messages: 0,
                ..
            }
        )));
    }

    #[tokio::test]
    async fn loop_summarises_when_trimming_is_not_enough() {
        let h = history(3, 400);
        let (reqs, events, out) = run_once(h, 60).await;
        assert_eq!(out.text, "done");
        assert_eq!(reqs.len(), 2);
        assert!(reqs[0].tools.is_empty());
        let sent = &reqs[1].messages;
        assert_eq!(
            sent[0],
            Message::user("Summary of the earlier conversation: old work")
        );
        assert_eq!(sent.last(), Some(&Message::user("next")));
        assert!(events.iter().any(|e| matches!(
            e,
            AgentEvent::Context {
                summarized_messages: 1..,
                ..
            }
        )));
    }
}

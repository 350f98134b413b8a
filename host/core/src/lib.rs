//! `agent-core`: the Plan → Act → Observe loop.
//!
//! An [`Agent`] sends the conversation to a model [`Provider`], runs the tool
//! calls it asks for through the skill [`Runtime`], feeds the results back,
//! and repeats until the model ends its turn, the turn limit is reached or
//! the wall-clock deadline passes. Everything that happens is reported as an
//! [`AgentEvent`], handed to the caller as it happens and appended to the
//! session log when a [`SessionLog`] is given; [`history_from_events`]
//! rebuilds the conversation from such a log to resume it.
#![deny(missing_docs)]

pub mod activation;
pub mod context;
mod events;
pub mod hooks;
pub mod prompt;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use agent_providers::{
    CancellationToken, ContentBlock, Message, Provider, ProviderError, Request, Role, StreamEvent,
    ToolDef,
};
use agent_runtime::inspect::ExportKind;
use agent_runtime::{CallContext, GrantsAuthorizer, Runtime, Skill, SkillError, ToolSpec};
use agent_store::{SessionStatus, Store};
use serde_json::Value;

pub use context::DEFAULT_CONTEXT_BUDGET;
pub use events::{AgentEvent, StopKind, history_from_events};
pub use prompt::{BASE_INSTRUCTIONS, system_prompt};

/// Decides whether a tool whose spec has `requires_approval` may run.
pub trait ApprovalGate: Send + Sync {
    /// Whether `skill`'s `tool` may run with `input_json`. Must not block on
    /// user input in headless runs.
    fn approve_tool(&self, skill: &str, tool: &str, input_json: &str) -> bool;
}

/// A tool offered to the model.
#[derive(Debug, Clone)]
pub struct AgentTool {
    /// The name the model sees: the tool's name, or `<skill>__<tool>` when
    /// two skills offer the same name.
    pub name: String,
    /// Index of the skill in the slice given to the agent.
    pub skill: usize,
    /// The skill's name.
    pub skill_name: String,
    /// The tool's spec.
    pub spec: ToolSpec,
}

/// Lists the tools of every tool skill, naming them for the model.
///
/// # Errors
/// When a skill's tools cannot be listed.
pub async fn collect_tools(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
) -> anyhow::Result<Vec<AgentTool>> {
    let mut raw = Vec::new();
    for (i, skill) in skills.iter().enumerate() {
        if !skill.exports(ExportKind::Tool) {
            continue;
        }
        let specs = runtime
            .list_tools(skill, ctx)
            .await
            .map_err(|e| anyhow::anyhow!("listing the tools of `{}`: {e}", skill.name()))?;
        for spec in specs {
            raw.push((i, skill.name().to_string(), spec));
        }
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (_, _, spec) in &raw {
        *counts.entry(spec.name.clone()).or_default() += 1;
    }
    Ok(raw
        .into_iter()
        .map(|(skill, skill_name, spec)| {
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
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            context_budget: DEFAULT_CONTEXT_BUDGET,
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
    /// The final answer (the last assistant text).
    pub text: String,
    /// Turns taken in this run.
    pub turns: u32,
    /// Why it stopped.
    pub stop: StopKind,
    /// Token usage summed over the run.
    pub input_tokens: u64,
    /// Output tokens summed over the run.
    pub output_tokens: u64,
    /// Every tool call.
    pub tool_calls: Vec<ToolCallRecord>,
    /// Every denial.
    pub denials: Vec<DenialRecord>,
    /// Problems writing the session log (the run went on).
    pub warnings: Vec<String>,
}

/// Why a run failed.
#[derive(Debug)]
pub enum AgentError {
    /// The model provider failed.
    Provider(ProviderError),
}

impl std::fmt::Display for AgentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AgentError::Provider(e) => write!(f, "provider error: {e}"),
        }
    }
}

impl std::error::Error for AgentError {}

/// Everything one run needs.
pub struct Agent<'a> {
    /// The model provider.
    pub provider: Box<dyn Provider>,
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
}

struct Emitter<'s> {
    session: Option<SessionLog>,
    sink: &'s mut (dyn FnMut(&AgentEvent) + Send),
    warnings: Vec<String>,
}

impl Emitter<'_> {
    fn emit(&mut self, event: AgentEvent) {
        if let Some(s) = &self.session {
            let written = serde_json::to_value(&event)
                .map_err(|e| e.to_string())
                .and_then(|v| s.store.append_event(&s.id, &v).map_err(|e| e.to_string()));
            if let Err(e) = written
                && self.warnings.len() < 5
            {
                self.warnings
                    .push(format!("could not write the session log: {e}"));
            }
        }
        (self.sink)(&event);
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

impl Agent<'_> {
    fn offered(&self) -> Vec<&AgentTool> {
        self.tools
            .iter()
            .filter(|t| {
                self.allowlist
                    .as_ref()
                    .is_none_or(|a| a.iter().any(|n| n == &t.name || n == &t.spec.name))
            })
            .collect()
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
        let deadline = tokio::time::Instant::now() + self.limits.timeout;
        let mut em = Emitter {
            session: session.clone(),
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
        };
        let mut seen_denials = self
            .grants
            .as_ref()
            .map(|g| g.grants().denials().len())
            .unwrap_or(0);
        let mut messages = history;
        messages.push(Message::user(prompt));
        em.emit(AgentEvent::User {
            text: prompt.to_string(),
        });
        let offered = self.offered();
        let tool_defs: Vec<ToolDef> = offered
            .iter()
            .map(|t| ToolDef {
                name: t.name.clone(),
                description: t.spec.description.clone(),
                input_schema: serde_json::from_str(&t.spec.input_schema)
                    .unwrap_or_else(|_| serde_json::json!({"type": "object"})),
            })
            .collect();
        let cancel = CancellationToken::new();
        let result = loop {
            if out.turns >= self.limits.max_turns {
                out.stop = StopKind::MaxTurns;
                break Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                out.stop = StopKind::Timeout;
                break Ok(());
            }
            out.turns += 1;
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
                system: Some(self.system.clone()),
                messages: messages.clone(),
                tools: tool_defs.clone(),
                max_tokens: self.max_tokens,
                temperature: None,
            };
            let streamed = {
                let em_ref = &mut em;
                let mut on_event = move |ev: StreamEvent| {
                    if let StreamEvent::TextDelta(text) = ev {
                        em_ref.emit(AgentEvent::TextDelta { text });
                    }
                };
                tokio::time::timeout_at(
                    deadline,
                    self.provider.stream(&req, &cancel, &mut on_event),
                )
                .await
            };
            let completion = match streamed {
                Err(_) => {
                    cancel.cancel();
                    out.stop = StopKind::Timeout;
                    break Ok(());
                }
                Ok(Err(e)) => break Err(AgentError::Provider(e)),
                Ok(Ok(c)) => c,
            };
            out.input_tokens += completion.usage.input_tokens;
            out.output_tokens += completion.usage.output_tokens;
            em.emit(AgentEvent::Usage {
                input_tokens: completion.usage.input_tokens,
                output_tokens: completion.usage.output_tokens,
            });
            let text = completion.message.text();
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
            let mut results = Vec::new();
            let mut timed_out = false;
            for (id, name, input) in calls {
                let (output, is_error, skill) = if timed_out {
                    (
                        "not run: the run's time limit was reached".to_string(),
                        true,
                        String::new(),
                    )
                } else {
                    match tokio::time::timeout_at(
                        deadline,
                        self.run_tool(&id, &name, &input, &offered, &mut em),
                    )
                    .await
                    {
                        Ok(r) => r,
                        Err(_) => {
                            timed_out = true;
                            (
                                "stopped: the run's time limit was reached".to_string(),
                                true,
                                String::new(),
                            )
                        }
                    }
                };
                em.emit(AgentEvent::ToolResult {
                    id: id.clone(),
                    output: output.clone(),
                    is_error,
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
                    skill,
                    tool: name,
                    input,
                    output: output.clone(),
                    is_error,
                });
                results.push(ContentBlock::ToolResult {
                    tool_use_id: id,
                    content: output,
                    is_error,
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
        };
        match result {
            Ok(()) => {
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
                finish_session(session.as_ref(), &out, SessionStatus::Failed, &mut em);
                return Err(e);
            }
        }
        let status = match out.stop {
            StopKind::EndTurn => SessionStatus::Completed,
            StopKind::MaxTurns | StopKind::Timeout => SessionStatus::Interrupted,
        };
        finish_session(session.as_ref(), &out, status, &mut em);
        out.warnings = em.warnings;
        Ok(out)
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
        em: &mut Emitter<'_>,
    ) -> (String, bool, String) {
        let Some(tool) = offered.iter().find(|t| t.name == name) else {
            em.emit(AgentEvent::ToolCall {
                id: id.to_string(),
                skill: String::new(),
                tool: name.to_string(),
                name: name.to_string(),
                input: input.clone(),
            });
            let known = self.tools.iter().any(|t| t.name == name);
            let why = if known {
                format!("tool `{name}` is not allowed in this run (not in --tools)")
            } else {
                format!("unknown tool `{name}`")
            };
            return (why, true, String::new());
        };
        let skill_name = tool.skill_name.clone();
        em.emit(AgentEvent::ToolCall {
            id: id.to_string(),
            skill: skill_name.clone(),
            tool: tool.spec.name.clone(),
            name: name.to_string(),
            input: input.clone(),
        });
        let input_json = input.to_string();
        if let Err(problem) =
            agent_runtime::schema::check_input(&tool.spec.input_schema, &input_json)
        {
            return (
                format!("invalid input for `{name}`: {problem}"),
                true,
                skill_name,
            );
        }
        if tool.spec.requires_approval {
            let approved = self
                .gate
                .approve_tool(&skill_name, &tool.spec.name, &input_json);
            let reason = if approved {
                "approved by the run's grants".to_string()
            } else {
                "not approved: this tool needs approval (grant its permission with --allow, or pass --yes)".to_string()
            };
            em.emit(AgentEvent::Approval {
                tool: name.to_string(),
                approved,
                reason: reason.clone(),
            });
            if !approved {
                return (
                    format!("tool `{name}` was not run: {reason}"),
                    true,
                    skill_name,
                );
            }
        }
        let Some(skill) = self.skills.get(tool.skill) else {
            return (format!("unknown tool `{name}`"), true, skill_name);
        };
        match self
            .runtime
            .call_tool(skill, &self.ctx, &tool.spec.name, &input_json)
            .await
        {
            Ok((Ok(output), _logs)) => (output.text, false, skill_name),
            Ok((Err(e), _logs)) => (skill_error_text(&e), true, skill_name),
            Err(e) => (e.to_string(), true, skill_name),
        }
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
        let agent = Agent {
            provider: Box::new(Scripted {
                requests: requests.clone(),
            }),
            model: String::new(),
            runtime: &runtime,
            ctx,
            skills: &[],
            tools: Vec::new(),
            allowlist: None,
            grants: None,
            gate: &NoGate,
            system: "sys".into(),
            limits: RunLimits {
                max_turns: 3,
                timeout: Duration::from_secs(30),
            },
            max_tokens: 256,
        };
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
                },
            )
            .await
            .unwrap();
        let reqs = requests.lock().unwrap().clone();
        (reqs, events, out)
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

//! A session's turns and compactions, each on a thread of its own.

use std::path::Path;
use std::sync::Arc;

use agent_manifest::Mode;
use agent_policy::merge;
use agent_protocol::{
    AgentEvent, Attachment, DenialRow, Event, NoticeKind, SkillUseRow, ToolCallRow, TurnComplete,
    TurnFailure, TurnStarted, TurnSummary,
};
use agent_providers::CancellationToken;
use agent_runtime::Skill;
use agent_store::NewSession;

use super::{Conversation, Session, lock};
use crate::{Agent, HookSet, RunOutcome, SessionLog, Setup, SetupInput};

/// The message the model gets: the text, then each attachment as a
/// delimited document (piped standard input for `agent run`).
pub fn with_attachments(text: &str, attachments: &[Attachment]) -> String {
    let mut out = text.to_string();
    for a in attachments {
        out.push_str(&format!(
            "\n\n<document name=\"{}\">\n{}",
            a.name, a.content
        ));
        if !a.content.ends_with('\n') {
            out.push('\n');
        }
        out.push_str("</document>");
    }
    out
}

/// A turn's failure before or while it ran.
struct Failed {
    failure: TurnFailure,
    message: String,
}

impl Session {
    /// The session the next turn is logged in, created on the first turn
    /// (titled with `text`).
    fn session_for(&self, text: &str) -> Result<String, String> {
        if let Some(id) = &lock(&self.conversation).session {
            return Ok(id.clone());
        }
        let meta = self
            .parts
            .store
            .create_session(NewSession {
                project_root: self.parts.project_root.clone(),
                model: self.parts.model.clone(),
                provider: self.parts.provider_name.clone(),
                first_message: Some(text.to_string()),
            })
            .map_err(|e| e.to_string())?;
        lock(&self.conversation).session = Some(meta.id.clone());
        Ok(meta.id)
    }

    pub(super) fn start_turn(&mut self, text: String, attachments: Vec<Attachment>) {
        let session_id = match self.session_for(&text) {
            Ok(id) => id,
            Err(e) => {
                self.send(failed(String::new(), TurnFailure::Setup, e));
                return;
            }
        };
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        let turn = Turn {
            session_id,
            message: with_attachments(&text, &attachments),
            history: lock(&self.conversation).history(),
            cancel,
            deactivated: self.deactivated.clone(),
            explicit: self.parts.explicit.clone(),
            provider: self.parts.provider.clone(),
            model: self.parts.model.clone(),
        };
        let shared = self.shared();
        let handle = self.handle.clone();
        self.start(move || {
            let id = turn.session_id.clone();
            let done = match handle.block_on(turn.run(&shared)) {
                Ok((outcome, limits)) => TurnComplete {
                    session_id: id,
                    stop: Some(outcome.stop),
                    error: None,
                    failure: None,
                    summary: Some(Box::new(summary(outcome, limits))),
                },
                Err(f) => TurnComplete {
                    session_id: id,
                    stop: None,
                    error: Some(f.message),
                    failure: Some(f.failure),
                    summary: None,
                },
            };
            Event::TurnComplete(done)
        });
    }

    pub(super) fn start_compact(&mut self) {
        let provider = self.parts.provider.clone();
        let model = self.parts.model.clone();
        let max_tokens = self.parts.options.max_tokens;
        let conversation = self.conversation.clone();
        let emit = self.emit.clone();
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        let handle = self.handle.clone();
        self.start(move || {
            let notice = |text: String| {
                let _ = emit.send(Event::Notice {
                    kind: NoticeKind::Info,
                    text,
                });
            };
            let (session_id, mut messages) = {
                let c = lock(&conversation);
                (c.session.clone().unwrap_or_default(), c.history())
            };
            let before = crate::context::estimate_tokens(&messages);
            let mut done = TurnComplete {
                session_id,
                stop: None,
                error: None,
                failure: None,
                summary: None,
            };
            if messages.len() < 3 {
                notice("nothing to compact yet".into());
            } else {
                // Keep about a fifth: the summary replaces the oldest part.
                let budget = (before / 5).max(1);
                let result = handle.block_on(crate::context::summarize(
                    provider.as_ref(),
                    &model,
                    max_tokens,
                    &mut messages,
                    budget,
                    &cancel,
                ));
                match result {
                    Ok(s) => {
                        let after = crate::context::estimate_tokens(&messages);
                        let mut c = lock(&conversation);
                        c.base = messages;
                        c.events.clear();
                        drop(c);
                        notice(format!(
                            "compacted: {} message(s) summarised, about {before} → {after} tokens",
                            s.replaced
                        ));
                    }
                    Err(e) => {
                        done.error = Some(format!("could not compact: {e}"));
                        done.failure = Some(TurnFailure::Model);
                    }
                }
            }
            Event::TurnComplete(done)
        });
    }

    fn shared(&self) -> Shared {
        let p = &self.parts;
        Shared {
            emit: self.emit.clone(),
            conversation: self.conversation.clone(),
            runtime: p.runtime.clone(),
            skills: p.skills.clone(),
            ctx: p.ctx.clone(),
            invoker: p.invoker.clone(),
            skill_usage: p.skill_usage.clone(),
            grants: p.grants.clone(),
            gate: p.gate.clone(),
            store: p.store.clone(),
            root: p.project_root.clone(),
            mode: p.options.mode,
            format: p.options.format.clone(),
            limits: p.options.limits,
            run: p.options.run,
            max_tokens: p.options.max_tokens,
            tool_filter: p.options.tool_filter.clone(),
            report_setup: p.options.report_setup,
            describe_error: p.options.describe_error,
            host_tools: p.host_tools.clone(),
        }
    }
}

fn failed(session_id: String, failure: TurnFailure, message: String) -> Event {
    Event::TurnComplete(TurnComplete {
        session_id,
        stop: None,
        error: Some(message),
        failure: Some(failure),
        summary: None,
    })
}

/// What every turn of the session shares, owned by the turn's thread.
struct Shared {
    emit: std::sync::mpsc::Sender<Event>,
    conversation: Arc<std::sync::Mutex<Conversation>>,
    runtime: Arc<agent_runtime::Runtime>,
    skills: Arc<Vec<Skill>>,
    ctx: Arc<agent_runtime::CallContext>,
    invoker: Arc<crate::Invoker>,
    skill_usage: Option<Arc<crate::SkillUsage>>,
    grants: Arc<agent_runtime::GrantsAuthorizer>,
    gate: Arc<dyn crate::ApprovalGate>,
    store: Arc<agent_store::Store>,
    root: std::path::PathBuf,
    mode: Mode,
    format: String,
    limits: crate::RunLimits,
    run: crate::RunOptions,
    max_tokens: u32,
    tool_filter: Option<super::ToolFilter>,
    report_setup: bool,
    describe_error: fn(&anyhow::Error) -> String,
    host_tools: Vec<Arc<dyn crate::HostToolSource>>,
}

/// One user turn.
struct Turn {
    session_id: String,
    message: String,
    history: Vec<agent_providers::Message>,
    cancel: CancellationToken,
    deactivated: Vec<String>,
    explicit: Vec<String>,
    provider: Arc<dyn agent_providers::Provider>,
    model: String,
}

impl Turn {
    async fn run(self, s: &Shared) -> Result<(RunOutcome, crate::RunLimits), Failed> {
        let cwd = std::env::current_dir().unwrap_or_else(|_| s.root.clone());
        let mut setup = crate::setup(&SetupInput {
            runtime: &s.runtime,
            ctx: &s.ctx,
            skills: &s.skills,
            project_root: &s.root,
            cwd: &cwd,
            user_message: &self.message,
            mode: s.mode,
            explicit: &self.explicit,
        })
        .await
        .map_err(|e| Failed {
            failure: TurnFailure::Setup,
            message: (s.describe_error)(&e),
        })?;
        if !self.deactivated.is_empty() {
            leave_out(&mut setup, &s.skills, &self.deactivated, &s.root, &cwd);
        }
        let base = crate::setup::skill_constraints(&s.skills, &setup.activation.order);
        let forker = Arc::new(self.forker(s, &cwd, &base, &setup.tools));
        for source in &s.host_tools {
            source.bind_forker(forker.clone());
        }
        for source in &s.host_tools {
            let offer = source.offer(&self.message).await;
            crate::add_host_tools(&mut setup.tools, offer.tools);
            if let Some(prompt) = offer.prompt {
                setup.system.push_str("\n\n");
                setup.system.push_str(&prompt);
            }
            setup.warnings.extend(offer.warnings);
        }
        let offered: Vec<agent_policy::SkillConstraint> =
            s.host_tools.iter().flat_map(|h| h.constraints()).collect();
        if !offered.is_empty() {
            let mut all = base.clone();
            all.extend(offered);
            setup.constraints = Arc::new(merge(&all));
        }
        for w in &setup.warnings {
            let _ = s.emit.send(Event::Notice {
                kind: NoticeKind::Warning,
                text: w.clone(),
            });
        }
        if s.report_setup {
            let _ = s.emit.send(Event::SetupReport {
                lines: setup_report(&setup, &s.skills),
            });
        }
        s.invoker.set_constraints(setup.constraints.clone());
        let tools = match &s.tool_filter {
            Some(filter) => Some(filter(&setup.tools).map_err(|message| Failed {
                failure: TurnFailure::ToolFilter,
                message,
            })?),
            None => None,
        };
        {
            let mut o = lock(&forker.offered);
            o.tools = setup.tools.clone();
            o.allowlist = tools.clone();
        }
        let agent = build_agent(s, &self, setup, tools).host_sources(base, s.host_tools.clone());
        let agent = agent.build();
        let limits = agent.effective_limits();
        let _ = s.emit.send(Event::TurnStarted(TurnStarted {
            session_id: self.session_id.clone(),
            rewrites_output: agent.rewrites_output(),
        }));
        let log = SessionLog {
            store: s.store.clone(),
            id: self.session_id.clone(),
        };
        let emit = s.emit.clone();
        let conversation = s.conversation.clone();
        let mut sink = move |e: &AgentEvent| {
            let mut c = lock(&conversation);
            if let Ok(v) = serde_json::to_value(e) {
                c.events.push(v);
            }
            match e {
                AgentEvent::User { .. } => c.active.clear(),
                AgentEvent::Activated { skill, .. } => c.active.push(skill.clone()),
                _ => {}
            }
            drop(c);
            let _ = emit.send(Event::Agent(e.clone()));
        };
        let outcome = agent
            .run_with(self.history, &self.message, Some(log), &mut sink, s.run)
            .await
            .map_err(|e| Failed {
                failure: TurnFailure::Model,
                message: e.to_string(),
            })?;
        Ok((outcome, limits))
    }
}

impl Turn {
    /// The turn's [`crate::Forker`]: the turn's provider, model, limits and deadline; its
    /// tools are filled in once the host sources have offered theirs.
    fn forker(
        &self,
        s: &Shared,
        cwd: &Path,
        base: &[agent_policy::SkillConstraint],
        tools: &[crate::AgentTool],
    ) -> super::fork::TurnForker {
        super::fork::TurnForker {
            provider: self.provider.clone(),
            model: self.model.clone(),
            runtime: s.runtime.clone(),
            skills: s.skills.clone(),
            ctx: s.ctx.clone(),
            gate: s.gate.clone(),
            grants: s.grants.clone(),
            skill_usage: s.skill_usage.clone(),
            max_tokens: s.max_tokens,
            run: s.run,
            cancel: self.cancel.clone(),
            emit: s.emit.clone(),
            system: crate::system_prompt(&s.root, cwd),
            offered: std::sync::Mutex::new(super::fork::Offered {
                tools: tools.to_vec(),
                // Before the host sources offered theirs: a filter naming one of those
                // leaves the sub-agent no tools rather than all.
                allowlist: s.tool_filter.as_ref().map(|f| f(tools).unwrap_or_default()),
                constraints: base.to_vec(),
            }),
            limits: s.limits,
            deadline: tokio::time::Instant::now() + s.limits.timeout,
            busy: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

/// The one place an [`Agent`] is put together, for every frontend.
fn build_agent<'a>(
    s: &'a Shared,
    turn: &Turn,
    setup: Setup,
    tools: Option<Vec<String>>,
) -> crate::AgentBuilder<'a> {
    Agent::builder(
        turn.provider.clone(),
        &s.runtime,
        s.ctx.clone(),
        &s.skills,
        s.gate.as_ref(),
    )
    .model(&turn.model)
    .limits(s.limits)
    .setup(setup)
    .allowlist(tools)
    .grants(s.grants.clone())
    .max_tokens(s.max_tokens)
    .skill_usage(s.skill_usage.clone())
    .mode(s.mode.as_str())
    .format(&s.format)
    .cancel(turn.cancel.clone())
}

fn summary(o: RunOutcome, limits: crate::RunLimits) -> TurnSummary {
    TurnSummary {
        text: o.text,
        turns: o.turns,
        input_tokens: o.input_tokens,
        output_tokens: o.output_tokens,
        tool_calls: o
            .tool_calls
            .into_iter()
            .map(|c| ToolCallRow {
                id: c.id,
                skill: c.skill,
                tool: c.tool,
                input: c.input,
                output: c.output,
                is_error: c.is_error,
            })
            .collect(),
        denials: o
            .denials
            .into_iter()
            .map(|d| DenialRow {
                skill: d.skill,
                permission: d.permission,
                reason: d.reason,
            })
            .collect(),
        warnings: o.warnings,
        skill_uses: o
            .skill_uses
            .into_iter()
            .map(|u| SkillUseRow {
                summary: u.summary(),
                skill: u.skill,
                llm: u.llm,
                exec: u.exec,
                http: u.http,
                refused: u.refused,
            })
            .collect(),
        invalid_tool_calls: o.invalid_tool_calls,
        skipped_tool_calls: o.skipped_tool_calls,
        interrupted_streams: o.interrupted_streams,
        max_turns: limits.max_turns,
        timeout: limits.timeout,
    }
}

/// Which skills are active and why, prompt skills' budgets, hooks,
/// transforms, and the constraint decisions with their reasons.
pub fn setup_report(setup: &Setup, skills: &[Skill]) -> Vec<String> {
    let mut out = vec!["skills active in this run:".to_string()];
    for (skill, why) in &setup.activation.reasons {
        out.push(format!("  {skill}: {why}"));
    }
    for (skill, why) in &setup.activation.problems {
        out.push(format!("  {skill}: NOT active: {why}"));
    }
    for p in &setup.prompts {
        out.push(format!(
            "prompt skill {}: {} of {} tokens ({} fragment(s){})",
            p.skill,
            p.tokens,
            p.budget,
            p.fragments.len(),
            if p.dropped.is_empty() {
                String::new()
            } else {
                format!("; trimmed: {}", p.dropped.join(", "))
            }
        ));
    }
    for sub in setup.hooks.subscriptions() {
        out.push(format!(
            "hook: {} on {} (priority {})",
            sub.skill_name,
            crate::hooks::phase_name(sub.phase),
            sub.priority
        ));
    }
    for &i in &setup.transforms {
        if let Some(s) = skills.get(i) {
            out.push(format!("transform: {}", s.name()));
        }
    }
    out.push("constraints:".to_string());
    for line in setup.constraints.reasons() {
        out.push(format!("  {line}"));
    }
    out
}

/// Leaves the `off` skills out of a turn's setup: their tools, hooks,
/// transforms, prompt sections and constraints.
fn leave_out(setup: &mut Setup, skills: &[Skill], off: &[String], root: &Path, cwd: &Path) {
    let is_off = |i: usize| {
        skills
            .get(i)
            .is_some_and(|s| off.iter().any(|o| o == s.name()))
    };
    setup.tools.retain(|t| !is_off(t.skill));
    setup.transforms.retain(|&i| !is_off(i));
    setup.activation.order.retain(|&i| !is_off(i));
    setup
        .activation
        .reasons
        .retain(|(name, _)| !off.contains(name));
    setup.prompts.retain(|p| !off.contains(&p.skill));
    let subs = setup
        .hooks
        .subscriptions()
        .iter()
        .filter(|s| !off.contains(&s.skill_name))
        .cloned()
        .collect();
    setup.hooks = HookSet::from_subscriptions(subs);
    setup.constraints = Arc::new(merge(&crate::setup::skill_constraints(
        skills,
        &setup.activation.order,
    )));
    let mut extra = Vec::new();
    if !setup.constraints.context().is_empty() {
        let mut text = String::from("## Context from active skills\n");
        for (key, entry) in setup.constraints.context() {
            text.push_str(&format!("- {key}: {}\n", entry.value));
        }
        extra.push(text);
    }
    setup.system =
        crate::prompt::assemble(&crate::system_prompt(root, cwd), &setup.prompts, &extra);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Piped standard input reaches the model as today's `agent run` sends it.
    #[test]
    fn an_attachment_follows_the_text_as_a_named_document() {
        let doc = |content: &str| Attachment {
            name: "stdin".into(),
            content: content.into(),
        };
        assert_eq!(
            with_attachments("Find it", &[doc("LOG\n")]),
            "Find it\n\n<document name=\"stdin\">\nLOG\n</document>"
        );
        assert_eq!(
            with_attachments("t", &[doc("x")]),
            "t\n\n<document name=\"stdin\">\nx\n</document>"
        );
        assert_eq!(with_attachments("t", &[]), "t");
    }
}

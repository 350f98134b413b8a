//! A turn's sub-agents ([`crate::Forker`]): an instruction skill with `context: fork` runs
//! its body in a fresh conversation through the same [`Agent`] loop as the turn — the same
//! provider, tools, `--tools` filter, grants, approval gate and audit — under the turn's
//! constraints merged with the skill's `allowed_tools`, within what is left of the turn's
//! time, and with the turn's turn limit. Its model requests count in the turn's usage
//! (through [`crate::SkillUsage`]). Only its final answer goes back to the caller; its
//! events are not part of the parent's conversation (the user sees a notice when it starts
//! and ends, and one per tool call).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agent_policy::{Constraints, SkillConstraint, merge};
use agent_protocol::{AgentEvent, Event, NoticeKind};
use agent_providers::{CancellationToken, Provider};
use agent_runtime::{CallContext, GrantsAuthorizer, Runtime, Skill};

use super::lock;
use crate::{
    Agent, AgentTool, ApprovalGate, ForkTask, Forker, HostFuture, RunLimits, RunOptions, SkillUsage,
};

/// What a sub-agent of one turn is built from.
pub(super) struct TurnForker {
    pub(super) provider: Arc<dyn Provider>,
    pub(super) model: String,
    pub(super) runtime: Arc<Runtime>,
    pub(super) skills: Arc<Vec<Skill>>,
    pub(super) ctx: Arc<CallContext>,
    pub(super) gate: Arc<dyn ApprovalGate>,
    pub(super) grants: Arc<GrantsAuthorizer>,
    pub(super) skill_usage: Option<Arc<SkillUsage>>,
    pub(super) max_tokens: u32,
    pub(super) run: RunOptions,
    pub(super) cancel: CancellationToken,
    pub(super) emit: std::sync::mpsc::Sender<Event>,
    /// The turn's base system prompt (instructions and `AGENT.md`, no conversation).
    pub(super) system: String,
    /// The turn's tools, `--tools` filter and component constraints, once known.
    pub(super) offered: Mutex<Offered>,
    /// The turn's limits, and when its time is up.
    pub(super) limits: RunLimits,
    pub(super) deadline: tokio::time::Instant,
    /// Whether a sub-agent runs now (a fork inside a fork is refused).
    pub(super) busy: AtomicBool,
}

/// The turn's tools as the sub-agent gets them.
#[derive(Default)]
pub(super) struct Offered {
    pub(super) tools: Vec<AgentTool>,
    pub(super) allowlist: Option<Vec<String>>,
    pub(super) constraints: Vec<SkillConstraint>,
}

/// Clears [`TurnForker::busy`] however the sub-agent ends.
struct Busy<'a>(&'a AtomicBool);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl TurnForker {
    fn notice(&self, text: String) {
        let _ = self.emit.send(Event::Notice {
            kind: NoticeKind::Info,
            text,
        });
    }

    async fn run(&self, task: ForkTask) -> Result<String, String> {
        if self.busy.swap(true, Ordering::SeqCst) {
            return Err(format!(
                "skill `{}` has `context: fork` and a sub-agent already runs: a forked skill cannot start another sub-agent",
                task.skill
            ));
        }
        let _busy = Busy(&self.busy);
        let left = self
            .deadline
            .saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return Err("not run: the turn's time limit was reached".into());
        }
        let (tools, allowlist, mut constraints) = {
            let o = lock(&self.offered);
            (o.tools.clone(), o.allowlist.clone(), o.constraints.clone())
        };
        constraints.extend(task.inherited.iter().cloned());
        if let Some(allowed) = &task.allowed_tools {
            constraints.push(SkillConstraint {
                skill: task.skill.clone(),
                priority: 0,
                constraints: Constraints {
                    allowed_tools: Some(allowed.iter().cloned().collect()),
                    ..Constraints::default()
                },
            });
        }
        let model = task.model.clone().unwrap_or_else(|| self.model.clone());
        self.notice(format!(
            "skill `{}` runs as a sub-agent (context: fork, model {})",
            task.skill,
            if model.is_empty() { "default" } else { &model }
        ));
        let agent = Agent::builder(
            self.provider.clone(),
            &self.runtime,
            self.ctx.clone(),
            &self.skills,
            self.gate.as_ref(),
        )
        .model(&model)
        .limits(RunLimits {
            max_turns: self.limits.max_turns,
            timeout: left,
        })
        .system(self.system.clone())
        .tools(tools)
        .allowlist(allowlist)
        .constraints(Arc::new(merge(&constraints)))
        .grants(self.grants.clone())
        .max_tokens(self.max_tokens)
        .skill_usage(self.skill_usage.clone())
        .cancel(self.cancel.clone())
        .build();
        let usage_before = self.usage();
        let skill = task.skill.clone();
        let emit = self.emit.clone();
        let mut sink = move |e: &AgentEvent| {
            if let AgentEvent::ToolCall { name, .. } = e {
                let _ = emit.send(Event::Notice {
                    kind: NoticeKind::Info,
                    text: format!("skill `{skill}` (sub-agent) calls `{name}`"),
                });
            }
        };
        let outcome = agent
            .run_with(Vec::new(), &task.task, None, &mut sink, self.run)
            .await
            .map_err(|e| format!("the sub-agent of skill `{}` failed: {e}", task.skill))?;
        // Its own requests count in the turn's usage (skills' requests already did).
        if let Some(u) = &self.skill_usage {
            let (i1, o1) = self.usage();
            let (i0, o0) = usage_before;
            let own_in = outcome.input_tokens.saturating_sub(i1.saturating_sub(i0));
            let own_out = outcome.output_tokens.saturating_sub(o1.saturating_sub(o0));
            u.input_tokens.fetch_add(own_in, Ordering::Relaxed);
            u.output_tokens.fetch_add(own_out, Ordering::Relaxed);
        }
        self.notice(format!(
            "skill `{}` (sub-agent) answered after {} turn(s)",
            task.skill, outcome.turns
        ));
        Ok(outcome.text)
    }

    fn usage(&self) -> (u64, u64) {
        self.skill_usage
            .as_ref()
            .map(|u| {
                (
                    u.input_tokens.load(Ordering::Relaxed),
                    u.output_tokens.load(Ordering::Relaxed),
                )
            })
            .unwrap_or_default()
    }
}

impl Forker for TurnForker {
    fn fork<'a>(&'a self, task: ForkTask) -> HostFuture<'a, Result<String, String>> {
        Box::pin(self.run(task))
    }
}

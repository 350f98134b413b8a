//! How the loop and the router call hooks: the conversation as hooks see
//! it, and a dispatch whose changes and problems become events.

use std::sync::Arc;

use agent_providers::{ContentBlock, Message, Role};
use agent_runtime::{CallContext, HookEvent, HookPhase, Runtime, Skill, WitMessage, WitRole};

use crate::hooks::{self, HookOutcome, HookSet};
use crate::session_log::Emitter;
use crate::{Agent, AgentEvent};

/// The conversation as hooks see it: text per message, tool results as
/// `tool` messages.
pub(crate) fn wit_conversation(messages: &[Message]) -> Vec<WitMessage> {
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

/// An event of `phase` for `skill` over `messages`, nothing else filled in.
pub(crate) fn hook_event(phase: HookPhase, skill: &str, messages: &[Message]) -> HookEvent {
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

/// Dispatches `event` to `hooks`, reporting changes as events and problems
/// as warnings.
pub(crate) async fn dispatch(
    hooks: &HookSet,
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
    event: HookEvent,
    em: &mut Emitter<'_>,
) -> HookOutcome {
    let outcome = hooks.dispatch(runtime, ctx, skills, event).await;
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

impl Agent<'_> {
    /// Dispatches `event` to the run's hooks (see [`dispatch`]).
    pub(crate) async fn dispatch(&self, event: HookEvent, em: &mut Emitter<'_>) -> HookOutcome {
        dispatch(&self.hooks, self.runtime, &self.ctx, self.skills, event, em).await
    }

    /// Dispatches a phase that concerns each active skill in turn
    /// (activation, deactivation).
    pub(crate) async fn dispatch_each(
        &self,
        phase: HookPhase,
        messages: &[Message],
        em: &mut Emitter<'_>,
    ) {
        if !self.hooks.listens(phase) {
            return;
        }
        for (skill, _) in &self.activated {
            self.dispatch(hook_event(phase, skill, messages), em).await;
        }
    }
}

//! The turn loop: [`Agent::run`] opens the conversation, takes turns until
//! the model ends its turn or a limit is reached, and closes the run. Each
//! step is a method of its own: [`Agent::open`], [`Agent::turn`] (fit the
//! context, ask the model, let hooks see the answer, run its tool calls)
//! and [`Agent::close`].

use agent_providers::{
    CancellationToken, ContentBlock, Message, ProviderError, Request, Role, ToolDef,
};
use agent_runtime::{HookPhase, SkillUses, TransformContext};
use agent_store::SessionStatus;
use serde_json::Value;

use crate::hook_calls::hook_event;
use crate::router::skill_error_text;
use crate::session_log::{Emitter, finish_session};
use crate::turn::Streamed;
use crate::{
    Agent, AgentError, AgentEvent, AgentTool, RunOptions, RunOutcome, SessionLog, StopKind, context,
};

/// The run's deadline passed while summarising the conversation.
struct ContextTimeout;

/// What the loop carries from turn to turn.
pub(crate) struct Run<'e> {
    /// Where events go.
    pub(crate) em: Emitter<'e>,
    /// What the run gives back, filled in as it goes.
    pub(crate) out: RunOutcome,
    /// The conversation.
    pub(crate) messages: Vec<Message>,
    /// The system prompt, after `on-before-prompt-build` hooks.
    system: String,
    /// The tools offered, as the model sees them.
    tool_defs: Vec<ToolDef>,
    /// When the run stops.
    pub(crate) deadline: tokio::time::Instant,
    /// Cancels the run.
    pub(crate) cancel: CancellationToken,
    /// The run's options.
    pub(crate) options: RunOptions,
    /// The most turns.
    max_turns: u32,
    /// Tool calls in a row whose arguments were not JSON.
    pub(crate) invalid_in_a_row: u32,
}

/// What the loop does after a turn.
pub(crate) enum Next {
    /// Takes another turn.
    Continue,
    /// Stops the run.
    Stop(StopKind),
    /// Fails the run.
    Fail(AgentError),
}

/// Skills' budget uses and model usage at the start of the run.
struct Before {
    uses: Vec<SkillUses>,
    tokens: Option<(u64, u64)>,
}

impl Agent<'_> {
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
        let em = Emitter::new(session.clone(), sink);
        let before = Before {
            uses: self.ctx.budget.totals(),
            tokens: self.skill_usage.as_ref().map(|u| {
                (
                    u.input_tokens.load(std::sync::atomic::Ordering::Relaxed),
                    u.output_tokens.load(std::sync::atomic::Ordering::Relaxed),
                )
            }),
        };
        let offered = self.offered();
        let mut run = self.open(history, prompt, em, options, &offered).await;
        let result = loop {
            match self.turn(&mut run).await {
                Next::Continue => {}
                Next::Stop(stop) => {
                    run.out.stop = stop;
                    break Ok(());
                }
                Next::Fail(e) => break Err(e),
            }
        };
        self.close(run, result, before, session.as_ref()).await
    }

    /// Opens the run: reports the user's message and the active skills,
    /// lets hooks see the start and add to the system prompt.
    async fn open<'e>(
        &self,
        history: Vec<Message>,
        prompt: &str,
        mut em: Emitter<'e>,
        options: RunOptions,
        offered: &[&AgentTool],
    ) -> Run<'e> {
        let limits = self.effective_limits();
        let deadline = tokio::time::Instant::now() + limits.timeout;
        if let Some(g) = &self.grants {
            em.watch_denials(g.grants());
        }
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
        let tool_defs = offered
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
        Run {
            em,
            out: RunOutcome::empty(),
            messages,
            system,
            tool_defs,
            deadline,
            cancel: self.cancel.clone().unwrap_or_default(),
            options,
            max_turns: limits.max_turns,
            invalid_in_a_row: 0,
        }
    }

    /// One turn: the limits checked, the conversation fitted to the
    /// budget, the model asked, its answer shown to hooks, its tool calls
    /// run.
    async fn turn(&self, run: &mut Run<'_>) -> Next {
        if run.cancel.is_cancelled() {
            return Next::Stop(StopKind::Cancelled);
        }
        if run.out.turns >= run.max_turns {
            return Next::Stop(StopKind::MaxTurns);
        }
        if tokio::time::Instant::now() >= run.deadline {
            return Next::Stop(StopKind::Timeout);
        }
        run.out.turns += 1;
        self.ctx.budget.start_turn();
        run.em.emit(AgentEvent::TurnStart {
            turn: run.out.turns,
        });
        match self.fit_context(run).await {
            Ok((event, failed)) => {
                if let Some(event) = event {
                    run.em.emit(event);
                }
                if let Some(e) = failed
                    && run.em.warnings.len() < 5
                {
                    run.em
                        .warnings
                        .push(format!("could not summarise the conversation: {e}"));
                }
            }
            Err(ContextTimeout) => {
                run.cancel.cancel();
                return Next::Stop(StopKind::Timeout);
            }
        }
        let req = Request {
            model: self.current_model(),
            system: Some(run.system.clone()),
            messages: run.messages.clone(),
            tools: run.tool_defs.clone(),
            max_tokens: self.max_tokens,
            temperature: None,
        };
        let streamed = self
            .stream_turn(
                &req,
                &run.cancel,
                run.deadline,
                run.options.stream_retry,
                &mut run.em,
                &mut run.out,
            )
            .await;
        let mut completion = match streamed {
            Streamed::Done(c) => c,
            Streamed::Timeout => return Next::Stop(StopKind::Timeout),
            Streamed::Cancelled => return Next::Stop(StopKind::Cancelled),
            Streamed::Failed {
                error: error @ ProviderError::Interrupted { .. },
                attempts,
            } => return Next::Fail(AgentError::Interrupted { error, attempts }),
            Streamed::Failed { error, .. } => return Next::Fail(AgentError::Provider(error)),
        };
        run.out.input_tokens += completion.usage.input_tokens;
        run.out.output_tokens += completion.usage.output_tokens;
        run.em.emit(AgentEvent::Usage {
            input_tokens: completion.usage.input_tokens,
            output_tokens: completion.usage.output_tokens,
        });
        self.observe_answer(run, &mut completion.message).await;
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
        run.messages.push(Message {
            role: Role::Assistant,
            content: completion.message.content,
        });
        if calls.is_empty() {
            return Next::Stop(StopKind::EndTurn);
        }
        self.run_calls(run, calls, &completion.invalid_inputs).await
    }

    /// Lets `on-after-response` hooks rewrite the answer's text, reports
    /// it when it was not streamed, and keeps it as the run's answer so far.
    async fn observe_answer(&self, run: &mut Run<'_>, message: &mut Message) {
        let mut text = message.text();
        if !text.is_empty() && self.hooks.listens(HookPhase::OnAfterResponse) {
            let mut event = hook_event(HookPhase::OnAfterResponse, "", &run.messages);
            event.response = Some(text.clone());
            if let Some(changed) = self.dispatch(event, &mut run.em).await.response {
                text = changed;
                replace_text(message, &text);
            }
        }
        if self.rewrites_output() && !text.is_empty() {
            run.em.emit(AgentEvent::TextDelta { text: text.clone() });
        }
        if !text.is_empty() {
            run.out.text = text;
        }
    }

    /// Closes the run: skills' usage added, transforms applied, the final
    /// answer (or the error) reported, hooks told, the session updated.
    async fn close(
        &self,
        run: Run<'_>,
        result: Result<(), AgentError>,
        before: Before,
        session: Option<&SessionLog>,
    ) -> Result<RunOutcome, AgentError> {
        let Run {
            mut em,
            mut out,
            messages,
            ..
        } = run;
        out.skill_uses = self.ctx.budget.since(&before.uses);
        if let (Some(u), Some((i0, o0))) = (&self.skill_usage, before.tokens) {
            out.input_tokens += u
                .input_tokens
                .load(std::sync::atomic::Ordering::Relaxed)
                .saturating_sub(i0);
            out.output_tokens += u
                .output_tokens
                .load(std::sync::atomic::Ordering::Relaxed)
                .saturating_sub(o0);
        }
        if let Err(e) = result {
            em.emit(AgentEvent::Error {
                message: e.to_string(),
            });
            self.dispatch_each(HookPhase::OnDeactivate, &messages, &mut em)
                .await;
            em.flush();
            finish_session(session, &out, SessionStatus::Failed, &mut em);
            return Err(e);
        }
        out.text = self.apply_transforms(out.text.clone(), &mut em).await;
        em.emit(AgentEvent::Final {
            text: out.text.clone(),
            turns: out.turns,
            stop: out.stop,
        });
        self.dispatch_each(HookPhase::OnDeactivate, &messages, &mut em)
            .await;
        let status = match out.stop {
            StopKind::EndTurn => SessionStatus::Completed,
            StopKind::MaxTurns | StopKind::Timeout | StopKind::Cancelled => {
                SessionStatus::Interrupted
            }
        };
        em.flush();
        finish_session(session, &out, status, &mut em);
        out.denials = em.denied;
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

    /// Shrinks the conversation to the budget's estimated tokens when over
    /// it: trims old tool outputs, then summarises. Returns the event to
    /// report, if anything changed, and the summarisation's error, if it
    /// failed (the conversation is then left as trimmed). Errs only on the
    /// deadline.
    async fn fit_context(
        &self,
        run: &mut Run<'_>,
    ) -> Result<(Option<AgentEvent>, Option<ProviderError>), ContextTimeout> {
        let budget = run.options.context_budget;
        let messages = &mut run.messages;
        if context::estimate_tokens(messages) <= budget {
            return Ok((None, None));
        }
        let trimmed_results = context::trim_tool_results(messages, budget);
        let mut summarized_messages = 0;
        let mut failed = None;
        if context::estimate_tokens(messages) > budget {
            let summarized = tokio::time::timeout_at(
                run.deadline,
                context::summarize(
                    self.provider.as_ref(),
                    &self.model,
                    self.max_tokens,
                    messages,
                    budget,
                    &run.cancel,
                ),
            )
            .await
            .map_err(|_| ContextTimeout)?;
            match summarized {
                Ok(s) => {
                    if let Some(c) = &s.completion {
                        run.out.input_tokens += c.usage.input_tokens;
                        run.out.output_tokens += c.usage.output_tokens;
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

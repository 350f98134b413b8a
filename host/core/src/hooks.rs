//! Lifecycle hooks: subscriptions and dispatch in priority order.
//!
//! Any skill may export the `hooks` interface. [`HookSet::load`] asks every
//! active skill that does for its subscriptions; [`HookSet::dispatch`] hands
//! one event to the handlers of its phase, lowest priority first (ties in
//! skill-name order). Each handler sees the event as changed by the handlers
//! before it, and the [`HookOutcome`] says what the chain decided.
//!
//! Rules:
//! - `cancel` counts only in `on_before_tool_call`, and stops the chain.
//! - In `on_before_wiki_section` (the wiki generator's assemble stage, via
//!   `agent_wiki_sections::before_section`) `cancel` vetoes the section and
//!   stops the chain, and `response` replaces the section's Markdown.
//! - A replacement tool call (`on_before_tool_call`) may change only the
//!   input: the same id and tool, an input that is a JSON object.
//! - A replacement tool result (`on_after_tool_result`) must keep the id.
//! - Fields that do not apply to the phase are ignored, with a note in
//!   [`HookOutcome::errors`].
//! - A failing hook (trap, timeout, skill error) in `on_before_tool_call`
//!   cancels the call (fail closed); in every other phase it is recorded in
//!   [`HookOutcome::errors`] and the chain goes on.

use std::sync::Arc;

use agent_runtime::inspect::ExportKind;
use agent_runtime::{
    CallContext, HookEvent, HookPhase, HookResult, Runtime, Skill, SkillError, WitToolCall,
    WitToolResult,
};

/// Every phase, in the order of the WIT enum.
pub const ALL_PHASES: [HookPhase; 9] = [
    HookPhase::OnActivate,
    HookPhase::OnDeactivate,
    HookPhase::OnConversationStart,
    HookPhase::OnBeforePromptBuild,
    HookPhase::OnBeforeToolCall,
    HookPhase::OnAfterToolResult,
    HookPhase::OnAfterResponse,
    HookPhase::OnBeforeWikiSection,
    HookPhase::OnSecurityScanComplete,
];

/// The spec's name of a phase (`on_before_tool_call`, ...).
pub fn phase_name(p: HookPhase) -> &'static str {
    match p {
        HookPhase::OnActivate => "on_activate",
        HookPhase::OnDeactivate => "on_deactivate",
        HookPhase::OnConversationStart => "on_conversation_start",
        HookPhase::OnBeforePromptBuild => "on_before_prompt_build",
        HookPhase::OnBeforeToolCall => "on_before_tool_call",
        HookPhase::OnAfterToolResult => "on_after_tool_result",
        HookPhase::OnAfterResponse => "on_after_response",
        HookPhase::OnBeforeWikiSection => "on_before_wiki_section",
        HookPhase::OnSecurityScanComplete => "on_security_scan_complete",
    }
}

/// The phase a spec name ([`phase_name`]) stands for.
pub fn phase_from_name(name: &str) -> Option<HookPhase> {
    ALL_PHASES.into_iter().find(|p| phase_name(*p) == name)
}

/// The phase's bit in [`HookSet`]'s listening mask.
fn bit(p: HookPhase) -> u16 {
    let index = ALL_PHASES.iter().position(|q| *q == p).unwrap_or(0);
    1 << index
}

/// One skill's subscription to one phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subscription {
    /// Index of the skill in the slice given to [`HookSet::load`].
    pub skill: usize,
    /// The skill's name.
    pub skill_name: String,
    /// The phase.
    pub phase: HookPhase,
    /// Lower runs earlier.
    pub priority: i32,
}

/// Every subscription of the active skills, sorted by priority (ascending),
/// then skill name.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    subs: Vec<Subscription>,
    /// Bit `i` set when someone listens to `ALL_PHASES[i]`.
    mask: u16,
}

/// A tool call a hook cancelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCancel {
    /// The skill whose hook cancelled (or failed, which cancels too).
    pub skill: String,
    /// Why; shown to the model.
    pub reason: String,
}

/// One change a hook made, for the session log and the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookChange {
    /// The skill whose hook made it.
    pub skill: String,
    /// The phase.
    pub phase: HookPhase,
    /// `cancelled the call`, `changed the input`, `changed the result`,
    /// `changed the response`, `added to the system prompt`, `vetoed the
    /// section` or `changed the section`.
    pub what: String,
}

/// What a chain of hooks decided for one event.
#[derive(Debug, Clone, Default)]
pub struct HookOutcome {
    /// Set when a hook cancelled the tool call (or failed in
    /// `on_before_tool_call`); the call must not run.
    pub cancelled: Option<HookCancel>,
    /// The final tool call, when a hook changed it.
    pub tool_call: Option<WitToolCall>,
    /// The final tool result, when a hook changed it.
    pub tool_result: Option<WitToolResult>,
    /// The final response text, when a hook changed it.
    pub response: Option<String>,
    /// `(skill, text)` to add to the system prompt, in hook order
    /// (`on_before_prompt_build`).
    pub injected: Vec<(String, String)>,
    /// Every change, in order.
    pub changes: Vec<HookChange>,
    /// Hook failures and ignored fields, each naming the skill.
    pub errors: Vec<String>,
}

impl HookSet {
    /// A set of the given subscriptions, sorted by priority, then skill name
    /// (a skill's second subscription to the same phase is dropped).
    pub fn from_subscriptions(subs: Vec<Subscription>) -> HookSet {
        let mut kept: Vec<Subscription> = Vec::with_capacity(subs.len());
        for s in subs {
            if !kept
                .iter()
                .any(|k| k.skill == s.skill && k.phase == s.phase)
            {
                kept.push(s);
            }
        }
        kept.sort_by(|a, b| {
            a.priority
                .cmp(&b.priority)
                .then_with(|| a.skill_name.cmp(&b.skill_name))
                .then_with(|| a.skill.cmp(&b.skill))
        });
        let mask = kept.iter().fold(0, |m, s| m | bit(s.phase));
        HookSet { subs: kept, mask }
    }

    /// Asks every skill of `active` (indices into `skills`) that exports
    /// `hooks` for its subscriptions. Returns the set and the problems: one
    /// line per skill whose `subscriptions` call failed (that skill gets no
    /// events).
    pub async fn load(
        runtime: &Runtime,
        ctx: &Arc<CallContext>,
        skills: &[Skill],
        active: &[usize],
    ) -> (HookSet, Vec<String>) {
        let mut subs = Vec::new();
        let mut problems = Vec::new();
        for &i in active {
            let Some(skill) = skills.get(i) else { continue };
            if !skill.exports(ExportKind::Hooks) {
                continue;
            }
            match runtime.hook_subscriptions(skill, ctx).await {
                Ok(list) => subs.extend(list.into_iter().map(|s| Subscription {
                    skill: i,
                    skill_name: skill.name().to_string(),
                    phase: s.phase,
                    priority: s.priority,
                })),
                Err(e) => problems.push(format!(
                    "skill `{}`: could not read its hook subscriptions, so its hooks will not run: {e}",
                    skill.name()
                )),
            }
        }
        (HookSet::from_subscriptions(subs), problems)
    }

    /// Whether nobody listens to anything.
    pub fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    /// Whether anybody listens to `phase` (cheap: check before building an
    /// event).
    pub fn listens(&self, phase: HookPhase) -> bool {
        self.mask & bit(phase) != 0
    }

    /// Every subscription, in dispatch order.
    pub fn subscriptions(&self) -> &[Subscription] {
        &self.subs
    }

    /// Hands `event` to every handler of its phase, in order, each seeing
    /// the changes of those before it. `skills` must be the slice given to
    /// [`HookSet::load`]. The event's `skill` field is passed as given (for
    /// tool phases, the caller sets the tool's owner).
    pub async fn dispatch(
        &self,
        runtime: &Runtime,
        ctx: &Arc<CallContext>,
        skills: &[Skill],
        event: HookEvent,
    ) -> HookOutcome {
        let mut chain = Chain::new(event);
        if !self.listens(chain.event.phase) {
            return chain.finish();
        }
        let phase = chain.event.phase;
        for sub in self.subs.iter().filter(|s| s.phase == phase) {
            let answer = match skills.get(sub.skill) {
                Some(skill) if skill.name() == sub.skill_name => {
                    match runtime.on_event(skill, ctx, &chain.event).await {
                        Ok(Ok(result)) => Ok(result),
                        Ok(Err(e)) => Err(format!(
                            "skill `{}`: its {} hook failed: {}",
                            sub.skill_name,
                            phase_name(phase),
                            skill_error_text(&e)
                        )),
                        Err(e) => Err(format!(
                            "skill `{}`: its {} hook failed: {e}",
                            sub.skill_name,
                            phase_name(phase)
                        )),
                    }
                }
                _ => Err(format!(
                    "skill `{}`: its {} hook could not run: the skill is not in the list it was loaded from",
                    sub.skill_name,
                    phase_name(phase)
                )),
            };
            if chain.apply(&sub.skill_name, answer) == Flow::Stop {
                break;
            }
        }
        chain.finish()
    }
}

/// A skill error as text, with its kind.
fn skill_error_text(e: &SkillError) -> String {
    match e {
        SkillError::InvalidInput(s) => format!("invalid input: {s}"),
        SkillError::NotFound(s) => format!("not found: {s}"),
        SkillError::Denied(s) => format!("denied: {s}"),
        SkillError::Failed(s) => s.clone(),
    }
}

/// Whether the chain goes on after a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

/// One dispatch in progress: the event as changed so far and the outcome.
struct Chain {
    event: HookEvent,
    out: HookOutcome,
    call_changed: bool,
    result_changed: bool,
    response_changed: bool,
}

impl Chain {
    fn new(event: HookEvent) -> Chain {
        Chain {
            event,
            out: HookOutcome::default(),
            call_changed: false,
            result_changed: false,
            response_changed: false,
        }
    }

    fn finish(mut self) -> HookOutcome {
        if self.call_changed {
            self.out.tool_call = self.event.tool_call.take();
        }
        if self.result_changed {
            self.out.tool_result = self.event.tool_result.take();
        }
        if self.response_changed {
            self.out.response = self.event.response.take();
        }
        self.out
    }

    fn change(&mut self, skill: &str, what: &str) {
        self.out.changes.push(HookChange {
            skill: skill.to_string(),
            phase: self.event.phase,
            what: what.to_string(),
        });
    }

    fn ignored(&mut self, skill: &str, field: &str, why: &str) {
        self.out.errors.push(format!(
            "skill `{skill}`: its {} hook returned `{field}`, ignored: {why}",
            phase_name(self.event.phase)
        ));
    }

    /// Applies one hook's answer (`Err`: the hook failed, message naming
    /// the skill).
    fn apply(&mut self, skill: &str, answer: Result<HookResult, String>) -> Flow {
        let phase = self.event.phase;
        let result = match answer {
            Ok(r) => r,
            Err(message) => {
                if phase == HookPhase::OnBeforeToolCall {
                    self.out.cancelled = Some(HookCancel {
                        skill: skill.to_string(),
                        reason: format!("the call was cancelled because a hook failed: {message}"),
                    });
                    self.change(skill, "cancelled the call");
                    self.out.errors.push(message);
                    return Flow::Stop;
                }
                self.out.errors.push(message);
                return Flow::Continue;
            }
        };
        let HookResult {
            cancel,
            cancel_reason,
            tool_call,
            tool_result,
            response,
            inject_prompt,
        } = result;

        // cancel
        if cancel && phase == HookPhase::OnBeforeWikiSection {
            let reason = cancel_reason
                .filter(|r| !r.trim().is_empty())
                .unwrap_or_else(|| format!("vetoed by a hook of skill `{skill}`"));
            self.out.cancelled = Some(HookCancel {
                skill: skill.to_string(),
                reason,
            });
            self.change(skill, "vetoed the section");
            if response.is_some() {
                self.ignored(skill, "response", "the hook vetoed the section");
            }
            return Flow::Stop;
        }
        if cancel {
            if phase == HookPhase::OnBeforeToolCall {
                let reason = cancel_reason
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or_else(|| format!("cancelled by a hook of skill `{skill}`"));
                self.out.cancelled = Some(HookCancel {
                    skill: skill.to_string(),
                    reason,
                });
                self.change(skill, "cancelled the call");
                for (set, field) in [
                    (tool_call.is_some(), "tool-call"),
                    (tool_result.is_some(), "tool-result"),
                    (response.is_some(), "response"),
                    (inject_prompt.is_some(), "inject-prompt"),
                ] {
                    if set {
                        self.ignored(skill, field, "the hook cancelled the call");
                    }
                }
                return Flow::Stop;
            }
            self.ignored(
                skill,
                "cancel",
                "only on_before_tool_call can cancel anything",
            );
        }

        // tool-call
        if let Some(new) = tool_call {
            if phase != HookPhase::OnBeforeToolCall {
                self.ignored(skill, "tool-call", "it applies to on_before_tool_call only");
            } else {
                self.replace_call(skill, new);
            }
        }

        // tool-result
        if let Some(new) = tool_result {
            if phase != HookPhase::OnAfterToolResult {
                self.ignored(
                    skill,
                    "tool-result",
                    "it applies to on_after_tool_result only",
                );
            } else {
                self.replace_result(skill, new);
            }
        }

        // response
        if let Some(new) = response {
            let wiki = phase == HookPhase::OnBeforeWikiSection;
            if phase != HookPhase::OnAfterResponse && !wiki {
                self.ignored(
                    skill,
                    "response",
                    "it applies to on_after_response and on_before_wiki_section only",
                );
            } else if self.event.response.as_deref() != Some(new.as_str()) {
                self.event.response = Some(new);
                self.response_changed = true;
                let what = if wiki {
                    "changed the section"
                } else {
                    "changed the response"
                };
                self.change(skill, what);
            }
        }

        // inject-prompt
        if let Some(text) = inject_prompt {
            if phase != HookPhase::OnBeforePromptBuild {
                self.ignored(
                    skill,
                    "inject-prompt",
                    "it applies to on_before_prompt_build only",
                );
            } else if !text.trim().is_empty() {
                self.out.injected.push((skill.to_string(), text));
                self.change(skill, "added to the system prompt");
            }
        }
        Flow::Continue
    }

    fn replace_call(&mut self, skill: &str, new: WitToolCall) {
        let Some(current) = &self.event.tool_call else {
            self.ignored(skill, "tool-call", "the event has no tool call to change");
            return;
        };
        if new.id != current.id || new.tool != current.tool {
            let why = format!(
                "a hook may change only the input (the call is `{}` id `{}`, the hook returned `{}` id `{}`)",
                current.tool, current.id, new.tool, new.id
            );
            self.ignored(skill, "tool-call", &why);
            return;
        }
        let input = match agent_bounded::parse_json::<serde_json::Value>(
            &new.input,
            "input",
            agent_bounded::Limits::MESSAGE,
        ) {
            Ok(v @ serde_json::Value::Object(_)) => v,
            Ok(_) => {
                self.ignored(skill, "tool-call", "its input is not a JSON object");
                return;
            }
            Err(agent_bounded::Error::Limit(e)) => {
                let why = format!("its input is refused: {}", e.reason());
                self.ignored(skill, "tool-call", &why);
                return;
            }
            Err(agent_bounded::Error::Parse(e)) => {
                let why = format!("its input is not JSON: {e}");
                self.ignored(skill, "tool-call", &why);
                return;
            }
        };
        let same = agent_bounded::parse_json::<serde_json::Value>(
            &current.input,
            "input",
            agent_bounded::Limits::MESSAGE,
        )
        .is_ok_and(|old| old == input);
        if !same {
            self.event.tool_call = Some(new);
            self.call_changed = true;
            self.change(skill, "changed the input");
        }
    }

    fn replace_result(&mut self, skill: &str, new: WitToolResult) {
        let Some(current) = &self.event.tool_result else {
            self.ignored(
                skill,
                "tool-result",
                "the event has no tool result to change",
            );
            return;
        };
        if new.id != current.id {
            let why = format!(
                "a hook may not change the result's id (`{}` became `{}`)",
                current.id, new.id
            );
            self.ignored(skill, "tool-result", &why);
            return;
        }
        if new.output != current.output || new.is_error != current.is_error {
            self.event.tool_result = Some(new);
            self.result_changed = true;
            self.change(skill, "changed the result");
        }
    }
}

#[cfg(test)]
mod tests;

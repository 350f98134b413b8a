//! The one tool router: every tool or workflow call, whether the model asked
//! for it or a skill did through `skills.invoke`, goes through
//! `ToolRouter::route`, in this order:
//!
//! 1. **lookup** — the model's name among the run's tools, or the skill and
//!    function among the loaded skills;
//! 2. **constraints** — the active skills' merged `allowed_tools` /
//!    `forbidden_tools`;
//! 3. **`--tools`** — the run's allowlist of the model's tools;
//! 4. **hooks before** — `on-before-tool-call` may cancel the call or change
//!    its input;
//! 5. **schema** — the input against the tool's input schema;
//! 6. **approval** — a tool that [`requires_approval`] asks the
//!    [`ApprovalGate`];
//! 7. **call** — the tool or workflow runs in its own instance with its own
//!    grants; the grants audit every capability it uses or is refused, and
//!    the run reports each refusal as it happens (a [`crate::HostTool`]
//!    runs in the host instead: same steps before and after, only this one
//!    differs);
//! 8. **hooks after** — `on-after-tool-result` may rewrite the result.
//!
//! Events report each step of the model's calls ([`AgentEvent::ToolCall`],
//! [`AgentEvent::Refused`], [`AgentEvent::Approval`], hook changes).
//!
//! The two callers differ in four named ways, given by `Caller`: a skill's
//! call skips steps 3, 4 and 8 (`--tools` names the model's tools, and hooks
//! watch the conversation, which a skill's inner call is not part of),
//! reports no events of its own (it runs inside a model's tool call, whose
//! events and denials report it), and runs in a nested context of its
//! caller's (one level deeper, so that invocation depth is bounded).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_policy::Merged;
use agent_providers::Message;
use agent_runtime::{
    CallContext, CallError, ExportKind, HookPhase, Runtime, Skill, SkillError, ToolOutput,
    ToolSpec, WitToolCall, WitToolResult,
};

use crate::hook_calls::{dispatch, hook_event};
use crate::hooks::HookSet;
use crate::host_tool::HostToolRef;
use crate::session_log::Emitter;
use crate::{AgentEvent, AgentTool};

/// Decides whether a tool that [`requires_approval`] may run.
pub trait ApprovalGate: Send + Sync {
    /// Whether `skill`'s `tool` may run with `input_json`. Must not block on
    /// user input in headless runs.
    fn approve_tool(&self, skill: &str, tool: &str, input_json: &str) -> bool;

    /// Why a tool was not approved, in the words of the interface that
    /// decided (the user's next step there); shown after "not approved: ".
    fn refusal(&self) -> String;
}

/// Whether `skill`'s tool `spec` asks before it runs: when the component's
/// spec says so or the skill's signed manifest does. The one place this is
/// decided; [`crate::collect_tools`] and `skills.invoke` both take it from
/// here.
pub fn requires_approval(skill: &Skill, spec: &ToolSpec) -> bool {
    spec.requires_approval
        || skill
            .manifest
            .tool(&spec.name)
            .is_some_and(|d| d.requires_approval)
}

/// A tool's own error as the model reads it.
pub(crate) fn skill_error_text(e: &SkillError) -> String {
    match e {
        SkillError::InvalidInput(m) => format!("invalid input: {m}"),
        SkillError::NotFound(m) => format!("not found: {m}"),
        SkillError::Denied(m) => format!("denied: {m}"),
        SkillError::Failed(m) => format!("failed: {m}"),
    }
}

/// What a caller may call: a tool or a workflow of a loaded skill.
#[derive(Debug, Clone)]
pub(crate) struct Function {
    /// Its own name (the model may know it under `<skill>__<name>`).
    pub(crate) name: String,
    /// Whether it is a workflow (run with `run-workflow`).
    pub(crate) workflow: bool,
    /// Its input schema.
    pub(crate) schema: String,
    /// See [`requires_approval`].
    pub(crate) requires_approval: bool,
}

/// Who asks for a call, and what differs between them.
pub(crate) enum Caller<'c, 's> {
    /// The model's tool call `id`, under the name the model sees. Its
    /// `--tools` allowlist applies, `hooks` watch it (they see `messages`),
    /// every step is reported to `em`, and it runs in the run's `ctx`.
    Model {
        id: &'c str,
        name: &'c str,
        value: &'c serde_json::Value,
        tools: &'c [AgentTool],
        allowlist: Option<&'c [String]>,
        hooks: &'c HookSet,
        messages: &'c [Message],
        ctx: &'c Arc<CallContext>,
        em: &'c mut Emitter<'s>,
    },
    /// Skill `caller` through `skills.invoke`, asking for `function` of
    /// `skill` (what each skill offers is listed once, in `functions`). No `--tools`, no
    /// hooks, no events; runs in a context nested in the caller's `ctx`.
    Skill {
        caller: &'c str,
        skill: &'c str,
        function: &'c str,
        functions: &'c Functions,
        ctx: &'c Arc<CallContext>,
    },
}

/// How a routed call ended.
#[derive(Debug)]
pub(crate) enum Routed {
    /// No such skill, tool or workflow (for the model: not offered), in
    /// the caller's words.
    NotFound(String),
    /// The constraints, a hook or the approval gate refused it.
    Refused(String),
    /// Its input does not match its schema.
    Invalid(String),
    /// It ran: its output, or its own error.
    Ran(Result<ToolOutput, SkillError>),
    /// The host failed running it (trap, timeout, memory).
    Failed(CallError),
    /// It ran and a hook rewrote the result (model calls only).
    Rewritten {
        /// The output.
        output: String,
        /// Whether it is an error.
        is_error: bool,
    },
}

impl Routed {
    /// The result as the model reads it: the text and whether it failed.
    pub(crate) fn model_text(self) -> (String, bool) {
        match self {
            Routed::NotFound(t) | Routed::Refused(t) | Routed::Invalid(t) => (t, true),
            Routed::Ran(Ok(out)) => (out.text, false),
            Routed::Ran(Err(e)) => (skill_error_text(&e), true),
            Routed::Failed(e) => (e.to_string(), true),
            Routed::Rewritten { output, is_error } => (output, is_error),
        }
    }
}

/// Routes calls to the loaded `skills` (see the module documentation).
pub(crate) struct ToolRouter<'r> {
    /// The runtime.
    pub(crate) runtime: &'r Runtime,
    /// Every loaded skill.
    pub(crate) skills: &'r [Skill],
    /// Decides tools that require approval.
    pub(crate) gate: &'r dyn ApprovalGate,
    /// The active skills' merged constraints, if known.
    pub(crate) constraints: Option<&'r Merged>,
}

/// The callee of a call that was found.
struct Target {
    /// Index in the loaded skills.
    skill: usize,
    /// The skill's name.
    skill_name: String,
    /// The function.
    function: Function,
    /// The host tool to call instead of a component's, if it is one.
    host: Option<HostToolRef>,
}

impl ToolRouter<'_> {
    /// Routes one call with JSON `input` through every step, in order.
    /// Returns the callee skill's name (empty when none was found) and how
    /// the call ended.
    pub(crate) async fn route(&self, caller: Caller<'_, '_>, input: String) -> (String, Routed) {
        let mut caller = caller;
        let mut input = input;
        // 1-3. Lookup, constraints, --tools.
        let target = match self.find(&mut caller).await {
            Ok(t) => t,
            Err(refusal) => return (String::new(), refusal),
        };
        let skill_name = target.skill_name.clone();
        // 4. Hooks before.
        if let Some(refused) = self.before(&mut caller, &target, &mut input).await {
            return (skill_name, refused);
        }
        // 5. Schema.
        let function = &target.function;
        if let Err(problem) = agent_runtime::schema::check_input(&function.schema, &input) {
            let what = match &caller {
                Caller::Model { name, .. } => format!("`{name}`"),
                Caller::Skill {
                    skill, function, ..
                } => format!("`{skill}`/`{function}`"),
            };
            let problem = format!("invalid input for {what}: {problem}");
            return (skill_name, Routed::Invalid(problem));
        }
        // 6. Approval.
        if let Some(refused) = self.approve(&mut caller, &target, &input) {
            return (skill_name, refused);
        }
        // 7. Call.
        if let Some(HostToolRef(tool)) = &target.host {
            let routed = Routed::Ran(tool.call(&input).await);
            let routed = self.after(caller, &target, &input, routed).await;
            return (skill_name, routed);
        }
        let Some(skill) = self.skills.get(target.skill) else {
            let name = match &caller {
                Caller::Model { name, .. } => name,
                Caller::Skill { function, .. } => function,
            };
            return (
                skill_name,
                Routed::NotFound(format!("unknown tool `{name}`")),
            );
        };
        let ran = match &mut caller {
            Caller::Model { ctx, em, .. } => {
                reporting_denials(self.call(skill, ctx, function, &input), em).await
            }
            Caller::Skill { ctx, .. } => {
                let nested = Arc::new(ctx.nested());
                self.call(skill, &nested, function, &input).await
            }
        };
        let routed = match ran {
            Ok(result) => Routed::Ran(result),
            Err(e) => Routed::Failed(e),
        };
        // 8. Hooks after.
        let routed = self.after(caller, &target, &input, routed).await;
        (skill_name, routed)
    }

    /// Step 4, the model's calls only: reports the call and lets
    /// `on-before-tool-call` hooks cancel it or change its `input`.
    async fn before(
        &self,
        caller: &mut Caller<'_, '_>,
        target: &Target,
        input: &mut String,
    ) -> Option<Routed> {
        let Caller::Model {
            id,
            name,
            value,
            hooks,
            messages,
            ctx,
            em,
            ..
        } = caller
        else {
            return None;
        };
        em.emit(AgentEvent::ToolCall {
            id: id.to_string(),
            skill: target.skill_name.clone(),
            tool: target.function.name.clone(),
            name: name.to_string(),
            input: (*value).clone(),
        });
        if !hooks.listens(HookPhase::OnBeforeToolCall) {
            return None;
        }
        let mut event = hook_event(HookPhase::OnBeforeToolCall, &target.skill_name, messages);
        event.tool_call = Some(WitToolCall {
            id: id.to_string(),
            tool: target.function.name.clone(),
            input: input.clone(),
        });
        let o = dispatch(hooks, self.runtime, ctx, self.skills, event, em).await;
        if let Some(c) = o.cancelled {
            em.emit(AgentEvent::Refused {
                id: id.to_string(),
                tool: name.to_string(),
                by: format!("hook:{}", c.skill),
                reason: c.reason.clone(),
            });
            let why = format!("cancelled by hook `{}`: {}", c.skill, c.reason);
            return Some(Routed::Refused(why));
        }
        if let Some(changed) = o.tool_call {
            *input = changed.input;
        }
        None
    }

    /// Step 6: a tool that [`requires_approval`] asks the gate; the model's
    /// calls report the answer.
    fn approve(&self, caller: &mut Caller<'_, '_>, target: &Target, input: &str) -> Option<Routed> {
        let function = &target.function;
        if !function.requires_approval {
            return None;
        }
        let approved = self
            .gate
            .approve_tool(&target.skill_name, &function.name, input);
        match caller {
            Caller::Model { name, em, .. } => {
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
                (!approved).then(|| {
                    Routed::Refused(format!("tool `{name}` was not run: not approved: {reason}"))
                })
            }
            Caller::Skill {
                caller,
                skill,
                function,
                ..
            } => (!approved).then(|| {
                Routed::Refused(format!(
                    "`{skill}`/`{function}` (called by `{caller}`) needs approval, and this run did not approve it"
                ))
            }),
        }
    }

    /// Step 8, the model's calls only: `on-after-tool-result` hooks may
    /// rewrite the result.
    async fn after(
        &self,
        caller: Caller<'_, '_>,
        target: &Target,
        input: &str,
        routed: Routed,
    ) -> Routed {
        let Caller::Model {
            id,
            hooks,
            messages,
            ctx,
            em,
            ..
        } = caller
        else {
            return routed;
        };
        if !hooks.listens(HookPhase::OnAfterToolResult) {
            return routed;
        }
        let (output, is_error) = routed.model_text();
        let mut event = hook_event(HookPhase::OnAfterToolResult, &target.skill_name, messages);
        event.tool_call = Some(WitToolCall {
            id: id.to_string(),
            tool: target.function.name.clone(),
            input: input.to_string(),
        });
        event.tool_result = Some(WitToolResult {
            id: id.to_string(),
            output: output.clone(),
            is_error,
        });
        let rewritten = dispatch(hooks, self.runtime, ctx, self.skills, event, em)
            .await
            .tool_result;
        match rewritten {
            Some(r) => Routed::Rewritten {
                output: r.output,
                is_error: r.is_error,
            },
            None => Routed::Rewritten { output, is_error },
        }
    }

    /// Steps 1-3: finds the callee and checks the constraints and `--tools`.
    async fn find(&self, caller: &mut Caller<'_, '_>) -> Result<Target, Routed> {
        match caller {
            Caller::Model {
                id,
                name,
                value,
                tools,
                allowlist,
                em,
                ..
            } => {
                let found = tools.iter().find(|t| t.name == **name);
                let refusal = match found {
                    None => Some((format!("unknown tool `{name}`"), None)),
                    Some(t) => match constraint_refusal(self.constraints, &t.name, &t.spec.name) {
                        Some(why) => Some((format!("refused: {why}"), Some(why))),
                        None if !listed(allowlist.as_deref(), t) => Some((
                            format!("tool `{name}` is not allowed in this run (not in --tools)"),
                            None,
                        )),
                        None => None,
                    },
                };
                if let Some((text, constraint)) = refusal {
                    em.emit(AgentEvent::ToolCall {
                        id: id.to_string(),
                        skill: String::new(),
                        tool: name.to_string(),
                        name: name.to_string(),
                        input: (*value).clone(),
                    });
                    if let Some(reason) = constraint {
                        em.emit(AgentEvent::Refused {
                            id: id.to_string(),
                            tool: name.to_string(),
                            by: "constraints".to_string(),
                            reason,
                        });
                        return Err(Routed::Refused(text));
                    }
                    return Err(Routed::NotFound(text));
                }
                let t = found.expect("checked above");
                Ok(Target {
                    skill: t.skill,
                    skill_name: t.skill_name.clone(),
                    function: Function {
                        name: t.spec.name.clone(),
                        workflow: t.workflow,
                        schema: t.spec.input_schema.clone(),
                        requires_approval: t.spec.requires_approval,
                    },
                    host: t.host.clone(),
                })
            }
            Caller::Skill {
                skill,
                function,
                functions,
                ctx,
                ..
            } => {
                let Some(index) = self.skills.iter().position(|s| s.name() == *skill) else {
                    let names: Vec<&str> = self.skills.iter().map(Skill::name).collect();
                    return Err(Routed::NotFound(format!(
                        "no skill named `{skill}` is loaded (loaded: {}; see `agent skill list`)",
                        or_none(&names)
                    )));
                };
                let callee = &self.skills[index];
                let listed = functions
                    .list(self.runtime, ctx, callee)
                    .await
                    .map_err(Routed::Failed)?;
                let Some(f) = listed.iter().find(|f| f.name == *function) else {
                    let names: Vec<&str> = listed.iter().map(|f| f.name.as_str()).collect();
                    return Err(Routed::NotFound(format!(
                        "skill `{skill}` has no tool or workflow `{function}` (it has: {})",
                        or_none(&names)
                    )));
                };
                if let Some(why) = constraint_refusal(self.constraints, function, function) {
                    return Err(Routed::Refused(why));
                }
                Ok(Target {
                    skill: index,
                    skill_name: skill.to_string(),
                    function: f.clone(),
                    host: None,
                })
            }
        }
    }

    /// Runs `function` of `skill` in `ctx`.
    async fn call(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
        function: &Function,
        input: &str,
    ) -> Result<Result<ToolOutput, SkillError>, CallError> {
        let ran = if function.workflow {
            self.runtime
                .run_workflow(skill, ctx, &function.name, input)
                .await
        } else {
            self.runtime
                .call_tool(skill, ctx, &function.name, input)
                .await
        };
        ran.map(|(result, _logs)| result)
    }
}

/// Waits for `call`, reporting each refusal of the grants as it happens
/// (the call may go on after one, or run long).
async fn reporting_denials<T>(call: impl Future<Output = T>, em: &mut Emitter<'_>) -> T {
    let mut call = std::pin::pin!(call);
    loop {
        tokio::select! {
            biased;
            done = &mut call => return done,
            Some(denial) = em.next_denial() => em.denial(denial),
        }
    }
}

/// Why the merged skill `constraints` refuse a tool known by `name` (and by
/// its own name `own`), if they do.
pub(crate) fn constraint_refusal(
    constraints: Option<&Merged>,
    name: &str,
    own: &str,
) -> Option<String> {
    let c = constraints?;
    c.check_tool(own)
        .and_then(|()| {
            if name == own {
                Ok(())
            } else {
                c.check_tool(name)
            }
        })
        .err()
}

/// Whether `--tools` lists `t`, under the name the model sees or its own
/// (`None`: every tool is listed).
pub(crate) fn listed(allowlist: Option<&[String]>, t: &AgentTool) -> bool {
    allowlist.is_none_or(|a| a.iter().any(|n| n == &t.name || n == &t.spec.name))
}

fn or_none(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The tools and workflows each skill offers to `skills.invoke`, listed
/// once per skill.
#[derive(Default)]
pub(crate) struct Functions {
    listed: Mutex<HashMap<String, Arc<Vec<Function>>>>,
}

impl Functions {
    /// What `skill` offers, listed on first use.
    async fn list(
        &self,
        runtime: &Runtime,
        ctx: &Arc<CallContext>,
        skill: &Skill,
    ) -> Result<Arc<Vec<Function>>, CallError> {
        if let Some(f) = self
            .listed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(skill.name())
        {
            return Ok(f.clone());
        }
        let mut out = Vec::new();
        if skill.exports(ExportKind::Tool) {
            for t in runtime.list_tools(skill, ctx).await? {
                out.push(Function {
                    requires_approval: requires_approval(skill, &t),
                    name: t.name,
                    workflow: false,
                    schema: t.input_schema,
                });
            }
        }
        if skill.exports(ExportKind::Workflow) {
            for w in runtime.list_workflows(skill, ctx).await? {
                out.push(Function {
                    name: w.name,
                    workflow: true,
                    schema: w.input_schema,
                    requires_approval: false,
                });
            }
        }
        let out = Arc::new(out);
        self.listed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(skill.name().to_string(), out.clone());
        Ok(out)
    }
}

//! The [`Agent`]: everything one run needs, put together with an
//! [`AgentBuilder`].
//!
//! ```ignore
//! let agent = Agent::builder(provider, &runtime, ctx, &skills, gate)
//!     .model(&model)
//!     .limits(RunLimits { max_turns, timeout })
//!     .setup(setup)            // tools, hooks, transforms, constraints, system prompt
//!     .allowlist(tools)        // --tools (None: every offered tool)
//!     .grants(grants)          // denials are reported as they happen
//!     .max_tokens(MAX_TOKENS)
//!     .skill_usage(usage)      // skills' model requests count against the run
//!     .format("text")
//!     .build();
//! let outcome = agent.run_with(history, &prompt, Some(session), &mut sink, options).await?;
//! ```

use std::sync::Arc;

use agent_policy::{Merged, SkillConstraint, merge};
use agent_providers::{CancellationToken, Provider};
use agent_runtime::{CallContext, GrantsAuthorizer, HookPhase, Runtime, Skill};

use crate::router::{constraint_refusal, listed};
use crate::{AgentTool, ApprovalGate, HookSet, HostToolSource, RunLimits, Setup, SkillUsage};

/// Everything one run needs. Built with [`Agent::builder`]; run with
/// [`Agent::run`] or [`Agent::run_with`].
pub struct Agent<'a> {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) model: String,
    pub(crate) runtime: &'a Runtime,
    pub(crate) ctx: Arc<CallContext>,
    pub(crate) skills: &'a [Skill],
    pub(crate) tools: Vec<AgentTool>,
    pub(crate) allowlist: Option<Vec<String>>,
    pub(crate) grants: Option<Arc<GrantsAuthorizer>>,
    pub(crate) gate: &'a dyn ApprovalGate,
    pub(crate) system: String,
    pub(crate) limits: RunLimits,
    pub(crate) max_tokens: u32,
    pub(crate) activated: Vec<(String, String)>,
    pub(crate) hooks: HookSet,
    pub(crate) transforms: Vec<usize>,
    pub(crate) constraints: Option<Arc<Merged>>,
    pub(crate) mode: String,
    pub(crate) format: String,
    pub(crate) skill_usage: Option<Arc<SkillUsage>>,
    pub(crate) cancel: Option<CancellationToken>,
    /// Sources whose constraints and model are asked again during the run (see
    /// [`AgentBuilder::host_sources`]), and the components' constraints they merge with.
    pub(crate) host_sources: Vec<Arc<dyn HostToolSource>>,
    pub(crate) base_constraints: Vec<SkillConstraint>,
}

/// Puts an [`Agent`] together: what every run needs is given to
/// [`Agent::builder`], the rest has a default named on its setter.
pub struct AgentBuilder<'a> {
    agent: Agent<'a>,
}

impl<'a> Agent<'a> {
    /// Starts an agent over `provider`, running tools of `skills` through
    /// `runtime` in `ctx`, asking `gate` about tools that require approval.
    /// Until the setters say otherwise: the provider's configured model, no
    /// tools, hooks, transforms or constraints, an empty system prompt,
    /// [`RunLimits::default`], 4096 `max_tokens`, mode `headless`, format
    /// `text`, not cancellable, denials not reported.
    pub fn builder(
        provider: Arc<dyn Provider>,
        runtime: &'a Runtime,
        ctx: Arc<CallContext>,
        skills: &'a [Skill],
        gate: &'a dyn ApprovalGate,
    ) -> AgentBuilder<'a> {
        AgentBuilder {
            agent: Agent {
                provider,
                model: String::new(),
                runtime,
                ctx,
                skills,
                tools: Vec::new(),
                allowlist: None,
                grants: None,
                gate,
                system: String::new(),
                limits: RunLimits::default(),
                max_tokens: 4096,
                activated: Vec::new(),
                hooks: HookSet::default(),
                transforms: Vec::new(),
                constraints: None,
                mode: "headless".to_string(),
                format: "text".to_string(),
                skill_usage: None,
                cancel: None,
                host_sources: Vec::new(),
                base_constraints: Vec::new(),
            },
        }
    }

    /// The tools offered to the model before `--tools` and the constraints
    /// (see [`crate::collect_tools`]).
    pub fn tools(&self) -> &[AgentTool] {
        &self.tools
    }

    /// The model name (empty: the provider's configured model).
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The system prompt.
    pub fn system(&self) -> &str {
        &self.system
    }

    /// The active skills and why, as reported at the start of a run.
    pub fn activated(&self) -> &[(String, String)] {
        &self.activated
    }

    /// The turn and time limits after the skills' constraints (a skill's
    /// `max_steps` / `max_duration` lower the builder's
    /// [`AgentBuilder::limits`]).
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

    /// Whether hooks or transforms may rewrite the model's text: then text
    /// deltas are not streamed as they arrive, and each response's final
    /// text is reported once, after the rewrite.
    pub fn rewrites_output(&self) -> bool {
        !self.transforms.is_empty() || self.hooks.listens(HookPhase::OnAfterResponse)
    }

    /// The constraints a tool call is routed under now: with host sources, the components'
    /// merged with what the sources say at this moment (an instruction skill loaded earlier
    /// in this turn counts); otherwise the run's.
    pub(crate) fn current_constraints(&self) -> Option<Arc<Merged>> {
        let live: Vec<SkillConstraint> = self
            .host_sources
            .iter()
            .flat_map(|h| h.constraints())
            .collect();
        if live.is_empty() {
            return self.constraints.clone();
        }
        let mut all = self.base_constraints.clone();
        all.extend(live);
        Some(Arc::new(merge(&all)))
    }

    /// The model of the next request: the first host source's that asks for one (an
    /// instruction skill's `model:` while it is active), else the run's.
    pub(crate) fn current_model(&self) -> String {
        self.host_sources
            .iter()
            .find_map(|h| h.model())
            .unwrap_or_else(|| self.model.clone())
    }

    /// Whether `--tools` lists `t` (under the name the model sees or its
    /// own) and the constraints allow it.
    fn permitted(&self, t: &AgentTool) -> bool {
        listed(self.allowlist.as_deref(), t)
            && constraint_refusal(self.constraints.as_deref(), &t.name, &t.spec.name).is_none()
    }

    /// The tools offered to the model in this run.
    pub(crate) fn offered(&self) -> Vec<&AgentTool> {
        self.tools.iter().filter(|t| self.permitted(t)).collect()
    }
}

impl<'a> AgentBuilder<'a> {
    /// The model name (default: empty, the provider's configured model).
    pub fn model(mut self, model: &str) -> Self {
        self.agent.model = model.to_string();
        self
    }

    /// The system prompt (default: empty; [`AgentBuilder::setup`] sets it).
    pub fn system(mut self, system: String) -> Self {
        self.agent.system = system;
        self
    }

    /// The turn and time limits (default: [`RunLimits::default`]).
    pub fn limits(mut self, limits: RunLimits) -> Self {
        self.agent.limits = limits;
        self
    }

    /// `max_tokens` per request (default 4096).
    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.agent.max_tokens = max_tokens;
        self
    }

    /// Takes the skills' part from a [`Setup`]: tools, hooks, transforms,
    /// constraints, the system prompt and the activation report.
    pub fn setup(mut self, setup: Setup) -> Self {
        self.agent.tools = setup.tools;
        self.agent.hooks = setup.hooks;
        self.agent.transforms = setup.transforms;
        self.agent.constraints = Some(setup.constraints);
        self.agent.system = setup.system;
        self.agent.activated = setup.activation.reasons;
        self
    }

    /// The merged constraints (default: none; [`AgentBuilder::setup`] sets them).
    pub fn constraints(mut self, constraints: Arc<Merged>) -> Self {
        self.agent.constraints = Some(constraints);
        self
    }

    /// Host tool sources asked again during the run: their constraints, merged with `base`
    /// (the components'), after every tool call, and their model before every request
    /// (default: none; the constraints and model stay as built).
    pub fn host_sources(
        mut self,
        base: Vec<SkillConstraint>,
        sources: Vec<Arc<dyn HostToolSource>>,
    ) -> Self {
        self.agent.base_constraints = base;
        self.agent.host_sources = sources;
        self
    }

    /// The tools offered (default: none; [`AgentBuilder::setup`] sets them).
    pub fn tools(mut self, tools: Vec<AgentTool>) -> Self {
        self.agent.tools = tools;
        self
    }

    /// Only these tool names may be offered and run (`--tools`; default
    /// `None`: all).
    pub fn allowlist(mut self, allowlist: Option<Vec<String>>) -> Self {
        self.agent.allowlist = allowlist;
        self
    }

    /// The run's grants: each refusal is reported as an
    /// [`crate::AgentEvent::Denial`] when it happens and listed in
    /// [`crate::RunOutcome::denials`] (default: none, denials are not
    /// reported).
    pub fn grants(mut self, grants: Arc<GrantsAuthorizer>) -> Self {
        self.agent.grants = Some(grants);
        self
    }

    /// The mode, for transforms (`headless`, `interactive`...; default
    /// `headless`).
    pub fn mode(mut self, mode: &str) -> Self {
        self.agent.mode = mode.to_string();
        self
    }

    /// The output format, for transforms (`text`, `markdown`, `json`...;
    /// default `text`).
    pub fn format(mut self, format: &str) -> Self {
        self.agent.format = format.to_string();
        self
    }

    /// Usage of skills' own model requests, added to the run's (default:
    /// none).
    pub fn skill_usage(mut self, usage: Option<Arc<SkillUsage>>) -> Self {
        self.agent.skill_usage = usage;
        self
    }

    /// Cancels the run from outside (the TUI's Esc): the model request in
    /// flight is aborted, tool calls not yet started are not run, and the
    /// run ends with [`crate::StopKind::Cancelled`] (default: not
    /// cancellable).
    pub fn cancel(mut self, cancel: CancellationToken) -> Self {
        self.agent.cancel = Some(cancel);
        self
    }

    /// The agent.
    pub fn build(self) -> Agent<'a> {
        self.agent
    }
}

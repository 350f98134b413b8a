//! The one place an agent is assembled from the configuration, for every
//! frontend: provider, skills, grants, the approval gate, the services
//! skills reach (model, other skills), the loop's options. The result is the
//! parts of an [`agent_core::Session`]; the frontend spawns it and renders
//! its events (`agent run` in `commands/run.rs`, the interface in
//! `commands/tui.rs`). `agent workflow run` takes its gate, provider and
//! services from here too.

use std::sync::Arc;
use std::time::Duration;

use agent_config::{Config, ProviderKind};
use agent_core::session::{Approvals, SessionOptions, SessionParts, ToolFilter};
use agent_core::{ApprovalGate, HostToolSource, RunLimits};
use agent_manifest::{Mode, Permission};
use agent_policy::AllowList;
use agent_providers::{
    AnthropicProvider, OllamaProvider, OpenAiProvider, Provider, ProviderConfig,
};
use agent_runtime::Skill;
use anyhow::Result;

use crate::app::{App, MAX_TOKENS, permission_status};
use crate::approval_mode::ModeGate;
use crate::cli::{ProviderArgs, ProviderName};

/// Who decides tools that require approval and a skill's first use of a
/// permission.
pub(crate) enum Approval {
    /// The frontend's user, through approval events (the interface).
    Ask,
    /// Nobody is asked: `--yes`, `--approve-skills`, `--allow` and
    /// `agent.approval_mode` decide (the headless commands).
    Headless {
        /// `--yes`.
        yes: bool,
        /// `--approve-skills`.
        approved: Vec<String>,
    },
}

/// What a frontend wants of its agent.
pub(crate) struct Frontend {
    /// Interactive or headless.
    pub mode: Mode,
    /// `--provider`, `--model`, `--base-url` (also for switching models).
    pub provider_args: ProviderArgs,
    /// The provider made from them (the caller reports a failure itself).
    pub provider: (Arc<dyn Provider>, String, String),
    /// Who approves.
    pub approval: Approval,
    /// The output format transforms are told.
    pub format: String,
    /// `--max-turns` (default: the configuration's).
    pub max_turns: Option<u32>,
    /// `--timeout` (default: the configuration's).
    pub timeout: Option<Duration>,
    /// `--tools`.
    pub tools: Option<Vec<String>>,
    /// `--verbose`: report each turn's setup.
    pub report_setup: bool,
    /// Tools the host provides itself for this frontend (a mode's reporting
    /// tool, MCP servers, instruction skills; see `agent_core::host_tool`).
    pub host_tools: Vec<Arc<dyn HostToolSource>>,
}

/// Assembles the parts of a session for `frontend`. With
/// [`Approval::Ask`], `app.interactive` says whether the user is asked at
/// all (`--non-interactive`); it must be set before.
///
/// # Errors
/// The configuration, the store, the skills, the grants or the runtime
/// cannot be set up.
pub(crate) fn assemble(app: &mut App, frontend: Frontend) -> Result<SessionParts> {
    let approvals = Approvals::new();
    if matches!(frontend.approval, Approval::Ask) {
        app.set_approver(approvals.approver());
    }
    let config = app.config()?;
    let store = app.store()?;
    let skills = Arc::new(app.load_all()?);
    let explicit = app.explicit_skills(&skills);
    let allow = app.allowlist()?;
    let grants = app.grants()?;
    // MCP servers' tools (after the grants: their starts ask this session's approver).
    let mut frontend = frontend;
    if let Some(source) = crate::mcp_servers::source(app)? {
        frontend.host_tools.push(source);
    }
    let project_root = app.project_root.clone();
    let gate: Arc<dyn ApprovalGate> = match &frontend.approval {
        Approval::Ask => ModeGate::wrap(
            config.agent.approval_mode,
            approvals.gate(project_root.clone()),
            "",
        ),
        Approval::Headless { yes, approved } => {
            headless_gate(&config, *yes, allow.clone(), &skills, approved)
        }
    };
    let runtime = app.runtime()?.clone();
    let (provider, provider_name, model) = frontend.provider;
    let mode_name = frontend.mode.as_str();
    let services = app.services(
        mode_name,
        &skills,
        gate.clone(),
        Some((provider.clone(), &model)),
    )?;
    let interactive = app.interactive;
    let status_store = store.clone();
    let tool_filter = frontend.tools.map(|wanted| -> ToolFilter {
        Arc::new(move |tools| crate::tool_names::resolve(&wanted, tools).map_err(|e| e.0))
    });
    let provider_args = frontend.provider_args;
    let switch_config = config.clone();
    Ok(SessionParts {
        provider,
        provider_name,
        model,
        switch_model: Box::new(move |model| {
            let mut args = provider_args.clone();
            args.model = Some(model.to_string());
            provider_for(&args, &switch_config)
        }),
        runtime,
        skills,
        ctx: services.ctx,
        invoker: services.invoker,
        skill_usage: services.skill_usage,
        grants,
        gate,
        approvals,
        store,
        permission_status: Box::new(move |m| {
            permission_status(m, Some(&status_store), &allow, interactive)
                .map_err(|e| e.to_string())
        }),
        project_root,
        explicit,
        host_tools: frontend.host_tools,
        options: SessionOptions {
            mode: frontend.mode,
            format: frontend.format,
            limits: RunLimits {
                max_turns: frontend.max_turns.unwrap_or(config.agent.max_turns),
                timeout: frontend.timeout.unwrap_or(config.agent.timeout),
            },
            run: run_options(&config),
            max_tokens: MAX_TOKENS,
            context_budget: config.agent.context_budget,
            tool_filter,
            report_setup: frontend.report_setup,
            describe_error: crate::error_chain::chain_line,
        },
    })
}

/// The call context of `agent workflow run`: the headless gate (`--yes`,
/// `--allow`, `agent.approval_mode`) in front of `skills.invoke`, and the
/// model for `llm` when a provider can be set up (else `llm` is
/// unavailable, with the reason in the debug log).
///
/// # Errors
/// The configuration, the grants or the runtime cannot be set up.
pub(crate) fn workflow_context(
    app: &mut App,
    skills: &Arc<Vec<Skill>>,
    yes: bool,
    provider_args: &ProviderArgs,
) -> Result<Arc<agent_runtime::CallContext>> {
    let config = app.config()?;
    let allow = app.allowlist()?;
    let gate = headless_gate(&config, yes, allow, skills, &[]);
    let provider = match provider_for(provider_args, &config) {
        Ok((provider, _, model)) => Some((provider, model)),
        Err(e) => {
            tracing::debug!("no model for workflows: {e}");
            None
        }
    };
    Ok(app
        .services(
            "cli",
            skills,
            gate,
            provider.as_ref().map(|(p, m)| (p.clone(), m.as_str())),
        )?
        .ctx)
}

/// Approves tools that require approval without prompting: with `--yes`,
/// for a skill named by `--approve-skills`, or when `--allow` grants the
/// skill a permission it declares beyond `file:read`.
pub(crate) struct HeadlessGate {
    yes: bool,
    /// `--approve-skills`.
    approved: Vec<String>,
    allow: AllowList,
    skills: Vec<(String, Vec<Permission>)>,
}

impl HeadlessGate {
    /// A gate for `skills` deciding from `--yes` and the `--allow` entries.
    pub(crate) fn new(yes: bool, allow: AllowList, skills: &[Skill]) -> HeadlessGate {
        HeadlessGate {
            yes,
            approved: Vec::new(),
            allow,
            skills: skills
                .iter()
                .map(|s| (s.name().to_string(), s.manifest.permissions.clone()))
                .collect(),
        }
    }
}

impl HeadlessGate {
    /// Also approve the tools of these skills (`--approve-skills`).
    pub(crate) fn with_approved_skills(mut self, skills: &[String]) -> HeadlessGate {
        self.approved = skills.to_vec();
        self
    }
}

impl ApprovalGate for HeadlessGate {
    fn approve_tool(&self, skill: &str, _tool: &str, _input_json: &str) -> bool {
        if self.yes || self.approved.iter().any(|s| s == skill) {
            return true;
        }
        // An MCP server's tools (skill `mcp:NAME`): its one permission is starting it.
        if skill.starts_with("mcp:")
            && [Permission::ShellExec, Permission::NetFetch]
                .iter()
                .any(|p| self.allow.names(skill, *p))
        {
            return true;
        }
        let declared = self
            .skills
            .iter()
            .find(|(n, _)| n == skill)
            .map(|(_, p)| p.as_slice())
            .unwrap_or_default();
        declared
            .iter()
            .any(|p| *p != Permission::FileRead && self.allow.names(skill, *p))
    }

    fn refusal(&self) -> String {
        "this tool needs approval (grant its permission with --allow, or pass --yes)".into()
    }
}

/// The gate of the headless commands: `agent.approval_mode` in front of
/// [`HeadlessGate`] (`--yes` overrides the mode).
pub(crate) fn headless_gate(
    config: &Config,
    yes: bool,
    allow: AllowList,
    skills: &[Skill],
    approved: &[String],
) -> Arc<dyn ApprovalGate> {
    let mode = if yes {
        agent_config::ApprovalMode::Prompt
    } else {
        config.agent.approval_mode
    };
    ModeGate::wrap(
        mode,
        Arc::new(HeadlessGate::new(yes, allow, skills).with_approved_skills(approved)),
        "; pass --yes to approve them for this run",
    )
}

pub(crate) fn provider_for(
    args: &ProviderArgs,
    config: &Config,
) -> std::result::Result<(Arc<dyn Provider>, String, String), String> {
    let kind = match args.provider {
        Some(ProviderName::Anthropic) => ProviderKind::Anthropic,
        Some(ProviderName::Openai) => ProviderKind::OpenAi,
        Some(ProviderName::Ollama) => ProviderKind::Ollama,
        None => config.provider.default,
    };
    let model = match &args.model {
        Some(m) => m.clone(),
        None if kind == config.provider.default => config.provider.effective_model().to_string(),
        None => kind.default_model().to_string(),
    };
    let configured_base = match kind {
        ProviderKind::Anthropic => &config.provider.anthropic.base_url,
        ProviderKind::OpenAi => &config.provider.openai.base_url,
        ProviderKind::Ollama => &config.provider.ollama.base_url,
    };
    let base = args
        .base_url
        .clone()
        .unwrap_or_else(|| configured_base.clone());
    let max_bytes = usize::try_from(config.provider.max_response_bytes).unwrap_or(usize::MAX);
    // The environment variable, else the key file, else the key command.
    let key = config.api_key(kind, |k| std::env::var(k).ok())?;
    let with_key = |c: ProviderConfig| match &key {
        Some(k) => c.api_key(k.clone()),
        None => c,
    };
    let provider: Arc<dyn Provider> = match kind {
        ProviderKind::Anthropic => Arc::new(
            AnthropicProvider::new(
                with_key(ProviderConfig::anthropic(&model))
                    .base_url(base)
                    .max_response_bytes(max_bytes),
            )
            .map_err(|e| e.to_string())?,
        ),
        ProviderKind::OpenAi => Arc::new(
            OpenAiProvider::new(
                with_key(ProviderConfig::openai(&model))
                    .base_url(base)
                    .max_response_bytes(max_bytes),
            )
            .map_err(|e| e.to_string())?,
        ),
        ProviderKind::Ollama => Arc::new(
            OllamaProvider::new(
                ProviderConfig::ollama(&model)
                    .base_url(base)
                    .max_response_bytes(max_bytes),
            )
            .map_err(|e| e.to_string())?,
        ),
    };
    Ok((provider, kind.as_str().to_string(), model))
}

/// The loop's options from the configuration (shared by `agent run` and
/// the TUI).
pub(crate) fn run_options(config: &Config) -> agent_core::RunOptions {
    agent_core::RunOptions {
        context_budget: usize::try_from(config.agent.context_budget).unwrap_or(usize::MAX),
        max_tool_calls_per_turn: usize::try_from(config.agent.max_tool_calls_per_turn)
            .unwrap_or(usize::MAX),
        max_invalid_tool_calls: config.agent.max_invalid_tool_calls,
        ..agent_core::RunOptions::default()
    }
}

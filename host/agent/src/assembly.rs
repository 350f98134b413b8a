//! The one place an agent is assembled from the configuration, for every
//! frontend: provider, skills, grants, the approval gate, the services
//! skills reach (model, other skills), the loop's options. The result is the
//! parts of an [`agent_core::Session`]; the frontend spawns it and renders
//! its events (`agent run` in `run_cmd`, the interface in `tui_cmd`).

use std::sync::Arc;
use std::time::Duration;

use agent_core::session::{Approvals, SessionOptions, SessionParts, ToolFilter};
use agent_core::{ApprovalGate, RunLimits};
use agent_manifest::Mode;
use agent_providers::Provider;

use anyhow::Result;

use crate::app::{App, MAX_TOKENS, permission_status};
use crate::approval_mode::ModeGate;
use crate::cli::ProviderArgs;
use crate::run_cmd::{headless_gate, provider_for, run_options};

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

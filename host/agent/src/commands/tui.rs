//! `agent` without a command: the interactive interface (agent-tui) over the
//! same core as `agent run`. Turns run on the blocking pool, so that the
//! approval dialogs can block the asking thread while the interface goes on
//! drawing; their events reach the interface over a channel.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};

use agent_config::Config;
use agent_core::{
    Agent, AgentEvent, HookSet, Invoker, RunLimits, RunOptions, SessionLog, SetupInput,
    history_from_events,
};
use agent_manifest::{Mode, Permission};
use agent_policy::{AllowList, merge};
use agent_providers::{CancellationToken, Message, Provider};
use agent_runtime::{CallContext, GrantsAuthorizer, Runtime, Skill};
use agent_store::{NewSession, SessionStatus, Store};
use agent_tui::state::NoticeKind;
use agent_tui::{PermissionRow, SessionRow, SkillRow, Theme, TuiApprover, TuiGate, UiMsg};
use anyhow::Result;

use crate::app::MAX_TOKENS;
use crate::app::{App, permission_status};
use crate::cli::{ProviderArgs, TuiArgs, UsageError, exit};
use crate::commands::run::provider_for;

/// The conversation of the interface: a compacted prefix, then the events
/// logged since.
#[derive(Default)]
struct Conversation {
    session: Option<String>,
    base: Vec<Message>,
    events: Vec<serde_json::Value>,
    active: Vec<String>,
}

impl Conversation {
    fn history(&self) -> Vec<Message> {
        let mut h = self.base.clone();
        h.extend(history_from_events(&self.events));
        h
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The agent behind the interface.
struct AgentBackend {
    tx: Sender<UiMsg>,
    config: Arc<Config>,
    provider_args: ProviderArgs,
    provider: Arc<dyn Provider>,
    provider_name: String,
    model: String,
    runtime: Arc<Runtime>,
    skills: Arc<Vec<Skill>>,
    ctx: Arc<CallContext>,
    invoker: Arc<Invoker>,
    skill_usage: Arc<agent_core::SkillUsage>,
    grants: Arc<GrantsAuthorizer>,
    gate: Arc<dyn agent_core::ApprovalGate>,
    store: Arc<Store>,
    allow: AllowList,
    interactive: bool,
    project_root: PathBuf,
    explicit: Vec<String>,
    deactivated: Vec<String>,
    conversation: Arc<Mutex<Conversation>>,
    cancel: Option<CancellationToken>,
}

impl AgentBackend {
    fn skill(&self, name: &str) -> Result<&Skill, String> {
        self.skills
            .iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("no skill named `{name}` (see /skill list)"))
    }

    /// The session the next turn is logged in, created on the first prompt.
    fn session_for(&self, prompt: &str) -> Result<String, String> {
        if let Some(id) = &lock(&self.conversation).session {
            return Ok(id.clone());
        }
        let meta = self
            .store
            .create_session(NewSession {
                project_root: self.project_root.clone(),
                model: self.model.clone(),
                provider: self.provider_name.clone(),
                first_message: Some(prompt.to_string()),
            })
            .map_err(|e| e.to_string())?;
        lock(&self.conversation).session = Some(meta.id.clone());
        Ok(meta.id)
    }
}

impl agent_tui::Backend for AgentBackend {
    fn submit(&mut self, prompt: String) {
        let session_id = match self.session_for(&prompt) {
            Ok(id) => id,
            Err(e) => {
                let _ = self.tx.send(UiMsg::TurnDone(Err(e)));
                return;
            }
        };
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        let history = lock(&self.conversation).history();
        let tx = self.tx.clone();
        let provider = self.provider.clone();
        let model = self.model.clone();
        let runtime = self.runtime.clone();
        let skills = self.skills.clone();
        let ctx = self.ctx.clone();
        let invoker = self.invoker.clone();
        let skill_usage = self.skill_usage.clone();
        let grants = self.grants.clone();
        let gate = self.gate.clone();
        let store = self.store.clone();
        let root = self.project_root.clone();
        let explicit = self.explicit.clone();
        let deactivated = self.deactivated.clone();
        let conversation = self.conversation.clone();
        let limits = RunLimits {
            max_turns: self.config.agent.max_turns,
            timeout: self.config.agent.timeout,
        };
        let options: RunOptions = crate::commands::run::run_options(&self.config);
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let cwd = std::env::current_dir().unwrap_or_else(|_| root.clone());
            let turn = handle.block_on(async {
                let mut setup = agent_core::setup(&SetupInput {
                    runtime: &runtime,
                    ctx: &ctx,
                    skills: &skills,
                    project_root: &root,
                    cwd: &cwd,
                    user_message: &prompt,
                    mode: Mode::Interactive,
                    explicit: &explicit,
                })
                .await
                .map_err(|e| crate::error_chain::chain_line(&e))?;
                if !deactivated.is_empty() {
                    leave_out(&mut setup, &skills, &deactivated, &root, &cwd);
                }
                for w in &setup.warnings {
                    let _ = tx.send(UiMsg::Notice(NoticeKind::Warning, w.clone()));
                }
                invoker.set_constraints(setup.constraints.clone());
                let agent = Agent::builder(provider, &runtime, ctx.clone(), &skills, gate.as_ref())
                    .model(&model)
                    .limits(limits)
                    .setup(setup)
                    .grants(grants)
                    .max_tokens(MAX_TOKENS)
                    .skill_usage(Some(skill_usage))
                    .mode("interactive")
                    .format("markdown")
                    .cancel(cancel)
                    .build();
                let log = SessionLog {
                    store,
                    id: session_id,
                };
                let sink_tx = tx.clone();
                let sink_conv = conversation.clone();
                let mut sink = move |e: &AgentEvent| {
                    let mut c = lock(&sink_conv);
                    if let Ok(v) = serde_json::to_value(e) {
                        c.events.push(v);
                    }
                    match e {
                        AgentEvent::User { .. } => c.active.clear(),
                        AgentEvent::Activated { skill, .. } => c.active.push(skill.clone()),
                        _ => {}
                    }
                    drop(c);
                    let _ = sink_tx.send(UiMsg::Agent(e.clone()));
                };
                agent
                    .run_with(history, &prompt, Some(log), &mut sink, options)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            });
            let _ = tx.send(UiMsg::TurnDone(turn));
        });
    }

    fn cancel(&mut self) {
        if let Some(c) = self.cancel.take() {
            c.cancel();
        }
    }

    fn model(&self) -> String {
        format!("{}/{}", self.provider_name, self.model)
    }

    fn context_budget(&self) -> u64 {
        self.config.agent.context_budget
    }

    fn skills(&mut self) -> Vec<SkillRow> {
        let active = lock(&self.conversation).active.clone();
        self.skills
            .iter()
            .map(|s| {
                let name = s.name().to_string();
                let state = if self.deactivated.contains(&name) {
                    "off"
                } else if self.explicit.contains(&name) {
                    "on"
                } else if active.contains(&name) {
                    "active"
                } else {
                    "-"
                };
                SkillRow {
                    version: s.manifest.version.to_string(),
                    source: s.origin.as_str().to_string(),
                    state: state.to_string(),
                    description: s.manifest.description.clone(),
                    name,
                }
            })
            .collect()
    }

    fn skill_info(&mut self, name: &str) -> Result<String, String> {
        let s = self.skill(name)?;
        let m = &s.manifest;
        let mut out = format!(
            "{} {} ({})\n{}\n\ntypes: {}\n",
            m.name,
            m.version,
            s.origin.as_str(),
            m.description,
            m.types
                .iter()
                .map(|t| format!("{t:?}").to_lowercase())
                .collect::<Vec<_>>()
                .join(", ")
        );
        out.push_str("\npermissions:\n");
        if m.permissions.is_empty() {
            out.push_str("  (none)\n");
        }
        let statuses = permission_status(m, Some(&self.store), &self.allow, self.interactive)
            .map_err(|e| e.to_string())?;
        for (p, status) in statuses {
            out.push_str(&format!("  {p:<14} {status} — {}\n", p.describe()));
        }
        if !m.tools.is_empty() {
            out.push_str("\ntools:\n");
            for t in &m.tools {
                let approval = if t.requires_approval {
                    " [asks before running]"
                } else {
                    ""
                };
                out.push_str(&format!("  {}{approval} — {}\n", t.name, t.description));
            }
        }
        Ok(out)
    }

    fn set_skill(&mut self, name: &str, active: bool) -> Result<String, String> {
        let name = self.skill(name)?.name().to_string();
        self.deactivated.retain(|n| *n != name);
        self.explicit.retain(|n| *n != name);
        if active {
            self.explicit.push(name.clone());
            Ok(format!("skill `{name}` is active from the next prompt on"))
        } else {
            self.deactivated.push(name.clone());
            Ok(format!(
                "skill `{name}` is left out from the next prompt on"
            ))
        }
    }

    fn permissions(&mut self) -> Result<Vec<PermissionRow>, String> {
        let rows = self.store.all_grants().map_err(|e| e.to_string())?;
        Ok(rows
            .into_iter()
            .map(|g| PermissionRow {
                skill: g.skill,
                permission: match g.scope {
                    Some(scope) => format!("{}:{scope}", g.permission),
                    None => g.permission.to_string(),
                },
                decision: match g.decision {
                    agent_store::StoredDecision::Always => "always".into(),
                    agent_store::StoredDecision::Deny => "deny".into(),
                },
            })
            .collect())
    }

    fn revoke(&mut self, skill: &str, permission: Option<&str>) -> Result<String, String> {
        let perm = permission
            .map(|p| p.parse::<Permission>().map_err(|e| e.to_string()))
            .transpose()?;
        let removed = self
            .grants
            .grants()
            .revoke(skill, perm)
            .map_err(|e| e.to_string())?;
        Ok(format!(
            "revoked {removed} stored decision(s) of `{skill}`{}; it is asked again on next use",
            permission.map(|p| format!(" for {p}")).unwrap_or_default()
        ))
    }

    fn set_model(&mut self, model: &str) -> Result<String, String> {
        let mut args = self.provider_args.clone();
        args.model = Some(model.to_string());
        let (provider, name, model) = provider_for(&args, &self.config)?;
        self.provider = provider;
        self.provider_name = name;
        self.model = model;
        Ok(format!(
            "model: {}/{} from the next prompt on",
            self.provider_name, self.model
        ))
    }

    fn clear(&mut self) {
        self.cancel();
        *lock(&self.conversation) = Conversation::default();
    }

    fn compact(&mut self) {
        let tx = self.tx.clone();
        let provider = self.provider.clone();
        let model = self.model.clone();
        let conversation = self.conversation.clone();
        let cancel = CancellationToken::new();
        self.cancel = Some(cancel.clone());
        let handle = tokio::runtime::Handle::current();
        tokio::task::spawn_blocking(move || {
            let mut messages = lock(&conversation).history();
            let before = agent_core::context::estimate_tokens(&messages);
            if messages.len() < 3 {
                let _ = tx.send(UiMsg::Notice(
                    NoticeKind::Info,
                    "nothing to compact yet".into(),
                ));
                let _ = tx.send(UiMsg::TurnDone(Ok(())));
                return;
            }
            // Keep about a fifth: the summary replaces the oldest part.
            let budget = (before / 5).max(1);
            let result = handle.block_on(agent_core::context::summarize(
                provider.as_ref(),
                &model,
                MAX_TOKENS,
                &mut messages,
                budget,
                &cancel,
            ));
            let done = match result {
                Ok(s) => {
                    let after = agent_core::context::estimate_tokens(&messages);
                    let mut c = lock(&conversation);
                    c.base = messages;
                    c.events.clear();
                    drop(c);
                    let _ = tx.send(UiMsg::Notice(
                        NoticeKind::Info,
                        format!(
                            "compacted: {} message(s) summarised, about {before} → {after} tokens",
                            s.replaced
                        ),
                    ));
                    Ok(())
                }
                Err(e) => Err(format!("could not compact: {e}")),
            };
            let _ = tx.send(UiMsg::TurnDone(done));
        });
    }

    fn sessions(&mut self) -> Result<Vec<SessionRow>, String> {
        let mut all = self.store.sessions().map_err(|e| e.to_string())?;
        all.retain(|s| s.project_root == self.project_root);
        all.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
        Ok(all
            .into_iter()
            .map(|s| SessionRow {
                id: s.id,
                title: s.title,
                updated: s.updated_at,
                turns: s.turns,
            })
            .collect())
    }

    fn resume(&mut self, id: &str) -> Result<Vec<AgentEvent>, String> {
        let meta = self.store.find_session(id).map_err(|e| e.to_string())?;
        let values: Vec<serde_json::Value> = self
            .store
            .events(&meta.id)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        self.store
            .update_session(&meta.id, |m| m.status = SessionStatus::Active)
            .map_err(|e| e.to_string())?;
        let events = values
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        *lock(&self.conversation) = Conversation {
            session: Some(meta.id),
            base: Vec::new(),
            events: values,
            active: Vec::new(),
        };
        Ok(events)
    }
}

/// Leaves the `off` skills out of a turn's setup: their tools, hooks,
/// transforms, prompt sections and constraints.
fn leave_out(
    setup: &mut agent_core::Setup,
    skills: &[Skill],
    off: &[String],
    root: &std::path::Path,
    cwd: &std::path::Path,
) {
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
    setup.constraints = Arc::new(merge(&agent_core::setup::skill_constraints(
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
    setup.system = agent_core::prompt::assemble(
        &agent_core::system_prompt(root, cwd),
        &setup.prompts,
        &extra,
    );
}

/// Opens the interface; returns the exit code.
pub fn run(app: &mut App, args: TuiArgs) -> Result<u8> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(UsageError(
            "`agent` without a command opens the interactive interface, which needs a terminal; \
             use `agent run` for headless runs (agent --help lists the commands)"
                .into(),
        )
        .into());
    }
    // The interface is the interactive mode: it asks, unless told never to.
    app.interactive = !app.global.non_interactive;
    let (tx, rx) = std::sync::mpsc::channel();
    app.set_approver(Arc::new(TuiApprover::new(tx.clone())));
    let config = app.config()?;
    let (provider, provider_name, model) = match provider_for(&args.provider_args, &config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: provider: {e}");
            return Ok(exit::PROVIDER);
        }
    };
    let store = app.store()?;
    let skills: Arc<Vec<Skill>> = Arc::new(app.load_all()?);
    let explicit = app.explicit_skills(&skills);
    let allow = app.allowlist()?;
    let grants = app.grants()?;
    let project_root = app.project_root.clone();
    let gate = crate::approval_mode::ModeGate::wrap(
        config.agent.approval_mode,
        TuiGate::new(tx.clone(), project_root.clone()),
        "",
    );
    let runtime = app.runtime()?.clone();
    let services = app.services(
        "interactive",
        &skills,
        gate.clone(),
        Some((provider.clone(), &model)),
    )?;
    let mut backend = AgentBackend {
        tx: tx.clone(),
        config,
        provider_args: args.provider_args.clone(),
        provider,
        provider_name,
        model,
        runtime,
        skills,
        ctx: services.ctx,
        invoker: services.invoker,
        skill_usage: services.skill_usage.unwrap_or_default(),
        grants,
        gate,
        store: store.clone(),
        allow,
        interactive: app.interactive,
        project_root: project_root.clone(),
        explicit,
        deactivated: Vec::new(),
        conversation: Arc::new(Mutex::new(Conversation::default())),
        cancel: None,
    };
    let mut ui = agent_tui::App::new(&backend, &project_root, Theme::from_env());
    if let Some(id) = &args.resume {
        let id = if id.is_empty() {
            store
                .last_session(Some(&project_root))?
                .ok_or_else(|| UsageError("--resume: no session in this project yet".into()))?
                .id
        } else {
            store.find_session(id)?.id
        };
        use agent_tui::Backend;
        for e in backend.resume(&id).map_err(anyhow::Error::msg)? {
            ui.transcript.apply(&e);
        }
        ui.transcript.running = false;
        ui.transcript
            .notice(NoticeKind::Info, format!("resumed session {id}"));
    }
    agent_tui::term::run(&mut ui, &mut backend, tx, rx)?;
    if let Some(id) = &lock(&backend.conversation).session {
        // One short line: it must not wrap on an 80-column terminal.
        println!("continue with `agent --resume {id}`");
    }
    Ok(exit::OK)
}

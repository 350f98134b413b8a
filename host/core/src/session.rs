//! A session: the agent behind a frontend, speaking the protocol.
//!
//! [`Session::spawn`] takes the parts the frontend's assembly built (the
//! provider, runtime, skills, grants, approval gate, store, options) and
//! returns the frontend's [`Client`]: the frontend sends [`Op`]s and renders
//! the [`Event`]s that come back — [`Event::SessionConfigured`] first,
//! [`Event::ShutdownComplete`] last. A user turn runs on a thread of its own
//! (so that an approval question can block it while the session goes on
//! receiving operations, the answer among them); its events are forwarded
//! as [`Event::Agent`] and it ends with [`Event::TurnComplete`].
//!
//! Approvals are events too (see [`approvals`]): the session's
//! [`Approvals`] must be the one behind the gate and the grants' approver
//! in the parts.

pub mod approvals;
mod fork;
mod turn;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use agent_manifest::{Manifest, Mode, Permission};
use agent_protocol::{
    AgentEvent, Client, Event, NoticeKind, Op, PermissionRow, Server, SessionRow, SkillRow,
};
use agent_providers::{CancellationToken, Message, Provider};
use agent_runtime::{CallContext, GrantsAuthorizer, Runtime, Skill};
use agent_store::{SessionStatus, Store};

use crate::{AgentTool, ApprovalGate, Invoker, RunLimits, RunOptions, SkillUsage};
pub use approvals::{Approvals, EventApprover, EventGate};
pub use turn::{setup_report, with_attachments};

/// Makes a provider for a model name (`Op::SetModel`): the provider, its
/// name (`anthropic`) and the model's.
pub type ProviderFactory =
    Box<dyn Fn(&str) -> Result<(Arc<dyn Provider>, String, String), String> + Send>;

/// The permissions a skill declares, each with its grant status in words
/// (`granted (always)`, `ask on first use`…), for `Op::SkillInfo`.
pub type PermissionStatus =
    Box<dyn Fn(&Manifest) -> Result<Vec<(Permission, String)>, String> + Send>;

/// Narrows the tools a turn offers (`agent run --tools`): the names to keep
/// among the turn's tools, or why the filter names a tool none offers.
pub type ToolFilter = Arc<dyn Fn(&[AgentTool]) -> Result<Vec<String>, String> + Send + Sync>;

/// How turns run.
pub struct SessionOptions {
    /// Interactive (the terminal interface) or headless (`agent run`):
    /// which skills activate, and the mode skills are told.
    pub mode: Mode,
    /// The output format transforms are told (`markdown`, `text`, `json`…).
    pub format: String,
    /// Turn and time limits of a turn.
    pub limits: RunLimits,
    /// The loop's options (context budget, tool-call caps).
    pub run: RunOptions,
    /// `max_tokens` of each model request.
    pub max_tokens: u32,
    /// The context budget shown to the frontend, in tokens.
    pub context_budget: u64,
    /// Narrows the tools offered (`None`: all the active skills' tools).
    pub tool_filter: Option<ToolFilter>,
    /// Whether each turn sends an [`Event::SetupReport`] (`--verbose`).
    pub report_setup: bool,
    /// How an error and its causes read on one line.
    pub describe_error: fn(&anyhow::Error) -> String,
}

/// What a session is built from (see the module documentation).
pub struct SessionParts {
    /// The model's provider.
    pub provider: Arc<dyn Provider>,
    /// The provider's name (`anthropic`).
    pub provider_name: String,
    /// The model.
    pub model: String,
    /// Makes the provider of another model (`Op::SetModel`).
    pub switch_model: ProviderFactory,
    /// The runtime the skills are loaded in.
    pub runtime: Arc<Runtime>,
    /// The loaded skills.
    pub skills: Arc<Vec<Skill>>,
    /// The call context of every skill call.
    pub ctx: Arc<CallContext>,
    /// Serves `skills.invoke`; takes each turn's constraints.
    pub invoker: Arc<Invoker>,
    /// Token usage of the skills' own model requests.
    pub skill_usage: Option<Arc<SkillUsage>>,
    /// The grant decision point.
    pub grants: Arc<GrantsAuthorizer>,
    /// Decides tools that require approval.
    pub gate: Arc<dyn ApprovalGate>,
    /// The questions behind `gate` and the grants' approver.
    pub approvals: Arc<Approvals>,
    /// Sessions, events and stored grants.
    pub store: Arc<Store>,
    /// Grant statuses for `Op::SkillInfo`.
    pub permission_status: PermissionStatus,
    /// The project.
    pub project_root: PathBuf,
    /// Skills activated whatever their triggers (`--skills NAME`).
    pub explicit: Vec<String>,
    /// Tools the host provides itself, offered to each turn beside the
    /// active skills' (see [`crate::host_tool`]; empty: none).
    pub host_tools: Vec<Arc<dyn crate::HostToolSource>>,
    /// How turns run.
    pub options: SessionOptions,
}

/// The conversation: a compacted prefix, then the events logged since.
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
        h.extend(crate::history_from_events(&self.events));
        h
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The agent behind a frontend (see the module documentation).
pub struct Session {
    parts: SessionParts,
    emit: std::sync::mpsc::Sender<Event>,
    handle: tokio::runtime::Handle,
    deactivated: Vec<String>,
    conversation: Arc<Mutex<Conversation>>,
    cancel: Option<CancellationToken>,
    /// The thread of the last turn or compaction.
    running: Option<JoinHandle<()>>,
    /// Whether a turn or compaction runs: cleared by its thread just before
    /// it sends `TurnComplete`, so that the next turn is never refused.
    busy: Arc<AtomicBool>,
}

impl Session {
    /// Starts a session on a thread of its own; its turns run on `handle`'s
    /// runtime (each on its own thread, blocking on the runtime). Returns
    /// the frontend's end of the connection. The session ends on
    /// [`Op::Shutdown`] or when the client is dropped; either way a question
    /// still waiting for an answer is denied.
    pub fn spawn(parts: SessionParts, handle: tokio::runtime::Handle) -> Client {
        let (client, server) = agent_protocol::channel();
        std::thread::spawn(move || Session::run(parts, handle, server));
        client
    }

    /// Serves `server` on the calling thread until the frontend shuts the
    /// session down or goes (see [`Session::spawn`]).
    pub fn run(parts: SessionParts, handle: tokio::runtime::Handle, server: Server) {
        let (ops, emit) = server.split();
        parts.approvals.connect(emit.clone());
        let mut session = Session {
            parts,
            emit,
            handle,
            deactivated: Vec::new(),
            conversation: Arc::new(Mutex::new(Conversation::default())),
            cancel: None,
            running: None,
            busy: Arc::new(AtomicBool::new(false)),
        };
        session.send(Event::SessionConfigured {
            model: session.model_name(),
            context_budget: session.parts.options.context_budget,
        });
        while let Ok(op) = ops.recv() {
            if matches!(op, Op::Shutdown) {
                session.end();
                session.send(Event::ShutdownComplete);
                return;
            }
            session.handle_op(op);
        }
        session.end();
    }

    fn send(&self, event: Event) {
        let _ = self.emit.send(event);
    }

    fn notice(&self, text: String) {
        self.send(Event::Notice {
            kind: NoticeKind::Info,
            text,
        });
    }

    fn error(&self, op: &str, message: String) {
        self.send(Event::Error {
            op: op.to_string(),
            message,
        });
    }

    fn model_name(&self) -> String {
        format!("{}/{}", self.parts.provider_name, self.parts.model)
    }

    /// Cancels the running turn, denies every open question, and waits for
    /// the turn's thread.
    fn end(&mut self) {
        self.interrupt();
        self.parts.approvals.close();
        if let Some(t) = self.running.take() {
            let _ = t.join();
        }
    }

    fn interrupt(&mut self) {
        if let Some(c) = self.cancel.take() {
            c.cancel();
        }
    }

    fn busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }

    /// Runs `work` as the session's turn (or compaction) on a thread of its
    /// own; it returns the `TurnComplete` to send.
    fn start(&mut self, work: impl FnOnce() -> Event + Send + 'static) {
        if let Some(previous) = self.running.take() {
            // Finished: it cleared `busy` as its last step.
            let _ = previous.join();
        }
        self.busy.store(true, Ordering::SeqCst);
        let busy = self.busy.clone();
        let emit = self.emit.clone();
        self.running = Some(std::thread::spawn(move || {
            let done = work();
            busy.store(false, Ordering::SeqCst);
            let _ = emit.send(done);
        }));
    }

    fn handle_op(&mut self, op: Op) {
        match op {
            Op::UserTurn { text, attachments } => {
                if self.busy() {
                    self.error("user_turn", STILL_RUNNING.into());
                } else {
                    self.start_turn(text, attachments);
                }
            }
            Op::Interrupt => self.interrupt(),
            Op::Approve { id, answer } => {
                if !self.parts.approvals.answer(id, answer) {
                    self.error("approve", format!("no question {id} is waiting"));
                }
            }
            Op::SetModel { model } => match (self.parts.switch_model)(&model) {
                Ok((provider, name, model)) => {
                    self.parts.provider = provider;
                    self.parts.provider_name = name;
                    self.parts.model = model;
                    self.send(Event::ModelChanged {
                        model: self.model_name(),
                    });
                    self.notice(format!(
                        "model: {} from the next prompt on",
                        self.model_name()
                    ));
                }
                Err(e) => self.error("set_model", e),
            },
            Op::SetSkill { name, active } => match self.set_skill(&name, active) {
                Ok(text) => self.notice(text),
                Err(e) => self.error("set_skill", e),
            },
            Op::Compact => {
                if self.busy() {
                    self.error("compact", STILL_RUNNING.into());
                } else {
                    self.start_compact();
                }
            }
            Op::NewConversation => {
                self.interrupt();
                *lock(&self.conversation) = Conversation::default();
            }
            Op::Resume { id } => match self.resume(&id) {
                Ok((id, events)) => self.send(Event::Resumed { id, events }),
                Err(e) => self.error("resume", e),
            },
            Op::ListSkills => self.send(Event::Skills(self.skill_rows())),
            Op::SkillInfo { name } => match self.skill_info(&name) {
                Ok(text) => self.send(Event::SkillInfo { name, text }),
                Err(e) => self.error("skill_info", e),
            },
            Op::ListPermissions => match self.permission_rows() {
                Ok(rows) => self.send(Event::Permissions(rows)),
                Err(e) => self.error("list_permissions", e),
            },
            Op::Revoke { skill, permission } => match self.revoke(&skill, permission.as_deref()) {
                Ok(text) => self.notice(text),
                Err(e) => self.error("revoke", e),
            },
            Op::ListSessions => match self.session_rows() {
                Ok(rows) => self.send(Event::Sessions(rows)),
                Err(e) => self.error("list_sessions", e),
            },
            Op::Shutdown => {}
            // A newer frontend's operation this session does not know.
            #[allow(unreachable_patterns)]
            other => self.error(
                "unknown",
                format!("this agent does not support the operation {other:?}"),
            ),
        }
    }

    fn skill(&self, name: &str) -> Result<&Skill, String> {
        self.parts
            .skills
            .iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("no skill named `{name}` (see /skill list)"))
    }

    fn skill_rows(&self) -> Vec<SkillRow> {
        let active = lock(&self.conversation).active.clone();
        self.parts
            .skills
            .iter()
            .map(|s| {
                let name = s.name().to_string();
                let state = if self.deactivated.contains(&name) {
                    "off"
                } else if self.parts.explicit.contains(&name) {
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

    fn skill_info(&self, name: &str) -> Result<String, String> {
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
        for (p, status) in (self.parts.permission_status)(m)? {
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
        self.parts.explicit.retain(|n| *n != name);
        if active {
            self.parts.explicit.push(name.clone());
            Ok(format!("skill `{name}` is active from the next prompt on"))
        } else {
            self.deactivated.push(name.clone());
            Ok(format!(
                "skill `{name}` is left out from the next prompt on"
            ))
        }
    }

    fn permission_rows(&self) -> Result<Vec<PermissionRow>, String> {
        let rows = self.parts.store.all_grants().map_err(|e| e.to_string())?;
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

    fn revoke(&self, skill: &str, permission: Option<&str>) -> Result<String, String> {
        let perm = permission
            .map(|p| p.parse::<Permission>().map_err(|e| e.to_string()))
            .transpose()?;
        let removed = self
            .parts
            .grants
            .grants()
            .revoke(skill, perm)
            .map_err(|e| e.to_string())?;
        Ok(format!(
            "revoked {removed} stored decision(s) of `{skill}`{}; it is asked again on next use",
            permission.map(|p| format!(" for {p}")).unwrap_or_default()
        ))
    }

    fn session_rows(&self) -> Result<Vec<SessionRow>, String> {
        let mut all = self.parts.store.sessions().map_err(|e| e.to_string())?;
        all.retain(|s| s.project_root == self.parts.project_root);
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

    /// Continues session `id` (or a unique prefix): the next turns see its
    /// history and are logged in it.
    fn resume(&mut self, id: &str) -> Result<(String, Vec<AgentEvent>), String> {
        let store = &self.parts.store;
        let meta = store.find_session(id).map_err(|e| e.to_string())?;
        let values: Vec<serde_json::Value> = store
            .events(&meta.id)
            .map_err(|e| e.to_string())?
            .into_iter()
            .map(|(_, v)| v)
            .collect();
        store
            .update_session(&meta.id, |m| m.status = SessionStatus::Active)
            .map_err(|e| e.to_string())?;
        let events = values
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        self.interrupt();
        *lock(&self.conversation) = Conversation {
            session: Some(meta.id.clone()),
            base: Vec::new(),
            events: values,
            active: Vec::new(),
        };
        Ok((meta.id, events))
    }
}

/// The answer to a turn (or compaction) asked for while one runs.
const STILL_RUNNING: &str =
    "a turn is still running: wait for it to complete, or interrupt it first";

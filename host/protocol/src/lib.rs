//! The seam between the agent and its frontends.
//!
//! A frontend (the terminal interface, `agent run`, the review, log and wiki
//! modes) sends [`Op`]s and renders the [`Event`]s that come back; the agent
//! core's `Session` consumes the operations and emits the events. Nothing else
//! crosses: approvals are an [`Event::ApprovalRequested`] answered by an
//! [`Op::Approve`], never a callback into the frontend; refusals arrive as
//! events when they happen.
//!
//! The types are plain data (serde), so a frontend can also live in another
//! process and speak JSON lines. This crate depends on nothing of the agent.

mod agent_event;
mod approval;
mod channel;
mod rows;
mod summary;

pub use agent_event::{AgentEvent, StopKind};
pub use approval::{ApprovalAnswer, ApprovalKind, ApprovalRequest, DiffLine, ToolPreview};
pub use channel::{Client, Server, channel};
pub use rows::{PermissionRow, SessionRow, SkillRow};
pub use summary::{DenialRow, SkillUseRow, ToolCallRow, TurnFailure, TurnSummary};

use serde::{Deserialize, Serialize};

/// A file or text the user attached to a turn (`@path` in the interface,
/// piped standard input for `agent run`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// What it is called in the prompt (a path, or `stdin`).
    pub name: String,
    /// Its text.
    pub content: String,
}

/// What a frontend asks of the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Op {
    /// The user's next message; starts a turn (one at a time: a turn sent
    /// while another runs is refused with an [`Event::Error`]).
    UserTurn {
        /// The message.
        text: String,
        /// Attached documents, given to the model after the message.
        #[serde(default)]
        attachments: Vec<Attachment>,
    },
    /// Cancels the running turn (or compaction), if any: the model request
    /// in flight is aborted and tool calls not yet started are not run.
    Interrupt,
    /// The answer to an [`Event::ApprovalRequested`].
    Approve {
        /// The request's id.
        id: u64,
        /// The answer.
        answer: ApprovalAnswer,
    },
    /// Switches the model for the following turns.
    SetModel {
        /// The model's name.
        model: String,
    },
    /// Activates or deactivates a skill for the following turns.
    SetSkill {
        /// The skill.
        name: String,
        /// `true` to activate, `false` to deactivate.
        active: bool,
    },
    /// Summarises the conversation so far to make room; ends with an
    /// [`Event::TurnComplete`].
    Compact,
    /// Starts a new conversation (a new session on the next turn).
    NewConversation,
    /// Continues a recorded session; answered with [`Event::Resumed`].
    Resume {
        /// The session's id (or a unique prefix of it).
        id: String,
    },
    /// Asks for the loaded skills; answered with [`Event::Skills`].
    ListSkills,
    /// Asks for a skill's details; answered with [`Event::SkillInfo`].
    SkillInfo {
        /// The skill.
        name: String,
    },
    /// Asks for the stored permission decisions; answered with
    /// [`Event::Permissions`].
    ListPermissions,
    /// Revokes stored decisions of a skill (for one permission, or all).
    Revoke {
        /// The skill.
        skill: String,
        /// The permission (`None`: all of the skill's).
        permission: Option<String>,
    },
    /// Asks for the sessions of this project; answered with
    /// [`Event::Sessions`].
    ListSessions,
    /// Ends the session: a running turn is cancelled, then
    /// [`Event::ShutdownComplete`] is the last event.
    Shutdown,
}

/// How a notice reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeKind {
    /// Information (a skill activated, a model switched).
    Info,
    /// Something the user should look at.
    Warning,
}

/// How a turn (or a compaction) ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnComplete {
    /// The recorded session the turn belongs to (empty: none recorded).
    pub session_id: String,
    /// Why the turn stopped; `None` when it failed.
    pub stop: Option<StopKind>,
    /// Why it failed, in words for the user; `None` when it did not.
    pub error: Option<String>,
    /// Where it failed, when it did.
    pub failure: Option<TurnFailure>,
    /// What the turn did, when it ran to a stop (`None` for a compaction).
    pub summary: Option<Box<TurnSummary>>,
}

/// A turn is about to ask the model: what a renderer needs to know first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnStarted {
    /// The recorded session the turn belongs to.
    pub session_id: String,
    /// Whether hooks or transforms may rewrite the model's text: then the
    /// text deltas are not the answer, and each response's
    /// [`AgentEvent::Final`] carries the rewritten text.
    pub rewrites_output: bool,
}

/// What the agent tells a frontend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    /// The first event of a session: what it runs with.
    SessionConfigured {
        /// The model in use.
        model: String,
        /// The context budget, in tokens.
        context_budget: u64,
    },
    /// Something that happened in the running turn, in order (the same
    /// events the session log stores).
    Agent(AgentEvent),
    /// The agent waits for the user's answer; reply with [`Op::Approve`].
    /// Unanswered when the session shuts down counts as a denial.
    ApprovalRequested(ApprovalRequest),
    /// The turn's setup is done; its [`Event::Agent`] events follow.
    TurnStarted(TurnStarted),
    /// Which skills are active in the turn and why, budgets, hooks,
    /// transforms and constraint decisions, as lines (sent before
    /// [`Event::TurnStarted`] when the session was built to report them:
    /// `agent run --verbose`).
    SetupReport {
        /// The lines.
        lines: Vec<String>,
    },
    /// The running turn (or compaction) ended.
    TurnComplete(TurnComplete),
    /// A short message for the user (the result of [`Op::SetSkill`],
    /// [`Op::SetModel`], [`Op::Revoke`], [`Op::Compact`]...).
    Notice {
        /// How it reads.
        kind: NoticeKind,
        /// The text.
        text: String,
    },
    /// An operation failed; nothing changed.
    Error {
        /// The operation, as its `op` tag (`set_model`, `resume`...).
        op: String,
        /// Why, and what to do next.
        message: String,
    },
    /// The answer to [`Op::ListSkills`].
    Skills(Vec<SkillRow>),
    /// The answer to [`Op::SkillInfo`].
    SkillInfo {
        /// The skill.
        name: String,
        /// Its details, as lines of text.
        text: String,
    },
    /// The answer to [`Op::ListPermissions`].
    Permissions(Vec<PermissionRow>),
    /// The answer to [`Op::ListSessions`], newest first.
    Sessions(Vec<SessionRow>),
    /// A session was resumed: its events so far, to show.
    Resumed {
        /// The session's full id.
        id: String,
        /// Its recorded events.
        events: Vec<AgentEvent>,
    },
    /// The model was switched.
    ModelChanged {
        /// The model now in use.
        model: String,
    },
    /// The last event of a session.
    ShutdownComplete,
}

//! `agent-tui`: the interactive terminal interface of `agent`.
//!
//! It renders the core's event stream ([`agent_core::AgentEvent`], the same
//! events the headless JSONL carries) as a transcript: Markdown with
//! highlighted code blocks ([`markdown`], [`highlight`]), tool calls as cells
//! with their skill, input and result, diffs of edits and writes before they
//! are approved ([`diff`]). Questions from the core — a skill's first use of
//! a permission, a tool that requires approval — arrive through
//! [`approval::TuiApprover`] and [`approval::TuiGate`] and are answered in
//! dialogs. The agent itself sits behind [`app::Backend`]; [`term::run`]
//! drives a real terminal, tests drive [`app::App`] with ratatui's
//! `TestBackend`.
#![deny(missing_docs)]

pub mod app;
pub mod approval;
pub mod diff;
pub mod highlight;
pub mod input;
pub mod markdown;
pub mod state;
pub mod term;
pub mod theme;
pub mod ui;

pub use app::{App, Backend, PermissionRow, SessionRow, SkillRow};
pub use approval::{Ask, Question, TuiApprover, TuiGate};
pub use theme::Theme;

use agent_core::AgentEvent;

/// What the interface reacts to.
#[derive(Debug)]
pub enum UiMsg {
    /// A terminal event: a key, a paste, a resize.
    Term(crossterm::event::Event),
    /// An event of the running turn.
    Agent(AgentEvent),
    /// A question for the user.
    Ask(Ask),
    /// The running turn (or `/compact`) ended; `Err` says why it failed.
    TurnDone(Result<(), String>),
    /// A note to show.
    Notice(state::NoticeKind, String),
}

//! `agent-tui`: the interactive terminal interface of `agent`.
//!
//! A frontend of the agent-protocol seam and nothing else: it sends
//! [`agent_protocol::Op`]s and renders the [`agent_protocol::Event`]s that
//! come back. The running turn's [`agent_protocol::AgentEvent`]s (the same
//! events the headless JSONL carries) become a transcript: Markdown with
//! highlighted code blocks ([`markdown`], [`highlight`]), tool calls as cells
//! with their skill, input and result. Questions — a skill's first use of a
//! permission, a tool that requires approval with its diff ([`diff`]) or
//! command line — arrive as [`agent_protocol::Event::ApprovalRequested`] and
//! are answered in a dialog with an [`agent_protocol::Op::Approve`].
//!
//! [`run`] drives a real terminal; tests drive [`app::App`] with ratatui's
//! `TestBackend` against a scripted agent end on the protocol's `Server`.
#![deny(missing_docs)]

pub mod app;
pub mod diff;
mod events;
pub mod highlight;
pub mod input;
pub mod markdown;
pub mod state;
pub mod term;
pub mod theme;
pub mod ui;

pub use app::App;
pub use term::run;
pub use theme::Theme;

/// How [`run`] shows the interface.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    /// The project root: `@path` attachments are read under it.
    pub project_root: std::path::PathBuf,
    /// Styles.
    pub theme: Theme,
}

/// What the interface reacts to.
#[derive(Debug)]
pub enum UiMsg {
    /// A terminal event: a key, a paste, a resize.
    Term(crossterm::event::Event),
    /// An event from the agent.
    Protocol(agent_protocol::Event),
    /// The agent's end of the connection is gone (without a
    /// `ShutdownComplete`).
    Disconnected,
}

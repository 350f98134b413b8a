//! `agent.approval_mode` (`AGENT_APPROVAL_MODE`): how tools that require
//! approval are decided, in `agent run`, `agent workflow run` and the TUI.
//!
//! - `prompt` (the default): the interface decides — the TUI asks; the
//!   headless commands approve with `--yes` or a matching `--allow`.
//! - `auto`: approved without asking, as with `--yes`.
//! - `deny`: refused without asking (`--yes` on the command line still
//!   approves: a flag overrides the configuration).
//!
//! Approval is the step before a tool runs; the capabilities it then uses
//! are still checked against the grants.

use std::sync::Arc;

use agent_config::ApprovalMode;
use agent_core::ApprovalGate;

/// The configured mode in front of an interface's own gate.
pub(crate) struct ModeGate {
    mode: ApprovalMode,
    inner: Arc<dyn ApprovalGate>,
    /// What else the user can do about a `deny`, in the interface's words.
    deny_hint: &'static str,
}

impl ModeGate {
    /// `inner` as is for `prompt`, else behind the mode.
    pub(crate) fn wrap(
        mode: ApprovalMode,
        inner: Arc<dyn ApprovalGate>,
        deny_hint: &'static str,
    ) -> Arc<dyn ApprovalGate> {
        match mode {
            ApprovalMode::Prompt => inner,
            _ => Arc::new(ModeGate {
                mode,
                inner,
                deny_hint,
            }),
        }
    }
}

impl ApprovalGate for ModeGate {
    fn approve_tool(&self, skill: &str, tool: &str, input_json: &str) -> bool {
        match self.mode {
            ApprovalMode::Auto => true,
            ApprovalMode::Deny => false,
            _ => self.inner.approve_tool(skill, tool, input_json),
        }
    }

    fn refusal(&self) -> String {
        match self.mode {
            ApprovalMode::Deny => format!(
                "tools that need approval are refused by `agent.approval_mode = \"deny\"` \
                 (config.toml or AGENT_APPROVAL_MODE){}",
                self.deny_hint
            ),
            _ => self.inner.refusal(),
        }
    }
}

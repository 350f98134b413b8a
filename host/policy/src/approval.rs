//! Asking the user.

use agent_manifest::Permission;

/// The user's answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Answer {
    /// Allow it for the rest of this process (same skill, permission and scope); not saved.
    Once,
    /// Allow it now and in future sessions (saved until revoked).
    Always,
    /// Refuse it now and in future sessions (saved until revoked).
    Deny,
}

/// What a skill is about to do that needs the user's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The skill asking.
    pub skill: String,
    /// The permission it needs.
    pub permission: Permission,
    /// What the permission is used on, when it has a scope: the program for `shell:exec`, the
    /// URL for `net:fetch`.
    pub scope: Option<String>,
    /// What it is about to do, in words for the user (`run git status`).
    pub detail: String,
}

/// A front end that can ask the user. Implementations block until the user answers.
///
/// [`Grants`](crate::Grants) asks one question at a time; an approver must not call back into
/// the `Grants` that asked it.
pub trait Approver: Send + Sync {
    /// Asks the user about `req`.
    fn ask(&self, req: &ApprovalRequest) -> Answer;
}

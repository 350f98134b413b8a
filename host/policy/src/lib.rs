//! `agent-policy`: who may do what, and the record of it.
//!
//! - [`Approver`], [`ApprovalRequest`], [`Answer`]: how a front end (TUI, headless runner) is
//!   asked whether a skill may use a permission.
//! - [`AllowEntry`], [`AllowList`]: the grants of a non-interactive run, from `--allow` flags
//!   and capability files.
//! - [`Grants`]: the decision point of one process. It combines the manifest (declared or not),
//!   stored answers, answers given this session, the allowlist and the config's `auto_approve`,
//!   and writes every decision to the [`AuditLog`].
//! - [`AuditLog`]: the append-only, hash-chained JSON Lines audit log, with [`AuditLog::verify`].
//! - [`capability`]: the capability table (what each permission unlocks, its scope, when a
//!   grant covers a use), and [`standing`]: what a run would decide, without side effects.
//! - [`constraints`]: skills as behaviour constraints; [`merge`] combines them deterministically.

#![deny(missing_docs)]

mod allow;
mod approval;
pub mod audit;
pub mod capability;
pub mod constraints;
mod grants;
mod standing;
mod yaml;

pub use allow::{AllowEntry, AllowFileError, AllowList, AllowParseError, AllowProblem};
pub use approval::{Answer, ApprovalRequest, Approver};
pub use audit::{
    AuditEntry, AuditError, AuditLog, AuditRecord, VerifyError, VerifyProblem, VerifyReport,
};
pub use constraints::{Constraints, ContextEntry, Limit, Merged, SkillConstraint, Source, merge};
pub use grants::{Denial, GrantSource, Grants, GrantsError, Prospect, Verdict};
pub use standing::{Standing, standing};

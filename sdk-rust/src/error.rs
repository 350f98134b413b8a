//! The two error types of the SDK: [`Error`] for host capabilities and
//! [`ToolError`] for what a tool (or other export) answers.

use std::fmt;

use crate::wit::tool_skill::agent::skill::types::{CapabilityError, SkillError};

/// Why a host capability (`exec`, `http`, `llm`, `config`, ...) refused or
/// failed a request.
///
/// It wraps the WIT `capability-error` with the name of the capability, so
/// its [`Display`](fmt::Display) reads on its own, e.g.
/// `exec: permission denied: shell:exec was not granted`.
///
/// A `?` in a tool handler turns it into a [`ToolError`]: a refused
/// permission becomes [`ToolError::Denied`], everything else
/// [`ToolError::Failed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    capability: &'static str,
    kind: ErrorKind,
}

/// What went wrong in an [`Error`]; the first six mirror the WIT
/// `capability-error` cases.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The permission behind the capability was not granted for this call, or
    /// the request falls outside the skill's declared scope (a program not in
    /// its `exec` allowlist, a host not in its `hosts` list).
    Denied(String),
    /// The host does not provide this capability here.
    Unavailable(String),
    /// The request itself is malformed (bad URL, empty program name...).
    Invalid(String),
    /// The capability ran and failed (process could not start, network
    /// error...).
    Failed(String),
    /// The request did not finish within its time limit.
    TimedOut,
    /// A per-call or per-turn limit was reached (count or size).
    LimitExceeded(String),
    /// The host answered, but its JSON answer does not have the shape the
    /// caller asked for (a config value, an `llm` JSON completion, another
    /// skill's output).
    Decode(String),
}

impl Error {
    /// An error of `kind` from `capability` (a short name such as `exec`).
    pub fn new(capability: &'static str, kind: ErrorKind) -> Self {
        Error { capability, kind }
    }

    /// Wraps a WIT `capability-error` returned by `capability`.
    pub(crate) fn from_wit(capability: &'static str, error: CapabilityError) -> Self {
        let kind = match error {
            CapabilityError::Denied(m) => ErrorKind::Denied(m),
            CapabilityError::Unavailable(m) => ErrorKind::Unavailable(m),
            CapabilityError::Invalid(m) => ErrorKind::Invalid(m),
            CapabilityError::Failed(m) => ErrorKind::Failed(m),
            CapabilityError::TimedOut => ErrorKind::TimedOut,
            CapabilityError::LimitExceeded(m) => ErrorKind::LimitExceeded(m),
        };
        Error { capability, kind }
    }

    /// The capability that failed: `exec`, `http`, `llm`, `git`, `git-write`,
    /// `skills`, `syntax` or `config`.
    pub fn capability(&self) -> &'static str {
        self.capability
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// Whether the permission (or its scope) was refused.
    pub fn is_denied(&self) -> bool {
        matches!(self.kind, ErrorKind::Denied(_))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let cap = self.capability;
        match &self.kind {
            ErrorKind::Denied(m) => write!(f, "{cap}: permission denied: {m}"),
            ErrorKind::Unavailable(m) => write!(f, "{cap}: not available: {m}"),
            ErrorKind::Invalid(m) => write!(f, "{cap}: invalid request: {m}"),
            ErrorKind::Failed(m) => write!(f, "{cap}: failed: {m}"),
            ErrorKind::TimedOut => write!(f, "{cap}: timed out"),
            ErrorKind::LimitExceeded(m) => write!(f, "{cap}: limit exceeded: {m}"),
            ErrorKind::Decode(m) => write!(f, "{cap}: unexpected answer: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// Why a tool call (or another export: workflow, scanner, transform, hook)
/// failed; it becomes the WIT `skill-error` the host shows to the model.
///
/// Build one with [`ToolError::invalid_input`], [`ToolError::not_found`],
/// [`ToolError::denied`] or [`ToolError::failed`], or let `?` convert a
/// capability [`Error`], an [`std::io::Error`] or a [`serde_json::Error`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolError {
    /// The input does not fit what the tool expects; the text says how.
    InvalidInput(String),
    /// The thing asked for does not exist (a tool, a file, a record...).
    NotFound(String),
    /// A permission the tool needed was not granted.
    Denied(String),
    /// Anything else; the text is shown to the model and the user.
    Failed(String),
}

impl ToolError {
    /// The input does not fit what the tool expects.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        ToolError::InvalidInput(message.into())
    }

    /// The thing asked for does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        ToolError::NotFound(message.into())
    }

    /// A permission the tool needed was not granted.
    pub fn denied(message: impl Into<String>) -> Self {
        ToolError::Denied(message.into())
    }

    /// The tool failed for any other reason.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed(message.into())
    }

    /// The message, without the kind.
    pub fn message(&self) -> &str {
        match self {
            ToolError::InvalidInput(m)
            | ToolError::NotFound(m)
            | ToolError::Denied(m)
            | ToolError::Failed(m) => m,
        }
    }

    /// Converts to the WIT `skill-error`.
    pub fn into_wit(self) -> SkillError {
        match self {
            ToolError::InvalidInput(m) => SkillError::InvalidInput(m),
            ToolError::NotFound(m) => SkillError::NotFound(m),
            ToolError::Denied(m) => SkillError::Denied(m),
            ToolError::Failed(m) => SkillError::Failed(m),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ToolError::InvalidInput(m) => write!(f, "invalid input: {m}"),
            ToolError::NotFound(m) => write!(f, "not found: {m}"),
            ToolError::Denied(m) => write!(f, "denied: {m}"),
            ToolError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ToolError {}

impl From<Error> for ToolError {
    fn from(error: Error) -> Self {
        match error.kind {
            ErrorKind::Denied(_) => ToolError::Denied(error.to_string()),
            _ => ToolError::Failed(error.to_string()),
        }
    }
}

impl From<std::io::Error> for ToolError {
    /// A bare I/O error, without the path: prefer
    /// [`fs::io_error`](crate::fs::io_error), which names the path and explains
    /// a missing file permission.
    fn from(error: std::io::Error) -> Self {
        crate::fs::describe_io_error(error.kind(), &error.to_string(), None, None)
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(error: serde_json::Error) -> Self {
        ToolError::Failed(format!("JSON error: {error}"))
    }
}

impl From<ToolError> for SkillError {
    fn from(error: ToolError) -> Self {
        error.into_wit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_errors_read_on_their_own() {
        let e = Error::from_wit(
            "exec",
            CapabilityError::Denied("shell:exec not granted".into()),
        );
        assert_eq!(
            e.to_string(),
            "exec: permission denied: shell:exec not granted"
        );
        assert!(e.is_denied());
        let e = Error::from_wit("http", CapabilityError::TimedOut);
        assert_eq!(e.to_string(), "http: timed out");
    }

    #[test]
    fn question_mark_maps_denied_to_denied_and_the_rest_to_failed() {
        let denied: ToolError = Error::new("exec", ErrorKind::Denied("no".into())).into();
        assert!(matches!(denied, ToolError::Denied(m) if m == "exec: permission denied: no"));
        let failed: ToolError = Error::new("http", ErrorKind::Failed("dns".into())).into();
        assert!(matches!(failed, ToolError::Failed(m) if m == "http: failed: dns"));
    }

    #[test]
    fn tool_errors_become_skill_errors() {
        assert!(matches!(
            ToolError::not_found("x").into_wit(),
            SkillError::NotFound(m) if m == "x"
        ));
        assert!(matches!(
            SkillError::from(ToolError::invalid_input("y")),
            SkillError::InvalidInput(m) if m == "y"
        ));
    }
}

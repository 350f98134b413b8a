//! Questions the agent asks the user, and the answers.

use serde::{Deserialize, Serialize};

/// A question waiting for the user; answered with
/// [`Op::Approve`](crate::Op::Approve) carrying the same `id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// Unique within the session.
    pub id: u64,
    /// What is asked.
    pub kind: ApprovalKind,
}

/// What an approval request is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalKind {
    /// A tool that requires approval is about to run.
    Tool {
        /// The skill providing it.
        skill: String,
        /// The tool's own name.
        tool: String,
        /// What it is about to do: the diff of an edit, the command line.
        preview: ToolPreview,
    },
    /// A skill's first use of a permission it declared.
    Permission {
        /// The skill asking.
        skill: String,
        /// The permission (`shell:exec`, `net:fetch`...).
        permission: String,
        /// What the permission allows, in words for the user (`run
        /// programs (no shell) inside the project`); empty when unknown.
        #[serde(default)]
        description: String,
        /// What it is used on, when it has a scope: the program for
        /// `shell:exec`, the URL for `net:fetch`.
        scope: Option<String>,
        /// What it is about to do, in words for the user (`run git status`).
        detail: String,
    },
}

/// The user's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    /// Allow this once (a permission: for the rest of this process, not saved).
    Once,
    /// Allow it from now on: a tool, for the rest of the session; a
    /// permission, in future sessions too (saved until revoked).
    Always,
    /// Refuse it (a permission: saved until revoked).
    Deny,
}

/// What a tool that needs approval is about to do, computed on the host from
/// the tool's input before it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolPreview {
    /// A change to a file.
    Diff {
        /// The file, as the tool named it.
        path: String,
        /// Whether the file does not exist yet.
        new_file: bool,
        /// The diff (empty: no change).
        lines: Vec<DiffLine>,
    },
    /// A program to run: its command line.
    Command {
        /// The command line.
        line: String,
    },
    /// The change cannot apply (the text to replace is not in the file, or
    /// the file cannot be read).
    Problem {
        /// Why.
        message: String,
    },
    /// Any other tool: its input, as JSON text.
    Input {
        /// The input.
        json: String,
    },
}

/// One line of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", content = "line", rename_all = "snake_case")]
pub enum DiffLine {
    /// `@@ -a,b +c,d @@`.
    Hunk(String),
    /// A line in both versions: old and new line numbers.
    Same(usize, usize, String),
    /// A removed line: its old line number.
    Removed(usize, String),
    /// An added line: its new line number.
    Added(usize, String),
}

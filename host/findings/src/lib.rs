//! `agent-findings`: findings a model reports, and what a review is made of.
//!
//! - [`intake`]: the host side of the `report_finding` tool — every finding
//!   the model reports (input schema: the spec's Appendix C,
//!   [`REPORT_FINDING_SCHEMA`]) is validated, anchored to a real file and
//!   line (and, in a review, to the lines the diff changed), deduplicated
//!   against the static scanners' findings and counted by what happened to
//!   it. Code review uses it; the security engine's model-backed analysis
//!   and log analysis are meant to.
//! - [`patch`]: a unified diff parsed into files, hunks and the added lines.
//! - [`chunk`]: each hunk with its enclosing function or class
//!   (tree-sitter) and the file's imports, packed into chunks within a
//!   budget of characters: one model call each.
//! - [`github_review`]: the JSON body of a GitHub pull-request review.
#![deny(missing_docs)]

pub mod chunk;
pub mod github_review;
pub mod intake;
pub mod patch;

pub use chunk::{Chunk, ChunkOptions, FileView, chunks};
pub use intake::{Anchor, Answer, Counts, DropReason, Intake};
pub use patch::{FilePatch, Hunk, HunkLine, LineKind, parse_patch};

/// The tool's name.
pub const REPORT_FINDING: &str = "report_finding";

/// Its description, as the model reads it.
pub const REPORT_FINDING_DESCRIPTION: &str = "Report one finding (a bug, a vulnerability, a \
     risk). Call it once per finding; never write findings as plain text. `location.file` is \
     relative to the project root and the lines are those of the new version of the file; \
     `evidence` is the offending code copied exactly. The answer says whether the finding was \
     recorded, demoted or dropped, and why.";

/// Its input schema: the Unified Finding Schema (the spec's Appendix C).
pub const REPORT_FINDING_SCHEMA: &str = include_str!("../schemas/report_finding.json");

/// The categories a finding may have: the spec's (Appendix C), then the
/// code review's.
pub const CATEGORIES: &[&str] = &[
    "injection",
    "authentication",
    "authorization",
    "cryptography",
    "secrets-exposure",
    "vulnerable-dependency",
    "misconfiguration",
    "data-exposure",
    "race-condition",
    "input-validation",
    "logging-monitoring",
    "supply-chain",
    "license-compliance",
    "correctness",
    "error-handling",
    "performance",
    "maintainability",
    "testing",
    "documentation",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_json_and_lists_the_categories() {
        let v: serde_json::Value = serde_json::from_str(REPORT_FINDING_SCHEMA).unwrap();
        let cats: Vec<&str> = v["properties"]["category"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(cats, CATEGORIES);
        let sevs: Vec<&str> = v["properties"]["severity"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let ours: Vec<&str> = agent_security::Severity::ALL
            .iter()
            .map(|s| s.as_str())
            .collect();
        assert_eq!(sevs, ours);
    }
}

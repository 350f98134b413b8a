//! `agent-security`: the security engine.
//!
//! [`audit`] walks a project ([`walk`]: ignore files, hidden, size and
//! binary skips), hands each file to the scanners of the security-rule skills
//! (WebAssembly components, one instance per worker thread per skill, spread
//! over the cores) and to the declarative rules ([`rules`]: `.security.yaml`
//! and skills' `sast_rules_file`, regex or tree-sitter), audits lockfiles
//! against OSV ([`deps`]), then applies the allowlist, severity overrides,
//! deduplication across scanners, the diff scope ([`diff`]), the caps on
//! the findings kept ([`limits`]) and the CI thresholds ([`post`]). [`output`] writes the report as SARIF 2.1.0, JSON,
//! Markdown, GitHub workflow commands or a CycloneDX 1.6 SBOM.
#![deny(missing_docs)]

pub mod config;
pub mod deps;
pub mod diff;
mod engine;
pub mod exclude;
pub mod finding;
pub mod ios;
pub mod limits;
mod only;
pub mod output;
pub mod paths;
pub mod post;
pub mod rules;
pub mod taint;
pub mod walk;
mod yaml_lines;

pub use config::{
    Allowlist, BannedDependency, CiConfig, ConfigError, Override, PatternKind, Rule, SECURITY_FILE,
    SecurityConfig,
};
pub use deps::DependencyVulnerability;
pub use diff::{DiffScope, diff_scope, parse_hunks};
pub use engine::{
    AuditOptions, AuditReport, ScanError, ScannerInfo, ScannerStats, Scope, Stats, audit,
    load_rules, select_skills,
};
pub use exclude::Exclusion;
pub use finding::{Confidence, Finding, Location, Severity, UnknownSeverity, sort_findings};
pub use limits::{FindingCaps, Truncated};
pub use only::{ENGINE_SCANNERS, ScannerFilter, valid_names as scanner_names};
pub use output::Format;
pub use post::{
    Policy, Thresholds, Verdict, apply_allowlist, apply_overrides, dedup, evaluate, judge,
};
pub use rules::{RuleError, RuleSet};
pub use walk::{SkipReason, Skipped, Unreadable, Walk, WalkOptions, WalkedFile};

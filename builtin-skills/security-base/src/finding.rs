//! Rule metadata and the WIT `finding` builder.

use agent_skill_sdk::types::{Confidence, Finding, Location, Severity};

/// What every rule says about itself.
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    /// Stable rule id, e.g. `SECRET-AWS-ACCESS-KEY`.
    pub id: &'static str,
    /// One-line title.
    pub title: &'static str,
    /// What is wrong and why it matters.
    pub description: &'static str,
    /// How bad it is.
    pub severity: Severity,
    /// Spec category (`secrets-exposure`, `injection`...).
    pub category: &'static str,
    /// `CWE-nnn`.
    pub cwe: &'static str,
    /// `Annn:2021`.
    pub owasp: &'static str,
    /// How to fix it.
    pub remediation: &'static str,
    /// How sure the rule is.
    pub confidence: Confidence,
    /// Links.
    pub references: &'static [&'static str],
}

/// Where a finding is: 1-based lines and columns (columns 0 when unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First line.
    pub start_line: u32,
    /// First column.
    pub start_column: u32,
    /// Last line.
    pub end_line: u32,
    /// Column just past the last character.
    pub end_column: u32,
}

impl Span {
    /// A whole line (columns unknown).
    pub fn line(line: u32) -> Self {
        Span {
            start_line: line,
            start_column: 0,
            end_line: line,
            end_column: 0,
        }
    }
}

/// Builds a finding of rule `meta` at `span` of `path`.
pub fn make(meta: &Meta, path: &str, span: Span, evidence: String) -> Finding {
    make_with(meta, path, span, evidence, meta.confidence, Vec::new())
}

/// [`make`] with a confidence and metadata of its own.
pub fn make_with(
    meta: &Meta,
    path: &str,
    span: Span,
    evidence: String,
    confidence: Confidence,
    metadata: Vec<(String, String)>,
) -> Finding {
    let opt = |s: &str| (!s.is_empty()).then(|| s.to_string());
    Finding {
        rule_id: meta.id.to_string(),
        title: meta.title.to_string(),
        description: meta.description.to_string(),
        severity: meta.severity,
        category: meta.category.to_string(),
        cwe: opt(meta.cwe),
        owasp: opt(meta.owasp),
        location: Location {
            file: path.to_string(),
            start_line: span.start_line,
            end_line: span.end_line,
            start_column: span.start_column,
            end_column: span.end_column,
            function: None,
        },
        evidence,
        remediation: meta.remediation.to_string(),
        confidence,
        references: meta.references.iter().map(|s| s.to_string()).collect(),
        metadata,
    }
}

/// Keeps one finding per (rule, start line), the first one.
pub fn dedup(findings: &mut Vec<Finding>) {
    let mut seen = std::collections::HashSet::new();
    findings.retain(|f| seen.insert((f.rule_id.clone(), f.location.start_line)));
}

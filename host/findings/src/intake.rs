//! The host side of `report_finding`: each finding the model reports is
//! validated, anchored, deduplicated and counted, one rule per step.
//!
//! | what the model sent | what happens | counted as |
//! |---|---|---|
//! | a field missing, of the wrong type, or not in its enumeration (severity, category, confidence) | dropped | `invalid` |
//! | a path outside the project, or a file that does not exist (in a review: in the new version) | dropped | `no_such_file` |
//! | `start_line` past the file's end | dropped | `no_such_line` |
//! | in a review, lines the diff did not add (without `--context-findings`) | dropped | `off_diff` |
//! | the same issue as a static scanner's finding or an earlier report | dropped, the first one kept | `duplicate` |
//! | `end_line` past the file's end | kept, `end_line` cut to the last line | `demoted` |
//! | `evidence` that is not on the reported lines | kept, confidence `low`, metadata `anchor` says why | `demoted` |
//! | anything else | kept | `accepted` |
//!
//! A finding that cannot be put on a real line is dropped rather than
//! demoted: every writer (SARIF, GitHub annotations, review comments) needs
//! a line that exists. The answer to the model names the reason, so a
//! model can correct and report again.

use std::collections::HashMap;
use std::sync::Arc;

use agent_security::{Confidence, DiffScope, Finding, Location, Severity};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::CATEGORIES;

/// Where findings may point.
#[derive(Debug, Clone, Default)]
pub struct Anchor {
    /// In a review: the files and the lines the diff added.
    pub diff: Option<DiffScope>,
    /// Keep findings on lines the diff did not add (marked `context` in
    /// their metadata) instead of dropping them.
    pub context_findings: bool,
}

/// Why a finding was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// A field missing or wrong.
    Invalid,
    /// The file does not exist (or is outside the project).
    NoSuchFile,
    /// The line does not exist.
    NoSuchLine,
    /// Not on a line the diff added.
    OffDiff,
    /// Already reported.
    Duplicate,
}

/// What happened to one report; [`Answer::message`] is the tool's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Recorded (`demoted`: why it was weakened, when it was).
    Recorded {
        /// The finding's id.
        id: String,
        /// Why it was demoted, if it was.
        demoted: Option<String>,
    },
    /// Not recorded.
    Dropped {
        /// The reason.
        reason: DropReason,
        /// The detail, for the model.
        detail: String,
    },
}

impl Answer {
    /// The text the model gets back.
    pub fn message(&self) -> String {
        match self {
            Answer::Recorded { id, demoted: None } => format!("recorded as finding {id}"),
            Answer::Recorded {
                id,
                demoted: Some(why),
            } => format!("recorded as finding {id}, demoted: {why}"),
            Answer::Dropped { detail, .. } => format!("dropped: {detail}"),
        }
    }

    /// Whether the finding was recorded.
    pub fn recorded(&self) -> bool {
        matches!(self, Answer::Recorded { .. })
    }
}

/// What happened to the findings reported, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// Every report.
    pub received: usize,
    /// Recorded as they were.
    pub accepted: usize,
    /// Recorded, weakened.
    pub demoted: usize,
    /// Dropped: a field missing or wrong.
    pub invalid: usize,
    /// Dropped: no such file.
    pub no_such_file: usize,
    /// Dropped: no such line.
    pub no_such_line: usize,
    /// Dropped: not on the diff's lines.
    pub off_diff: usize,
    /// Dropped: already reported.
    pub duplicate: usize,
}

impl Counts {
    /// Every report dropped.
    pub fn dropped(&self) -> usize {
        self.invalid + self.no_such_file + self.no_such_line + self.off_diff + self.duplicate
    }

    /// One line for a summary, e.g. `5 reported: 2 recorded, 1 demoted, 2
    /// dropped (1 invalid, 1 off the diff)`.
    pub fn summary(&self) -> String {
        let mut why = Vec::new();
        for (n, what) in [
            (self.invalid, "invalid"),
            (self.no_such_file, "no such file"),
            (self.no_such_line, "no such line"),
            (self.off_diff, "off the diff"),
            (self.duplicate, "duplicate"),
        ] {
            if n > 0 {
                why.push(format!("{n} {what}"));
            }
        }
        let mut s = format!(
            "{} reported by the model: {} recorded, {} demoted, {} dropped",
            self.received,
            self.accepted,
            self.demoted,
            self.dropped()
        );
        if !why.is_empty() {
            s.push_str(&format!(" ({})", why.join(", ")));
        }
        s
    }

    fn drop(&mut self, reason: DropReason) {
        match reason {
            DropReason::Invalid => self.invalid += 1,
            DropReason::NoSuchFile => self.no_such_file += 1,
            DropReason::NoSuchLine => self.no_such_line += 1,
            DropReason::OffDiff => self.off_diff += 1,
            DropReason::Duplicate => self.duplicate += 1,
        }
    }
}

/// Reads a file of the project (in a review: of the new version) by its
/// `/`-separated relative path; `None` when it does not exist.
pub type SourceFn = dyn Fn(&str) -> Option<String> + Send + Sync;

/// Takes in the findings of one run.
pub struct Intake {
    scanner: String,
    anchor: Anchor,
    source: Box<SourceFn>,
    files: HashMap<String, Option<Arc<Vec<String>>>>,
    known: Vec<Finding>,
    findings: Vec<Finding>,
    counts: Counts,
}

fn drop(reason: DropReason, detail: impl Into<String>) -> Answer {
    Answer::Dropped {
        reason,
        detail: detail.into(),
    }
}

impl Intake {
    /// An intake whose findings are attributed to `scanner` (e.g.
    /// `code-review/model`), anchored by `anchor`, reading files with
    /// `source`.
    pub fn new(scanner: impl Into<String>, anchor: Anchor, source: Box<SourceFn>) -> Intake {
        Intake {
            scanner: scanner.into(),
            anchor,
            source,
            files: HashMap::new(),
            known: Vec::new(),
            findings: Vec::new(),
            counts: Counts::default(),
        }
    }

    /// Findings already known (the static scanners'): a report of the same
    /// issue is a duplicate.
    pub fn known(&mut self, findings: &[Finding]) {
        self.known.extend(findings.iter().cloned());
    }

    /// Counts `n` reports refused before they reached the intake (the
    /// tool router's schema check: a field missing, a severity not in the
    /// enumeration): received, and invalid.
    pub fn refused(&mut self, n: usize) {
        self.counts.received += n;
        self.counts.invalid += n;
    }

    /// The counts so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The findings recorded so far, in the order they came.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// The findings recorded and the counts.
    pub fn finish(self) -> (Vec<Finding>, Counts) {
        (self.findings, self.counts)
    }

    /// Takes in one `report_finding` input.
    pub fn submit(&mut self, input: &Value) -> Answer {
        self.counts.received += 1;
        let answer = self.take(input);
        match &answer {
            Answer::Recorded { demoted: None, .. } => self.counts.accepted += 1,
            Answer::Recorded {
                demoted: Some(_), ..
            } => self.counts.demoted += 1,
            Answer::Dropped { reason, .. } => self.counts.drop(*reason),
        }
        answer
    }

    fn lines(&mut self, file: &str) -> Option<Arc<Vec<String>>> {
        if let Some(cached) = self.files.get(file) {
            return cached.clone();
        }
        let lines =
            (self.source)(file).map(|text| Arc::new(text.lines().map(String::from).collect()));
        self.files.insert(file.to_string(), lines.clone());
        lines
    }

    fn take(&mut self, input: &Value) -> Answer {
        let mut f = match parse(input, &self.scanner) {
            Ok(f) => f,
            Err(detail) => return drop(DropReason::Invalid, detail),
        };
        let file = match normalize_path(&f.location.file) {
            Some(p) => p,
            None => {
                return drop(
                    DropReason::NoSuchFile,
                    format!(
                        "`{}` is not a path inside the project (give it relative to the project root)",
                        f.location.file
                    ),
                );
            }
        };
        f.location.file = file.clone();
        let Some(lines) = self.lines(&file) else {
            return drop(
                DropReason::NoSuchFile,
                format!("there is no file `{file}` in the project"),
            );
        };
        let count = u32::try_from(lines.len()).unwrap_or(u32::MAX);
        if f.location.start_line > count {
            return drop(
                DropReason::NoSuchLine,
                format!(
                    "`{file}` has {count} lines; there is no line {}",
                    f.location.start_line
                ),
            );
        }
        let mut demoted = Vec::new();
        if f.location.end_line > count {
            demoted.push(format!(
                "end_line {} is past the end of `{file}` ({count} lines); cut to {count}",
                f.location.end_line
            ));
            f.location.end_line = count;
        }
        let (start, end) = (f.location.start_line, f.location.end_line);
        if let Some(diff) = &self.anchor.diff
            && !diff.overlaps(&file, start, end)
        {
            if !self.anchor.context_findings {
                let what = if diff.files.contains(&file) {
                    format!(
                        "lines {start}-{end} of `{file}` were not added or changed by this diff"
                    )
                } else {
                    format!("`{file}` is not changed by this diff")
                };
                return drop(
                    DropReason::OffDiff,
                    format!("{what}; report only findings on the changed lines"),
                );
            }
            f.metadata.insert("context".into(), "true".into());
        }
        let on_lines = &lines[(start - 1) as usize..end as usize];
        if !f.evidence.trim().is_empty() && !evidence_on(&f.evidence, on_lines) {
            demoted.push(format!(
                "the evidence is not on lines {start}-{end} of `{file}`; confidence lowered to low"
            ));
            f.confidence = Confidence::Low;
            f.metadata
                .insert("anchor".into(), "evidence not found on the lines".into());
        }
        f.fingerprint(on_lines.first().map(String::as_str));
        if let Some(same) = self
            .known
            .iter()
            .chain(self.findings.iter())
            .find(|k| same_issue(k, &f))
        {
            return drop(
                DropReason::Duplicate,
                format!(
                    "the same issue is already reported at {}:{} ({} by {}, finding {})",
                    same.location.file,
                    same.location.start_line,
                    same.rule_id,
                    same.scanner,
                    same.id
                ),
            );
        }
        let id = f.id.clone();
        self.findings.push(f);
        Answer::Recorded {
            id,
            demoted: (!demoted.is_empty()).then(|| demoted.join("; ")),
        }
    }
}

/// The same file, overlapping lines, and the same rule, or the same
/// category (and CWE when both name one).
fn same_issue(a: &Finding, b: &Finding) -> bool {
    let (la, lb) = (&a.location, &b.location);
    la.file == lb.file
        && la.start_line <= lb.end_line.max(lb.start_line)
        && lb.start_line <= la.end_line.max(la.start_line)
        && (a.rule_id == b.rule_id
            || (a.category == b.category && (a.cwe.is_none() || b.cwe.is_none() || a.cwe == b.cwe)))
}

/// Whether the evidence's first non-blank line is on one of `lines`
/// (whitespace runs collapsed on both sides).
fn evidence_on(evidence: &str, lines: &[String]) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(first) = evidence.lines().map(squash).find(|l| !l.is_empty()) else {
        return true;
    };
    lines.iter().any(|l| squash(l).contains(&first))
}

/// A relative `/`-separated path inside the project, or `None`.
fn normalize_path(p: &str) -> Option<String> {
    let p = p.trim().replace('\\', "/");
    let p = p.strip_prefix("./").unwrap_or(&p);
    if p.is_empty() || p.starts_with('/') || p.contains(':') {
        return None;
    }
    let parts: Vec<&str> = p
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return None;
    }
    Some(parts.join("/"))
}

fn field<'a>(o: &'a Map<String, Value>, name: &str) -> Result<&'a str, String> {
    match o.get(name) {
        None => Err(format!("`{name}` is missing")),
        Some(Value::String(s)) if s.trim().is_empty() => Err(format!("`{name}` is empty")),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("`{name}` must be a string")),
    }
}

fn optional<'a>(o: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, String> {
    match o.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str()).filter(|s| !s.trim().is_empty())),
        Some(_) => Err(format!("`{name}` must be a string")),
    }
}

fn line(o: &Map<String, Value>, name: &str) -> Result<Option<u32>, String> {
    match o.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n >= 1)
            .map(Some)
            .ok_or_else(|| format!("`location.{name}` must be a line number (1 or more)")),
    }
}

const FIELDS: &[&str] = &[
    "rule_id",
    "severity",
    "category",
    "title",
    "description",
    "location",
    "cwe",
    "owasp",
    "evidence",
    "remediation",
    "confidence",
    "references",
    "metadata",
    "related",
];

/// Checks the input against the schema's rules and builds the finding
/// (not yet anchored).
fn parse(input: &Value, scanner: &str) -> Result<Finding, String> {
    let o = input
        .as_object()
        .ok_or("the input must be an object with the finding's fields")?;
    if let Some(k) = o.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "unknown field `{k}` (the fields are: {})",
            FIELDS.join(", ")
        ));
    }
    let severity_text = field(o, "severity")?;
    let severity: Severity = match severity_text {
        "critical" | "high" | "medium" | "low" | "info" => {
            severity_text.parse().map_err(|e| format!("{e}"))?
        }
        other => {
            return Err(format!(
                "severity `{other}` is not one of critical, high, medium, low, info"
            ));
        }
    };
    let category = field(o, "category")?;
    if !CATEGORIES.contains(&category) {
        return Err(format!(
            "category `{category}` is not one of: {}",
            CATEGORIES.join(", ")
        ));
    }
    let title = field(o, "title")?;
    let description = field(o, "description")?;
    let loc = match o.get("location") {
        None => return Err("`location` is missing".into()),
        Some(Value::Object(l)) => l,
        Some(_) => return Err("`location` must be an object with `file` and `start_line`".into()),
    };
    if let Some(k) = loc
        .keys()
        .find(|k| !["file", "start_line", "end_line", "function"].contains(&k.as_str()))
    {
        return Err(format!(
            "unknown field `location.{k}` (the fields are: file, start_line, end_line, function)"
        ));
    }
    let file = field(loc, "file").map_err(|e| e.replacen("`file`", "`location.file`", 1))?;
    let start_line = line(loc, "start_line")?.ok_or("`location.start_line` is missing")?;
    let end_line = line(loc, "end_line")?.unwrap_or(start_line);
    if end_line < start_line {
        return Err(format!(
            "`location.end_line` ({end_line}) is before `location.start_line` ({start_line})"
        ));
    }
    let confidence = match optional(o, "confidence")? {
        None | Some("medium") => Confidence::Medium,
        Some("high") => Confidence::High,
        Some("low") => Confidence::Low,
        Some(other) => {
            return Err(format!(
                "confidence `{other}` is not one of high, medium, low"
            ));
        }
    };
    let references = match o.get("references") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .map(|r| r.as_str().map(String::from))
            .collect::<Option<Vec<_>>>()
            .ok_or("`references` must be a list of strings")?,
        Some(_) => return Err("`references` must be a list of strings".into()),
    };
    let mut metadata = std::collections::BTreeMap::new();
    match o.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                let v = v
                    .as_str()
                    .ok_or_else(|| format!("`metadata.{k}` must be a string"))?;
                metadata.insert(k.clone(), v.to_string());
            }
        }
        Some(_) => return Err("`metadata` must be an object of strings".into()),
    }
    // Other findings this one is part of an exploit path with (their ids,
    // or `file:line`): kept in the metadata, read by the deep analysis'
    // attack-chain correlation.
    match o.get("related") {
        None | Some(Value::Null) => {}
        Some(Value::Array(a)) => {
            let ids = a
                .iter()
                .map(|r| r.as_str().map(|s| s.trim().replace(',', " ")))
                .collect::<Option<Vec<_>>>()
                .ok_or("`related` must be a list of strings")?;
            let ids: Vec<String> = ids.into_iter().filter(|s| !s.is_empty()).collect();
            if !ids.is_empty() {
                metadata.insert("related".into(), ids.join(","));
            }
        }
        Some(_) => return Err("`related` must be a list of strings".into()),
    }
    let rule_id = optional(o, "rule_id")?.unwrap_or(category);
    let mut f = Finding::new(
        rule_id,
        scanner,
        severity,
        category,
        title.trim(),
        Location {
            file: file.to_string(),
            start_line,
            end_line,
            start_column: 0,
            end_column: 0,
            function: optional(loc, "function")?.map(String::from),
        },
    );
    f.description = description.to_string();
    f.cwe = optional(o, "cwe")?.map(String::from);
    f.owasp = optional(o, "owasp")?.map(String::from);
    f.evidence = optional(o, "evidence")?.unwrap_or_default().to_string();
    f.remediation = optional(o, "remediation")?.unwrap_or_default().to_string();
    f.confidence = confidence;
    f.references = references;
    f.metadata = metadata;
    Ok(f)
}

#[cfg(test)]
#[path = "intake_tests.rs"]
mod tests;

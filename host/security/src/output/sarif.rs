//! SARIF 2.1.0, with what GitHub code scanning reads: rules with help text
//! and `security-severity`, relative artifact URIs against `%SRCROOT%`,
//! regions, `partialFingerprints`. Written as a stream: each result is
//! built and written in turn. Findings cut by the caps are counted in
//! `runs[0].properties.truncated` and a tool notification; unreadable paths
//! are `error` notifications and make `executionSuccessful` false.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use crate::engine::AuditReport;
use crate::finding::{Finding, Severity};

/// The SARIF schema URI written in `$schema`.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The base id relative URIs are resolved against.
pub const SRCROOT: &str = "%SRCROOT%";

/// The SARIF level of a severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// Percent-encodes a relative path for a URI (keeps `/`).
pub fn uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `file:///abs/root/` for an absolute root, else `None`.
fn root_uri(root: &str) -> Option<String> {
    let p = std::path::Path::new(root);
    if !p.is_absolute() {
        return None;
    }
    let s = root.replace('\\', "/");
    let s = s.trim_end_matches('/');
    let enc = uri_path(s);
    let enc = if enc.starts_with('/') {
        enc
    } else {
        format!("/{enc}")
    };
    Some(format!("file://{enc}/"))
}

fn tags(f: &Finding) -> Vec<String> {
    let mut t = vec!["security".to_string(), f.category.clone()];
    if let Some(cwe) = &f.cwe {
        t.push(cwe.clone());
        if let Some(n) = cwe.strip_prefix("CWE-") {
            t.push(format!("external/cwe/cwe-{n}"));
        }
    }
    if let Some(o) = &f.owasp {
        t.push(format!("owasp/{o}"));
    }
    t.dedup();
    t
}

fn rule_of(f: &Finding) -> Value {
    let full = if f.description.is_empty() {
        f.title.clone()
    } else {
        f.description.clone()
    };
    let mut help_text = full.clone();
    let mut help_md = format!("**{}**\n\n{}", f.title, full);
    if !f.remediation.is_empty() {
        help_text.push_str(&format!("\n\nRemediation: {}", f.remediation));
        help_md.push_str(&format!("\n\n**Remediation:** {}", f.remediation));
    }
    if !f.references.is_empty() {
        help_text.push_str("\n\nReferences:");
        help_md.push_str("\n\n**References:**\n");
        for r in &f.references {
            help_text.push_str(&format!("\n- {r}"));
            help_md.push_str(&format!("\n- <{r}>"));
        }
    }
    let mut rule = json!({
        "id": f.rule_id,
        "name": rule_name(&f.rule_id),
        "shortDescription": { "text": f.title },
        "fullDescription": { "text": full },
        "help": { "text": help_text, "markdown": help_md },
        "defaultConfiguration": { "level": level(f.severity) },
        "properties": {
            "security-severity": f.severity.score(),
            "tags": tags(f),
            "precision": precision(f),
            "problem.severity": problem_severity(f.severity),
        }
    });
    if let Some(first) = f.references.iter().find(|r| r.starts_with("https://")) {
        rule["helpUri"] = json!(first);
    }
    rule
}

/// A rule `name` in PascalCase-ish form (GitHub shows it): `PY-SQLI-001` → `PySqli001`.
fn rule_name(id: &str) -> String {
    id.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
        .map(|s| {
            let lower = s.to_ascii_lowercase();
            let mut c = lower.chars();
            match c.next() {
                Some(first) => first.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn precision(f: &Finding) -> &'static str {
    match f.confidence {
        crate::finding::Confidence::High => "high",
        crate::finding::Confidence::Medium => "medium",
        crate::finding::Confidence::Low => "low",
    }
}

fn problem_severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "recommendation",
    }
}

fn result_of(f: &Finding, rule_index: usize) -> Value {
    let mut artifact = Map::new();
    artifact.insert("uri".into(), json!(uri_path(&f.location.file)));
    artifact.insert("uriBaseId".into(), json!(SRCROOT));
    let mut physical = Map::new();
    physical.insert("artifactLocation".into(), Value::Object(artifact));
    if f.location.start_line >= 1 {
        let mut region = Map::new();
        region.insert("startLine".into(), json!(f.location.start_line));
        if f.location.start_column >= 1 {
            region.insert("startColumn".into(), json!(f.location.start_column));
        }
        region.insert(
            "endLine".into(),
            json!(f.location.end_line.max(f.location.start_line)),
        );
        if f.location.end_column >= 1 && f.location.start_column >= 1 {
            region.insert("endColumn".into(), json!(f.location.end_column));
        }
        if !f.evidence.is_empty() {
            region.insert("snippet".into(), json!({ "text": f.evidence }));
        }
        physical.insert("region".into(), Value::Object(region));
    }
    let mut location = json!({ "physicalLocation": Value::Object(physical) });
    if let Some(func) = &f.location.function {
        location["logicalLocations"] = json!([{ "name": func, "kind": "function" }]);
    }
    let mut message = f.title.clone();
    if !f.evidence.is_empty() && f.category != "secrets-exposure" {
        // Secrets are redacted by scanners, but keep them out of the message anyway.
        message.push_str(&format!(" (`{}`)", f.evidence.replace('`', "'")));
    }
    let mut props = Map::new();
    props.insert("severity".into(), json!(f.severity.as_str()));
    props.insert("confidence".into(), json!(f.confidence.as_str()));
    props.insert("category".into(), json!(f.category));
    props.insert("scanner".into(), json!(f.scanner));
    props.insert("findingId".into(), json!(f.id));
    if let Some(s) = &f.skill_source {
        props.insert("skillSource".into(), json!(s));
    }
    if !f.metadata.is_empty() {
        let meta: BTreeMap<&String, &String> = f.metadata.iter().collect();
        props.insert("metadata".into(), json!(meta));
    }
    let mut result = json!({
        "ruleId": f.rule_id,
        "ruleIndex": rule_index,
        "level": level(f.severity),
        "message": { "text": message },
        "locations": [location],
        "partialFingerprints": { "primaryLocationLineHash": format!("{}:1", f.id) },
        "properties": Value::Object(props),
    });
    if !f.flow.is_empty() {
        result["codeFlows"] = code_flows(f);
    }
    result
}

/// A taint finding's flow as one SARIF code flow with one thread flow:
/// each step a location with its line, snippet and what happens there.
fn code_flows(f: &Finding) -> Value {
    let last = f.flow.len() - 1;
    let locations: Vec<Value> = f
        .flow
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let mut region = json!({ "startLine": step.line.max(1) });
            if !step.snippet.is_empty() {
                region["snippet"] = json!({ "text": step.snippet });
            }
            let kinds = match i {
                0 => vec!["source"],
                i if i == last => vec!["sink"],
                _ => vec!["taint"],
            };
            json!({
                "location": {
                    "physicalLocation": {
                        "artifactLocation": { "uri": uri_path(&step.file), "uriBaseId": SRCROOT },
                        "region": region,
                    },
                    "message": { "text": step.note },
                },
                "kinds": kinds,
                "nestingLevel": 0,
                "executionOrder": i + 1,
            })
        })
        .collect();
    let source = &f.flow[0];
    json!([{
        "message": { "text": format!("{} (line {}) reaches line {}", source.note, source.line, f.location.start_line) },
        "threadFlows": [{ "locations": locations }],
    }])
}

/// The findings as SARIF results, serialized one by one as they are
/// written (one small JSON value per finding, never one for the whole log).
struct Results<'a> {
    findings: &'a [&'a Finding],
    index: &'a BTreeMap<&'a str, usize>,
}

impl Serialize for Results<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.findings
                .iter()
                .map(|f| result_of(f, self.index[f.rule_id.as_str()])),
        )
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Value,
    automation_details: Value,
    original_uri_base_ids: Value,
    invocations: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<Value>,
    results: Results<'a>,
}

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [Run<'a>; 1],
}

/// What does not fit in a result: scanner errors and unreadable paths
/// (notifications), findings cut by the caps (a notification, and
/// `run.properties.truncated` with the counts).
fn invocation(report: &AuditReport) -> Value {
    let mut notifications: Vec<Value> = report
        .errors
        .iter()
        .map(|e| {
            let level = if e.scanner == "walk" {
                "error"
            } else {
                "warning"
            };
            let mut n = json!({
                "level": level,
                "message": { "text": format!("{}: {}", e.scanner, e.message) },
            });
            if let Some(file) = &e.file {
                n["locations"] = json!([{ "physicalLocation": { "artifactLocation": {
                    "uri": uri_path(file), "uriBaseId": SRCROOT } } }]);
            }
            n
        })
        .collect();
    if let Some(text) = report.truncated.summary() {
        notifications.push(json!({
            "level": "warning",
            "descriptor": { "id": "findings-truncated" },
            "message": { "text": text },
        }));
    }
    if let Some(text) = crate::exclude::summary(&report.stats.excluded) {
        notifications.push(json!({
            "level": "note",
            "descriptor": { "id": "files-excluded" },
            "message": { "text": text },
        }));
    }
    let mut invocation = json!({ "executionSuccessful": !report.verdict.incomplete });
    if !notifications.is_empty() {
        invocation["toolExecutionNotifications"] = json!(notifications);
    }
    invocation
}

fn log<'a>(
    report: &'a AuditReport,
    findings: &'a [&'a Finding],
    index: &'a BTreeMap<&'a str, usize>,
    rules: Vec<Value>,
) -> Log<'a> {
    let mut base = Map::new();
    let mut src = Map::new();
    if let Some(uri) = root_uri(&report.root) {
        src.insert("uri".into(), json!(uri));
    }
    src.insert(
        "description".into(),
        json!({ "text": "The root of the audited project." }),
    );
    base.insert(SRCROOT.into(), Value::Object(src));
    let properties = (report.truncated.findings > 0).then(|| {
        json!({
            "truncated": serde_json::to_value(&report.truncated).unwrap_or(Value::Null),
            "totalFindings": report.total_findings(),
        })
    });
    Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [Run {
            tool: json!({ "driver": {
                "name": report.tool,
                "version": report.version,
                "semanticVersion": report.version,
                "informationUri": "https://example.invalid/agent",
                "rules": rules,
            }}),
            automation_details: json!({ "id": "agent-security-audit/" }),
            original_uri_base_ids: Value::Object(base),
            invocations: json!([invocation(report)]),
            properties,
            results: Results { findings, index },
        }],
    }
}

/// One rule per id, described by its most severe finding: the rules and
/// each id's index.
fn rules<'a>(findings: &[&'a Finding]) -> (BTreeMap<&'a str, usize>, Vec<Value>) {
    let mut reps: BTreeMap<&str, &Finding> = BTreeMap::new();
    for f in findings {
        reps.entry(f.rule_id.as_str())
            .and_modify(|r| {
                if f.severity > r.severity {
                    *r = f;
                }
            })
            .or_insert(f);
    }
    let index: BTreeMap<&str, usize> = reps.keys().enumerate().map(|(i, k)| (*k, i)).collect();
    let rules: Vec<Value> = reps.values().map(|f| rule_of(f)).collect();
    (index, rules)
}

/// Builds the SARIF log as a JSON value (for tests and small reports;
/// [`write`] streams it).
pub fn to_value(report: &AuditReport) -> Value {
    let findings = super::sorted(report);
    let (index, rules) = rules(&findings);
    serde_json::to_value(log(report, &findings, &index, rules)).unwrap_or(Value::Null)
}

/// Writes the SARIF log, one result at a time.
///
/// # Errors
/// I/O errors.
pub fn write(out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    let findings = super::sorted(report);
    let (index, rules) = rules(&findings);
    let mut buffered = io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut buffered, &log(report, &findings, &index, rules))
        .map_err(io::Error::other)?;
    buffered.write_all(b"\n")?;
    buffered.flush()
}

//! The incident report the model returns through the `report_incident`
//! tool: its input schema, the host's checks (every evidence line must exist
//! in the input it names; a line that does not is dropped and counted, a
//! hypothesis left with no evidence is demoted to low confidence and
//! marked), and its text, Markdown and JSON renderings.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::miner::Input;

/// The tool's name.
pub const TOOL: &str = "report_incident";

/// The tool's description (what the model reads).
pub const DESCRIPTION: &str = "Report the incident found in the logs: a summary, a timeline, \
root-cause hypotheses each citing evidence lines (input and line number, as shown in the log \
overview), and suggested actions. Call it once, when the analysis is done.";

/// The input schema of `report_incident` (JSON Schema).
pub fn input_schema() -> serde_json::Value {
    let evidence = serde_json::json!({
        "type": "object",
        "required": ["line"],
        "additionalProperties": false,
        "properties": {
            "input": {"type": "string", "description": "the input's name as the overview shows it (may be left out when there is one input)"},
            "line": {"type": "integer", "minimum": 1, "description": "1-based line number in that input"}
        }
    });
    serde_json::json!({
        "type": "object",
        "required": ["summary", "timeline", "root_causes", "actions"],
        "additionalProperties": false,
        "properties": {
            "summary": {"type": "string", "minLength": 1},
            "severity": {"type": "string", "enum": ["critical", "high", "medium", "low", "info"]},
            "timeline": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["event", "line"],
                    "additionalProperties": false,
                    "properties": {
                        "time": {"type": "string"},
                        "event": {"type": "string", "minLength": 1},
                        "input": {"type": "string"},
                        "line": {"type": "integer", "minimum": 1}
                    }
                }
            },
            "root_causes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["hypothesis", "confidence", "evidence"],
                    "additionalProperties": false,
                    "properties": {
                        "hypothesis": {"type": "string", "minLength": 1},
                        "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
                        "evidence": {"type": "array", "minItems": 1, "items": evidence}
                    }
                }
            },
            "actions": {"type": "array", "items": {"type": "string", "minLength": 1}}
        }
    })
}

/// A line of an input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    pub line: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    pub event: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    pub line: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hypothesis {
    pub hypothesis: String,
    pub confidence: Confidence,
    pub evidence: Vec<LineRef>,
    /// Set by the host: every evidence line given was dropped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsupported: bool,
}

/// The report as the model sends it (after the router's schema check).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub summary: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    pub timeline: Vec<TimelineEntry>,
    pub root_causes: Vec<Hypothesis>,
    pub actions: Vec<String>,
}

/// A reference the host dropped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dropped {
    /// `timeline` or `evidence`.
    pub kind: &'static str,
    pub input: Option<String>,
    pub line: u64,
    pub reason: String,
}

/// A checked report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Checked {
    pub report: Report,
    pub dropped: Vec<Dropped>,
    /// Hypotheses demoted for want of evidence.
    pub demoted: usize,
}

/// Why a reference names no existing line, if it does not.
fn check(r_input: Option<&str>, line: u64, inputs: &[Input]) -> Result<usize, String> {
    let index = match r_input {
        None if inputs.len() == 1 => 0,
        None => {
            return Err(format!(
                "no input named, and there are {}: {}",
                inputs.len(),
                names(inputs)
            ));
        }
        Some(name) => inputs
            .iter()
            .position(|i| i.name == name)
            .ok_or_else(|| format!("no input named `{name}` (the inputs: {})", names(inputs)))?,
    };
    let lines = inputs[index].lines;
    if line == 0 || line > lines {
        return Err(format!("`{}` has {lines} lines", inputs[index].name));
    }
    Ok(index)
}

fn names(inputs: &[Input]) -> String {
    inputs
        .iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks every line a report cites against the inputs.
pub fn check_report(mut report: Report, inputs: &[Input]) -> Checked {
    let mut dropped = Vec::new();
    report
        .timeline
        .retain(|e| match check(e.input.as_deref(), e.line, inputs) {
            Ok(_) => true,
            Err(reason) => {
                dropped.push(Dropped {
                    kind: "timeline",
                    input: e.input.clone(),
                    line: e.line,
                    reason,
                });
                false
            }
        });
    let mut demoted = 0;
    for h in &mut report.root_causes {
        let before = h.evidence.len();
        h.evidence
            .retain(|e| match check(e.input.as_deref(), e.line, inputs) {
                Ok(_) => true,
                Err(reason) => {
                    dropped.push(Dropped {
                        kind: "evidence",
                        input: e.input.clone(),
                        line: e.line,
                        reason,
                    });
                    false
                }
            });
        if before > 0 && h.evidence.is_empty() {
            h.unsupported = true;
            h.confidence = Confidence::Low;
            demoted += 1;
        }
    }
    Checked {
        report,
        dropped,
        demoted,
    }
}

impl Checked {
    /// What the tool answers the model.
    pub fn tool_answer(&self) -> String {
        let mut s = String::from("The incident report was recorded.");
        if !self.dropped.is_empty() {
            let _ = write!(
                s,
                " {} cited line(s) do not exist and were dropped:",
                self.dropped.len()
            );
            for d in &self.dropped {
                let _ = write!(
                    s,
                    " {} {}:{} ({});",
                    d.kind,
                    d.input.as_deref().unwrap_or("-"),
                    d.line,
                    d.reason
                );
            }
        }
        if self.demoted > 0 {
            let _ = write!(
                s,
                " {} hypothesis(es) left without evidence were demoted.",
                self.demoted
            );
        }
        s
    }

    /// One line for stderr about what was dropped, if anything.
    pub fn drop_summary(&self) -> Option<String> {
        if self.dropped.is_empty() && self.demoted == 0 {
            return None;
        }
        let evidence = self.dropped.iter().filter(|d| d.kind == "evidence").count();
        let timeline = self.dropped.len() - evidence;
        Some(format!(
            "report_incident: dropped {evidence} evidence line(s) and {timeline} timeline entr(ies) \
             citing lines that do not exist; {} hypothesis(es) demoted",
            self.demoted
        ))
    }

    /// Markdown (also the text output: it reads well as plain text).
    pub fn markdown(&self, inputs: &[Input]) -> String {
        let r = &self.report;
        let mut s = String::from("# Incident report\n\n");
        if let Some(sev) = &r.severity {
            let _ = writeln!(s, "**Severity:** {sev}\n");
        }
        let _ = writeln!(s, "{}\n", r.summary);
        let at = |input: &Option<String>, line: u64| {
            let name = input
                .clone()
                .or_else(|| inputs.first().map(|i| i.name.clone()))
                .unwrap_or_default();
            format!("{name}:{line}")
        };
        if !r.timeline.is_empty() {
            s.push_str("## Timeline\n\n");
            for e in &r.timeline {
                let time = e
                    .time
                    .as_deref()
                    .map(|t| format!("{t} "))
                    .unwrap_or_default();
                let _ = writeln!(s, "- {time}{} ({})", e.event, at(&e.input, e.line));
            }
            s.push('\n');
        }
        if !r.root_causes.is_empty() {
            s.push_str("## Root-cause hypotheses\n\n");
            for (i, h) in r.root_causes.iter().enumerate() {
                let conf = match h.confidence {
                    Confidence::High => "high",
                    Confidence::Medium => "medium",
                    Confidence::Low => "low",
                };
                let ev: Vec<String> = h.evidence.iter().map(|e| at(&e.input, e.line)).collect();
                let _ = writeln!(s, "{}. {} (confidence: {conf})", i + 1, h.hypothesis);
                if h.unsupported {
                    let _ = writeln!(s, "   evidence: none that exists (demoted)");
                } else {
                    let _ = writeln!(s, "   evidence: {}", ev.join(", "));
                }
            }
            s.push('\n');
        }
        if !r.actions.is_empty() {
            s.push_str("## Suggested actions\n\n");
            for a in &r.actions {
                let _ = writeln!(s, "- {a}");
            }
            s.push('\n');
        }
        if !self.dropped.is_empty() {
            let _ = writeln!(
                s,
                "_{} cited line(s) that do not exist were dropped._",
                self.dropped.len()
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> Vec<Input> {
        vec![Input {
            name: "app.log".into(),
            lines: 10,
        }]
    }

    fn report(evidence: &[u64]) -> Report {
        serde_json::from_value(serde_json::json!({
            "summary": "db down",
            "timeline": [{"event": "first error", "line": 4}, {"event": "ghost", "line": 99}],
            "root_causes": [
                {"hypothesis": "pool exhausted", "confidence": "high",
                 "evidence": evidence.iter().map(|l| serde_json::json!({"line": l})).collect::<Vec<_>>()},
            ],
            "actions": ["raise the pool size"]
        }))
        .expect("valid")
    }

    #[test]
    fn lines_that_do_not_exist_are_dropped_and_counted() {
        let c = check_report(report(&[4, 11, 0]), &inputs());
        assert_eq!(c.report.timeline.len(), 1);
        assert_eq!(
            c.report.root_causes[0].evidence,
            vec![LineRef {
                input: None,
                line: 4
            }]
        );
        assert_eq!(c.dropped.len(), 3);
        assert_eq!(c.dropped[1].reason, "`app.log` has 10 lines");
        assert_eq!(c.demoted, 0);
        assert!(c.tool_answer().contains("3 cited line(s) do not exist"));
    }

    #[test]
    fn a_hypothesis_left_without_evidence_is_demoted() {
        let c = check_report(report(&[50]), &inputs());
        let h = &c.report.root_causes[0];
        assert!(h.unsupported);
        assert_eq!(h.confidence, Confidence::Low);
        assert_eq!(c.demoted, 1);
        assert!(
            c.markdown(&inputs())
                .contains("evidence: none that exists (demoted)")
        );
        let two = [
            inputs()[0].clone(),
            Input {
                name: "b.log".into(),
                lines: 3,
            },
        ];
        assert!(
            check(None, 1, &two)
                .unwrap_err()
                .contains("there are 2: app.log, b.log")
        );
        assert!(
            check(Some("c.log"), 1, &two)
                .unwrap_err()
                .contains("no input named `c.log`")
        );
    }
}

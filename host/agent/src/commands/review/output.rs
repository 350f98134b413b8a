//! Step 4 of a review: the report, in the security engine's formats (with
//! the review's numbers added where the format has room) or as a GitHub
//! pull-request review body.

use std::io::Write;
use std::path::Path;

use agent_findings::Counts;
use agent_security::output::{Format, to_string};
use agent_security::{AuditReport, Severity};
use anyhow::{Context, Result};
use serde_json::json;

use super::ReviewOutput;
use super::model::Spent;

/// The review's own numbers.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The older side, as named.
    pub base: String,
    /// The newer side.
    pub head: String,
    /// Files changed (deleted ones left out).
    pub files: usize,
    /// Lines added.
    pub added_lines: usize,
    /// Chunks of the diff (one model turn each).
    pub chunks: usize,
    /// What the model spent.
    pub spent: Spent,
    /// What happened to the findings the model reported.
    pub counts: Counts,
    /// Changed files whose new version could not be read.
    pub missing: Vec<String>,
}

impl Summary {
    /// The line on standard error.
    pub fn line(&self, report: &AuditReport) -> String {
        let from_model = report
            .findings
            .iter()
            .filter(|f| f.scanner == "code-review/model")
            .count();
        let mut s = format!(
            "review {}..{}: {} file{}, {} added line{}, {} chunk{} ({} model call{}); {} finding{} \
             ({} from the static scanners, {} from the model); {}",
            self.base,
            self.head,
            self.files,
            plural(self.files),
            self.added_lines,
            plural(self.added_lines),
            self.chunks,
            plural(self.chunks),
            self.spent.model_calls,
            plural(self.spent.model_calls),
            report.findings.len(),
            plural(report.findings.len()),
            report.findings.len() - from_model,
            from_model,
            self.counts.summary()
        );
        if report.verdict.failed {
            s.push_str(&format!("\nfailed: {}", report.verdict.reasons.join("; ")));
        }
        s
    }

    fn json(&self) -> serde_json::Value {
        json!({
            "base": self.base,
            "head": self.head,
            "files": self.files,
            "added_lines": self.added_lines,
            "chunks": self.chunks,
            "model_calls": self.spent.model_calls,
            "turns": self.spent.turns,
            "input_tokens": self.spent.input_tokens,
            "output_tokens": self.spent.output_tokens,
            "reported": self.counts,
            "unreadable_files": self.missing,
        })
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn text(report: &AuditReport, summary: &Summary) -> String {
    let mut out = String::new();
    if report.findings.is_empty() {
        out.push_str("No findings on the changed lines.\n");
    }
    for f in &report.findings {
        let l = &f.location;
        let at = if l.end_line > l.start_line {
            format!("{}:{}-{}", l.file, l.start_line, l.end_line)
        } else {
            format!("{}:{}", l.file, l.start_line)
        };
        out.push_str(&format!(
            "{:<8} {at} [{}] {} ({})\n",
            f.severity.as_str().to_uppercase(),
            f.rule_id,
            f.title,
            f.scanner
        ));
        if !f.description.is_empty() {
            out.push_str(&format!(
                "         {}\n",
                f.description.replace('\n', "\n         ")
            ));
        }
        if !f.remediation.is_empty() {
            out.push_str(&format!("         fix: {}\n", f.remediation));
        }
    }
    let counts: Vec<String> = Severity::ALL
        .iter()
        .map(|s| {
            let n = report.findings.iter().filter(|f| f.severity == *s).count();
            format!("{n} {s}")
        })
        .collect();
    out.push_str(&format!("\n{}\n", counts.join(", ")));
    out.push_str(&format!("{}.\n", summary.counts.summary()));
    out.push_str(if report.verdict.failed {
        "Result: FAILED\n"
    } else {
        "Result: passed\n"
    });
    for r in &report.verdict.reasons {
        out.push_str(&format!("  - {r}\n"));
    }
    out
}

/// The report as text.
pub fn render(format: ReviewOutput, report: &AuditReport, summary: &Summary) -> Result<String> {
    Ok(match format {
        ReviewOutput::Text => text(report, summary),
        ReviewOutput::Json => {
            let mut v: serde_json::Value = serde_json::from_str(&to_string(Format::Json, report))
                .context("re-reading the JSON report")?;
            v["review"] = summary.json();
            format!("{}\n", serde_json::to_string_pretty(&v)?)
        }
        ReviewOutput::Markdown => {
            let mut s = to_string(Format::Markdown, report).replacen(
                "# Security audit",
                "# Code review",
                1,
            );
            s.push_str(&format!(
                "\n## Review\n\n- Change: {}..{}, {} files, {} added lines\n- Model: {} chunks, \
                 {} calls\n- {}\n",
                summary.base,
                summary.head,
                summary.files,
                summary.added_lines,
                summary.chunks,
                summary.spent.model_calls,
                summary.counts.summary()
            ));
            s
        }
        ReviewOutput::Sarif => to_string(Format::Sarif, report),
        ReviewOutput::Github => {
            let mut s = to_string(Format::Github, report);
            s.push_str(&format!(
                "::notice title=agent review::{}\n",
                agent_security::output::github::escape_data(&summary.counts.summary())
            ));
            s
        }
        ReviewOutput::GithubReview => {
            let v = agent_findings::github_review::review(
                &report.findings,
                &report.verdict,
                Some(&summary.counts.summary()),
            );
            format!("{}\n", serde_json::to_string_pretty(&v)?)
        }
    })
}

/// Writes the report to `out` (a file) or standard output.
///
/// # Errors
/// The file cannot be written.
pub fn write(
    format: ReviewOutput,
    out: Option<&Path>,
    report: &AuditReport,
    summary: &Summary,
) -> Result<()> {
    let text = render(format, report, summary)?;
    match out {
        Some(path) => std::fs::write(path, text)
            .with_context(|| format!("--out {}: writing the report", path.display())),
        None => {
            let mut lock = std::io::stdout().lock();
            lock.write_all(text.as_bytes())?;
            lock.flush().context("writing the report")
        }
    }
}

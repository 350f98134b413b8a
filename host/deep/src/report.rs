//! The deep analysis in the security engine's reports: its summary (the
//! budget and the calls spent, the files analysed and skipped, what the
//! model reported), the risk ranking, and the attack chains.
//!
//! - JSON: the report, plus `deep` (summary and ranking) and `chains[]`.
//! - SARIF: each chain member's result gets `relatedLocations` (the chain's
//!   other steps) and a `codeFlows` thread flow over the chain's steps;
//!   `runs[0].properties` holds `deep` and `chains`.
//! - Markdown: the report, then a "Deep analysis" section and one section
//!   per chain (its steps in order, with file:line).
//! - GitHub: the annotations, then a notice with the summary and a warning
//!   per chain at its first step.
//! - CycloneDX: the SBOM, unchanged.

use std::io::{self, Write};

use agent_findings::Counts;
use agent_security::output::{self, github, sarif};
use agent_security::{AuditReport, Format};
use serde::Serialize;
use serde_json::{Value, json};

use crate::chains::{Chain, Step};
use crate::risk::FileRisk;

/// What the deep analysis spent and did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// `max_llm_calls`.
    pub budget: u32,
    /// Model requests made.
    pub model_calls: usize,
    /// Conversations (batch × analysis).
    pub conversations: usize,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Files with a risk signal.
    pub files_ranked: usize,
    /// Files the model was shown.
    pub files_analysed: usize,
    /// Ranked files it was not shown (the budget ran out).
    pub files_skipped: usize,
    /// Batches of files.
    pub batches: usize,
    /// Commits read for churn (0: no git history).
    pub commits_read: usize,
    /// Secret values known to the redaction (besides its patterns).
    pub secrets_redacted: usize,
    /// What happened to the model's reports.
    pub reported: Counts,
}

impl Summary {
    /// One line, e.g. `deep analysis: 7/20 model calls · 3 of 12 files
    /// analysed, 9 skipped · …`.
    pub fn line(&self) -> String {
        format!(
            "deep analysis: {}/{} model calls · {} of {} ranked files analysed, {} skipped · {} \
             conversations · {}",
            self.model_calls,
            self.budget,
            self.files_analysed,
            self.files_ranked,
            self.files_skipped,
            self.conversations,
            self.reported.summary()
        )
    }
}

/// The deep analysis' part of a report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Deep {
    /// The summary.
    pub summary: Summary,
    /// The highest-risk files, with their reasons.
    pub ranking: Vec<FileRisk>,
    /// The attack chains.
    pub chains: Vec<Chain>,
}

/// Writes `report` with `deep` in `format`.
///
/// # Errors
/// I/O errors of `out`.
pub fn write(
    format: Format,
    out: &mut dyn Write,
    report: &AuditReport,
    deep: &Deep,
) -> io::Result<()> {
    match format {
        Format::Json => {
            let mut v: Value = serde_json::from_str(&output::to_string(Format::Json, report))
                .map_err(io::Error::other)?;
            v["deep"] = json!({ "summary": deep.summary, "ranking": deep.ranking });
            v["chains"] = serde_json::to_value(&deep.chains).map_err(io::Error::other)?;
            json_out(out, &v)
        }
        Format::Sarif => json_out(out, &sarif_value(report, deep)),
        Format::Markdown => {
            out.write_all(output::to_string(Format::Markdown, report).as_bytes())?;
            out.write_all(markdown(deep).as_bytes())
        }
        Format::Github => {
            output::write(Format::Github, out, report)?;
            writeln!(
                out,
                "::notice title=Deep analysis::{}",
                github::escape_data(&deep.summary.line())
            )?;
            for c in &deep.chains {
                if let Some(first) = c.steps.first() {
                    writeln!(
                        out,
                        "::{} file={},line={},title={}::{}",
                        github::command(c.severity),
                        github::escape_property(&first.file),
                        first.line,
                        github::escape_property(&format!("Attack chain {}", c.id)),
                        github::escape_data(&steps_line(c))
                    )?;
                }
            }
            Ok(())
        }
        Format::Cyclonedx => output::write(format, out, report),
    }
}

fn json_out(out: &mut dyn Write, v: &Value) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, v).map_err(io::Error::other)?;
    out.write_all(b"\n")
}

fn steps_line(c: &Chain) -> String {
    c.steps
        .iter()
        .map(|s| format!("{}:{} {}", s.file, s.line, s.title))
        .collect::<Vec<_>>()
        .join(" → ")
}

fn location(s: &Step, text: String) -> Value {
    json!({
        "physicalLocation": {
            "artifactLocation": { "uri": sarif::uri_path(&s.file), "uriBaseId": sarif::SRCROOT },
            "region": { "startLine": s.line.max(1) },
        },
        "message": { "text": text },
    })
}

fn step_text(c: &Chain, i: usize, s: &Step) -> String {
    format!(
        "{} step {} of {} ({}): {}",
        c.id,
        i + 1,
        c.steps.len(),
        s.role,
        s.title
    )
}

/// The SARIF log with the chains on their members' results.
pub fn sarif_value(report: &AuditReport, deep: &Deep) -> Value {
    let mut log = sarif::to_value(report);
    if let Some(results) = log["runs"][0]["results"].as_array_mut() {
        for r in results.iter_mut() {
            let Some(id) = r["properties"]["findingId"].as_str().map(String::from) else {
                continue;
            };
            let mut related = Vec::new();
            let mut flows = Vec::new();
            for c in deep
                .chains
                .iter()
                .filter(|c| c.steps.iter().any(|s| s.finding.as_deref() == Some(&id)))
            {
                for (i, s) in c.steps.iter().enumerate() {
                    if s.finding.as_deref() != Some(&id) {
                        let mut l = location(s, step_text(c, i, s));
                        l["id"] = json!(related.len());
                        related.push(l);
                    }
                }
                let steps: Vec<Value> = c
                    .steps
                    .iter()
                    .enumerate()
                    .map(|(i, s)| {
                        json!({
                            "location": location(s, step_text(c, i, s)),
                            "executionOrder": i + 1,
                        })
                    })
                    .collect();
                flows.push(json!({
                    "message": { "text": format!("{}: {}", c.id, c.title()) },
                    "threadFlows": [{ "id": c.id, "locations": steps }],
                }));
            }
            if !flows.is_empty() {
                r["relatedLocations"] = json!(related);
                r["codeFlows"] = json!(flows);
            }
        }
    }
    let run = &mut log["runs"][0];
    if !run["properties"].is_object() {
        run["properties"] = json!({});
    }
    run["properties"]["deep"] = json!({ "summary": deep.summary, "ranking": deep.ranking });
    run["properties"]["chains"] = serde_json::to_value(&deep.chains).unwrap_or(Value::Null);
    log
}

/// The Markdown sections: the summary, the ranking, a section per chain.
pub fn markdown(deep: &Deep) -> String {
    let s = &deep.summary;
    let mut m = String::from("\n## Deep analysis\n\n");
    m.push_str(&format!(
        "- Model calls: {} of a budget of {}\n- Files: {} ranked by risk, {} analysed, {} \
         skipped (budget)\n- Conversations: {} over {} batches\n- Reported by the model: {}\n\n",
        s.model_calls,
        s.budget,
        s.files_ranked,
        s.files_analysed,
        s.files_skipped,
        s.conversations,
        s.batches,
        s.reported.summary()
    ));
    if !deep.ranking.is_empty() {
        m.push_str("### Highest-risk files\n\n| # | File | Score | Reasons |\n|---|---|---|---|\n");
        for (i, r) in deep.ranking.iter().enumerate() {
            let reasons: Vec<String> = r
                .reasons
                .iter()
                .map(|x| {
                    format!(
                        "{} +{} ({})",
                        x.signal,
                        x.points,
                        x.detail.replace('|', "\\|")
                    )
                })
                .collect();
            m.push_str(&format!(
                "| {} | `{}` | {} | {} |\n",
                i + 1,
                r.file,
                r.score,
                reasons.join("; ")
            ));
        }
        m.push('\n');
    }
    m.push_str("## Attack chains\n\n");
    if deep.chains.is_empty() {
        m.push_str("No related findings were joined into a chain.\n");
    }
    for c in &deep.chains {
        m.push_str(&format!(
            "### {} ({}): {}\n\nJoined by: {}\n\n",
            c.id,
            c.severity.as_str(),
            c.title(),
            c.rules.join(", ")
        ));
        for (i, st) in c.steps.iter().enumerate() {
            let finding = st
                .finding
                .as_deref()
                .map(|f| format!(" (finding `{f}`)"))
                .unwrap_or_default();
            m.push_str(&format!(
                "{}. **{}** `{}:{}` — {}{finding}\n",
                i + 1,
                st.role,
                st.file,
                st.line,
                st.title
            ));
        }
        m.push('\n');
    }
    m
}

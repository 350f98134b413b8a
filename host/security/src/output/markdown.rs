//! A Markdown report: the verdict, a summary table by severity, findings
//! grouped by severity, dependencies, scanner timings and errors.

use std::io::{self, Write};

use crate::engine::{AuditReport, Scope};
use crate::finding::Severity;

/// Escapes text for a table cell.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

/// Inline code that survives backticks in the text.
fn code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let mut fence = "`".to_string();
    while s.contains(&fence) {
        fence.push('`');
    }
    if s.starts_with('`') || s.ends_with('`') {
        format!("{fence} {s} {fence}")
    } else {
        format!("{fence}{s}{fence}")
    }
}

fn title_case(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "Critical",
        Severity::High => "High",
        Severity::Medium => "Medium",
        Severity::Low => "Low",
        Severity::Info => "Info",
    }
}

/// Writes the Markdown report.
///
/// # Errors
/// I/O errors.
pub fn write(out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    let mut buffered = io::BufWriter::new(out);
    write_to(&mut buffered, report)?;
    buffered.flush()
}

fn write_to(out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    let findings = super::sorted(report);
    writeln!(out, "# Security audit")?;
    writeln!(out)?;
    let scope = match &report.scope {
        Scope::Full => "full".to_string(),
        Scope::Diff { base, head } => format!("diff {base}..{head}"),
    };
    writeln!(out, "- Project: {}", code(&report.root))?;
    writeln!(out, "- Scope: {scope}")?;
    writeln!(out, "- Started: {}", report.started_at)?;
    writeln!(
        out,
        "- Scanned: {} files, {} lines ({} skipped), {} lockfiles, {} packages",
        report.stats.files_scanned,
        report.stats.lines,
        report.stats.files_skipped,
        report.stats.lockfiles,
        report.packages.len()
    )?;
    if let Some(x) = crate::exclude::summary(&report.stats.excluded) {
        writeln!(
            out,
            "- Excluded: {}",
            cell(x.trim_start_matches("excluded: "))
        )?;
    }
    writeln!(out, "- Duration: {} ms", report.stats.duration_ms)?;
    if let Some(t) = report.truncated.summary() {
        writeln!(out, "- Not listed: {}", cell(&t))?;
    }
    if report.verdict.incomplete {
        writeln!(out, "- Result: **INCOMPLETE**")?;
        for r in &report.verdict.reasons {
            writeln!(out, "  - {r}")?;
        }
    } else if report.verdict.failed {
        writeln!(out, "- Result: **FAILED**")?;
        for r in &report.verdict.reasons {
            writeln!(out, "  - {r}")?;
        }
    } else {
        writeln!(out, "- Result: **passed**")?;
    }
    writeln!(out)?;
    writeln!(out, "## Summary")?;
    writeln!(out)?;
    writeln!(out, "| Severity | Findings |")?;
    writeln!(out, "|---|---:|")?;
    let counts = report.counts();
    for s in Severity::ALL {
        writeln!(
            out,
            "| {} | {} |",
            title_case(s),
            counts.get(&s).copied().unwrap_or(0)
        )?;
    }
    writeln!(out, "| **Total** | **{}** |", findings.len())?;
    if report.truncated.findings > 0 {
        writeln!(out, "| Not listed (caps) | {} |", report.truncated.findings)?;
    }
    writeln!(out)?;

    writeln!(out, "## Findings")?;
    writeln!(out)?;
    if findings.is_empty() {
        writeln!(out, "No findings.")?;
        writeln!(out)?;
    }
    for s in Severity::ALL {
        let group: Vec<_> = findings.iter().filter(|f| f.severity == s).collect();
        if group.is_empty() {
            continue;
        }
        writeln!(out, "### {} ({})", title_case(s), group.len())?;
        writeln!(out)?;
        for f in group {
            let loc = if f.location.start_line >= 1 {
                format!("{}:{}", f.location.file, f.location.start_line)
            } else {
                f.location.file.clone()
            };
            writeln!(out, "#### {} {}", code(&f.rule_id), cell(&f.title))?;
            writeln!(out)?;
            writeln!(out, "- Location: {}", code(&loc))?;
            let mut facts = vec![
                format!("category {}", f.category),
                format!("confidence {}", f.confidence),
            ];
            if let Some(c) = &f.cwe {
                facts.push(c.clone());
            }
            if let Some(o) = &f.owasp {
                facts.push(format!("OWASP {o}"));
            }
            writeln!(out, "- {}", facts.join(" · "))?;
            let scanners = f
                .metadata
                .get("scanners")
                .cloned()
                .unwrap_or_else(|| f.scanner.clone());
            writeln!(out, "- Scanner: {}", code(&scanners))?;
            if let Some(s) = &f.skill_source {
                writeln!(out, "- Skill: {}", code(s))?;
            }
            if !f.evidence.is_empty() {
                writeln!(out, "- Evidence: {}", code(&f.evidence))?;
            }
            if let Some(note) = f.metadata.get("override_note") {
                writeln!(out, "- Override: {}", cell(note))?;
            }
            if !f.description.is_empty() && f.description != f.title {
                writeln!(out)?;
                writeln!(out, "{}", f.description.trim())?;
            }
            if !f.remediation.is_empty() {
                writeln!(out)?;
                writeln!(out, "**Remediation:** {}", f.remediation.trim())?;
            }
            if !f.references.is_empty() {
                writeln!(out)?;
                for r in &f.references {
                    writeln!(out, "- <{r}>")?;
                }
            }
            writeln!(out)?;
        }
    }

    if !report.packages.is_empty() {
        writeln!(out, "## Dependencies")?;
        writeln!(out)?;
        writeln!(
            out,
            "{} packages; {} known vulnerabilities.",
            report.packages.len(),
            report.vulnerabilities.len()
        )?;
        writeln!(out)?;
        if !report.vulnerabilities.is_empty() {
            writeln!(
                out,
                "| Package | Version | Advisory | Severity | Fixed in |"
            )?;
            writeln!(out, "|---|---|---|---|---|")?;
            for v in &report.vulnerabilities {
                writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    cell(&v.package),
                    cell(&v.version),
                    cell(&v.id),
                    v.severity,
                    cell(v.fixed.as_deref().unwrap_or("—"))
                )?;
            }
            writeln!(out)?;
        }
    }

    if !report.stats.scanners.is_empty() {
        writeln!(out, "## Scanners")?;
        writeln!(out)?;
        writeln!(out, "| Scanner | Files | Findings | Errors | Time (ms) |")?;
        writeln!(out, "|---|---:|---:|---:|---:|")?;
        for s in &report.stats.scanners {
            writeln!(
                out,
                "| {} | {} | {} | {} | {} |",
                cell(&s.name),
                s.files,
                s.findings,
                s.errors,
                s.millis
            )?;
        }
        writeln!(out)?;
    }

    if !report.errors.is_empty() {
        writeln!(out, "## Errors")?;
        writeln!(out)?;
        for e in &report.errors {
            match &e.file {
                Some(f) => writeln!(
                    out,
                    "- {} on {}: {}",
                    code(&e.scanner),
                    code(f),
                    cell(&e.message)
                )?,
                None => writeln!(out, "- {}: {}", code(&e.scanner), cell(&e.message))?,
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Renders the Markdown report to a string.
pub fn write_string(report: &AuditReport) -> String {
    super::to_string(super::Format::Markdown, report)
}

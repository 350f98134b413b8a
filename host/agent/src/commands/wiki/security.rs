//! The wiki's security chapter: the static security engine
//! ([`agent_security::audit`], the same scanners and rules as `agent
//! security-audit`, offline) run over the project, written as pages —
//! overview, findings, dependencies, SBOM (the lockfiles' packages),
//! recommendations, and the security suggestions. The chapters that need
//! the model's deep analysis (attack chains, authentication review, taint
//! data flow) are `agent security-audit --deep`'s, not the wiki's.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_security::{AuditOptions, AuditReport};
use agent_wiki::pages::{Page, link};
use anyhow::{Context, Result};

use super::select::Selection;
use crate::app::App;

/// Runs the static audit over the project root.
///
/// # Errors
/// The skills, the rules or the scan fail.
pub fn audit(app: &mut App, selection: &Selection) -> Result<AuditReport> {
    let config = app.config()?;
    let mut opts = AuditOptions::new(&app.project_root);
    let custom = &config.security.custom_rules;
    opts.rules_file = (custom != std::path::Path::new(agent_security::SECURITY_FILE))
        .then(|| app.project_root.join(custom));
    let sec = &config.security;
    opts.caps = agent_security::FindingCaps {
        per_file_rule: sec.max_findings_per_file_rule as usize,
        per_rule: sec.max_findings_per_rule as usize,
        total: sec.max_findings_total as usize,
    };
    // The built-in security skills and the skills taking part (all of
    // them without `--skills`).
    let skills: Vec<_> = app
        .load_all()?
        .into_iter()
        .filter(|s| selection.for_security(s))
        .collect();
    let skills = Arc::new(skills);
    let ctx = app.call_context("security-audit")?;
    let runtime = app.runtime()?.clone();
    let result = std::thread::scope(|s| {
        s.spawn(|| agent_security::audit(&runtime, &ctx, &skills, &opts, &|_, _| {}))
            .join()
    });
    match result {
        Ok(r) => r.context("the wiki's security scan"),
        Err(_) => anyhow::bail!("the wiki's security scan panicked"),
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The chapter's pages.
pub fn pages(report: &AuditReport) -> Vec<Page> {
    let mut by_sev: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &report.findings {
        *by_sev.entry(f.severity.as_str()).or_default() += 1;
    }
    let mut overview = format!(
        "# Security\n\nThe static security engine (the scanners and rules of `agent security-audit`, offline) over the project: {} findings, {} dependency packages, {} known-vulnerable.\n\n| Severity | Findings |\n|---|---|\n",
        report.findings.len(),
        report.packages.len(),
        report.vulnerabilities.len()
    );
    for sev in ["critical", "high", "medium", "low", "info"] {
        overview.push_str(&format!(
            "| {sev} | {} |\n",
            by_sev.get(sev).copied().unwrap_or(0)
        ));
    }
    overview.push('\n');
    for (t, p) in [
        ("Findings", "security/findings.md"),
        ("Dependencies", "security/dependencies.md"),
        ("SBOM", "security/sbom.md"),
        ("Recommendations", "security/recommendations.md"),
    ] {
        overview.push_str(&format!("- {}\n", link(t, p)));
    }
    overview.push_str("\nAttack chains, the authentication review and taint data flow come from the model's deep analysis: run `agent security-audit --deep`.\n");

    let mut findings = "# Findings\n\n".to_string();
    if report.findings.is_empty() {
        findings.push_str("The static engine found nothing.\n");
    } else {
        findings.push_str("| Severity | Rule | Where | Title |\n|---|---|---|---|\n");
        for f in &report.findings {
            findings.push_str(&format!(
                "| {} | `{}` | `{}:{}` | {} |\n",
                f.severity.as_str(),
                cell(&f.rule_id),
                cell(&f.location.file),
                f.location.start_line,
                cell(&f.title)
            ));
        }
    }

    let mut deps = "# Dependencies\n\n".to_string();
    if report.vulnerabilities.is_empty() {
        deps.push_str(&format!(
            "No known vulnerability in the {} packages of the lockfiles (offline advisories).\n",
            report.packages.len()
        ));
    } else {
        deps.push_str(
            "| Package | Version | Advisory | Severity | Fixed in |\n|---|---|---|---|---|\n",
        );
        for v in &report.vulnerabilities {
            deps.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                cell(&v.package),
                cell(&v.version),
                cell(&v.id),
                v.severity.as_str(),
                v.fixed.as_deref().map_or("-".to_string(), cell)
            ));
        }
    }

    let mut sbom = "# SBOM\n\nThe packages the lockfiles pin.\n\n".to_string();
    if report.packages.is_empty() {
        sbom.push_str("No lockfile was found.\n");
    } else {
        sbom.push_str(
            "| Package | Version | Ecosystem | Package URL | Lockfile |\n|---|---|---|---|---|\n",
        );
        for p in &report.packages {
            sbom.push_str(&format!(
                "| `{}` | {} | {} | `{}` | `{}:{}` |\n",
                cell(&p.name),
                cell(&p.version),
                p.ecosystem.osv_name(),
                cell(&p.purl()),
                cell(&p.file),
                p.line
            ));
        }
    }

    let mut recs = "# Recommendations\n\n".to_string();
    let mut seen = std::collections::BTreeSet::new();
    for f in &report.findings {
        if !f.remediation.is_empty() && seen.insert((&f.rule_id, &f.remediation)) {
            recs.push_str(&format!(
                "- `{}` ({}): {}\n",
                cell(&f.rule_id),
                f.severity.as_str(),
                cell(&f.remediation)
            ));
        }
    }
    if seen.is_empty() {
        recs.push_str("Nothing to recommend: no finding.\n");
    }
    let suggestions = format!(
        "# Security suggestions\n\n{}\n\nSee {} and {}.\n",
        if report.findings.is_empty() && report.vulnerabilities.is_empty() {
            "The static engine found nothing to fix.".to_string()
        } else {
            format!(
                "Fix the {} findings, highest severity first, and upgrade the {} vulnerable packages.",
                report.findings.len(),
                report.vulnerabilities.len()
            )
        },
        link("the findings", "security/findings.md"),
        link("the recommendations", "security/recommendations.md")
    );
    let page = |path: &str, title: &str, body: String| Page {
        path: path.into(),
        title: title.into(),
        body,
    };
    vec![
        page("security/overview.md", "Security", overview),
        page("security/findings.md", "Findings", findings),
        page("security/dependencies.md", "Dependencies", deps),
        page("security/sbom.md", "SBOM", sbom),
        page("security/recommendations.md", "Recommendations", recs),
        page(
            "suggestions/security.md",
            "Security suggestions",
            suggestions,
        ),
    ]
}

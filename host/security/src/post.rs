//! After the scan: allowlist, overrides, deduplication across scanners,
//! diff-scope filtering, thresholds.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::config::{Allowlist, Override};
use crate::finding::{Finding, Severity, hash16, sort_findings};
use crate::paths::PathPatterns;

/// Drops findings the allowlist covers (paths, rule ids, evidence regexes).
pub fn apply_allowlist(findings: Vec<Finding>, allow: &Allowlist) -> Vec<Finding> {
    if allow.paths.is_empty() && allow.regexes.is_empty() && allow.rules.is_empty() {
        return findings;
    }
    let paths = PathPatterns::new(&allow.paths).unwrap_or_default();
    let regexes: Vec<Regex> = allow
        .regexes
        .iter()
        .filter_map(|r| Regex::new(r).ok())
        .collect();
    findings
        .into_iter()
        .filter(|f| {
            !(allow.rules.iter().any(|r| r == &f.rule_id)
                || paths.matches(&f.location.file)
                || regexes.iter().any(|re| re.is_match(&f.evidence)))
        })
        .collect()
}

/// Applies severity overrides by rule id (later entries win). The original
/// severity goes to metadata `original_severity`, the note to
/// `override_note`; `disabled` overrides drop the finding.
pub fn apply_overrides(findings: Vec<Finding>, overrides: &[Override]) -> Vec<Finding> {
    if overrides.is_empty() {
        return findings;
    }
    let by_id: HashMap<&str, &Override> = overrides.iter().map(|o| (o.id.as_str(), o)).collect();
    findings
        .into_iter()
        .filter_map(|mut f| {
            let Some(o) = by_id.get(f.rule_id.as_str()) else {
                return Some(f);
            };
            if o.disabled {
                return None;
            }
            if let Some(sev) = o.severity
                && sev != f.severity
            {
                f.metadata
                    .insert("original_severity".into(), f.severity.to_string());
                f.severity = sev;
            }
            if let Some(note) = &o.note {
                f.metadata.insert("override_note".into(), note.clone());
            }
            Some(f)
        })
        .collect()
}

fn same_issue(a: &Finding, b: &Finding) -> bool {
    a.location.file == b.location.file
        && a.location.start_line == b.location.start_line
        && (a.rule_id == b.rule_id || (a.category == b.category && a.cwe == b.cwe))
}

/// Merges findings several scanners reported: the same file and line and
/// either the same rule or the same category and CWE. The kept finding has
/// the highest severity (then confidence); metadata `scanners` lists every
/// scanner that reported it and `merged_rules` the other rule ids. Ids that
/// still collide (identical lines) get an occurrence suffix mixed in. The
/// result is sorted.
pub fn dedup(mut findings: Vec<Finding>) -> Vec<Finding> {
    // Highest severity, then confidence, first; then a stable order.
    findings.sort_by(|a, b| {
        (&a.location.file, a.location.start_line)
            .cmp(&(&b.location.file, b.location.start_line))
            .then(b.severity.cmp(&a.severity))
            .then(b.confidence.cmp(&a.confidence))
            .then(a.rule_id.cmp(&b.rule_id))
            .then(a.scanner.cmp(&b.scanner))
            .then(a.location.start_column.cmp(&b.location.start_column))
    });
    let mut kept: Vec<(Finding, BTreeSet<String>, BTreeSet<String>)> = Vec::new();
    let mut group_start = 0;
    for f in findings {
        if let Some((last, ..)) = kept.last()
            && (last.location.file != f.location.file
                || last.location.start_line != f.location.start_line)
        {
            group_start = kept.len();
        }
        if let Some((_, scanners, rules)) = kept[group_start..]
            .iter_mut()
            .find(|(k, ..)| same_issue(k, &f))
        {
            scanners.insert(f.scanner.clone());
            rules.insert(f.rule_id.clone());
            continue;
        }
        let scanners = BTreeSet::from([f.scanner.clone()]);
        let rules = BTreeSet::from([f.rule_id.clone()]);
        kept.push((f, scanners, rules));
    }
    let mut out: Vec<Finding> = kept
        .into_iter()
        .map(|(mut f, scanners, rules)| {
            f.metadata.insert(
                "scanners".into(),
                scanners.into_iter().collect::<Vec<_>>().join(","),
            );
            let others: Vec<String> = rules.into_iter().filter(|r| r != &f.rule_id).collect();
            if !others.is_empty() {
                f.metadata.insert("merged_rules".into(), others.join(","));
            }
            f
        })
        .collect();
    sort_findings(&mut out);
    let mut seen: HashMap<String, u32> = HashMap::new();
    for f in &mut out {
        let n = seen.entry(f.id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            f.id = hash16(&[&f.id, &n.to_string()]);
        }
    }
    out
}

/// How the audit's outcome is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Thresholds {
    /// Fail when a finding at or above this severity remains (`None`: never).
    pub fail_on: Option<Severity>,
    /// Fail when more findings than this remain.
    pub max_findings: Option<usize>,
}

impl Thresholds {
    /// The threshold in force: the command line over `.security.yaml`'s
    /// `ci` over `config.toml`'s `security.fail_on`, default `high`.
    pub fn resolve(
        cli_fail_on: Option<Severity>,
        project: &crate::config::CiConfig,
        config_fail_on: Option<Severity>,
        cli_max_findings: Option<usize>,
    ) -> Thresholds {
        Thresholds {
            fail_on: Some(
                cli_fail_on
                    .or(project.fail_on)
                    .or(config_fail_on)
                    .unwrap_or(Severity::High),
            ),
            max_findings: cli_max_findings.or(project.max_findings),
        }
    }
}

/// Whether the audit fails, and why.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Verdict {
    /// Whether the findings pass a threshold.
    pub failed: bool,
    /// One line per threshold passed.
    pub reasons: Vec<String>,
}

/// Counts per severity, highest first (every severity present, zeros too).
pub fn counts(findings: &[Finding]) -> BTreeMap<Severity, usize> {
    let mut m: BTreeMap<Severity, usize> = Severity::ALL.iter().map(|s| (*s, 0)).collect();
    for f in findings {
        *m.entry(f.severity).or_default() += 1;
    }
    m
}

/// Judges `findings` against `t`.
pub fn evaluate(findings: &[Finding], t: &Thresholds) -> Verdict {
    let mut reasons = Vec::new();
    if let Some(min) = t.fail_on {
        let n = findings.iter().filter(|f| f.severity >= min).count();
        if n > 0 {
            reasons.push(format!(
                "{n} finding{} at or above severity {min} (fail_on: {min})",
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    if let Some(max) = t.max_findings
        && findings.len() > max
    {
        reasons.push(format!(
            "{} findings, more than max_findings ({max})",
            findings.len()
        ));
    }
    Verdict {
        failed: !reasons.is_empty(),
        reasons,
    }
}

#[cfg(test)]
mod tests;

//! After the scan: allowlist, overrides, deduplication across scanners,
//! diff-scope filtering, thresholds.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::config::{Allowlist, Override};
use crate::finding::{Finding, Severity, hash16, sort_findings};
use crate::paths::PathPatterns;

/// The allowlist and the severity overrides, compiled once and applied to
/// each finding as it is produced (before the caps count it).
#[derive(Default)]
pub struct Policy {
    rules: Vec<String>,
    paths: PathPatterns,
    regexes: Vec<Regex>,
    overrides: HashMap<String, Override>,
}

impl Policy {
    /// Compiles `allow` and `overrides` (later overrides of a rule win).
    pub fn new(allow: &Allowlist, overrides: &[Override]) -> Policy {
        Policy {
            rules: allow.rules.clone(),
            paths: PathPatterns::new(&allow.paths).unwrap_or_default(),
            regexes: allow
                .regexes
                .iter()
                .filter_map(|r| Regex::new(r).ok())
                .collect(),
            overrides: overrides
                .iter()
                .map(|o| (o.id.clone(), o.clone()))
                .collect(),
        }
    }

    /// Whether the allowlist covers `f` (rule id, path, evidence regex).
    pub fn allowed(&self, f: &Finding) -> bool {
        self.rules.iter().any(|r| r == &f.rule_id)
            || self.paths.matches(&f.location.file)
            || self.regexes.iter().any(|re| re.is_match(&f.evidence))
    }

    /// Applies the override of `f`'s rule: `None` when it is disabled; the
    /// original severity goes to metadata `original_severity`, the note to
    /// `override_note`.
    pub fn overridden(&self, mut f: Finding) -> Option<Finding> {
        let Some(o) = self.overrides.get(f.rule_id.as_str()) else {
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
    }

    /// The allowlist, then the overrides.
    pub fn admit(&self, f: Finding) -> Option<Finding> {
        if self.allowed(&f) {
            return None;
        }
        self.overridden(f)
    }
}

/// Drops findings the allowlist covers (paths, rule ids, evidence regexes).
pub fn apply_allowlist(findings: Vec<Finding>, allow: &Allowlist) -> Vec<Finding> {
    if allow.paths.is_empty() && allow.regexes.is_empty() && allow.rules.is_empty() {
        return findings;
    }
    let policy = Policy::new(allow, &[]);
    findings
        .into_iter()
        .filter(|f| !policy.allowed(f))
        .collect()
}

/// Applies severity overrides by rule id (later entries win). The original
/// severity goes to metadata `original_severity`, the note to
/// `override_note`; `disabled` overrides drop the finding.
pub fn apply_overrides(findings: Vec<Finding>, overrides: &[Override]) -> Vec<Finding> {
    if overrides.is_empty() {
        return findings;
    }
    let policy = Policy::new(&Allowlist::default(), overrides);
    findings
        .into_iter()
        .filter_map(|f| policy.overridden(f))
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
    /// Whether the findings pass a threshold, or the audit is incomplete.
    pub failed: bool,
    /// One line per threshold passed (and one when the audit is incomplete).
    pub reasons: Vec<String>,
    /// Some directory or file could not be read: the audit cannot vouch
    /// for the tree, whatever the findings.
    #[serde(default)]
    pub incomplete: bool,
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
    judge(&counts(findings), t, 0)
}

/// Judges findings by their counts per severity (listed and cut by the
/// caps alike) against `t`; `unreadable` paths make the audit incomplete,
/// which fails it whatever the thresholds.
pub fn judge(counts: &BTreeMap<Severity, usize>, t: &Thresholds, unreadable: usize) -> Verdict {
    let total: usize = counts.values().sum();
    let mut reasons = Vec::new();
    if let Some(min) = t.fail_on {
        let n: usize = counts
            .iter()
            .filter(|(s, _)| **s >= min)
            .map(|(_, n)| n)
            .sum();
        if n > 0 {
            reasons.push(format!(
                "{n} finding{} at or above severity {min} (fail_on: {min})",
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    if let Some(max) = t.max_findings
        && total > max
    {
        reasons.push(format!("{total} findings, more than max_findings ({max})"));
    }
    if unreadable > 0 {
        reasons.push(format!(
            "{unreadable} path{} could not be read: the audit is incomplete (see the errors; \
             make them readable, or list them in .ignore to leave them out)",
            if unreadable == 1 { "" } else { "s" }
        ));
    }
    Verdict {
        failed: !reasons.is_empty(),
        reasons,
        incomplete: unreadable > 0,
    }
}

#[cfg(test)]
mod tests;

//! Caps on the findings an audit keeps, so that its memory does not grow
//! with the tree: at most `per_file_rule` findings of one rule in one file,
//! `per_rule` of one rule in the whole audit and `total` in all. What a cap
//! cuts is counted (per rule and per severity) and reported; the verdict
//! counts it too.
//!
//! The kept set does not depend on the order in which workers finish:
//! findings are ranked by (severity, highest first; file; line; column;
//! position in the file) and every cap keeps the best-ranked ones.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};

use crate::finding::{Finding, Severity};

/// The caps (`security.max_findings_per_file_rule`, `…_per_rule`, `…_total`
/// in `config.toml`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindingCaps {
    /// Findings of one rule in one file.
    pub per_file_rule: usize,
    /// Findings of one rule in the audit.
    pub per_rule: usize,
    /// Findings in the audit.
    pub total: usize,
}

impl FindingCaps {
    /// The default caps: 100 per rule per file, 10,000 per rule, 100,000 in all.
    pub const DEFAULT: FindingCaps = FindingCaps {
        per_file_rule: 100,
        per_rule: 10_000,
        total: 100_000,
    };
}

impl Default for FindingCaps {
    fn default() -> FindingCaps {
        FindingCaps::DEFAULT
    }
}

/// What the caps cut: not listed in the report, counted here.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Truncated {
    /// The caps in force.
    pub caps: FindingCaps,
    /// Findings cut, in all.
    pub findings: usize,
    /// Findings cut, per rule id.
    pub by_rule: BTreeMap<String, usize>,
    /// Findings cut, per severity.
    pub by_severity: BTreeMap<Severity, usize>,
}

impl Truncated {
    /// Nothing cut yet, under `caps`.
    pub fn new(caps: FindingCaps) -> Truncated {
        Truncated {
            caps,
            ..Truncated::default()
        }
    }

    fn cut(&mut self, f: &Finding) {
        self.findings += 1;
        *self.by_rule.entry(f.rule_id.clone()).or_default() += 1;
        *self.by_severity.entry(f.severity).or_default() += 1;
    }

    pub(crate) fn merge(&mut self, other: Truncated) {
        self.findings += other.findings;
        for (k, n) in other.by_rule {
            *self.by_rule.entry(k).or_default() += n;
        }
        for (k, n) in other.by_severity {
            *self.by_severity.entry(k).or_default() += n;
        }
    }

    /// One line for summaries: how many were cut, the rules most cut, the
    /// caps and how to raise them. `None` when nothing was cut.
    pub fn summary(&self) -> Option<String> {
        if self.findings == 0 {
            return None;
        }
        let mut rules: Vec<(&String, &usize)> = self.by_rule.iter().collect();
        rules.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let mut top: Vec<String> = rules
            .iter()
            .take(3)
            .map(|(r, n)| format!("{r} {n}"))
            .collect();
        if rules.len() > 3 {
            top.push(format!("{} more rules", rules.len() - 3));
        }
        let c = &self.caps;
        Some(format!(
            "{} findings not listed (cut by the caps: {} per rule per file, {} per rule, {} in \
             all; security.max_findings_* in config.toml raise them): {}",
            self.findings,
            c.per_file_rule,
            c.per_rule,
            c.total,
            top.join(", ")
        ))
    }
}

/// A finding's rank: lower is kept first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Rank {
    severity: Reverse<Severity>,
    source: u32,
    line: u32,
    column: u32,
    seq: u32,
}

/// Ranks one source's findings (a file, or the dependency audit) and cuts
/// those past `per_file_rule` for their rule, counting them in `cut`.
/// `source` is the file's position in the walk (files are walked in path
/// order), so ranks are unique and stable.
pub(crate) fn rank_source(
    source: u32,
    mut findings: Vec<Finding>,
    caps: &FindingCaps,
    cut: &mut Truncated,
) -> Vec<(Rank, Finding)> {
    findings.sort_by(|a, b| {
        a.sort_key()
            .cmp(&b.sort_key())
            .then_with(|| a.scanner.cmp(&b.scanner))
    });
    let mut per_rule: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::with_capacity(findings.len().min(caps.per_file_rule * 4));
    for (seq, f) in findings.into_iter().enumerate() {
        let n = per_rule.entry(f.rule_id.clone()).or_default();
        *n += 1;
        if *n > caps.per_file_rule {
            cut.cut(&f);
            continue;
        }
        let rank = Rank {
            severity: Reverse(f.severity),
            source,
            line: f.location.start_line,
            column: f.location.start_column,
            seq: u32::try_from(seq).unwrap_or(u32::MAX),
        };
        out.push((rank, f));
    }
    out
}

/// The findings kept so far, shared by the scan workers (behind a mutex):
/// the best-ranked `per_rule` of each rule and `total` in all.
pub(crate) struct Collector {
    caps: FindingCaps,
    kept: BTreeMap<Rank, Finding>,
    per_rule: HashMap<String, BTreeSet<Rank>>,
    cut: Truncated,
}

impl Collector {
    pub(crate) fn new(caps: FindingCaps) -> Collector {
        Collector {
            caps,
            kept: BTreeMap::new(),
            per_rule: HashMap::new(),
            cut: Truncated::new(caps),
        }
    }

    /// Adds ranked findings (from [`rank_source`]) and what their source's
    /// cap cut.
    pub(crate) fn add(&mut self, ranked: Vec<(Rank, Finding)>, cut: Truncated) {
        self.cut.merge(cut);
        for (rank, f) in ranked {
            self.insert(rank, f);
        }
    }

    fn insert(&mut self, rank: Rank, f: Finding) {
        if self.kept.len() >= self.caps.total
            && self
                .kept
                .last_key_value()
                .is_none_or(|(last, _)| rank > *last)
        {
            self.cut.cut(&f);
            return;
        }
        let ranks = self.per_rule.entry(f.rule_id.clone()).or_default();
        if ranks.len() >= self.caps.per_rule {
            match ranks.last().copied() {
                Some(worst) if worst > rank => {
                    ranks.pop_last();
                    if let Some(old) = self.kept.remove(&worst) {
                        self.cut.cut(&old);
                    }
                }
                _ => {
                    self.cut.cut(&f);
                    return;
                }
            }
        }
        ranks.insert(rank);
        self.kept.insert(rank, f);
        if self.kept.len() > self.caps.total
            && let Some((worst, old)) = self.kept.pop_last()
        {
            if let Some(r) = self.per_rule.get_mut(&old.rule_id) {
                r.remove(&worst);
            }
            self.cut.cut(&old);
        }
    }

    /// The kept findings (in rank order) and what was cut.
    pub(crate) fn finish(self) -> (Vec<Finding>, Truncated) {
        (self.kept.into_values().collect(), self.cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Location;

    fn f(rule: &str, file: &str, line: u32, sev: Severity) -> Finding {
        let loc = Location {
            file: file.into(),
            start_line: line,
            end_line: line,
            ..Location::default()
        };
        Finding::new(rule, "rules", sev, "secrets-exposure", "t", loc)
    }

    /// Three files of findings, added in `order`, under small caps.
    fn run(order: &[usize]) -> (Vec<(String, String, u32)>, Truncated) {
        let caps = FindingCaps {
            per_file_rule: 3,
            per_rule: 5,
            total: 7,
        };
        let files: Vec<Vec<Finding>> = (0..3)
            .map(|i| {
                let name = format!("f{i}.py");
                let mut v: Vec<Finding> =
                    (1..=6).map(|l| f("A", &name, l, Severity::Low)).collect();
                v.push(f("B", &name, 9, Severity::High));
                v
            })
            .collect();
        let mut c = Collector::new(caps);
        for &i in order {
            let mut cut = Truncated::new(caps);
            let ranked = rank_source(i as u32, files[i].clone(), &caps, &mut cut);
            c.add(ranked, cut);
        }
        let (kept, cut) = c.finish();
        let kept = kept
            .into_iter()
            .map(|f| (f.rule_id, f.location.file, f.location.start_line))
            .collect();
        (kept, cut)
    }

    #[test]
    fn caps_keep_the_best_ranked_whatever_the_order() {
        let (kept, cut) = run(&[0, 1, 2]);
        // The three high findings first, then the first lines of rule A:
        // 3 per file, 5 for the rule, 7 in all.
        let want: Vec<(String, String, u32)> = [
            ("B", "f0.py", 9),
            ("B", "f1.py", 9),
            ("B", "f2.py", 9),
            ("A", "f0.py", 1),
            ("A", "f0.py", 2),
            ("A", "f0.py", 3),
            ("A", "f1.py", 1),
        ]
        .iter()
        .map(|(r, f, l)| (r.to_string(), f.to_string(), *l))
        .collect();
        assert_eq!(kept, want);
        assert_eq!(cut.findings, 21 - 7);
        assert_eq!(cut.by_rule.get("A"), Some(&14));
        assert_eq!(cut.by_severity.get(&Severity::Low), Some(&14));
        assert!(cut.summary().unwrap().starts_with("14 findings not listed"));
        for order in [[2, 1, 0], [1, 2, 0], [2, 0, 1]] {
            assert_eq!(run(&order), (kept.clone(), cut.clone()), "{order:?}");
        }
    }
}

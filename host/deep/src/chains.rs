//! Attack-chain correlation: findings that together make an exploit path,
//! joined into one chain with a stable id.
//!
//! Links come from rules over the findings' kinds (CWE, category, rule id
//! and title) and from the model (`related` in a `report_finding` call:
//! other findings' ids, or `file:line`):
//!
//! | rule | joins |
//! |---|---|
//! | `ssrf-to-credentials` | a server-side request forgery and a cloud-metadata address or a credential |
//! | `traversal-reads-secret` | a path traversal and a secret on disk |
//! | `auth-bypass-to-sqli` | an authentication or authorisation flaw and a SQL injection |
//! | `route-to-command-injection` | a command injection in a file that declares a route (the route is the first step) |
//! | `secret-used` | a hard-coded secret and a model finding in the same file (the code that uses it) |
//! | `stated-by-model` | a finding and those its `related` names |
//!
//! A finding of one kind is joined to the partners the model named for it,
//! else to one partner: the nearest (same file, else the longest common
//! directory), so unrelated parts of a large project do not merge into one
//! chain. Linked findings form a chain
//! (connected components); its steps go entry point → exploit → impact,
//! then by file and line.

use std::collections::BTreeMap;

use agent_security::{Finding, Severity};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// What a finding is, for correlation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// Authentication or authorisation flaw.
    AuthBypass,
    /// Server-side request forgery.
    Ssrf,
    /// Path traversal.
    PathTraversal,
    /// SQL injection.
    Sqli,
    /// OS command injection.
    CommandInjection,
    /// A cloud metadata address.
    CloudMetadata,
    /// A hard-coded secret or credential.
    Secret,
    /// Anything else.
    Other,
}

impl Kind {
    /// The finding's kind.
    pub fn of(f: &Finding) -> Kind {
        let cwe = f.cwe.as_deref().unwrap_or("").to_ascii_uppercase();
        let text = format!("{} {} {}", f.rule_id, f.title, f.evidence).to_ascii_lowercase();
        let cwe_is = |ids: &[&str]| ids.iter().any(|i| cwe == *i);
        if cwe_is(&["CWE-918"]) || text.contains("ssrf") || text.contains("request forgery") {
            Kind::Ssrf
        } else if text.contains("169.254.169.254")
            || text.contains("metadata.google.internal")
            || text.contains("cloud metadata")
        {
            Kind::CloudMetadata
        } else if f.category == "secrets-exposure" || cwe_is(&["CWE-798", "CWE-522", "CWE-259"]) {
            Kind::Secret
        } else if cwe_is(&["CWE-22", "CWE-23", "CWE-36", "CWE-73"])
            || text.contains("path traversal")
            || text.contains("directory traversal")
        {
            Kind::PathTraversal
        } else if cwe_is(&["CWE-89"]) || text.contains("sql injection") || text.contains("sqli") {
            Kind::Sqli
        } else if cwe_is(&["CWE-78", "CWE-77"]) || text.contains("command injection") {
            Kind::CommandInjection
        } else if matches!(f.category.as_str(), "authentication" | "authorization")
            || cwe_is(&[
                "CWE-287", "CWE-285", "CWE-306", "CWE-862", "CWE-863", "CWE-639",
            ])
        {
            Kind::AuthBypass
        } else {
            Kind::Other
        }
    }

    /// Where in an exploit path a step of this kind goes (0: entry).
    fn stage(self) -> u8 {
        match self {
            Kind::AuthBypass => 1,
            Kind::Ssrf | Kind::PathTraversal | Kind::Sqli | Kind::CommandInjection => 2,
            Kind::Other => 3,
            Kind::CloudMetadata | Kind::Secret => 4,
        }
    }

    fn role(self) -> &'static str {
        match self {
            Kind::AuthBypass => "access",
            Kind::Ssrf | Kind::PathTraversal | Kind::Sqli | Kind::CommandInjection => "exploit",
            Kind::CloudMetadata | Kind::Secret => "impact",
            Kind::Other => "step",
        }
    }
}

/// One step of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// The finding's id (none for a route entry point).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finding: Option<String>,
    /// `entry`, `access`, `exploit`, `step` or `impact`.
    pub role: String,
    /// The file.
    pub file: String,
    /// The line.
    pub line: u32,
    /// What happens here.
    pub title: String,
}

/// An exploit path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chain {
    /// `chain-` and 8 hex digits of SHA-256 over the members' ids: the same
    /// findings give the same id from run to run.
    pub id: String,
    /// The rules that joined it, e.g. `ssrf-to-credentials`.
    pub rules: Vec<String>,
    /// Its most severe member's severity.
    pub severity: Severity,
    /// The steps, in exploit order.
    pub steps: Vec<Step>,
}

impl Chain {
    /// A one-line title: the steps' titles joined by `→`.
    pub fn title(&self) -> String {
        self.steps
            .iter()
            .map(|s| s.title.as_str())
            .collect::<Vec<_>>()
            .join(" → ")
    }
}

/// Union-find over the findings' indexes.
struct Sets(Vec<usize>);

impl Sets {
    fn find(&mut self, i: usize) -> usize {
        let mut r = i;
        while self.0[r] != r {
            r = self.0[r];
        }
        let mut i = i;
        while self.0[i] != r {
            let next = self.0[i];
            self.0[i] = r;
            i = next;
        }
        r
    }

    fn join(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.0[ra.max(rb)] = ra.min(rb);
        }
    }
}

fn common_dirs(a: &str, b: &str) -> usize {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y)
        .count()
}

/// The nearest of `candidates` to `f` (same file first, then the longest
/// common directory, then report order).
fn nearest(findings: &[Finding], f: usize, candidates: &[usize]) -> Option<usize> {
    let file = &findings[f].location.file;
    candidates
        .iter()
        .copied()
        .filter(|c| *c != f)
        .max_by_key(|c| {
            let other = &findings[*c].location.file;
            (
                other == file,
                common_dirs(file, other),
                std::cmp::Reverse(*c),
            )
        })
}

/// The links the model stated: (finding, the one its `related` names by
/// id or `file:line`).
fn stated_links(findings: &[Finding]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        let Some(related) = f.metadata.get("related") else {
            continue;
        };
        for r in related.split(',').map(str::trim).filter(|r| !r.is_empty()) {
            let target = findings.iter().position(|o| {
                o.id == r || format!("{}:{}", o.location.file, o.location.start_line) == r
            });
            if let Some(t) = target.filter(|t| *t != i) {
                out.push((i, t));
            }
        }
    }
    out
}

/// Joins `findings` into chains. `routes`: the files that declare a route
/// and the route's line (from the risk scoring).
pub fn correlate(findings: &[Finding], routes: &BTreeMap<String, u32>) -> Vec<Chain> {
    let kinds: Vec<Kind> = findings.iter().map(Kind::of).collect();
    let of = |k: &[Kind]| -> Vec<usize> {
        (0..findings.len())
            .filter(|i| k.contains(&kinds[*i]))
            .collect()
    };
    let mut sets = Sets((0..findings.len()).collect());
    let mut why: BTreeMap<usize, Vec<&'static str>> = BTreeMap::new();
    let mut link = |sets: &mut Sets, a: usize, b: usize, rule: &'static str| {
        sets.join(a, b);
        why.entry(a).or_default().push(rule);
        why.entry(b).or_default().push(rule);
    };
    let rules: [(&'static str, &[Kind], &[Kind]); 3] = [
        (
            "ssrf-to-credentials",
            &[Kind::Ssrf],
            &[Kind::CloudMetadata, Kind::Secret],
        ),
        (
            "traversal-reads-secret",
            &[Kind::PathTraversal],
            &[Kind::Secret],
        ),
        ("auth-bypass-to-sqli", &[Kind::Sqli], &[Kind::AuthBypass]),
    ];
    let stated = stated_links(findings);
    for (rule, from, to) in rules {
        let targets = of(to);
        for a in of(from) {
            // The partners the model named win over the nearest guess.
            let named: Vec<usize> = stated
                .iter()
                .filter(|(x, y)| *x == a && to.contains(&kinds[*y]))
                .map(|(_, y)| *y)
                .collect();
            if !named.is_empty() {
                for b in named {
                    link(&mut sets, a, b, rule);
                }
            } else if let Some(b) = nearest(findings, a, &targets) {
                link(&mut sets, a, b, rule);
            }
        }
    }
    // A hard-coded secret and the model's finding on the code using it.
    for s in of(&[Kind::Secret]) {
        let users: Vec<usize> = (0..findings.len())
            .filter(|i| {
                kinds[*i] != Kind::Secret
                    && findings[*i].scanner.ends_with("/model")
                    && findings[*i].location.file == findings[s].location.file
            })
            .collect();
        if let Some(u) = nearest(findings, s, &users) {
            link(&mut sets, s, u, "secret-used");
        }
    }
    // Links the model stated.
    for (i, t) in stated {
        link(&mut sets, i, t, "stated-by-model");
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..findings.len() {
        let root = sets.find(i);
        groups.entry(root).or_default().push(i);
    }
    // A command injection in a file with a route: the route is the entry.
    let mut chains = Vec::new();
    for members in groups.values() {
        let entry = members.iter().find_map(|m| {
            (kinds[*m] == Kind::CommandInjection)
                .then(|| routes.get(&findings[*m].location.file).map(|l| (*m, *l)))
                .flatten()
        });
        if members.len() < 2 && entry.is_none() {
            continue;
        }
        let mut rules: Vec<String> = members
            .iter()
            .flat_map(|m| why.get(m).cloned().unwrap_or_default())
            .map(String::from)
            .collect();
        let mut order: Vec<usize> = members.clone();
        order.sort_by(|a, b| {
            let (fa, fb) = (&findings[*a], &findings[*b]);
            kinds[*a]
                .stage()
                .cmp(&kinds[*b].stage())
                .then_with(|| fa.location.file.cmp(&fb.location.file))
                .then_with(|| fa.location.start_line.cmp(&fb.location.start_line))
        });
        let mut steps = Vec::new();
        if let Some((m, line)) = entry {
            rules.push("route-to-command-injection".into());
            steps.push(Step {
                finding: None,
                role: "entry".into(),
                file: findings[m].location.file.clone(),
                line,
                title: "request handled by a route".into(),
            });
        }
        rules.sort();
        rules.dedup();
        for m in &order {
            let f = &findings[*m];
            steps.push(Step {
                finding: Some(f.id.clone()),
                role: kinds[*m].role().into(),
                file: f.location.file.clone(),
                line: f.location.start_line,
                title: f.title.clone(),
            });
        }
        let mut ids: Vec<&str> = members.iter().map(|m| findings[*m].id.as_str()).collect();
        ids.sort_unstable();
        let digest = Sha256::digest(ids.join("\0").as_bytes());
        chains.push(Chain {
            id: format!("chain-{}", &hex::encode(digest)[..8]),
            rules,
            severity: members
                .iter()
                .map(|m| findings[*m].severity)
                .max()
                .unwrap_or(Severity::Info),
            steps,
        });
    }
    chains.sort_by(|a, b| b.severity.cmp(&a.severity).then_with(|| a.id.cmp(&b.id)));
    chains
}

/// Marks each chain's members with metadata `chain` (the chain's id; ids
/// joined by `,` for a finding in more than one).
pub fn mark(findings: &mut [Finding], chains: &[Chain]) {
    for c in chains {
        for s in c.steps.iter().filter_map(|s| s.finding.as_deref()) {
            for f in findings.iter_mut().filter(|f| f.id == s) {
                let v = match f.metadata.get("chain") {
                    Some(old) if !old.split(',').any(|o| o == c.id) => format!("{old},{}", c.id),
                    Some(old) => old.clone(),
                    None => c.id.clone(),
                };
                f.metadata.insert("chain".into(), v);
            }
        }
    }
}

#[cfg(test)]
#[path = "chains_tests.rs"]
mod tests;

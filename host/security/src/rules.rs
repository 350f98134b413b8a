//! The declarative rules engine: `.security.yaml` rules and security-rule
//! skills' `sast_rules_file` rules, regex (per line) or tree-sitter queries.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use regex::Regex;

use crate::config::{PatternKind, Rule};
use crate::finding::{Finding, Location};
use crate::paths::PathPatterns;

/// Longest evidence kept (bytes, cut at a character boundary).
const MAX_EVIDENCE: usize = 200;

/// Longest time one tree-sitter rule may take on one file. The rules come
/// from the project's `.security.yaml` and from skills: a hostile query
/// (`((_) @c . (_)* @d)`) would otherwise keep a scan worker busy for
/// minutes. A query stopped here is a rule error of that file.
pub const RULE_QUERY_TIME: Duration = Duration::from_secs(5);

struct Compiled {
    rule: Rule,
    skill: Option<String>,
    scanner: String,
    regex: Option<Regex>,
    paths: PathPatterns,
    exclude: PathPatterns,
}

/// A compiled set of declarative rules, shared by the scan workers.
pub struct RuleSet {
    rules: Vec<Compiled>,
    /// (rule index, language) pairs whose query does not compile for that
    /// language (rules without `languages` try every grammar).
    bad: Mutex<HashSet<(usize, String)>>,
    /// Time one tree-sitter rule may take on one file.
    query_time: Duration,
}

impl Default for RuleSet {
    fn default() -> Self {
        RuleSet {
            rules: Vec::new(),
            bad: Mutex::default(),
            query_time: RULE_QUERY_TIME,
        }
    }
}

impl std::fmt::Debug for RuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleSet")
            .field(
                "rules",
                &self.rules.iter().map(|r| &r.rule.id).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// One problem met while running a rule (a query that fails on a file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// The rule.
    pub rule_id: String,
    /// The file.
    pub file: String,
    /// What failed.
    pub message: String,
}

pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn language_matches(wanted: &[String], lang: Option<&str>) -> bool {
    if wanted.is_empty() {
        return true;
    }
    let Some(lang) = lang else { return false };
    wanted
        .iter()
        .any(|w| w == lang || (w == "typescript" && lang == "tsx"))
}

impl RuleSet {
    /// An empty set.
    pub fn new() -> RuleSet {
        RuleSet::default()
    }

    /// Adds `rules`; `skill` is the security-rule skill they come from
    /// (`None` for the project's `.security.yaml`). Findings carry scanner
    /// `rules` (project) or `<skill>/rules`.
    ///
    /// # Errors
    /// A rule whose regex or globs do not compile (parsing already checks
    /// them, so only for hand-built rules).
    pub fn add(&mut self, rules: &[Rule], skill: Option<&str>) -> Result<(), String> {
        for rule in rules {
            let regex = match &rule.pattern {
                PatternKind::Regex(r) => {
                    Some(Regex::new(r).map_err(|e| format!("rule {}: bad regex: {e}", rule.id))?)
                }
                PatternKind::TreeSitter(_) => None,
            };
            let paths = PathPatterns::new(&rule.paths)
                .map_err(|e| format!("rule {}: paths: {e}", rule.id))?;
            let exclude = PathPatterns::new(&rule.exclude_paths)
                .map_err(|e| format!("rule {}: exclude_paths: {e}", rule.id))?;
            self.rules.push(Compiled {
                rule: rule.clone(),
                skill: skill.map(str::to_string),
                scanner: skill.map_or_else(|| "rules".to_string(), |s| format!("{s}/rules")),
                regex,
                paths,
                exclude,
            });
        }
        Ok(())
    }

    /// Number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether some rule may apply to `path` (so the file is worth reading).
    pub fn wants(&self, path: &str, language: Option<&str>) -> bool {
        self.rules.iter().any(|c| applies(c, path, language))
    }

    /// Runs every applicable rule over one file.
    pub fn scan(
        &self,
        path: &str,
        language: Option<&str>,
        content: &str,
    ) -> (Vec<Finding>, Vec<RuleError>) {
        let mut findings = Vec::new();
        let mut errors = Vec::new();
        let mut lines: Option<Vec<&str>> = None;
        for (idx, c) in self.rules.iter().enumerate() {
            if !applies(c, path, language) {
                continue;
            }
            match &c.rule.pattern {
                PatternKind::Regex(_) => {
                    let Some(re) = &c.regex else { continue };
                    for (i, line) in content.lines().enumerate() {
                        if let Some(m) = re.find(line) {
                            let loc = Location {
                                file: path.to_string(),
                                start_line: i as u32 + 1,
                                end_line: i as u32 + 1,
                                start_column: m.start() as u32 + 1,
                                end_column: m.end() as u32 + 1,
                                function: None,
                            };
                            findings.push(make(c, loc, line));
                        }
                    }
                }
                PatternKind::TreeSitter(query) => {
                    let Some(lang) = language else { continue };
                    if self
                        .bad
                        .lock()
                        .is_ok_and(|b| b.contains(&(idx, lang.to_string())))
                    {
                        continue;
                    }
                    let bounds = agent_syntax::Bounds {
                        deadline: Some(Instant::now() + self.query_time),
                        ..agent_syntax::Bounds::default()
                    };
                    let matches = match agent_syntax::query_bounded(lang, content, query, &bounds) {
                        Ok(m) => m,
                        Err(e) => {
                            let bad_query = matches!(e, agent_syntax::SyntaxError::BadQuery { .. })
                                || matches!(e, agent_syntax::SyntaxError::UnknownLanguage { .. });
                            if bad_query {
                                if let Ok(mut b) = self.bad.lock() {
                                    b.insert((idx, lang.to_string()));
                                }
                                // A rule without languages tries every grammar:
                                // a query for another language is not an error.
                                if !c.rule.languages.is_empty() {
                                    errors.push(RuleError {
                                        rule_id: c.rule.id.clone(),
                                        file: path.to_string(),
                                        message: e.to_string(),
                                    });
                                }
                            } else {
                                errors.push(RuleError {
                                    rule_id: c.rule.id.clone(),
                                    file: path.to_string(),
                                    message: e.to_string(),
                                });
                            }
                            continue;
                        }
                    };
                    let lines = lines.get_or_insert_with(|| content.lines().collect());
                    let mut seen = HashSet::new();
                    for m in matches {
                        let cap = m
                            .captures
                            .iter()
                            .find(|cap| cap.name.eq_ignore_ascii_case(&c.rule.id))
                            .or_else(|| m.captures.first());
                        let Some(cap) = cap else { continue };
                        if !seen.insert((cap.start_line, cap.start_column)) {
                            continue;
                        }
                        let line_text = lines
                            .get((cap.start_line as usize).saturating_sub(1))
                            .copied()
                            .unwrap_or("");
                        let loc = Location {
                            file: path.to_string(),
                            start_line: cap.start_line,
                            end_line: cap.end_line,
                            start_column: cap.start_column,
                            end_column: cap.end_column,
                            function: None,
                        };
                        findings.push(make(c, loc, line_text));
                    }
                }
            }
        }
        (findings, errors)
    }
}

fn applies(c: &Compiled, path: &str, language: Option<&str>) -> bool {
    // The rules file spells out the patterns it looks for.
    if path == crate::config::SECURITY_FILE {
        return false;
    }
    if matches!(c.rule.pattern, PatternKind::TreeSitter(_)) && language.is_none() {
        return false;
    }
    language_matches(&c.rule.languages, language)
        && (c.paths.is_empty() || c.paths.matches(path))
        && !c.exclude.matches(path)
}

fn make(c: &Compiled, loc: Location, line: &str) -> Finding {
    let r = &c.rule;
    let mut f = Finding::new(
        r.id.clone(),
        c.scanner.clone(),
        r.severity,
        r.category.clone(),
        r.title.clone(),
        loc,
    );
    f.skill_source = c.skill.clone();
    f.description = r.description.clone();
    f.cwe = r.cwe.clone();
    f.owasp = r.owasp.clone();
    f.remediation = r.remediation.clone();
    f.confidence = r.confidence;
    f.references = r.references.clone();
    f.evidence = cut(line.trim(), MAX_EVIDENCE);
    f.fingerprint(Some(line));
    f
}

#[cfg(test)]
mod tests;

//! `.security.yaml` and security-rule skills' rule files: custom rules,
//! severity overrides, banned dependencies, CI thresholds and allowlists.
//! Every error names the file, the line and the field.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::finding::{Confidence, Severity};
use crate::yaml_lines::LineIndex;
use agent_bounded::Limits;

/// The file name of the project's security configuration.
pub const SECURITY_FILE: &str = ".security.yaml";

/// Largest rule file read (1 MiB, the limit for configuration YAML).
pub const MAX_CONFIG_BYTES: u64 = Limits::CONFIG.max_bytes as u64;

/// A problem in a security configuration or rule file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// 1-based column, when known.
    pub column: Option<usize>,
    /// The field path (`rules[2].pattern.match`), empty for the whole file.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(col) = self.column {
                write!(f, ":{col}")?;
            }
        }
        if self.field.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": {}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ConfigError {}

/// How a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternKind {
    /// A regular expression applied to each line.
    Regex(String),
    /// A tree-sitter query; a capture named like the rule id (or the first
    /// capture) gives the location.
    TreeSitter(String),
}

/// One declarative rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// Rule id (`CUSTOM-001`).
    pub id: String,
    /// One-line title.
    pub title: String,
    /// Longer description (defaults to the title).
    pub description: String,
    /// Severity.
    pub severity: Severity,
    /// Category (default `custom`).
    pub category: String,
    /// Confidence (default medium).
    pub confidence: Confidence,
    /// CWE id.
    pub cwe: Option<String>,
    /// OWASP entry.
    pub owasp: Option<String>,
    /// How to fix.
    pub remediation: String,
    /// Links.
    pub references: Vec<String>,
    /// The matcher.
    pub pattern: PatternKind,
    /// Languages it applies to (empty: any; regex rules then run on every
    /// text file, tree-sitter rules on every file with a grammar).
    pub languages: Vec<String>,
    /// Globs or directory prefixes (`src/`) it is limited to (empty: all).
    pub paths: Vec<String>,
    /// Globs or directory prefixes (`test/`, `*_test.go`) it skips.
    pub exclude_paths: Vec<String>,
    /// The 1-based line of the rule in its file.
    pub line: usize,
}

/// A severity override for a rule id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// The rule id it applies to.
    pub id: String,
    /// New severity, if any.
    pub severity: Option<Severity>,
    /// Why (kept in the finding's metadata as `override_note`).
    pub note: Option<String>,
    /// Drop the finding entirely.
    pub disabled: bool,
}

/// A package that must not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BannedDependency {
    /// Package name as its ecosystem spells it.
    pub package: String,
    /// Why.
    pub reason: String,
    /// Limit to one ecosystem (OSV name, e.g. `Go`, `npm`), case-insensitive.
    pub ecosystem: Option<String>,
}

/// CI thresholds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CiConfig {
    /// Fail when a finding at or above this severity remains.
    pub fail_on: Option<Severity>,
    /// Fail when more findings than this remain (after `fail_on`'s filter: all findings).
    pub max_findings: Option<usize>,
}

/// Findings to drop.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    /// Globs or directory prefixes of files whose findings are dropped.
    pub paths: Vec<String>,
    /// Regexes: a finding whose evidence or line matches one is dropped.
    pub regexes: Vec<String>,
    /// Rule ids to drop everywhere.
    pub rules: Vec<String>,
}

/// A parsed `.security.yaml` (or a skill's rule file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecurityConfig {
    /// Where it came from.
    pub file: Option<PathBuf>,
    /// Custom rules.
    pub rules: Vec<Rule>,
    /// Severity overrides.
    pub overrides: Vec<Override>,
    /// Banned dependencies.
    pub banned: Vec<BannedDependency>,
    /// CI thresholds.
    pub ci: CiConfig,
    /// Allowlist.
    pub allowlist: Allowlist,
    /// Taint specifications added to the built-in ones (`taint:`, one
    /// entry per language; docs/security.md, "Taint analysis").
    pub taint: Vec<crate::taint::RawSpec>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    rules: Vec<RawRule>,
    #[serde(default)]
    overrides: Vec<RawOverride>,
    #[serde(default)]
    dependencies: Option<RawDependencies>,
    #[serde(default)]
    ci: Option<RawCi>,
    #[serde(default)]
    allowlist: Option<RawAllowlist>,
    #[serde(default)]
    taint: Vec<crate::taint::RawSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    id: String,
    title: Option<String>,
    description: Option<String>,
    severity: String,
    category: Option<String>,
    confidence: Option<String>,
    cwe: Option<String>,
    owasp: Option<String>,
    remediation: Option<String>,
    #[serde(default)]
    references: Vec<String>,
    #[serde(default)]
    languages: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    exclude_paths: Vec<String>,
    pattern: RawPattern,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPattern {
    #[serde(rename = "type")]
    kind: String,
    #[serde(rename = "match")]
    regex: Option<String>,
    query: Option<String>,
    #[serde(default)]
    languages: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    exclude_paths: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOverride {
    id: String,
    severity: Option<String>,
    note: Option<String>,
    #[serde(default)]
    disabled: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDependencies {
    #[serde(default)]
    banned: Vec<RawBanned>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBanned {
    package: String,
    reason: Option<String>,
    ecosystem: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCi {
    fail_on: Option<String>,
    max_findings: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAllowlist {
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    rules: Vec<String>,
}

struct Ctx<'a> {
    file: &'a Path,
    index: &'a LineIndex,
}

impl Ctx<'_> {
    fn err(&self, field: &str, message: impl Into<String>) -> ConfigError {
        let pos = self.index.find(field);
        ConfigError {
            file: self.file.to_path_buf(),
            line: pos.map(|p| p.0),
            column: pos.map(|p| p.1),
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// Whether `lang` is a language the engine knows (one with a grammar).
fn known_language(lang: &str) -> bool {
    agent_syntax::languages().contains(&lang)
}

impl SecurityConfig {
    /// Reads and parses `path`.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the file (and line and field) when the file
    /// cannot be read or is not a valid configuration.
    pub fn load(path: &Path) -> Result<SecurityConfig, ConfigError> {
        let whole = |message: String| ConfigError {
            file: path.to_path_buf(),
            line: None,
            column: None,
            field: String::new(),
            message,
        };
        let meta = std::fs::metadata(path).map_err(|e| whole(format!("cannot read it: {e}")))?;
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(whole(format!(
                "is {} bytes; the limit is {MAX_CONFIG_BYTES}",
                meta.len()
            )));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| whole(format!("cannot read it: {e}")))?;
        SecurityConfig::parse(&text, path)
    }

    /// Loads `<root>/.security.yaml` when it exists.
    ///
    /// # Errors
    /// See [`SecurityConfig::load`].
    pub fn load_project(root: &Path) -> Result<Option<SecurityConfig>, ConfigError> {
        let path = root.join(SECURITY_FILE);
        if path.is_file() {
            SecurityConfig::load(&path).map(Some)
        } else {
            Ok(None)
        }
    }

    /// Parses configuration text; `file` names it in errors.
    ///
    /// # Errors
    /// A [`ConfigError`] naming file, line and field.
    pub fn parse(text: &str, file: &Path) -> Result<SecurityConfig, ConfigError> {
        // Size, nesting and aliases are bounded before any parser builds a
        // tree: a deeply nested file used to overflow the stack.
        agent_bounded::check_yaml(text, file.display(), Limits::CONFIG).map_err(|e| {
            ConfigError {
                file: file.to_path_buf(),
                line: e.position().map(|p| p.0),
                column: e.position().map(|p| p.1),
                field: String::new(),
                message: e.reason(),
            }
        })?;
        let index = LineIndex::build(text).map_err(|e| ConfigError {
            file: file.to_path_buf(),
            line: Some(e.line),
            column: Some(e.column),
            field: String::new(),
            message: format!("not valid YAML: {}", e.message),
        })?;
        let cx = Ctx {
            file,
            index: &index,
        };
        let value: serde_yaml::Value = serde_yaml::from_str(text).map_err(|e| ConfigError {
            file: file.to_path_buf(),
            line: e.location().map(|l| l.line()),
            column: e.location().map(|l| l.column()),
            field: String::new(),
            message: format!("not valid YAML: {e}"),
        })?;
        if value.is_null() {
            return Ok(SecurityConfig {
                file: Some(file.to_path_buf()),
                ..SecurityConfig::default()
            });
        }
        let de = serde_yaml::Deserializer::from_str(text);
        let raw: RawConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let field = e.path().to_string();
            let field = if field == "." { String::new() } else { field };
            let inner = e.inner();
            let pos = inner
                .location()
                .map(|l| (l.line(), l.column()))
                .or_else(|| index.find(&field));
            let mut message = inner.to_string();
            // serde_yaml appends " at line N column M"; the prefix says it.
            if let Some(cut) = message.find(" at line ") {
                message.truncate(cut);
            }
            ConfigError {
                file: file.to_path_buf(),
                line: pos.map(|p| p.0),
                column: pos.map(|p| p.1),
                field,
                message,
            }
        })?;
        convert(raw, &cx)
    }

    /// Merges `other` into `self`: rules, overrides, bans and allowlists are
    /// appended; CI settings of `self` win.
    pub fn merge(&mut self, other: SecurityConfig) {
        self.rules.extend(other.rules);
        self.overrides.extend(other.overrides);
        self.banned.extend(other.banned);
        self.allowlist.paths.extend(other.allowlist.paths);
        self.allowlist.regexes.extend(other.allowlist.regexes);
        self.allowlist.rules.extend(other.allowlist.rules);
        self.taint.extend(other.taint);
        if self.ci.fail_on.is_none() {
            self.ci.fail_on = other.ci.fail_on;
        }
        if self.ci.max_findings.is_none() {
            self.ci.max_findings = other.ci.max_findings;
        }
    }
}

fn severity(cx: &Ctx<'_>, field: &str, s: &str) -> Result<Severity, ConfigError> {
    s.parse()
        .map_err(|e: crate::finding::UnknownSeverity| cx.err(field, e.to_string()))
}

fn check_globs(cx: &Ctx<'_>, field: &str, globs: &[String]) -> Result<(), ConfigError> {
    for (i, g) in globs.iter().enumerate() {
        if g.trim().is_empty() {
            return Err(cx.err(&format!("{field}[{i}]"), "an empty path pattern"));
        }
        if !g.ends_with('/')
            && let Err(e) = globset::Glob::new(g)
        {
            return Err(cx.err(
                &format!("{field}[{i}]"),
                format!("not a valid glob `{g}`: {e}"),
            ));
        }
    }
    Ok(())
}

fn convert(raw: RawConfig, cx: &Ctx<'_>) -> Result<SecurityConfig, ConfigError> {
    let raw_taint = raw.taint;
    let mut rules: Vec<Rule> = Vec::new();
    for (i, r) in raw.rules.into_iter().enumerate() {
        let at = |f: &str| format!("rules[{i}].{f}");
        if r.id.trim().is_empty() {
            return Err(cx.err(&at("id"), "a rule needs a non-empty id"));
        }
        let severity = severity(cx, &at("severity"), &r.severity)?;
        let confidence = match r.confidence.as_deref().map(str::to_ascii_lowercase) {
            None => Confidence::Medium,
            Some(c) => match c.as_str() {
                "high" => Confidence::High,
                "medium" => Confidence::Medium,
                "low" => Confidence::Low,
                _ => {
                    return Err(cx.err(
                        &at("confidence"),
                        format!("unknown confidence `{c}` (expected one of: high, medium, low)"),
                    ));
                }
            },
        };
        let p = r.pattern;
        let pattern = match p.kind.as_str() {
            "regex" => {
                let Some(m) = p.regex.filter(|m| !m.is_empty()) else {
                    return Err(cx.err(
                        &at("pattern"),
                        "a regex pattern needs `match` (the regular expression)",
                    ));
                };
                if p.query.is_some() {
                    return Err(cx.err(
                        &at("pattern.query"),
                        "`query` is for `type: tree-sitter`; a regex pattern uses `match`",
                    ));
                }
                if let Err(e) = regex::Regex::new(&m) {
                    return Err(cx.err(
                        &at("pattern.match"),
                        format!("not a valid regular expression: {e}"),
                    ));
                }
                PatternKind::Regex(m)
            }
            "tree-sitter" | "tree_sitter" | "treesitter" => {
                let Some(q) = p.query.filter(|q| !q.trim().is_empty()) else {
                    return Err(cx.err(
                        &at("pattern"),
                        "a tree-sitter pattern needs `query` (an S-expression query)",
                    ));
                };
                if p.regex.is_some() {
                    return Err(cx.err(
                        &at("pattern.match"),
                        "`match` is for `type: regex`; a tree-sitter pattern uses `query`",
                    ));
                }
                PatternKind::TreeSitter(q)
            }
            other => {
                return Err(cx.err(
                    &at("pattern.type"),
                    format!("unknown pattern type `{other}` (expected `regex` or `tree-sitter`)"),
                ));
            }
        };
        let mut languages = r.languages;
        languages.extend(p.languages);
        for (j, l) in languages.iter_mut().enumerate() {
            *l = l.to_ascii_lowercase();
            if !known_language(l) {
                return Err(cx.err(
                    &at(&format!("languages[{j}]")),
                    format!(
                        "unknown language `{l}` (known: {})",
                        agent_syntax::languages().join(", ")
                    ),
                ));
            }
        }
        // One id may have one form per grammar (`languages` disjoint, both
        // named): a tree-sitter query is written for one grammar.
        let clash = rules.iter().any(|earlier| {
            earlier.id == r.id
                && (earlier.languages.is_empty()
                    || languages.is_empty()
                    || earlier.languages.iter().any(|l| languages.contains(l)))
        });
        if clash {
            return Err(cx.err(&at("id"), format!("duplicate rule id `{}`", r.id)));
        }
        let mut paths = r.paths;
        paths.extend(p.paths);
        let mut exclude_paths = r.exclude_paths;
        exclude_paths.extend(p.exclude_paths);
        check_globs(cx, &at("paths"), &paths)?;
        check_globs(cx, &at("exclude_paths"), &exclude_paths)?;
        // Queries for named languages are checked now.
        if let PatternKind::TreeSitter(q) = &pattern {
            for l in &languages {
                if let Err(e) = agent_syntax::query(l, "", q) {
                    return Err(cx.err(&at("pattern.query"), format!("not a valid {l} query: {e}")));
                }
            }
        }
        let title = r.title.unwrap_or_else(|| r.id.clone());
        let line = cx.index.find(&format!("rules[{i}]")).map_or(0, |p| p.0);
        rules.push(Rule {
            description: r.description.unwrap_or_else(|| title.clone()),
            title,
            id: r.id,
            severity,
            category: r.category.unwrap_or_else(|| "custom".into()),
            confidence,
            cwe: r.cwe.map(normalize_cwe),
            owasp: r.owasp,
            remediation: r.remediation.unwrap_or_default(),
            references: r.references,
            pattern,
            languages,
            paths,
            exclude_paths,
            line,
        });
    }
    let mut overrides = Vec::new();
    for (i, o) in raw.overrides.into_iter().enumerate() {
        if o.id.trim().is_empty() {
            return Err(cx.err(&format!("overrides[{i}].id"), "an override needs a rule id"));
        }
        let sev = match &o.severity {
            Some(s) => Some(severity(cx, &format!("overrides[{i}].severity"), s)?),
            None => None,
        };
        if sev.is_none() && !o.disabled && o.note.is_none() {
            return Err(cx.err(
                &format!("overrides[{i}]"),
                "an override needs `severity`, `disabled: true` or a `note`",
            ));
        }
        overrides.push(Override {
            id: o.id,
            severity: sev,
            note: o.note,
            disabled: o.disabled,
        });
    }
    let mut banned = Vec::new();
    for (i, b) in raw
        .dependencies
        .map(|d| d.banned)
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        if b.package.trim().is_empty() {
            return Err(cx.err(
                &format!("dependencies.banned[{i}].package"),
                "a banned dependency needs a package name",
            ));
        }
        banned.push(BannedDependency {
            reason: b
                .reason
                .unwrap_or_else(|| "banned by .security.yaml".into()),
            package: b.package,
            ecosystem: b.ecosystem,
        });
    }
    let ci = match raw.ci {
        None => CiConfig::default(),
        Some(c) => CiConfig {
            fail_on: match &c.fail_on {
                Some(s) => Some(severity(cx, "ci.fail_on", s)?),
                None => None,
            },
            max_findings: c.max_findings,
        },
    };
    let allowlist = match raw.allowlist {
        None => Allowlist::default(),
        Some(a) => {
            check_globs(cx, "allowlist.paths", &a.paths)?;
            for (i, r) in a.regexes.iter().enumerate() {
                if let Err(e) = regex::Regex::new(r) {
                    return Err(cx.err(
                        &format!("allowlist.regexes[{i}]"),
                        format!("not a valid regular expression: {e}"),
                    ));
                }
            }
            Allowlist {
                paths: a.paths,
                regexes: a.regexes,
                rules: a.rules,
            }
        }
    };
    let mut specs = crate::taint::Specs::default();
    for (i, t) in raw_taint.iter().enumerate() {
        specs
            .add(t)
            .map_err(|(field, message)| cx.err(&format!("taint[{i}].{field}"), message))?;
    }
    Ok(SecurityConfig {
        file: Some(cx.file.to_path_buf()),
        rules,
        overrides,
        banned,
        ci,
        allowlist,
        taint: raw_taint,
    })
}

/// `89` or `cwe-89` → `CWE-89`.
fn normalize_cwe(c: String) -> String {
    let t = c.trim();
    if t.chars().all(|ch| ch.is_ascii_digit()) {
        format!("CWE-{t}")
    } else if let Some(rest) = t.strip_prefix("cwe-").or_else(|| t.strip_prefix("Cwe-")) {
        format!("CWE-{rest}")
    } else {
        t.to_string()
    }
}

#[cfg(test)]
mod tests;

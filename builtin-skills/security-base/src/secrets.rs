//! The `secrets` scanner: hard-coded credentials.
//!
//! One Aho-Corasick pass over the file finds every rule keyword (ASCII case
//! insensitive); only the lines holding a keyword of a rule are matched
//! against that rule's regex. Then per-rule checks: documented example keys
//! and placeholders are allowlisted, generic credentials need a Shannon
//! entropy of at least [`GENERIC_MIN_ENTROPY`], private keys need a key body.

use std::collections::HashSet;
use std::sync::{LazyLock, OnceLock};

use agent_skill_sdk::types::{Confidence, Finding};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::Regex;

use crate::finding::{self, Meta, Span};
use crate::text::{self, Lines};

/// Minimum entropy (bits per character) of a generic credential value.
pub const GENERIC_MIN_ENTROPY: f64 = 3.0;

const REMEDIATION: &str = "Remove the credential from the source, revoke and rotate it, and load it at run time from the environment or a secret manager.";
const REFS: &[&str] = &[
    "https://cwe.mitre.org/data/definitions/798.html",
    "https://owasp.org/Top10/A07_2021-Identification_and_Authentication_Failures/",
];

fn meta(rule: &'static SecretRule, confidence: Confidence) -> Meta {
    Meta {
        id: &rule.id,
        title: &rule.title,
        description: "A credential is written in the source. Anyone who can read the repository or its history can use it.",
        severity: rule.severity(),
        category: "secrets-exposure",
        cwe: "CWE-798",
        owasp: "A07:2021",
        remediation: REMEDIATION,
        confidence,
        references: REFS,
    }
}

use crate::secret_rules::{Check, checksum_valid};
pub use crate::secret_rules::{RULES, SecretRule};

/// Documented example values, never reported: AWS's documentation keys
/// (any value containing `EXAMPLE` is treated the same way).
const EXAMPLE_KEYS: &[&str] = &[
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
];

struct Compiled {
    prefilter: AhoCorasick,
    /// Pattern index of the prefilter → the rules with that keyword.
    pattern_rule: Vec<Vec<usize>>,
    /// Rules without keywords: every line of the files they apply to.
    every_line: Vec<usize>,
    /// Each rule's regex, compiled the first time a line needs it (most
    /// rules never meet their keywords in a given project).
    regexes: Vec<OnceLock<Regex>>,
    requires: Vec<OnceLock<Option<Regex>>>,
    pem_body: Regex,
}

impl Compiled {
    fn regex(&self, rule: usize) -> &Regex {
        self.regexes[rule]
            .get_or_init(|| Regex::new(&RULES[rule].pattern).expect("secrets regex compiles"))
    }

    fn requires(&self, rule: usize) -> Option<&Regex> {
        self.requires[rule]
            .get_or_init(|| {
                RULES[rule]
                    .requires
                    .as_deref()
                    .map(|q| Regex::new(q).expect("secrets regex compiles"))
            })
            .as_ref()
    }
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let mut patterns: Vec<String> = Vec::new();
    let mut pattern_rule: Vec<Vec<usize>> = Vec::new();
    let mut every_line = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        if rule.keywords.is_empty() {
            every_line.push(i);
        }
        for kw in &rule.keywords {
            let kw = kw.to_ascii_lowercase();
            match patterns.iter().position(|p| *p == kw) {
                Some(at) => pattern_rule[at].push(i),
                None => {
                    patterns.push(kw);
                    pattern_rule.push(vec![i]);
                }
            }
        }
    }
    // A DFA: with a couple of hundred keywords the default (an NFA) is
    // several times slower inside WebAssembly.
    let prefilter = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .kind(Some(AhoCorasickKind::DFA))
        .match_kind(MatchKind::Standard)
        .build(&patterns)
        .expect("secrets keywords compile");
    let regexes = RULES.iter().map(|_| OnceLock::new()).collect();
    let requires = RULES.iter().map(|_| OnceLock::new()).collect();
    Compiled {
        prefilter,
        pattern_rule,
        every_line,
        regexes,
        requires,
        pem_body: Regex::new(r"^(?:\\n|\\r|\r?\n|\s|[A-Za-z0-9-]+: [^\n]*\n)*[A-Za-z0-9+/=]{40,}")
            .expect("pem body regex compiles"),
    }
});

/// Scans one file for secrets.
pub fn scan(path: &str, content: &str) -> Vec<Finding> {
    let c = &*COMPILED;
    // (rule, line) pairs to check, in file order.
    let mut todo: Vec<(usize, usize)> = Vec::new();
    let mut lines: Option<Lines<'_>> = None;
    let mut seen = HashSet::new();
    // Whether each rule applies to this file, decided once.
    let mut applies: Vec<Option<bool>> = vec![None; RULES.len()];
    for m in c.prefilter.find_overlapping_iter(content) {
        for &rule in &c.pattern_rule[m.pattern().as_usize()] {
            if !*applies[rule].get_or_insert_with(|| RULES[rule].applies_to(path)) {
                continue;
            }
            let lines = lines.get_or_insert_with(|| Lines::new(content));
            let line = lines.index_of(m.start());
            if seen.insert((rule, line)) {
                todo.push((rule, line));
            }
        }
    }
    for &rule in &c.every_line {
        if !RULES[rule].applies_to(path) {
            continue;
        }
        let lines = lines.get_or_insert_with(|| Lines::new(content));
        for line in 0..lines.count() {
            if seen.insert((rule, line)) {
                todo.push((rule, line));
            }
        }
    }
    let Some(lines) = lines else {
        return Vec::new();
    };
    todo.sort_unstable_by_key(|&(rule, line)| (line, rule));

    let mut findings = Vec::new();
    let mut specific_lines = HashSet::new();
    let mut required: Vec<Option<bool>> = vec![None; RULES.len()];
    for (rule_index, line_index) in todo {
        let rule: &'static SecretRule = &RULES[rule_index];
        if rule.yields && specific_lines.contains(&line_index) {
            continue;
        }
        if let Some(req) = c.requires(rule_index)
            && !*required[rule_index].get_or_insert_with(|| req.is_match(content))
        {
            continue;
        }
        let line = lines.line(line_index);
        let line_start = lines.start(line_index);
        for caps in c.regex(rule_index).captures_iter(line) {
            let Some(secret) = caps
                .get(rule.group)
                .or_else(|| (1..caps.len()).rev().find_map(|i| caps.get(i)))
            else {
                continue;
            };
            let value = secret.as_str();
            if EXAMPLE_KEYS.iter().any(|k| value.contains(k)) || value.contains("EXAMPLE") {
                continue;
            }
            // Stand-ins (`xxxx`, `<token>`, `changeme`) are not secrets; a
            // leading `$` is a crypt(3) hash here, not a variable.
            if rule.check != Check::Pem && !value.starts_with('$') && text::is_placeholder(value) {
                continue;
            }
            // `{name}`, `{a:36}`: a template, not a value.
            if rule.check != Check::Pem && value.contains('{') && value.contains('}') {
                continue;
            }
            if rule.entropy.is_some_and(|min| text::entropy(value) < min) {
                continue;
            }
            let lower = value.to_ascii_lowercase();
            if rule.placeholders.iter().any(|p| lower.contains(p.as_str())) {
                continue;
            }
            let mut confidence = rule.confidence();
            let mut metadata = Vec::new();
            match rule.check {
                Check::None => {}
                Check::Crc32Base62 => {
                    let valid = checksum_valid(value);
                    metadata.push((
                        "checksum".to_string(),
                        if valid { "valid" } else { "invalid" }.to_string(),
                    ));
                    if !valid {
                        confidence = Confidence::Medium;
                    }
                }
                Check::Base64UserPassword => {
                    if !base64_user_password(value) {
                        continue;
                    }
                }
                Check::Pem => {
                    let after = line_start + secret.end();
                    let rest = &content[after..content.len().min(after + 400)];
                    if !c.pem_body.is_match(rest) {
                        continue;
                    }
                }
                Check::Password => {
                    if is_placeholder_password(value) {
                        continue;
                    }
                }
                Check::UriPassword => {
                    let whole = caps.get(0).map_or("", |m| m.as_str());
                    if is_placeholder_password(value) || documentation_host(whole) {
                        continue;
                    }
                }
                Check::GenericUnquoted
                    if !is_config_path(path) || value.starts_with(['"', '\'']) =>
                {
                    continue;
                }
                Check::Generic | Check::GenericUnquoted => {
                    if text::is_placeholder(value) || text::entropy(value) < GENERIC_MIN_ENTROPY {
                        continue;
                    }
                    if looks_like_code(value) || value.chars().all(|c| c.is_ascii_alphabetic()) {
                        continue;
                    }
                    if text::entropy(value) < 3.5 {
                        confidence = Confidence::Low;
                    }
                }
            }
            let whole = caps.get(0).map_or(secret, |m| m);
            // The generic rule's match starts with the boundary before the name.
            let first = match rule.check {
                Check::Generic | Check::GenericUnquoted if rule.group > 1 => {
                    caps.get(1).map_or(whole.start(), |m| m.start())
                }
                _ => whole.start(),
            };
            let start = line_start + first;
            let (start_line, start_column) = lines.position(start);
            let span = Span {
                start_line,
                start_column,
                end_line: start_line,
                end_column: start_column + (whole.end() - first) as u32,
            };
            let evidence = if rule.check == Check::Pem {
                text::clip(line.trim())
            } else {
                text::redacted_line(line, value)
            };
            if is_test_path(path) {
                confidence = Confidence::Low;
            }
            let meta = meta(rule, confidence);
            findings.push(finding::make_with(
                &meta, path, span, evidence, confidence, metadata,
            ));
            if !rule.yields {
                specific_lines.insert(line_index);
            }
        }
    }
    finding::dedup(&mut findings);
    findings
}

/// Password values that are stand-ins: placeholders, masks, toy words.
fn is_placeholder_password(value: &str) -> bool {
    let v = value.trim_matches(|c| c == '"' || c == '\'');
    text::is_placeholder(v)
        || v.starts_with('<')
        || v.chars().all(|c| c == '*' || c == 'x' || c == 'X')
        || matches!(
            v.to_ascii_lowercase().as_str(),
            "foo"
                | "bar"
                | "baz"
                | "pass"
                | "pwd"
                | "user"
                | "password"
                | "secret"
                | "null"
                | "none"
        )
}

/// Whether the host of the URI `uri` (after the userinfo) is one that
/// documentation and tests use: `example.com/.org/.net`, `*.example`,
/// `*.test`, `*.invalid`, or a one-label name of at most three letters
/// (`foo`, `d`).
fn documentation_host(uri: &str) -> bool {
    let Some((_, rest)) = uri.rsplit_once('@') else {
        return false;
    };
    let host = rest
        .split(['/', ':', '?', '#'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    ["example.com", "example.org", "example.net"]
        .iter()
        .any(|d| host == *d || host.ends_with(&format!(".{d}")))
        || [".example", ".test", ".invalid"]
            .iter()
            .any(|t| host.ends_with(t))
        || matches!(host, "example" | "foo" | "bar" | "baz")
        || (!host.contains('.') && host.len() <= 3 && host != "db")
}

/// Whether `value` is base64 of `user:password` with a real password.
fn base64_user_password(value: &str) -> bool {
    let Some(bytes) = text::base64_decode(value) else {
        return false;
    };
    let Ok(s) = String::from_utf8(bytes) else {
        return false;
    };
    match s.split_once(':') {
        Some((user, password)) => !user.is_empty() && !is_placeholder_password(password),
        None => false,
    }
}

/// Values that are code or paths, not secrets: dotted identifiers,
/// `module.attr`, URLs without credentials, file paths.
fn looks_like_code(value: &str) -> bool {
    value.contains("://")
        || value.contains("\\x")
        || value.contains("\\u")
        || value.starts_with('/')
        || value.starts_with("./")
        || value.contains('(')
        || value.contains('[')
        || value.contains('{')
        || value.contains('}')
        || value
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '-' || c == '_')
        || (value.contains('.') && value.split('.').all(is_identifier))
        || (value.contains('_')
            && value
                .split('_')
                .all(|p| p.chars().all(|c| c.is_ascii_lowercase())))
        || (value.contains('-')
            && value
                .split('-')
                .all(|p| p.chars().all(|c| c.is_ascii_lowercase())))
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// Paths of tests, fixtures and examples: secrets there are usually fake,
/// so their findings get low confidence (they are still reported).
pub fn is_test_path(path: &str) -> bool {
    path.split('/').any(|seg| {
        let s = seg.to_ascii_lowercase();
        matches!(
            s.as_str(),
            "test"
                | "tests"
                | "testdata"
                | "fixtures"
                | "fixture"
                | "__tests__"
                | "spec"
                | "examples"
        ) || s.contains("_test.")
            || s.contains(".test.")
            || s.starts_with("test_")
    })
}

/// Configuration files, where `name = value` without quotes is data:
/// `.env*`, properties, ini, YAML, TOML, shell-style config.
pub fn is_config_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    name.starts_with(".env")
        || name.ends_with(".env")
        || [
            ".properties",
            ".ini",
            ".cfg",
            ".conf",
            ".yaml",
            ".yml",
            ".toml",
            ".npmrc",
            ".pypirc",
            ".netrc",
        ]
        .iter()
        .any(|ext| name.ends_with(ext))
        || matches!(
            name.as_str(),
            ".npmrc" | ".pypirc" | ".netrc" | "credentials"
        )
}

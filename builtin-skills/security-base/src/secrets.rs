//! The `secrets` scanner: hard-coded credentials.
//!
//! One Aho-Corasick pass over the file finds every rule keyword (ASCII case
//! insensitive); only the lines holding a keyword of a rule are matched
//! against that rule's regex. Then per-rule checks: documented example keys
//! and placeholders are allowlisted, generic credentials need a Shannon
//! entropy of at least [`GENERIC_MIN_ENTROPY`], private keys need a key body.

use std::collections::HashSet;
use std::sync::LazyLock;

use agent_skill_sdk::types::{Confidence, Finding, Severity};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
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

const fn meta(id: &'static str, title: &'static str, severity: Severity) -> Meta {
    Meta {
        id,
        title,
        description: "A credential is written in the source. Anyone who can read the repository or its history can use it.",
        severity,
        category: "secrets-exposure",
        cwe: "CWE-798",
        owasp: "A07:2021",
        remediation: REMEDIATION,
        confidence: Confidence::High,
        references: REFS,
    }
}

/// Extra validation of a match.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Check {
    /// The regex is enough.
    None,
    /// The secret's entropy must reach this value.
    Entropy(f64),
    /// A PEM header must be followed by a key body.
    Pem,
    /// Generic `name = "value"`: placeholder and entropy checks.
    Generic,
    /// Connection string: the password must not be a placeholder.
    Password,
    /// Generic unquoted `NAME=value` / `name: value`, in configuration
    /// files only (in source code an unquoted right-hand side is code).
    GenericUnquoted,
}

/// One secrets rule.
pub struct SecretRule {
    meta: Meta,
    keywords: &'static [&'static str],
    pattern: &'static str,
    /// Capture group holding the secret (redacted in the evidence).
    group: usize,
    check: Check,
    confidence: Confidence,
}

macro_rules! rule {
    ($id:literal, $title:literal, $sev:ident, $conf:ident, [$($kw:literal),*], $re:literal, $group:literal, $check:expr) => {
        SecretRule {
            meta: meta($id, $title, Severity::$sev),
            keywords: &[$($kw),*],
            pattern: $re,
            group: $group,
            check: $check,
            confidence: Confidence::$conf,
        }
    };
}

/// Every secrets rule; the generic rule comes last (it yields to the
/// specific ones on the same line).
pub static RULES: &[SecretRule] = &[
    rule!(
        "SECRET-AWS-ACCESS-KEY",
        "AWS access key id",
        High,
        High,
        ["akia", "asia", "abia", "acca"],
        r"\b((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b",
        1,
        Check::None
    ),
    rule!(
        "SECRET-AWS-SECRET-KEY",
        "AWS secret access key",
        Critical,
        High,
        ["aws"],
        r#"(?i)aws_?(?:secret_?access_?key|secret_?key|secret)["']?\s*(?::=|=>|=|:)\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)"#,
        1,
        Check::Entropy(3.5)
    ),
    rule!(
        "SECRET-GCP-SERVICE-ACCOUNT-KEY",
        "GCP service account private key",
        Critical,
        High,
        ["private_key_id"],
        r#""private_key_id"\s*:\s*"([a-f0-9]{40})""#,
        1,
        Check::None
    ),
    rule!(
        "SECRET-GCP-API-KEY",
        "Google Cloud API key",
        High,
        High,
        ["aiza"],
        r"\b(AIza[0-9A-Za-z_\-]{35})(?:[^0-9A-Za-z_\-]|$)",
        1,
        Check::None
    ),
    rule!(
        "SECRET-AZURE-STORAGE-KEY",
        "Azure storage account key",
        Critical,
        High,
        ["accountkey"],
        r"(?i)AccountKey=([A-Za-z0-9+/]{86}==)",
        1,
        Check::None
    ),
    rule!(
        "SECRET-GITHUB-TOKEN",
        "GitHub token",
        Critical,
        High,
        ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
        r"\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36})\b",
        1,
        Check::None
    ),
    rule!(
        "SECRET-GITHUB-FINE-GRAINED-PAT",
        "GitHub fine-grained personal access token",
        Critical,
        High,
        ["github_pat_"],
        r"\b(github_pat_[A-Za-z0-9_]{82})\b",
        1,
        Check::None
    ),
    rule!(
        "SECRET-GITLAB-TOKEN",
        "GitLab personal access token",
        Critical,
        High,
        ["glpat-"],
        r"\b(glpat-[A-Za-z0-9_\-]{20})(?:[^A-Za-z0-9_\-]|$)",
        1,
        Check::None
    ),
    rule!(
        "SECRET-SLACK-TOKEN",
        "Slack token",
        High,
        High,
        ["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"],
        r"\b(xox[baprs]-[0-9]{6,}-[0-9A-Za-z\-]{8,})",
        1,
        Check::None
    ),
    rule!(
        "SECRET-SLACK-WEBHOOK",
        "Slack incoming webhook URL",
        Medium,
        High,
        ["hooks.slack.com"],
        r"(https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9]{8,}/[A-Za-z0-9]{8,}/[A-Za-z0-9]{16,})",
        1,
        Check::None
    ),
    rule!(
        "SECRET-STRIPE-KEY",
        "Stripe live secret or restricted key",
        Critical,
        High,
        ["sk_live_", "rk_live_"],
        r"\b((?:sk|rk)_live_[0-9A-Za-z]{24,99})\b",
        1,
        Check::None
    ),
    rule!(
        "SECRET-TWILIO-API-KEY",
        "Twilio API key",
        High,
        Medium,
        ["sk"],
        r"\b(SK[0-9a-f]{32})\b",
        1,
        Check::Entropy(3.0)
    ),
    rule!(
        "SECRET-SENDGRID-API-KEY",
        "SendGrid API key",
        High,
        High,
        ["sg."],
        r"\b(SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})(?:[^A-Za-z0-9_\-]|$)",
        1,
        Check::None
    ),
    rule!(
        "SECRET-OPENAI-API-KEY",
        "OpenAI API key",
        High,
        High,
        ["sk-proj-", "sk-svcacct-", "sk-admin-", "t3blbkfj"],
        r"\b(sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20})",
        1,
        Check::None
    ),
    rule!(
        "SECRET-ANTHROPIC-API-KEY",
        "Anthropic API key",
        High,
        High,
        ["sk-ant-"],
        r"\b(sk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_\-]{80,})",
        1,
        Check::None
    ),
    rule!(
        "SECRET-NPM-TOKEN",
        "npm access token",
        High,
        High,
        ["npm_"],
        r"\b(npm_[A-Za-z0-9]{36})\b",
        1,
        Check::None
    ),
    rule!(
        "SECRET-PYPI-TOKEN",
        "PyPI upload token",
        High,
        High,
        ["pypi-ageichlwas5vcmc"],
        r"\b(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,})",
        1,
        Check::None
    ),
    rule!(
        "SECRET-PRIVATE-KEY",
        "Private key",
        Critical,
        High,
        ["private key"],
        r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY(?: BLOCK)?-----",
        0,
        Check::Pem
    ),
    rule!(
        "SECRET-JWT",
        "JSON Web Token",
        Medium,
        Medium,
        ["eyj"],
        r"\b(eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,})",
        1,
        Check::None
    ),
    rule!(
        "SECRET-DB-CONNECTION-STRING",
        "Database connection string with a password",
        High,
        High,
        [
            "postgres",
            "mysql",
            "mariadb",
            "mongodb",
            "redis",
            "amqp",
            "mssql",
            "sqlserver"
        ],
        r#"(?i)\b(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver)://[^\s:/@'"`]+:([^\s@'"`/]+)@[^\s'"`]+"#,
        1,
        Check::Password
    ),
    rule!(
        "SECRET-GENERIC-CREDENTIAL",
        "Hard-coded credential",
        High,
        Medium,
        [
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "credential",
            "auth"
        ],
        r#"(?i)(?:^|[^A-Za-z0-9_:])((?:[A-Za-z0-9_\-]*[_\-.])?(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|auth_?key|client_?secret|private_?key|credentials?)(?:[_\-][A-Za-z0-9_\-]*)?)["']?\s*(?::=|=>|==|=|:)\s*[rbuf]?["']([!#-&(-~]{8,200})["']"#,
        2,
        Check::Generic
    ),
    rule!(
        "SECRET-GENERIC-CREDENTIAL",
        "Hard-coded credential",
        High,
        Medium,
        [
            "pass",
            "pwd",
            "secret",
            "token",
            "key",
            "credential",
            "auth"
        ],
        r#"(?i)^\s*(?:export\s+|-\s+)?((?:[A-Za-z0-9_\-]*[_\-.])?(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|auth_?key|client_?secret|private_?key|credentials?)(?:[_\-][A-Za-z0-9_\-]*)?)\s*(?:=|:)[ \t]*([!#-&(-~]{8,200})[ \t]*(?:[#;].*)?$"#,
        2,
        Check::GenericUnquoted
    ),
];

impl SecretRule {
    /// The rule's id.
    pub fn id(&self) -> &'static str {
        self.meta.id
    }
}

/// Documented example values, never reported.
const EXAMPLE_KEYS: &[&str] = &[
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
];

struct Compiled {
    prefilter: AhoCorasick,
    /// Pattern index of the prefilter → rule index.
    pattern_rule: Vec<usize>,
    regexes: Vec<Regex>,
    pem_body: Regex,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut pattern_rule = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        for kw in rule.keywords {
            patterns.push(*kw);
            pattern_rule.push(i);
        }
    }
    let prefilter = AhoCorasickBuilder::new()
        .ascii_case_insensitive(true)
        .match_kind(MatchKind::Standard)
        .build(&patterns)
        .expect("secrets keywords compile");
    let regexes = RULES
        .iter()
        .map(|r| Regex::new(r.pattern).expect("secrets regex compiles"))
        .collect();
    Compiled {
        prefilter,
        pattern_rule,
        regexes,
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
    for m in c.prefilter.find_overlapping_iter(content) {
        let lines = lines.get_or_insert_with(|| Lines::new(content));
        let rule = c.pattern_rule[m.pattern().as_usize()];
        let line = lines.index_of(m.start());
        if seen.insert((rule, line)) {
            todo.push((rule, line));
        }
    }
    let Some(lines) = lines else {
        return Vec::new();
    };
    todo.sort_unstable_by_key(|&(rule, line)| (line, rule));

    let mut findings = Vec::new();
    let mut specific_lines = HashSet::new();
    for (rule_index, line_index) in todo {
        let rule = &RULES[rule_index];
        let generic = matches!(rule.check, Check::Generic | Check::GenericUnquoted);
        if generic && specific_lines.contains(&line_index) {
            continue;
        }
        let line = lines.line(line_index);
        let line_start = lines.start(line_index);
        for caps in c.regexes[rule_index].captures_iter(line) {
            let Some(secret) = caps.get(rule.group) else {
                continue;
            };
            let value = secret.as_str();
            if EXAMPLE_KEYS.iter().any(|k| value.contains(k)) || value.contains("EXAMPLE") {
                continue;
            }
            let mut confidence = rule.confidence;
            match rule.check {
                Check::None => {}
                Check::Entropy(min) => {
                    if text::entropy(value) < min {
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
                    if text::is_placeholder(value)
                        || value.chars().all(|c| c == '*')
                        || matches!(value, "foo" | "bar" | "baz" | "pass" | "pwd" | "user")
                    {
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
                Check::Generic | Check::GenericUnquoted => {
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
            let mut meta = rule.meta;
            meta.confidence = confidence;
            findings.push(finding::make(&meta, path, span, evidence));
            if !generic {
                specific_lines.insert(line_index);
            }
        }
    }
    finding::dedup(&mut findings);
    findings
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

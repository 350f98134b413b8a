//! The secrets rules as data: `secret_rules.yaml`, embedded in the
//! component (as JSON, converted by build.rs) and parsed once. Each rule names its id, title, severity, the
//! keywords of the prefilter, a regex (the capture group `group` is the
//! secret), an optional check, an entropy floor, the files it applies to,
//! its own placeholders, and examples that must and must not match (checked
//! by a unit test; `{a:36}`-style templates in them are expanded by
//! [`expand_example`] so the file holds nothing that looks like a live key).

use std::sync::LazyLock;

use agent_skill_sdk::types::{Confidence, Severity};
use serde::Deserialize;

/// The rules file, embedded (as JSON: build.rs converts
/// `secret_rules.yaml`, which is what people edit and review).
pub const RULES_JSON: &str = include_str!(concat!(env!("OUT_DIR"), "/secret_rules.json"));

/// Extra validation of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    /// The regex (and the entropy floor, when set) is enough.
    #[default]
    None,
    /// A PEM header must be followed by a key body.
    Pem,
    /// Generic `name = "value"`: placeholder, code and entropy checks.
    Generic,
    /// Generic unquoted `NAME=value`, in configuration files only.
    GenericUnquoted,
    /// A password field: it must not be a placeholder.
    Password,
    /// GitHub / npm token format: the last 6 characters are the base62
    /// CRC32 of the 30 before them; a mismatch lowers the confidence.
    Crc32Base62,
    /// Base64 of `user:password` (Docker `auths`, HTTP basic auth).
    Base64UserPassword,
    /// A URI's userinfo password: [`Check::Password`], and the host is not
    /// a documentation one (`example.com`, `*.test`, `foo`).
    UriPassword,
}

/// An example, with the file path it is scanned as.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Example {
    /// Text scanned as `example.txt` (or the rule's first file name).
    Text(String),
    /// Text scanned at `path`.
    At {
        /// The file path.
        path: String,
        /// The text.
        text: String,
    },
}

/// The examples of a rule.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Examples {
    /// Each must yield a finding of this rule.
    #[serde(rename = "match")]
    pub matches: Vec<Example>,
    /// None may yield a finding of this rule.
    #[serde(default)]
    pub no_match: Vec<Example>,
}

/// One rule as written in the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretRule {
    /// Stable id (`SECRET-...`).
    pub id: String,
    /// One-line title.
    pub title: String,
    /// `critical`, `high`, `medium` or `low`.
    severity: String,
    /// `high` (default), `medium` or `low`.
    #[serde(default)]
    confidence: Option<String>,
    /// Prefilter keywords (ASCII case-insensitive); empty: every line of
    /// the files the rule applies to.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// The regex.
    pub pattern: String,
    /// The capture group holding the secret (redacted in the evidence);
    /// when it did not take part (another alternative matched), the last
    /// group that did.
    #[serde(default = "one")]
    pub group: usize,
    /// Extra validation.
    #[serde(default)]
    pub check: Check,
    /// Minimum Shannon entropy (bits per character) of the secret.
    #[serde(default)]
    pub entropy: Option<f64>,
    /// File names (`.netrc`, `*.ppk`, `kubeconfig*`) or path suffixes
    /// (`.kube/config`) the rule applies to; empty: every file.
    #[serde(default)]
    pub files: Vec<String>,
    /// A regex the whole file must match too (PuTTY's `Private-Lines:`).
    #[serde(default)]
    pub requires: Option<String>,
    /// Values of this rule that are stand-ins, not secrets (lowercase
    /// substrings), besides the common placeholders.
    #[serde(default)]
    pub placeholders: Vec<String>,
    /// The rule yields to any other rule that fired on the same line.
    #[serde(default)]
    pub yields: bool,
    /// Examples that must and must not match.
    pub examples: Examples,
}

fn one() -> usize {
    1
}

impl SecretRule {
    /// The path an example is scanned at: its own, else the rule's first
    /// plain file name, else `example.txt`.
    pub fn example_path<'a>(&'a self, example: &'a Example) -> &'a str {
        match example {
            Example::At { path, .. } => path,
            Example::Text(_) => self
                .files
                .iter()
                .find(|f| !f.contains('*'))
                .map_or("example.txt", String::as_str),
        }
    }

    /// The rule's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its severity.
    pub fn severity(&self) -> Severity {
        match self.severity.as_str() {
            "critical" => Severity::Critical,
            "high" => Severity::High,
            "medium" => Severity::Medium,
            "low" => Severity::Low,
            _ => Severity::Info,
        }
    }

    /// Its confidence.
    pub fn confidence(&self) -> Confidence {
        match self.confidence.as_deref() {
            Some("medium") => Confidence::Medium,
            Some("low") => Confidence::Low,
            _ => Confidence::High,
        }
    }

    /// Whether the rule applies to `path`.
    pub fn applies_to(&self, path: &str) -> bool {
        if self.files.is_empty() {
            return true;
        }
        let path = path.to_ascii_lowercase();
        let name = path.rsplit('/').next().unwrap_or(&path);
        self.files.iter().any(|f| {
            let f = f.to_ascii_lowercase();
            if f.contains('/') {
                path == f || path.ends_with(&format!("/{f}"))
            } else if let Some(ext) = f.strip_prefix('*') {
                name.ends_with(ext)
            } else if let Some(prefix) = f.strip_suffix('*') {
                name.starts_with(prefix)
            } else {
                name == f
            }
        })
    }
}

/// Parses and checks the rules file: every field known, severities and
/// confidences valid, regexes compile, the group exists, a rule without
/// keywords names its files, every rule has an example that must match.
///
/// # Errors
/// The rule id (or index) and what is wrong.
pub fn parse(json: &str) -> Result<Vec<SecretRule>, String> {
    let file: RulesFile =
        serde_json::from_str(json).map_err(|e| format!("secret_rules.yaml: {e}"))?;
    check(file.rules)
}

/// The rules file's shape.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesFile {
    /// Every rule.
    pub rules: Vec<SecretRule>,
}

/// [`parse`]'s checks on rules already read.
///
/// # Errors
/// The rule id (or index) and what is wrong.
pub fn check(rules: Vec<SecretRule>) -> Result<Vec<SecretRule>, String> {
    for (i, r) in rules.iter().enumerate() {
        let at = |m: String| format!("secret_rules.yaml: rule {} ({}): {m}", i + 1, r.id);
        if !matches!(r.severity.as_str(), "critical" | "high" | "medium" | "low") {
            return Err(at(format!("severity `{}`", r.severity)));
        }
        if let Some(c) = &r.confidence
            && !matches!(c.as_str(), "high" | "medium" | "low")
        {
            return Err(at(format!("confidence `{c}`")));
        }
        let re = regex::Regex::new(&r.pattern).map_err(|e| at(format!("pattern: {e}")))?;
        if r.group >= re.captures_len() {
            return Err(at(format!("group {} is not in the pattern", r.group)));
        }
        if let Some(req) = &r.requires {
            regex::Regex::new(req).map_err(|e| at(format!("requires: {e}")))?;
        }
        if r.keywords.is_empty() && r.files.is_empty() {
            return Err(at(
                "no keywords and no files: it would run on every line".into()
            ));
        }
        if r.examples.matches.is_empty() {
            return Err(at("no example that must match".into()));
        }
    }
    Ok(rules)
}

/// Every secrets rule, in file order (rules that yield come last).
pub static RULES: LazyLock<Vec<SecretRule>> =
    LazyLock::new(|| parse(RULES_JSON).unwrap_or_else(|e| panic!("{e}")));

/// The base62 alphabet of GitHub's token checksums.
const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// CRC-32 (IEEE) of `bytes`.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// The 6-character base62 checksum GitHub and npm append to a token's 30
/// random characters.
pub fn base62_crc32(random: &str) -> String {
    let mut n = crc32(random.as_bytes());
    let mut out = Vec::new();
    while n > 0 {
        out.push(BASE62[(n % 62) as usize]);
        n /= 62;
    }
    while out.len() < 6 {
        out.push(b'0');
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// Whether `token` (`ghp_` + 30 + 6, `npm_` + 30 + 6) carries a valid
/// checksum.
pub fn checksum_valid(token: &str) -> bool {
    let Some((_, body)) = token.rsplit_once('_') else {
        return false;
    };
    if body.len() != 36 || !body.is_ascii() {
        return false;
    }
    let (random, sum) = body.split_at(30);
    base62_crc32(random) == sum
}

/// Expands an example's templates: `{a:N}` N letters and digits, `{A:N}`
/// upper case and digits, `{l:N}` lower case and digits, `{h:N}` lower hex,
/// `{H:N}` upper hex, `{d:N}` digits, `{b:N}` base64 characters, `{u:N}`
/// URL-safe base64 characters, `{L:N}` letters, `{Q:N}` upper-case bech32, `{crc}` the base62 CRC32 of the text the
/// previous template produced. The characters are pseudo-random from
/// `seed` (deterministic, high entropy).
pub fn expand_example(template: &str, seed: u64) -> String {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut out = String::new();
    let mut last = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let tail = &rest[open..];
        let Some(close) = tail.find('}') else {
            out.push_str(tail);
            return out;
        };
        let inner = &tail[1..close];
        let alphabet: Option<&str> = match inner.split_once(':').map(|(k, _)| k) {
            Some("a") => Some("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"),
            Some("A") => Some("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
            Some("l") => Some("abcdefghijklmnopqrstuvwxyz0123456789"),
            Some("h") => Some("0123456789abcdef"),
            Some("H") => Some("0123456789ABCDEF"),
            Some("d") => Some("0123456789"),
            Some("b") => Some("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"),
            Some("u") => Some("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"),
            Some("L") => Some("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
            Some("Q") => Some("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
            _ => None,
        };
        let count = inner
            .split_once(':')
            .and_then(|(_, n)| n.parse::<usize>().ok());
        match (alphabet, count, inner) {
            (Some(a), Some(n), _) => {
                let chars: Vec<char> = a.chars().collect();
                last = (0..n)
                    .map(|_| chars[(next() % chars.len() as u64) as usize])
                    .collect();
                out.push_str(&last);
            }
            (_, _, "crc") => out.push_str(&base62_crc32(&last)),
            _ => {
                // Not a template (JSON braces): keep the brace, go on after it.
                out.push('{');
                rest = &tail[1..];
                continue;
            }
        }
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    out
}

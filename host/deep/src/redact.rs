//! Secrets kept from the model: every text sent to it — the system prompt,
//! the file contents in the prompts, the read tools' results, the tool
//! inputs echoed back — goes through one [`Redactor`], which replaces each
//! secret with `[REDACTED:<rule>]`.
//!
//! The secrets are those the static pass found (the secrets scanner's
//! findings: the value on the finding's line and columns) and those the
//! patterns below recognise anywhere (cloud keys, tokens, private keys,
//! credentials assigned in code), so a read tool that returns a file the
//! static pass skipped is covered too. [`RedactingProvider`] wraps the
//! model provider: nothing reaches the provider without passing through it.

use std::sync::{Arc, LazyLock};

use agent_providers::{
    BoxFuture, CancellationToken, Completion, ContentBlock, EventSink, Message, Provider,
    ProviderError, Request,
};
use agent_security::Finding;
use regex::Regex;
use serde_json::Value;

/// (rule, pattern, capture group holding the secret).
const PATTERNS: &[(&str, &str, usize)] = &[
    (
        "aws-access-key-id",
        r"\b((?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16})\b",
        1,
    ),
    (
        "aws-secret-access-key",
        r#"(?i)aws.{0,20}?(?:secret|key).{0,20}?['"]([0-9A-Za-z/+]{40})['"]"#,
        1,
    ),
    (
        "github-token",
        r"\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255})\b",
        1,
    ),
    ("github-token", r"\b(github_pat_[A-Za-z0-9_]{22,255})\b", 1),
    ("slack-token", r"\b(xox[baprs]-[A-Za-z0-9-]{10,})\b", 1),
    ("stripe-key", r"\b((?:sk|rk)_live_[A-Za-z0-9]{16,})\b", 1),
    ("google-api-key", r"\b(AIza[0-9A-Za-z_-]{35})\b", 1),
    (
        "private-key",
        r"(-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----)",
        1,
    ),
    (
        "credential",
        r#"(?i)\b(?:password|passwd|pwd|secret|api_?key|access_?token|auth_?token|client_?secret|private_?key)\w*\s*[:=]\s*['"]([^'"\s]{8,})['"]"#,
        1,
    ),
    (
        "connection-string-password",
        r"(?i)\b[a-z][a-z0-9+]*://[^:/\s@]+:([^@\s/]{4,})@",
        1,
    ),
];

static COMPILED: LazyLock<Vec<(&'static str, Regex, usize)>> = LazyLock::new(|| {
    PATTERNS
        .iter()
        .map(|(rule, p, g)| {
            let re = Regex::new(p).unwrap_or_else(|e| panic!("redaction pattern {rule}: {e}"));
            (*rule, re, *g)
        })
        .collect()
});

/// Replaces secrets in text.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Known secret values and their rule, longest first.
    literals: Vec<(String, String)>,
}

/// The secret in a secrets finding's matched text: its quoted value of 8
/// characters or more, else what follows the last `=` or `:`, else all of it.
fn secret_in(matched: &str) -> &str {
    let quoted = matched
        .split(['"', '\''])
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s)
        .filter(|s| s.len() >= 8)
        .max_by_key(|s| s.len());
    if let Some(q) = quoted {
        return q;
    }
    let after = matched
        .rsplit(['=', ':'])
        .next()
        .map(|s| s.trim().trim_matches(['"', '\'', ';', ',']))
        .unwrap_or("");
    if after.len() >= 8 {
        after
    } else {
        matched.trim()
    }
}

impl Redactor {
    /// A redactor with the patterns only.
    pub fn new() -> Redactor {
        Redactor::default()
    }

    /// Adds a secret value to replace wherever it appears.
    pub fn add(&mut self, value: &str, rule: &str) {
        let value = value.trim();
        if value.len() < 4 || self.literals.iter().any(|(v, _)| v == value) {
            return;
        }
        self.literals.push((value.to_string(), rule.to_string()));
        self.literals.sort_by_key(|b| std::cmp::Reverse(b.0.len()));
    }

    /// Adds the secrets of the static findings (category
    /// `secrets-exposure`): the value on each finding's line and columns,
    /// read with `text`.
    pub fn add_findings(&mut self, findings: &[Finding], text: &dyn Fn(&str) -> Option<String>) {
        for f in findings.iter().filter(|f| f.category == "secrets-exposure") {
            let Some(t) = text(&f.location.file) else {
                continue;
            };
            let Some(line) = t
                .lines()
                .nth(f.location.start_line.saturating_sub(1) as usize)
            else {
                continue;
            };
            let (s, e) = (f.location.start_column, f.location.end_column);
            let matched = if s >= 1 && e > s && f.location.end_line <= f.location.start_line {
                line.get((s - 1) as usize..((e - 1) as usize).min(line.len()))
                    .unwrap_or(line)
            } else {
                line
            };
            self.add(secret_in(matched), &f.rule_id);
        }
    }

    /// How many known values it holds.
    pub fn known(&self) -> usize {
        self.literals.len()
    }

    /// `text` with every secret replaced by `[REDACTED:<rule>]`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (value, rule) in &self.literals {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), &format!("[REDACTED:{rule}]"));
            }
        }
        for (rule, re, group) in COMPILED.iter() {
            if !re.is_match(&out) {
                continue;
            }
            let mut spans: Vec<(usize, usize)> = re
                .captures_iter(&out)
                .filter_map(|c| c.get(*group))
                .filter(|m| !m.as_str().starts_with("[REDACTED:"))
                .map(|m| (m.start(), m.end()))
                .collect();
            spans.reverse();
            for (s, e) in spans {
                out.replace_range(s..e, &format!("[REDACTED:{rule}]"));
            }
        }
        out
    }

    fn value(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => Value::String(self.redact(s)),
            Value::Array(a) => Value::Array(a.iter().map(|x| self.value(x)).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, x)| (k.clone(), self.value(x))).collect())
            }
            other => other.clone(),
        }
    }

    /// The request with every text in it redacted.
    pub fn request(&self, req: &Request) -> Request {
        let mut r = req.clone();
        r.system = r.system.as_deref().map(|s| self.redact(s));
        r.messages = req
            .messages
            .iter()
            .map(|m| Message {
                role: m.role,
                content: m
                    .content
                    .iter()
                    .map(|b| match b {
                        ContentBlock::Text(t) => ContentBlock::Text(self.redact(t)),
                        ContentBlock::ToolUse { id, name, input } => ContentBlock::ToolUse {
                            id: id.clone(),
                            name: name.clone(),
                            input: self.value(input),
                        },
                        ContentBlock::ToolResult {
                            tool_use_id,
                            content,
                            is_error,
                        } => ContentBlock::ToolResult {
                            tool_use_id: tool_use_id.clone(),
                            content: self.redact(content),
                            is_error: *is_error,
                        },
                    })
                    .collect(),
            })
            .collect();
        r
    }
}

/// A provider whose every request is redacted before it is sent.
pub struct RedactingProvider {
    inner: Arc<dyn Provider>,
    redactor: Arc<Redactor>,
}

impl RedactingProvider {
    /// Wraps `inner`.
    pub fn new(inner: Arc<dyn Provider>, redactor: Arc<Redactor>) -> RedactingProvider {
        RedactingProvider { inner, redactor }
    }
}

impl Provider for RedactingProvider {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn stream<'a>(
        &'a self,
        req: &'a Request,
        cancel: &'a CancellationToken,
        on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(async move {
            let redacted = self.redactor.request(req);
            let mut sink = |e| on_event(e);
            self.inner.stream(&redacted, cancel, &mut sink).await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Built at run time so that no scanner flags this file.
    fn aws() -> String {
        format!("AKIA{}", "Z7Q3VXKJ4PLM2HRT")
    }

    #[test]
    fn patterns_and_known_values_are_replaced() {
        let mut r = Redactor::new();
        r.add("hunter2-very-secret", "PY-SECRET-001");
        let text = format!(
            "key = \"{}\"\npw = 'hunter2-very-secret'\nurl = postgres://app:s3cr3tpw@db/x\n",
            aws()
        );
        let out = r.redact(&text);
        assert!(!out.contains(&aws()), "{out}");
        assert!(out.contains("[REDACTED:aws-access-key-id]"), "{out}");
        assert!(out.contains("'[REDACTED:PY-SECRET-001]'"), "{out}");
        assert!(
            out.contains("postgres://app:[REDACTED:connection-string-password]@db"),
            "{out}"
        );
        assert_eq!(r.redact("nothing here\n"), "nothing here\n");
    }

    #[test]
    fn the_secret_of_a_finding_is_its_quoted_value() {
        assert_eq!(secret_in("api_key = \"abcd1234efgh\""), "abcd1234efgh");
        assert_eq!(secret_in("TOKEN=abcdefgh12345"), "abcdefgh12345");
        assert_eq!(secret_in("x=1"), "x=1");
    }

    #[test]
    fn a_request_is_redacted_everywhere() {
        let r = Redactor::new();
        let req = Request {
            model: "m".into(),
            system: Some(format!("s {}", aws())),
            messages: vec![
                Message::user(format!("file: {}", aws())),
                Message {
                    role: agent_providers::Role::User,
                    content: vec![ContentBlock::ToolResult {
                        tool_use_id: "1".into(),
                        content: aws(),
                        is_error: false,
                    }],
                },
            ],
            tools: Vec::new(),
            max_tokens: 10,
            temperature: None,
        };
        let text = format!("{:?}", r.request(&req));
        assert!(!text.contains(&aws()), "{text}");
    }
}

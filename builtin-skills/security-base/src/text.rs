//! Text helpers shared by the scanners: line index, redaction, entropy,
//! literal and placeholder checks, inline ignore comments.

use agent_skill_sdk::types::Finding;

/// Byte offsets of line starts, for 1-based line and column numbers.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str) -> Self {
        let mut starts = Vec::with_capacity(text.len() / 32 + 1);
        starts.push(0);
        for i in memchr::memchr_iter(b'\n', text.as_bytes()) {
            starts.push(i + 1);
        }
        Lines { text, starts }
    }

    /// Number of lines (a trailing newline does not start a new line).
    pub fn count(&self) -> usize {
        if self.text.ends_with('\n') {
            self.starts.len() - 1
        } else {
            self.starts.len()
        }
    }

    /// 0-based line index of byte `offset`.
    pub fn index_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// 1-based (line, column) of byte `offset`; columns count bytes.
    pub fn position(&self, offset: usize) -> (u32, u32) {
        let i = self.index_of(offset);
        ((i + 1) as u32, (offset - self.starts[i] + 1) as u32)
    }

    /// Byte offset where 0-based line `i` starts.
    pub fn start(&self, i: usize) -> usize {
        self.starts[i]
    }

    /// 0-based line `i` without its line ending.
    pub fn line(&self, i: usize) -> &'a str {
        let start = self.starts[i];
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.text.len(), |next| next - 1);
        let line = &self.text[start..end.max(start)];
        line.strip_suffix('\r').unwrap_or(line)
    }
}

/// Keeps the first four characters of a secret: `ghp_…`.
pub fn redact(secret: &str) -> String {
    let head: String = secret.chars().take(4).collect();
    format!("{head}…")
}

/// `line` (trimmed, at most 200 characters) with `secret` redacted.
pub fn redacted_line(line: &str, secret: &str) -> String {
    let replaced = if secret.is_empty() {
        line.to_string()
    } else {
        line.replace(secret, &redact(secret))
    };
    clip(replaced.trim())
}

/// At most 200 characters of `s`.
pub fn clip(s: &str) -> String {
    if s.chars().count() <= 200 {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(200).collect();
        out.push('…');
        out
    }
}

/// Shannon entropy of `s` in bits per character.
pub fn entropy(s: &str) -> f64 {
    if s.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f64;
    counts
        .iter()
        .filter(|c| **c > 0)
        .map(|c| {
            let p = f64::from(*c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Whether an argument's text is one plain string literal (no interpolation,
/// no concatenation): `"ls -l"`, `'x'`, `r"..."`, a backtick string without
/// `${`.
pub fn is_pure_literal(arg: &str) -> bool {
    let a = arg.trim();
    let a = a
        .strip_prefix(|c: char| matches!(c, 'r' | 'b' | 'u' | 'R' | 'B' | 'U'))
        .filter(|rest| rest.starts_with(['"', '\'']))
        .unwrap_or(a);
    let Some(quote) = a.chars().next() else {
        return false;
    };
    if !matches!(quote, '"' | '\'' | '`') || a.len() < 2 || !a.ends_with(quote) {
        return false;
    }
    let inner = &a[1..a.len() - 1];
    let mut escaped = false;
    for c in inner.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        if c == '\\' {
            escaped = true;
        } else if c == quote {
            return false; // "a" + "b" or two literals
        }
    }
    if quote == '`' && inner.contains("${") {
        return false;
    }
    // Ruby / Swift interpolation inside double quotes.
    !(quote == '"' && (inner.contains("#{") || inner.contains("\\(")))
}

/// Whether a credential value is a placeholder, a reference or a test value.
pub fn is_placeholder(value: &str) -> bool {
    let v = value.trim();
    if v.is_empty() {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if v.starts_with('$')
        || v.starts_with('%')
        || v.contains("${")
        || v.contains("{{")
        || v.contains("#{")
        || (v.starts_with('<') && v.ends_with('>'))
        || (v.starts_with('{') && v.ends_with('}'))
        || (v.starts_with('[') && v.ends_with(']'))
        || lower.starts_with("env:")
        || lower.starts_with("vault:")
        || lower.contains("process.env")
        || lower.contains("os.environ")
        || lower.contains("getenv")
    {
        return true;
    }
    // Words that mark a value as a stand-in wherever they appear.
    const MARKERS: &[&str] = &[
        "changeme",
        "change_me",
        "change-me",
        "example",
        "xxx",
        "***",
        "...",
        "placeholder",
        "dummy",
        "fake",
        "sample",
        "redacted",
        "your_",
        "your-",
        "yourpassword",
        "notasecret",
        "todo",
        "fixme",
        "insert",
        "replace",
    ];
    if MARKERS.iter().any(|w| lower.contains(w)) {
        return true;
    }
    // Words that are a stand-in only when they are the whole value (a real
    // password may well contain "password" or "test").
    const WHOLE: &[&str] = &[
        "password",
        "passwd",
        "secret",
        "token",
        "test",
        "testing",
        "none",
        "null",
        "nil",
        "undefined",
        "empty",
        "default",
        "admin",
    ];
    let bare: String = lower
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    if WHOLE.iter().any(|w| bare == *w) {
        return true;
    }
    // One repeated character (`aaaaaaaa`, `00000000`).
    let first = v.as_bytes()[0];
    v.bytes().all(|b| b == first)
}

/// Whether a trimmed line is a comment in the common languages.
pub fn is_comment(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("//")
        || t.starts_with('#') && !t.starts_with("#{") && !t.starts_with("#[")
        || t.starts_with("/*")
        || t.starts_with("* ")
        || t == "*"
        || t.starts_with("--")
        || t.starts_with("<!--")
}

/// Rule ids an ignore comment on `line` suppresses: `Some(vec![])` for all.
fn ignored_rules(line: &str) -> Option<Vec<&str>> {
    if let Some(pos) = line.find("agent-security:ignore") {
        let rest = &line[pos + "agent-security:ignore".len()..];
        if let Some(list) = rest.strip_prefix('=') {
            let end = list
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == ','))
                .unwrap_or(list.len());
            let ids: Vec<&str> = list[..end].split(',').filter(|s| !s.is_empty()).collect();
            return Some(ids);
        }
        return Some(Vec::new());
    }
    if line.contains("agent:ignore") {
        return Some(Vec::new());
    }
    None
}

/// Drops findings whose line or the line above carries an ignore comment.
pub fn apply_ignores(content: &str, findings: Vec<Finding>) -> Vec<Finding> {
    if findings.is_empty() || !content.contains(":ignore") {
        return findings;
    }
    let lines = Lines::new(content);
    let n = lines.count();
    findings
        .into_iter()
        .filter(|f| {
            let line = f.location.start_line as usize;
            let candidates = [line, line.saturating_sub(1)];
            !candidates.iter().any(|&l| {
                if l == 0 || l > n {
                    return false;
                }
                match ignored_rules(lines.line(l - 1)) {
                    Some(ids) => ids.is_empty() || ids.contains(&f.rule_id.as_str()),
                    None => false,
                }
            })
        })
        .collect()
}

/// Decodes standard base64 (padding optional); `None` when `s` is not
/// base64.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod placeholder_tests {
    use super::is_placeholder;

    #[test]
    fn stand_ins_are_placeholders_but_real_values_with_common_words_are_not() {
        for v in [
            "changeme",
            "${DB_PASSWORD}",
            "<token>",
            "your_password_here",
            "password",
            "Test",
            "xxxxxxxx",
            "EXAMPLEKEY123",
        ] {
            assert!(is_placeholder(v), "{v} should be a placeholder");
        }
        for v in [
            "hunter2-prod-password",
            "Latest2024!",
            "s3cr3t-token-9f2k",
            "testudo-88-Q",
        ] {
            assert!(!is_placeholder(v), "{v} is a real-looking value");
        }
    }
}

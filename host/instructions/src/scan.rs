//! The content scan of a skill's files, before it is loaded and before it is installed:
//! prompt-injection phrasing, hidden Unicode, `curl … | sh`, encoded blobs, instructions to
//! exfiltrate secrets or to disable safety. Each finding names file and line.

use std::fmt;
use std::path::Path;

use regex::Regex;

/// Most files scanned in one skill directory.
pub const MAX_FILES: usize = 500;
/// Largest file scanned; a larger one is itself a finding.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// How bad a finding is. `High` blocks install (unless `--force`) and loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth a look.
    Medium,
    /// Blocks install and loading.
    High,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Medium => "medium",
            Severity::High => "high",
        })
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The file, relative to the skill's directory.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The rule (`prompt-injection`, `hidden-unicode`, `pipe-to-shell`, `encoded-blob`,
    /// `exfiltration`, `disable-safety`, `unreadable`).
    pub rule: &'static str,
    /// How bad.
    pub severity: Severity,
    /// What was seen.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} [{}] {}",
            self.file, self.line, self.severity, self.rule, self.message
        )
    }
}

struct Rule {
    id: &'static str,
    severity: Severity,
    re: Regex,
    /// A negation before the match ("never", "do not") makes it advice, not an instruction.
    negatable: bool,
    message: &'static str,
}

fn rules() -> &'static [Rule] {
    static RULES: std::sync::OnceLock<Vec<Rule>> = std::sync::OnceLock::new();
    RULES.get_or_init(|| {
        let r = |id, severity, pattern: &str, negatable, message| Rule {
            id,
            severity,
            re: Regex::new(&format!("(?i){pattern}")).expect("valid scan rule"),
            negatable,
            message,
        };
        vec![
            r(
                "prompt-injection",
                Severity::High,
                r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+|the\s+|your\s+)*(previous|prior|earlier|above|preceding|system|original)\s+(instructions|prompts?|rules|context|directions|guidelines)",
                true,
                "asks the model to drop its previous instructions",
            ),
            r(
                "prompt-injection",
                Severity::High,
                r"\b(you\s+are\s+now\s+(in\s+)?(developer|jailbreak|dan|god|unrestricted)\s*(mode)?|new\s+system\s+prompt\s*:|<\s*/?\s*system\s*>|\[\s*system\s*\]\s*:)",
                false,
                "tries to replace the system prompt or role",
            ),
            r(
                "pipe-to-shell",
                Severity::High,
                r"\b(curl|wget|fetch)\b[^|\n]*\|\s*(sudo\s+)?(ba|z|da|k|fi)?sh\b",
                false,
                "downloads a script and pipes it into a shell",
            ),
            r(
                "pipe-to-shell",
                Severity::High,
                r"\b(bash|sh|zsh)\s+(-c\s+)?[<(]+\s*\(?\s*(curl|wget)\b",
                false,
                "runs a downloaded script in a shell",
            ),
            r(
                "exfiltration",
                Severity::High,
                r"\b(send|post|upload|transmit|exfiltrate|forward|leak|email|paste)\b[^\n]{0,80}\b(secrets?|credentials?|api[\s_-]?keys?|tokens?|passwords?|private\s+keys?|\.ssh|id_rsa|\.aws|\.env\b|ssh\s+keys?)\b[^\n]{0,80}\b(to|into)\b[^\n]{0,40}(https?://|webhook|server|endpoint|email|address|pastebin|gist|@)",
                true,
                "instructs sending secrets somewhere",
            ),
            r(
                "exfiltration",
                Severity::High,
                r"\b(curl|wget)\b[^\n]*(-d|--data[a-z-]*|-F|--form|-T|--upload-file)\s*['\x22]?@?[^\s]*(\.ssh|id_rsa|\.aws/credentials|\.env\b|\.netrc|\.npmrc|\.pgpass)",
                false,
                "uploads a credentials file",
            ),
            r(
                "disable-safety",
                Severity::High,
                r"\b(disable|turn\s+off|bypass|skip|circumvent|deactivate)\s+(all\s+|the\s+|any\s+|your\s+)*(safety|security|sandbox(ing)?|guardrails?|approvals?|permission\s+(checks?|prompts?)|content\s+(filters?|scan(ning)?)|confirmation\s+prompts?)\b",
                true,
                "instructs disabling safety checks",
            ),
            r(
                "disable-safety",
                Severity::High,
                r"--dangerously-skip-permissions|--no-sandbox\b|without\s+asking\s+(the\s+user|for\s+(approval|permission|confirmation))",
                true,
                "instructs acting without the user's approval",
            ),
        ]
    })
}

fn negated(line: &str, start: usize) -> bool {
    static NEG: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = NEG.get_or_init(|| {
        Regex::new(r"(?i)\b(never|not|don't|dont|do\s+not|must\s+not|mustn't|should\s+not|shouldn't|cannot|can't|refuse\s+to|no\s+need\s+to)\b")
            .expect("valid regex")
    });
    // Only within the same sentence.
    let before = &line[..start];
    let sentence = before
        .rfind(['.', '!', '?', ';'])
        .map_or(before, |i| &before[i + 1..]);
    re.is_match(sentence)
}

fn blob_re() -> &'static (Regex, Regex) {
    static RE: std::sync::OnceLock<(Regex, Regex)> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        (
            Regex::new(r"[A-Za-z0-9+/]{120,}={0,2}").expect("valid regex"),
            Regex::new(r"(?i)\b(?:[0-9a-f]{2}){64,}\b|(?:\\x[0-9a-f]{2}){16,}")
                .expect("valid regex"),
        )
    })
}

/// Hidden characters: bidi controls, tag characters, zero-width ones.
fn hidden(c: char) -> Option<&'static str> {
    match c {
        '\u{202A}'..='\u{202E}'
        | '\u{2066}'..='\u{2069}'
        | '\u{200E}'
        | '\u{200F}'
        | '\u{061C}' => Some("a bidirectional control character"),
        '\u{E0000}'..='\u{E007F}' => Some("a Unicode tag character (invisible text)"),
        '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{180E}' => {
            Some("a zero-width character")
        }
        _ => None,
    }
}

/// Scans one file's text; `file` names it in the findings.
pub fn scan_text(file: &str, text: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut push = |line, rule, severity, message: String| {
        out.push(Finding {
            file: file.to_string(),
            line,
            rule,
            severity,
            message,
        });
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        // A byte-order mark at the very start is an encoding mark, not hidden text.
        let checked = if n == 1 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        if let Some((col, c, what)) = checked
            .chars()
            .enumerate()
            .find_map(|(col, c)| hidden(c).map(|w| (col, c, w)))
        {
            push(
                n,
                "hidden-unicode",
                Severity::High,
                format!("{what} (U+{:04X}) at column {}", c as u32, col + 1),
            );
        }
        for rule in rules() {
            if let Some(m) = rule.re.find(line)
                && !(rule.negatable && negated(line, m.start()))
            {
                push(
                    n,
                    rule.id,
                    rule.severity,
                    format!("{}: `{}`", rule.message, excerpt(m.as_str())),
                );
            }
        }
        let (b64, hex) = blob_re();
        if let Some(m) = b64.find(line).filter(|m| looks_encoded(m.as_str())) {
            push(
                n,
                "encoded-blob",
                Severity::Medium,
                format!("a base64 blob of {} characters", m.as_str().len()),
            );
        } else if let Some(m) = hex.find(line) {
            push(
                n,
                "encoded-blob",
                Severity::Medium,
                format!("a hex blob of {} characters", m.as_str().len()),
            );
        }
    }
    out
}

/// Base64 mixes cases and digits; a long word of letters only (or a path) is not a blob.
fn looks_encoded(s: &str) -> bool {
    let upper = s.bytes().any(|b| b.is_ascii_uppercase());
    let lower = s.bytes().any(|b| b.is_ascii_lowercase());
    let digit = s.bytes().any(|b| b.is_ascii_digit());
    upper && lower && digit && s.matches('/').count() < s.len() / 16
}

fn excerpt(s: &str) -> String {
    let s: String = s.chars().take(80).collect();
    s.replace('\n', " ")
}

/// Scans every text file under `dir` (hidden directories skipped, at most [`MAX_FILES`]
/// files of at most [`MAX_FILE_BYTES`]); findings sorted by file and line.
pub fn scan_dir(dir: &Path) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut files = Vec::new();
    collect(dir, dir, &mut files, &mut out);
    for (rel, path) in files {
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(_) => continue,
        };
        if meta.len() > MAX_FILE_BYTES {
            out.push(Finding {
                file: rel,
                line: 1,
                rule: "unreadable",
                severity: Severity::Medium,
                message: format!("larger than {MAX_FILE_BYTES} bytes: not scanned"),
            });
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        // Binary files (a NUL in the first 8 KiB) are not text to scan.
        if bytes[..bytes.len().min(8192)].contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        out.extend(scan_text(&rel, &text));
    }
    out.sort_by(|a, b| (a.file.as_str(), a.line).cmp(&(b.file.as_str(), b.line)));
    out
}

fn collect(
    root: &Path,
    dir: &Path,
    files: &mut Vec<(String, std::path::PathBuf)>,
    out: &mut Vec<Finding>,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if !name.starts_with('.') && name != "node_modules" {
                collect(root, &path, files, out);
            }
        } else if ft.is_file() {
            if files.len() >= MAX_FILES {
                if !out.iter().any(|f| f.file == "." && f.rule == "unreadable") {
                    out.push(Finding {
                        file: ".".into(),
                        line: 1,
                        rule: "unreadable",
                        severity: Severity::Medium,
                        message: format!("more than {MAX_FILES} files: the rest were not scanned"),
                    });
                }
                return;
            }
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            files.push((rel, path));
        }
    }
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;

//! {{name}}: a security-rule skill. The `hardcoded-password` scanner reports
//! every line that assigns a quoted value to something named `password`.

use agent_skill_sdk::ToolError;
use agent_skill_sdk::types::{Confidence, Finding, Location, Severity, SkillError};
use agent_skill_sdk::wit::scanner_skill::exports::agent::skill::scanner::{
    Guest, ScanTarget, ScannerSpec,
};

const SCANNER: &str = "hardcoded-password";

/// Where `password` starts in `line` (a byte offset) and where its quoted
/// value starts, when it is followed by optional spaces, `=` or `:`,
/// optional spaces and a quote.
fn password_assignment(line: &str) -> Option<(usize, usize)> {
    let lower = line.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower[from..].find("password") {
        let start = from + found;
        let rest = &lower[start + "password".len()..];
        let after_name = rest.trim_start_matches(' ');
        if let Some(after_sign) = after_name.strip_prefix(['=', ':']) {
            let value = after_sign.trim_start_matches(' ');
            if value.starts_with(['"', '\'']) {
                return Some((start, lower.len() - value.len()));
            }
        }
        from = start + "password".len();
    }
    None
}

/// The line with the quoted value (up to its closing quote, or the end of
/// the line) replaced by `"***"`.
fn redact(line: &str, quote_at: usize) -> String {
    let quote = &line[quote_at..quote_at + 1];
    let after = &line[quote_at + 1..];
    let rest = match after.find(quote) {
        Some(end) => &after[end + 1..],
        None => "",
    };
    format!("{}\"***\"{rest}", &line[..quote_at])
}

fn scan(target: &ScanTarget) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (index, line) in target.content.split('\n').enumerate() {
        let Some((start, quote_at)) = password_assignment(line) else {
            continue;
        };
        let column = line[..start].chars().count() as u32 + 1;
        let line_number = index as u32 + 1;
        findings.push(Finding {
            rule_id: SCANNER.to_string(),
            title: "Hard-coded password".to_string(),
            description: "A password is written in the file; anyone who can read it can use it."
                .to_string(),
            severity: Severity::High,
            category: "secrets-exposure".to_string(),
            cwe: Some("CWE-798".to_string()),
            owasp: Some("A07:2021".to_string()),
            location: Location {
                file: target.path.clone(),
                start_line: line_number,
                end_line: line_number,
                start_column: column,
                end_column: 0,
                function: None,
            },
            evidence: redact(line, quote_at),
            remediation: "Read the password from the environment or a secret store.".to_string(),
            confidence: Confidence::High,
            references: Vec::new(),
            metadata: Vec::new(),
        });
    }
    findings
}

struct Scanners;

impl Guest for Scanners {
    fn list_scanners() -> Vec<ScannerSpec> {
        vec![ScannerSpec {
            name: SCANNER.to_string(),
            description: "Passwords written into source or configuration".to_string(),
            file_patterns: Vec::new(),
            languages: Vec::new(),
        }]
    }

    fn scan(name: String, target: ScanTarget) -> Result<Vec<Finding>, SkillError> {
        if name != SCANNER {
            return Err(ToolError::not_found(format!("no scanner `{name}`")).into_wit());
        }
        Ok(scan(&target))
    }
}

agent_skill_sdk::wit::scanner_skill::export!(Scanners);

//! The `phi-detector` scanner of the spec's `hipaa-compliance` example: it
//! finds protected health information written into the repository itself —
//! US Social Security numbers, medical record numbers and dates of birth in
//! source, fixtures and configuration. The skill's declarative rules
//! (`rules/sast.yaml`) are run by the host; this component adds what a
//! pattern file cannot say (SSN validity, context words).

use agent_skill_sdk::wit::scanner_skill::exports::agent::skill::scanner::{
    Guest, ScanTarget, ScannerSpec,
};
use agent_skill_sdk::wit::tool_skill::agent::skill::types::{
    Confidence, Finding, Location, Severity, SkillError,
};
use regex_lite::Regex;
use std::sync::OnceLock;

struct Phi;

const SCANNER: &str = "phi-detector";

fn ssn() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"\b(\d{3})-(\d{2})-(\d{4})\b").expect("ssn regex"))
}

fn mrn() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"(?i)\b(mrn|medical[_ ]record[_ ]number)\b\W{0,3}\s*(\d{6,10})\b")
            .expect("mrn regex")
    })
}

fn dob() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r#"(?i)\b(dob|date_of_birth|birth_?date)\b["']?\s*[:=]\s*["']?(\d{4}-\d{2}-\d{2}|\d{2}/\d{2}/\d{4})"#)
            .expect("dob regex")
    })
}

/// A real-looking SSN: not area 000, 666 or 9xx, group 00 or serial 0000,
/// and not the well-known advertising number.
fn valid_ssn(area: &str, group: &str, serial: &str) -> bool {
    area != "000"
        && area != "666"
        && !area.starts_with('9')
        && group != "00"
        && serial != "0000"
        && !(area == "078" && group == "05" && serial == "1120")
}

fn redact(s: &str) -> String {
    let keep: String = s.chars().take(3).collect();
    format!("{keep}…")
}

fn finding(
    rule: &str,
    title: &str,
    path: &str,
    line: usize,
    (start, end): (usize, usize),
    evidence: String,
    confidence: Confidence,
) -> Finding {
    Finding {
        rule_id: rule.to_string(),
        title: title.to_string(),
        description: format!(
            "{title}: protected health information must not be stored in the repository (HIPAA §164.312)."
        ),
        severity: Severity::High,
        category: "data-exposure".to_string(),
        cwe: Some("CWE-359".to_string()),
        owasp: Some("A02:2021".to_string()),
        location: Location {
            file: path.to_string(),
            start_line: line as u32,
            end_line: line as u32,
            start_column: start as u32 + 1,
            end_column: end as u32 + 1,
            function: None,
        },
        evidence,
        remediation: "Remove the data; use synthetic, clearly fake identifiers in fixtures and load real PHI only from encrypted storage.".to_string(),
        confidence,
        references: vec!["https://www.hhs.gov/hipaa/for-professionals/privacy/laws-regulations/index.html".to_string()],
        metadata: Vec::new(),
    }
}

/// Scans one file's text.
pub fn scan_text(path: &str, content: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, line) in content.lines().enumerate() {
        let n = i + 1;
        if line.contains("agent:ignore") {
            continue;
        }
        if line.len() >= 11 && line.as_bytes().iter().any(u8::is_ascii_digit) {
            for c in ssn().captures_iter(line) {
                let m = c.get(0).expect("match");
                if valid_ssn(&c[1], &c[2], &c[3]) {
                    out.push(finding(
                        "HIPAA-PHI-SSN",
                        "US Social Security number in the repository",
                        path,
                        n,
                        (m.start(), m.end()),
                        redact(m.as_str()),
                        Confidence::Medium,
                    ));
                }
            }
            for c in mrn().captures_iter(line) {
                let m = c.get(0).expect("match");
                out.push(finding(
                    "HIPAA-PHI-MRN",
                    "Medical record number in the repository",
                    path,
                    n,
                    (m.start(), m.end()),
                    format!("{} {}", &c[1], redact(&c[2])),
                    Confidence::High,
                ));
            }
            for c in dob().captures_iter(line) {
                let m = c.get(0).expect("match");
                out.push(finding(
                    "HIPAA-PHI-DOB",
                    "Date of birth in the repository",
                    path,
                    n,
                    (m.start(), m.end()),
                    format!("{} {}", &c[1], redact(&c[2])),
                    Confidence::Medium,
                ));
            }
        }
    }
    out
}

impl Guest for Phi {
    fn list_scanners() -> Vec<ScannerSpec> {
        vec![ScannerSpec {
            name: SCANNER.to_string(),
            description: "Protected health information (SSNs, medical record numbers, dates of birth) in source, fixtures and config".to_string(),
            file_patterns: Vec::new(),
            languages: Vec::new(),
        }]
    }

    fn scan(name: String, target: ScanTarget) -> Result<Vec<Finding>, SkillError> {
        if name != SCANNER {
            return Err(SkillError::NotFound(format!(
                "no scanner `{name}` (this skill has `{SCANNER}`)"
            )));
        }
        Ok(scan_text(&target.path, &target.content))
    }
}

agent_skill_sdk::wit::scanner_skill::export!(Phi);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_ssn_mrn_and_dob_with_exact_lines() {
        let text =
            "name = 'x'\nssn = \"123-45-6789\"\npatient = {MRN: 00123456}\ndob: 1980-02-03\n";
        let f = scan_text("phi/patients.yaml", text);
        let got: Vec<(&str, u32)> = f
            .iter()
            .map(|f| (f.rule_id.as_str(), f.location.start_line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("HIPAA-PHI-SSN", 2),
                ("HIPAA-PHI-MRN", 3),
                ("HIPAA-PHI-DOB", 4)
            ]
        );
        assert_eq!(f[0].evidence, "123…");
        assert!(!f.iter().any(|f| f.evidence.contains("6789")));
    }

    #[test]
    fn invalid_or_example_ssns_and_ignored_lines_are_not_findings() {
        let text = "a = \"000-12-3456\"\nb = \"666-12-3456\"\nc = \"912-34-5678\"\nd = \"078-05-1120\"\nphone = \"555-123-4567\"\ne = \"123-45-6789\" # agent:ignore\nversion = \"2024-01-15\"\n";
        assert!(scan_text("x.txt", text).is_empty());
    }
}

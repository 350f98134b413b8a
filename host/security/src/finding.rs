//! The unified finding model (the spec's Appendix C, mirroring the WIT `finding`).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How bad a finding is. Ordered from `Info` (lowest) to `Critical` (highest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Not a vulnerability; worth knowing.
    Info,
    /// Hard to exploit or minor impact.
    Low,
    /// Exploitable under some conditions.
    Medium,
    /// Likely exploitable with serious impact.
    High,
    /// Exploitable now with severe impact.
    Critical,
}

impl Severity {
    /// Every severity, highest first.
    pub const ALL: [Severity; 5] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
        Severity::Info,
    ];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }

    /// GitHub's `security-severity` score for SARIF.
    pub fn score(self) -> &'static str {
        match self {
            Severity::Critical => "9.5",
            Severity::High => "8.0",
            Severity::Medium => "5.5",
            Severity::Low => "3.0",
            Severity::Info => "0.0",
        }
    }

    /// The severity of a CVSS base score (0–10).
    pub fn from_cvss_score(score: f64) -> Severity {
        if score >= 9.0 {
            Severity::Critical
        } else if score >= 7.0 {
            Severity::High
        } else if score >= 4.0 {
            Severity::Medium
        } else if score > 0.0 {
            Severity::Low
        } else {
            Severity::Info
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not a severity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown severity `{0}` (expected one of: critical, high, medium, low, info)")]
pub struct UnknownSeverity(pub String);

impl FromStr for Severity {
    type Err = UnknownSeverity;
    fn from_str(s: &str) -> Result<Severity, UnknownSeverity> {
        match s.trim().to_ascii_lowercase().as_str() {
            "critical" => Ok(Severity::Critical),
            "high" => Ok(Severity::High),
            "medium" | "moderate" => Ok(Severity::Medium),
            "low" => Ok(Severity::Low),
            "info" => Ok(Severity::Info),
            _ => Err(UnknownSeverity(s.to_string())),
        }
    }
}

/// How sure a scanner is of a finding. Ordered from `Low` to `High`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// Possibly a false positive.
    Low,
    /// Probably real; worth a look.
    Medium,
    /// Almost certainly real.
    High,
}

impl Confidence {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Confidence::High => "high",
            Confidence::Medium => "medium",
            Confidence::Low => "low",
        }
    }
}

impl fmt::Display for Confidence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a finding is, in a file relative to the project root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// Path relative to the project root, `/`-separated.
    pub file: String,
    /// 1-based first line (0 when the finding is about the file as a whole).
    pub start_line: u32,
    /// 1-based last line.
    pub end_line: u32,
    /// 1-based column of the first character, 0 when unknown.
    pub start_column: u32,
    /// 1-based column after the last character, 0 when unknown.
    pub end_column: u32,
    /// Enclosing function or symbol, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// One security finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable fingerprint: 16 hex digits of SHA-256 over the rule, the file
    /// and the normalized evidence (or line content).
    pub id: String,
    /// Rule identifier, e.g. `PY-SQLI-001`.
    pub rule_id: String,
    /// `<skill>/<scanner>`, `rules` (declarative rules) or `deps`.
    pub scanner: String,
    /// The skill that produced it (a scanner's skill or a rule file's skill).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_source: Option<String>,
    /// How bad it is.
    pub severity: Severity,
    /// One of the spec's categories (`injection`, `secrets-exposure`, ...).
    pub category: String,
    /// One-line title.
    pub title: String,
    /// What is wrong and why it matters.
    pub description: String,
    /// Where it is.
    pub location: Location,
    /// CWE identifier such as `CWE-89`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwe: Option<String>,
    /// OWASP Top 10 entry such as `A03:2021`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owasp: Option<String>,
    /// The offending text (secrets redacted).
    pub evidence: String,
    /// How to fix it.
    pub remediation: String,
    /// How sure the scanner is.
    pub confidence: Confidence,
    /// Links to advisories or documentation.
    #[serde(default)]
    pub references: Vec<String>,
    /// Extra key/value data.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
    /// For a taint finding: the path from the source to the sink.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow: Vec<FlowStep>,
}

/// One step of a taint flow (SARIF `codeFlows` thread-flow location).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowStep {
    /// Path relative to the project root.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// The line's text, trimmed.
    pub snippet: String,
    /// What happens there (`source: request.args`, `assigned to q`, `sink: cursor.execute(…)`).
    pub note: String,
}

/// Collapses whitespace runs to one space and trims.
pub(crate) fn normalize(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// 16 hex digits of SHA-256 over the parts, separated by NUL.
pub(crate) fn hash16(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            h.update([0u8]);
        }
        h.update(p.as_bytes());
    }
    hex::encode(&h.finalize()[..8])
}

impl Finding {
    /// A finding with the given essentials and everything else empty
    /// (confidence medium, `id` computed from the rule, file and evidence).
    pub fn new(
        rule_id: impl Into<String>,
        scanner: impl Into<String>,
        severity: Severity,
        category: impl Into<String>,
        title: impl Into<String>,
        location: Location,
    ) -> Finding {
        let mut f = Finding {
            id: String::new(),
            rule_id: rule_id.into(),
            scanner: scanner.into(),
            skill_source: None,
            severity,
            category: category.into(),
            title: title.into(),
            description: String::new(),
            location,
            cwe: None,
            owasp: None,
            evidence: String::new(),
            remediation: String::new(),
            confidence: Confidence::Medium,
            references: Vec::new(),
            metadata: BTreeMap::new(),
            flow: Vec::new(),
        };
        f.fingerprint(None);
        f
    }

    /// Computes the stable `id`: SHA-256 over the rule id, the file and the
    /// normalized evidence — or, without evidence, the normalized content of
    /// the finding's first line (`line_text`) — or, without either, the line
    /// number. Moving code around does not change it; editing the line does.
    pub fn fingerprint(&mut self, line_text: Option<&str>) {
        let evidence = normalize(&self.evidence);
        let basis = if !evidence.is_empty() {
            evidence
        } else if let Some(line) = line_text.map(normalize).filter(|l| !l.is_empty()) {
            line
        } else {
            format!("line:{}", self.location.start_line)
        };
        self.id = hash16(&[&self.rule_id, &self.location.file, &basis]);
    }

    /// Converts a scanner skill's WIT finding: `scanner` becomes
    /// `<skill>/<scanner>`, `skill_source` the skill (unless `builtin`, when
    /// it stays empty as in Appendix C), and the `id` is computed.
    /// `line_text` is the content of the finding's first line when known.
    pub fn from_wit(
        wit: agent_runtime::Finding,
        skill: &str,
        scanner: &str,
        builtin: bool,
        line_text: Option<&str>,
    ) -> Finding {
        let loc = wit.location;
        let start_line = loc.start_line;
        let end_line = loc.end_line.max(start_line);
        let mut f = Finding {
            id: String::new(),
            rule_id: wit.rule_id,
            scanner: format!("{skill}/{scanner}"),
            skill_source: (!builtin).then(|| skill.to_string()),
            severity: severity_of_wit(&format!("{:?}", wit.severity)),
            category: wit.category,
            title: wit.title,
            description: wit.description,
            location: Location {
                file: loc.file.replace('\\', "/"),
                start_line,
                end_line,
                start_column: loc.start_column,
                end_column: loc.end_column,
                function: loc.function.filter(|s| !s.is_empty()),
            },
            cwe: wit.cwe.filter(|s| !s.is_empty()),
            owasp: wit.owasp.filter(|s| !s.is_empty()),
            evidence: wit.evidence,
            remediation: wit.remediation,
            confidence: confidence_of_wit(&format!("{:?}", wit.confidence)),
            references: wit.references,
            metadata: wit.metadata.into_iter().collect(),
            flow: Vec::new(),
        };
        f.fingerprint(line_text);
        f
    }

    /// The WIT `finding` of this finding, as hooks receive it
    /// (`on-security-scan-complete`). What the WIT record has no field for
    /// (`id`, `scanner`, `skill_source`) goes into `metadata` under those keys.
    pub fn to_wit(&self) -> agent_runtime::Finding {
        use agent_runtime::{WitConfidence, WitLocation, WitSeverity};
        let mut metadata: Vec<(String, String)> = vec![
            ("id".into(), self.id.clone()),
            ("scanner".into(), self.scanner.clone()),
        ];
        if let Some(skill) = &self.skill_source {
            metadata.push(("skill_source".into(), skill.clone()));
        }
        metadata.extend(
            self.metadata
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "id" | "scanner" | "skill_source"))
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        let loc = &self.location;
        agent_runtime::Finding {
            rule_id: self.rule_id.clone(),
            title: self.title.clone(),
            description: self.description.clone(),
            severity: match self.severity {
                Severity::Critical => WitSeverity::Critical,
                Severity::High => WitSeverity::High,
                Severity::Medium => WitSeverity::Medium,
                Severity::Low => WitSeverity::Low,
                Severity::Info => WitSeverity::Info,
            },
            category: self.category.clone(),
            cwe: self.cwe.clone(),
            owasp: self.owasp.clone(),
            location: WitLocation {
                file: loc.file.clone(),
                start_line: loc.start_line,
                end_line: loc.end_line,
                start_column: loc.start_column,
                end_column: loc.end_column,
                function: loc.function.clone(),
            },
            evidence: self.evidence.clone(),
            remediation: self.remediation.clone(),
            confidence: match self.confidence {
                Confidence::High => WitConfidence::High,
                Confidence::Medium => WitConfidence::Medium,
                Confidence::Low => WitConfidence::Low,
            },
            references: self.references.clone(),
            metadata,
        }
    }

    /// Key for sorting reports: severity (highest first), file, line, rule.
    pub fn sort_key(&self) -> (std::cmp::Reverse<Severity>, &str, u32, u32, &str, &str) {
        (
            std::cmp::Reverse(self.severity),
            &self.location.file,
            self.location.start_line,
            self.location.start_column,
            &self.rule_id,
            &self.id,
        )
    }
}

/// Maps the Debug name of the WIT enum (`Severity::High`, `High`) to ours.
fn severity_of_wit(debug: &str) -> Severity {
    let name = debug.rsplit("::").next().unwrap_or(debug);
    name.parse().unwrap_or(Severity::Medium)
}

fn confidence_of_wit(debug: &str) -> Confidence {
    let name = debug
        .rsplit("::")
        .next()
        .unwrap_or(debug)
        .to_ascii_lowercase();
    match name.as_str() {
        "high" => Confidence::High,
        "low" => Confidence::Low,
        _ => Confidence::Medium,
    }
}

/// Sorts findings deterministically (severity, file, line, rule).
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn severity_order_and_parse() {
        assert!(Severity::Critical > Severity::High);
        assert!(Severity::Low > Severity::Info);
        assert_eq!("HIGH".parse::<Severity>().unwrap(), Severity::High);
        assert!("urgent".parse::<Severity>().is_err());
        assert_eq!(severity_of_wit("Severity::Critical"), Severity::Critical);
        assert_eq!(severity_of_wit("Low"), Severity::Low);
        assert_eq!(confidence_of_wit("Confidence::High"), Confidence::High);
        assert_eq!(
            serde_json::to_string(&Severity::Medium).unwrap(),
            "\"medium\""
        );
    }

    #[test]
    fn fingerprint_is_stable_and_position_independent() {
        let loc = |line| Location {
            file: "a.py".into(),
            start_line: line,
            end_line: line,
            ..Location::default()
        };
        let mut a = Finding::new("R1", "rules", Severity::High, "injection", "t", loc(3));
        a.fingerprint(Some("  x = eval(y)  "));
        let mut b = Finding::new("R1", "rules", Severity::High, "injection", "t", loc(9));
        b.fingerprint(Some("x =   eval(y)"));
        assert_eq!(a.id, b.id);
        assert_eq!(a.id.len(), 16);
        let mut c = b.clone();
        c.rule_id = "R2".into();
        c.fingerprint(Some("x = eval(y)"));
        assert_ne!(a.id, c.id);
    }
}

//! The spec's Unified Finding Schema (Appendix C), with the same field names
//! as the host's `agent-security` / `agent-findings` model, so a finding
//! produced here serialises exactly like one produced by the host.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing (a compiler note).
    Info,
    /// Minor.
    Low,
    /// A warning.
    Medium,
    /// An error: the build, link, signing or a test failed.
    High,
    /// Severe.
    Critical,
}

/// How sure the producer is of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// Possibly wrong.
    Low,
    /// Probably right.
    Medium,
    /// The tool said so.
    High,
}

/// Where a finding is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The file as the log names it (relative to the project root when
    /// [`crate::Options::project_root`] is a prefix of it); empty when the
    /// message names no file.
    pub file: String,
    /// 1-based line, 0 when unknown.
    pub start_line: u32,
    /// 1-based last line (the same as `start_line` for a log).
    pub end_line: u32,
    /// 1-based column, 0 when unknown.
    pub start_column: u32,
    /// 1-based column after the last character, 0 when unknown.
    pub end_column: u32,
    /// Enclosing function or symbol, when known (the test for a test failure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// One finding (Appendix C).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable fingerprint: 16 hex digits over the rule, the file, the line
    /// and the message (FNV-1a 64).
    pub id: String,
    /// `XCODE-<KIND>-<LEVEL>`, e.g. `XCODE-COMPILER-ERROR`.
    pub rule_id: String,
    /// Always [`crate::SCANNER`].
    pub scanner: String,
    /// The skill that produced it: empty for a built-in (Appendix C).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_source: Option<String>,
    /// Error → high, warning → medium, note → info.
    pub severity: Severity,
    /// `correctness`, `testing` or `misconfiguration` (signing, script phases).
    pub category: String,
    /// The message's first line, shortened.
    pub title: String,
    /// The whole message, with the target and project when the log names them.
    pub description: String,
    /// Where it is.
    pub location: Location,
    /// Unused for build logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwe: Option<String>,
    /// Unused for build logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owasp: Option<String>,
    /// The log's own lines: the diagnostic and its source/caret excerpt.
    pub evidence: String,
    /// What to do about this kind of problem.
    pub remediation: String,
    /// Always high: the compiler, linker or test runner said so.
    pub confidence: Confidence,
    /// Links to documentation.
    #[serde(default)]
    pub references: Vec<String>,
    /// `kind`, `level`, and when known `target`, `project`, `symbol`, `test`, `arch`.
    #[serde(default)]
    pub metadata: BTreeMap<String, String>,
}

/// 16 hex digits of FNV-1a 64 over the parts, separated by NUL. Not a
/// security hash: it names a finding stably across runs.
pub(crate) fn fingerprint(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (i, p) in parts.iter().enumerate() {
        let sep: &[u8] = if i > 0 { b"\0" } else { b"" };
        for &b in sep.iter().chain(p.as_bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_is_stable_and_separates_parts() {
        assert_eq!(fingerprint(&["a", "b"]), fingerprint(&["a", "b"]));
        assert_ne!(fingerprint(&["ab", ""]), fingerprint(&["a", "b"]));
        assert_eq!(fingerprint(&["x"]).len(), 16);
    }

    #[test]
    fn field_names_are_the_unified_schemas() {
        let f = Finding {
            id: "0".into(),
            rule_id: "R".into(),
            scanner: "s".into(),
            skill_source: None,
            severity: Severity::High,
            category: "correctness".into(),
            title: "t".into(),
            description: "d".into(),
            location: Location::default(),
            cwe: None,
            owasp: None,
            evidence: "e".into(),
            remediation: "r".into(),
            confidence: Confidence::High,
            references: vec![],
            metadata: BTreeMap::new(),
        };
        let v = serde_json::to_value(&f).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        for k in [
            "id",
            "rule_id",
            "scanner",
            "severity",
            "category",
            "title",
            "description",
            "location",
            "evidence",
            "remediation",
            "confidence",
            "references",
            "metadata",
        ] {
            assert!(keys.contains(&k), "{k} missing from {keys:?}");
        }
        let loc = v["location"].as_object().unwrap();
        for k in [
            "file",
            "start_line",
            "end_line",
            "start_column",
            "end_column",
        ] {
            assert!(loc.contains_key(k), "location.{k}");
        }
        assert_eq!(v["severity"], "high");
        assert_eq!(v["confidence"], "high");
    }
}

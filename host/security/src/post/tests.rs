use super::*;
use crate::config::{CiConfig, Override};
use crate::finding::{Confidence, Location};

fn f(rule: &str, scanner: &str, sev: Severity, file: &str, line: u32) -> Finding {
    let mut x = Finding::new(
        rule,
        scanner,
        sev,
        "injection",
        format!("{rule} title"),
        Location {
            file: file.into(),
            start_line: line,
            end_line: line,
            ..Location::default()
        },
    );
    x.cwe = Some("CWE-89".into());
    x.evidence = format!("evidence of {rule} at {line}");
    x.fingerprint(None);
    x
}

#[test]
fn dedup_merges_across_scanners_keeping_the_highest() {
    let mut low = f(
        "PY-SQLI-001",
        "security-base/sast",
        Severity::Medium,
        "app.py",
        10,
    );
    low.confidence = Confidence::High;
    let high = f("CUSTOM-SQL", "rules", Severity::High, "app.py", 10);
    let same_rule = f("PY-SQLI-001", "other/sast", Severity::Low, "app.py", 10);
    let mut other_cat = f("PY-XSS", "security-base/sast", Severity::Low, "app.py", 10);
    other_cat.category = "input-validation".into();
    other_cat.cwe = Some("CWE-79".into());
    let other_line = f(
        "PY-SQLI-001",
        "security-base/sast",
        Severity::Medium,
        "app.py",
        11,
    );
    let out = dedup(vec![low, high, same_rule, other_cat, other_line]);
    assert_eq!(out.len(), 3);
    let merged = &out[0];
    assert_eq!(merged.rule_id, "CUSTOM-SQL");
    assert_eq!(merged.severity, Severity::High);
    assert_eq!(
        merged.metadata["scanners"],
        "other/sast,rules,security-base/sast"
    );
    assert_eq!(merged.metadata["merged_rules"], "PY-SQLI-001");
    assert_eq!(out[1].location.start_line, 11);
    assert_eq!(out[2].rule_id, "PY-XSS");
    assert_eq!(out[2].metadata["scanners"], "security-base/sast");
}

#[test]
fn dedup_keeps_ids_unique() {
    let a = f("R", "s1", Severity::Low, "a.py", 1);
    let mut b = f("R", "s1", Severity::Low, "a.py", 7);
    b.evidence = a.evidence.clone();
    b.fingerprint(None);
    assert_eq!(a.id, b.id);
    let out = dedup(vec![a, b]);
    assert_eq!(out.len(), 2);
    assert_ne!(out[0].id, out[1].id);
}

#[test]
fn overrides_change_severity_and_note() {
    let out = apply_overrides(
        vec![
            f("GO-CRYPTO-001", "s", Severity::High, "a.go", 1),
            f("GO-OTHER", "s", Severity::High, "a.go", 2),
            f("GO-NOISE", "s", Severity::Low, "a.go", 3),
        ],
        &[
            Override {
                id: "GO-CRYPTO-001".into(),
                severity: Some(Severity::Info),
                note: Some("MD5 used only for cache keys".into()),
                disabled: false,
            },
            Override {
                id: "GO-NOISE".into(),
                severity: None,
                note: None,
                disabled: true,
            },
        ],
    );
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].severity, Severity::Info);
    assert_eq!(out[0].metadata["original_severity"], "high");
    assert_eq!(
        out[0].metadata["override_note"],
        "MD5 used only for cache keys"
    );
    assert_eq!(out[1].severity, Severity::High);
    assert!(out[1].metadata.is_empty());
}

#[test]
fn allowlist_drops_paths_rules_and_evidence() {
    let allow = Allowlist {
        paths: vec!["fixtures/".into()],
        regexes: vec!["EXAMPLE".into()],
        rules: vec!["NOISY".into()],
    };
    let mut ex = f("R", "s", Severity::High, "src/a.py", 1);
    ex.evidence = "AKIA...EXAMPLE".into();
    let out = apply_allowlist(
        vec![
            f("R", "s", Severity::High, "fixtures/a.py", 1),
            f("NOISY", "s", Severity::High, "src/a.py", 2),
            ex,
            f("R", "s", Severity::High, "src/a.py", 3),
        ],
        &allow,
    );
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].location.start_line, 3);
}

#[test]
fn thresholds_and_verdict() {
    let t = Thresholds::resolve(None, &CiConfig::default(), None, None);
    assert_eq!(t.fail_on, Some(Severity::High));
    let ci = CiConfig {
        fail_on: Some(Severity::Medium),
        max_findings: Some(1),
    };
    let t = Thresholds::resolve(None, &ci, Some(Severity::Critical), None);
    assert_eq!(t.fail_on, Some(Severity::Medium));
    assert_eq!(t.max_findings, Some(1));
    let t2 = Thresholds::resolve(Some(Severity::Critical), &ci, None, Some(5));
    assert_eq!(t2.fail_on, Some(Severity::Critical));
    assert_eq!(t2.max_findings, Some(5));
    let t3 = Thresholds::resolve(None, &CiConfig::default(), Some(Severity::Low), None);
    assert_eq!(t3.fail_on, Some(Severity::Low));

    let findings = vec![
        f("A", "s", Severity::Medium, "a", 1),
        f("B", "s", Severity::Low, "a", 2),
    ];
    let v = evaluate(&findings, &t);
    assert!(v.failed);
    assert_eq!(v.reasons.len(), 2, "{:?}", v.reasons);
    assert!(v.reasons[0].contains("1 finding at or above severity medium"));
    assert!(v.reasons[1].contains("max_findings (1)"));
    let v = evaluate(&findings, &t2);
    assert!(!v.failed);
    assert!(v.reasons.is_empty());
    let c = counts(&findings);
    assert_eq!(c[&Severity::Medium], 1);
    assert_eq!(c[&Severity::Critical], 0);
}

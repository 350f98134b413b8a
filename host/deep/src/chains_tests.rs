use super::*;
use agent_security::Location;

fn f(
    rule: &str,
    scanner: &str,
    category: &str,
    cwe: Option<&str>,
    file: &str,
    line: u32,
) -> Finding {
    let mut f = Finding::new(
        rule,
        scanner,
        Severity::High,
        category,
        rule,
        Location {
            file: file.into(),
            start_line: line,
            end_line: line,
            start_column: 0,
            end_column: 0,
            function: None,
        },
    );
    f.cwe = cwe.map(String::from);
    f.evidence = format!("{rule} at {line}");
    f.fingerprint(None);
    f
}

#[test]
fn ssrf_and_a_credential_are_one_chain_in_exploit_order() {
    let findings = vec![
        f(
            "AWS key",
            "security-base/secrets",
            "secrets-exposure",
            Some("CWE-798"),
            "config/settings.py",
            3,
        ),
        f(
            "Unvalidated fetch of a user URL",
            "security/deep",
            "injection",
            Some("CWE-918"),
            "app/proxy.py",
            12,
        ),
        f(
            "Debug on",
            "rules",
            "misconfiguration",
            None,
            "app/other.py",
            1,
        ),
    ];
    let chains = correlate(&findings, &BTreeMap::new());
    assert_eq!(chains.len(), 1, "{chains:#?}");
    let c = &chains[0];
    assert_eq!(c.rules, ["ssrf-to-credentials"]);
    let steps: Vec<(&str, &str, u32)> = c
        .steps
        .iter()
        .map(|s| (s.role.as_str(), s.file.as_str(), s.line))
        .collect();
    assert_eq!(
        steps,
        [
            ("exploit", "app/proxy.py", 12),
            ("impact", "config/settings.py", 3)
        ]
    );
    assert!(c.id.starts_with("chain-") && c.id.len() == 14, "{}", c.id);
    // The same findings in another order: the same id.
    let mut rev = findings.clone();
    rev.reverse();
    assert_eq!(correlate(&rev, &BTreeMap::new())[0].id, c.id);
}

#[test]
fn a_command_injection_in_a_route_file_starts_at_the_route() {
    let findings = vec![f(
        "Command injection",
        "rules",
        "injection",
        Some("CWE-78"),
        "api.py",
        9,
    )];
    let routes = BTreeMap::from([("api.py".to_string(), 4)]);
    let chains = correlate(&findings, &routes);
    assert_eq!(chains.len(), 1);
    assert_eq!(chains[0].steps[0].role, "entry");
    assert_eq!(chains[0].steps[0].line, 4);
    assert_eq!(chains[0].steps[1].line, 9);
    assert!(correlate(&findings, &BTreeMap::new()).is_empty());
}

#[test]
fn links_the_model_states_join_findings_and_members_are_marked() {
    let mut findings = vec![
        f(
            "Missing ownership check",
            "security/deep",
            "authorization",
            None,
            "a.py",
            5,
        ),
        f(
            "Refund without limit",
            "security/deep",
            "input-validation",
            None,
            "b.py",
            7,
        ),
        f(
            "Unrelated",
            "security/deep",
            "input-validation",
            None,
            "c.py",
            1,
        ),
    ];
    findings[1]
        .metadata
        .insert("related".into(), "a.py:5".into());
    let chains = correlate(&findings, &BTreeMap::new());
    assert_eq!(chains.len(), 1, "{chains:#?}");
    assert_eq!(chains[0].rules, ["stated-by-model"]);
    mark(&mut findings, &chains);
    assert_eq!(findings[0].metadata["chain"], chains[0].id);
    assert_eq!(findings[1].metadata["chain"], chains[0].id);
    assert!(!findings[2].metadata.contains_key("chain"));
}

#[test]
fn each_finding_joins_its_nearest_partner_only() {
    let findings = vec![
        f(
            "SQL injection",
            "rules",
            "injection",
            Some("CWE-89"),
            "svc/a/q.py",
            1,
        ),
        f(
            "No auth",
            "security/deep",
            "authentication",
            None,
            "svc/a/views.py",
            2,
        ),
        f(
            "SQL injection",
            "rules",
            "injection",
            Some("CWE-89"),
            "svc/b/q.py",
            1,
        ),
        f(
            "No auth",
            "security/deep",
            "authentication",
            None,
            "svc/b/views.py",
            2,
        ),
    ];
    let chains = correlate(&findings, &BTreeMap::new());
    assert_eq!(chains.len(), 2, "{chains:#?}");
    for c in &chains {
        assert_eq!(c.steps[0].role, "access");
        let dir = &c.steps[0].file[..5];
        assert!(c.steps.iter().all(|s| s.file.starts_with(dir)), "{c:#?}");
    }
}

#[test]
fn the_partner_the_model_names_wins_over_the_nearest() {
    let mut findings = vec![
        f(
            "AWS key id",
            "security-base/secrets",
            "secrets-exposure",
            Some("CWE-798"),
            "app/keys.py",
            1,
        ),
        f(
            "AWS secret",
            "security-base/secrets",
            "secrets-exposure",
            Some("CWE-798"),
            "app/keys.py",
            2,
        ),
        f(
            "SSRF",
            "security-deep/model",
            "injection",
            Some("CWE-918"),
            "app/fetch.py",
            6,
        ),
    ];
    findings[2]
        .metadata
        .insert("related".into(), "app/keys.py:2".into());
    let chains = correlate(&findings, &BTreeMap::new());
    assert_eq!(chains.len(), 1, "{chains:#?}");
    let lines: Vec<u32> = chains[0].steps.iter().map(|s| s.line).collect();
    assert_eq!(lines, [6, 2]);
    assert_eq!(chains[0].rules, ["ssrf-to-credentials", "stated-by-model"]);
}

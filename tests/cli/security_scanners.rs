//! `agent security-audit --scanners a,b` (issue 15, item 16): people run a
//! secrets scanner alone in pre-commit hooks, and compare it with gitleaks
//! that way. Only the named scanners run; the engine's own `rules` and
//! `deps` are scanners too; an unknown name is a usage error (exit 2) that
//! lists every valid name.

use super::code;
use super::security::{audit, audit_json, copy_tree, fixture, fixtures, sandbox, triples};
use agent_tests::text;

/// The `secrets` fixture with the `docker` fixture laid over it: secrets
/// for the secrets scanner, Dockerfile mistakes for the config scanner.
fn mixed() -> tempfile::TempDir {
    let dir = fixture("secrets");
    copy_tree(&fixtures().join("repos/docker"), dir.path());
    dir
}

fn rules_of(report: &serde_json::Value) -> Vec<String> {
    triples(report).into_iter().map(|(r, _, _)| r).collect()
}

fn scanners_of(report: &serde_json::Value) -> Vec<String> {
    report["scanners"]
        .as_array()
        .expect("scanners")
        .iter()
        .map(|s| s["name"].as_str().expect("name").to_string())
        .collect()
}

#[test]
fn only_the_named_scanners_run() {
    let sb = sandbox();
    let dir = mixed();

    // Without --scanners every scanner takes part: secrets and Dockerfile findings.
    let (_, all, stderr) = audit_json(&sb, dir.path(), &[]);
    let rules = rules_of(&all);
    assert!(
        rules.iter().any(|r| r.starts_with("SECRET-")),
        "{rules:?} {stderr}"
    );
    assert!(
        rules.iter().any(|r| !r.starts_with("SECRET-")),
        "the Dockerfile findings: {rules:?} {stderr}"
    );

    // `--scanners secrets`: the secrets scanner alone, exactly its findings.
    let (_, only, stderr) = audit_json(&sb, dir.path(), &["--scanners", "secrets"]);
    assert_eq!(scanners_of(&only), ["security-base/secrets"], "{stderr}");
    let want: Vec<_> = triples(&all)
        .into_iter()
        .filter(|(r, _, _)| r.starts_with("SECRET-"))
        .collect();
    assert_eq!(triples(&only), want, "{stderr}");
    assert_eq!(only["errors"], serde_json::json!([]), "{stderr}");

    // Qualified names and a list work the same way.
    let (_, two, stderr) = audit_json(
        &sb,
        dir.path(),
        &["--scanners", "security-base/secrets,config"],
    );
    assert_eq!(
        scanners_of(&two),
        ["security-base/secrets", "security-base/config"],
        "{stderr}"
    );
    assert_eq!(triples(&two), triples(&all), "{stderr}");
}

#[test]
fn unknown_scanner_names_are_usage_errors_listing_the_valid_ones() {
    let sb = sandbox();
    let dir = mixed();
    let out = audit(&sb, dir.path(), &["--scanners", "secrets,gitleaks"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(stdout.is_empty(), "no report: {stdout}");
    assert!(
        stderr.contains(
            "--scanners gitleaks: no such scanner; the scanners are: secrets, \
             security-base/secrets, sast, security-base/sast, config, \
             security-base/config, rules, deps"
        ),
        "{stderr}"
    );
}

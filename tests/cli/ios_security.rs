//! `agent security-audit` on an iOS app (issue 19, item 5): the built-in iOS
//! rules (Swift and Objective-C, tree-sitter and line patterns) and the
//! plist/entitlements scanner (XML and binary property lists).
//!
//! The fixtures are tests/fixtures/security/ios: `VulnBank` marks every line
//! that must be reported with `expect: RULE-ID`; `SafeNotes` holds the
//! look-alikes (HTTPS, SHA-256, WhenUnlocked, biometrics with passcode
//! fallback, a non-secret preference, Debug-only get-task-allow, ...), of
//! which none may be reported. The audit goes through the real binary.

use std::path::Path;

use agent_tests::text;

use super::code;
use super::security::{Triple, audit, audit_json, copy_tree, fixtures, sandbox, triples, validate};

/// The app trees in a temporary directory, with a binary `Settings.plist`
/// (ATS off for web content) written next to VulnBank's XML Info.plist.
fn ios_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    copy_tree(&fixtures().join("ios"), dir.path());
    std::fs::remove_file(dir.path().join("README.md")).expect("README");
    let mut ats = plist::Dictionary::new();
    ats.insert(
        "NSAllowsArbitraryLoadsInWebContent".into(),
        plist::Value::Boolean(true),
    );
    let mut root = plist::Dictionary::new();
    root.insert(
        "NSAppTransportSecurity".into(),
        plist::Value::Dictionary(ats),
    );
    let settings = dir.path().join("VulnBank/Settings.plist");
    plist::Value::Dictionary(root)
        .to_file_binary(&settings)
        .expect("writing the binary plist");
    let bytes = std::fs::read(&settings).expect("reading it back");
    assert!(bytes.starts_with(b"bplist00"), "a binary plist");
    dir
}

/// Every `expect: RULE-ID` marker of the fixtures, as (rule, file, line).
fn markers(root: &Path, rel: &str, out: &mut Vec<Triple>) {
    let dir = root.join(rel);
    for entry in std::fs::read_dir(&dir).expect("fixture dir") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().to_string();
        let rel = if rel.is_empty() {
            name
        } else {
            format!("{rel}/{name}")
        };
        if entry.path().is_dir() {
            markers(root, &rel, out);
            continue;
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if let Some((_, tail)) = line.split_once("expect: ") {
                let id = tail.trim_end_matches("-->").trim();
                out.push((id.to_string(), rel.clone(), i as u32 + 1));
            }
        }
    }
}

fn ios_findings(report: &serde_json::Value) -> Vec<Triple> {
    triples(report)
        .into_iter()
        .filter(|(rule, _, _)| rule.starts_with("IOS-"))
        .collect()
}

#[test]
fn every_ios_case_is_reported_at_its_line_and_no_look_alike_is() {
    let sb = sandbox();
    let dir = ios_tree();
    let (status, report, stderr) = audit_json(&sb, dir.path(), &[]);
    assert_eq!(status, 1, "high findings fail the audit: {stderr}");
    assert!(
        report["errors"].as_array().is_none_or(|e| e.is_empty()),
        "no scanner or rule error: {}",
        report["errors"]
    );

    let mut want = Vec::new();
    markers(dir.path(), "", &mut want);
    // The binary plist has no lines: line 1, the key path in the evidence.
    want.push(("IOS-ATS-002".into(), "VulnBank/Settings.plist".into(), 1));
    want.sort();
    // The iOS rules' ids, each of which has at least one true case here.
    let ids: std::collections::BTreeSet<&str> = want.iter().map(|t| t.0.as_str()).collect();
    for id in [
        "IOS-SEC-001",
        "IOS-SEC-002",
        "IOS-SEC-003",
        "IOS-SEC-004",
        "IOS-SEC-005",
        "IOS-SEC-007",
        "IOS-SEC-008",
        "IOS-SEC-009",
        "IOS-SEC-010",
        "IOS-HTTP-001",
        "IOS-CRYPTO-001",
        "IOS-KEYCHAIN-001",
        "IOS-WEBVIEW-001",
        "IOS-WEBVIEW-002",
        "IOS-WEBVIEW-003",
        "IOS-WEBVIEW-004",
        "IOS-ATS-002",
        "IOS-ATS-003",
        "IOS-ATS-004",
        "IOS-ENT-001",
        "IOS-ENT-002",
        "IOS-PLIST-001",
        "IOS-PLIST-002",
        "IOS-PLIST-003",
    ] {
        assert!(ids.contains(id), "a true case of {id} in the fixtures");
    }
    let got = ios_findings(&report);
    let missed: Vec<&Triple> = want.iter().filter(|t| !got.contains(t)).collect();
    let extra: Vec<&Triple> = got.iter().filter(|t| !want.contains(t)).collect();
    assert!(
        missed.is_empty() && extra.is_empty(),
        "missed: {missed:#?}\nreported but not expected (look-alikes must stay quiet): {extra:#?}"
    );
    assert!(
        !got.iter()
            .any(|(_, file, _)| file.starts_with("SafeNotes/")),
        "no iOS finding in the look-alikes"
    );

    // Objective-C rules ran on the .m file through its own grammar.
    let findings = report["findings"].as_array().expect("findings");
    let objc = findings
        .iter()
        .find(|f| {
            f["rule_id"] == "IOS-SEC-001" && f["location"]["file"] == "VulnBank/Sources/BankVault.m"
        })
        .expect("IOS-SEC-001 in BankVault.m");
    assert_eq!(objc["scanner"], "apple-dev/rules");
    assert!(
        objc["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("NSUserDefaults standardUserDefaults] setObject:password")),
        "{objc}"
    );
    // The data-flow pass says where the stored value came from.
    let through = findings
        .iter()
        .find(|f| {
            f["location"]["file"] == "VulnBank/Sources/SessionStore.swift"
                && f["location"]["start_line"] == 13
        })
        .expect("the token stored through a variable");
    assert_eq!(through["rule_id"], "IOS-SEC-001");
    assert_eq!(through["scanner"], "apple-dev/rules");
    assert_eq!(
        through["metadata"]["flow"], "`session` = response.token (line 12)",
        "{through}"
    );
    // Plist findings name the key path; the binary one is read as well.
    let binary = findings
        .iter()
        .find(|f| f["location"]["file"] == "VulnBank/Settings.plist")
        .expect("the binary plist's finding");
    assert_eq!(binary["scanner"], "apple-dev/plist");
    assert_eq!(
        binary["evidence"],
        "NSAppTransportSecurity/NSAllowsArbitraryLoadsInWebContent"
    );
    let missing = findings
        .iter()
        .find(|f| f["rule_id"] == "IOS-PLIST-003")
        .expect("the missing usage description");
    assert!(
        missing["description"].as_str().is_some_and(
            |d| d.contains("AVCaptureDevice") && d.contains("NSCameraUsageDescription")
        ),
        "{missing}"
    );
    // The plist scanner has its own line in the statistics.
    let per = report["stats"]["scanners"]
        .as_array()
        .expect("scanner stats");
    let plist = per
        .iter()
        .find(|s| s["name"] == "apple-dev/plist")
        .expect("apple-dev/plist stats");
    assert_eq!(plist["files"], 6, "{plist}");
}

#[test]
fn the_ios_report_is_schema_valid_sarif() {
    let sb = sandbox();
    let dir = ios_tree();
    let out_dir = tempfile::tempdir().expect("tmp");
    let sarif = out_dir.path().join("ios.sarif");
    let f = sarif.display().to_string();
    let out = audit(&sb, dir.path(), &["--output", "sarif", "--out", &f]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    validate("sarif", &sarif);
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    let results = doc["runs"][0]["results"].as_array().expect("results");
    let ats = results
        .iter()
        .find(|r| r["ruleId"] == "IOS-SEC-002")
        .expect("the ATS result");
    let loc = &ats["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "VulnBank/Info.plist");
    assert_eq!(loc["region"]["startLine"], 26);
}

#[test]
fn scanners_plist_runs_only_the_plist_scanner() {
    let sb = sandbox();
    let dir = ios_tree();
    let (_, report, stderr) = audit_json(&sb, dir.path(), &["--scanners", "plist"]);
    let got = ios_findings(&report);
    assert!(!got.is_empty(), "{stderr}");
    let scanners: std::collections::BTreeSet<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["scanner"].as_str())
        .collect();
    assert_eq!(
        scanners.into_iter().collect::<Vec<_>>(),
        vec!["apple-dev/plist"],
        "only the plist scanner ran"
    );
}

/// apple-dev is a tool + prompt + security-rule component (issue 19 item
/// 1): its manifest names its rules file, which is signed and embedded with
/// it, and the engine loads the iOS rules from the skill — so
/// `--skills apple-dev` selects a security-rule skill.
#[test]
fn apple_dev_is_a_security_rule_skill_whose_rules_ride_with_it() {
    let sb = sandbox();
    let info = super::ok(&sb.agent(&["skill", "info", "apple-dev"]));
    assert!(info.contains("security-rule"), "{info}");
    let json: serde_json::Value = serde_json::from_str(&super::ok(&sb.agent(&[
        "skill",
        "info",
        "apple-dev",
        "--format",
        "json",
    ])))
    .expect("json");
    assert_eq!(
        json["manifest"]["security_rules"]["sast_rules_file"], "rules/ios-sast.yaml",
        "the rules file is named: {json:#}"
    );

    let dir = ios_tree();
    let (status, report, stderr) = audit_json(&sb, dir.path(), &["--skills", "apple-dev"]);
    assert_eq!(status, 1, "high findings fail the audit: {stderr}");
    let rules: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["scanner"] == "apple-dev/rules")
        .collect();
    assert!(
        rules.iter().any(|f| f["rule_id"] == "IOS-SEC-008"
            && f["location"]["file"] == "VulnBank/Sources/BankVault.m"),
        "the Objective-C form of a rule from apple-dev's file: {rules:#?}"
    );
    assert!(
        rules.iter().all(|f| f["skill_source"] == "apple-dev"),
        "{rules:#?}"
    );
}

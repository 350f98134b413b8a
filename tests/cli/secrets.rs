//! Issue 16, items 1 and 2, through the real binary: `agent security-audit
//! --scanners secrets` walks dotfiles and dot-directories (where
//! credentials live: `.ssh/`, `.netrc`, `.aws/`, `.docker/`), says what each
//! ignore file excluded, and finds every credential of the labelled tree
//! (`tests/fixtures/security/secrets/tree`: `<format>/found/` must be
//! reported, `<format>/safe/` look-alikes must not) with the evidence
//! redacted.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use super::security::{audit, audit_json, fixtures, sandbox};
use agent_tests::text;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// Deterministic pseudo-random base64 characters (a FAKE key body, built
/// here so that no file in the repository holds one).
fn fake_b64(n: usize, seed: u64) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            A[(x % 64) as usize] as char
        })
        .collect()
}

fn finding_files(report: &serde_json::Value) -> BTreeSet<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["location"]["file"].as_str().expect("file").to_string())
        .collect()
}

/// Before: "files scanned 2" and neither `.ssh/id_rsa` nor `.netrc` was
/// found (hidden files were never walked). Now both are, and the summary
/// (stderr, JSON) says what `.gitignore` kept out.
#[test]
fn hidden_credential_files_are_scanned_and_each_exclusion_is_counted() {
    let sb = sandbox();
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    let body: Vec<String> = (0..6).map(|i| fake_b64(64, 11 + i)).collect();
    let key = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----\n",
        body.join("\n")
    );
    let password = fake_b64(20, 99).replace(['+', '/'], "Q");
    write(root, ".ssh/id_rsa", &key);
    write(
        root,
        ".netrc",
        &format!("machine api.example.org login deploy password {password}\n"),
    );
    write(root, "src/app.py", "print('hi')\n");
    write(root, ".gitignore", "build/\n");
    write(root, "build/.env", &format!("API_KEY={password}\n"));
    let (_, report, stderr) = audit_json(&sb, root, &["--scanners", "secrets"]);
    let files = finding_files(&report);
    assert!(files.contains(".ssh/id_rsa"), "{files:?}\n{stderr}");
    assert!(files.contains(".netrc"), "{files:?}\n{stderr}");
    assert!(!files.iter().any(|f| f.starts_with("build/")), "{files:?}");
    let rules: BTreeSet<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rule_id"].as_str().expect("rule"))
        .collect();
    assert!(rules.contains("SECRET-PRIVATE-KEY"), "{rules:?}");
    assert!(rules.contains("SECRET-NETRC-PASSWORD"), "{rules:?}");
    // .ssh/id_rsa, .netrc, src/app.py and .gitignore; build/ is excluded.
    assert_eq!(report["stats"]["files_scanned"], 4, "{stderr}");
    assert_eq!(
        report["stats"]["excluded"],
        serde_json::json!([{ "source": ".gitignore", "files": 0, "directories": 1 }])
    );
    assert!(
        stderr.contains("excluded: .gitignore 1 directory"),
        "{stderr}"
    );
    // The evidence is redacted: the password is nowhere in the report.
    let json = report.to_string();
    assert!(!json.contains(&password), "the password leaked: {json}");

    // Every other format says it too, and never shows the password.
    let run = |format: &str| {
        let out = audit(&sb, root, &["--scanners", "secrets", "--output", format]);
        let (stdout, _) = text(&out);
        assert!(!stdout.contains(&password), "{format}: the password leaked");
        stdout
    };
    let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).expect("SARIF is JSON");
    let notes = &sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"];
    let note = notes
        .as_array()
        .and_then(|n| n.iter().find(|n| n["descriptor"]["id"] == "files-excluded"))
        .unwrap_or_else(|| panic!("no files-excluded notification: {notes}"));
    assert_eq!(note["level"], "note");
    assert_eq!(note["message"]["text"], "excluded: .gitignore 1 directory");
    assert!(
        run("markdown").contains("- Excluded: .gitignore 1 directory"),
        "markdown"
    );
    assert!(
        run("github").contains("::notice::excluded: .gitignore 1 directory"),
        "github"
    );
}

/// Every credential of the labelled tree is found, no look-alike is.
#[test]
fn every_labelled_credential_is_found_and_no_look_alike() {
    let sb = sandbox();
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    let script = fixtures().join("secrets/materialize.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(root)
        .output()
        .expect("python3 runs (test.sh installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut found = BTreeSet::new();
    let mut safe = BTreeSet::new();
    for entry in walk(root) {
        let rel = entry
            .strip_prefix(root)
            .expect("under root")
            .to_string_lossy()
            .replace('\\', "/");
        match rel.split('/').nth(1) {
            Some("found") => found.insert(rel),
            Some("safe") => safe.insert(rel),
            _ => false,
        };
    }
    assert!(found.len() >= 50, "{found:?}");
    let (_, report, stderr) = audit_json(&sb, root, &["--scanners", "secrets"]);
    let files = finding_files(&report);
    let missed: Vec<&String> = found.iter().filter(|f| !files.contains(*f)).collect();
    let false_alarms: Vec<&String> = safe.iter().filter(|f| files.contains(*f)).collect();
    assert!(missed.is_empty(), "missed: {missed:?}\n{stderr}");
    assert!(
        false_alarms.is_empty(),
        "look-alikes reported: {false_alarms:?}"
    );
    assert_eq!(
        report["stats"]["files_scanned"].as_u64(),
        Some((found.len() + safe.len()) as u64),
        "every file, dotfiles included, is scanned"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

//! `agent security-audit` on hostile trees (issue 13, items 8 and 9), through
//! the real binary: a tree with tens of thousands of findings stays in
//! bounded memory and says how many findings the caps left out; the caps come
//! from config.toml and every report format counts the cut; a directory the
//! audit cannot read makes it incomplete (exit 1, listed as an error); a
//! Latin-1 file is scanned as text while a file with NUL bytes is binary.

use std::path::Path;
use std::process::{Command, Stdio};

use agent_tests::{Sandbox, text};

use super::code;
use super::security::sandbox;

/// A FAKE AWS access key id made of a counter (`AKIA` and 16 digits): the
/// built-in secrets scanner reports each one.
fn key(n: usize) -> String {
    format!("AKIA{n:016}")
}

/// `files` Python files of `lines` lines, one key per line, numbered from 0.
fn key_tree(root: &Path, files: usize, lines: usize) {
    let mut n = 0;
    for f in 0..files {
        let dir = root.join(format!("pkg{}", f / 50));
        std::fs::create_dir_all(&dir).expect("mkdir");
        let mut body = String::with_capacity(lines * 32);
        for i in 0..lines {
            body.push_str(&format!("k{i} = \"{}\"\n", key(n)));
            n += 1;
        }
        std::fs::write(dir.join(format!("keys_{f:04}.py")), body).expect("write");
    }
}

/// Forks the command it is given from a small Python process, waits for it
/// and writes "peak-RSS-KiB exit-code" (-1 when a signal ended it) to the
/// file named first.
const MEASURE: &str = r#"
import os, sys
out, argv = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
with open(out, "w") as f:
    f.write(f"{usage.ru_maxrss} {code}")
"#;

/// Runs `cmd` to the end and returns its exit code and peak RSS (KiB).
///
/// The command is started by a small Python process rather than by this
/// test process: Linux keeps, in a process's peak RSS, the high-water mark
/// of the memory it replaced at `exec` — for a direct child of the test
/// harness, the harness's own resident memory (hundreds of MiB while the
/// whole suite runs), which made the figure depend on the other tests.
/// A child of the small process starts from its few MiB.
fn run_measured(cmd: &Command, stdout: Stdio, stderr: Stdio) -> (i32, i64) {
    let report = tempfile::NamedTempFile::new().expect("report file");
    let mut wrapper = Command::new("python3");
    wrapper
        .arg("-c")
        .arg(MEASURE)
        .arg(report.path())
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdout(stdout)
        .stderr(stderr);
    if let Some(dir) = cmd.get_current_dir() {
        wrapper.current_dir(dir);
    }
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapper.env(k, v),
            None => wrapper.env_remove(k),
        };
    }
    let status = wrapper
        .status()
        .expect("running python3 to measure the agent");
    assert!(status.success(), "the measuring python3 failed: {status}");
    let report = std::fs::read_to_string(report.path()).expect("measurement");
    let (rss, code) = report.split_once(' ').expect("\"RSS CODE\"");
    (
        code.parse().expect("exit code"),
        rss.parse().expect("peak RSS"),
    )
}

#[test]
fn sixty_thousand_findings_stay_under_500_mb_and_the_summary_counts_the_cut() {
    // 60 files × 1,000 keys = 60,000 findings of one rule. Before the caps
    // every one was kept, copied into the report and the SARIF tree: a debug
    // build peaked at ~1.8 GB on 100,000 of them (10.6 GB on 1.2 M in
    // release). Now at most 100 per rule per file are listed, the rest only
    // counted, and the SARIF is written result by result.
    let sb = sandbox();
    let tree = tempfile::tempdir().expect("tree");
    key_tree(tree.path(), 60, 1000);
    let sarif = sb.home.path().join("report.sarif");
    let stderr_file = sb.home.path().join("stderr.txt");
    let dir = tree.path().display().to_string();
    let out = sarif.display().to_string();
    let cmd = sb.agent_cmd(&[
        "security-audit",
        &dir,
        "--output",
        "sarif",
        "--out",
        &out,
        "--fail-on",
        "none",
    ]);
    let stderr = Stdio::from(std::fs::File::create(&stderr_file).expect("stderr file"));
    let started = std::time::Instant::now();
    let (exit, peak_kib) = run_measured(&cmd, Stdio::null(), stderr);
    let took = started.elapsed();
    let stderr = std::fs::read_to_string(&stderr_file).expect("stderr");
    eprintln!(
        "60,000 findings: exit {exit}, peak RSS {} MiB, {took:?}",
        peak_kib / 1024
    );
    assert_eq!(exit, 0, "{stderr}");
    assert!(
        peak_kib < 500 * 1024,
        "peak RSS {} MiB, over 500 MiB\n{stderr}",
        peak_kib / 1024
    );

    // The summary counts every finding and says how many were not listed.
    assert!(
        stderr.contains("  total       60000 (6000 listed)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "warning: 54000 findings not listed (cut by the caps: 100 per rule per file, \
             10000 per rule, 100000 in all; security.max_findings_* in config.toml raise \
             them): SECRET-AWS-ACCESS-KEY 54000"
        ),
        "{stderr}"
    );

    // The report lists the first 100 of each file and counts the rest.
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    let run = &log["runs"][0];
    assert_eq!(run["results"].as_array().map(Vec::len), Some(6000));
    assert_eq!(run["properties"]["truncated"]["findings"], 54000);
    assert_eq!(
        run["properties"]["truncated"]["by_rule"]["SECRET-AWS-ACCESS-KEY"],
        54000
    );
    assert_eq!(run["properties"]["totalFindings"], 60000);
    let lines: Vec<u64> = run["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg0/keys_0000.py"
        })
        .map(|r| {
            r["locations"][0]["physicalLocation"]["region"]["startLine"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines, (1..=100).collect::<Vec<u64>>());
}

#[test]
fn caps_come_from_config_and_every_format_counts_the_cut() {
    let sb = sandbox();
    std::fs::create_dir_all(sb.paths().config_file().parent().expect("dir")).expect("mkdir");
    std::fs::write(
        sb.paths().config_file(),
        "[security]\nmax_findings_per_file_rule = 10\nmax_findings_per_rule = 25\n\
         max_findings_total = 1000\n",
    )
    .expect("config.toml");
    let tree = tempfile::tempdir().expect("tree");
    // 3 files × 30 keys: 10 listed per file, 25 for the rule: 65 cut.
    key_tree(tree.path(), 3, 30);
    let dir = tree.path().display().to_string();
    let audit = |format: &str, extra: &[&str]| {
        let mut args = vec!["security-audit", dir.as_str(), "--output", format];
        args.extend_from_slice(extra);
        sb.agent(&args)
    };

    let out = audit("json", &["--fail-on", "none"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(report["findings"].as_array().map(Vec::len), Some(25));
    assert_eq!(report["truncated"]["findings"], 65);
    assert_eq!(report["truncated"]["caps"]["per_file_rule"], 10);
    assert_eq!(report["truncated"]["caps"]["per_rule"], 25);
    assert_eq!(report["truncated"]["by_severity"]["high"], 65);
    // Counted, cut ones too: 90 high, 90 in all, 25 of them listed.
    let row = |name: &str, n: usize| format!("  {name:<10} {n:>6}");
    assert!(
        stderr.contains(&format!("{}\n", row("high", 90))),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{} (25 listed)\n", row("total", 90))),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: 65 findings not listed (cut by the caps: 10 per rule per file"),
        "{stderr}"
    );

    let sarif_text = text(&audit("sarif", &["--fail-on", "none"])).0;
    // Still valid SARIF 2.1.0 with the counts in run.properties.
    let sarif_file = sb.home.path().join("truncated.sarif");
    std::fs::write(&sarif_file, &sarif_text).expect("write");
    super::security::validate("sarif", &sarif_file);
    let sarif: serde_json::Value = serde_json::from_str(&sarif_text).expect("sarif");
    assert_eq!(sarif["runs"][0]["properties"]["truncated"]["findings"], 65);
    let notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .expect("notifications");
    assert!(
        notes
            .iter()
            .any(|n| n["descriptor"]["id"] == "findings-truncated"
                && n["message"]["text"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("65 findings not listed"))),
        "{notes:?}"
    );

    let md = text(&audit("markdown", &["--fail-on", "none"])).0;
    assert!(md.contains("| Not listed (caps) | 65 |"), "{md}");
    assert!(md.contains("- Not listed: 65 findings not listed"), "{md}");
    let gh = text(&audit("github", &["--fail-on", "none"])).0;
    assert!(gh.contains("::warning::65 findings not listed"), "{gh}");

    // The verdict counts what was cut: 90 findings, more than 80.
    let out = audit("json", &["--fail-on", "none", "--max-findings", "80"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains(
            "FAILED (fail on none, max findings 80): 90 findings, more than max_findings (80)"
        ),
        "{:?}",
        text(&out)
    );

    // A cap of 0 is refused, naming the key.
    std::fs::write(
        sb.paths().config_file(),
        "[security]\nmax_findings_total = 0\n",
    )
    .expect("config.toml");
    let out = audit("json", &[]);
    assert_ne!(code(&out), 0);
    assert!(
        text(&out).1.contains("security.max_findings_total"),
        "{:?}",
        text(&out)
    );
}

/// Whether this process may read any file whatever its mode (root, or
/// CAP_DAC_OVERRIDE): then the audit runs under `setpriv` with those
/// capabilities dropped, so that mode 000 blocks it as it blocks a user.
fn reads_everything() -> bool {
    let out = Command::new("id").arg("-u").output().expect("id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

/// The audit of `dir` as JSON, as an ordinary user would run it: under
/// `setpriv` without the capabilities that bypass file modes when the tests
/// run as root.
fn audit_as_a_user(sb: &Sandbox, dir: &Path) -> std::process::Output {
    let d = dir.display().to_string();
    let cmd = sb.agent_cmd(&["security-audit", &d, "--output", "json"]);
    if !reads_everything() {
        let mut cmd = cmd;
        return cmd.output().expect("agent");
    }
    let mut wrapped = Command::new("setpriv");
    wrapped
        .args(["--bounding-set", "-dac_override,-dac_read_search", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .current_dir(sb.project.path());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    wrapped.output().expect("setpriv")
}

#[test]
fn an_unreadable_directory_makes_the_audit_incomplete() {
    let sb = sandbox();
    let tree = tempfile::tempdir().expect("tree");
    let root = tree.path();
    std::fs::write(root.join("ok.py"), "x = 1\n").expect("write");
    let locked = root.join("locked");
    std::fs::create_dir(&locked).expect("mkdir");
    std::fs::write(locked.join("config.py"), format!("KEY = \"{}\"\n", key(7))).expect("write");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    if reads_everything() {
        // The setup must really lock the directory out, or the test proves nothing.
        let probe = Command::new("setpriv")
            .args([
                "--bounding-set",
                "-dac_override,-dac_read_search",
                "--",
                "ls",
            ])
            .arg(&locked)
            .output()
            .expect("setpriv (util-linux) is needed to run this test as root");
        assert!(
            !probe.status.success(),
            "setpriv did not drop the capabilities that bypass file modes"
        );
    }

    let out = audit_as_a_user(&sb, root);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (stdout, stderr) = text(&out);
    // Before: exit 0, "passed", the key in locked/ never looked at.
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(
        stderr.contains("error: not audited: locked: could not be read: "),
        "{stderr}"
    );
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(
        stderr.contains(
            "INCOMPLETE (fail on high): 1 path could not be read: the audit is incomplete"
        ),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(report["verdict"]["incomplete"], true);
    assert_eq!(report["verdict"]["failed"], true);
    assert_eq!(report["stats"]["unreadable"], 1);
    let errors = report["errors"].as_array().expect("errors");
    assert!(
        errors
            .iter()
            .any(|e| e["scanner"] == "walk" && e["file"] == "locked"),
        "{errors:?}"
    );
    assert_eq!(report["stats"]["files_scanned"], 1);
}

#[test]
fn a_latin1_file_is_scanned_and_a_nul_byte_means_binary() {
    let sb = sandbox();
    let tree = tempfile::tempdir().expect("tree");
    let root = tree.path();
    // Latin-1: `é` is the single byte 0xE9, not UTF-8.
    let mut latin1 = b"# Param\xe8tres du caf\xe9\n# cl\xe9: ".to_vec();
    latin1.extend_from_slice(key(1).as_bytes());
    latin1.push(b'\n');
    assert!(std::str::from_utf8(&latin1).is_err());
    std::fs::write(root.join("legacy.py"), &latin1).expect("write");
    // A NUL in the first 8 KiB: binary, as git decides; not scanned.
    let mut binary = b"\x00\x01blob".to_vec();
    binary.extend_from_slice(format!("\n{}\n", key(2)).as_bytes());
    std::fs::write(root.join("blob.dat"), &binary).expect("write");

    let d = root.display().to_string();
    let out = sb.agent(&["security-audit", &d, "--output", "json"]);
    let (stdout, stderr) = text(&out);
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    let found: Vec<(String, String, u64)> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["rule_id"].as_str().unwrap_or("").to_string(),
                f["location"]["file"].as_str().unwrap_or("").to_string(),
                f["location"]["start_line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    // Before: legacy.py was skipped as "binary" and the key missed.
    assert_eq!(
        found,
        vec![(
            "SECRET-AWS-ACCESS-KEY".to_string(),
            "legacy.py".to_string(),
            2
        )],
        "{stderr}"
    );
    assert_eq!(code(&out), 1, "a high finding fails the audit: {stderr}");
    let skipped = report["skipped"].as_array().expect("skipped");
    assert_eq!(
        skipped
            .iter()
            .map(|s| (s["path"].as_str(), s["reason"].as_str()))
            .collect::<Vec<_>>(),
        vec![(Some("blob.dat"), Some("binary"))]
    );
}

//! Crash-safe installs, through the real binary: `agent skill install` and
//! `skill remove` killed (SIGKILL, no destructor runs) at each rename, or
//! interrupted with Ctrl-C, never leave a ghost skill — one that `skill
//! list` shows and `skill call` runs while `skill remove` says it is not
//! installed. The next start finds exactly the old or the new version,
//! agrees with itself, and leaves no dot-entry behind.
//!
//! The kill points are the binary's debug-build fault injection
//! (`AGENT_FAULT_AT`, see host/registry/src/fault.rs).

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use agent_tests::{Sandbox, build_guest, text, tool_manifest, write_skill};

use super::{code, ok, sandbox};

/// A signed `hello` skill (rust-hello's `greet`) of `version`, in a source
/// directory of its own.
fn source(sb: &Sandbox, key: &agent_trust::SecretKey, version: &str) -> PathBuf {
    let hello = std::fs::read(build_guest("rust-hello")).expect("rust-hello");
    let manifest =
        tool_manifest("hello", "").replace("version: 0.1.0", &format!("version: {version}"));
    let dir = sb.home.path().join("src").join(version).join("hello");
    write_skill(&dir, &manifest, &hello, Some(key))
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf8")
}

/// The entries of the user skills directory whose name starts with a dot.
fn dot_entries(sb: &Sandbox) -> Vec<String> {
    std::fs::read_dir(sb.paths().user_skills_dir())
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// The versions of `hello` that `skill list` shows, and its stderr.
fn listed(sb: &Sandbox) -> (Vec<String>, String) {
    let out = sb.agent(&["skill", "list", "--format", "json"]);
    let rows: serde_json::Value = serde_json::from_str(&ok(&out)).expect("json");
    let versions = rows
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["name"] == "hello")
        .map(|r| r["version"].as_str().expect("version").to_string())
        .collect();
    (versions, text(&out).1)
}

fn greet(sb: &Sandbox) -> std::process::Output {
    sb.agent(&[
        "skill",
        "call",
        "hello",
        "greet",
        "--input",
        r#"{"name":"x"}"#,
    ])
}

/// After a crash: the next start recovers, and every command agrees that
/// `hello` is installed at `expected` (or not at all).
fn assert_one_truth(sb: &Sandbox, case: &str, expected: Option<&str>) {
    let (versions, stderr) = listed(sb);
    println!("{case}: next start lists {versions:?}; said: {stderr}");
    let want: Vec<String> = expected.iter().map(|v| v.to_string()).collect();
    assert_eq!(versions, want, "{case}: {stderr}");
    assert_eq!(dot_entries(sb), Vec::<String>::new(), "{case}: leftovers");
    let installed = sb.paths().user_skills_dir().join("hello");
    let call = greet(sb);
    match expected {
        Some(v) => {
            assert!(ok(&call).contains("Hello, x!"), "{case}");
            let yaml = std::fs::read_to_string(installed.join("SKILL.yaml")).expect("manifest");
            assert!(yaml.contains(&format!("version: {v}")), "{case}: {yaml}");
            let out = sb.agent(&["skill", "remove", "hello"]);
            assert!(ok(&out).contains("removed hello"), "{case}");
            assert_eq!(listed(sb).0, Vec::<String>::new(), "{case}: after remove");
        }
        None => {
            assert_eq!(code(&call), 1, "{case}: {:?}", text(&call));
            assert!(
                text(&call).1.contains("no skill named `hello`"),
                "{case}: {:?}",
                text(&call)
            );
            // Not installed for `skill remove` either: never heard of, or
            // (its record outlived the directory) already gone.
            let out = sb.agent(&["skill", "remove", "hello"]);
            let (stdout, stderr) = text(&out);
            if code(&out) == 0 {
                assert!(
                    stdout.contains("hello was already gone"),
                    "{case}: {stdout}"
                );
            } else {
                assert_eq!(code(&out), 1, "{case}: {stderr}");
                assert!(
                    stderr.contains("no skill `hello` is installed"),
                    "{case}: {stderr}"
                );
            }
        }
    }
    assert!(!installed.exists(), "{case}");
}

/// Runs `args` with the binary killing itself at `point`; asserts that it
/// did die there (a test whose fault point is never reached proves nothing).
fn killed_at(sb: &Sandbox, args: &[&str], point: &str, no_exchange: bool) {
    let mut cmd = sb.agent_cmd(args);
    cmd.env("AGENT_FAULT_AT", point);
    if no_exchange {
        cmd.env("AGENT_FAULT_NO_EXCHANGE", "1");
    }
    let out = cmd.output().expect("running agent");
    assert_eq!(
        out.status.signal(),
        Some(9),
        "{point}: expected SIGKILL at the fault point, got {:?}: {:?}",
        out.status,
        text(&out)
    );
}

#[test]
fn a_staging_directory_holding_a_valid_skill_is_never_loaded() {
    let sb = sandbox();
    let key = sb.trusted_key();
    let src = source(&sb, &key, "0.1.0");
    // What an install killed before its commit left behind: a complete,
    // validly signed skill in a staging directory.
    let user = sb.paths().user_skills_dir();
    let staging = user.join(".agent-staging-Ab12Cd");
    agent_tests::copy_tree(&src, &staging);
    // A dot-directory that is not ours holds a valid skill too.
    let hidden = user.join(".hidden");
    agent_tests::copy_tree(&src, &hidden);

    let (versions, stderr) = listed(&sb);
    println!("skill list with a leftover staging dir: {versions:?}; said: {stderr}");
    assert_eq!(versions, Vec::<String>::new(), "a ghost was loaded");
    assert!(
        stderr.contains(".agent-staging-Ab12Cd, left by an interrupted install"),
        "{stderr}"
    );
    assert!(
        !staging.exists(),
        "the stale staging dir is deleted at start"
    );
    assert!(
        hidden.join("SKILL.yaml").is_file(),
        "a dot-dir not ours is kept"
    );
    let call = greet(&sb);
    assert_eq!(code(&call), 1, "{:?}", text(&call));
    assert!(text(&call).1.contains("no skill named `hello`"));
}

/// One kill: what was being done, and the one version that must remain.
struct Case {
    what: &'static str,
    /// The fault point (`AGENT_FAULT_AT`).
    point: &'static str,
    /// The replace takes the move-aside path (no rename-exchange).
    no_exchange: bool,
    /// 0.1.0 was installed before (the killed command replaces or removes it).
    installed_before: bool,
    /// The version every command must agree on afterwards.
    after: Option<&'static str>,
}

const fn case(
    what: &'static str,
    point: &'static str,
    no_exchange: bool,
    installed_before: bool,
    after: Option<&'static str>,
) -> Case {
    Case {
        what,
        point,
        no_exchange,
        installed_before,
        after,
    }
}

const CASES: [Case; 8] = [
    case(
        "first install, verified in staging",
        "install:staged",
        false,
        false,
        None,
    ),
    case(
        "first install, renamed in place",
        "install:after-rename",
        false,
        false,
        Some("0.1.0"),
    ),
    case(
        "replace, verified in staging",
        "install:staged",
        false,
        true,
        Some("0.1.0"),
    ),
    case(
        "replace, after the exchange",
        "install:after-exchange",
        false,
        true,
        Some("0.2.0"),
    ),
    case(
        "replace without exchange, old set aside",
        "install:after-aside",
        true,
        true,
        Some("0.1.0"),
    ),
    case(
        "replace without exchange, new in place",
        "install:after-replace",
        true,
        true,
        Some("0.2.0"),
    ),
    case(
        "replace without exchange, verified",
        "install:staged",
        true,
        true,
        Some("0.1.0"),
    ),
    case(
        "remove, renamed to a dot-entry",
        "remove:after-rename",
        false,
        true,
        None,
    ),
];

#[test]
fn install_and_remove_killed_at_each_rename_leave_exactly_one_version() {
    for c in CASES {
        let sb = sandbox();
        let key = sb.trusted_key();
        let v1 = source(&sb, &key, "0.1.0");
        let v2 = source(&sb, &key, "0.2.0");
        if c.installed_before {
            ok(&sb.agent(&["skill", "install", s(&v1)]));
        }
        if c.point.starts_with("remove:") {
            killed_at(&sb, &["skill", "remove", "hello"], c.point, c.no_exchange);
        } else {
            let new = if c.installed_before { &v2 } else { &v1 };
            killed_at(&sb, &["skill", "install", s(new)], c.point, c.no_exchange);
        }
        println!(
            "{}: killed at {}, left {:?}",
            c.what,
            c.point,
            dot_entries(&sb)
        );
        assert_one_truth(&sb, c.what, c.after);
    }
}

#[test]
fn ctrl_c_during_install_leaves_no_ghost_and_a_live_install_is_not_cleaned() {
    let sb = sandbox();
    let key = sb.trusted_key();
    let v1 = source(&sb, &key, "0.1.0");
    let mut child = sb
        .agent_cmd(&["skill", "install", s(&v1)])
        .env("AGENT_FAULT_WAIT_AT", "install:staged")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn agent");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while !line.contains("fault: waiting at install:staged") {
        line.clear();
        assert!(
            stderr.read_line(&mut line).expect("read") > 0,
            "the install ended before its fault point"
        );
    }

    // While it holds the staged skill: another process's start neither
    // loads it nor deletes it (the install holds the directory's lock).
    let (versions, said) = listed(&sb);
    assert_eq!(versions, Vec::<String>::new(), "{said}");
    let live = dot_entries(&sb);
    assert!(
        live.iter().any(|n| n.starts_with(".agent-staging-")),
        "the live staging dir was cleaned by another process: {live:?}"
    );

    // Ctrl-C: the default action ends the process where it is.
    let pid = child.id().to_string();
    let kill = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .expect("kill");
    assert!(kill.success());
    let status = child.wait().expect("wait");
    assert_eq!(status.signal(), Some(2), "{status:?}");

    assert_one_truth(&sb, "install interrupted by Ctrl-C", None);
    // And the next install goes through.
    let out = sb.agent(&["skill", "install", s(&v1)]);
    assert!(
        ok(&out).contains("installed hello 0.1.0"),
        "{:?}",
        text(&out)
    );
    assert_eq!(listed(&sb).0, vec!["0.1.0".to_string()]);
    assert_eq!(dot_entries(&sb), Vec::<String>::new());
}

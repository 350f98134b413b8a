//! A fresh home (every ephemeral CI runner) through the real binary: listing
//! compiles nothing, and the first tool call uses the built-ins' code
//! precompiled when the binary was built instead of compiling them.

use std::path::PathBuf;

use agent_tests::text;

use super::cache::artifacts;
use super::{ok, sandbox, write};

/// Issue 15: the first `agent skill list` on a fresh home compiled the
/// built-in components (0.76–3.1 s) before printing a list that needs only
/// their manifests. Listing reads manifests and signatures: afterwards the
/// compiled-component cache holds nothing, and no log line says a component
/// was loaded.
#[test]
fn listing_on_a_fresh_home_compiles_nothing() {
    let sb = sandbox();
    let out = sb
        .agent_cmd(&["skill", "list", "-v"])
        .env("AGENT_LOG", "debug")
        .output()
        .expect("running agent");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for name in ["core-tools", "git", "security-base"] {
        assert!(stdout.contains(name), "{name} is listed:\n{stdout}");
    }
    assert!(stdout.contains("builtin"), "{stdout}");
    assert_eq!(
        artifacts(&sb),
        Vec::<PathBuf>::new(),
        "listing wrote compiled code:\n{stderr}"
    );
    assert!(
        !stderr.contains(": component "),
        "listing loaded a component:\n{stderr}"
    );

    // The JSON listing still says who signed each built-in.
    let json = ok(&sb.agent(&["skill", "list", "--format", "json"]));
    let rows: serde_json::Value = serde_json::from_str(&json).expect("json");
    let core = rows
        .as_array()
        .expect("array")
        .iter()
        .find(|r| r["name"] == "core-tools")
        .expect("core-tools row");
    assert_eq!(core["signature"]["status"], "builtin", "{core}");
    assert_eq!(artifacts(&sb), Vec::<PathBuf>::new());
}

/// Issue 15: the first tool call on a fresh home compiled core-tools (the
/// bulk of a 0.75 s two-turn session). The build precompiled it with the
/// runtime's engine configuration: the call takes that code (the debug log
/// says so), and the cache then holds it sealed, so the next call is a
/// cache hit as for any other skill.
#[test]
fn the_first_call_on_a_fresh_home_uses_the_precompiled_built_in() {
    let sb = sandbox();
    write(sb.project.path(), "hello.txt", "hello from the project\n");
    let call = || {
        sb.agent_cmd(&[
            "skill",
            "call",
            "core-tools",
            "read_file",
            "--input",
            r#"{"path":"hello.txt"}"#,
            "--allow",
            "core-tools/file:read",
        ])
        .env("AGENT_LOG", "debug")
        .output()
        .expect("running agent")
    };
    let first = call();
    let (stdout, stderr) = text(&first);
    assert!(first.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("hello from the project"), "{stdout}");
    assert!(
        stderr.contains("skill core-tools: component Precompiled"),
        "the precompiled code was not used:\n{stderr}"
    );
    assert!(!stderr.contains("does not fit this engine"), "{stderr}");
    assert_eq!(artifacts(&sb).len(), 1, "{:?}", artifacts(&sb));

    let second = call();
    let (stdout, stderr) = text(&second);
    assert!(
        stdout.contains("hello from the project"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("skill core-tools: component Hit"),
        "the second call uses the cache:\n{stderr}"
    );
}

/// Issue 15 (binary size ≤ 40 MB): only core-tools' native code is embedded
/// in the binary; the other built-ins' (security-base's alone was 3 MB) are
/// not. On a fresh home the first call of the git built-in compiles it into
/// the sealed cache, like any other skill (the debug log says `Compiled`, not
/// `Precompiled`), answers, and the next call is a cache hit.
#[test]
fn other_built_ins_are_compiled_at_first_use_and_then_cached() {
    let sb = sandbox();
    let p = sb.project.path();
    for args in [
        &["init", "-q"][..],
        &["config", "user.name", "Test User"],
        &["config", "user.email", "test@example.com"],
        &["config", "commit.gpgsign", "false"],
    ] {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(p)
            .output()
            .expect("running git");
        assert!(out.status.success(), "git {args:?}");
    }
    write(p, "notes.txt", "first line\n");
    let call = || {
        sb.agent_cmd(&[
            "skill",
            "call",
            "git",
            "git_status",
            "--input",
            "{}",
            "--allow",
            "git:read",
        ])
        .env("AGENT_LOG", "debug")
        .output()
        .expect("running agent")
    };
    let first = call();
    let (stdout, stderr) = text(&first);
    assert!(first.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("notes.txt"), "{stdout}");
    assert!(
        stderr.contains("skill git: component Compiled"),
        "git is compiled at first use:\n{stderr}"
    );
    assert!(
        !stderr.contains("skill git: component Precompiled"),
        "{stderr}"
    );
    assert_eq!(artifacts(&sb).len(), 1, "{:?}", artifacts(&sb));

    let second = call();
    let (stdout, stderr) = text(&second);
    assert!(second.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("skill git: component Hit"),
        "the second call uses the cache:\n{stderr}"
    );
}

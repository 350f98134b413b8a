//! The `exec` import through the real binary: the program a name runs comes
//! from the agent's own PATH without the project's entries, and
//! `skills.skill_shell_timeout` is each program's time limit (clamped to the
//! host's maximum). The hostile party here is the repository: a `bin/echo`
//! that a user's PATH (`./bin`, `node_modules/.bin`, ...) puts first.

use std::time::{Duration, Instant};

use agent_tests::{Sandbox, text};

const MARKER: &str = "PWNED";

fn sandbox() -> Sandbox {
    Sandbox::with_binary(env!("CARGO_BIN_EXE_agent"))
}

/// `agent skill call core-tools exec` with `input`, granting `program`.
fn exec(
    sb: &Sandbox,
    program: &str,
    input: &str,
    path: Option<std::ffi::OsString>,
) -> std::process::Output {
    let allow = format!("core-tools/shell:exec:{program}");
    let mut cmd = sb.agent_cmd(&[
        "skill",
        "call",
        "core-tools",
        "exec",
        "--allow",
        &allow,
        "--input",
        input,
    ]);
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    cmd.output().expect("running agent")
}

fn write_config(sb: &Sandbox, toml: &str) {
    let dir = &sb.paths().config_dir;
    std::fs::create_dir_all(dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), toml).expect("config");
}

#[test]
fn a_project_bin_first_on_the_agents_path_is_never_run() {
    let sb = sandbox();
    let bin = sb.project.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let echo = bin.join("echo");
    agent_tests::write_executable(
        &echo,
        &format!("#!/bin/sh\ntouch {MARKER}\necho project echo\n"),
    );

    // The user's PATH puts the project's bin/ first (relative and absolute).
    let host = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin.clone(), "bin".into()];
    dirs.extend(std::env::split_paths(&host));
    let path = std::env::join_paths(dirs).expect("PATH");

    let out = exec(
        &sb,
        "echo",
        r#"{"program":"echo","args":["from","host"]}"#,
        Some(path),
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("stdout:\nfrom host\n"), "{stdout}");
    assert!(!stdout.contains("project echo"), "{stdout}");
    assert!(
        !sb.project.path().join(MARKER).exists(),
        "the project's echo ran"
    );
}

#[test]
fn skill_shell_timeout_in_the_config_is_each_programs_limit() {
    let sb = sandbox();
    write_config(&sb, "[skills]\nskill_shell_timeout = \"1s\"\n");
    let started = Instant::now();
    let out = exec(&sb, "sleep", r#"{"program":"sleep","args":["20"]}"#, None);
    let elapsed = started.elapsed();
    let (stdout, stderr) = text(&out);
    println!("{stdout}{stderr} after {elapsed:?}");
    assert!(
        stderr.contains("killed at the time limit (no exit code)"),
        "{stdout}\n{stderr}"
    );
    assert!(elapsed < Duration::from_secs(15), "{elapsed:?}");
    let log = std::fs::read_to_string(sb.paths().audit_log_path()).expect("audit");
    assert!(log.contains("timed out after 1000 ms"), "{log}");
}

/// Issue 15, item 10: `sleep 100` killed at the time limit used to exit 0
/// with the kill reported as an ordinary answer. A killed program is a failed
/// call: the CLI exits non-zero and `exec`'s result (the error the model and
/// the user see) says how the program ended, with what it printed.
#[test]
fn a_program_killed_at_the_time_limit_is_a_failed_call() {
    let sb = sandbox();
    write_config(&sb, "[skills]\nskill_shell_timeout = \"1s\"\n");
    let out = exec(&sb, "sleep", r#"{"program":"sleep","args":["100"]}"#, None);
    let (stdout, stderr) = text(&out);
    println!("{stdout}{stderr}");
    // Non-zero: 1 for the failed call, 4 while core-tools' unrelated
    // file:read/file:write refusals are also reported (issue 15, item 5).
    assert!(
        matches!(out.status.code(), Some(1 | 4)),
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains(
            "error: core-tools.exec failed: killed at the time limit (no exit code)\n\
             stdout: (empty)\nstderr: (empty)"
        ),
        "{stderr}"
    );
    assert!(
        stdout.trim().is_empty(),
        "a failed call prints no result: {stdout}"
    );
}

#[test]
fn a_skill_shell_timeout_above_the_host_maximum_is_clamped_with_a_warning() {
    let sb = sandbox();
    write_config(&sb, "[skills]\nskill_shell_timeout = \"10m\"\n");
    let out = exec(&sb, "echo", r#"{"program":"echo","args":["hi"]}"#, None);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "warning: skills.skill_shell_timeout (600 s) is above the host's maximum for a program; using 120 s"
        ),
        "{stderr}"
    );
}

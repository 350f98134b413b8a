//! Hostile YAML through the real binary: 200 KB of nested lists used to
//! overflow the stack (exit 134, "has overflowed its stack") in
//! `security-audit` and in any command taking `--capabilities`. Every YAML and
//! JSON the product reads is checked by `agent_bounded` first: refused at the
//! 65th level, naming file, line and limit, in well under a second.

use std::time::{Duration, Instant};

use super::{code, sandbox, text, write};

/// 100,000 levels of `- - - …` (200 KB) under `prefix`.
fn nested_lists(prefix: &str) -> String {
    format!("{prefix}{}x\n", "- ".repeat(100_000))
}

/// Runs `args`, asserting a clean refusal (exit 2, no abort, no backtrace)
/// that says `expected`, in about the time the command takes to start. A
/// skill's first use compiles it (seconds in a debug build): callers use
/// what they time once first; `skill list` runs here.
fn refused(sb: &agent_tests::Sandbox, args: &[&str], expected: &str) {
    assert_eq!(code(&sb.agent(&["skill", "list"])), 0);
    let started = Instant::now();
    let out = sb.agent(args);
    let took = started.elapsed();
    let (stdout, stderr) = text(&out);
    assert_eq!(
        code(&out),
        2,
        "{args:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(stderr.contains(expected), "{args:?}: {stderr}");
    assert!(!stderr.contains("overflowed its stack"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(took < Duration::from_secs(3), "{args:?} took {took:?}");
}

#[test]
fn a_200_kb_security_yaml_of_nested_lists_is_refused_not_a_stack_overflow() {
    let sb = sandbox();
    let p = sb.project.path();
    write(p, "src/app.py", "print('hi')\n");
    // security-base is compiled at its first use (only core-tools' native
    // code is in the binary): a clean audit first, so the timed one below
    // measures the refusal, not the compile.
    assert_eq!(code(&sb.agent(&["security-audit", "."])), 0);
    write(p, ".security.yaml", &nested_lists("rules:\n  "));
    refused(
        &sb,
        &["security-audit", "."],
        ".security.yaml:2:129: YAML nested deeper than the limit of 64 levels; \
         flatten the document",
    );
}

#[test]
fn a_200_kb_capabilities_file_of_nested_lists_is_refused_by_run_and_skill_list() {
    let sb = sandbox();
    let caps = sb.project.path().join("deep.yaml");
    std::fs::write(&caps, nested_lists("allow:\n  ")).expect("write");
    let caps = caps.to_str().expect("utf8");
    let expected = "deep.yaml: line 2, column 129: YAML nested deeper than the limit of 64 \
                    levels; flatten the document";
    refused(
        &sb,
        &["run", "-p", "hello", "--capabilities", caps],
        expected,
    );
    refused(&sb, &["skill", "list", "--capabilities", caps], expected);
}

#[test]
fn deeply_nested_tool_input_is_refused_by_the_limit_before_the_skill_runs() {
    // serde_json stopped this at its own 128 levels; the tool-input limit is
    // 64, so that the session record wrapping an accepted input stays
    // readable, and the message names the limit.
    let sb = sandbox();
    let input = format!("{{\"path\": {}{}}}", "[".repeat(200), "]".repeat(200));
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "read_file",
        "--allow",
        "file:read",
        "--input",
        &input,
    ]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert_eq!(
        text(&out).1.trim(),
        "error: --input for `read_file`: input refused: JSON nested deeper than the limit of 64 \
         levels; flatten the document"
    );
}

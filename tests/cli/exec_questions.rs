//! One `exec` call asks one question (issue 15, item 5). Before, running
//! `git log` through core-tools' `exec` on a terminal asked three: file:write
//! (the tool requires approval, so it was mounted for writing), then, denied,
//! file:read, and only then shell:exec — the one the call needs. core-tools
//! now declares `files: none` for `exec` (the program runs on the host
//! through the `exec` import; the call needs no mount).

use std::process::Stdio;

use super::{sandbox, write};

/// `agent skill call core-tools exec` of `git log --oneline` on a real
/// terminal (`script`), with `answers` typed on its stdin; the transcript.
fn call_on_a_terminal(sb: &agent_tests::Sandbox, answers: &str) -> String {
    let mut child = std::process::Command::new("script")
        .args(["-qec"])
        .arg(format!(
            "{} skill call core-tools exec --input '{{\"program\":\"git\",\"args\":[\"log\",\"--oneline\"]}}'",
            env!("CARGO_BIN_EXE_agent")
        ))
        .arg("/dev/null")
        .current_dir(sb.project.path())
        .env("AGENT_HOME", sb.home.path())
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script");
    use std::io::Write;
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(answers.as_bytes()).expect("answers");
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdout(Stdio::null())
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

#[test]
fn exec_of_git_log_asks_once_for_shell_exec_only() {
    let sb = sandbox();
    let root = sb.project.path();
    write(root, "README.md", "hello\n");
    git(root, &["init", "-q"]);
    git(root, &["add", "README.md"]);
    git(
        root,
        &[
            "-c",
            "user.name=T",
            "-c",
            "user.email=t@example.com",
            "commit",
            "-q",
            "-m",
            "first commit",
        ],
    );
    // Answers for three questions, in case it asks them: deny, deny, once.
    // Asked once, the first answer ("o") is the one used.
    let transcript = call_on_a_terminal(&sb, "o\nd\nd\n");
    let questions: Vec<&str> = transcript
        .lines()
        .filter(|l| l.contains("asks for"))
        .collect();
    assert_eq!(
        questions,
        vec![
            "Skill `core-tools` asks for shell:exec (git) — run programs (no shell) inside the project"
        ],
        "{transcript}"
    );
    assert!(transcript.contains("first commit"), "{transcript}");
    assert!(transcript.contains("exit code: 0"), "{transcript}");
    // Nothing about files was decided for this call.
    let audit = std::fs::read_to_string(sb.paths().audit_log_path()).expect("audit");
    assert!(
        !audit.contains("\"capability\":\"file:"),
        "no file decision: {audit}"
    );
    assert!(audit.contains("\"capability\":\"shell:exec\""), "{audit}");
}

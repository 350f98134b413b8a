//! `agent run --skills NAME` of a SKILL.md skill: its body, with `$ARGUMENTS` and `$1`
//! substituted, reaches the model with the task; its `!` lines run only with
//! `shell:exec:<program>` granted to that skill — otherwise left out, and the user told
//! which grant would run them.

use agent_tests::model_server::{ModelServer, Wire, tokio_rt};
use agent_tests::text;

use super::super::{sandbox, write};
use super::{audit, fixtures};

fn run(sb: &agent_tests::Sandbox, server: &ModelServer, extra: &[&str]) -> std::process::Output {
    let skills = format!("{},full", fixtures().display());
    let mut args = vec![
        "run",
        "--provider",
        "anthropic",
        "--model",
        "test-model",
        "--base-url",
        server.url(),
        "--skills",
        &skills,
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-p", "release-notes v2"]);
    sb.agent_cmd(&args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent")
}

fn first_request(server: &ModelServer) -> String {
    server.requests()[0].body.to_string()
}

#[test]
fn skillmd_body_reaches_the_model_and_commands_run_only_with_the_grant() {
    let rt = tokio_rt();
    let sb = sandbox();
    write(
        &sb.paths().config_dir,
        "config.toml",
        "[skills]\nmax_llm_calls_per_turn = 5\n",
    );

    // Without a grant: the body arrives, the `!` lines are left out and named.
    let server = rt
        .block_on(ModelServer::start(vec![Wire::Anthropic.answer("ok")]))
        .expect("server");
    let out = run(&sb, &server, &[]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let body = first_request(&server);
    assert!(body.contains("BODY-MARKER-FULL"), "{body}");
    assert!(
        body.contains("Focus on: release-notes v2 (first word: release-notes)."),
        "{body}"
    );
    assert!(
        body.contains("GUIDE-MARKER"),
        "`!read` includes the reference: {body}"
    );
    assert!(!body.contains("git version"), "{body}");
    assert!(!body.contains("hello from the full skill"), "{body}");
    assert!(
        stderr.contains("`!git --version` left out: not run"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow full/shell:exec:git"), "{stderr}");
    let script = fixtures().join("full/scripts/hello.sh");
    assert!(
        stderr.contains(&format!("--allow full/shell:exec:{}", script.display())),
        "{stderr}"
    );
    assert!(
        audit(&sb).lines().any(|l| l.contains("\"skill\":\"full\"")
            && l.contains("shell:exec")
            && l.contains("denied")),
        "the refusal is audited: {}",
        audit(&sb)
    );

    // With the grants: both run through the exec path, and are audited.
    let server = rt
        .block_on(ModelServer::start(vec![Wire::Anthropic.answer("ok")]))
        .expect("server");
    let git = "full/shell:exec:git".to_string();
    let hello = format!("full/shell:exec:{}", script.display());
    let out = run(&sb, &server, &["--allow", &git, "--allow", &hello]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let body = first_request(&server);
    assert!(body.contains("git version"), "{body}");
    assert!(
        body.contains("hello from the full skill's script: release-notes"),
        "{body}"
    );
    assert!(!stderr.contains("left out"), "{stderr}");
    assert!(
        audit(&sb).lines().any(|l| l.contains("\"skill\":\"full\"")
            && l.contains("hello.sh release-notes")
            && l.contains("exit 0")),
        "{}",
        audit(&sb)
    );
}

#[test]
fn skillmd_a_skill_the_scan_refuses_is_not_loaded() {
    let rt = tokio_rt();
    let sb = sandbox();
    let server = rt
        .block_on(ModelServer::start(vec![Wire::Anthropic.answer("ok")]))
        .expect("server");
    let skills = format!("{},injected", fixtures().display());
    let out = sb
        .agent_cmd(&[
            "run",
            "--provider",
            "anthropic",
            "--model",
            "m",
            "--base-url",
            server.url(),
            "--skills",
            &skills,
            "-p",
            "task",
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("agent");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("skill `injected` was not loaded: the content scan found"),
        "{stderr}"
    );
    assert!(
        stderr.contains("SKILL.md:7: high [prompt-injection]"),
        "{stderr}"
    );
    assert!(server.requests().is_empty(), "the model was never asked");
    assert!(
        audit(&sb).contains("refused: content scan"),
        "{}",
        audit(&sb)
    );
}

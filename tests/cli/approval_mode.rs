//! `agent.approval_mode` / `AGENT_APPROVAL_MODE` through `agent run`
//! (issue 15, item 2). Before, the mode showed in `agent config show` and
//! was read by nothing: `auto` still answered an `edit` "not approved",
//! `deny` still ran it. Each mode is checked on the same script (the model
//! edits notes.txt, then answers), against a model server on 127.0.0.1.

use agent_tests::model_server::{ModelServer, Wire, jsonl as events, tokio_rt};
use serde_json::{Value, json};

use super::{sandbox, write};

struct Run {
    code: i32,
    events: Vec<Value>,
    stderr: String,
    file: String,
}

impl Run {
    fn approval(&self) -> &Value {
        self.events
            .iter()
            .find(|e| e["type"] == "approval")
            .unwrap_or_else(|| panic!("no approval event: {:?}", self.events))
    }
}

/// `agent run` of the edit script with `env` and `config` (config.toml text).
fn run(env: &[(&str, &str)], config: Option<&str>, extra: &[&str]) -> Run {
    let wire = Wire::Anthropic;
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            wire.tool(
                "call_e",
                "edit",
                &json!({"path": "notes.txt", "old": "world", "new": "agent"}),
            ),
            wire.answer("Done."),
        ]))
        .expect("server");
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello world\n");
    if let Some(text) = config {
        let file = sb.paths().config_file();
        std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
        std::fs::write(&file, text).expect("config");
    }
    let mut args = super::run_jsonl(server.url(), &["--prompt", "Greet the agent"]);
    args.extend_from_slice(extra);
    let mut cmd = sb.agent_cmd(&args);
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .env_remove("AGENT_APPROVAL_MODE")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("agent");
    Run {
        code: out.status.code().unwrap_or(-1),
        events: events(&String::from_utf8_lossy(&out.stdout)),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        file: std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("notes"),
    }
}

#[test]
fn prompt_mode_leaves_headless_approval_to_the_flags() {
    // Only file:read: nothing approves the edit.
    let r = run(
        &[("AGENT_APPROVAL_MODE", "prompt")],
        None,
        &["--allow", "file:read"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.approval()["approved"], false);
    assert_eq!(
        r.approval()["reason"],
        "this tool needs approval (grant its permission with --allow, or pass --yes)"
    );
    assert_eq!(r.file, "hello world\n");
    // An --allow beyond file:read approves it and grants the write.
    let r = run(
        &[("AGENT_APPROVAL_MODE", "prompt")],
        None,
        &["--allow", "file:read", "--allow", "file:write"],
    );
    assert_eq!(r.approval()["approved"], true, "{}", r.stderr);
    assert_eq!(r.file, "hello agent\n");
}

#[test]
fn auto_mode_approves_without_asking_and_the_grants_still_decide_the_write() {
    // Before: "not approved", exactly as in prompt mode.
    let r = run(
        &[("AGENT_APPROVAL_MODE", "auto")],
        None,
        &["--allow", "file:read"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.approval()["approved"], true, "{:?}", r.events);
    // Approved is not granted: without file:write the edit is denied, with
    // the flag that would grant it, and the file is unchanged.
    let denial = r
        .events
        .iter()
        .find(|e| e["type"] == "denial")
        .unwrap_or_else(|| panic!("no denial: {:?}", r.events));
    assert_eq!(denial["permission"], "file:write");
    assert!(
        r.stderr.contains("denied: core-tools file:write"),
        "{}",
        r.stderr
    );
    assert_eq!(r.file, "hello world\n");
}

#[test]
fn deny_mode_in_config_toml_refuses_even_with_an_allow_and_yes_overrides_it() {
    let config = "[agent]\napproval_mode = \"deny\"\n";
    // Before: --allow file:write approved the edit and it ran.
    let r = run(
        &[],
        Some(config),
        &["--allow", "file:read", "--allow", "file:write"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.approval()["approved"], false, "{:?}", r.events);
    assert_eq!(
        r.approval()["reason"],
        "tools that need approval are refused by `agent.approval_mode = \"deny\"` \
         (config.toml or AGENT_APPROVAL_MODE); pass --yes to approve them for this run"
    );
    assert_eq!(r.file, "hello world\n");
    // A flag overrides the configuration.
    let r = run(
        &[],
        Some(config),
        &["--allow", "file:read", "--allow", "file:write", "--yes"],
    );
    assert_eq!(r.approval()["approved"], true, "{}", r.stderr);
    assert_eq!(r.file, "hello agent\n");
}

#[test]
fn keys_that_would_have_no_effect_are_refused_with_the_reason() {
    let sb = sandbox();
    let file = sb.paths().config_file();
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    // (`security.enable_llm_analysis` and `max_llm_calls` are real keys
    // now: the deep analysis reads them, tests/cli/deep.rs.)
    // `[wiki]` is real now (`agent wiki`, tests/cli/wiki.rs): a bad value of
    // it is what is refused, naming the line, the key and what is accepted.
    let (text, needle) = (
        "[wiki]\nformat = \"pdf\"\n",
        "config.toml:2: wiki.format: expected one of \"raw-md\", \"mkdocs\", \"hugo\", \"docusaurus\"",
    );
    std::fs::write(&file, text).expect("config");
    let out = sb.agent(&["config", "show"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{text}");
    assert!(stderr.contains(needle), "{text}: {stderr}");
}

/// The TUI with `AGENT_APPROVAL_MODE=MODE` (and `extra` flags) over the edit
/// script; the screen once the model answered, and notes.txt then.
fn tui(mode: &str, extra: &str) -> (String, String) {
    use std::time::Duration;
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.tool(
                "call_e",
                "edit",
                &json!({"path": "notes.txt", "old": "world", "new": "agent"}),
            ),
            Wire::Anthropic.answer("Finished with notes.txt."),
        ]))
        .expect("server");
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello world\n");
    let command = format!(
        "env -u CI AGENT_HOME='{}' NO_COLOR=1 ANTHROPIC_API_KEY=test-key AGENT_APPROVAL_MODE={mode} \
         '{}' --provider anthropic --model test-model --base-url '{}' {extra}",
        sb.home.path().display(),
        env!("CARGO_BIN_EXE_agent"),
        server.url(),
    );
    let project = sb.project.path().display().to_string();
    let tmux = super::tui::Tmux::start(
        format!("agent-approval-{mode}-{}", std::process::id()),
        &project,
        &command,
    );
    let long = Duration::from_secs(60);
    tmux.wait_for("/help", long)
        .unwrap_or_else(|s| panic!("no first frame:\n{s}"));
    tmux.keys(&["-l", "Greet the agent in notes.txt"]);
    tmux.keys(&["Enter"]);
    let screen = tmux
        .wait_for("Finished with notes.txt.", long)
        .unwrap_or_else(|s| panic!("no answer (a dialog asked?):\n{s}"));
    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(tmux.wait_dead(long), "/quit did not quit");
    let file = std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("notes");
    (screen, file)
}

#[test]
fn in_the_tui_auto_runs_the_edit_without_a_dialog_and_deny_refuses_it() {
    // Before: the approval dialog ("wants to run edit") waited for a key.
    let (screen, file) = tui("auto", "--allow file:read --allow file:write");
    assert!(!screen.contains("wants to run edit"), "{screen}");
    assert_eq!(file, "hello agent\n", "{screen}");

    let (screen, file) = tui("deny", "");
    assert!(!screen.contains("wants to run edit"), "{screen}");
    assert!(
        screen.contains("not approved: tools that need approval"),
        "{screen}"
    );
    assert!(
        !screen.contains("--yes"),
        "no CLI advice in the TUI:\n{screen}"
    );
    assert_eq!(file, "hello world\n");
}

//! SKILL.md `context: fork` and `model:` applied, and `allowed_tools` within the turn that
//! loaded the skill, checked in the requests the loopback model server received:
//!
//! - a forked skill runs as a sub-agent: its request holds the body and arguments and none
//!   of the parent's conversation, uses the skill's `model:`, is bound by its
//!   `allowed_tools`; the parent's next request holds the sub-agent's answer, never the body
//!   — through `load_skill`, `agent run --skills NAME` and `/NAME ARGS` in the interface;
//! - an inline skill's `model:` is the model of the turn's requests once it is loaded;
//! - its `allowed_tools` refuses a tool in the same turn, right after `load_skill`.

use std::time::Duration;

use agent_tests::model_server::{ModelServer, Recorded, Wire, tokio_rt};
use agent_tests::{Sandbox, text};
use serde_json::{Value, json};

use super::tui::Tmux;
use super::{ok, sandbox, write};

const FORKED: &str = "---\nname: forked\ndescription: Survey the docs in a sub-agent. Use for fork tests.\ncontext: fork\nmodel: fork-model\nallowed_tools: [read_skill_file]\n---\nFORK-BODY-MARKER: survey $ARGUMENTS and answer briefly.\n";

const INLINE: &str = "---\nname: inline-one\ndescription: Inline with a model. Use for model tests.\nmodel: inline-model\nallowed_tools: [load_skill, read_skill_file]\n---\nINLINE-BODY-MARKER: only read.\n";

fn run(sb: &Sandbox, server: &ModelServer, extra: &[&str], task: &str) -> std::process::Output {
    let mut args = vec![
        "run",
        "--provider",
        "anthropic",
        "--model",
        "m",
        "--base-url",
        server.url(),
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["-p", task]);
    sb.agent_cmd(&args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent")
}

fn project_skill(sb: &Sandbox, name: &str, text: &str) {
    write(
        &sb.project.path().join(".agent/skills").join(name),
        "SKILL.md",
        text,
    );
}

fn model(r: &Recorded) -> &str {
    r.body["model"].as_str().unwrap_or_default()
}

fn messages(r: &Recorded) -> usize {
    r.body["messages"].as_array().map_or(0, Vec::len)
}

fn tool_result(body: &Value, id: &str) -> (String, bool) {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|m| {
            m["content"].as_array()?.iter().find_map(|c| {
                (c["type"] == "tool_result" && c["tool_use_id"] == id).then(|| {
                    let text = match &c["content"] {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    (text, c["is_error"].as_bool().unwrap_or(false))
                })
            })
        })
        .unwrap_or_else(|| panic!("no tool_result {id} in {body}"))
}

#[test]
fn skillmd_fork_load_skill_runs_a_sub_agent_and_only_its_answer_returns() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            // The parent loads the skill...
            Wire::Anthropic.tool(
                "c1",
                "load_skill",
                &json!({"name": "forked", "arguments": "the docs"}),
            ),
            // ...the sub-agent tries a tool outside `allowed_tools`, then answers...
            Wire::Anthropic.tool("x1", "exec", &json!({"program": "echo", "args": ["hi"]})),
            Wire::Anthropic.answer("SUB-ANSWER-MARKER"),
            // ...and the parent goes on with the answer.
            Wire::Anthropic.answer("done"),
        ]))
        .expect("server");
    let sb = sandbox();
    project_skill(&sb, "forked", FORKED);
    let info = ok(&sb.agent(&["skill", "info", "forked"]));
    assert!(
        info.lines().any(|l| l
            == "  context:    fork (runs as a sub-agent: a fresh conversation; only its answer comes back)"),
        "{info}"
    );
    assert!(
        info.lines()
            .any(|l| l == "  model:      fork-model (the sub-agent's requests)"),
        "{info}"
    );
    assert!(!info.contains("not applied"), "{info}");

    let out = run(&sb, &server, &[], "PARENT-TASK-MARKER");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("done"), "{stdout}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4, "{reqs:?}");
    assert_eq!(model(&reqs[0]), "m");

    // The sub-agent: a fresh conversation of one message, the body with its arguments,
    // the skill's model.
    let sub = reqs[1].body.to_string();
    assert_eq!(model(&reqs[1]), "fork-model");
    assert_eq!(messages(&reqs[1]), 1, "{sub}");
    assert!(
        sub.contains("FORK-BODY-MARKER: survey the docs and answer briefly."),
        "{sub}"
    );
    assert!(
        !sub.contains("PARENT-TASK-MARKER"),
        "the parent's conversation stays out: {sub}"
    );
    // Its `allowed_tools` binds it.
    assert_eq!(model(&reqs[2]), "fork-model");
    let (refused, is_error) = tool_result(&reqs[2].body, "x1");
    assert!(is_error, "{refused}");
    assert!(
        refused.contains("tool `exec` is not in the tools allowed by `forked`"),
        "{refused}"
    );

    // The parent: its own model, the answer as load_skill's result, never the body.
    let parent = reqs[3].body.to_string();
    assert_eq!(model(&reqs[3]), "m");
    let (result, is_error) = tool_result(&reqs[3].body, "c1");
    assert!(!is_error, "{result}");
    assert!(
        result.contains("ran as a sub-agent (context: fork); its answer:\nSUB-ANSWER-MARKER"),
        "{result}"
    );
    assert!(!parent.contains("FORK-BODY-MARKER"), "{parent}");
    assert!(
        stderr.contains("skill `forked` runs as a sub-agent (context: fork, model fork-model)"),
        "{stderr}"
    );
}

#[test]
fn skillmd_fork_skills_flag_runs_the_sub_agent_before_the_first_turn() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.answer("SUB-ANSWER-FLAG"),
            Wire::Anthropic.answer("parent done"),
        ]))
        .expect("server");
    let sb = sandbox();
    let dir = sb.home.path().join("more-skills");
    write(&dir.join("forked"), "SKILL.md", FORKED);
    let skills = format!("{},forked", dir.display());
    let out = run(&sb, &server, &["--skills", &skills], "PARENT-TASK-MARKER");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    // The sub-agent's task: the body, the task as its arguments; nothing else.
    assert_eq!(model(&reqs[0]), "fork-model");
    assert_eq!(messages(&reqs[0]), 1);
    let sub = reqs[0].body["messages"].to_string();
    assert!(
        sub.contains("FORK-BODY-MARKER: survey PARENT-TASK-MARKER and answer briefly."),
        "{sub}"
    );
    // The parent's first request: the task and the answer, not the body.
    let parent = reqs[1].body.to_string();
    assert_eq!(model(&reqs[1]), "m");
    assert!(parent.contains("PARENT-TASK-MARKER"), "{parent}");
    assert!(parent.contains("SUB-ANSWER-FLAG"), "{parent}");
    assert!(
        parent.contains("it ran as a sub-agent, context: fork"),
        "{parent}"
    );
    assert!(!parent.contains("FORK-BODY-MARKER"), "{parent}");
}

#[test]
fn skillmd_inline_model_and_allowed_tools_apply_in_the_turn_that_loads_it() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.tool("c1", "load_skill", &json!({"name": "inline-one"})),
            Wire::Anthropic.tool("x1", "exec", &json!({"program": "echo", "args": ["hi"]})),
            Wire::Anthropic.answer("done"),
        ]))
        .expect("server");
    let sb = sandbox();
    project_skill(&sb, "inline-one", INLINE);
    let out = run(&sb, &server, &["--yes"], "do it");
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success() || out.status.code() == Some(4),
        "{stdout}\n{stderr}"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{reqs:?}");
    assert_eq!(model(&reqs[0]), "m", "before the skill is loaded");
    assert_eq!(model(&reqs[1]), "inline-model", "once it is loaded");
    assert_eq!(model(&reqs[2]), "inline-model");
    let (body, is_error) = tool_result(&reqs[1].body, "c1");
    assert!(!is_error && body.contains("INLINE-BODY-MARKER"), "{body}");
    // Same turn, next call: the skill's allowed_tools already refuses `exec`.
    let (refused, is_error) = tool_result(&reqs[2].body, "x1");
    assert!(is_error, "{refused}");
    assert!(
        refused.contains("tool `exec` is not in the tools allowed by `inline-one`")
            && refused.contains("(allowed: load_skill, read_skill_file)"),
        "{refused}"
    );
}

#[test]
fn skillmd_fork_slash_name_in_the_interface_gives_the_turn_the_answer() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.answer("SUB-ANSWER-TUI"),
            Wire::Anthropic.answer("parent saw the answer"),
        ]))
        .expect("server");
    let sb = sandbox();
    project_skill(&sb, "forked", FORKED);
    let long = Duration::from_secs(60);
    let tmux = Tmux::agent("agent-skillmd-fork", &sb, server.url(), long);
    tmux.keys(&["-l", "/forked the docs"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("parent saw the answer", long)
        .unwrap_or_else(|s| panic!("no answer:\n{s}"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(model(&reqs[0]), "fork-model");
    assert_eq!(messages(&reqs[0]), 1);
    let sub = reqs[0].body["messages"].to_string();
    assert!(
        sub.contains("FORK-BODY-MARKER: survey the docs and answer briefly."),
        "{sub}"
    );
    let parent = reqs[1].body.to_string();
    assert!(parent.contains("SUB-ANSWER-TUI"), "{parent}");
    assert!(!parent.contains("FORK-BODY-MARKER"), "{parent}");
    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(tmux.wait_dead(long), "{}", tmux.screen());
}

#[test]
fn skillmd_fork_a_sub_agent_stays_bound_by_what_binds_its_parent() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.tool("c1", "load_skill", &json!({"name": "inline-one"})),
            Wire::Anthropic.tool(
                "c2",
                "load_skill",
                &json!({"name": "forked", "arguments": "x"}),
            ),
            Wire::Anthropic.tool("x1", "exec", &json!({"program": "echo", "args": ["hi"]})),
            Wire::Anthropic.answer("SUB-ANSWER"),
            Wire::Anthropic.answer("done"),
        ]))
        .expect("server");
    let sb = sandbox();
    project_skill(&sb, "inline-one", INLINE);
    // This fork skill would allow `exec` itself; the parent's `inline-one` does not.
    project_skill(
        &sb,
        "forked",
        &FORKED.replace("allowed_tools: [read_skill_file]", "allowed_tools: [exec]"),
    );
    let out = run(&sb, &server, &["--yes"], "do it");
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success() || out.status.code() == Some(4),
        "{stdout}\n{stderr}"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5, "{reqs:?}");
    assert_eq!(model(&reqs[2]), "fork-model", "the fork's own model");
    let (refused, is_error) = tool_result(&reqs[3].body, "x1");
    assert!(is_error, "{refused}");
    assert!(
        refused.contains("tool `exec` is not in the tools allowed by `forked` ∩ `inline-one`"),
        "{refused}"
    );
    assert_eq!(
        model(&reqs[4]),
        "inline-model",
        "the parent's turn keeps its inline skill's model"
    );
}

#[test]
fn skillmd_skills_flag_in_the_interface_invokes_the_named_skills_with_the_first_message() {
    // `agent --skills NAME` opens the interface with no task yet: the named skills are
    // invoked at the first turn with the first message as their arguments — the inline
    // one's body (and model) in that turn, the forked one as a sub-agent before it.
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.answer("SUB-ANSWER-FLAG"),
            Wire::Anthropic.answer("parent used both"),
        ]))
        .expect("server");
    let sb = sandbox();
    project_skill(&sb, "inline-one", INLINE);
    project_skill(&sb, "forked", FORKED);
    let long = Duration::from_secs(60);
    let tmux = Tmux::agent_with(
        "agent-skillmd-flag",
        &sb,
        server.url(),
        &["--skills", "inline-one", "--skills", "forked"],
        long,
    );
    tmux.keys(&["-l", "the guides"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("parent used both", long)
        .unwrap_or_else(|s| panic!("no answer:\n{s}"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(model(&reqs[0]), "fork-model", "the sub-agent's own model");
    assert_eq!(messages(&reqs[0]), 1);
    let sub = reqs[0].body["messages"].to_string();
    assert!(
        sub.contains("FORK-BODY-MARKER: survey the guides and answer briefly."),
        "the first message is the fork's $ARGUMENTS: {sub}"
    );
    assert_eq!(model(&reqs[1]), "inline-model", "the inline skill's model");
    let system = reqs[1].body["system"].to_string();
    assert!(system.contains("INLINE-BODY-MARKER"), "{system}");
    assert!(system.contains("named with --skills"), "{system}");
    assert!(system.contains("SUB-ANSWER-FLAG"), "{system}");
    assert!(!system.contains("FORK-BODY-MARKER"), "{system}");
    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(tmux.wait_dead(long), "{}", tmux.screen());
}

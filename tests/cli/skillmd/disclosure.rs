//! Progressive disclosure, checked in the requests the loopback model server received:
//! only name and description are in the system prompt; the body arrives when the model
//! calls `load_skill`; `read_skill_file` stays inside the skill's directory; `save_skill`
//! asks for approval; a loaded skill's `allowed_tools` constrains the tools.

use agent_tests::copy_tree;
use agent_tests::model_server::{ModelServer, Wire, tokio_rt};
use agent_tests::text;
use serde_json::{Value, json};

use super::super::sandbox;
use super::fixtures;

fn run(
    sb: &agent_tests::Sandbox,
    server: &ModelServer,
    extra: &[&str],
    task: &str,
) -> std::process::Output {
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
fn skillmd_the_body_is_absent_until_load_skill_is_called() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.tool(
                "c1",
                "load_skill",
                &json!({"name": "plain", "arguments": "the docs"}),
            ),
            Wire::Anthropic.tool(
                "c2",
                "read_skill_file",
                &json!({"skill": "plain", "path": "../../etc/passwd"}),
            ),
            Wire::Anthropic.tool(
                "c3",
                "read_skill_file",
                &json!({"skill": "plain", "path": "notes/extra.md"}),
            ),
            Wire::Anthropic.answer("plain loaded"),
        ]))
        .expect("server");
    let sb = sandbox();
    let skills = sb.project.path().join(".agent/skills");
    copy_tree(&fixtures().join("plain"), &skills.join("plain"));
    super::super::write(&skills, "plain/notes/extra.md", "EXTRA-FILE-MARKER\n");
    copy_tree(
        &fixtures().join("needs-missing"),
        &skills.join("needs-missing"),
    );
    let out = run(&sb, &server, &[], "Document the project");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    let first = &reqs[0].body;
    let system = first["system"].to_string();
    assert!(
        system.contains("- plain: Plain instructions with no commands. Use for fixture tests."),
        "{system}"
    );
    assert!(
        !system.contains("needs-missing"),
        "a skill not offered here is not listed: {system}"
    );
    assert!(
        !first.to_string().contains("PLAIN-BODY-MARKER"),
        "the body must not be sent before it is loaded"
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        tools.contains(&"load_skill")
            && tools.contains(&"read_skill_file")
            && tools.contains(&"save_skill"),
        "{tools:?}"
    );
    let (body, is_error) = tool_result(&reqs[1].body, "c1");
    assert!(!is_error, "{body}");
    assert!(
        body.contains("PLAIN-BODY-MARKER: say \"plain loaded\" and the docs."),
        "{body}"
    );
    let (escape, is_error) = tool_result(&reqs[2].body, "c2");
    assert!(is_error, "{escape}");
    assert!(
        escape.contains("is not a path inside the skill's directory"),
        "{escape}"
    );
    let (extra, is_error) = tool_result(&reqs[3].body, "c3");
    assert!(!is_error && extra.contains("EXTRA-FILE-MARKER"), "{extra}");
}

#[test]
fn skillmd_save_skill_asks_for_approval_and_allowed_tools_is_a_constraint() {
    let rt = tokio_rt();
    let sb = sandbox();
    let skills = sb.project.path().join(".agent/skills");
    copy_tree(&fixtures().join("plain"), &skills.join("plain"));
    let save = json!({"name": "saved-one", "description": "Saved by the model. Use for tests.", "body": "SAVED-BODY\n"});
    // Headless without --yes: the approval gate refuses, nothing is written.
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.tool("s1", "save_skill", &save),
            Wire::Anthropic.answer("done"),
        ]))
        .expect("server");
    let out = run(&sb, &server, &[], "remember this");
    assert!(out.status.success(), "{:?}", text(&out));
    let (result, is_error) = tool_result(&server.requests()[1].body, "s1");
    assert!(is_error, "{result}");
    let saved = sb.paths().user_skills_dir().join("saved-one/SKILL.md");
    assert!(!saved.exists());
    // With --yes it is saved into the user's skills directory.
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.tool("s1", "save_skill", &save),
            Wire::Anthropic.answer("done"),
        ]))
        .expect("server");
    let out = run(&sb, &server, &["--yes"], "remember this");
    assert!(out.status.success(), "{:?}", text(&out));
    let (result, is_error) = tool_result(&server.requests()[1].body, "s1");
    assert!(!is_error, "{result}");
    assert!(
        std::fs::read_to_string(&saved)
            .unwrap()
            .contains("SAVED-BODY")
    );

    // `full`'s allowed_tools (read_file, load_skill, read_skill_file): `exec` is refused.
    super::super::write(
        &sb.paths().config_dir,
        "config.toml",
        "[skills]\nmax_llm_calls_per_turn = 5\n",
    );
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.tool("x1", "exec", &json!({"program": "echo", "args": ["hi"]})),
            Wire::Anthropic.answer("done"),
        ]))
        .expect("server");
    let skills_arg = format!("{},full", fixtures().display());
    let out = run(
        &sb,
        &server,
        &["--yes", "--skills", &skills_arg],
        "what changed",
    );
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success() || out.status.code() == Some(4),
        "{stdout}\n{stderr}"
    );
    let (result, is_error) = tool_result(&server.requests()[1].body, "x1");
    assert!(is_error, "{result}");
    assert!(
        result.contains("tool `exec` is not in the tools allowed by `full`")
            && result.contains("(allowed: load_skill, read_file, read_skill_file)"),
        "the constraint names the skill: {result}"
    );
}

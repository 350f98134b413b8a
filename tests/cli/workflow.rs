//! `agent workflow list|run` and workflows as tools in `agent run`: the
//! real binary, a signed project workflow skill (tests/guests/workflow),
//! the built-in core-tools and a scripted model server.

use agent_tests::model_server::{ModelServer, Reply, Wire, tokio_rt};

fn tool_call(id: &str, name: &str, input: &Value) -> Reply {
    Wire::Anthropic.tool(id, name, input)
}

fn answer(text: &str) -> Reply {
    Wire::Anthropic.answer(text)
}
use agent_tests::{Sandbox, build_guest, text, write_skill};
use serde_json::{Value, json};

use super::{code, ok, sandbox, write};

/// A sandbox with the workflow component as project skill `wf`, signed by
/// a trusted key.
fn with_workflows() -> Sandbox {
    let sb = sandbox();
    let key = sb.trusted_key();
    let component = std::fs::read(build_guest("guest-workflow")).expect("guest");
    write_skill(
        &sb.project.path().join(".agent/skills/wf"),
        "name: wf\nversion: 0.1.0\ndescription: test workflows\ntypes: [workflow]\n\
         implementation:\n  component: skill.wasm\npermissions: [skill:invoke, llm:call]\n",
        &component,
        Some(&key),
    );
    sb
}

#[test]
fn workflow_list_and_run_count_words() {
    let sb = with_workflows();
    let stdout = ok(&sb.agent(&["workflow", "list"]));
    for name in ["wf/summarize_file", "wf/count_words", "wf/invoke"] {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{name}\t"))),
            "no {name} line:\n{stdout}"
        );
    }
    assert!(stdout.contains("Count the words of a text"), "{stdout}");

    let out = sb.agent(&[
        "workflow",
        "run",
        "count_words",
        "--input",
        r#"{"text":"a b c"}"#,
    ]);
    let stdout = ok(&out);
    assert_eq!(stdout, "{\n  \"words\": 3\n}\n");
    // Qualified with the skill, and from a file.
    write(sb.project.path(), "in.json", r#"{"text": "one two"}"#);
    let out = sb.agent(&[
        "workflow",
        "run",
        "wf/count_words",
        "--input-file",
        "in.json",
    ]);
    let v: Value = serde_json::from_str(&ok(&out)).expect("json");
    assert_eq!(v, json!({"words": 2}));
}

#[test]
fn workflow_run_usage_errors_exit_2() {
    let sb = with_workflows();
    // Not JSON.
    let out = sb.agent(&["workflow", "run", "count_words", "--input", "{text"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("--input"), "{}", text(&out).1);
    // Schema mismatch: the field is named.
    let out = sb.agent(&[
        "workflow",
        "run",
        "count_words",
        "--input",
        r#"{"txt":"a"}"#,
    ]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    let stderr = text(&out).1;
    assert!(stderr.contains("--input"), "{stderr}");
    assert!(stderr.contains("text"), "{stderr}");
    let out = sb.agent(&["workflow", "run", "count_words", "--input", r#"{"text":3}"#]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("text"), "{}", text(&out).1);
    // Unknown: the workflows are listed.
    for name in ["count_word", "other/count_words"] {
        let out = sb.agent(&["workflow", "run", name, "--input", "{}"]);
        assert_eq!(code(&out), 2, "{name}: {:?}", text(&out));
        let stderr = text(&out).1;
        assert!(
            stderr.contains(&format!("no workflow `{name}`")),
            "{stderr}"
        );
        assert!(stderr.contains("wf/count_words"), "{stderr}");
        assert!(stderr.contains("wf/summarize_file"), "{stderr}");
    }
    // A workflow failure is exit 1; a denial exit 4.
    let out = sb.agent(&[
        "workflow",
        "run",
        "invoke",
        "--input",
        r#"{"skill":"nope","function":"x"}"#,
        "--allow",
        "wf/skill:invoke",
    ]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("no skill named `nope`"),
        "{}",
        text(&out).1
    );
    let out = sb.agent(&[
        "workflow",
        "run",
        "invoke",
        "--input",
        r#"{"skill":"core-tools","function":"list_dir"}"#,
    ]);
    assert_eq!(code(&out), 4, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--allow wf/skill:invoke"),
        "{}",
        text(&out).1
    );
}

#[test]
fn workflow_run_summarize_file_with_the_model() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![answer("Greets the world.")]))
        .expect("server");
    let sb = with_workflows();
    write(
        sb.project.path(),
        "notes.txt",
        "hello world\nfrom the notes\n",
    );
    let out = sb
        .agent_cmd(&[
            "workflow",
            "run",
            "summarize_file",
            "--input",
            r#"{"path":"notes.txt"}"#,
            "--provider",
            "anthropic",
            "--model",
            "test-model",
            "--base-url",
            server.url(),
            "--allow",
            "wf/skill:invoke",
            "--allow",
            "wf/llm:call",
            "--allow",
            "core-tools/file:read",
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .output()
        .expect("agent");
    let v: Value = serde_json::from_str(&ok(&out)).expect("json output");
    assert_eq!(v["path"], "notes.txt", "{v}");
    assert_eq!(v["summary"], "Greets the world.", "{v}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].body.to_string();
    assert!(body.contains("from the notes"), "{body}");
    assert_eq!(reqs[0].body["model"], "test-model");

    // Without llm:call the workflow is denied: exit 4, naming the flag.
    let out = sb
        .agent_cmd(&[
            "workflow",
            "run",
            "summarize_file",
            "--input",
            r#"{"path":"notes.txt"}"#,
            "--provider",
            "anthropic",
            "--model",
            "test-model",
            "--base-url",
            server.url(),
            "--allow",
            "wf/skill:invoke",
            "--allow",
            "core-tools/file:read",
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .output()
        .expect("agent");
    assert_eq!(code(&out), 4, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--allow wf/llm:call"),
        "{}",
        text(&out).1
    );
    assert_eq!(server.requests().len(), 1, "no second model request");
}

#[test]
fn agent_run_offers_workflows_as_tools() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            tool_call("call_w", "count_words", &json!({"text": "a b c d"})),
            answer("There are four words."),
        ]))
        .expect("server");
    let sb = with_workflows();
    let out = sb
        .agent_cmd(&super::run_jsonl(
            server.url(),
            &["--prompt", "How many words in 'a b c d'?"],
        ))
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("agent");
    let stdout = ok(&out);
    let events: Vec<Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == "call_w")
        .unwrap_or_else(|| panic!("no tool_result for count_words:\n{stdout}"));
    assert_eq!(result["is_error"], false, "{result}");
    let output: Value = serde_json::from_str(result["output"].as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("output is not JSON ({e}): {result}"));
    assert_eq!(output, json!({"words": 4}));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let tools = reqs[0].body["tools"].to_string();
    assert!(tools.contains("count_words"), "offered: {tools}");
    assert!(tools.contains("summarize_file"), "offered: {tools}");
    assert!(
        reqs[1].body.to_string().contains("words"),
        "the result went back to the model"
    );
}

#[test]
fn agent_run_workflow_tool_uses_the_model_and_other_skills() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            tool_call("call_s", "summarize_file", &json!({"path": "notes.txt"})),
            // The workflow's own `llm.complete`.
            answer("A note about 42 apples."),
            answer("The notes are about apples."),
        ]))
        .expect("server");
    let sb = with_workflows();
    write(sb.project.path(), "notes.txt", "the notes: 42 apples\n");
    let out = sb
        .agent_cmd(&super::run_jsonl(
            server.url(),
            &[
                "--prompt",
                "Summarise notes.txt",
                "--allow",
                "wf/skill:invoke",
                "--allow",
                "wf/llm:call",
                "--allow",
                "file:read",
            ],
        ))
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("agent");
    let stdout = ok(&out);
    let events: Vec<Value> = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == "call_s")
        .unwrap_or_else(|| panic!("no tool_result for summarize_file:\n{stdout}"));
    assert_eq!(result["is_error"], false, "{result}");
    let output: Value = serde_json::from_str(result["output"].as_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("output is not JSON ({e}): {result}"));
    assert_eq!(output["summary"], "A note about 42 apples.", "{output}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{reqs:?}");
    // The workflow's request: no tools, the file's text.
    let inner = reqs[1].body.to_string();
    assert!(inner.contains("the notes: 42 apples"), "{inner}");
    assert!(
        reqs[1].body["tools"].as_array().is_none_or(Vec::is_empty),
        "{inner}"
    );
    assert!(reqs[2].body.to_string().contains("A note about 42 apples."));
    let last = events.last().expect("events");
    assert_eq!(last["type"], "final", "{last}");
}

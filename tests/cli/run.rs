//! `agent run` end to end: the real binary, the built-in core-tools, and a
//! scripted model server on 127.0.0.1 in each provider's wire format.

use agent_tests::model_server::{ModelServer, Recorded, Reply, Wire, jsonl as events, tokio_rt};
use agent_tests::text;
use serde_json::{Value, json};

use super::{code, ok, sandbox, write};

/// The four scripted replies: read_file, edit, exec `echo done`, answer.
fn script(wire: Wire) -> Vec<Reply> {
    vec![
        wire.tool("call_r", "read_file", &json!({"path": "notes.txt"})),
        wire.tool(
            "call_e",
            "edit",
            &json!({"path": "notes.txt", "old": "world", "new": "agent"}),
        ),
        wire.tool(
            "call_x",
            "exec",
            &json!({"program": "echo", "args": ["done"]}),
        ),
        wire.answer("All done: notes.txt now greets the agent."),
    ]
}

fn run_agent(
    sb: &agent_tests::Sandbox,
    wire: Wire,
    server: &ModelServer,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "run",
        "--provider",
        wire.name(),
        "--model",
        "test-model",
        "--base-url",
        server.url(),
        "--output",
        "jsonl",
        "--timeout",
        "120s",
    ];
    args.extend_from_slice(extra);
    sb.agent_cmd(&args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent")
}

fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Whether `want` occurs in `have` in order (not necessarily adjacent).
fn in_order(have: &[String], want: &[&str]) -> bool {
    let mut it = have.iter();
    want.iter().all(|w| it.any(|h| h == w))
}

fn body(r: &Recorded) -> String {
    r.body.to_string()
}

fn end_to_end(wire: Wire) {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(script(wire)))
        .expect("server");
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello world\n");
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--prompt",
            "Greet the agent in notes.txt",
            "--allow",
            "file:read",
            "--allow",
            "file:write",
            "--allow",
            "core-tools/shell:exec:echo",
        ],
    );
    let stdout = ok(&out);
    assert_eq!(
        std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("read"),
        "hello agent\n"
    );
    let evs = events(&stdout);
    let t = types(&evs);
    assert!(
        in_order(
            &t,
            &[
                "turn_start",
                "tool_call",
                "tool_result",
                "tool_call",
                "tool_result",
                "tool_call",
                "tool_result",
                "text_delta",
                "usage",
                "final"
            ]
        ),
        "{t:?}"
    );
    assert_eq!(t.iter().filter(|x| *x == "tool_call").count(), 3, "{t:?}");
    let results: Vec<&Value> = evs.iter().filter(|e| e["type"] == "tool_result").collect();
    assert_eq!(results.len(), 3);
    for r in &results {
        assert_eq!(r["is_error"], false, "{r}");
    }
    assert!(
        results[0]["output"]
            .as_str()
            .unwrap_or_default()
            .contains("hello world"),
        "{}",
        results[0]
    );
    assert!(
        results[2]["output"]
            .as_str()
            .unwrap_or_default()
            .contains("done"),
        "{}",
        results[2]
    );
    let last = evs.last().expect("events");
    assert_eq!(last["type"], "final");
    assert_eq!(last["stop"], "end_turn");
    assert_eq!(last["turns"], 4);
    assert!(
        last["text"]
            .as_str()
            .unwrap_or_default()
            .contains("All done")
    );

    // The follow-up requests carried the tool results.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    assert!(body(&reqs[1]).contains("hello world"), "{}", body(&reqs[1]));
    assert!(body(&reqs[3]).contains("done"), "{}", body(&reqs[3]));
    assert!(body(&reqs[0]).contains("read_file"), "tools offered");

    // The session is recorded and can be continued.
    let list = ok(&sb.agent(&["sessions", "list"]));
    assert!(list.contains("Greet the agent in notes.txt"), "{list}");
    assert!(list.contains("completed"), "{list}");
    let rt2 = tokio_rt();
    let server2 = rt2
        .block_on(ModelServer::start(vec![wire.answer("Still greeting.")]))
        .expect("server");
    let out = run_agent(&sb, wire, &server2, &["--last", "--prompt", "And now?"]);
    let stdout = ok(&out);
    assert!(stdout.contains("Still greeting."), "{stdout}");
    let reqs = server2.requests();
    assert_eq!(reqs.len(), 1);
    let b = body(&reqs[0]);
    assert!(b.contains("Greet the agent in notes.txt"), "{b}");
    assert!(
        b.contains("All done: notes.txt now greets the agent."),
        "{b}"
    );
    assert!(b.contains("And now?"), "{b}");
    // Still one session.
    let json: Value =
        serde_json::from_str(&ok(&sb.agent(&["sessions", "list", "--format", "json"])))
            .expect("json");
    assert_eq!(json.as_array().map(Vec::len), Some(1), "{json}");
}

#[test]
fn run_end_to_end_anthropic() {
    end_to_end(Wire::Anthropic);
}

#[test]
fn run_end_to_end_openai() {
    end_to_end(Wire::OpenAi);
}

#[test]
fn run_end_to_end_ollama() {
    end_to_end(Wire::Ollama);
}

#[test]
fn run_without_file_write_reports_the_denial_and_leaves_the_file() {
    let rt = tokio_rt();
    let wire = Wire::Anthropic;
    let server = rt
        .block_on(ModelServer::start(script(wire)))
        .expect("server");
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello world\n");
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--prompt",
            "Greet the agent in notes.txt",
            "--allow",
            "file:read",
            "--allow",
            "core-tools/shell:exec:echo",
        ],
    );
    // Documented: the model still gave its final answer, so exit 0; the
    // denial is an event, an error tool result, and a line on stderr.
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("read"),
        "hello world\n"
    );
    let evs = events(&stdout);
    let denial = evs
        .iter()
        .find(|e| e["type"] == "denial")
        .unwrap_or_else(|| panic!("no denial event: {stdout}"));
    assert_eq!(denial["skill"], "core-tools");
    assert_eq!(denial["permission"], "file:write");
    let edit_result = evs
        .iter()
        .find(|e| e["type"] == "tool_result" && e["id"] == "call_e")
        .expect("edit result");
    assert_eq!(edit_result["is_error"], true, "{edit_result}");
    assert!(stderr.contains("denied: core-tools file:write"), "{stderr}");
    // The model was told.
    let reqs = server.requests();
    assert!(body(&reqs[2]).contains("is_error"), "{}", body(&reqs[2]));
}

#[test]
fn run_stops_at_the_turn_limit_with_exit_5() {
    let rt = tokio_rt();
    let wire = Wire::Anthropic;
    let server = rt
        .block_on(ModelServer::start(script(wire)))
        .expect("server");
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello world\n");
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--prompt",
            "Read it",
            "--allow",
            "file:read",
            "--max-turns",
            "1",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 5, "{stdout}\n{stderr}");
    let evs = events(&stdout);
    let last = evs.last().expect("events");
    assert_eq!(last["type"], "final");
    assert_eq!(last["stop"], "max_turns");
}

#[test]
fn run_usage_and_provider_errors() {
    let sb = sandbox();
    // No task on a closed stdin: usage error.
    let out = sb
        .agent_cmd(&["run"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("agent");
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    let out = sb.agent(&["run", "--prompt", "x", "--timeout", "soon"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));

    // The provider answers an error: exit 3.
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![Reply::error(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad model"}}),
        )]))
        .expect("server");
    let out = run_agent(&sb, Wire::Anthropic, &server, &["--prompt", "hi"]);
    assert_eq!(code(&out), 3, "{:?}", text(&out));

    // Sessions: show and delete.
    let list: Value =
        serde_json::from_str(&ok(&sb.agent(&["sessions", "list", "--format", "json"])))
            .expect("json");
    let id = list[0]["id"].as_str().expect("id").to_string();
    assert_eq!(list[0]["status"], "failed");
    let shown = ok(&sb.agent(&["sessions", "show", &id]));
    assert!(shown.contains("[user] hi"), "{shown}");
    ok(&sb.agent(&["sessions", "delete", &id]));
    assert!(ok(&sb.agent(&["sessions", "list"])).contains("no sessions"));
}

//! MCP servers' tools in a model turn (issue 20, item 1): `agent run` against a scripted model
//! on 127.0.0.1. The tool is offered through the same router as a component's (renamed
//! `server__tool` on a clash), called with the server started lazily and only when granted,
//! its answer returned to the model; a server that does not answer ends the call as a tool
//! error, never a hung run; no server outlives the run.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_tests::model_server::{ModelServer, Recorded, Wire, tokio_rt};
use agent_tests::{Sandbox, text, workspace};
use serde_json::{Value, json};

use super::{ok, sandbox, write};

fn run(
    sb: &Sandbox,
    server: &ModelServer,
    extra: &[&str],
    env: &[(&str, &Path)],
) -> std::process::Output {
    let mut args = vec![
        "run",
        "--provider",
        "anthropic",
        "--model",
        "test-model",
        "--base-url",
        server.url(),
        "--timeout",
        "120s",
    ];
    args.extend_from_slice(extra);
    let mut cmd = sb.agent_cmd(&args);
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("running agent")
}

fn tool_names(r: &Recorded) -> Vec<String> {
    r.body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The tool result for `id` in a request: (text, is_error).
fn tool_result(r: &Recorded, id: &str) -> Option<(String, bool)> {
    r.body["messages"].as_array()?.iter().find_map(|m| {
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
}

fn everything() -> String {
    workspace()
        .join("target/npm-mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .display()
        .to_string()
}

fn misbehaving() -> String {
    workspace()
        .join("tests/fixtures/mcp/misbehaving.js")
        .display()
        .to_string()
}

fn config(sb: &Sandbox, text: &str) {
    let path = sb.paths().config_file();
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    std::fs::write(path, text).expect("config");
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim().to_string()))
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

#[test]
fn a_model_turn_calls_an_mcp_tool_and_gets_its_result() {
    let everything = everything();
    assert!(
        Path::new(&everything).is_file(),
        "{everything} is missing: run ./test.sh (it installs the npm MCP servers into target/npm-mcp)"
    );
    let sb = sandbox();
    let pidfile = sb.home.path().join("bad.pid");
    // Two servers with an `echo` tool: the clash is resolved by renaming.
    config(
        &sb,
        &format!(
            "[mcp.servers.everything]\ncommand = \"node\"\nargs = [{everything:?}, \"stdio\"]\n\
             [mcp.servers.bad]\ncommand = \"node\"\nargs = [{:?}]\nenv = [\"MCP_PIDFILE\"]\n",
            misbehaving()
        ),
    );
    let rt = tokio_rt();
    let wire = Wire::Anthropic;
    let server = rt
        .block_on(ModelServer::start(vec![
            wire.tool(
                "call_1",
                "everything__echo",
                &json!({"message": "ping from the model"}),
            ),
            wire.answer("The server echoed it."),
        ]))
        .expect("model server");
    let out = run(
        &sb,
        &server,
        &[
            "--prompt",
            "Echo something",
            "--allow",
            "mcp:everything/shell:exec:node",
            "--allow",
            "mcp:bad/shell:exec:node",
        ],
        &[("MCP_PIDFILE", &pidfile)],
    );
    let stdout = ok(&out);
    assert!(stdout.contains("The server echoed it."), "{stdout}");
    let requests = server.requests();
    let names = tool_names(&requests[0]);
    assert!(names.contains(&"everything__echo".to_string()), "{names:?}");
    assert!(names.contains(&"bad__echo".to_string()), "{names:?}");
    let first = &requests[0].body["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "everything__echo").cloned())
        .expect("tool");
    assert!(
        first["input_schema"]["properties"]["message"].is_object(),
        "{first}"
    );
    let (result, is_error) = tool_result(&requests[1], "call_1").expect("tool result");
    assert!(!is_error, "{result}");
    assert!(result.contains("ping from the model"), "{result}");
    let log = std::fs::read_to_string(sb.paths().audit_log_path()).expect("audit");
    assert!(log.contains("tools/call echo"), "{log}");

    // Stopped with the run: the server it started is gone.
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .expect("the bad server was started")
        .trim()
        .parse()
        .expect("pid");
    let end = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "MCP server {pid} outlived the run");
}

#[test]
fn without_the_grant_a_discovered_server_is_not_started_and_its_tools_not_offered() {
    let sb = sandbox();
    let pidfile = sb.home.path().join("never.pid");
    write(
        sb.project.path(),
        ".mcp.json",
        &json!({"mcpServers": {"fixture": {
            "command": "node", "args": [misbehaving()], "env": {"MCP_PIDFILE": pidfile}
        }}})
        .to_string(),
    );
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.answer("Nothing to do."),
        ]))
        .expect("model server");
    let out = run(&sb, &server, &["--prompt", "hello"], &[]);
    let (_, stderr) = text(&out);
    assert!(
        stderr.contains("MCP server `fixture` (.mcp.json) is not started")
            && stderr.contains("--allow mcp:fixture/shell:exec:node"),
        "{stderr}"
    );
    let names = tool_names(&server.requests()[0]);
    assert!(!names.iter().any(|n| n.contains("echo")), "{names:?}");
    assert!(!pidfile.exists(), "the discovered server was started");
}

#[test]
fn an_mcp_tool_that_never_answers_is_a_tool_error_not_a_hung_run() {
    let sb = sandbox();
    let pidfile = sb.home.path().join("hang.pid");
    config(
        &sb,
        &format!(
            "[mcp]\ncall_timeout = \"2s\"\n[mcp.servers.bad]\ncommand = \"node\"\n\
             args = [{:?}]\nenv = [\"MCP_PIDFILE\"]\n",
            misbehaving()
        ),
    );
    let rt = tokio_rt();
    let wire = Wire::Anthropic;
    let server = rt
        .block_on(ModelServer::start(vec![
            wire.tool("call_1", "hang", &json!({})),
            wire.answer("It did not answer."),
        ]))
        .expect("model server");
    let started = Instant::now();
    let out = run(
        &sb,
        &server,
        &["--prompt", "Hang", "--allow", "mcp:bad/shell:exec:node"],
        &[("MCP_PIDFILE", &pidfile)],
    );
    assert!(started.elapsed() < Duration::from_secs(60), "the run hung");
    let stdout = ok(&out);
    assert!(stdout.contains("It did not answer."), "{stdout}");
    let (result, is_error) = tool_result(&server.requests()[1], "call_1").expect("tool result");
    assert!(is_error, "{result}");
    assert!(
        result
            .contains("MCP server `bad` did not answer tools/call hang within 2 s; it was stopped"),
        "{result}"
    );
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .expect("pid")
        .trim()
        .parse()
        .expect("pid");
    assert!(!alive(pid), "the hung server was left running");
    let log = std::fs::read_to_string(sb.paths().audit_log_path()).expect("audit");
    assert!(log.contains("did not answer tools/call hang"), "{log}");
}

/// `--mcp-resource` and `--mcp-prompt` attach a server's resource and a filled-in prompt to the
/// task, read before the session starts; without the server's grant nothing starts, the run
/// exits 4 naming the flag, and the model is never asked.
#[test]
fn a_servers_resource_and_prompt_are_attached_to_the_task_only_when_granted() {
    let everything = everything();
    assert!(
        Path::new(&everything).is_file(),
        "{everything} is missing: run ./test.sh (it installs the npm MCP servers into target/npm-mcp)"
    );
    let sb = sandbox();
    config(
        &sb,
        &format!(
            "[mcp.servers.everything]\ncommand = \"node\"\nargs = [{everything:?}, \"stdio\"]\n"
        ),
    );
    let allow = "--allow=mcp:everything/shell:exec:node";

    // The prompts, with their arguments (optional ones in brackets), and one filled in.
    let prompts = ok(&sb.agent(&["mcp", "prompts", "everything", allow]));
    assert!(
        prompts
            .lines()
            .any(|l| l.starts_with("args-prompt") && l.contains("city [state]")),
        "{prompts}"
    );
    let filled = ok(&sb.agent(&[
        "mcp",
        "prompt",
        "everything",
        "args-prompt",
        "--arg",
        "city=Lyon",
        allow,
    ]));
    assert_eq!(filled.trim(), "user: What's weather in Lyon?");
    let resources = ok(&sb.agent(&["mcp", "resources", "everything", allow]));
    let uri = resources
        .lines()
        .skip(1)
        .find_map(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no resources:\n{resources}"))
        .to_string();
    let resource_text = ok(&sb.agent(&["mcp", "read", "everything", &uri, allow]));

    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![Wire::Anthropic.answer("Noted.")]))
        .expect("model server");
    let resource_flag = format!("everything:{uri}");
    let context = [
        "--prompt",
        "Use the context",
        "--mcp-resource",
        resource_flag.as_str(),
        "--mcp-prompt",
        "everything:args-prompt",
        "--mcp-arg",
        "city=Paris",
    ];

    // Without the grant: exit 4, the flag named, no model request.
    let out = run(&sb, &server, &context, &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("mcp:everything/shell:exec:node"),
        "{stderr}"
    );
    assert!(server.requests().is_empty(), "the model was asked");

    // With it: both are in the first request, named after their server.
    let mut granted = context.to_vec();
    granted.push(allow);
    let stdout = ok(&run(&sb, &server, &granted, &[]));
    assert!(stdout.contains("Noted."), "{stdout}");
    let body = server.requests()[0].body.to_string();
    assert!(body.contains("What's weather in Paris?"), "{body}");
    assert!(body.contains(&format!("mcp:everything/{uri}")), "{body}");
    let first_line = resource_text.lines().next().unwrap_or_default();
    let escaped = serde_json::to_string(first_line).expect("json");
    assert!(
        body.contains(escaped.trim_matches('"')),
        "resource text missing: {first_line}\n{body}"
    );
    let log = super::mcp::audit(&sb);
    assert!(log.contains("prompts/get args-prompt"), "{log}");
    assert!(log.contains(&format!("resources/read {uri}")), "{log}");

    // A malformed flag is a usage error naming it.
    let out = run(
        &sb,
        &server,
        &["--prompt", "x", "--mcp-prompt", "everything"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out)
            .1
            .contains("--mcp-prompt everything: expected SERVER:PROMPT")
    );
}

/// In the interface, a server's start is a permission question like a component's first use
/// (`Permission requested by mcp:everything`), and its tool asks before it runs; answered,
/// the model's call reaches the server and the answer is shown.
#[test]
fn in_the_interface_the_servers_start_and_its_tool_are_asked_first() {
    let everything = everything();
    assert!(
        Path::new(&everything).is_file(),
        "{everything} is missing: run ./test.sh"
    );
    let sb = sandbox();
    config(
        &sb,
        &format!(
            "[mcp.servers.everything]\ncommand = \"node\"\nargs = [{everything:?}, \"stdio\"]\n"
        ),
    );
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.tool("call_1", "echo", &json!({"message": "hello from the tui"})),
            Wire::Anthropic.answer("Echo came back."),
        ]))
        .expect("model server");
    let long = Duration::from_secs(60);
    let tmux = super::tui::Tmux::agent("agent-mcp-tui", &sb, server.url(), long);
    tmux.keys(&["-l", "Echo something"]);
    tmux.keys(&["Enter"]);

    let s = tmux
        .wait_for("Permission requested by mcp:everything", long)
        .unwrap_or_else(|s| panic!("no start question:\n{s}"));
    assert!(s.contains("shell:exec"), "{s}");
    assert!(
        server.requests().is_empty(),
        "the model was asked before the answer"
    );
    tmux.keys(&["o"]);
    let s = tmux
        .wait_for("wants to run echo", long)
        .unwrap_or_else(|s| panic!("no tool approval:\n{s}"));
    assert!(s.contains("mcp:everything"), "{s}");
    tmux.keys(&["o"]);
    tmux.wait_for("Echo came back.", long)
        .unwrap_or_else(|s| panic!("no answer:\n{s}"));
    let requests = server.requests();
    let (result, is_error) = tool_result(&requests[1], "call_1").expect("the tool's result");
    assert!(
        !is_error && result.contains("hello from the tui"),
        "{result}"
    );
    let log = super::mcp::audit(&sb);
    assert!(log.contains("mcp:start"), "{log}");
    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(tmux.wait_dead(long), "{}", tmux.screen());
}

//! MCP servers (issue 20, item 1), through the real binary: real servers from npm
//! (`@modelcontextprotocol/server-everything`, `server-filesystem`, installed by test.sh into
//! target/npm-mcp — these tests fail, never skip, without them), a streamable-HTTP server built
//! with rmcp on 127.0.0.1 (tests/support/mcp_http.rs), and a small misbehaving stdio server
//! (tests/fixtures/mcp/misbehaving.js) for the failures: refused without the grant, killed
//! mid-call, never answering, crashing, oversized and malformed answers — each a clear error and
//! an audit entry, never a hung run, and no process left behind.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_tests::mcp_http::McpHttpServer;
use agent_tests::{Sandbox, text, workspace};

use super::{code, ok, sandbox, write};

/// The entry point of an npm MCP server installed by test.sh.
fn npm_server(package: &str) -> PathBuf {
    let p = workspace()
        .join("target/npm-mcp/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    assert!(
        p.is_file(),
        "{} is missing: the MCP tests need the npm package @modelcontextprotocol/{package}; \
         run ./test.sh (it installs it) or `npm install --prefix target/npm-mcp \
         @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem`",
        p.display()
    );
    p
}

fn misbehaving() -> PathBuf {
    workspace().join("tests/fixtures/mcp/misbehaving.js")
}

fn config(sb: &Sandbox, text: &str) {
    let path = sb.paths().config_file();
    std::fs::create_dir_all(path.parent().expect("config dir")).expect("mkdir");
    std::fs::write(path, text).expect("config.toml");
}

pub(crate) fn audit(sb: &Sandbox) -> String {
    std::fs::read_to_string(sb.paths().audit_log_path()).unwrap_or_default()
}

/// Whether process `pid` still exists (a zombie counts as gone: it runs nothing).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, rest)| rest.trim().to_string()))
        .is_some_and(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
}

fn wait_gone(pid: u32) -> bool {
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .trim()
        .parse()
        .expect("pid")
}

/// The misbehaving server as `[mcp.servers.bad]`, passing MCP_PIDFILE and MCP_MARK, with
/// `extra` lines in `[mcp]`.
fn bad_server(sb: &Sandbox, extra: &str) {
    config(
        sb,
        &format!(
            "[mcp]\n{extra}\n[mcp.servers.bad]\ncommand = \"node\"\nargs = [{:?}]\n\
             env = [\"MCP_PIDFILE\", \"MCP_MARK\"]\n",
            misbehaving().display().to_string()
        ),
    );
}

const BAD: &str = "--allow=mcp:bad/shell:exec:node";

#[test]
fn a_project_mcp_json_is_listed_and_never_started_without_a_grant() {
    let sb = sandbox();
    let pidfile = sb.home.path().join("started.pid");
    write(
        sb.project.path(),
        ".mcp.json",
        &serde_json::json!({"mcpServers": {
            "fixture": {
                "command": "node",
                "args": [misbehaving()],
                "env": {"MCP_PIDFILE": pidfile}
            },
            "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
                       "headers": {"Authorization": "Bearer ${EXAMPLE_TOKEN}"}}
        }})
        .to_string(),
    );
    let out = ok(&sb.agent(&["mcp", "list"]));
    let fixture = out
        .lines()
        .find(|l| l.starts_with("fixture "))
        .unwrap_or_else(|| panic!("no fixture row:\n{out}"));
    assert!(fixture.contains(".mcp.json"), "{fixture}");
    assert!(fixture.contains("shell:exec:node"), "{fixture}");
    assert!(
        fixture.contains("not granted (--allow mcp:fixture/shell:exec:node)"),
        "{fixture}"
    );
    let remote = out
        .lines()
        .find(|l| l.starts_with("remote "))
        .expect("remote row");
    assert!(
        remote.contains("net:fetch:https://mcp.example.com"),
        "{remote}"
    );

    // `agent skill list` shows each server as a skill of its own kind.
    let skills = ok(&sb.agent(&["skill", "list"]));
    let row = skills
        .lines()
        .find(|l| l.starts_with("mcp:fixture"))
        .unwrap_or_else(|| panic!("no mcp:fixture row:\n{skills}"));
    assert!(row.contains("mcp-stdio"), "{row}");
    assert!(row.contains(".mcp.json"), "{row}");
    assert!(row.contains("shell:exec:node [not granted]"), "{row}");

    // Asking for its tools without the grant: refused, exit 4, the flag named, audited.
    let out = sb.agent(&["mcp", "tools", "fixture"]);
    assert_eq!(code(&out), 4, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--allow mcp:fixture/shell:exec:node"),
        "{:?}",
        text(&out)
    );
    assert!(audit(&sb).contains("mcp:fixture"), "{}", audit(&sb));
    // Nothing was ever started.
    std::thread::sleep(Duration::from_millis(300));
    assert!(!pidfile.exists(), "the discovered server was started");
}

#[test]
fn server_everything_lists_its_tools_with_schemas_and_answers_a_call() {
    let sb = sandbox();
    let everything = npm_server("server-everything");
    config(
        &sb,
        &format!(
            "[mcp.servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
            everything.display().to_string()
        ),
    );
    let out = ok(&sb.agent(&[
        "mcp",
        "tools",
        "everything",
        "--format",
        "json",
        "--allow",
        "mcp:everything/shell:exec:node",
    ]));
    let tools: serde_json::Value = serde_json::from_str(&out).expect("json");
    let echo = tools
        .as_array()
        .and_then(|t| t.iter().find(|t| t["name"] == "echo"))
        .unwrap_or_else(|| panic!("no echo tool: {out}"));
    assert_eq!(echo["input_schema"]["type"], "object", "{echo}");
    assert!(
        echo["input_schema"]["properties"]["message"].is_object(),
        "{echo}"
    );

    let started = Instant::now();
    let out = ok(&sb.agent(&[
        "mcp",
        "call",
        "everything",
        "echo",
        "--input",
        r#"{"message":"hello from the test"}"#,
        "--allow",
        "mcp:everything/shell:exec:node",
    ]));
    eprintln!(
        "measure: first MCP tool call (server-everything started, initialize, tools/call, the whole agent process): {} ms",
        started.elapsed().as_millis()
    );
    assert!(out.contains("hello from the test"), "{out}");
    let log = audit(&sb);
    assert!(log.contains("mcp:start"), "{log}");
    assert!(log.contains("tools/call echo"), "{log}");
}

#[test]
fn server_filesystem_reads_a_project_file() {
    let sb = sandbox();
    write(sb.project.path(), "notes/todo.txt", "water the plants\n");
    let fs = npm_server("server-filesystem");
    config(
        &sb,
        &format!(
            "[mcp.servers.files]\ncommand = \"node\"\nargs = [{:?}, {:?}]\n",
            fs.display().to_string(),
            sb.project.path().display().to_string()
        ),
    );
    let allow = "--allow=mcp:files/shell:exec:node";
    let tools = ok(&sb.agent(&["mcp", "tools", "files", allow]));
    assert!(tools.contains("read_text_file"), "{tools}");
    let path = sb.project.path().join("notes/todo.txt");
    let input = serde_json::json!({"path": path}).to_string();
    let out = ok(&sb.agent(&[
        "mcp",
        "call",
        "files",
        "read_text_file",
        "--input",
        &input,
        allow,
    ]));
    assert!(out.contains("water the plants"), "{out}");
}

#[test]
fn an_http_server_needs_net_fetch_and_gets_its_header_from_a_named_variable() {
    let sb = sandbox();
    let server = McpHttpServer::start("s3cret");
    config(
        &sb,
        &format!(
            "[mcp.servers.calc]\nurl = {:?}\nheaders = {{ x-token = \"${{CALC_TOKEN}}\" }}\n",
            server.url
        ),
    );
    let out = sb.agent(&["mcp", "tools", "calc"]);
    assert_eq!(code(&out), 4, "{:?}", text(&out));
    let flag = format!("--allow mcp:calc/net:fetch:{}", server.origin);
    assert!(text(&out).1.contains(&flag), "{:?}", text(&out));

    let allow = format!("--allow=mcp:calc/net:fetch:{}", server.origin);
    let out = sb
        .agent_cmd(&["mcp", "tools", "calc", &allow])
        .env("CALC_TOKEN", "s3cret")
        .output()
        .expect("agent");
    let stdout = ok(&out);
    assert!(stdout.contains("add  Adds two integers"), "{stdout}");
    assert!(stdout.contains("\"required\":[\"a\",\"b\"]"), "{stdout}");

    let out = sb
        .agent_cmd(&[
            "mcp",
            "call",
            "calc",
            "add",
            "--input",
            r#"{"a":2,"b":40}"#,
            &allow,
        ])
        .env("CALC_TOKEN", "s3cret")
        .output()
        .expect("agent");
    assert!(ok(&out).contains("sum = 42"), "{:?}", text(&out));
    assert_eq!(server.calls(), 1);

    // Without the variable the server is not contacted with a made-up header.
    let out = sb.agent(&[
        "mcp",
        "call",
        "calc",
        "add",
        "--input",
        r#"{"a":1,"b":1}"#,
        &allow,
    ]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("the variable CALC_TOKEN is not set"),
        "{:?}",
        text(&out)
    );
    assert_eq!(server.calls(), 1);
}

#[test]
fn a_stdio_server_gets_only_the_variables_its_configuration_names() {
    let sb = sandbox();
    bad_server(&sb, "");
    let out = sb
        .agent_cmd(&["mcp", "call", "bad", "env", BAD])
        .env("MCP_MARK", "/nonexistent/mark")
        .env("SECRET_TOKEN", "do-not-pass")
        .output()
        .expect("agent");
    let names = ok(&out);
    assert_eq!(names.trim(), "MCP_MARK", "{names}");
}

#[test]
fn a_server_killed_mid_call_ends_the_call_with_an_error() {
    let sb = sandbox();
    bad_server(&sb, "call_timeout = \"60s\"");
    let mark = sb.home.path().join("hang.mark");
    let started = Instant::now();
    let child = sb
        .agent_cmd(&["mcp", "call", "bad", "hang", BAD])
        .env("MCP_MARK", &mark)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("agent");
    while !mark.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the call never reached the server"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = read_pid(&mark);
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let out = child.wait_with_output().expect("agent");
    assert!(started.elapsed() < Duration::from_secs(30), "the run hung");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("MCP server `bad` closed the connection during tools/call hang"),
        "{:?}",
        text(&out)
    );
    let log = audit(&sb);
    assert!(
        log.contains("error: MCP server `bad` closed the connection"),
        "{log}"
    );
}

#[test]
fn a_server_that_never_answers_times_out_and_is_stopped() {
    let sb = sandbox();
    let pidfile = sb.home.path().join("silent.pid");
    // Never answers `initialize`.
    config(
        &sb,
        &format!(
            "[mcp]\nstart_timeout = \"2s\"\n[mcp.servers.bad]\ncommand = \"node\"\n\
             args = [{:?}, \"--silent\"]\nenv = [\"MCP_PIDFILE\"]\n",
            misbehaving().display().to_string()
        ),
    );
    let started = Instant::now();
    let out = sb
        .agent_cmd(&["mcp", "tools", "bad", BAD])
        .env("MCP_PIDFILE", &pidfile)
        .output()
        .expect("agent");
    assert!(started.elapsed() < Duration::from_secs(20), "the run hung");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains(
            "MCP server `bad` did not answer the initialize handshake within 2 s; it was stopped"
        ),
        "{:?}",
        text(&out)
    );
    assert!(
        wait_gone(read_pid(&pidfile)),
        "the silent server was left running"
    );

    // Answers `initialize` but never a call: the call's deadline ends it.
    bad_server(&sb, "call_timeout = \"2s\"");
    let out = sb
        .agent_cmd(&["mcp", "call", "bad", "hang", BAD])
        .env("MCP_PIDFILE", &pidfile)
        .output()
        .expect("agent");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains(
            "did not answer tools/call hang within 2 s; it was stopped (raise mcp.call_timeout"
        ),
        "{:?}",
        text(&out)
    );
    assert!(
        wait_gone(read_pid(&pidfile)),
        "the hung server was left running"
    );
    assert!(
        audit(&sb).contains("did not answer tools/call hang"),
        "{}",
        audit(&sb)
    );
}

#[test]
fn crashes_oversized_and_malformed_answers_are_clear_errors() {
    let sb = sandbox();
    bad_server(&sb, "call_timeout = \"3s\"\nmax_result_bytes = 1000");
    let out = sb.agent(&["mcp", "call", "bad", "crash", BAD]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains(
            "closed the connection during tools/call crash; it said: boom: crashing on purpose"
        ),
        "{:?}",
        text(&out)
    );

    let out = sb.agent(&[
        "mcp",
        "call",
        "bad",
        "big",
        "--input",
        r#"{"bytes":5000}"#,
        BAD,
    ]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("more than mcp.max_result_bytes (1000)"),
        "{:?}",
        text(&out)
    );
    let out = sb.agent(&[
        "mcp",
        "call",
        "bad",
        "big",
        "--input",
        r#"{"bytes":500}"#,
        BAD,
    ]);
    assert!(ok(&out).contains(&"x".repeat(500)));

    // An answer too long even for the transport's line limit: the same, at once.
    let started = Instant::now();
    let out = sb.agent(&[
        "mcp",
        "call",
        "bad",
        "big",
        "--input",
        r#"{"bytes":200000}"#,
        BAD,
    ]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "waited for the deadline"
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("it wrote a message longer than 66536 bytes"),
        "{:?}",
        text(&out)
    );

    // A line that is not JSON ends the call at once with what the server wrote, not at the
    // 3 s deadline (rmcp alone drops the line and waits).
    let started = Instant::now();
    let out = sb.agent(&["mcp", "call", "bad", "garbage", BAD]);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "waited for the deadline"
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("MCP server `bad`")
            && text(&out)
                .1
                .contains("it wrote a line that is not JSON-RPC"),
        "{:?}",
        text(&out)
    );
    let log = audit(&sb);
    assert!(log.contains("tools/call crash"), "{log}");
    assert!(log.contains("tools/call garbage"), "{log}");
}

#[test]
fn add_and_remove_edit_config_toml() {
    let sb = sandbox();
    config(&sb, "[agent]\nmax_turns = 7\n");
    ok(&sb.agent(&[
        "mcp",
        "add",
        "everything",
        "--env",
        "HOME",
        "--",
        "node",
        "server.js",
        "stdio",
    ]));
    ok(&sb.agent(&[
        "mcp",
        "add",
        "web",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "x-token=${T}",
    ]));
    let text_now = std::fs::read_to_string(sb.paths().config_file()).expect("config");
    assert!(
        text_now.starts_with("[agent]\nmax_turns = 7\n"),
        "{text_now}"
    );
    let list = ok(&sb.agent(&["mcp", "list"]));
    assert!(list.contains("node server.js stdio"), "{list}");
    assert!(list.contains("http://127.0.0.1:9/mcp"), "{list}");
    let again = sb.agent(&["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp"]);
    assert_eq!(code(&again), 2, "{:?}", text(&again));

    ok(&sb.agent(&["mcp", "remove", "everything"]));
    let list = ok(&sb.agent(&["mcp", "list"]));
    assert!(!list.contains("server.js"), "{list}");
    assert!(list.contains("web "), "{list}");
    let text_now = std::fs::read_to_string(sb.paths().config_file()).expect("config");
    assert!(text_now.contains("max_turns = 7"), "{text_now}");
    let missing = sb.agent(&["mcp", "remove", "nothing"]);
    assert_eq!(code(&missing), 2, "{:?}", text(&missing));
}

#[test]
fn a_servers_resources_are_listed_and_read_for_attaching() {
    let sb = sandbox();
    config(
        &sb,
        &format!(
            "[mcp.servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
            npm_server("server-everything").display().to_string()
        ),
    );
    let allow = "--allow=mcp:everything/shell:exec:node";
    let list = ok(&sb.agent(&["mcp", "resources", "everything", allow]));
    let uri = list
        .lines()
        .skip(1)
        .find_map(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no resources:\n{list}"))
        .to_string();
    let text = ok(&sb.agent(&["mcp", "read", "everything", &uri, allow]));
    assert!(!text.trim().is_empty(), "{uri} read as nothing");
    let log = audit(&sb);
    assert!(log.contains(&format!("resources/read {uri}")), "{log}");
}

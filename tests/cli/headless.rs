//! The spec's headless spellings (issue 15, item 13), through the real
//! binary against a scripted model on 127.0.0.1: `agent --headless
//! --prompt …` is `agent run --prompt …`; `--approve-skills NAME` grants a
//! skill what its SKILL.yaml declares for one run; `--tools read,search`
//! takes the spec's short tool names. Each test reads what the model was
//! offered (the tool list in the request body) and what was granted (the
//! audit log).

use agent_tests::model_server::{ModelServer, Recorded, Reply, Wire, jsonl, tokio_rt};
use agent_tests::{Sandbox, text};
use serde_json::{Value, json};

use super::{code, ok, sandbox, write};

/// `agent` with `args` against `server` (Anthropic wire, JSONL output).
fn agent(sb: &Sandbox, server: &ModelServer, args: &[&str]) -> std::process::Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend_from_slice(&[
        "--provider",
        "anthropic",
        "--model",
        "test-model",
        "--base-url",
        server.url(),
        "--output",
        "jsonl",
    ]);
    sb.agent_cmd(&all)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent")
}

fn serve(replies: Vec<Reply>) -> (tokio::runtime::Runtime, ModelServer) {
    let rt = tokio_rt();
    let server = rt.block_on(ModelServer::start(replies)).expect("server");
    (rt, server)
}

/// The tool names offered to the model in a request, sorted.
fn offered(r: &Recorded) -> Vec<String> {
    let mut names: Vec<String> = r.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// Event types and tool results of a JSONL run, for comparing two runs.
fn outline(stdout: &str) -> Vec<String> {
    jsonl(stdout)
        .iter()
        .filter(|e| e["type"] != "usage")
        .map(|e| match e["type"].as_str().unwrap_or_default() {
            "tool_result" => format!("tool_result {} {}", e["id"], e["is_error"]),
            "final" => format!("final {} {}", e["stop"], e["text"]),
            other => other.to_string(),
        })
        .collect()
}

/// Audit entries of `sb` (skill, capability, decision).
fn audit(sb: &Sandbox) -> Vec<(String, String, String)> {
    let out = ok(&sb.agent(&["audit", "show", "--last", "1000"]));
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() >= 5).then(|| (f[2].to_string(), f[3].to_string(), f[4].to_string()))
        })
        .collect()
}

fn read_then_answer() -> Vec<Reply> {
    vec![
        Wire::Anthropic.tool("call_r", "read_file", &json!({"path": "notes.txt"})),
        Wire::Anthropic.answer("notes.txt says hello."),
    ]
}

/// `agent --headless --prompt …` runs the same loop as `agent run --prompt
/// …`: the same flags (before or after `--headless`), the same events, the
/// same requests, the same usage errors.
#[test]
fn headless_prompt_behaves_as_run_prompt() {
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello\n");
    let flags = [
        "--max-turns",
        "3",
        "--timeout",
        "60s",
        "--allow",
        "file:read",
    ];

    let (_rt1, run_server) = serve(read_then_answer());
    let mut run_args = vec!["run", "--prompt", "What do the notes say?"];
    run_args.extend_from_slice(&flags);
    let run = agent(&sb, &run_server, &run_args);
    let run_out = ok(&run);

    let (_rt2, headless_server) = serve(read_then_answer());
    let mut headless_args = vec!["-v", "--headless", "--prompt", "What do the notes say?"];
    headless_args.extend_from_slice(&flags);
    let headless = agent(&sb, &headless_server, &headless_args);
    let headless_out = ok(&headless);

    assert_eq!(outline(&headless_out), outline(&run_out));
    assert!(
        headless_out.contains("notes.txt says hello."),
        "{headless_out}"
    );
    let (a, b) = (run_server.requests(), headless_server.requests());
    assert_eq!(a.len(), 2);
    assert_eq!(b.len(), 2);
    assert_eq!(offered(&b[0]), offered(&a[0]));
    assert!(b[0].body.to_string().contains("What do the notes say?"));
    assert!(
        b[1].body.to_string().contains("hello"),
        "the tool result reached the model"
    );

    // Its usage errors are run's.
    let (_rt3, unused) = serve(vec![]);
    let bad = agent(
        &sb,
        &unused,
        &["--headless", "--prompt", "x", "--max-turns", "0"],
    );
    let (_, stderr) = text(&bad);
    assert_eq!(code(&bad), 2, "{stderr}");
    assert!(
        stderr.contains("--max-turns must be at least 1"),
        "{stderr}"
    );
    assert!(unused.requests().is_empty());

    // `agent --help` documents it.
    let help = ok(&sb.agent(&["--help"]));
    assert!(
        help.contains("--headless") && help.contains("is `agent run ARGS`"),
        "{help}"
    );
}

/// `--approve-skills core-tools` grants core-tools what its SKILL.yaml
/// declares and approves its tools, for this run only: the edit and the
/// program run, the audit log says the grants came from --approve-skills,
/// and the next run without the flag is refused again.
#[test]
fn approve_skills_grants_what_the_manifest_declares_for_this_run_only() {
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello world\n");
    let script = || {
        vec![
            Wire::Anthropic.tool(
                "call_e",
                "edit",
                &json!({"path": "notes.txt", "old": "world", "new": "agent"}),
            ),
            Wire::Anthropic.tool(
                "call_x",
                "exec",
                &json!({"program": "echo", "args": ["done"]}),
            ),
            Wire::Anthropic.answer("Edited."),
        ]
    };
    let (_rt1, server) = serve(script());
    let out = agent(
        &sb,
        &server,
        &[
            "run",
            "--prompt",
            "Greet the agent",
            "--approve-skills",
            "core-tools",
        ],
    );
    let stdout = ok(&out);
    let results: Vec<Value> = jsonl(&stdout)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{stdout}");
    for r in &results {
        assert_eq!(r["is_error"], false, "{r}");
    }
    assert!(
        results[1]["output"].to_string().contains("done"),
        "{}",
        results[1]
    );
    assert_eq!(
        std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("read"),
        "hello agent\n"
    );
    let entries = audit(&sb);
    for perm in ["file:write", "shell:exec"] {
        assert!(
            entries
                .iter()
                .any(|(s, c, d)| s == "core-tools" && c == perm && d == "granted:approve-skills"),
            "no granted:approve-skills entry for {perm}: {entries:?}"
        );
    }

    // Nothing was stored: the same run without the flag is not approved.
    write(sb.project.path(), "notes.txt", "hello world\n");
    let (_rt2, server) = serve(script());
    let out = agent(&sb, &server, &["--headless", "--prompt", "Greet the agent"]);
    let (stdout, stderr) = text(&out);
    let results: Vec<Value> = jsonl(&stdout)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "{stdout}\n{stderr}");
    for r in &results {
        assert_eq!(r["is_error"], true, "approved without the flag: {r}");
    }
    assert_eq!(
        std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("read"),
        "hello world\n"
    );
}

/// A name no skill has is a usage error naming the skills there are; the
/// model is never asked.
#[test]
fn approve_skills_with_an_unknown_name_is_a_usage_error_naming_the_skills() {
    let sb = sandbox();
    let (_rt, server) = serve(vec![]);
    let out = agent(
        &sb,
        &server,
        &[
            "run",
            "--prompt",
            "x",
            "--approve-skills",
            "core-tools,kubernetes",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("--approve-skills: no skill named `kubernetes`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("core-tools"),
        "the skills are not named: {stderr}"
    );
    assert!(server.requests().is_empty());
}

/// `--tools read,search` offers the model exactly read_file and search; a
/// short name mixed with a full one works; an unknown one is a usage error
/// listing the tools and the short names.
#[test]
fn tools_takes_the_specs_short_names() {
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello\n");
    let (_rt1, server) = serve(read_then_answer());
    let out = agent(
        &sb,
        &server,
        &[
            "run",
            "--prompt",
            "Read the notes",
            "--tools",
            "read,search",
            "--allow",
            "file:read",
        ],
    );
    let stdout = ok(&out);
    let reqs = server.requests();
    assert_eq!(offered(&reqs[0]), ["read_file", "search"]);
    let read = jsonl(&stdout)
        .into_iter()
        .find(|e| e["type"] == "tool_result")
        .expect("read_file result");
    assert_eq!(read["is_error"], false, "{read}");
    assert!(read["output"].to_string().contains("hello"), "{read}");

    let (_rt2, server) = serve(vec![Wire::Anthropic.answer("ok")]);
    let out = agent(
        &sb,
        &server,
        &["--headless", "--prompt", "x", "--tools", "ls,bash,edit"],
    );
    ok(&out);
    assert_eq!(offered(&server.requests()[0]), ["edit", "exec", "list_dir"]);

    let (_rt3, server) = serve(vec![]);
    let out = agent(
        &sb,
        &server,
        &["run", "--prompt", "x", "--tools", "read,fly"],
    );
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(stderr.contains("--tools: no tool named `fly`"), "{stderr}");
    assert!(stderr.contains("read_file"), "{stderr}");
    assert!(
        stderr.contains("read=read_file") && stderr.contains("bash=exec"),
        "{stderr}"
    );
    assert!(server.requests().is_empty());
}

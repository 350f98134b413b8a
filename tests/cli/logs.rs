//! `agent logs` (issue 17, item 2): logs mined into templates by the real
//! binary — `--templates --output jsonl` (no model: one line per input
//! line, stack traces on their first line's template), from a file and from
//! standard input; the model's analysis through `report_incident` against
//! the loopback model server, cited lines checked; `agent run -p` with piped
//! standard input.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use agent_tests::model_server::{ModelServer, Reply, Wire, anthropic_sse, tokio_rt};
use agent_tests::text;
use serde_json::{Value, json};

use super::sandbox;

#[path = "../../host/logs/tests/corpus/mod.rs"]
mod corpus;

const LOG: &str = "\
2024-01-15T10:00:00Z INFO worker 1 started in 15ms
2024-01-15T10:00:01Z INFO worker 2 started in 12ms
2024-01-15T10:00:02Z ERROR request 7f3a failed
java.lang.IllegalStateException: ledger 12 is locked
\tat com.example.Ledger.lock(Ledger.java:42)
\tat com.example.Service.pay(Service.java:7)
2024-01-15T10:00:03Z INFO worker 3 started in 9ms
2024-01-15T10:00:04Z WARN pool exhausted active=50 idle=0
";

/// Runs `agent ARGS` in `dir` with `stdin` piped in.
fn agent_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let sb = sandbox();
    let mut child = sb
        .agent_cmd(args)
        .current_dir(dir)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "test-key")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agent");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(bytes).expect("write stdin");
    }
    child.wait_with_output().expect("wait")
}

fn lines_of(out: &Output) -> Vec<Value> {
    let (stdout, stderr) = text(out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn templates_jsonl_gives_every_line_its_template_without_a_model() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("app.log"), LOG).expect("write");
    let out = agent_in(
        dir.path(),
        &["logs", "--templates", "app.log", "--output", "jsonl"],
        None,
    );
    let rows = lines_of(&out);
    assert_eq!(rows.len(), 8, "one row per input line: {rows:#?}");
    let ids: Vec<u64> = rows
        .iter()
        .map(|r| r["template_id"].as_u64().expect("id"))
        .collect();
    // The three "worker started" lines share a template; the stack trace's
    // four lines carry its first line's template.
    assert_eq!(ids, vec![1, 1, 2, 2, 2, 2, 1, 3]);
    assert_eq!(rows[0]["input"], "app.log");
    assert_eq!(rows[4]["line"], 5);
    assert_eq!(rows[6]["template"], "INFO worker <*> started in <*>");
    assert_eq!(rows[2]["template"], "ERROR request <*> failed");
    assert_eq!(
        rows[7]["template"],
        "WARN pool exhausted active=<*> idle=<*>"
    );
}

#[test]
fn templates_from_standard_input_and_ranked_as_text() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = agent_in(
        dir.path(),
        &["logs", "--templates", "--output", "jsonl"],
        Some(LOG.as_bytes()),
    );
    let rows = lines_of(&out);
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0]["input"], "stdin");
    // Text: the templates, most anomalous first (the error, then the warning).
    let out = agent_in(
        dir.path(),
        &["logs", "--templates", "-"],
        Some(LOG.as_bytes()),
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let first: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        first,
        vec![
            "T2\terror\t1\tERROR request <*> failed",
            "T3\twarn\t1\tWARN pool exhausted active=<*> idle=<*>",
            "T1\tinfo\t3\tINFO worker <*> started in <*>",
        ]
    );
}

#[test]
fn bad_flags_and_missing_files_are_usage_errors_naming_them() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = agent_in(dir.path(), &["logs", "--templates", "missing.log"], None);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("missing.log: no such log file"), "{stderr}");
    std::fs::write(dir.path().join("app.log"), LOG).expect("write");
    let out = agent_in(
        dir.path(),
        &["logs", "--templates", "app.log", "--since", "yesterday"],
        None,
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--since: `yesterday` is not a time"),
        "{stderr}"
    );
    // --since keeps the records from 10:00:03 on.
    let out = agent_in(
        dir.path(),
        &[
            "logs",
            "--templates",
            "app.log",
            "--output",
            "jsonl",
            "--since",
            "2024-01-15T10:00:03Z",
        ],
        None,
    );
    let rows = lines_of(&out);
    let lines: Vec<u64> = rows
        .iter()
        .map(|r| r["line"].as_u64().expect("line"))
        .collect();
    assert_eq!(lines, vec![7, 8]);
}

/// An Anthropic turn calling `report_incident` with `input`, its JSON cut
/// into 9-byte `input_json_delta`s, and the SSE bytes themselves sent in
/// pieces of at most 7 bytes: the call arrives split across stream chunks.
fn split_report(id: &str, input: &Value) -> Reply {
    let raw = input.to_string();
    let mut events = vec![
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 40, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": "report_incident", "input": {}}}),
    ];
    let bytes = raw.as_bytes();
    for piece in bytes.chunks(9) {
        let piece = std::str::from_utf8(piece).expect("ASCII report");
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": piece}}));
    }
    events.extend([
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]);
    Reply::sse(anthropic_sse(&events)).split(7, Duration::ZERO)
}

/// A report citing line 3 (the error, exists), lines 999 and 4000 (do not
/// exist: the log has 8 lines); the second hypothesis cites only a line
/// that does not exist.
fn report() -> Value {
    json!({
        "summary": "Payments fail because ledger 12 is locked.",
        "severity": "high",
        "timeline": [
            {"time": "10:00:02", "event": "first payment failure", "line": 3},
            {"event": "invented event", "line": 4000}
        ],
        "root_causes": [
            {"hypothesis": "ledger lock contention", "confidence": "high",
             "evidence": [{"line": 3}, {"line": 4}, {"line": 999}]},
            {"hypothesis": "a bad deploy", "confidence": "medium",
             "evidence": [{"input": "app.log", "line": 999}]}
        ],
        "actions": ["release the ledger lock", "raise the pool size"]
    })
}

/// The text of the tool result for call `id` in a recorded Anthropic request.
fn tool_result(body: &Value, id: &str) -> Option<(String, bool)> {
    body["messages"].as_array()?.iter().find_map(|m| {
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

fn user_text(body: &Value) -> String {
    body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn logs_of_a_file_reported_through_the_tool_with_lines_that_do_not_exist_dropped() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            split_report("call_1", &report()),
            Wire::Anthropic.answer("Reported."),
        ]))
        .expect("server");
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("app.log"), LOG).expect("write");
    let out = agent_in(
        dir.path(),
        &[
            "logs",
            "app.log",
            "--provider",
            "anthropic",
            "--model",
            "m",
            "--base-url",
            server.url(),
        ],
        None,
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    // The cited lines that do not exist are gone, counted on stderr; the
    // hypothesis left with none is demoted.
    assert!(
        stderr.contains(
            "report_incident: dropped 2 evidence line(s) and 1 timeline entr(ies) citing lines \
             that do not exist; 1 hypothesis(es) demoted"
        ),
        "{stderr}"
    );
    assert!(
        stdout.starts_with("# Incident report\n\n**Severity:** high\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("- 10:00:02 first payment failure (app.log:3)\n"),
        "{stdout}"
    );
    assert!(!stdout.contains("invented event"), "{stdout}");
    assert!(
        stdout.contains(
            "1. ledger lock contention (confidence: high)\n   evidence: app.log:3, app.log:4\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "2. a bad deploy (confidence: low)\n   evidence: none that exists (demoted)\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("- release the ledger lock\n"), "{stdout}");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{stderr}");
    let first = &reqs[0].body;
    // The model saw the overview, not the raw log: templates ranked, the
    // error first, samples with their input:line.
    let user = user_text(first);
    assert!(user.contains("<document name=\"log-overview\">"), "{user}");
    let error = user.find("[T2] error ×1").expect("the error template");
    let info = user.find("[T1] info ×3").expect("the info template");
    assert!(error < info, "{user}");
    assert!(user.contains("  first app.log:3-6:\n    | 2024-01-15T10:00:02Z ERROR request 7f3a failed\n    | java.lang.IllegalStateException"), "{user}");
    // Only the report tool is offered, and the built-in skill's
    // instructions are in the system prompt.
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(tools, ["report_incident"]);
    let system = first["system"].to_string();
    assert!(
        system.contains("You are analysing logs for an incident"),
        "{system}"
    );
    // The model is told what was dropped.
    let (answer, is_error) = tool_result(&reqs[1].body, "call_1").expect("tool result");
    assert!(!is_error, "{answer}");
    assert!(
        answer.contains("3 cited line(s) do not exist and were dropped"),
        "{answer}"
    );
    assert!(
        answer.contains("evidence app.log:999 (`app.log` has 8 lines)"),
        "{answer}"
    );
}

#[test]
fn a_report_missing_fields_or_with_a_bad_confidence_is_refused_and_the_model_told() {
    let rt = tokio_rt();
    let mut bad = report();
    bad.as_object_mut().expect("object").remove("actions");
    bad["root_causes"][0]["confidence"] = json!("certain");
    let server = rt
        .block_on(ModelServer::start(vec![
            split_report("call_bad", &bad),
            split_report("call_good", &report()),
            Wire::Anthropic.answer("Reported."),
        ]))
        .expect("server");
    let dir = tempfile::tempdir().expect("tmp");
    // From standard input, as JSON.
    let out = agent_in(
        dir.path(),
        &[
            "logs",
            "--output",
            "json",
            "--provider",
            "anthropic",
            "--model",
            "m",
            "--base-url",
            server.url(),
        ],
        Some(LOG.as_bytes()),
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3, "{stderr}");
    let (refusal, is_error) = tool_result(&reqs[1].body, "call_bad").expect("refusal");
    assert!(is_error, "{refusal}");
    assert!(refusal.contains("actions"), "{refusal}");
    let doc: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(doc["inputs"], json!([{"name": "stdin", "lines": 8}]));
    assert_eq!(
        doc["report"]["summary"],
        "Payments fail because ledger 12 is locked."
    );
    assert_eq!(doc["report"]["root_causes"][1]["unsupported"], true);
    assert_eq!(doc["dropped"].as_array().map(Vec::len), Some(3));
    assert_eq!(doc["demoted"], 1);
    assert_eq!(doc["dropped"][0]["kind"], "timeline");
    assert_eq!(doc["dropped"][0]["line"], 4000);
}

#[test]
fn run_mode_log_analysis_reads_piped_logs_and_a_model_that_never_reports_fails() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            split_report("call_1", &report()),
            Wire::Anthropic.answer("Reported."),
            Wire::Anthropic.answer("I think it is the ledger."),
        ]))
        .expect("server");
    let dir = tempfile::tempdir().expect("tmp");
    let args = [
        "run",
        "--mode",
        "log-analysis",
        "-p",
        "Why do payments fail?",
        "--provider",
        "anthropic",
        "--model",
        "m",
        "--base-url",
        server.url(),
    ];
    let out = agent_in(dir.path(), &args, Some(LOG.as_bytes()));
    let (stdout, stderr) = text(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stdout.contains("- 10:00:02 first payment failure (stdin:3)"),
        "{stdout}"
    );
    let reqs = server.requests();
    assert!(
        user_text(&reqs[0].body)
            .starts_with("Why do payments fail?\n\n<document name=\"log-overview\">")
    );
    // The third answer never calls the tool: exit 1, the answer shown.
    let out = agent_in(dir.path(), &args, Some(LOG.as_bytes()));
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the model finished without calling report_incident")
            && stderr.contains("I think it is the ledger."),
        "{stderr}"
    );
    // --output jsonl is for --templates.
    let out = agent_in(
        dir.path(),
        &["run", "--mode", "log-analysis", "--output", "jsonl"],
        Some(LOG.as_bytes()),
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--mode log-analysis writes text, json or markdown"),
        "{stderr}"
    );
}

#[test]
fn templates_jsonl_of_generated_logs_groups_at_least_95_percent_of_lines_right() {
    // The grouping accuracy measured as users would: the binary's jsonl on
    // logs generated from 35 known templates in 11 formats (stack traces
    // included), against each line's true template.
    let (log, truth) = corpus::corpus(21, 5_000);
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("gen.log"), &log).expect("write");
    let out = agent_in(
        dir.path(),
        &["logs", "--templates", "gen.log", "--output", "jsonl"],
        None,
    );
    let rows = lines_of(&out);
    assert_eq!(rows.len(), truth.len(), "one row per line");
    let predicted: Vec<u64> = rows
        .iter()
        .map(|r| r["template_id"].as_u64().expect("id"))
        .collect();
    let accuracy = corpus::grouping_accuracy(&predicted, &truth);
    assert!(accuracy >= 0.95, "grouping accuracy {accuracy}");
}

#[test]
fn a_plain_run_carries_no_mode_skills_instructions() {
    // The built-in skills of `agent logs`, `agent review` and `security-audit --deep` name
    // tools only those modes offer: a plain `agent run` must not send their instructions.
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![Wire::Anthropic.answer("hello")]))
        .expect("server");
    let dir = tempfile::tempdir().expect("tmp");
    let out = agent_in(
        dir.path(),
        &[
            "run",
            "-p",
            "Find the root cause of the slow build",
            "--provider",
            "anthropic",
            "--model",
            "m",
            "--base-url",
            server.url(),
        ],
        None,
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let system = reqs[0].body["system"].to_string();
    for instructions in [
        "You are analysing logs for an incident",
        "report_incident",
        "report_finding",
    ] {
        assert!(
            !system.contains(instructions),
            "a plain run carries `{instructions}`:\n{system}"
        );
    }
}

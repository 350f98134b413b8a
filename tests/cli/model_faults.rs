//! A broken or hostile model server, against the real binary: tool
//! arguments that are not JSON, a response far larger than any answer, a
//! thousand tool calls in one answer, an answer cut off mid-stream. The
//! scripted server on 127.0.0.1 sends exactly the bytes a small local model
//! or a flaky proxy sends; the loop must survive each, tell the model what
//! went wrong, and keep the session whole.

use std::time::{Duration, Instant};

use agent_tests::model_server::{
    ModelServer, Recorded, Reply, Wire, anthropic_answer, jsonl as events, openai_sse, tokio_rt,
};
use agent_tests::{Sandbox, text};
use serde_json::{Value, json};

use super::{code, sandbox, write};

const WIRES: [Wire; 3] = [Wire::OpenAi, Wire::Anthropic, Wire::Ollama];

fn run(sb: &Sandbox, wire: Wire, server: &ModelServer, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "--provider",
        wire.name(),
        "--model",
        "test-model",
        "--base-url",
        server.url(),
        "--allow",
        "file:read",
    ];
    if !extra.contains(&"--output") {
        args.extend(["--output", "jsonl"]);
    }
    args.extend_from_slice(extra);
    sb.agent_cmd(&args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent")
}

/// stdout and stderr of a run that must have ended with exit code `want`.
fn ended(out: &std::process::Output, want: i32, what: impl std::fmt::Debug) -> (String, String) {
    let (stdout, stderr) = text(out);
    assert_eq!(
        code(out),
        want,
        "{what:?}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    (stdout, stderr)
}

fn of_type<'e>(evs: &'e [Value], t: &str) -> Vec<&'e Value> {
    evs.iter().filter(|e| e["type"] == t).collect()
}

fn body(r: &Recorded) -> String {
    r.body.to_string()
}

/// Item 12: a small model's arguments `{"path": "notes.txt"` (no closing
/// brace) no longer end the run with "malformed stream: arguments of c0
/// are not JSON". The call is answered with a tool error quoting the parse
/// error, nothing runs, the model sends the call again correctly, and the
/// run ends normally, the bad call counted. All three wire formats.
#[test]
fn arguments_that_are_not_json_are_answered_with_the_parse_error_and_the_model_retries() {
    for wire in WIRES {
        let rt = tokio_rt();
        let server = rt
            .block_on(ModelServer::start(vec![
                wire.raw_tool("c0", "read_file", r#"{"path": "notes.txt""#),
                wire.tool("c1", "read_file", &json!({"path": "notes.txt"})),
                wire.answer("The notes say 42."),
            ]))
            .expect("server");
        let sb = sandbox();
        write(sb.project.path(), "notes.txt", "forty-two: 42\n");
        let out = run(&sb, wire, &server, &["--prompt", "What do the notes say?"]);
        let (stdout, stderr) = ended(&out, 0, wire);
        let evs = events(&stdout);
        let results = of_type(&evs, "tool_result");
        assert_eq!(results.len(), 2, "{wire:?}: {results:?}");
        // The bad call: an error that quotes serde's message, not run.
        assert_eq!(results[0]["is_error"], true, "{wire:?}");
        let bad = results[0]["output"].as_str().unwrap_or_default();
        assert!(
            bad.starts_with(
                "not run: the arguments of this call to `read_file` are not valid JSON (EOF while parsing an object at line 1 column 20)"
            ),
            "{wire:?}: {bad}"
        );
        // The retried call ran.
        assert_eq!(results[1]["is_error"], false, "{wire:?}");
        assert!(
            results[1]["output"]
                .as_str()
                .unwrap_or_default()
                .contains("forty-two"),
            "{wire:?}: {}",
            results[1]
        );
        // The model was told: the second request carries the error.
        let reqs = server.requests();
        assert_eq!(reqs.len(), 3, "{wire:?}");
        assert!(
            body(&reqs[1]).contains("are not valid JSON (EOF while parsing an object"),
            "{wire:?}: {}",
            body(&reqs[1])
        );
        if wire == Wire::OpenAi {
            // OpenAI takes arguments as a string: the model sees exactly
            // what it sent.
            assert!(
                body(&reqs[1]).contains(r#""arguments":"{\"path\": \"notes.txt\"""#),
                "{}",
                body(&reqs[1])
            );
        }
        assert!(
            stderr.contains("model: 1 tool call(s) with arguments that are not JSON"),
            "{wire:?}: {stderr}"
        );
        let last = evs.last().expect("events");
        assert_eq!(last["stop"], "end_turn", "{wire:?}");
    }

    // The count is in the run's JSON summary too.
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::OpenAi.raw_tool("c0", "read_file", "{path: notes.txt}"),
            Wire::OpenAi.answer("Sorry."),
        ]))
        .expect("server");
    let sb = sandbox();
    let out = run(
        &sb,
        Wire::OpenAi,
        &server,
        &["--prompt", "Read the notes", "--output", "json"],
    );
    let (stdout, _) = ended(&out, 0, "");
    let summary: Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert_eq!(
        summary["model_errors"],
        json!({"invalid_tool_calls": 1, "skipped_tool_calls": 0, "interrupted_streams": 0})
    );
}

/// Item 12, the bound: a model that never sends JSON arguments cannot loop
/// until the turn limit; after `agent.max_invalid_tool_calls` in a row
/// (here 3) the run stops with a message that says why and what to do, and
/// the count is in `--output json`.
#[test]
fn invalid_tool_calls_in_a_row_stop_the_run_at_the_configured_limit() {
    let rt = tokio_rt();
    let wire = Wire::OpenAi;
    let server = rt
        .block_on(ModelServer::start(
            (0..10)
                .map(|i| wire.raw_tool(&format!("c{i}"), "read_file", "path=notes.txt"))
                .collect(),
        ))
        .expect("server");
    let sb = sandbox();
    write(
        &sb.paths().config_dir,
        "config.toml",
        "[agent]\nmax_invalid_tool_calls = 3\n",
    );
    let out = run(&sb, wire, &server, &["--prompt", "Read the notes"]);
    let (_, stderr) = ended(&out, 3, "");
    assert!(
        stderr.contains(
            "error: the model sent 3 tool calls in a row whose arguments are not JSON (the last: not run: the arguments of this call to `read_file` are not valid JSON (expected value at line 1 column 1)"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("`agent.max_invalid_tool_calls`"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 3, "no request after the limit");
}

/// Item 13: one SSE event of 50 MB. Before, `--timeout 20s` did not hold
/// (80 s, 495 MB RSS): the parser rescanned its whole buffer for each
/// piece. Now the response is cut at `provider.max_response_bytes` (8 MiB
/// by default) with an error naming the cap and the key, in seconds.
#[test]
fn a_fifty_megabyte_event_is_cut_at_the_response_cap() {
    let rt = tokio_rt();
    let huge = "a".repeat(50 * 1024 * 1024);
    let chunk = json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": huge}, "finish_reason": null}]});
    let server = rt
        .block_on(ModelServer::start(vec![Reply::sse(openai_sse(&[chunk]))]))
        .expect("server");
    drop(huge);
    let sb = sandbox();
    let started = Instant::now();
    let out = run(
        &sb,
        Wire::OpenAi,
        &server,
        &["--prompt", "Say something", "--timeout", "20s"],
    );
    let took = started.elapsed();
    let (_, stderr) = ended(&out, 3, "");
    assert!(
        stderr.contains(
            "openai: the response exceeded 8388608 bytes and was cut there; if this model really sends that much, raise `provider.max_response_bytes` in config.toml"
        ),
        "{stderr}"
    );
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

/// Item 13, the deadline: a response that never ends (a huge event
/// dribbled out, under a raised cap) is stopped at `--timeout`, not when the
/// server is done.
#[test]
fn the_timeout_bounds_a_response_that_never_ends() {
    let rt = tokio_rt();
    // What a run that answers at once takes on this machine (start-up,
    // loading the skills): the bound below is on top of it.
    let quick = rt
        .block_on(ModelServer::start(vec![Wire::OpenAi.answer("ok")]))
        .expect("server");
    let sb = sandbox();
    let started = Instant::now();
    assert_eq!(
        code(&run(&sb, Wire::OpenAi, &quick, &["--prompt", "hi"])),
        0
    );
    let baseline = started.elapsed();

    let mut body = b"data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"".to_vec();
    body.extend(std::iter::repeat_n(b'a', 20 * 1024 * 1024));
    let server = rt
        .block_on(ModelServer::start(vec![
            Reply::sse(body).split(64 * 1024, Duration::from_millis(5)),
        ]))
        .expect("server");
    write(
        &sb.paths().config_dir,
        "config.toml",
        "[provider]\nmax_response_bytes = 104857600\n",
    );
    let started = Instant::now();
    let out = run(
        &sb,
        Wire::OpenAi,
        &server,
        &["--prompt", "Say something", "--timeout", "2s"],
    );
    let took = started.elapsed();
    let (_, stderr) = ended(&out, 5, "");
    assert!(
        stderr.contains("stopped: the time limit (2s) was reached"),
        "{stderr}"
    );
    assert!(
        took < baseline + Duration::from_secs(4),
        "took {took:?} (a quick run: {baseline:?})"
    );
}

/// Item 14: 1,000 tool calls in one answer. At most
/// `agent.max_tool_calls_per_turn` (32 by default) run; every other call is
/// answered "not run" (each call gets a result, so the transcript stays
/// valid for APIs that demand one per call) and the model is told how to
/// go on.
#[test]
fn a_thousand_tool_calls_in_one_answer_run_only_up_to_the_cap() {
    for wire in [Wire::OpenAi, Wire::Anthropic] {
        let rt = tokio_rt();
        let server = rt
            .block_on(ModelServer::start(vec![
                wire.many_tools(1000, "read_file", &json!({"path": "notes.txt"})),
                wire.answer("Read it."),
            ]))
            .expect("server");
        let sb = sandbox();
        write(sb.project.path(), "notes.txt", "forty-two: 42\n");
        let out = run(&sb, wire, &server, &["--prompt", "Read the notes"]);
        let (stdout, stderr) = ended(&out, 0, wire);
        let evs = events(&stdout);
        let results = of_type(&evs, "tool_result");
        assert_eq!(results.len(), 1000, "{wire:?}: one result per call");
        let ran: Vec<_> = results.iter().filter(|r| r["is_error"] == false).collect();
        assert_eq!(ran.len(), 32, "{wire:?}");
        for r in &results[32..] {
            assert_eq!(
                r["output"],
                "not run: this answer asked for 1000 tool calls and at most 32 run per turn (`agent.max_tool_calls_per_turn`); the first 32 ran. Ask again for the calls you still need.",
                "{wire:?}"
            );
        }
        assert!(
            of_type(&evs, "warning").iter().any(|w| w["message"]
                .as_str()
                .unwrap_or_default()
                .contains("the first 32 ran, the other 968 were answered \"not run\"")),
            "{wire:?}"
        );
        // The follow-up request answers every call.
        let follow_up = body(&server.requests()[1]);
        assert_eq!(
            follow_up
                .matches("not run: this answer asked for 1000")
                .count(),
            968,
            "{wire:?}"
        );
        assert!(
            stderr.contains("model: 968 tool call(s) over `agent.max_tool_calls_per_turn`"),
            "{wire:?}: {stderr}"
        );
    }
}

/// The first bytes of an Anthropic answer streaming `deltas`: everything
/// up to (and including) the first delta's event, then the connection is
/// closed.
fn anthropic_cut_after_first_delta(deltas: &[&str]) -> Reply {
    let full = anthropic_answer(deltas);
    let text = String::from_utf8(full.body.clone()).expect("utf-8");
    let first = text.find(deltas[0]).expect("first delta");
    let end = text[first..].find("\n\n").expect("event end") + first + 2;
    full.cut_at(end)
}

/// Item 15: the connection drops after the first words of the answer. The
/// request is sent again after a backoff, as for a 5xx, and the run ends
/// normally with the whole answer; the session holds the answer once.
#[test]
fn a_stream_cut_mid_answer_is_sent_again() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            anthropic_cut_after_first_delta(&["The notes ", "say 42."]),
            anthropic_answer(&["The notes ", "say 42."]),
        ]))
        .expect("server");
    let sb = sandbox();
    let out = run(
        &sb,
        Wire::Anthropic,
        &server,
        &["--prompt", "What do the notes say?"],
    );
    let (stdout, stderr) = ended(&out, 0, "");
    let evs = events(&stdout);
    let interrupted = of_type(&evs, "interrupted");
    assert_eq!(interrupted.len(), 1, "{evs:?}");
    assert_eq!(interrupted[0]["retrying"], true);
    assert_eq!(interrupted[0]["attempt"], 1);
    assert_eq!(server.requests().len(), 2);
    let last = evs.last().expect("events");
    assert_eq!(last["stop"], "end_turn");
    assert_eq!(last["text"], "The notes say 42.");
    assert!(
        stderr.contains("model: 1 answer(s) cut off mid-stream"),
        "{stderr}"
    );

    // The conversation kept holds the answer once, without the cut copy.
    let session = last_session(&sb);
    let shown = text(&sb.agent(&["sessions", "show", &session])).0;
    assert_eq!(shown.matches("The notes").count(), 1, "{shown}");
    assert!(shown.contains("[assistant] The notes say 42."), "{shown}");
}

/// Item 15, giving up: when every attempt is cut off, the run fails (exit
/// 3) only after the retries, and what was streamed is kept in the session,
/// marked as interrupted, for `sessions show` and `--resume`.
#[test]
fn a_stream_cut_on_every_attempt_keeps_the_partial_answer_in_the_session() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(
            (0..4)
                .map(|_| anthropic_cut_after_first_delta(&["Partial thoughts ", "never finished."]))
                .collect(),
        ))
        .expect("server");
    let sb = sandbox();
    let out = run(&sb, Wire::Anthropic, &server, &["--prompt", "Think aloud"]);
    let (stdout, stderr) = ended(&out, 3, "");
    assert_eq!(server.requests().len(), 4, "sent four times, as for a 5xx");
    assert!(
        stderr.contains("anthropic: the answer was cut off: the connection broke mid-answer"),
        "{stderr}"
    );
    assert!(stderr.contains("(on all 4 attempts; the text streamed so far is kept in the session, marked as interrupted)"), "{stderr}");
    let evs = events(&stdout);
    let interrupted = of_type(&evs, "interrupted");
    assert_eq!(interrupted.len(), 4);
    assert_eq!(interrupted[3]["retrying"], false);

    let session = last_session(&sb);
    let shown = text(&sb.agent(&["sessions", "show", &session])).0;
    assert_eq!(shown.matches("Partial thoughts").count(), 1, "{shown}");
    assert!(
        shown.contains("[assistant] Partial thoughts \n\n[interrupted: anthropic: the answer was cut off: the connection broke mid-answer"),
        "{shown}"
    );
}

fn last_session(sb: &Sandbox) -> String {
    let out = sb.agent(&["sessions", "list", "--format", "json"]);
    let (stdout, stderr) = text(&out);
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("sessions list ({e}): {stdout}\n{stderr}"));
    let list = v
        .as_array()
        .or_else(|| v["sessions"].as_array())
        .cloned()
        .unwrap_or_default();
    list.first()
        .and_then(|s| s["id"].as_str())
        .unwrap_or_else(|| panic!("no session: {stdout}"))
        .to_string()
}

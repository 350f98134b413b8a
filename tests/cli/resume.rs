//! Resuming a session whose process was killed (`kill -9`) mid-answer:
//! the events persisted before the kill are the history of the next run.

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use agent_tests::model_server::{ModelServer, Reply, Wire, anthropic_answer, tokio_rt};

fn read_file_call() -> Reply {
    Wire::Anthropic.tool("call_r", "read_file", &json!({"path": "notes.txt"}))
}

/// An answer of one text delta per word.
fn answer(words: &[String]) -> Reply {
    anthropic_answer(words)
}
use agent_tests::text;
use serde_json::{Value, json};

use super::{ok, sandbox, write};

fn run_args<'a>(url: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = super::run_jsonl(url, &["--allow", "file:read"]);
    args.extend_from_slice(extra);
    args
}

/// The role and a text rendering of each message of an Anthropic request.
fn messages(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|m| {
                    (
                        m["role"].as_str().unwrap_or_default().to_string(),
                        m["content"].to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_killed_session_resumes_with_its_history_intact() {
    let rt = tokio_rt();
    let words: Vec<String> = (0..60).map(|i| format!("word{i} ")).collect();
    let server = rt
        .block_on(ModelServer::start(vec![
            read_file_call(),
            answer(&words).split(8, Duration::from_millis(30)),
        ]))
        .expect("server");
    let sb = sandbox();
    write(
        sb.project.path(),
        "notes.txt",
        "the secret notes: 42 apples\n",
    );
    let mut child = sb
        .agent_cmd(&run_args(
            server.url(),
            &["--prompt", "Read notes.txt and tell me about it"],
        ))
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawning agent");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<Value>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(v) = serde_json::from_str::<Value>(&line)
                && tx.send(v).is_err()
            {
                break;
            }
        }
    });

    // Wait for the tool result and then the first streamed words of the
    // answer: the second model request is under way.
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut seen = Vec::new();
    let mut tool_result = false;
    let mut deltas = 0;
    while deltas < 2 {
        let left = deadline.saturating_duration_since(Instant::now());
        let ev = match rx.recv_timeout(left) {
            Ok(ev) => ev,
            Err(e) => {
                let _ = child.kill();
                panic!("waiting for the answer to stream ({e}); events: {seen:?}");
            }
        };
        if ev["type"] == "tool_result" {
            assert_eq!(ev["is_error"], false, "{ev}");
            tool_result = true;
        }
        if ev["type"] == "text_delta" {
            assert!(tool_result, "text before the tool result: {seen:?}");
            deltas += 1;
        }
        assert_ne!(ev["type"], "final", "the run finished before the kill");
        seen.push(ev);
    }
    // SIGKILL: no chance to flush or mark the session.
    child.kill().expect("kill -9");
    let status = child.wait().expect("wait");
    assert!(!status.success(), "{status:?}");
    let _ = reader.join();
    assert!(
        server.requests().len() == 2,
        "{} requests",
        server.requests().len()
    );

    // The session is there, with what happened before the kill.
    let list: Value =
        serde_json::from_str(&ok(&sb.agent(&["sessions", "list", "--format", "json"])))
            .expect("json");
    assert_eq!(list.as_array().map(Vec::len), Some(1), "{list}");
    // Never finished: not marked completed (nor failed).
    assert_eq!(list[0]["status"], "active", "{list}");
    let id = list[0]["id"].as_str().expect("id").to_string();
    let shown = ok(&sb.agent(&["sessions", "show", &id]));
    let user = shown
        .find("[user] Read notes.txt and tell me about it")
        .unwrap_or_else(|| panic!("no user message:\n{shown}"));
    let call = shown
        .find("[assistant] tool call read_file")
        .unwrap_or_else(|| panic!("no tool call:\n{shown}"));
    let result = shown
        .find("[tool result]")
        .unwrap_or_else(|| panic!("no tool result:\n{shown}"));
    assert!(user < call && call < result, "{shown}");
    assert!(shown[result..].contains("42 apples"), "{shown}");

    // Resume against a new server: the request carries the history.
    let rt2 = tokio_rt();
    let server2 = rt2
        .block_on(ModelServer::start(vec![answer(&[
            "Resumed fine.".to_string()
        ])]))
        .expect("server");
    let out = sb
        .agent_cmd(&run_args(
            server2.url(),
            &["--last", "--prompt", "continue"],
        ))
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("agent");
    let stdout = ok(&out);
    assert!(stdout.contains("Resumed fine."), "{stdout}");
    let reqs = server2.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    let msgs = messages(&reqs[0].body);
    assert!(msgs.len() >= 3, "{msgs:?}");
    assert_eq!(msgs[0].0, "user", "{msgs:?}");
    assert!(
        msgs[0].1.contains("Read notes.txt and tell me about it"),
        "{msgs:?}"
    );
    assert_eq!(msgs[1].0, "assistant", "{msgs:?}");
    assert!(msgs[1].1.contains("tool_use"), "{msgs:?}");
    assert!(msgs[1].1.contains("call_r"), "{msgs:?}");
    assert!(msgs[1].1.contains("read_file"), "{msgs:?}");
    assert_eq!(msgs[2].0, "user", "{msgs:?}");
    assert!(msgs[2].1.contains("tool_result"), "{msgs:?}");
    assert!(msgs[2].1.contains("call_r"), "{msgs:?}");
    assert!(msgs[2].1.contains("42 apples"), "{msgs:?}");
    let last = msgs.last().expect("messages");
    assert_eq!(last.0, "user", "{msgs:?}");
    assert!(last.1.contains("continue"), "{msgs:?}");
    // Roles alternate (the provider would refuse two user turns in a row).
    for pair in msgs.windows(2) {
        assert_ne!(pair[0].0, pair[1].0, "roles must alternate: {msgs:?}");
    }

    // Still one session, now holding both prompts.
    let shown = ok(&sb.agent(&["sessions", "show", &id]));
    assert!(shown.contains("[user] continue"), "{shown}");
    assert!(shown.contains("Resumed fine."), "{shown}");
    let (_, stderr) = text(&out);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

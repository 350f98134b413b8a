//! `echo LOG | agent run -p "Find root cause"`: piped standard input is
//! attached to the task as a document named `stdin` (issue 15, item 1).
//! Before, it was dropped without a word: the model saw the task alone.
//! Checked on the exact request body the model server on 127.0.0.1 received.

use std::io::Write;
use std::process::Stdio;

use agent_tests::model_server::{ModelServer, Wire, tokio_rt};
use serde_json::{Value, json};

use super::sandbox;

/// Runs `agent run --prompt TASK` with `stdin` piped in (`None`: no input at
/// all) and returns the messages of the one request and stderr.
fn run_with_stdin(stdin: Option<&[u8]>) -> (Value, String) {
    let wire = Wire::Anthropic;
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![wire.answer("Found it.")]))
        .expect("server");
    let sb = sandbox();
    let mut child = sb
        .agent_cmd(&[
            "run",
            "--provider",
            wire.name(),
            "--model",
            "test-model",
            "--base-url",
            server.url(),
            "--prompt",
            "Find root cause",
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
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
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{stderr}");
    (reqs[0].body["messages"].clone(), stderr)
}

fn user_turn(text: &str) -> Value {
    json!([{"role": "user", "content": [{"type": "text", "text": text}]}])
}

#[test]
fn piped_stdin_is_attached_to_the_prompt_as_a_document() {
    let (messages, stderr) = run_with_stdin(Some(b"LOG 12:00 start\nerror: disk full\n"));
    assert_eq!(
        messages,
        user_turn(
            "Find root cause\n\n<document name=\"stdin\">\nLOG 12:00 start\nerror: disk full\n</document>"
        )
    );
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn a_large_stdin_is_cut_at_256_kib_and_said_so_on_stderr_and_in_the_document() {
    // 300 000 bytes: 30 000 lines of ten.
    let input = "123456789\n".repeat(30_000);
    let (messages, stderr) = run_with_stdin(Some(input.as_bytes()));
    let kept = &input[..256 * 1024];
    assert_eq!(
        messages,
        user_turn(&format!(
            "Find root cause\n\n<document name=\"stdin\">\n{kept}\n\
             [cut: the first 262144 of 300000 bytes of standard input are above]\n</document>"
        ))
    );
    assert!(
        stderr.contains(
            "warning: standard input has 300000 bytes; only the first 262144 (the 256 KiB cap) \
             were attached to the task"
        ),
        "{stderr}"
    );
}

#[test]
fn empty_or_absent_stdin_attaches_nothing() {
    let (messages, _) = run_with_stdin(Some(b""));
    assert_eq!(messages, user_turn("Find root cause"));
    let (messages, _) = run_with_stdin(None);
    assert_eq!(messages, user_turn("Find root cause"));
}

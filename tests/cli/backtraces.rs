//! With `RUST_BACKTRACE=1` (or `RUST_LIB_BACKTRACE=1`) in the agent's environment, host
//! errors capture the host's stack trace; none of it may reach a skill or the model. A
//! hostile skill panics on purpose: the trap reaches the user and the model as the guest's
//! own panic message and wasm backtrace, never the host's frames.

use agent_tests::model_server::{ModelServer, Wire, tokio_rt};
use agent_tests::{build_guest, text, tool_manifest, write_skill};
use serde_json::json;

use super::{code, sandbox};

/// Text that only a host stack trace contains.
const HOST_TRACE: [&str; 4] = [
    "Stack backtrace",
    "std::backtrace",
    "agent_runtime::",
    "wasmtime::runtime",
];

fn assert_no_host_trace(what: &str, text: &str) {
    for marker in HOST_TRACE {
        assert!(
            !text.contains(marker),
            "{what} carries the host's stack trace ({marker:?}):\n{text}"
        );
    }
}

#[test]
fn host_backtraces_never_reach_the_guest_or_the_model() {
    let sb = sandbox();
    let key = sb.trusted_key();
    let hostile = std::fs::read(build_guest("guest-hostile")).expect("hostile");
    write_skill(
        &sb.project.path().join(".agent/skills/hostile"),
        // The component imports `exec`: declared, never granted.
        &tool_manifest("hostile", "permissions: [shell:exec]\nexec: [echo]\n"),
        &hostile,
        Some(&key),
    );

    // `skill call`: the trap, as the user sees it.
    let out = sb
        .agent_cmd(&["skill", "call", "hostile", "panic", "--input", "{}"])
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .output()
        .expect("running agent");
    let (stdout, stderr) = text(&out);
    assert_ne!(code(&out), 0, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("skill `hostile` crashed (trap)")
            && stderr.contains("hostile skill panicked on purpose"),
        "{stdout}\n{stderr}"
    );
    assert_no_host_trace("`skill call`", &format!("{stdout}\n{stderr}"));

    // `run`: the model calls the tool and gets the trap as the tool's error.
    let rt = tokio_rt();
    let wire = Wire::Anthropic;
    let server = rt
        .block_on(ModelServer::start(vec![
            wire.tool("call_p", "panic", &json!({})),
            wire.answer("The tool crashed."),
        ]))
        .expect("server");
    let out = sb
        .agent_cmd(&[
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
            "--prompt",
            "Call the panic tool",
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("RUST_BACKTRACE", "1")
        .env("RUST_LIB_BACKTRACE", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent");
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "{stdout}\n{stderr}");
    let told = reqs[1].body.to_string();
    assert!(
        told.contains("crashed (trap)") && told.contains("hostile skill panicked on purpose"),
        "the model is told of the trap: {told}"
    );
    assert_no_host_trace("the model's request", &told);
    assert_no_host_trace("`run`'s output", &format!("{stdout}\n{stderr}"));
}

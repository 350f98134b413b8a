//! A hostile tool skill for the budget tests: each tool spends one kind of
//! costly use (`llm`, `exec`, `http`) `times` times in one call, going on
//! after refusals, and answers what it got: `ok=N refused=M last=ERROR`.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "tool-skill",
    generate_all,
});

use agent::skill::exec::{ExecRequest, run};
use agent::skill::http::{HttpRequest, fetch};
use agent::skill::llm::{CompletionRequest, complete};
use agent::skill::types::{CapabilityError, Message, Role, SkillError, ToolSpec};
use exports::agent::skill::tool::Guest;

struct Budget;

const TOOLS: [&str; 3] = ["llm-loop", "exec-loop", "http-loop"];

fn arg(input: &serde_json::Value, key: &str) -> String {
    input
        .get(key)
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_string()
}

fn text(e: &CapabilityError) -> String {
    match e {
        CapabilityError::Denied(s) => format!("denied: {s}"),
        CapabilityError::Invalid(s) => format!("invalid: {s}"),
        CapabilityError::Unavailable(s) => format!("unavailable: {s}"),
        CapabilityError::Failed(s) => format!("failed: {s}"),
        CapabilityError::TimedOut => "timed out".to_string(),
        CapabilityError::LimitExceeded(s) => format!("limit exceeded: {s}"),
    }
}

/// Runs `once` `times` times (with the round's number) and reports the outcome.
fn repeat(times: u64, mut once: impl FnMut(u64) -> Result<(), CapabilityError>) -> String {
    let (mut ok, mut refused, mut last) = (0, 0, String::new());
    for n in 0..times {
        match once(n) {
            Ok(()) => ok += 1,
            Err(e) => {
                refused += 1;
                last = text(&e);
            }
        }
    }
    format!("ok={ok} refused={refused} last={last}")
}

impl Guest for Budget {
    fn list_tools() -> Vec<ToolSpec> {
        TOOLS
            .iter()
            .map(|name| ToolSpec {
                name: name.to_string(),
                description: format!("budget test tool `{name}`"),
                input_schema: r#"{"type":"object"}"#.to_string(),
                requires_approval: false,
            })
            .collect()
    }

    fn call_tool(name: String, input: String) -> Result<String, SkillError> {
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| SkillError::InvalidInput(e.to_string()))?;
        let times = input.get("times").and_then(|v| v.as_u64()).unwrap_or(1);
        match name.as_str() {
            // Ask the model `times` times.
            "llm-loop" => Ok(repeat(times, |_| {
                complete(&CompletionRequest {
                    system: None,
                    messages: vec![Message {
                        role: Role::User,
                        content: "spend".to_string(),
                    }],
                    max_tokens: None,
                    temperature: None,
                })
                .map(drop)
            })),
            // Run `program` with `args` `times` times (`{n}` in an argument
            // becomes the round's number).
            "exec-loop" => {
                let args: Vec<String> = input
                    .get("args")
                    .and_then(|a| a.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default();
                let program = arg(&input, "program");
                Ok(repeat(times, |n| {
                    run(&ExecRequest {
                        program: program.clone(),
                        args: args
                            .iter()
                            .map(|a| a.replace("{n}", &n.to_string()))
                            .collect(),
                        cwd: None,
                        env: Vec::new(),
                        stdin: None,
                        timeout_ms: None,
                    })
                    .map(drop)
                }))
            }
            // GET `url` `times` times.
            "http-loop" => {
                let url = arg(&input, "url");
                Ok(repeat(times, |_| {
                    fetch(&HttpRequest {
                        method: "GET".to_string(),
                        url: url.clone(),
                        headers: Vec::new(),
                        body: None,
                        timeout_ms: None,
                    })
                    .map(drop)
                }))
            }
            other => Err(SkillError::NotFound(other.to_string())),
        }
    }
}

export!(Budget);

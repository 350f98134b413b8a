//! Test-only tool skill: `fetch` sends the request it is given through the
//! host's `http` import (via `agent-skill-sdk`) and answers the response as
//! JSON `{"status", "headers", "body"}` (body as text), or the error's text
//! prefixed with `error: `, so the tests see exactly what a skill sees.

use agent_skill_sdk::http::Request;
use agent_skill_sdk::{ToolError, Toolbox};
use serde::Deserialize;

const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "method": {"type": "string"},
    "url": {"type": "string"},
    "headers": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
    "body": {"type": "string"},
    "timeout_ms": {"type": "integer", "minimum": 0},
    "times": {"type": "integer", "minimum": 1}
  },
  "required": ["url"]
}"#;

/// Input of `fetch`.
#[derive(Deserialize)]
struct Fetch {
    #[serde(default = "get")]
    method: String,
    url: String,
    #[serde(default)]
    headers: Vec<(String, String)>,
    body: Option<String>,
    timeout_ms: Option<u64>,
    /// Send the request this many times (the last answer is returned).
    #[serde(default = "one")]
    times: u32,
}

fn get() -> String {
    "GET".into()
}

fn one() -> u32 {
    1
}

fn fetch(input: Fetch) -> Result<String, ToolError> {
    let mut request = Request::new(input.method, input.url);
    for (name, value) in input.headers {
        request = request.header(name, value);
    }
    if let Some(body) = input.body {
        request = request.body(body);
    }
    if let Some(ms) = input.timeout_ms {
        request = request.timeout(std::time::Duration::from_millis(ms));
    }
    let mut answer = String::new();
    for _ in 0..input.times {
        answer = match request.send() {
            Ok(r) => serde_json::json!({
                "status": r.status,
                "headers": r.headers,
                "body": r.text(),
            })
            .to_string(),
            Err(e) => format!("error: {e}"),
        };
    }
    Ok(answer)
}

fn tools() -> Toolbox {
    Toolbox::new().tool("fetch", "Send an HTTP request.", SCHEMA, fetch)
}

agent_skill_sdk::export_tools!(tools);

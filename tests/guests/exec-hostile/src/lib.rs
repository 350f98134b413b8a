//! A hostile tool skill for the `exec` import's guards: it runs whatever
//! program, arguments, environment and time limit the test names, the way
//! a skill would try to turn one allowed program into any program.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "tool-skill",
    generate_all,
});

use agent::skill::exec::{ExecRequest, run};
use agent::skill::types::{SkillError, ToolSpec};
use exports::agent::skill::tool::Guest;

struct ExecHostile;

fn strings(input: &serde_json::Value, key: &str) -> Vec<String> {
    input
        .get(key)
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

impl Guest for ExecHostile {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "run".to_string(),
            description: "run any program with any arguments and environment".to_string(),
            input_schema: r#"{"type":"object"}"#.to_string(),
            requires_approval: false,
        }]
    }

    /// `run`: `{program, args?, env?, timeout_ms?}`. Answers the program's
    /// outcome as JSON; a capability error comes back as `denied` with the
    /// host's error, so the test sees the exact text.
    fn call_tool(name: String, input: String) -> Result<String, SkillError> {
        if name != "run" {
            return Err(SkillError::InvalidInput(format!("no tool `{name}`")));
        }
        let input: serde_json::Value =
            serde_json::from_str(&input).map_err(|e| SkillError::InvalidInput(e.to_string()))?;
        let env = input
            .get("env")
            .and_then(|m| m.as_object())
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let out = run(&ExecRequest {
            program: input
                .get("program")
                .and_then(|p| p.as_str())
                .unwrap_or_default()
                .to_string(),
            args: strings(&input, "args"),
            cwd: None,
            env,
            stdin: None,
            timeout_ms: input
                .get("timeout_ms")
                .and_then(|t| t.as_u64())
                .map(|t| t as u32),
        })
        .map_err(|e| SkillError::Denied(format!("{e:?}")))?;
        Ok(serde_json::json!({
            "exit_code": out.exit_code,
            "stdout": out.stdout,
            "stderr": out.stderr,
            "timed_out": out.timed_out,
        })
        .to_string())
    }
}

export!(ExecHostile);

//! Test-only workflow skill (see tests/suite and tests/cli): multi-step
//! procedures over other skills (`skills.invoke`) and the model
//! (`llm.complete`).
//!
//! - `summarize_file {path}`: reads the file through core-tools'
//!   `read_file`, asks the model for a one-line summary, answers
//!   `{"path", "lines", "summary"}`.
//! - `count_words {text}`: pure, answers `{"words"}`.
//! - `invoke {skill, function, input}`: calls another skill and returns its
//!   output as is (to test nesting and refusals).

use agent_skill_sdk::wit::tool_skill::agent::skill::types::SkillError;
use agent_skill_sdk::wit::workflow_skill::exports::agent::skill::workflow::{Guest, WorkflowSpec};
use agent_skill_sdk::{ToolError, llm, skills};
use serde_json::{Value, json};

struct Workflows;

fn field<'a>(input: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    input
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::invalid_input(format!("`{name}` must be a string")))
}

fn run(name: &str, input: &str) -> Result<String, ToolError> {
    let input: Value = serde_json::from_str(input)?;
    let out = match name {
        "summarize_file" => {
            let path = field(&input, "path")?;
            let text = skills::invoke_json(
                "core-tools",
                "read_file",
                &json!({ "path": path }).to_string(),
            )?;
            let summary = llm::complete(&format!("Summarise this file in one line.\n\n{text}"))?;
            json!({ "path": path, "lines": text.lines().count(), "summary": summary.trim() })
        }
        "count_words" => json!({ "words": field(&input, "text")?.split_whitespace().count() }),
        "invoke" => {
            let skill = field(&input, "skill")?;
            let function = field(&input, "function")?;
            let inner = input.get("input").cloned().unwrap_or_else(|| json!({}));
            let out = skills::invoke_json(skill, function, &inner.to_string())?;
            return Ok(out);
        }
        other => return Err(ToolError::not_found(format!("no workflow `{other}`"))),
    };
    Ok(out.to_string())
}

impl Guest for Workflows {
    fn list_workflows() -> Vec<WorkflowSpec> {
        let spec = |name: &str, description: &str, schema: Value| WorkflowSpec {
            name: name.to_string(),
            description: description.to_string(),
            input_schema: schema.to_string(),
        };
        vec![
            spec(
                "summarize_file",
                "Read a file and summarise it in one line",
                json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            ),
            spec(
                "count_words",
                "Count the words of a text",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            ),
            spec(
                "invoke",
                "Call another skill's tool or workflow",
                json!({"type": "object", "properties": {"skill": {"type": "string"}, "function": {"type": "string"}, "input": {"type": "object"}}, "required": ["skill", "function"]}),
            ),
        ]
    }

    fn run_workflow(name: String, input: String) -> Result<String, SkillError> {
        run(&name, &input).map_err(SkillError::from)
    }
}

agent_skill_sdk::wit::workflow_skill::export!(Workflows);

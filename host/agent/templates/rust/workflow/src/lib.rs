//! {{name}}: a workflow skill. `word-count {text}` counts words and lines.

use agent_skill_sdk::ToolError;
use agent_skill_sdk::types::SkillError;
use agent_skill_sdk::wit::workflow_skill::exports::agent::skill::workflow::{Guest, WorkflowSpec};
use serde::Deserialize;
use serde_json::json;

const WORD_COUNT_SCHEMA: &str =
    r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;

#[derive(Deserialize)]
struct WordCount {
    text: String,
}

/// Words are whitespace-separated tokens; lines are split on `\n`, and a
/// trailing `\n` does not start a new line (empty text: 0 lines).
fn word_count(input: &str) -> Result<String, ToolError> {
    let input: WordCount =
        serde_json::from_str(input).map_err(|e| ToolError::invalid_input(format!("input: {e}")))?;
    let words = input.text.split_whitespace().count();
    let lines = input.text.lines().count();
    Ok(json!({ "words": words, "lines": lines }).to_string())
}

struct Workflows;

impl Guest for Workflows {
    fn list_workflows() -> Vec<WorkflowSpec> {
        vec![WorkflowSpec {
            name: "word-count".to_string(),
            description: "Count the words and lines of a text.".to_string(),
            input_schema: WORD_COUNT_SCHEMA.to_string(),
        }]
    }

    fn run_workflow(name: String, input: String) -> Result<String, SkillError> {
        match name.as_str() {
            "word-count" => word_count(&input),
            other => Err(ToolError::not_found(format!("no workflow `{other}`"))),
        }
        .map_err(ToolError::into_wit)
    }
}

agent_skill_sdk::wit::workflow_skill::export!(Workflows);

//! Test-only wiki analyzer skill (tests/cli/wiki.rs): workflows the wiki
//! generator runs for a section (`wiki.sections[].analyzer`) with
//! `{project, modules: [{name, dir}], languages}`; the JSON object returned
//! supplies the template's `{{analyzer.KEY}}` variables.
//!
//! - `k8s-facts`: `{"replicas": 3, "project": <project>, "modules": <how
//!   many modules>, "first": <the first module's dir>, "python": <whether
//!   python is among the languages>}` — computed from the input, so a test
//!   sees the input arrived.
//! - `nested`: `{"cluster": {"nodes": 2}}` (a nested value: refused by the
//!   wiki).
//! - `broken`: fails with `no cluster manifests found`.

use agent_skill_sdk::wit::tool_skill::agent::skill::types::SkillError;
use agent_skill_sdk::wit::workflow_skill::exports::agent::skill::workflow::{Guest, WorkflowSpec};
use serde_json::{Value, json};

struct Analyzers;

fn run(name: &str, input: &str) -> Result<String, SkillError> {
    let input: Value =
        serde_json::from_str(input).map_err(|e| SkillError::InvalidInput(e.to_string()))?;
    let modules = input["modules"].as_array().cloned().unwrap_or_default();
    let out = match name {
        "k8s-facts" => json!({
            "replicas": 3,
            "project": input["project"],
            "modules": modules.len(),
            "first": modules.first().map(|m| m["dir"].clone()).unwrap_or(Value::Null),
            "python": input["languages"]
                .as_array()
                .is_some_and(|l| l.iter().any(|x| x == "python")),
        }),
        "nested" => json!({"cluster": {"nodes": 2}}),
        "broken" => return Err(SkillError::Failed("no cluster manifests found".into())),
        other => return Err(SkillError::NotFound(format!("no workflow `{other}`"))),
    };
    Ok(out.to_string())
}

impl Guest for Analyzers {
    fn list_workflows() -> Vec<WorkflowSpec> {
        ["k8s-facts", "nested", "broken"]
            .into_iter()
            .map(|name| WorkflowSpec {
                name: name.to_string(),
                description: format!("wiki analyzer `{name}`"),
                input_schema: json!({"type": "object"}).to_string(),
            })
            .collect()
    }

    fn run_workflow(name: String, input: String) -> Result<String, SkillError> {
        run(&name, &input)
    }
}

agent_skill_sdk::wit::workflow_skill::export!(Analyzers);

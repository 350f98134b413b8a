//! A contributed section's analyzer (`wiki.sections[].analyzer`): a
//! workflow of the skill's component, run through the runtime with the
//! wiki's call context — the user's grants, nothing added — on
//! `{"project", "modules": [{"name", "dir"}], "languages"}`. The JSON object
//! it returns gives the section's template `{{analyzer.KEY}}` variables
//! (strings, numbers and booleans).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_runtime::inspect::ExportKind;
use agent_runtime::{CallContext, Runtime, Skill};
use serde_json::Value;

/// What an analyzer is given.
pub fn input(project: &str, modules: &[(String, PathBuf)], languages: &[String]) -> String {
    let modules: Vec<Value> = modules
        .iter()
        .map(|(name, dir)| serde_json::json!({"name": name, "dir": dir.to_string_lossy()}))
        .collect();
    serde_json::json!({"project": project, "modules": modules, "languages": languages}).to_string()
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The template variables (`analyzer.KEY` → text) of an analyzer's
/// output.
///
/// # Errors
/// Output that is not a JSON object, or a value that is not a string,
/// number or boolean (naming the key).
pub fn values(output: &str) -> Result<BTreeMap<String, String>, String> {
    let v: Value = serde_json::from_str(output)
        .map_err(|e| format!("its output is not JSON ({e}); it must be a JSON object"))?;
    let Value::Object(map) = v else {
        return Err(format!(
            "it returned {}; it must return a JSON object",
            kind(&v)
        ));
    };
    let mut out = BTreeMap::new();
    for (key, value) in map {
        let text = match value {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => {
                return Err(format!(
                    "key `{key}` is {}: only strings, numbers and booleans can be template variables",
                    kind(&other)
                ));
            }
        };
        out.insert(format!("analyzer.{key}"), text);
    }
    Ok(out)
}

/// Runs `workflow` of `skill` on `input`.
///
/// # Errors
/// The message (naming the skill and the workflow) when the workflow is
/// not exported, fails, or returns something that is not variables.
pub async fn run(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skill: &Skill,
    workflow: &str,
    input: &str,
) -> Result<BTreeMap<String, String>, String> {
    let fail = |m: String| format!("skill `{}`: analyzer `{workflow}`: {m}", skill.name());
    if !skill.exports(ExportKind::Workflow) {
        return Err(fail(
            "not exported: the skill's component exports no workflows (the `workflow` interface)"
                .into(),
        ));
    }
    let specs = runtime
        .list_workflows(skill, ctx)
        .await
        .map_err(|e| fail(format!("listing the component's workflows: {e}")))?;
    if !specs.iter().any(|s| s.name == workflow) {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        return Err(fail(format!(
            "not exported: the component has no such workflow (its workflows: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        )));
    }
    match runtime.run_workflow(skill, ctx, workflow, input).await {
        Err(e) => Err(fail(format!("did not run: {e}"))),
        Ok((Err(e), _)) => Err(fail(format!("failed: {e}"))),
        Ok((Ok(output), _)) => values(&output.text).map_err(fail),
    }
}

#[cfg(test)]
mod tests {
    use super::values;

    #[test]
    fn scalars_become_variables_and_nested_values_are_refused() {
        let v = values(r#"{"replicas": 3, "name": "api", "ha": true}"#).expect("values");
        assert_eq!(v["analyzer.replicas"], "3");
        assert_eq!(v["analyzer.name"], "api");
        assert_eq!(v["analyzer.ha"], "true");
        assert_eq!(
            values(r#"{"cluster": {"nodes": 2}}"#).unwrap_err(),
            "key `cluster` is an object: only strings, numbers and booleans can be template variables"
        );
        assert_eq!(
            values("[1]").unwrap_err(),
            "it returned a list; it must return a JSON object"
        );
    }
}

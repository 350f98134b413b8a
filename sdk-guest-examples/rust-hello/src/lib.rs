//! `rust-hello`: the smallest useful tool skill written with
//! `agent-skill-sdk`. It needs no permission: `greet` is pure computation and
//! `project_summary` uses the always-available `project` import.

use agent_skill_sdk::{NoInput, ToolError, Toolbox, project};
use serde::Deserialize;

const GREET: &str = include_str!("../schemas/greet.json");
const SUMMARY: &str = include_str!("../schemas/project_summary.json");

/// Input of `greet`.
#[derive(Deserialize)]
struct Greet {
    name: String,
}

fn greet(input: Greet) -> Result<String, ToolError> {
    match input.name.trim() {
        "" => Err(ToolError::invalid_input("`name` is empty")),
        name => Ok(format!("Hello, {name}! This is {}.", project::name())),
    }
}

fn project_summary(_: NoInput) -> Result<String, ToolError> {
    let or_none = |s: String| {
        if s.is_empty() {
            "none detected".into()
        } else {
            s
        }
    };
    let languages = or_none(project::languages().join(", "));
    let build = or_none(project::build_system().unwrap_or_default());
    let (name, mode) = (project::name(), project::mode());
    Ok(format!(
        "project: {name}\nlanguages: {languages}\nbuild system: {build}\nmode: {mode}"
    ))
}

/// The skill's tools.
fn tools() -> Toolbox {
    Toolbox::new()
        .tool("greet", "Greet someone by name.", GREET, greet)
        .tool(
            "project_summary",
            "Summarise the project: name, languages, build system and agent mode.",
            SUMMARY,
            project_summary,
        )
}

agent_skill_sdk::export_tools!(tools);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toolbox_is_valid() {
        assert_eq!(tools().check(), Ok(()));
    }

    /// `list-tools` and SKILL.yaml agree on names, schema files and approval.
    #[test]
    fn the_manifest_matches_the_toolbox() {
        let manifest: serde_yaml::Value =
            serde_yaml::from_str(include_str!("../SKILL.yaml")).unwrap_or_else(|e| panic!("{e}"));
        let listed = manifest["tools"].as_sequence().cloned().unwrap_or_default();
        let specs = tools().specs();
        assert_eq!(listed.len(), specs.len());
        for (entry, spec) in listed.iter().zip(&specs) {
            assert_eq!(entry["name"].as_str(), Some(spec.name.as_str()));
            assert_eq!(
                entry["requires_approval"].as_bool(),
                Some(spec.requires_approval)
            );
            let file = entry["input_schema_file"].as_str().unwrap_or_default();
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
            let on_disk = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(on_disk, spec.input_schema, "{}", spec.name);
        }
    }

    #[test]
    fn an_empty_name_is_invalid_input() {
        let err = greet(Greet { name: "  ".into() });
        assert!(matches!(err, Err(ToolError::InvalidInput(_))));
    }
}

//! The tools offered to the model: the tools of the active tool skills and
//! the workflows of the active workflow skills, named so that they are
//! unique.

use std::collections::HashMap;
use std::sync::Arc;

use agent_runtime::inspect::ExportKind;
use agent_runtime::{CallContext, Runtime, Skill, ToolSpec};

use crate::host_tool::{HostTool, HostToolRef};
use crate::router::requires_approval;

/// A tool offered to the model: a tool of a tool skill, or a workflow of a
/// workflow skill.
#[derive(Debug, Clone)]
pub struct AgentTool {
    /// The name the model sees: the tool's name, or `<skill>__<tool>` when
    /// two skills offer the same name.
    pub name: String,
    /// Index of the skill in the slice given to the agent.
    pub skill: usize,
    /// The skill's name.
    pub skill_name: String,
    /// The tool's spec (for a workflow: its name, description and schema);
    /// its `requires_approval` is [`crate::requires_approval`]'s answer.
    pub spec: ToolSpec,
    /// Whether this is a workflow (run with `run-workflow`).
    pub workflow: bool,
    /// A tool the host provides itself (see [`crate::host_tool`]): the
    /// router calls it instead of a component, and `skill` is unused
    /// (`usize::MAX`).
    pub host: Option<HostToolRef>,
}

/// Lists the tools of the `active` tool skills and the workflows of the
/// active workflow skills, naming them for the model.
///
/// # Errors
/// When a skill's tools or workflows cannot be listed.
pub async fn collect_tools(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
    active: &[usize],
) -> anyhow::Result<Vec<AgentTool>> {
    let mut raw = Vec::new();
    for &i in active {
        let Some(skill) = skills.get(i) else { continue };
        if skill.exports(ExportKind::Tool) {
            let specs = runtime
                .list_tools(skill, ctx)
                .await
                .map_err(|e| anyhow::anyhow!("listing the tools of `{}`: {e}", skill.name()))?;
            let host = agent_manifest::tool_platform::host_platform();
            for mut spec in specs {
                // Not offered where the manifest says it does not run.
                if let Some(decl) = skill.manifest.tool(&spec.name)
                    && !agent_manifest::tool_platform::runs_here(decl, host)
                {
                    continue;
                }
                spec.requires_approval = requires_approval(skill, &spec);
                raw.push((i, skill.name().to_string(), spec, false));
            }
        }
        if skill.exports(ExportKind::Workflow) {
            let specs = runtime
                .list_workflows(skill, ctx)
                .await
                .map_err(|e| anyhow::anyhow!("listing the workflows of `{}`: {e}", skill.name()))?;
            for w in specs {
                let spec = ToolSpec {
                    name: w.name,
                    description: w.description,
                    input_schema: w.input_schema,
                    requires_approval: false,
                };
                raw.push((i, skill.name().to_string(), spec, true));
            }
        }
    }
    let mut counts: HashMap<String, usize> = HashMap::new();
    for (_, _, spec, _) in &raw {
        *counts.entry(spec.name.clone()).or_default() += 1;
    }
    Ok(raw
        .into_iter()
        .map(|(skill, skill_name, spec, workflow)| {
            let name = if counts.get(&spec.name).copied().unwrap_or(0) > 1 {
                format!("{skill_name}__{}", spec.name)
            } else {
                spec.name.clone()
            };
            AgentTool {
                name,
                skill,
                skill_name,
                spec,
                workflow,
                host: None,
            }
        })
        .collect())
}

/// Adds `host` tools to `tools`. A host tool whose name another tool already
/// has is named `<owner>__<tool>`, `<owner>` being its skill's name after the
/// last `:` (`mcp:github` → `github__search`), with every character a model
/// API does not accept in a tool name replaced by `_`.
pub fn add_host_tools(tools: &mut Vec<AgentTool>, host: Vec<Arc<dyn HostTool>>) {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for name in tools
        .iter()
        .map(|t| t.spec.name.clone())
        .chain(host.iter().map(|h| h.spec().name.clone()))
    {
        *counts.entry(name).or_default() += 1;
    }
    for h in host {
        let spec = h.spec().clone();
        let owner = h.skill().to_string();
        let name = if counts.get(&spec.name).copied().unwrap_or(0) > 1 {
            let short = owner.rsplit(':').next().unwrap_or(&owner);
            let short: String = short
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            format!("{short}__{}", spec.name)
        } else {
            spec.name.clone()
        };
        tools.push(AgentTool {
            name,
            skill: usize::MAX,
            skill_name: owner,
            spec,
            workflow: false,
            host: Some(HostToolRef(h)),
        });
    }
}

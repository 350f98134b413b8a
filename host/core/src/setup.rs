//! Putting the skills of a run together: which are active, what they offer
//! the model, what they add to the system prompt, which hooks listen, which
//! transforms run, and the constraints they impose.

use std::path::Path;
use std::sync::Arc;

use agent_manifest::{Mode, SkillType};
use agent_policy::{Constraints, Merged, SkillConstraint, merge};
use agent_runtime::{CallContext, Runtime, Skill};

use crate::activation::{Activation, TriggerInput, activate};
use crate::hooks::HookSet;
use crate::prompt::{PromptInput, SkillPrompt, assemble, skill_prompts, system_prompt};
use crate::{AgentTool, collect_tools};

/// What [`setup`] needs.
pub struct SetupInput<'a> {
    /// The runtime.
    pub runtime: &'a Runtime,
    /// The call context of the run.
    pub ctx: &'a Arc<CallContext>,
    /// Every loaded skill.
    pub skills: &'a [Skill],
    /// The project root (file triggers, `AGENT.md`).
    pub project_root: &'a Path,
    /// The working directory (`AGENT.md` files from the root down to it).
    pub cwd: &'a Path,
    /// The user's message (keyword triggers, prompt skills).
    pub user_message: &'a str,
    /// The mode.
    pub mode: Mode,
    /// Skills named with `--skills`: always active.
    pub explicit: &'a [String],
}

/// The skills' part of a run.
pub struct Setup {
    /// Which skills are active, in dependency order, and why; and which
    /// were triggered but could not be activated.
    pub activation: Activation,
    /// The tools and workflows of the active skills.
    pub tools: Vec<AgentTool>,
    /// The active skills' hooks.
    pub hooks: HookSet,
    /// The active transform skills, in activation order.
    pub transforms: Vec<usize>,
    /// The active skills' merged constraints.
    pub constraints: Arc<Merged>,
    /// The prompt skills' contributions.
    pub prompts: Vec<SkillPrompt>,
    /// The system prompt: instructions, `AGENT.md`, prompt skills and the
    /// constraints' context values.
    pub system: String,
    /// Problems that do not stop the run.
    pub warnings: Vec<String>,
}

/// The constraints of the active skills, as the policy merges them.
pub fn skill_constraints(skills: &[Skill], active: &[usize]) -> Vec<SkillConstraint> {
    active
        .iter()
        .filter_map(|&i| skills.get(i))
        .filter_map(|s| {
            let c = s.manifest.constraints.as_ref()?;
            Some(SkillConstraint {
                skill: s.name().to_string(),
                priority: c.priority,
                constraints: Constraints {
                    allowed_tools: c
                        .allowed_tools
                        .as_ref()
                        .map(|t| t.iter().cloned().collect()),
                    forbidden_tools: c.forbidden_tools.iter().cloned().collect(),
                    max_steps: c.max_steps,
                    max_duration: c.max_duration,
                    context: c.context.iter().cloned().collect(),
                },
            })
        })
        .collect()
}

/// Evaluates triggers, orders the active skills by their dependencies,
/// lists their tools and workflows, loads their hooks, gathers prompt
/// fragments within each skill's budget and merges their constraints.
///
/// # Errors
/// When an active tool or workflow skill cannot list what it offers.
pub async fn setup(input: &SetupInput<'_>) -> anyhow::Result<Setup> {
    let ctx = input.ctx;
    let activation = activate(
        input.skills,
        &TriggerInput {
            project_root: input.project_root,
            languages: &ctx.project.languages,
            user_message: input.user_message,
            mode: input.mode,
            explicit: input.explicit,
        },
    );
    let active = activation.order.clone();
    let mut warnings: Vec<String> = activation
        .problems
        .iter()
        .map(|(skill, why)| format!("skill `{skill}` was not activated: {why}"))
        .collect();
    let tools = collect_tools(input.runtime, ctx, input.skills, &active).await?;
    let (hooks, problems) = HookSet::load(input.runtime, ctx, input.skills, &active).await;
    warnings.extend(problems);
    let transforms: Vec<usize> = active
        .iter()
        .copied()
        .filter(|&i| {
            input
                .skills
                .get(i)
                .is_some_and(|s| s.manifest.has_type(SkillType::Transform))
        })
        .collect();
    let (prompts, prompt_warnings) = skill_prompts(
        input.runtime,
        ctx,
        input.skills,
        &active,
        &PromptInput {
            mode: input.mode.as_str(),
            user_message: input.user_message,
            languages: &ctx.project.languages,
        },
    )
    .await;
    warnings.extend(prompt_warnings);
    let constraints = Arc::new(merge(&skill_constraints(input.skills, &active)));
    let mut extra = Vec::new();
    if !constraints.context().is_empty() {
        let mut text = String::from("## Context from active skills\n");
        for (key, entry) in constraints.context() {
            text.push_str(&format!("- {key}: {}\n", entry.value));
        }
        extra.push(text);
    }
    let base = system_prompt(input.project_root, input.cwd);
    let system = assemble(&base, &prompts, &extra);
    Ok(Setup {
        activation,
        tools,
        hooks,
        transforms,
        constraints,
        prompts,
        system,
        warnings,
    })
}

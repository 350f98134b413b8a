//! Step 1 of a review: the built-in `code-review` skill's `collect-diff`
//! workflow, which reads the diff and the changed files through the
//! built-in `git` skill.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_runtime::{Skill, SkillError};
use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::app::App;
use crate::assembly::workflow_context;
use crate::cli::ProviderArgs;

/// What `collect-diff` answers.
#[derive(Debug, Deserialize)]
pub struct Collected {
    /// The unified diff.
    pub patch: String,
    /// The new version of each changed file.
    pub files: BTreeMap<String, String>,
    /// Changed files whose new version could not be read.
    #[serde(default)]
    pub missing: Vec<String>,
}

/// Runs `code-review/collect-diff` with `input`.
///
/// # Errors
/// The skill is missing, or the workflow fails (a revision git does not
/// know, a grant refused): the skill's own message.
pub async fn collect(
    app: &mut App,
    skills: &Arc<Vec<Skill>>,
    provider_args: &ProviderArgs,
    input: &serde_json::Value,
) -> Result<Collected> {
    let Some(skill) = skills.iter().find(|s| s.name() == "code-review") else {
        bail!(
            "the code-review skill is not loaded (it is built in; was it shadowed or refused? \
             see `agent skill list`)"
        );
    };
    let runtime = app.runtime()?.clone();
    let ctx = workflow_context(app, skills, false, provider_args)?;
    let (result, _logs) = runtime
        .run_workflow(skill, &ctx, "collect-diff", &input.to_string())
        .await
        .context("running code-review/collect-diff")?;
    let output = match result {
        Ok(o) => o,
        Err(SkillError::InvalidInput(m) | SkillError::Failed(m) | SkillError::NotFound(m)) => {
            return Err(crate::cli::UsageError(format!("reading the diff: {m}")).into());
        }
        Err(SkillError::Denied(m)) => bail!("reading the diff was refused: {m}"),
    };
    agent_bounded::parse_json::<Collected>(
        &output.text,
        "collect-diff output",
        agent_bounded::Limits::DATA,
    )
    .map_err(|e| anyhow::anyhow!("code-review/collect-diff answered something unexpected: {e}"))
}

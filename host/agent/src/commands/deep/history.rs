//! Recent churn for the risk scoring, read through the built-in `git`
//! skill (`git_log`, then `git_show` of each commit: the files its patch
//! touched) — the host runs no git of its own. A project that is not a git
//! repository (or a git skill that is refused) has no churn signal; the
//! reason is returned and shown with `-v`.

use std::collections::BTreeMap;
use std::sync::Arc;

use agent_runtime::{CallContext, Runtime, Skill};

/// Commits read for churn.
pub const COMMITS: usize = 30;

/// Files by the number of the last [`COMMITS`] commits that touched them,
/// and how many commits were read; `Err` says why there is none.
pub async fn churn(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
) -> Result<(BTreeMap<String, u32>, usize), String> {
    let git = skills
        .iter()
        .find(|s| s.name() == "git")
        .ok_or("the git skill is not loaded")?;
    let call = |tool: &'static str, input: String| async move {
        match runtime.call_tool(git, ctx, tool, &input).await {
            Ok((Ok(out), _)) => Ok(out.text),
            Ok((Err(e), _)) => Err(format!("git/{tool}: {e}")),
            Err(e) => Err(format!("git/{tool}: {e}")),
        }
    };
    let log = call("git_log", serde_json::json!({ "max": COMMITS }).to_string()).await?;
    let ids = agent_deep::risk::commit_ids(&log);
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for id in &ids {
        let patch = call("git_show", serde_json::json!({ "rev": id }).to_string()).await?;
        for file in agent_deep::risk::touched(&patch) {
            *counts.entry(file).or_default() += 1;
        }
    }
    Ok((counts, ids.len()))
}

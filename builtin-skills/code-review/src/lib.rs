//! `code-review`: the built-in skill behind `agent review`.
//!
//! - prompt: the review instructions and checklist (`prompts/review.md`,
//!   compiled in), one fragment of the `prompt` export while the skill is
//!   active.
//! - workflow `collect-diff {base?, head?, staged?, merge_base?, paths?}`: the unified
//!   diff and the new version of every changed file, both asked of the
//!   built-in `git` skill through `skills.invoke` (`git_diff`, `git_show`).
//!   Answers `{patch, files: {path: text}, missing: [path]}`; a file whose
//!   new version cannot be read (deleted, binary, too large) is listed in
//!   `missing`.

use std::collections::BTreeMap;

use agent_skill_sdk::types::SkillError;
use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
    Guest as PromptGuest, PromptContext, PromptFragment,
};
use agent_skill_sdk::wit::workflow_skill::exports::agent::skill::workflow::{Guest, WorkflowSpec};
use agent_skill_sdk::{ToolError, skills};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The instructions and checklist.
pub const INSTRUCTIONS: &str = include_str!("../prompts/review.md");

/// A changed file larger than this is not sent whole (only its hunks).
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// `collect-diff` input.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Collect {
    /// From this revision.
    #[serde(default)]
    pub base: Option<String>,
    /// To this revision (default: the working tree, or with `staged` the index).
    #[serde(default)]
    pub head: Option<String>,
    /// The staged changes (HEAD to the index).
    #[serde(default)]
    pub staged: bool,
    /// From the merge base of this branch and HEAD to HEAD (`BRANCH...HEAD`).
    #[serde(default)]
    pub merge_base: Option<String>,
    /// Limit to these paths.
    #[serde(default)]
    pub paths: Vec<String>,
}

/// `collect-diff` output.
#[derive(Debug, Default, Serialize)]
pub struct Collected {
    /// The unified diff.
    pub patch: String,
    /// The new version of each changed file.
    pub files: BTreeMap<String, String>,
    /// Changed files whose new version could not be read.
    pub missing: Vec<String>,
}

const COLLECT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "base": { "type": "string", "description": "The revision to diff from" },
    "head": { "type": "string", "description": "The revision to diff to (default: the working tree)" },
    "staged": { "type": "boolean", "description": "The staged changes: HEAD to the index" },
    "merge_base": { "type": "string", "description": "A branch: the changes from its merge base with HEAD to HEAD" },
    "paths": { "type": "array", "items": { "type": "string" } }
  },
  "additionalProperties": false
}"#;

/// The `git_diff` input for a request, and the revision spelling whose
/// files `git show` reads (`REV:path`; `:path` is the index; `None`: the
/// working tree, read with `git show` of nothing — the caller reads files).
pub fn plan(c: &Collect) -> Result<(serde_json::Value, Option<String>), ToolError> {
    let given = [
        c.staged,
        c.merge_base.is_some(),
        c.base.is_some() || c.head.is_some(),
    ];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(ToolError::invalid_input(
            "give one of `staged`, `merge_base`, or `base` (with `head`)",
        ));
    }
    if let Some(branch) = &c.merge_base {
        return Ok((
            json!({"base": format!("{branch}...HEAD"), "paths": c.paths}),
            Some("HEAD".to_string()),
        ));
    }
    if c.staged {
        return Ok((
            json!({"head": "HEAD", "paths": c.paths}),
            Some(String::new()),
        ));
    }
    match (&c.base, &c.head) {
        (Some(b), Some(h)) => Ok((
            json!({"base": b, "head": h, "paths": c.paths}),
            Some(h.clone()),
        )),
        (Some(b), None) => Ok((json!({"base": b, "paths": c.paths}), None)),
        (None, _) => Err(ToolError::invalid_input(
            "`base` is required unless `staged` or `merge_base` is given",
        )),
    }
}

/// The paths of the new versions in a unified diff (`+++ b/…`), deleted
/// files left out.
pub fn changed_paths(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = patch
        .lines()
        .filter_map(|l| l.strip_prefix("+++ b/"))
        .map(String::from)
        .collect();
    out.dedup();
    out
}

fn collect(input: &str) -> Result<String, ToolError> {
    let c: Collect = serde_json::from_str(input)
        .map_err(|e| ToolError::invalid_input(format!("collect-diff input: {e}")))?;
    let (diff_input, rev) = plan(&c)?;
    let diff: String = skills::invoke_json("git", "git_diff", &diff_input.to_string())
        .map_err(|e| ToolError::failed(format!("git_diff: {e}")))?;
    let patch = if diff.trim() == "no differences" {
        String::new()
    } else {
        diff
    };
    let mut out = Collected {
        patch,
        ..Collected::default()
    };
    for path in changed_paths(&out.patch) {
        let text = match &rev {
            Some(rev) => skills::invoke_json(
                "git",
                "git_show",
                &json!({"rev": format!("{rev}:{path}")}).to_string(),
            )
            .ok(),
            // The working tree: read through the host's file access.
            None => std::fs::read_to_string(format!("/project/{path}")).ok(),
        };
        match text.filter(|t| t.len() <= MAX_FILE_BYTES && !t.contains('\0')) {
            Some(t) => {
                out.files.insert(path, t);
            }
            None => out.missing.push(path),
        }
    }
    serde_json::to_string(&out).map_err(|e| ToolError::failed(format!("encoding: {e}")))
}

struct Review;

impl PromptGuest for Review {
    fn fragments(_context: PromptContext) -> Vec<PromptFragment> {
        vec![PromptFragment {
            title: "code review".to_string(),
            content: INSTRUCTIONS.to_string(),
            priority: 0,
        }]
    }
}

impl Guest for Review {
    fn list_workflows() -> Vec<WorkflowSpec> {
        vec![WorkflowSpec {
            name: "collect-diff".to_string(),
            description: "The unified diff and the new version of every changed file, from the \
                          git skill (git_diff, git_show)."
                .to_string(),
            input_schema: COLLECT_SCHEMA.to_string(),
        }]
    }

    fn run_workflow(name: String, input: String) -> Result<String, SkillError> {
        match name.as_str() {
            "collect-diff" => collect(&input),
            other => Err(ToolError::not_found(format!("no workflow `{other}`"))),
        }
        .map_err(ToolError::into_wit)
    }
}

agent_skill_sdk::wit::prompt_skill::export!(Review);
agent_skill_sdk::wit::workflow_skill::export!(Review);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_become_git_diff_inputs() {
        let c = Collect {
            base: Some("A".into()),
            head: Some("B".into()),
            ..Collect::default()
        };
        let (input, rev) = plan(&c).unwrap();
        assert_eq!(input["base"], "A");
        assert_eq!(input["head"], "B");
        assert_eq!(rev.as_deref(), Some("B"));
        let staged = Collect {
            staged: true,
            ..Collect::default()
        };
        let (input, rev) = plan(&staged).unwrap();
        assert_eq!(input["head"], "HEAD");
        assert_eq!(rev.as_deref(), Some(""), "`:path` is the index");
        assert!(plan(&Collect::default()).is_err());
        let branch = Collect {
            merge_base: Some("main".into()),
            ..Collect::default()
        };
        let (input, rev) = plan(&branch).unwrap();
        assert_eq!(input["base"], "main...HEAD");
        assert_eq!(rev.as_deref(), Some("HEAD"));
        let both = Collect {
            staged: true,
            base: Some("A".into()),
            ..Collect::default()
        };
        assert!(plan(&both).is_err());
    }

    #[test]
    fn changed_paths_skip_deleted_files() {
        let patch = "+++ b/a.py\n@@ -1 +1 @@\n+x\n+++ /dev/null\n+++ b/c d.rs\n";
        assert_eq!(changed_paths(patch), vec!["a.py", "c d.rs"]);
    }

    #[test]
    fn the_manifest_names_the_workflow_and_the_prompt() {
        let m: serde_yaml::Value = serde_yaml::from_str(include_str!("../SKILL.yaml")).unwrap();
        assert_eq!(m["name"], "code-review");
        assert_eq!(m["types"][0], "prompt");
        assert!(INSTRUCTIONS.contains("report_finding"));
    }
}

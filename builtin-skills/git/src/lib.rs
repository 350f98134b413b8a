//! `git`: the project's git repository as tools, a tool skill built with
//! `agent-skill-sdk`. Everything goes through the typed `git` and
//! `git-write` imports: no shell, no `exec`.
//!
//! | tool | permission | what it does |
//! |---|---|---|
//! | `git_status` | `git:read` | changed paths, porcelain status |
//! | `git_diff` | `git:read` | unified diff between revisions, index, working tree |
//! | `git_log` | `git:read` | recent commits, newest first |
//! | `git_show` | `git:read` | a commit's message and patch |
//! | `git_commit` | `git:write` | commit paths or staged changes (approval) |
//! | `git_branch` | `git:write` | create a branch without switching (approval) |
//!
//! The formatting of the answers is plain functions over the import types,
//! so the unit tests run natively.

use agent_skill_sdk::git::{self, Commit, FileStatus};
use agent_skill_sdk::{NoInput, Tool, ToolError, Toolbox};
use serde::Deserialize;

/// Commits `git_log` shows when `max` is not given.
pub const DEFAULT_LOG_MAX: u32 = 20;

/// `git_diff` input.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffInput {
    /// From this revision; the index when absent.
    #[serde(default)]
    pub base: Option<String>,
    /// To this revision; the working tree when absent.
    #[serde(default)]
    pub head: Option<String>,
    /// Limit to these paths.
    #[serde(default)]
    pub paths: Vec<String>,
}

/// `git_log` input.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogInput {
    /// At most this many commits.
    #[serde(default)]
    pub max: Option<u32>,
    /// Start from this revision; `HEAD` when absent.
    #[serde(default)]
    pub rev: Option<String>,
}

/// `git_show` input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShowInput {
    /// The commit to show.
    pub rev: String,
}

/// `git_commit` input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommitInput {
    /// The commit message.
    pub message: String,
    /// Commit these paths; all staged changes when empty.
    #[serde(default)]
    pub paths: Vec<String>,
}

/// `git_branch` input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BranchInput {
    /// The new branch's name.
    pub name: String,
    /// Where it starts; `HEAD` when absent.
    #[serde(default)]
    pub start: Option<String>,
}

/// `git_status` output: one `XY path` line per changed path.
pub fn format_status(files: &[FileStatus]) -> String {
    if files.is_empty() {
        return "clean: no changes in the working tree or index\n".to_string();
    }
    let mut out = String::new();
    for f in files {
        out.push_str(&f.status);
        out.push(' ');
        out.push_str(&f.path);
        out.push('\n');
    }
    out
}

/// `git_diff` output: the diff, or a note when there is none.
pub fn format_diff(diff: String) -> String {
    if diff.trim().is_empty() {
        "no differences\n".to_string()
    } else {
        diff
    }
}

/// `git_log` output: id, author, date and message of each commit.
pub fn format_log(commits: &[Commit]) -> String {
    if commits.is_empty() {
        return "no commits\n".to_string();
    }
    let mut out = String::new();
    for (i, c) in commits.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "commit {}\nAuthor: {} <{}>\nDate:   {}\n\n",
            c.id, c.author, c.email, c.time
        ));
        let message = if c.message.trim().is_empty() {
            &c.summary
        } else {
            &c.message
        };
        for line in message.trim_end().lines() {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn non_empty(what: &str, value: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() {
        Err(ToolError::invalid_input(format!(
            "`{what}` must not be empty"
        )))
    } else {
        Ok(())
    }
}

/// The tools, with the input schemas the manifest also points at.
pub fn tools() -> Toolbox {
    Toolbox::new()
        .tool(
            "git_status",
            "List the changed paths of the project's git working tree and index, one per line \
             as `XY path` with the two-letter porcelain status (` M` modified, `A ` added, \
             `??` untracked, ...).",
            include_str!("../schemas/git_status.json"),
            |_: NoInput| Ok(format_status(&git::status()?)),
        )
        .tool(
            "git_diff",
            "Unified diff. Without `base` and `head`: unstaged changes (index to working tree); \
             `base` alone: that revision to the working tree; `head` alone: the index to that \
             revision; both: between the two revisions. `paths` limits the diff.",
            include_str!("../schemas/git_diff.json"),
            |i: DiffInput| {
                Ok(format_diff(git::diff(
                    i.base.as_deref(),
                    i.head.as_deref(),
                    &i.paths,
                )?))
            },
        )
        .tool(
            "git_log",
            "Recent commits, newest first: id, author, date and message. `max` defaults to 20; \
             `rev` (default HEAD) picks where to start.",
            include_str!("../schemas/git_log.json"),
            |i: LogInput| {
                let max = i.max.unwrap_or(DEFAULT_LOG_MAX).clamp(1, 1000);
                Ok(format_log(&git::log(max, i.rev.as_deref())?))
            },
        )
        .tool(
            "git_show",
            "A commit's message and patch, as `git show` prints it.",
            include_str!("../schemas/git_show.json"),
            |i: ShowInput| {
                non_empty("rev", &i.rev)?;
                Ok(git::show(&i.rev)?)
            },
        )
        .add_tool(
            Tool::new(
                "git_commit",
                "Commit the given paths (relative to the repository root) with a message; \
                 without `paths`, commit what is already staged. Answers the new commit id.",
                include_str!("../schemas/git_commit.json"),
                |i: CommitInput| {
                    non_empty("message", &i.message)?;
                    let id = git::commit(&i.message, &i.paths)?;
                    Ok(format!("committed {id}\n"))
                },
            )
            .requires_approval(true),
        )
        .add_tool(
            Tool::new(
                "git_branch",
                "Create a branch at `start` (default HEAD) without switching to it.",
                include_str!("../schemas/git_branch.json"),
                |i: BranchInput| {
                    non_empty("name", &i.name)?;
                    git::branch(&i.name, i.start.as_deref())?;
                    let at = i.start.as_deref().unwrap_or("HEAD");
                    Ok(format!("created branch {} at {at}\n", i.name))
                },
            )
            .requires_approval(true),
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

    #[test]
    fn status_lines_and_clean_note() {
        let files = vec![
            FileStatus {
                path: "a.txt".into(),
                status: " M".into(),
            },
            FileStatus {
                path: "new.rs".into(),
                status: "??".into(),
            },
        ];
        assert_eq!(format_status(&files), " M a.txt\n?? new.rs\n");
        assert!(format_status(&[]).starts_with("clean"));
    }

    #[test]
    fn log_is_readable() {
        let c = Commit {
            id: "abc123".into(),
            author: "Ada".into(),
            email: "ada@example.com".into(),
            time: "2026-01-01T00:00:00Z".into(),
            summary: "first".into(),
            message: "first\n\nbody\n".into(),
        };
        let out = format_log(&[c]);
        assert!(
            out.contains("commit abc123\nAuthor: Ada <ada@example.com>"),
            "{out}"
        );
        assert!(out.contains("    first\n    \n    body\n"), "{out}");
        assert_eq!(format_log(&[]), "no commits\n");
        assert_eq!(format_diff(String::new()), "no differences\n");
    }

    #[test]
    fn bad_input_is_refused_before_git() {
        let tools = tools();
        assert!(matches!(
            tools.call("git_show", r#"{"rev":" "}"#),
            Err(ToolError::InvalidInput(_))
        ));
        assert!(matches!(
            tools.call("git_commit", r#"{"message":""}"#),
            Err(ToolError::InvalidInput(_))
        ));
    }

    /// The manifest and `list-tools` must agree: same tools in the same
    /// order, same schema files (byte for byte), same approval flags.
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
                Some(spec.requires_approval),
                "{}",
                spec.name
            );
            let file = entry["input_schema_file"].as_str().unwrap_or_default();
            let on_disk = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file),
            )
            .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(on_disk, spec.input_schema, "{}", spec.name);
        }
        assert_eq!(
            manifest["implementation"]["component"].as_str(),
            Some("git_skill.wasm")
        );
        assert_eq!(manifest["name"].as_str(), Some("git"));
    }
}

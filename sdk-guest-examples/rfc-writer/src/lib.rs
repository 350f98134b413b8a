//! The spec's `rfc-writer` workflow skill.
//!
//! - `draft-rfc {topic, problem?, files?, commits?}`: gathers context — the
//!   recent git history (`git:read`) and the files the request names
//!   (`file:read`) — asks the model (`llm:call`) for an RFC with the
//!   template's sections, and writes `docs/rfcs/NNNN-slug.md` with the next
//!   free number (`file:write`). Answers `{path, number, title,
//!   missing_sections}`.
//! - `review-rfc {path}`: asks the model to review an RFC against the same
//!   template; answers `{path, review}`.
//!
//! The RFC file is reserved (created empty, never overwriting another) before
//! the model is asked, so a missing `file:write` costs no model call, and two
//! runs never take the same number; it is removed again if the model fails.

use std::io::Write;
use std::path::Path;

use agent_skill_sdk::fs::{self, Access};
use agent_skill_sdk::types::SkillError;
use agent_skill_sdk::wit::workflow_skill::exports::agent::skill::workflow::{Guest, WorkflowSpec};
use agent_skill_sdk::{ToolError, git, llm, log};
use serde::Deserialize;
use serde_json::json;

/// Where RFCs go, relative to the project root.
const RFC_DIR: &str = "docs/rfcs";

/// The sections every RFC has, in order.
pub const SECTIONS: &[&str] = &[
    "Summary",
    "Motivation",
    "Detailed design",
    "Alternatives considered",
    "Risks and drawbacks",
    "Unresolved questions",
];

/// A named file's text is cut at this many bytes in the prompt.
const MAX_FILE: usize = 12_000;

const DRAFT_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "topic": { "type": "string", "description": "What the RFC proposes, e.g. `Cache build artifacts`" },
    "problem": { "type": "string", "description": "The problem statement, in the user's words" },
    "files": { "type": "array", "items": { "type": "string" }, "description": "Project files the RFC is about (read as context)" },
    "commits": { "type": "integer", "minimum": 0, "maximum": 100, "description": "Recent commits to show the model (default 20)" }
  },
  "required": ["topic"]
}"#;

const REVIEW_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "path": { "type": "string", "description": "The RFC file, e.g. docs/rfcs/0001-cache-build-artifacts.md" }
  },
  "required": ["path"]
}"#;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Draft {
    topic: String,
    problem: Option<String>,
    #[serde(default)]
    files: Vec<String>,
    commits: Option<u32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Review {
    path: String,
}

/// `Cache build artifacts!` → `cache-build-artifacts` (at most 60 characters).
pub fn slug(topic: &str) -> String {
    let mut out = String::new();
    for c in topic.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out = out.trim_end_matches('-').to_string();
    if out.len() > 60 {
        out.truncate(60);
        out = out.trim_end_matches('-').to_string();
    }
    out
}

/// The number in `NNNN-….md`, if the name has that shape.
fn rfc_number(name: &str) -> Option<u32> {
    let (digits, rest) = name.split_at_checked(4)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) || !rest.starts_with('-') {
        return None;
    }
    digits.parse().ok()
}

/// The next free RFC number: one more than the highest in `docs/rfcs`.
fn next_number(dir: &Path) -> Result<u32, ToolError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(1),
        Err(e) => return Err(fs::io_error(&e, dir, Access::Read)),
    };
    let mut highest = 0;
    for entry in entries.flatten() {
        if let Some(n) = rfc_number(&entry.file_name().to_string_lossy()) {
            highest = highest.max(n);
        }
    }
    Ok(highest + 1)
}

/// Creates the RFC file empty, never replacing one; the next number when a
/// concurrent run took this one.
fn reserve(dir: &Path, slug: &str) -> Result<(u32, String), ToolError> {
    let mut number = next_number(dir)?;
    loop {
        let name = format!("{number:04}-{slug}.md");
        let path = dir.join(&name);
        let created = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path);
        match created {
            Ok(_) => return Ok((number, name)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => number += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(dir).map_err(|e| fs::io_error(&e, dir, Access::Write))?;
            }
            Err(e) => return Err(fs::io_error(&e, &path, Access::Write)),
        }
    }
}

/// The prompt for the draft: the topic, the template, the history and the
/// named files.
pub fn draft_prompt(
    topic: &str,
    problem: Option<&str>,
    commits: &[String],
    files: &[(String, String)],
) -> String {
    let mut p = format!("Write an RFC (a design document) proposing: {topic}\n\n");
    if let Some(problem) = problem {
        p.push_str(&format!("Problem statement:\n{}\n\n", problem.trim()));
    }
    p.push_str(
        "Answer with the RFC body in Markdown, without a title line, using exactly these \
         second-level sections in this order:\n",
    );
    for s in SECTIONS {
        p.push_str(&format!("## {s}\n"));
    }
    p.push_str(
        "\nBase the design on the code and history below; name the files and functions it \
         changes. Keep it concrete and short.\n",
    );
    if !commits.is_empty() {
        p.push_str("\nRecent commits (newest first):\n");
        for c in commits {
            p.push_str(&format!("- {c}\n"));
        }
    }
    for (path, text) in files {
        p.push_str(&format!("\n--- {path} ---\n{text}\n"));
    }
    p
}

/// The model's answer without a wrapping code fence or a title line of its
/// own (the file's title comes from the template).
fn clean_answer(answer: &str) -> String {
    let mut text = answer.trim();
    if let Some(rest) = text.strip_prefix("```") {
        let rest = rest.split_once('\n').map_or("", |(_, body)| body);
        text = rest.trim_end().strip_suffix("```").unwrap_or(rest).trim();
    }
    if text.starts_with("# ") {
        text = text
            .split_once('\n')
            .map_or("", |(_, body)| body)
            .trim_start();
    }
    text.to_string()
}

/// The file: the template's title and header, then the model's sections.
pub fn render(number: u32, topic: &str, context: &str, body: &str) -> String {
    format!("# RFC {number:04}: {topic}\n\n- Status: Draft\n- Context: {context}\n\n{body}\n")
}

fn draft(input: &str) -> Result<String, ToolError> {
    let input: Draft =
        serde_json::from_str(input).map_err(|e| ToolError::invalid_input(format!("input: {e}")))?;
    let topic = input.topic.trim();
    if topic.is_empty() {
        return Err(ToolError::invalid_input("`topic` is empty"));
    }
    let slug = slug(topic);
    if slug.is_empty() {
        return Err(ToolError::invalid_input(
            "`topic` needs letters or digits (it names the file)",
        ));
    }
    let max_commits = input.commits.unwrap_or(20).min(100);

    // Context first: each of these fails with the permission it needs.
    let commits: Vec<String> = if max_commits == 0 {
        Vec::new()
    } else {
        git::log(max_commits, None)?
            .into_iter()
            .map(|c| format!("{} {}", &c.id[..c.id.len().min(8)], c.summary))
            .collect()
    };
    let mut files = Vec::new();
    for path in &input.files {
        let mut text = fs::read_to_string(path)?;
        if text.len() > MAX_FILE {
            let mut end = MAX_FILE;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[cut]");
        }
        files.push((path.clone(), text));
    }

    let dir = fs::project_path(RFC_DIR)?;
    let (number, name) = reserve(&dir, &slug)?;
    let path = dir.join(&name);
    let rel = format!("{RFC_DIR}/{name}");
    log::info(format!("drafting {rel}"));

    let prompt = draft_prompt(topic, input.problem.as_deref(), &commits, &files);
    let answer = match llm::complete(&prompt) {
        Ok(answer) => answer,
        Err(e) => {
            let _ = std::fs::remove_file(&path);
            return Err(e.into());
        }
    };
    let body = clean_answer(&answer);
    let missing: Vec<&str> = SECTIONS
        .iter()
        .copied()
        .filter(|s| !body.lines().any(|l| l.trim() == format!("## {s}")))
        .collect();
    let context = match (commits.len(), input.files.len()) {
        (0, 0) => "the problem statement only".to_string(),
        (c, 0) => format!("{c} recent commits"),
        (c, _) => format!("{c} recent commits; {}", input.files.join(", ")),
    };
    let text = render(number, topic, &context, &body);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .map_err(|e| fs::io_error(&e, &path, Access::Write))?;
    file.write_all(text.as_bytes())
        .map_err(|e| fs::io_error(&e, &path, Access::Write))?;
    Ok(json!({
        "path": rel,
        "number": number,
        "title": format!("RFC {number:04}: {topic}"),
        "missing_sections": missing,
    })
    .to_string())
}

fn review(input: &str) -> Result<String, ToolError> {
    let input: Review =
        serde_json::from_str(input).map_err(|e| ToolError::invalid_input(format!("input: {e}")))?;
    let text = fs::read_to_string(&input.path)?;
    let mut prompt = String::from(
        "Review this RFC as a senior engineer. For each of these sections say whether it is \
         present and convincing, then list the three most important questions the author must \
         answer before the RFC can be accepted:\n",
    );
    for s in SECTIONS {
        prompt.push_str(&format!("- {s}\n"));
    }
    prompt.push_str(&format!("\n--- {} ---\n{text}\n", input.path));
    let review = llm::complete(&prompt)?;
    Ok(json!({ "path": input.path, "review": review.trim() }).to_string())
}

struct Workflows;

impl Guest for Workflows {
    fn list_workflows() -> Vec<WorkflowSpec> {
        vec![
            WorkflowSpec {
                name: "draft-rfc".to_string(),
                description: "Draft an RFC from a topic: gathers the recent git history and the \
                              named files, asks the model for the template's sections, and \
                              writes docs/rfcs/NNNN-slug.md with the next free number."
                    .to_string(),
                input_schema: DRAFT_SCHEMA.to_string(),
            },
            WorkflowSpec {
                name: "review-rfc".to_string(),
                description: "Review an RFC file against the template: missing or weak \
                              sections and the open questions."
                    .to_string(),
                input_schema: REVIEW_SCHEMA.to_string(),
            },
        ]
    }

    fn run_workflow(name: String, input: String) -> Result<String, SkillError> {
        match name.as_str() {
            "draft-rfc" => draft(&input),
            "review-rfc" => review(&input),
            other => Err(ToolError::not_found(format!("no workflow `{other}`"))),
        }
        .map_err(ToolError::into_wit)
    }
}

agent_skill_sdk::wit::workflow_skill::export!(Workflows);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_numbers() {
        assert_eq!(slug("Cache build artifacts!"), "cache-build-artifacts");
        assert_eq!(slug("  Use  gRPC / HTTP2 "), "use-grpc-http2");
        assert_eq!(rfc_number("0007-x.md"), Some(7));
        assert_eq!(rfc_number("README.md"), None);
        assert_eq!(rfc_number("12-x.md"), None);
    }

    #[test]
    fn answers_lose_fences_and_titles() {
        assert_eq!(
            clean_answer("```markdown\n# T\n## Summary\nx\n```"),
            "## Summary\nx"
        );
        assert_eq!(clean_answer("## Summary\nx\n"), "## Summary\nx");
    }
}

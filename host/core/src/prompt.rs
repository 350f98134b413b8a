//! The system prompt: fixed instructions, the project's `AGENT.md` files,
//! and the content of active prompt skills, each kept within its token
//! budget.
//!
//! [`skill_prompts`] gathers every active prompt skill's fragments (its
//! `prompt.system_prompt_file`, its `prompt.context_files` and what its
//! component's `fragments` export returns), keeps them by priority within
//! the skill's `prompt.max_context_tokens`, and [`assemble`] puts the pieces
//! together.

use std::path::Path;
use std::sync::Arc;

use agent_manifest::{DEFAULT_MAX_CONTEXT_TOKENS, SkillType};
use agent_runtime::inspect::ExportKind;
use agent_runtime::{CallContext, PromptContext, Runtime, Skill};

use crate::context::CHARS_PER_TOKEN;

/// Priority of a skill's `prompt.system_prompt_file` fragment.
pub const SYSTEM_PROMPT_FILE_PRIORITY: i32 = 0;

/// Priority of each of a skill's `prompt.context_files` fragments.
pub const CONTEXT_FILE_PRIORITY: i32 = 100;

/// A fragment that does not fit is cut only when at least this many
/// estimated tokens of it would remain; otherwise it is dropped.
pub const MIN_CUT_TOKENS: usize = 16;

/// Largest prompt file read; larger files are read up to this size.
pub const MAX_PROMPT_FILE_BYTES: u64 = 1024 * 1024;

/// Separator between the kept fragments of one skill.
const FRAGMENT_SEPARATOR: &str = "\n\n";

/// The fixed instructions every run starts with.
pub const BASE_INSTRUCTIONS: &str = "You are agent, an AI coding agent working in a software project. \
Use the tools offered to read, search, edit files and run programs in the project; \
paths are relative to the project root. Tools run in a sandbox with only the permissions \
the user granted: when a tool is refused, say what was refused instead of retrying it. \
When the task is done, answer with a short summary of what you did.";

/// The system prompt: [`BASE_INSTRUCTIONS`], then the contents of every
/// `AGENT.md` from `project_root` down to `cwd` (outermost first). When
/// `cwd` is not inside `project_root`, only the root's file is read.
pub fn system_prompt(project_root: &Path, cwd: &Path) -> String {
    let mut prompt = BASE_INSTRUCTIONS.to_string();
    let mut dirs = vec![project_root.to_path_buf()];
    let root = project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf());
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    if let Ok(rel) = cwd.strip_prefix(&root) {
        let mut d = project_root.to_path_buf();
        for c in rel.components() {
            d = d.join(c);
            dirs.push(d.clone());
        }
    }
    for dir in dirs {
        let file = dir.join("AGENT.md");
        if let Ok(text) = std::fs::read_to_string(&file) {
            let shown = file
                .strip_prefix(project_root)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| file.display().to_string());
            prompt.push_str(&format!(
                "\n\n# Instructions from {shown}\n\n{}",
                text.trim()
            ));
        }
    }
    prompt
}

/// Estimated tokens of `text`: `ceil(chars / CHARS_PER_TOKEN)`, the rule
/// [`crate::context`] applies to message text.
pub fn estimate_text_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(CHARS_PER_TOKEN)
}

/// The marker ending a fragment cut to a skill's budget of `budget` tokens.
pub fn trim_marker(budget: usize) -> String {
    format!("\n[trimmed to this skill's budget of {budget} tokens]")
}

/// What prompt skills are told about the run.
#[derive(Debug, Clone, Copy)]
pub struct PromptInput<'a> {
    /// `interactive`, `headless`, `wiki`, `security-audit` or `cli`.
    pub mode: &'a str,
    /// The user's latest message.
    pub user_message: &'a str,
    /// Detected project languages.
    pub languages: &'a [String],
}

/// One prompt skill's contribution to the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillPrompt {
    /// The skill's name.
    pub skill: String,
    /// The kept fragments' contents, most important first, separated by a
    /// blank line; at most [`SkillPrompt::budget`] tokens by
    /// [`estimate_text_tokens`].
    pub text: String,
    /// Estimated tokens of [`SkillPrompt::text`].
    pub tokens: usize,
    /// The skill's budget (`prompt.max_context_tokens`).
    pub budget: usize,
    /// Titles of the fragments in [`SkillPrompt::text`], in order (a
    /// fragment cut to fit is listed here and in
    /// [`SkillPrompt::dropped`]).
    pub fragments: Vec<String>,
    /// Titles of the fragments left out or cut to fit the budget.
    pub dropped: Vec<String>,
}

/// Gathers the prompt of every skill of `active` (indices into `skills`,
/// in that order) whose manifest has type `prompt`: the
/// `prompt.system_prompt_file` (priority [`SYSTEM_PROMPT_FILE_PRIORITY`]),
/// each `prompt.context_files` file (priority [`CONTEXT_FILE_PRIORITY`]),
/// both titled by file name, and the fragments of the component's `prompt`
/// export when it has one (asked with the skill's budget as `max-tokens`).
/// Each skill's fragments are fitted to its budget (see [`fit_fragments`]).
///
/// Never fails: a file that cannot be read or a `fragments` call that fails
/// becomes a warning naming the skill, returned beside the prompts.
pub async fn skill_prompts(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
    active: &[usize],
    input: &PromptInput<'_>,
) -> (Vec<SkillPrompt>, Vec<String>) {
    let mut prompts = Vec::new();
    let mut warnings = Vec::new();
    for &i in active {
        let Some(skill) = skills.get(i) else { continue };
        let manifest = &skill.manifest;
        if !manifest.has_type(SkillType::Prompt) {
            continue;
        }
        let budget = manifest
            .prompt
            .as_ref()
            .map_or(DEFAULT_MAX_CONTEXT_TOKENS, |p| p.max_context_tokens)
            as usize;
        let mut pieces = Vec::new();
        if let Some(config) = &manifest.prompt {
            let files = config
                .system_prompt_file
                .iter()
                .map(|f| (f, SYSTEM_PROMPT_FILE_PRIORITY))
                .chain(
                    config
                        .context_files
                        .iter()
                        .map(|f| (f, CONTEXT_FILE_PRIORITY)),
                );
            for (rel, priority) in files {
                match read_prompt_file(skill, rel) {
                    Ok(content) => {
                        let title = rel
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_else(|| rel.display().to_string());
                        pieces.push((title, content, priority));
                    }
                    Err(why) => warnings.push(format!(
                        "skill `{}`: cannot read prompt file `{}`: {why}",
                        skill.name(),
                        rel.display()
                    )),
                }
            }
        }
        if skill.exports(ExportKind::Prompt) {
            let context = PromptContext {
                mode: input.mode.to_string(),
                user_message: input.user_message.to_string(),
                languages: input.languages.to_vec(),
                max_tokens: u32::try_from(budget).unwrap_or(u32::MAX),
            };
            match runtime.prompt_fragments(skill, ctx, &context).await {
                Ok(fragments) => pieces.extend(
                    fragments
                        .into_iter()
                        .map(|f| (f.title, f.content, f.priority)),
                ),
                Err(e) => warnings.push(format!(
                    "skill `{}`: its prompt fragments are left out: {e}",
                    skill.name()
                )),
            }
        }
        prompts.push(fit_fragments(skill.name(), budget, pieces));
    }
    (prompts, warnings)
}

/// Reads a prompt file of `skill` (at most [`MAX_PROMPT_FILE_BYTES`]).
fn read_prompt_file(skill: &Skill, rel: &Path) -> Result<String, String> {
    use std::io::Read;
    let Some(dir) = &skill.dir else {
        return Err("the skill has no directory to read it from".to_string());
    };
    let path = skill.manifest.resolve_path(dir, rel);
    let file = std::fs::File::open(&path).map_err(|e| format!("{} ({e})", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_PROMPT_FILE_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{} ({e})", path.display()))?;
    String::from_utf8(bytes).map_err(|_| format!("{} is not valid UTF-8", path.display()))
}

/// Fits `(title, content, priority)` fragments to `budget` tokens: sorted by
/// priority (lower first, ties in the given order), each kept while the
/// text still fits; the first that does not fit is cut at a character
/// boundary and ends with [`trim_marker`] when at least [`MIN_CUT_TOKENS`]
/// of it fit, and every later one is dropped. Fragments whose content is
/// blank are ignored. The kept text is at most `budget` tokens by
/// [`estimate_text_tokens`].
pub fn fit_fragments(
    skill: &str,
    budget: usize,
    mut fragments: Vec<(String, String, i32)>,
) -> SkillPrompt {
    fragments.sort_by_key(|f| f.2);
    let limit_chars = budget.saturating_mul(CHARS_PER_TOKEN);
    let mut text = String::new();
    let mut used = 0usize;
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    let mut full = false;
    for (title, content, _) in fragments {
        let content = content.trim();
        if content.is_empty() {
            continue;
        }
        if full {
            dropped.push(title);
            continue;
        }
        let sep = if text.is_empty() {
            0
        } else {
            FRAGMENT_SEPARATOR.len()
        };
        let chars = content.chars().count();
        if used + sep + chars <= limit_chars {
            if sep > 0 {
                text.push_str(FRAGMENT_SEPARATOR);
            }
            text.push_str(content);
            used += sep + chars;
            kept.push(title);
            continue;
        }
        full = true;
        let marker = trim_marker(budget);
        let room = limit_chars.saturating_sub(used + sep + marker.chars().count());
        if room >= MIN_CUT_TOKENS * CHARS_PER_TOKEN {
            let cut: String = content.chars().take(room).collect();
            let cut = cut.trim_end();
            if sep > 0 {
                text.push_str(FRAGMENT_SEPARATOR);
            }
            text.push_str(cut);
            text.push_str(&marker);
            kept.push(title.clone());
        }
        dropped.push(title);
    }
    SkillPrompt {
        skill: skill.to_string(),
        tokens: estimate_text_tokens(&text),
        text,
        budget,
        fragments: kept,
        dropped,
    }
}

/// The full system prompt: `base`, then one `## Skill: <name>` section per
/// prompt with text (in the given order), then each non-blank `injected`
/// text (from hooks), all separated by blank lines.
pub fn assemble(base: &str, prompts: &[SkillPrompt], injected: &[String]) -> String {
    let mut out = base.trim_end().to_string();
    for p in prompts {
        if p.text.trim().is_empty() {
            continue;
        }
        out.push_str(&format!("\n\n## Skill: {}\n\n{}", p.skill, p.text));
    }
    for text in injected {
        let text = text.trim();
        if !text.is_empty() {
            out.push_str("\n\n");
            out.push_str(text);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frag(title: &str, content: &str, priority: i32) -> (String, String, i32) {
        (title.to_string(), content.to_string(), priority)
    }

    #[test]
    fn fits_by_priority_and_cuts_the_first_that_does_not_fit() {
        let big = "word ".repeat(400);
        let p = fit_fragments(
            "s",
            100,
            vec![
                frag("low", &big, 50),
                frag("top", "most important", -1),
                frag("mid", "second", 10),
                frag("later", "would fit but comes after the cut", 60),
            ],
        );
        assert!(p.tokens <= 100, "{} > 100", p.tokens);
        assert_eq!(estimate_text_tokens(&p.text), p.tokens);
        assert_eq!(p.fragments, ["top", "mid", "low"]);
        assert_eq!(p.dropped, ["low", "later"]);
        assert!(p.text.starts_with("most important\n\nsecond\n\nword word"));
        assert!(p.text.ends_with(&trim_marker(100)));
    }

    #[test]
    fn too_little_room_drops_instead_of_cutting() {
        let p = fit_fragments(
            "s",
            20,
            vec![
                frag("a", &"a".repeat(70), 0),
                frag("b", &"b".repeat(400), 1),
            ],
        );
        assert_eq!(p.fragments, ["a"]);
        assert_eq!(p.dropped, ["b"]);
        assert!(!p.text.contains("trimmed"));
        assert!(p.tokens <= 20);
    }

    #[test]
    fn cuts_at_char_boundaries() {
        let p = fit_fragments("s", 40, vec![frag("u", &"é🙂".repeat(200), 0)]);
        assert!(p.tokens <= 40);
        assert!(p.text.ends_with(&trim_marker(40)));
    }

    #[test]
    fn assemble_is_stable() {
        let p = SkillPrompt {
            skill: "k8s".into(),
            text: "use kubectl".into(),
            tokens: 3,
            budget: 10,
            fragments: vec!["a".into()],
            dropped: vec![],
        };
        let empty = SkillPrompt {
            skill: "none".into(),
            text: String::new(),
            ..p.clone()
        };
        let out = assemble("base", &[p, empty], &["from a hook".into(), " ".into()]);
        assert_eq!(out, "base\n\n## Skill: k8s\n\nuse kubectl\n\nfrom a hook");
    }

    #[test]
    fn reads_agent_md_from_root_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("AGENT.md"), "root rules").unwrap();
        std::fs::write(root.join("a/b/AGENT.md"), "deep rules").unwrap();
        let p = system_prompt(root, &root.join("a/b"));
        let r = p.find("root rules").unwrap();
        let d = p.find("deep rules").unwrap();
        assert!(p.starts_with(BASE_INSTRUCTIONS));
        assert!(r < d);
        let top = system_prompt(root, root);
        assert!(!top.contains("deep rules"));
    }
}

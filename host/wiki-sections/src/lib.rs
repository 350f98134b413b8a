//! `agent-wiki-sections`: the wiki sections skills contribute, and the
//! `on-before-wiki-section` hook.
//!
//! - [`contributed_sections`]: every `wiki.sections[]` entry of the given
//!   skills whose `template` is a file of the skill's directory, read and
//!   rendered ([`template`]) into a [`Section`]. (An entry with only an
//!   `analyzer` is listed by [`analyzer_sections`]: its data comes from
//!   running that workflow, which is the wiki generator's job.)
//! - [`before_section`]: one section through the hooks subscribed to
//!   `on_before_wiki_section`, in priority order; each may replace the
//!   section's Markdown (`response`) or veto it (`cancel`, with
//!   `cancel-reason`), which stops the chain. The wiki generator's
//!   assemble stage calls it for every section, its own and contributed.
//!
//! The contract of the hook event (docs/wiki-sections.md): `skill` is the
//! contributing skill (`wiki` for the generator's own sections), `response`
//! the section's Markdown, `tool-call` a read-only descriptor `{id:
//! <section id>, tool: "wiki-section", input: {"id", "title", "skill"}}`.
#![deny(missing_docs)]

pub mod template;

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use agent_core::hooks::HookSet;
use agent_runtime::{CallContext, HookEvent, HookPhase, Runtime, Skill, WitToolCall};

pub use template::{TemplateContext, TemplateError};

/// The `skill` of the generator's own sections in the hook event.
pub const GENERATOR: &str = "wiki";

/// One section of the wiki.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Stable id: the title in lower case, words joined by `-`.
    pub id: String,
    /// The title.
    pub title: String,
    /// The contributing skill; `None` for the generator's own sections.
    pub skill: Option<String>,
    /// The section's Markdown.
    pub markdown: String,
}

impl Section {
    /// A section with its id derived from `title`.
    pub fn new(title: &str, skill: Option<&str>, markdown: String) -> Section {
        Section {
            id: section_id(title),
            title: title.to_string(),
            skill: skill.map(str::to_string),
            markdown,
        }
    }
}

/// `Kubernetes Architecture` → `kubernetes-architecture`.
pub fn section_id(title: &str) -> String {
    let mut id = String::new();
    for word in title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !id.is_empty() {
            id.push('-');
        }
        id.push_str(&word.to_lowercase());
    }
    id
}

/// A contributed section that could not be produced.
#[derive(Debug, thiserror::Error)]
pub enum SectionError {
    /// The template could not be read.
    #[error(
        "skill `{skill}`: cannot read its wiki template {file}: {reason}; fix `wiki.sections[].template` in its SKILL.yaml"
    )]
    Read {
        /// The skill.
        skill: String,
        /// The template, relative to the skill directory.
        file: PathBuf,
        /// Why.
        reason: String,
    },
    /// The template does not render.
    #[error(transparent)]
    Template(#[from] TemplateError),
}

/// The sections the `skills` contribute with a template, rendered with
/// `cx`, in skill order then manifest order.
pub fn contributed_sections(
    skills: &[&Skill],
    cx: &TemplateContext,
) -> Result<Vec<Section>, SectionError> {
    let mut sections = Vec::new();
    for skill in skills {
        let Some(wiki) = &skill.manifest.wiki else {
            continue;
        };
        for entry in &wiki.sections {
            sections.extend(render_section(skill, entry, cx)?);
        }
    }
    Ok(sections)
}

/// One `wiki.sections[]` entry of `skill` rendered with `cx` (the wiki
/// generator adds the entry's analyzer output to `cx.values`); `None` when
/// the entry has no template.
///
/// # Errors
/// The template cannot be read or rendered.
pub fn render_section(
    skill: &Skill,
    entry: &agent_manifest::WikiSection,
    cx: &TemplateContext,
) -> Result<Option<Section>, SectionError> {
    let Some(file) = &entry.template else {
        return Ok(None);
    };
    let text = read_template(skill, file)?;
    let version = skill.manifest.version.to_string();
    let source = template::Source {
        skill: skill.name(),
        version: &version,
        file,
    };
    let markdown = template::render(&text, &source, cx)?;
    Ok(Some(Section::new(
        &entry.title,
        Some(skill.name()),
        markdown,
    )))
}

/// A diagram a skill contributes (`wiki.diagrams[]`): its Mermaid source,
/// rendered from its template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagram {
    /// The contributing skill.
    pub skill: String,
    /// The diagram's kind (the manifest's `type`).
    pub kind: String,
    /// The rendered Mermaid source (without fences).
    pub mermaid: String,
}

/// The diagrams the `skills` contribute, each template rendered with `cx`
/// (the same language and variables as a section's template), in skill
/// order then manifest order. Diagrams are Mermaid.
///
/// # Errors
/// A template that cannot be read or rendered, or that holds a Markdown
/// fence (a diagram template is the Mermaid source only).
pub fn contributed_diagrams(
    skills: &[&Skill],
    cx: &TemplateContext,
) -> Result<Vec<Diagram>, SectionError> {
    let mut diagrams = Vec::new();
    for skill in skills {
        let manifest = &skill.manifest;
        let Some(wiki) = &manifest.wiki else { continue };
        for entry in &wiki.diagrams {
            let text = read_template(skill, &entry.template)?;
            let version = manifest.version.to_string();
            let source = template::Source {
                skill: skill.name(),
                version: &version,
                file: &entry.template,
            };
            let mermaid = template::render(&text, &source, cx)?;
            if let Some(i) = mermaid
                .lines()
                .position(|l| l.trim_start().starts_with("```"))
            {
                return Err(SectionError::Template(TemplateError {
                    skill: skill.name().to_string(),
                    file: entry.template.clone(),
                    line: i + 1,
                    message: "a diagram template is the Mermaid source only: remove the ``` fence (the wiki adds it)".into(),
                }));
            }
            diagrams.push(Diagram {
                skill: skill.name().to_string(),
                kind: entry.kind.clone(),
                mermaid: mermaid.trim().to_string(),
            });
        }
    }
    Ok(diagrams)
}

/// `(skill, section title, analyzer workflow)` of every contributed section
/// that names an analyzer.
pub fn analyzer_sections(skills: &[&Skill]) -> Vec<(String, String, String)> {
    skills
        .iter()
        .flat_map(|skill| {
            let sections = skill.manifest.wiki.iter().flat_map(|wiki| &wiki.sections);
            sections.filter_map(|entry| {
                entry.analyzer.as_ref().map(|analyzer| {
                    (
                        skill.name().to_string(),
                        entry.title.clone(),
                        analyzer.clone(),
                    )
                })
            })
        })
        .collect()
}

/// The template `file` of `skill`, which must stay inside its directory.
fn read_template(skill: &Skill, file: &Path) -> Result<String, SectionError> {
    let fail = |reason: String| SectionError::Read {
        skill: skill.name().to_string(),
        file: file.to_path_buf(),
        reason,
    };
    let Some(dir) = &skill.dir else {
        return Err(fail(
            "the skill has no directory (a built-in skill's templates are not files)".into(),
        ));
    };
    if file
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(fail(
            "the path must be relative and stay inside the skill directory".into(),
        ));
    }
    let path = dir.join(file);
    let real_dir = dir.canonicalize().map_err(|e| fail(e.to_string()))?;
    let real = path.canonicalize().map_err(|e| fail(e.to_string()))?;
    if !real.starts_with(&real_dir) {
        return Err(fail(
            "it is a link that leads outside the skill directory".into(),
        ));
    }
    std::fs::read_to_string(&real).map_err(|e| fail(e.to_string()))
}

/// What the hooks decided about one section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionDecision {
    /// No hook changed it.
    Keep(Section),
    /// Hooks replaced its Markdown (`by`: the skills that did, in order).
    Edited {
        /// The section with the final Markdown.
        section: Section,
        /// The skills whose hooks changed it.
        by: Vec<String>,
    },
    /// A hook vetoed it: it is left out of the wiki.
    Vetoed {
        /// The skill whose hook vetoed it.
        by: String,
        /// Its reason.
        reason: String,
    },
}

/// Passes `section` through the `on_before_wiki_section` hooks of `hooks`
/// (loaded from `skills`). Returns the decision and the hooks' problems
/// (a failing hook is a warning: the section is kept as it was).
pub async fn before_section(
    hooks: &HookSet,
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
    section: Section,
) -> (SectionDecision, Vec<String>) {
    if !hooks.listens(HookPhase::OnBeforeWikiSection) {
        return (SectionDecision::Keep(section), Vec::new());
    }
    let owner = section
        .skill
        .clone()
        .unwrap_or_else(|| GENERATOR.to_string());
    let descriptor = serde_json::json!({
        "id": section.id,
        "title": section.title,
        "skill": owner,
    });
    let event = HookEvent {
        phase: HookPhase::OnBeforeWikiSection,
        skill: owner,
        conversation: Vec::new(),
        tool_call: Some(WitToolCall {
            id: section.id.clone(),
            tool: "wiki-section".to_string(),
            input: descriptor.to_string(),
        }),
        tool_result: None,
        response: Some(section.markdown.clone()),
        findings: Vec::new(),
    };
    let outcome = hooks.dispatch(runtime, ctx, skills, event).await;
    let decision = if let Some(cancel) = outcome.cancelled {
        SectionDecision::Vetoed {
            by: cancel.skill,
            reason: cancel.reason,
        }
    } else if let Some(markdown) = outcome.response {
        let by = outcome
            .changes
            .iter()
            .filter(|c| c.what == "changed the section")
            .map(|c| c.skill.clone())
            .collect();
        SectionDecision::Edited {
            section: Section {
                markdown,
                ..section
            },
            by,
        }
    } else {
        SectionDecision::Keep(section)
    };
    (decision, outcome.errors)
}

//! Stage 5's skill part: the sections skills contribute
//! ([`agent_wiki_sections::contributed_sections`], pages under
//! `skill-contributed/`), and every page — the generator's and the
//! contributed — through the `on_before_wiki_section` hooks
//! ([`agent_wiki_sections::before_section`]): a hook may replace a page's
//! Markdown or veto it (the page then says which skill withheld it and
//! why, so links to it still resolve).

use std::path::PathBuf;
use std::sync::Arc;

use agent_core::hooks::HookSet;
use agent_runtime::Skill;
use agent_wiki::pages::Page;
use agent_wiki_sections::{Section, SectionDecision, TemplateContext};
use anyhow::Result;

use super::select::Selection;
use crate::app::App;

/// The contributed pages of the skills that declare `wiki.sections`
/// (`skill-contributed/<id>.md`: the template rendered with the analyzer's
/// variables, if it has one; an analyzer alone gives a table of its
/// values) or `wiki.diagrams` (`skill-contributed/<skill>-<type>.md`, one
/// Mermaid block each, whatever `--diagrams` is). An analyzer that fails
/// or is not exported is a warning (returned) and its section's page says
/// so; the wiki is still written.
///
/// # Errors
/// A template that cannot be read or rendered (naming skill, file, line);
/// the runtime cannot be started.
pub async fn contributed(
    app: &mut App,
    skills: &[&Skill],
    name: &str,
    modules: Vec<(String, PathBuf)>,
    languages: Vec<String>,
) -> Result<(Vec<(Page, Option<String>)>, Vec<String>)> {
    let with: Vec<&Skill> = skills
        .iter()
        .copied()
        .filter(|s| s.manifest.wiki.is_some())
        .collect();
    let input = super::analyzer::input(name, &modules, &languages);
    let cx = TemplateContext {
        project_name: name.to_string(),
        modules,
        languages,
        values: Default::default(),
    };
    let mut warnings = Vec::new();
    let mut pages: Vec<(Page, Option<String>)> = Vec::new();
    let needs_runtime = with.iter().any(|s| {
        s.manifest
            .wiki
            .iter()
            .flat_map(|w| &w.sections)
            .any(|e| e.analyzer.is_some())
    });
    let run = if needs_runtime {
        Some((app.runtime()?.clone(), app.call_context("wiki")?))
    } else {
        None
    };
    for skill in &with {
        let Some(wiki) = &skill.manifest.wiki else {
            continue;
        };
        for entry in &wiki.sections {
            let values = match (&entry.analyzer, &run) {
                (Some(workflow), Some((runtime, ctx))) => {
                    super::analyzer::run(runtime, ctx, skill, workflow, &input).await
                }
                _ => Ok(Default::default()),
            };
            let body = match values {
                Err(problem) => {
                    let body = format!(
                        "# {}\n\n*This section could not be written: {problem}.*\n",
                        entry.title
                    );
                    warnings.push(format!("wiki section `{}`: {problem}", entry.title));
                    body
                }
                Ok(values) => {
                    let cx = TemplateContext {
                        values: values.clone(),
                        ..cx.clone()
                    };
                    match agent_wiki_sections::render_section(skill, entry, &cx)? {
                        Some(s) if s.markdown.trim_start().starts_with("# ") => s.markdown,
                        Some(s) => format!("# {}\n\n{}", s.title, s.markdown),
                        None => values_table(&entry.title, &values),
                    }
                }
            };
            let page = Page {
                path: format!(
                    "skill-contributed/{}.md",
                    agent_wiki_sections::section_id(&entry.title)
                ),
                title: entry.title.clone(),
                body,
            };
            pages.push((page, Some(skill.name().to_string())));
        }
    }
    let diagrams = agent_wiki_sections::contributed_diagrams(&with, &cx)?;
    pages.extend(diagrams.into_iter().map(|d| {
        let title = format!("{} ({})", words(&d.kind), d.skill);
        let body = format!(
            "# {title}\n\nA diagram of skill `{}` (Mermaid).\n\n```mermaid\n{}\n```\n",
            d.skill, d.mermaid
        );
        let page = Page {
            path: format!(
                "skill-contributed/{}-{}.md",
                agent_wiki_sections::section_id(&d.skill),
                d.kind
            ),
            title,
            body,
        };
        (page, Some(d.skill))
    }));
    Ok((pages, warnings))
}

/// An analyzer-only section: its values as a table.
fn values_table(title: &str, values: &std::collections::BTreeMap<String, String>) -> String {
    let mut b = format!("# {title}\n\n| Variable | Value |\n|---|---|\n");
    for (k, v) in values {
        b.push_str(&format!(
            "| `{k}` | {} |\n",
            v.replace('|', "\\|").replace(['\n', '\r'], " ")
        ));
    }
    b
}

/// `deployment-topology` → `Deployment topology`.
fn words(kind: &str) -> String {
    let text = kind.replace(['-', '_'], " ");
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

/// Every page through the hooks; the hooks' problems are returned as
/// warnings.
///
/// # Errors
/// The skills or the runtime cannot be loaded.
pub async fn through_hooks(
    app: &mut App,
    selection: &Selection,
    pages: Vec<(Page, Option<String>)>,
) -> Result<(Vec<Page>, Vec<String>)> {
    let skills = Arc::new(app.load_all()?);
    let ctx = app.call_context("wiki")?;
    let runtime = app.runtime()?.clone();
    let active: Vec<usize> = (0..skills.len())
        .filter(|i| selection.takes_part(&skills[*i]))
        .collect();
    let (hooks, mut problems) = HookSet::load(&runtime, &ctx, &skills, &active).await;
    if !hooks.listens(agent_runtime::HookPhase::OnBeforeWikiSection) {
        return Ok((pages.into_iter().map(|(p, _)| p).collect(), problems));
    }
    let mut out = Vec::with_capacity(pages.len());
    for (p, owner) in pages {
        let section = Section::new(&p.title, owner.as_deref(), p.body.clone());
        let (decision, errs) =
            agent_wiki_sections::before_section(&hooks, &runtime, &ctx, &skills, section).await;
        problems.extend(errs);
        let body = match decision {
            SectionDecision::Keep(_) => p.body,
            SectionDecision::Edited { section, .. } => section.markdown,
            SectionDecision::Vetoed { by, reason } => {
                format!(
                    "# {}\n\n*This section was withheld by skill `{by}`: {reason}*\n",
                    p.title
                )
            }
        };
        out.push(Page { body, ..p });
    }
    Ok((out, problems))
}

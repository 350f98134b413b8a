//! `agent wiki`: the wiki generator (docs/wiki.md).
//!
//! 1–2. The project is walked, every file parsed with tree-sitter, its
//!      modules found and their import graph built ([`agent_wiki::project`]).
//! 3.   The model writes the prose, section by section ([`model`],
//!      [`tasks`]): per-module summaries, then (depth `standard`) the
//!      synthesis sections, then (depth `deep`) deep-dives; each answer
//!      comes through `write_wiki_section` ([`tool`]) and is checked
//!      against the real names; answers are cached by their input's hash.
//! 4.   Diagrams are drawn from the graph ([`agent_wiki::diagrams`]).
//! 5.   Pages: Appendix D's layout, with the static security engine's
//!      chapter ([`security`]).
//! 6.   Files in the chosen format, only the changed ones rewritten, with
//!      the state for the next `--incremental` run ([`agent_wiki::state`]).

mod analyzer;
mod model;
mod sections;
mod security;
mod select;
mod tasks;
mod test_run;
mod tool;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use agent_wiki::answer::Known;
use agent_wiki::diagrams::Hints;
use agent_wiki::pages::{self, Prose};
use agent_wiki::state::{self, State};
use agent_wiki::{DiagramFormat, WikiDepth, WikiFormat, formats, project};
use anyhow::{Context, Result};
use clap::Args;

use crate::app::App;
use crate::assembly::provider_for;
use crate::cli::{HeadlessModelArgs, UsageError, exit};

/// `agent wiki --help`'s epilogue.
pub const AFTER_HELP: &str = concat!(
    "Depths: quick — a model summary per module; standard — also the synthesis pages ",
    "(architecture, data flow, key abstractions, design patterns, improvements, performance); ",
    "deep — also a deep-dive into the most imported modules. --no-llm writes the structural wiki ",
    "(every page, diagram and table from the code; no model prose), labelled as such.\n\n",
    "Every answer of the model is checked: a definition, path or module it names that does not ",
    "exist rejects the answer; an edge or module it names for a diagram that the imports do not ",
    "show is dropped. Diagrams are drawn from the import graph only.\n\n",
    "Incremental: the output directory keeps .wiki-state.json (module hashes, the model's answers ",
    "by input hash). When it exists, unchanged modules are not asked again and unchanged pages are ",
    "not rewritten; --full ignores it.\n\n",
    "Exit codes: 0 written · 1 a failure (unreadable project, unwritable output) · 2 usage error · ",
    "3 the model provider failed or none is configured (use --no-llm).\n\n",
    "--test-report runs the project's tests through core-tools' exec: grant each runner, e.g. ",
    "--allow core-tools/shell:exec:cargo (shell:exec:go, shell:exec:pytest, shell:exec:npm); a ",
    "runner without its grant is listed as not run on the page.\n\n",
    "--skills NAME|DIR: only these skills contribute (sections, diagrams, analyzers, classifiers, ",
    "hooks); without it every loaded skill does."
);

/// `agent wiki`.
#[derive(Debug, Args)]
pub struct WikiArgs {
    /// The project (default: the current directory).
    pub path: Option<PathBuf>,
    /// Where the wiki goes (default: config `wiki.output`, else
    /// `docs/wiki` in the project).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// raw-md, mkdocs, hugo or docusaurus (default: config `wiki.format`,
    /// else raw-md).
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// mermaid, d2 or dot (default: config `wiki.diagrams`, else mermaid).
    #[arg(long, value_name = "FORMAT")]
    pub diagrams: Option<String>,
    /// quick, standard or deep (default: config `wiki.depth`, else
    /// standard).
    #[arg(long, value_name = "DEPTH")]
    pub depth: Option<String>,
    /// Run the project's tests (cargo, go, pytest, npm: each needs its
    /// grant, e.g. `--allow core-tools/shell:exec:cargo`) and write
    /// testing/test-execution.md from their results.
    #[arg(long)]
    pub test_report: bool,
    /// Use the last run's state: unchanged modules are not asked again
    /// (the default when the state exists).
    #[arg(long, conflicts_with = "full")]
    pub incremental: bool,
    /// Ignore the last run's state: everything is analysed again.
    #[arg(long)]
    pub full: bool,
    /// The most model requests (default: config `wiki.max_llm_calls`,
    /// else 60).
    #[arg(long, value_name = "N")]
    pub max_llm_calls: Option<u32>,
    /// No model: the structural wiki only.
    #[arg(long, conflicts_with = "max_llm_calls")]
    pub no_llm: bool,
    /// Which model to talk to (`--max-turns` is per section).
    #[command(flatten)]
    pub model: HeadlessModelArgs,
}

/// The grants the wiki gives itself: the static security scan reads the
/// project.
const WIKI_GRANTS: &[&str] = &["security-base/file:read"];

fn usage(m: impl Into<String>) -> anyhow::Error {
    UsageError(m.into()).into()
}

fn choice<T: Copy>(
    flag: &str,
    given: Option<&str>,
    default: T,
    names: &[&str],
    parse: fn(&str) -> Option<T>,
) -> Result<T> {
    match given {
        None => Ok(default),
        Some(v) => parse(v)
            .ok_or_else(|| usage(format!("{flag} {v}: expected one of {}", names.join(", ")))),
    }
}

/// The resolved options.
struct Options {
    root: PathBuf,
    output: PathBuf,
    format: WikiFormat,
    diagrams: DiagramFormat,
    depth: WikiDepth,
    budget: usize,
}

fn options(app: &mut App, args: &WikiArgs) -> Result<Options> {
    let config = app.config()?;
    let w = &config.wiki;
    let root = match &args.path {
        Some(p) => p.clone(),
        None => app.project_root.clone(),
    };
    if !root.is_dir() {
        return Err(usage(format!("{}: not a directory", root.display())));
    }
    let root = root
        .canonicalize()
        .with_context(|| format!("{}", root.display()))?;
    let output = match &args.output {
        Some(o) => std::env::current_dir().map_or_else(|_| o.clone(), |d| d.join(o)),
        None => root.join(&w.output),
    };
    let budget = args.max_llm_calls.unwrap_or(w.max_llm_calls);
    if budget == 0 {
        return Err(usage("--max-llm-calls must be at least 1"));
    }
    Ok(Options {
        root,
        output,
        format: choice(
            "--format",
            args.format.as_deref(),
            w.format,
            WikiFormat::NAMES,
            WikiFormat::parse,
        )?,
        diagrams: choice(
            "--diagrams",
            args.diagrams.as_deref(),
            w.diagrams,
            DiagramFormat::NAMES,
            DiagramFormat::parse,
        )?,
        depth: choice(
            "--depth",
            args.depth.as_deref(),
            w.depth,
            WikiDepth::NAMES,
            WikiDepth::parse,
        )?,
        budget: budget as usize,
    })
}

/// What the model wrote, and what it cost.
struct Written {
    prose: Prose,
    spent: model::Spent,
    answers: std::collections::BTreeMap<String, serde_json::Value>,
    dropped: Vec<String>,
}

/// Stage 3: every section the depth asks for.
fn ask_all(
    app: &mut App,
    args: &WikiArgs,
    provider: (Arc<dyn agent_providers::Provider>, String, String),
    opts: &Options,
    project: &project::Project,
    cache: std::collections::BTreeMap<String, serde_json::Value>,
    progress: bool,
) -> Result<std::result::Result<Written, String>> {
    let known = Arc::new(Known::of(project));
    let mut asker = model::Asker::new(
        app,
        args.model.provider_args.clone(),
        provider,
        opts.budget,
        known,
        cache,
    );
    asker.progress = progress;
    let mut prose = Prose {
        model: true,
        ..Prose::default()
    };
    let mut hints = Hints::default();
    let take = |hints: &mut Hints, a: &agent_wiki::answer::Answer| {
        for (f, t, l) in &a.relations {
            hints.edge_labels.insert((f.clone(), t.clone()), l.clone());
        }
        for (m, g) in &a.groups {
            hints.groups.insert(m.clone(), g.clone());
        }
    };
    let (synthesis, deep) = tasks::stages(opts.depth);
    let result = (|| -> Result<std::result::Result<(), String>> {
        for t in tasks::summaries(project) {
            match asker.ask(&t)? {
                Err(e) => return Ok(Err(e)),
                Ok(Some(a)) => {
                    take(&mut hints, &a);
                    let name = t.section.trim_start_matches("summary:").to_string();
                    prose.summaries.insert(name, a.text);
                }
                Ok(None) => {}
            }
        }
        if synthesis {
            let summaries = prose.summaries.clone();
            for t in tasks::synthesis(project, &|m| summaries.get(m).cloned()) {
                match asker.ask(&t)? {
                    Err(e) => return Ok(Err(e)),
                    Ok(Some(a)) => {
                        take(&mut hints, &a);
                        prose.sections.insert(t.section.clone(), a.text);
                    }
                    Ok(None) => {}
                }
            }
        }
        if deep {
            for t in tasks::deep_dives(project) {
                match asker.ask(&t)? {
                    Err(e) => return Ok(Err(e)),
                    Ok(Some(a)) => {
                        let name = t.section.trim_start_matches("deep-dive:").to_string();
                        prose.deep_dives.insert(name, a.text);
                    }
                    Ok(None) => {}
                }
            }
        }
        Ok(Ok(()))
    })();
    asker.close();
    if let Err(e) = result? {
        return Ok(Err(e));
    }
    let (hints, dropped) = hints.checked(&project.graph);
    prose.hints = hints;
    Ok(Ok(Written {
        prose,
        spent: asker.spent.clone(),
        answers: std::mem::take(&mut asker.answers),
        dropped,
    }))
}

fn stage(progress: bool, what: &str) {
    if progress {
        eprintln!("wiki: {what}");
    }
}

/// Diagram blocks in the pages.
fn diagrams_in(pages: &[pages::Page], format: DiagramFormat) -> usize {
    let fence = format!("```{}", agent_wiki::diagrams::fence(format));
    pages.iter().map(|p| p.body.matches(&fence).count()).sum()
}

pub async fn run(app: &mut App, args: WikiArgs) -> Result<u8> {
    let started = Instant::now();
    app.interactive = false;
    let opts = options(app, &args)?;
    args.model.timeout()?;
    let progress = std::io::stderr().is_terminal();
    app.project_root = opts.root.clone();
    app.global
        .allow
        .extend(WIKI_GRANTS.iter().map(|g| (*g).to_string()));
    let config = app.config()?;
    let skills = app.load_all()?;
    let selection = select::Selection::of(app, &skills)?;
    let provider = if args.no_llm {
        None
    } else {
        match provider_for(&args.model.provider_args, &config) {
            Ok(p) => Some(p),
            Err(e) => {
                eprintln!(
                    "error: provider: {e}\nThe wiki's prose needs a model; configure one (docs/providers.md), or run `agent wiki --no-llm` for the structural wiki."
                );
                return Ok(exit::PROVIDER);
            }
        }
    };

    stage(progress, "scanning the project (tree-sitter)");
    let skip = opts.output.canonicalize().ok();
    let classifiers = selection.classifiers(&skills)?;
    let project = project::analyse_with(&opts.root, skip.as_deref(), &classifiers)
        .with_context(|| format!("reading {}", opts.root.display()))?;
    stage(
        progress,
        &format!(
            "{} files, {} modules, {} import edges",
            project.scans.len(),
            project.modules.len(),
            project.graph.edges.len()
        ),
    );
    let previous = if args.full {
        None
    } else {
        State::load(&opts.output).map_err(anyhow::Error::msg)?
    };

    let written = match provider {
        None => Written {
            prose: Prose::default(),
            spent: model::Spent::default(),
            answers: Default::default(),
            dropped: Vec::new(),
        },
        Some(provider) => {
            stage(
                progress,
                &format!(
                    "asking the model (depth {}, at most {} requests)",
                    opts.depth.as_str(),
                    opts.budget
                ),
            );
            let cache = previous
                .as_ref()
                .map(|s| s.answers.clone())
                .unwrap_or_default();
            match ask_all(app, &args, provider, &opts, &project, cache, progress)? {
                Ok(w) => w,
                Err(provider_error) => {
                    eprintln!("error: {provider_error}");
                    return Ok(exit::PROVIDER);
                }
            }
        }
    };

    stage(progress, "the security chapter (static engine)");
    let report = security::audit(app, &selection)?;
    stage(progress, "pages and diagrams");
    let mut all = pages::build(&project, &written.prose, opts.diagrams);
    all.extend(security::pages(&report));
    let module_dirs: Vec<(String, PathBuf)> = project
        .modules
        .iter()
        .map(|m| (m.name.clone(), PathBuf::from(&m.dir)))
        .collect();
    let mut extra: Vec<(pages::Page, Option<String>)> = Vec::new();
    if args.test_report {
        stage(progress, "running the tests (--test-report)");
        let ran = test_run::run(app, &opts.root).await?;
        for p in &ran.problems {
            eprintln!("warning: test report: {p}");
        }
        extra.push((test_run::page(&ran, &module_dirs), None));
    }
    let languages: Vec<String> = project
        .scans
        .values()
        .filter_map(|s| s.language.clone())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let (contributed, warnings) = sections::contributed(
        app,
        &selection.of_skills(&skills),
        &project.name,
        module_dirs,
        languages,
    )
    .await?;
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    extra.extend(contributed);
    if !extra.is_empty()
        && let Some(index) = all.iter_mut().find(|p| p.path == "_index.md")
    {
        index.body.push_str("\n## More\n\n");
        for (p, _) in &extra {
            index
                .body
                .push_str(&format!("- {}\n", pages::link(&p.title, &p.path)));
        }
    }
    let mut owned: Vec<(pages::Page, Option<String>)> =
        all.into_iter().map(|p| (p, None)).collect();
    owned.extend(extra);
    let (all, problems) = sections::through_hooks(app, &selection, owned).await?;
    for p in &problems {
        eprintln!("warning: {p}");
    }
    let files = formats::render(opts.format, &project.name, &all);
    let new_state = State {
        modules: project.hashes.clone(),
        answers: written.answers.clone(),
        ..State::default()
    };
    std::fs::create_dir_all(&opts.output)
        .with_context(|| format!("creating {}", opts.output.display()))?;
    let out = state::write(&opts.output, &files, previous.as_ref(), new_state)
        .map_err(anyhow::Error::msg)?;

    let changed_modules = match &previous {
        Some(p) => project
            .hashes
            .iter()
            .filter(|(m, h)| p.modules.get(*m) != Some(*h))
            .count(),
        None => project.modules.len(),
    };
    let s = &written.spent;
    println!(
        "wiki: {} pages ({} written, {} unchanged, {} removed), {} diagrams, format {}, in {}",
        all.len(),
        out.changed.len(),
        out.unchanged,
        out.removed.len(),
        diagrams_in(&all, opts.diagrams),
        opts.format.as_str(),
        opts.output.display()
    );
    println!(
        "modules: {} ({} changed since the last run); model: {}",
        project.modules.len(),
        changed_modules,
        if written.prose.model {
            format!(
                "{} requests made, {} sections from the cache, {} over budget, {} without a valid answer, {} answers rejected, {} diagram hints dropped; tokens {} in, {} out",
                s.model_calls,
                s.cached,
                s.over_budget,
                s.unanswered,
                s.rejected,
                written.dropped.len(),
                s.input_tokens,
                s.output_tokens
            )
        } else {
            "none (--no-llm: structural wiki)".to_string()
        }
    );
    for d in &written.dropped {
        println!("dropped: {d}");
    }
    println!("time: {:.1}s", started.elapsed().as_secs_f64());
    Ok(exit::OK)
}

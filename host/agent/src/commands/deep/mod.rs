//! `agent security-audit --deep` (or config `security.enable_llm_analysis`):
//! the security engine's second, model-backed phase, after the static pass.
//!
//! 1. Every file the walk keeps is scored by risk ([`agent_deep::risk`]),
//!    with the static findings and the recent churn (read through the
//!    built-in git skill, [`history`]).
//! 2. The ranked files are packed into batches and each batch gets the
//!    three analyses (auth flow, taint, business logic) in turn, highest
//!    risk first, until `max_llm_calls` model requests are spent
//!    ([`session`]); the `security-deep` skill holds the instructions.
//! 3. The model reports through `report_finding` ([`tool`]) into an
//!    [`Intake`]: validated, anchored to real files and lines, deduplicated
//!    against the static findings, counted.
//! 4. Everything sent to the model is redacted
//!    ([`agent_deep::redact::RedactingProvider`]).
//! 5. Static and model findings are joined into attack chains
//!    ([`agent_deep::chains`]); the report writers add the deep sections
//!    ([`agent_deep::report`]).

mod history;
mod session;
mod tool;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_deep::chains;
use agent_deep::plan;
use agent_deep::redact::{RedactingProvider, Redactor};
use agent_deep::report::{Deep, Summary};
use agent_deep::risk::{self, Context, FileRisk};
use agent_findings::{Anchor, Intake};
use agent_providers::Provider;
use agent_runtime::Skill;
use agent_security::walk::{WalkOptions, read_text, walk};
use agent_security::{AuditReport, Finding};
use anyhow::{Context as _, Result};

use crate::app::App;
use crate::assembly::provider_for;
use crate::cli::{SecurityAuditArgs, UsageError};

/// The grants a deep analysis gives itself (`[SKILL/]PERM[:SCOPE]`, as
/// `--allow`): the git skill's history for the churn signal, the read
/// tools' project files.
pub const DEEP_GRANTS: &[&str] = &["git/git:read", "core-tools/file:read"];

/// Files the ranking shows in the reports.
pub const RANKING_SHOWN: usize = 20;

/// Files the batches take at most.
pub const MAX_FILES: usize = 400;

/// Whether the deep analysis runs: `--deep`, or the config.
pub fn enabled(args: &SecurityAuditArgs, config: &agent_config::Config) -> bool {
    args.deep || config.security.enable_llm_analysis
}

/// Checked before the static pass: the budget, the provider and its key.
pub struct Prepared {
    budget: usize,
    provider: (Arc<dyn Provider>, String, String),
}

/// The budget and the provider; `Ok(Err(message))` when the provider cannot
/// be used (no key: the same message as `agent run`, exit 3).
///
/// # Errors
/// `--max-llm-calls 0`.
pub fn prepare(
    app: &mut App,
    args: &SecurityAuditArgs,
    root: &Path,
) -> Result<std::result::Result<Prepared, String>> {
    let config = app.config()?;
    // The model's read tools and the findings' paths are relative to the
    // audited directory: it is the project of the analysis' sessions.
    let same = match (root.canonicalize(), app.project_root.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if !same {
        app.project_root = root.to_path_buf();
    }
    let budget = args.max_llm_calls.unwrap_or(config.security.max_llm_calls);
    if budget == 0 {
        return Err(UsageError("--max-llm-calls must be at least 1".into()).into());
    }
    app.interactive = false;
    app.global
        .allow
        .extend(DEEP_GRANTS.iter().map(|g| (*g).to_string()));
    match provider_for(&args.provider_args, &config) {
        Ok(provider) => Ok(Ok(Prepared {
            budget: budget as usize,
            provider,
        })),
        Err(e) => Ok(Err(format!("provider: {e}"))),
    }
}

/// The project's text files, as the static pass walks them (the ignore files
/// and `.security.yaml`'s `allowlist.paths` keep the same files out).
fn texts(root: &Path, max_file_bytes: u64) -> Result<BTreeMap<String, String>> {
    let allowlist = match agent_security::SecurityConfig::load_project(root)? {
        Some(config) => agent_security::paths::PathPatterns::new(&config.allowlist.paths)
            .context("`.security.yaml` allowlist.paths")?,
        None => agent_security::paths::PathPatterns::default(),
    };
    let walked = walk(
        root,
        &WalkOptions {
            max_file_bytes,
            only: None,
            allowlist,
        },
    )
    .with_context(|| format!("walking {}", root.display()))?;
    let mut out = BTreeMap::new();
    for f in walked.files {
        if let Ok(Some(t)) = read_text(&f.abs, max_file_bytes) {
            out.insert(f.path, t);
        }
    }
    Ok(out)
}

/// The first message of a conversation: the analysis, why the files were
/// chosen, their static findings, the files.
fn task(
    n: usize,
    analysis: usize,
    batch: &plan::Batch,
    ranked: &[FileRisk],
    statics: &[Finding],
) -> String {
    let (id, what) = agent_deep::ANALYSES[analysis];
    let mut t = format!(
        "Deep security analysis, conversation {}: analysis `{id}`.\n{what}\n\nFiles, highest \
         risk first, and why they were chosen:\n",
        n + 1
    );
    for f in &batch.files {
        if let Some(r) = ranked.iter().find(|r| &r.file == f) {
            let why: Vec<String> = r
                .reasons
                .iter()
                .map(|x| format!("{} +{}", x.signal, x.points))
                .collect();
            t.push_str(&format!(
                "- `{f}` (score {}): {}\n",
                r.score,
                why.join(", ")
            ));
        }
    }
    t.push_str(
        "\nStatic findings on these files (do not report them again; name them in `related` \
         by id):\n",
    );
    let mut any = false;
    for s in statics
        .iter()
        .filter(|s| batch.files.contains(&s.location.file))
    {
        any = true;
        t.push_str(&format!(
            "- `{}` {} ({}) {}:{} — {}\n",
            s.id,
            s.rule_id,
            s.severity.as_str(),
            s.location.file,
            s.location.start_line,
            s.title
        ));
    }
    if !any {
        t.push_str("- none\n");
    }
    t.push('\n');
    t.push_str(&batch.text);
    t.push_str(&format!(
        "Do the `{id}` analysis with its checklist and report each vulnerability with \
         `report_finding`; then answer with one sentence."
    ));
    t
}

/// Runs the deep analysis on `report` (the static pass's) and adds the
/// model's findings to it. `Ok(Err(message))`: the provider failed (exit 3).
///
/// # Errors
/// The project cannot be walked, a session cannot be assembled.
pub async fn run(
    app: &mut App,
    args: &SecurityAuditArgs,
    prepared: Prepared,
    skills: &Arc<Vec<Skill>>,
    root: &Path,
    report: &mut AuditReport,
) -> Result<std::result::Result<Deep, String>> {
    let config = app.config()?;
    let max_bytes = args
        .max_file_size
        .unwrap_or(agent_security::walk::DEFAULT_MAX_FILE_BYTES);
    let texts = Arc::new(texts(root, max_bytes)?);
    let statics = report.findings.clone();

    // 1. Risk.
    let mut context = Context::new(&statics);
    let runtime = app.runtime()?.clone();
    let ctx = app.call_context("security-audit")?;
    match history::churn(&runtime, &ctx, skills).await {
        Ok((churn, commits)) => {
            context.churn = churn;
            context.commits_read = commits;
        }
        Err(why) if app.global.verbose => eprintln!("deep analysis: no churn signal: {why}"),
        Err(_) => {}
    }
    let ranked = risk::rank(
        texts.iter().map(|(p, t)| (p.as_str(), t.as_str())),
        &context,
    );
    if app.global.verbose {
        for r in ranked.iter().take(RANKING_SHOWN) {
            eprintln!("risk {:>4} {}", r.score, r.file);
        }
    }

    // 2. The work, within the budget.
    let read = {
        let texts = texts.clone();
        move |p: &str| texts.get(p).cloned()
    };
    let budget_chars = usize::try_from(config.agent.context_budget)
        .unwrap_or(usize::MAX)
        .saturating_mul(2)
        .clamp(4_000, 48_000);
    let batches = plan::batches(&ranked, &read, budget_chars, MAX_FILES);
    let items = plan::items(batches.len());

    // 3. What the model reports.
    let mut intake = Intake::new("security-deep/model", Anchor::default(), Box::new(read));
    intake.known(&statics);
    let intake = Arc::new(Mutex::new(intake));

    // 4. Redaction of everything sent.
    let mut redactor = Redactor::new();
    redactor.add_findings(&statics, &|p| texts.get(p).cloned());
    let secrets_redacted = redactor.known();
    let (inner, name, model) = prepared.provider;
    let provider: (Arc<dyn Provider>, String, String) = (
        Arc::new(RedactingProvider::new(inner, Arc::new(redactor))),
        name,
        model,
    );

    let make_task = |n: usize, item: plan::Item| {
        task(n, item.analysis, &batches[item.batch], &ranked, &statics)
    };
    let spent = if items.is_empty() {
        session::Spent::default()
    } else {
        match session::analyse(
            app,
            &args.provider_args,
            &provider,
            prepared.budget,
            &session::Work {
                items: &items,
                task: &make_task,
            },
            intake.clone(),
        )? {
            Ok(s) => s,
            Err(provider_error) => return Ok(Err(provider_error)),
        }
    };
    let (found, counts) = {
        let taken = intake
            .lock()
            .map_err(|_| anyhow::anyhow!("the deep analysis' findings' lock was poisoned"))?;
        (taken.findings().to_vec(), taken.counts())
    };

    // 5. Chains over every finding.
    report.findings.extend(found);
    let routes: BTreeMap<String, u32> = ranked
        .iter()
        .filter_map(|r| r.first_line("route").map(|l| (r.file.clone(), l)))
        .collect();
    let chains = chains::correlate(&report.findings, &routes);
    chains::mark(&mut report.findings, &chains);
    agent_security::sort_findings(&mut report.findings);
    report.judge();

    let analysed: usize = spent.batches.iter().map(|b| batches[*b].files.len()).sum();
    Ok(Ok(Deep {
        summary: Summary {
            budget: u32::try_from(prepared.budget).unwrap_or(u32::MAX),
            model_calls: spent.model_calls,
            conversations: spent.conversations,
            input_tokens: spent.input_tokens,
            output_tokens: spent.output_tokens,
            files_ranked: ranked.len(),
            files_analysed: analysed,
            files_skipped: ranked.len().saturating_sub(analysed),
            batches: batches.len(),
            commits_read: context.commits_read,
            secrets_redacted,
            reported: counts,
        },
        ranking: ranked.into_iter().take(RANKING_SHOWN).collect(),
        chains,
    }))
}

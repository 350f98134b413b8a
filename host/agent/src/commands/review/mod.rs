//! `agent review` (and `agent run --mode code-review`): a change reviewed
//! in one pass.
//!
//! 1. The diff and the new version of each changed file come from the
//!    built-in `code-review` skill's `collect-diff` workflow, which asks the
//!    built-in `git` skill (`git_diff`, `git_show`) — through the router,
//!    the grants and the audit log like any skill call; the host runs no git
//!    of its own.
//! 2. The static scanners run on the changed files, their findings kept on
//!    the added lines (`--scope diff`, with the lines from step 1).
//! 3. Each chunk of the diff (hunks with their enclosing function or class
//!    and the file's imports, [`agent_findings::chunks`]) is one model turn
//!    of a headless session with read-only tools; the model reports
//!    findings with the `report_finding` host tool, whose input goes
//!    through [`agent_findings::Intake`] (validated, anchored to the added
//!    lines, deduplicated against step 2, counted).
//! 4. One report — the security engine's writers, or a GitHub review body —
//!    and exit 1 at the `--fail-on` / `--max-findings` threshold.

mod args;
mod collect;
mod model;
mod output;
mod tool;

use std::sync::{Arc, Mutex};

use agent_findings::{Anchor, ChunkOptions, FileView, Intake, chunks, parse_patch, patch};
use agent_security::{AuditOptions, Scope, Severity, Thresholds};
use anyhow::{Context, Result};

use crate::app::App;
use crate::cli::{UsageError, exit};

pub use args::{ReviewArgs, ReviewFlags, ReviewOutput};

/// `agent review --help`'s epilogue.
pub const AFTER_HELP: &str = concat!(
    "What is reviewed: --diff A..B (the commits between two revisions), --staged (HEAD to the ",
    "index), --base BRANCH (BRANCH...HEAD: the branch's own changes); none of them: the working ",
    "tree's changes against HEAD.\n\n",
    "The review grants itself what reading the change needs, for this run only (and audited): ",
    "git:read to the git skill, skill:invoke:git and file:read to the code-review skill, ",
    "file:read to core-tools and security-base. The model gets read-only tools (read_file, ",
    "list_dir, search, git_diff, git_log, git_show) and report_finding.\n\n",
    "Findings the model reports on lines the change did not add are dropped (kept, marked ",
    "`context`, with --context-findings); see docs/review.md for every rule and count.\n\n",
    "Exit codes: 0 below the thresholds · 1 a finding at or above --fail-on (default high), more ",
    "than --max-findings, or an unreadable path · 2 usage error · 3 the model provider failed."
);

/// The grants a review gives itself (`[SKILL/]PERM[:SCOPE]`, as `--allow`).
const REVIEW_GRANTS: &[&str] = &[
    "git/git:read",
    "code-review/skill:invoke:git",
    "code-review/file:read",
    "core-tools/file:read",
    "security-base/file:read",
];

/// The most model turns per chunk when `--max-turns` is not given: one to
/// report, a few to read around.
const DEFAULT_TURNS_PER_CHUNK: u32 = 4;

/// Chunks of the diff reviewed at once when `--jobs` is not given.
const DEFAULT_JOBS: usize = 4;

fn usage(m: impl Into<String>) -> anyhow::Error {
    UsageError(m.into()).into()
}

/// What to review, as the `collect-diff` workflow takes it, and the scope's
/// two revisions as reports name them.
fn target(flags: &ReviewFlags) -> Result<(serde_json::Value, String, String)> {
    if let Some(d) = &flags.diff {
        let (a, b) = d
            .split_once("..")
            .map(|(a, b)| (a.trim(), b.trim()))
            .filter(|(a, b)| !a.is_empty() && !b.is_empty() && !b.starts_with('.'))
            .ok_or_else(|| usage(format!("--diff {d}: expected two revisions, A..B")))?;
        for rev in [a, b] {
            if rev.starts_with('-') {
                return Err(usage(format!("--diff {d}: `{rev}` is not a revision")));
            }
        }
        return Ok((
            serde_json::json!({"base": a, "head": b}),
            a.to_string(),
            b.to_string(),
        ));
    }
    if flags.staged {
        return Ok((
            serde_json::json!({"staged": true}),
            "HEAD".into(),
            "index".into(),
        ));
    }
    if let Some(branch) = &flags.base {
        if branch.is_empty() || branch.starts_with('-') {
            return Err(usage(format!("--base {branch}: not a branch name")));
        }
        return Ok((
            serde_json::json!({"merge_base": branch}),
            format!("{branch}..."),
            "HEAD".into(),
        ));
    }
    Ok((
        serde_json::json!({"base": "HEAD"}),
        "HEAD".into(),
        "working tree".into(),
    ))
}

/// `--fail-on`: `Some(None)` for `none`.
fn fail_on(flags: &ReviewFlags) -> Result<Option<Option<Severity>>> {
    match flags.fail_on.as_deref() {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("none") || v.eq_ignore_ascii_case("never") => {
            Ok(Some(None))
        }
        Some(v) => v
            .parse::<Severity>()
            .map(|s| Some(Some(s)))
            .map_err(|e| usage(format!("--fail-on: {e}, or none"))),
    }
}

pub async fn run(app: &mut App, args: ReviewArgs) -> Result<u8> {
    app.interactive = false;
    let (input, base, head) = target(&args.flags)?;
    let fail_on = fail_on(&args.flags)?;
    args.model.max_turns_or(DEFAULT_TURNS_PER_CHUNK)?;
    args.model.timeout()?;
    if args.flags.jobs == Some(0) {
        return Err(usage("--jobs must be at least 1"));
    }
    app.global
        .allow
        .extend(REVIEW_GRANTS.iter().map(|g| (*g).to_string()));
    let config = app.config()?;

    // 1. The diff, through the code-review and git skills.
    let skills = Arc::new(app.load_all()?);
    let collected = collect::collect(app, &skills, &args.model.provider_args, &input).await?;
    let files = parse_patch(&collected.patch);
    let scope = patch::scope(&files);
    let added: usize = files.iter().map(|f| f.added_count()).sum();

    // 2. The static scanners on the added lines.
    let mut opts = AuditOptions::new(&app.project_root);
    opts.scope = Scope::Diff {
        base: base.clone(),
        head: head.clone(),
    };
    opts.diff_lines = Some(scope.clone());
    opts.fail_on = fail_on.flatten();
    opts.config_fail_on = config.security.fail_on.as_str().parse::<Severity>().ok();
    opts.max_findings = args.flags.max_findings;
    let custom = &config.security.custom_rules;
    opts.rules_file = (custom != std::path::Path::new(agent_security::SECURITY_FILE))
        .then(|| app.project_root.join(custom));
    let sec = &config.security;
    opts.caps = agent_security::FindingCaps {
        per_file_rule: sec.max_findings_per_file_rule as usize,
        per_rule: sec.max_findings_per_rule as usize,
        total: sec.max_findings_total as usize,
    };
    let ctx = app.call_context("security-audit")?;
    let runtime = app.runtime()?.clone();
    let result = std::thread::scope(|s| {
        s.spawn(|| agent_security::audit(&runtime, &ctx, &skills, &opts, &|_, _| {}))
            .join()
    });
    let mut report = match result {
        Ok(r) => r.context("the static scanners on the changed lines")?,
        Err(_) => anyhow::bail!("the static scanners panicked"),
    };

    // 3. The model, chunk by chunk, reporting through report_finding.
    let texts = collected.files.clone();
    let mut intake = Intake::new(
        "code-review/model",
        Anchor {
            diff: Some(scope),
            context_findings: args.flags.context_findings,
        },
        Box::new(move |p: &str| texts.get(p).cloned()),
    );
    intake.known(&report.findings);
    let views: Vec<FileView> = files
        .iter()
        .map(|p| FileView {
            patch: p,
            text: collected.files.get(&p.path).map(String::as_str),
        })
        .collect();
    let budget = usize::try_from(config.agent.context_budget)
        .unwrap_or(usize::MAX)
        .saturating_mul(2)
        .clamp(4_000, 48_000);
    let chunked = chunks(
        &views,
        &ChunkOptions {
            budget_chars: budget,
            ..ChunkOptions::default()
        },
    );
    let intake = Arc::new(Mutex::new(intake));
    let spent = if chunked.is_empty() {
        model::Spent::default()
    } else {
        match model::review(app, &args, &chunked, intake.clone())? {
            Ok(spent) => spent,
            Err(provider_error) => {
                eprintln!("error: {provider_error}");
                return Ok(exit::PROVIDER);
            }
        }
    };
    let (found, counts) = {
        let taken = intake
            .lock()
            .map_err(|_| anyhow::anyhow!("the review's findings' lock was poisoned"))?;
        (taken.findings().to_vec(), taken.counts())
    };

    // 4. One report.
    report.findings.extend(found);
    agent_security::sort_findings(&mut report.findings);
    if fail_on == Some(None) {
        report.thresholds = Thresholds {
            fail_on: None,
            max_findings: report.thresholds.max_findings,
        };
    }
    report.judge();
    let summary = output::Summary {
        base,
        head,
        files: files.iter().filter(|f| !f.deleted).count(),
        added_lines: added,
        chunks: chunked.len(),
        spent,
        counts,
        missing: collected.missing,
    };
    output::write(args.output, args.out.as_deref(), &report, &summary)?;
    eprintln!("{}", summary.line(&report));
    app.report_denials();
    Ok(if report.verdict.failed {
        exit::FAILURE
    } else {
        exit::OK
    })
}

//! `agent security-audit`: the security engine from the command line.
//!
//! Flags are checked first (exit 2 on a bad value), then the rule files
//! (`.security.yaml`, skills' rules files: exit 2 naming file, line and
//! field), then the audit runs on its own threads (outside the async
//! runtime), with a progress bar when stderr is a terminal. The report goes
//! to stdout or `--out`, a summary table to stderr; exit 1 when the verdict
//! fails — a threshold passed, or a directory or file that could not be
//! read (the audit is incomplete).

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use std::sync::Arc;

use agent_core::hooks::HookSet;
use agent_manifest::Permission;
use agent_runtime::inspect::ExportKind;
use agent_runtime::{CallContext, HookEvent, HookPhase, Runtime, Skill};
use agent_security::{AuditOptions, AuditReport, Format, Scope, Severity, Thresholds};
use anyhow::{Context, Result};

use crate::app::App;
use crate::cli::{SecurityAuditArgs, UsageError, exit};

/// The OSV API `--online` talks to (the grant's scope, when scoped).
const OSV_API: &str = "https://api.osv.dev";

/// What the flags asked for, validated.
struct Plan {
    format: Format,
    /// `Some(None)`: `--fail-on none`.
    fail_on: Option<Option<Severity>>,
    scope: Scope,
}

fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

fn parse_severity(flag: &str, value: &str) -> Result<Severity> {
    value.parse::<Severity>().map_err(|_| {
        usage(format!(
            "{flag} {value}: expected one of critical, high, medium, low, info"
        ))
    })
}

fn parse_diff(value: &str) -> Result<(String, String)> {
    let bad = || {
        usage(format!(
            "--diff {value}: expected BASE..HEAD (two revisions, e.g. HEAD~1..HEAD)"
        ))
    };
    if value.contains("...") {
        return Err(bad());
    }
    let (a, b) = value.split_once("..").ok_or_else(bad)?;
    let (a, b) = (a.trim(), b.trim());
    if a.is_empty() || b.is_empty() || b.contains("..") {
        return Err(bad());
    }
    Ok((a.to_string(), b.to_string()))
}

fn plan(args: &SecurityAuditArgs) -> Result<Plan> {
    let format: Format = args
        .output
        .parse()
        .map_err(|e: String| usage(format!("--output: {e}")))?;
    let fail_on = match args.fail_on.as_deref() {
        None => None,
        Some(v) if v.eq_ignore_ascii_case("none") || v.eq_ignore_ascii_case("never") => Some(None),
        Some(v) => Some(Some(parse_severity("--fail-on", v)?)),
    };
    let scope = match (args.scope.as_deref(), args.diff.as_deref()) {
        (None | Some("full"), None) => Scope::Full,
        (Some("full"), Some(_)) => {
            return Err(usage("--diff needs --scope diff (it was --scope full)"));
        }
        (None | Some("diff"), Some(d)) => {
            let (base, head) = parse_diff(d)?;
            Scope::Diff { base, head }
        }
        (Some("diff"), None) => return Err(usage("--scope diff needs --diff BASE..HEAD")),
        (Some(other), _) => {
            return Err(usage(format!("--scope {other}: expected `full` or `diff`")));
        }
    };
    if args.jobs == Some(0) {
        return Err(usage("-j/--jobs must be at least 1"));
    }
    if args.max_file_size == Some(0) {
        return Err(usage("--max-file-size must be at least 1"));
    }
    Ok(Plan {
        format,
        fail_on,
        scope,
    })
}

/// `--online` needs net:fetch granted — unscoped, or scoped to the API's
/// origin (`https://api.osv.dev`) — to every skill or to the pseudo-skill
/// `security`; the OSV API is never asked otherwise.
fn online_granted(app: &App, api_base: Option<&str>) -> Result<bool> {
    let allow = app.allowlist()?;
    let url = format!(
        "{}/v1/querybatch",
        api_base.unwrap_or(OSV_API).trim_end_matches('/')
    );
    Ok(allow.matches("security", Permission::NetFetch, Some(&url)))
}

/// Checks that both revisions exist, so a typo is a usage error (exit 2)
/// rather than an audit failure.
fn check_revisions(root: &Path, base: &str, head: &str) -> Result<()> {
    for rev in [base, head] {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("{rev}^{{commit}}"))
            .output()
            .context("running git (needed for --scope diff)")?;
        if !out.status.success() {
            return Err(usage(format!(
                "--diff {base}..{head}: `{rev}` is not a commit of the git repository at {}",
                root.display()
            )));
        }
    }
    Ok(())
}

/// A bar on stderr when it is a terminal; nothing otherwise.
struct Bar(Mutex<Option<indicatif::ProgressBar>>);

impl Bar {
    fn new() -> Bar {
        if !std::io::stderr().is_terminal() {
            return Bar(Mutex::new(None));
        }
        let b = indicatif::ProgressBar::new(0);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "scanning [{bar:30}] {pos}/{len} files {elapsed}",
        ) {
            b.set_style(style.progress_chars("=> "));
        }
        Bar(Mutex::new(Some(b)))
    }

    fn update(&self, done: usize, total: usize) {
        if let Ok(slot) = self.0.lock()
            && let Some(b) = slot.as_ref()
        {
            if b.length() != Some(total as u64) {
                // Drawn from the first report on (the total is known then).
                b.set_length(total as u64);
                b.enable_steady_tick(Duration::from_millis(200));
            }
            b.set_position(done as u64);
        }
    }

    fn finish(&self) {
        if let Ok(mut slot) = self.0.lock()
            && let Some(b) = slot.take()
        {
            b.finish_and_clear();
        }
    }
}

pub async fn run(app: &mut App, args: SecurityAuditArgs) -> Result<u8> {
    let plan = plan(&args)?;
    let root = args
        .path
        .clone()
        .unwrap_or_else(|| app.project_root.clone());
    if !root.is_dir() {
        return Err(usage(format!("{}: not a directory", root.display())));
    }
    if let Some(dir) = &args.osv
        && !dir.is_dir()
    {
        return Err(usage(format!("--osv {}: not a directory", dir.display())));
    }
    if args.online && !online_granted(app, args.osv_api.as_deref())? {
        return Err(usage(format!(
            "--online asks the OSV API ({}) and needs network access granted: \
             add --allow net:fetch (or --allow net:fetch:{}), or drop --online and \
             use --osv DIR",
            args.osv_api.as_deref().unwrap_or(OSV_API),
            args.osv_api.as_deref().unwrap_or(OSV_API)
        )));
    }
    if let Scope::Diff { base, head } = &plan.scope {
        check_revisions(&root, base, head)?;
    }

    let config = app.config()?;
    // The deep analysis is checked first: its budget, its provider and key
    // (the grants it gives itself must be in place before any skill runs).
    let deep = if super::deep::enabled(&args, &config) {
        match super::deep::prepare(app, &args, &root)? {
            Ok(p) => Some(p),
            Err(provider_error) => {
                eprintln!("error: {provider_error}");
                return Ok(exit::PROVIDER);
            }
        }
    } else {
        None
    };
    let config_fail_on = config.security.fail_on.as_str().parse::<Severity>().ok();
    let custom = &config.security.custom_rules;
    let rules_file =
        (custom != Path::new(agent_security::SECURITY_FILE)).then(|| root.join(custom));

    let mut opts = AuditOptions::new(&root);
    opts.scope = plan.scope.clone();
    opts.osv_dir = args.osv.clone();
    opts.online = args.online;
    opts.osv_api_base = args.osv_api.clone();
    opts.jobs = args.jobs.unwrap_or(0);
    if let Some(n) = args.max_file_size {
        opts.max_file_bytes = n;
    }
    opts.rules_file = rules_file;
    opts.fail_on = plan.fail_on.flatten();
    opts.config_fail_on = config_fail_on;
    opts.max_findings = args.max_findings;
    let sec = &config.security;
    opts.caps = agent_security::FindingCaps {
        per_file_rule: sec.max_findings_per_file_rule as usize,
        per_rule: sec.max_findings_per_rule as usize,
        total: sec.max_findings_total as usize,
    };

    let skills = Arc::new(app.load_all()?);
    opts.skills = app.explicit_skills(&skills);
    // Unknown --skills names and broken rule files are the user's to fix:
    // exit 2, with the file, line and field in the message.
    let selected = agent_security::select_skills(&skills, &opts.skills)
        .map_err(|e| usage(crate::error_chain::chain_line(&e)))?;
    agent_security::load_rules(&opts, &selected)
        .map_err(|e| usage(crate::error_chain::chain_line(&e)))?;
    if let Some(names) = &args.scanners {
        let names: Vec<String> = names.iter().map(|n| n.trim().to_string()).collect();
        opts.scanners = agent_security::ScannerFilter::new(&selected, &names)
            .map_err(|e| usage(crate::error_chain::chain_line(&e)))?;
    }

    let ctx = app.call_context("security-audit")?;
    let runtime = app.runtime()?.clone();
    let bar = Bar::new();
    let progress = |done: usize, total: usize| bar.update(done, total);
    // The engine drives the runtime on its own threads; keep it off the
    // async runtime's workers.
    let result = std::thread::scope(|s| {
        s.spawn(|| agent_security::audit(&runtime, &ctx, &skills, &opts, &progress))
            .join()
    });
    bar.finish();
    let mut report = match result {
        Ok(r) => r?,
        Err(_) => anyhow::bail!("the security audit panicked"),
    };
    let deep = match deep {
        Some(prepared) => {
            match super::deep::run(app, &args, prepared, &skills, &root, &mut report).await? {
                Ok(d) => Some(d),
                Err(provider_error) => {
                    eprintln!("error: {provider_error}");
                    return Ok(exit::PROVIDER);
                }
            }
        }
        None => None,
    };
    if plan.fail_on == Some(None) {
        // `--fail-on none`: only --max-findings (or ci.max_findings) can fail.
        report.thresholds = Thresholds {
            fail_on: None,
            max_findings: report.thresholds.max_findings,
        };
        report.judge();
    }

    let hook_problems = scan_complete_hooks(&runtime, &ctx, &skills, &selected, &report).await;

    match &args.out {
        Some(path) => {
            let mut file = std::fs::File::create(path)
                .with_context(|| format!("--out {}: creating the file", path.display()))?;
            match &deep {
                Some(d) => agent_deep::report::write(plan.format, &mut file, &report, d),
                None => agent_security::output::write(plan.format, &mut file, &report),
            }
            .with_context(|| format!("writing {}", path.display()))?;
            file.flush()?;
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            match &deep {
                Some(d) => agent_deep::report::write(plan.format, &mut lock, &report, d),
                None => agent_security::output::write(plan.format, &mut lock, &report),
            }
            .context("writing the report")?;
            lock.flush()?;
        }
    }
    summary(&report, app.global.verbose, args.out.as_deref());
    if let Some(d) = &deep {
        eprintln!("{}", d.summary.line());
        for c in &d.chains {
            eprintln!(
                "attack chain {} ({}): {}",
                c.id,
                c.severity.as_str(),
                c.title()
            );
        }
    }
    for p in &hook_problems {
        eprintln!("warning: {p}");
    }
    Ok(if report.verdict.failed {
        exit::FAILURE
    } else {
        exit::OK
    })
}

/// Hands the finished report to the `on_security_scan_complete` hooks of the
/// skills that took part in the audit, lowest priority first. Hooks observe
/// (post the findings somewhere, with their own grants); they cannot change
/// the report or the verdict. Returns the problems (a failing hook, fields a
/// hook returned that this phase ignores), each naming the skill.
async fn scan_complete_hooks(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
    selected: &[&Skill],
    report: &AuditReport,
) -> Vec<String> {
    let active: Vec<usize> = skills
        .iter()
        .enumerate()
        .filter(|(_, s)| selected.iter().any(|t| std::ptr::eq(*t, *s)))
        .filter(|(_, s)| s.exports(ExportKind::Hooks))
        .map(|(i, _)| i)
        .collect();
    if active.is_empty() {
        return Vec::new();
    }
    let (hooks, mut problems) = HookSet::load(runtime, ctx, skills, &active).await;
    if hooks.listens(HookPhase::OnSecurityScanComplete) {
        let event = HookEvent {
            phase: HookPhase::OnSecurityScanComplete,
            skill: String::new(),
            conversation: Vec::new(),
            tool_call: None,
            tool_result: None,
            response: None,
            findings: report.findings.iter().map(|f| f.to_wit()).collect(),
        };
        problems.extend(hooks.dispatch(runtime, ctx, skills, event).await.errors);
    }
    problems
}

/// The summary table on stderr.
fn summary(report: &AuditReport, verbose: bool, out: Option<&Path>) {
    let mut e = std::io::stderr().lock();
    // Every finding is counted, those the caps left out of the report too.
    let counts = report.all_counts();
    let _ = writeln!(e, "security audit of {}", report.root);
    let _ = writeln!(e, "  {:<10} {:>6}", "severity", "count");
    for (sev, n) in counts.iter().rev() {
        let _ = writeln!(e, "  {:<10} {:>6}", sev.as_str(), n);
    }
    let listed = if report.truncated.findings > 0 {
        format!(" ({} listed)", report.findings.len())
    } else {
        String::new()
    };
    let _ = writeln!(
        e,
        "  {:<10} {:>6}{listed}",
        "total",
        report.total_findings()
    );
    if let Some(t) = report.truncated.summary() {
        let _ = writeln!(e, "warning: {t}");
    }
    let s = &report.stats;
    let _ = writeln!(
        e,
        "files scanned {} · skipped {} · lines {} · lockfiles {} · packages {} · {} workers · {:.2}s",
        s.files_scanned,
        s.files_skipped,
        s.lines,
        s.lockfiles,
        report.packages.len(),
        s.workers,
        s.duration_ms as f64 / 1000.0
    );
    if let Some(x) = agent_security::exclude::summary(&s.excluded) {
        let _ = writeln!(e, "{x}");
    }
    if verbose {
        let _ = writeln!(
            e,
            "  {:<28} {:>7} {:>9} {:>7} {:>9}",
            "scanner", "files", "findings", "errors", "cpu ms"
        );
        for sc in &s.scanners {
            let _ = writeln!(
                e,
                "  {:<28} {:>7} {:>9} {:>7} {:>9}",
                sc.name, sc.files, sc.findings, sc.errors, sc.millis
            );
        }
    }
    const SHOWN: usize = 10;
    for err in report
        .errors
        .iter()
        .take(if verbose { usize::MAX } else { SHOWN })
    {
        if err.scanner == "walk" {
            let _ = writeln!(
                e,
                "error: not audited: {}: {}",
                err.file.as_deref().unwrap_or("."),
                err.message
            );
            continue;
        }
        let _ = writeln!(
            e,
            "warning: {}{}: {}",
            err.scanner,
            err.file
                .as_deref()
                .map(|f| format!(" on {f}"))
                .unwrap_or_default(),
            err.message
        );
    }
    if !verbose && report.errors.len() > SHOWN {
        let _ = writeln!(
            e,
            "warning: … and {} more scanner errors (-v lists them)",
            report.errors.len() - SHOWN
        );
    }
    if let Some(p) = out {
        let _ = writeln!(e, "report written to {}", p.display());
    }
    let t = &report.thresholds;
    let fail_on = t
        .fail_on
        .map_or("none".to_string(), |s| s.as_str().to_string());
    let max = t
        .max_findings
        .map_or(String::new(), |m| format!(", max findings {m}"));
    if report.verdict.incomplete {
        let _ = writeln!(
            e,
            "INCOMPLETE (fail on {fail_on}{max}): {}",
            report.verdict.reasons.join("; ")
        );
    } else if report.verdict.failed {
        let _ = writeln!(
            e,
            "FAILED (fail on {fail_on}{max}): {}",
            report.verdict.reasons.join("; ")
        );
    } else {
        let _ = writeln!(e, "passed (fail on {fail_on}{max})");
    }
}

#[cfg(test)]
mod tests {
    use super::parse_diff;

    #[test]
    fn diff_ranges() {
        assert_eq!(
            parse_diff("HEAD~1..HEAD").ok(),
            Some(("HEAD~1".into(), "HEAD".into()))
        );
        for bad in ["HEAD", "..HEAD", "A..", "A...B", "A..B..C"] {
            assert!(parse_diff(bad).is_err(), "{bad}");
        }
    }
}

//! Orchestration: walk, scanner skills in parallel (one instance per worker
//! per skill), declarative rules, dependency audit, then allowlist,
//! overrides, dedup, diff scope and the verdict.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_runtime::{
    CallContext, CallError, ExportKind, FileIntent, Origin, Runtime, ScanTarget, ScannerSpec,
    Skill, SkillInstance,
};
use anyhow::{Context, bail};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::config::SecurityConfig;
use crate::deps::{AdvisorySources, DependencyVulnerability, audit_dependencies};
use crate::diff::{DiffScope, diff_scope};
use crate::finding::{Finding, Severity};
use crate::limits::{Collector, FindingCaps, Truncated, rank_source};
use crate::only::ScannerFilter;
use crate::post::{Policy, Thresholds, Verdict, dedup, judge};
use crate::rules::RuleSet;
use crate::walk::{SkipReason, Skipped, Unreadable, WalkOptions, WalkedFile, read_text, walk};

/// Which files and lines are audited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Scope {
    /// Every file.
    #[default]
    Full,
    /// Files changed between `base` and `head`; findings on changed lines only.
    Diff {
        /// The older revision.
        base: String,
        /// The newer revision.
        head: String,
    },
}

/// What to audit and how.
#[derive(Debug, Clone)]
pub struct AuditOptions {
    /// The project root.
    pub root: PathBuf,
    /// Full or diff scope.
    pub scope: Scope,
    /// Security-rule skills to use besides the built-ins; empty: every
    /// security-rule skill passed to [`audit`].
    pub skills: Vec<String>,
    /// An offline OSV directory.
    pub osv_dir: Option<PathBuf>,
    /// Ask the OSV API too (needs network).
    pub online: bool,
    /// Another OSV API base URL (tests, mirrors).
    pub osv_api_base: Option<String>,
    /// Skip files larger than this.
    pub max_file_bytes: u64,
    /// Worker threads (0: one per core).
    pub jobs: usize,
    /// The project rules file; `None`: `<root>/.security.yaml` when present.
    pub rules_file: Option<PathBuf>,
    /// `--fail-on` from the command line.
    pub fail_on: Option<Severity>,
    /// `security.fail_on` from `config.toml`.
    pub config_fail_on: Option<Severity>,
    /// `--max-findings` from the command line.
    pub max_findings: Option<usize>,
    /// The caps on the findings kept (`security.max_findings_*`).
    pub caps: FindingCaps,
    /// The scanners that run (`--scanners`; default every one).
    pub scanners: ScannerFilter,
    /// With [`Scope::Diff`]: the changed files and lines, already known
    /// (`agent review` reads the diff through the git skill); `None`: the
    /// engine asks git (`git diff` between the scope's revisions).
    pub diff_lines: Option<DiffScope>,
}

impl AuditOptions {
    /// Defaults for `root`: full scope, offline, 1 MiB files, all cores.
    pub fn new(root: impl Into<PathBuf>) -> AuditOptions {
        AuditOptions {
            root: root.into(),
            scope: Scope::Full,
            skills: Vec::new(),
            osv_dir: None,
            online: false,
            osv_api_base: None,
            max_file_bytes: crate::walk::DEFAULT_MAX_FILE_BYTES,
            jobs: 0,
            rules_file: None,
            fail_on: None,
            config_fail_on: None,
            max_findings: None,
            caps: FindingCaps::DEFAULT,
            scanners: ScannerFilter::all(),
            diff_lines: None,
        }
    }
}

/// Time and counts of one scanner.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScannerStats {
    /// `<skill>/<scanner>`, `rules`, `<skill>/rules` or `deps`.
    pub name: String,
    /// Files handed to it.
    pub files: usize,
    /// Findings it reported (before dedup).
    pub findings: usize,
    /// Errors on files.
    pub errors: usize,
    /// Time spent in it, summed over workers, milliseconds.
    pub millis: u64,
}

/// Numbers about the audit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Files scanned.
    pub files_scanned: usize,
    /// Files skipped (size, binary).
    pub files_skipped: usize,
    /// Directories and files that could not be read (each one is also in
    /// the errors, scanner `walk`): the audit is incomplete.
    #[serde(default)]
    pub unreadable: usize,
    /// Lines in the files scanned.
    pub lines: usize,
    /// Lockfiles parsed.
    pub lockfiles: usize,
    /// Wall time, milliseconds.
    pub duration_ms: u64,
    /// Worker threads used.
    pub workers: usize,
    /// Per scanner, sorted by name.
    pub scanners: Vec<ScannerStats>,
    /// What each ignore file and the allowlist kept out of the walk,
    /// sorted by source.
    #[serde(default)]
    pub excluded: Vec<crate::exclude::Exclusion>,
}

/// A scanner that failed on a file (or a skill that failed to start).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanError {
    /// The scanner (or skill).
    pub scanner: String,
    /// The file, when the failure is about one.
    pub file: Option<String>,
    /// What happened.
    pub message: String,
}

/// A scanner that took part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScannerInfo {
    /// `<skill>/<scanner>`.
    pub name: String,
    /// Its skill.
    pub skill: String,
    /// What it looks for.
    pub description: String,
}

/// Everything an audit produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AuditReport {
    /// The tool name and version.
    pub tool: String,
    /// Its version.
    pub version: String,
    /// The project root as given.
    pub root: String,
    /// The scope.
    pub scope: Scope,
    /// When the audit started (RFC 3339, UTC).
    pub started_at: String,
    /// Deduplicated findings, sorted (severity, file, line, rule), within
    /// the caps.
    pub findings: Vec<Finding>,
    /// What the caps cut (counted, not listed).
    #[serde(default)]
    pub truncated: Truncated,
    /// Dependencies found in lockfiles (for the SBOM).
    pub packages: Vec<agent_deps::Package>,
    /// Advisory matches (for the SBOM).
    pub vulnerabilities: Vec<DependencyVulnerability>,
    /// Scanners that ran.
    pub scanners: Vec<ScannerInfo>,
    /// Numbers.
    pub stats: Stats,
    /// Non-fatal problems.
    pub errors: Vec<ScanError>,
    /// Files skipped and why.
    pub skipped: Vec<Skipped>,
    /// The thresholds applied.
    pub thresholds: Thresholds,
    /// The outcome.
    pub verdict: Verdict,
}

impl AuditReport {
    /// An empty report (for writers' tests and callers building their own).
    pub fn empty(root: &str) -> AuditReport {
        AuditReport {
            tool: "agent".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            root: root.into(),
            scope: Scope::Full,
            started_at: "1970-01-01T00:00:00Z".into(),
            findings: Vec::new(),
            truncated: Truncated::default(),
            packages: Vec::new(),
            vulnerabilities: Vec::new(),
            scanners: Vec::new(),
            stats: Stats::default(),
            errors: Vec::new(),
            skipped: Vec::new(),
            thresholds: Thresholds::default(),
            verdict: Verdict::default(),
        }
    }

    /// Counts per severity of the findings listed.
    pub fn counts(&self) -> BTreeMap<Severity, usize> {
        crate::post::counts(&self.findings)
    }

    /// Counts per severity of every finding: listed, and cut by the caps.
    pub fn all_counts(&self) -> BTreeMap<Severity, usize> {
        let mut c = self.counts();
        for (s, n) in &self.truncated.by_severity {
            *c.entry(*s).or_default() += n;
        }
        c
    }

    /// Every finding, listed or cut.
    pub fn total_findings(&self) -> usize {
        self.findings.len() + self.truncated.findings
    }

    /// Sets the verdict from the thresholds, every finding (cut ones too)
    /// and the paths that could not be read.
    pub fn judge(&mut self) {
        self.verdict = judge(&self.all_counts(), &self.thresholds, self.stats.unreadable);
    }
}

/// A scanner of a skill, ready to match files.
struct ScannerEntry {
    skill: usize,
    name: String,
    full: String,
    patterns: Option<GlobSet>,
    languages: Vec<String>,
}

impl ScannerEntry {
    fn wants(&self, path: &str, language: Option<&str>) -> bool {
        if !self.languages.is_empty() {
            let Some(lang) = language else { return false };
            if !self
                .languages
                .iter()
                .any(|l| l == lang || (l == "typescript" && lang == "tsx"))
            {
                return false;
            }
        }
        self.patterns.as_ref().is_none_or(|p| p.is_match(path))
    }
}

fn scanner_globs(patterns: &[String]) -> Result<Option<GlobSet>, globset::Error> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        let p = p.trim_start_matches("./");
        let g = |s: &str| GlobBuilder::new(s).literal_separator(true).build();
        b.add(g(p)?);
        if !p.contains('/') {
            b.add(g(&format!("**/{p}"))?);
        }
    }
    Ok(Some(b.build()?))
}

#[derive(Default)]
struct WorkerOut {
    /// The findings of the file being scanned.
    findings: Vec<Finding>,
    /// What the per-file cap cut.
    cut: Truncated,
    unreadable: Vec<Unreadable>,
    errors: Vec<ScanError>,
    skipped: Vec<Skipped>,
    scanned: usize,
    lines: usize,
    stats: HashMap<String, ScannerStats>,
}

impl WorkerOut {
    fn stat(&mut self, name: &str) -> &mut ScannerStats {
        self.stats
            .entry(name.to_string())
            .or_insert_with(|| ScannerStats {
                name: name.to_string(),
                ..ScannerStats::default()
            })
    }
}

/// How often a worker re-creates an instance of a skill after failures
/// before giving up on that skill for the rest of its files.
const MAX_RESTARTS: usize = 8;

/// Instances the workers may hold at once (the runtime's pool has 64).
const MAX_LIVE_INSTANCES: usize = 48;

/// Returns the security-rule skills the audit uses: every skill that
/// exports scanners or has a rules file, limited to the built-ins plus
/// `wanted` when `wanted` is not empty.
///
/// # Errors
/// A name in `wanted` that is not a loaded security-rule skill.
pub fn select_skills<'s>(skills: &'s [Skill], wanted: &[String]) -> anyhow::Result<Vec<&'s Skill>> {
    let is_security = |s: &Skill| {
        s.exports(ExportKind::Scanner)
            || s.manifest
                .security_rules
                .as_ref()
                .is_some_and(|r| r.sast_rules_file.is_some())
    };
    for w in wanted {
        match skills.iter().find(|s| s.name() == w) {
            None => bail!("--skills {w}: no such skill is installed or loaded"),
            Some(s) if !is_security(s) => {
                bail!("--skills {w}: not a security-rule skill (no scanners, no rules file)")
            }
            Some(_) => {}
        }
    }
    Ok(skills
        .iter()
        .filter(|s| is_security(s))
        .filter(|s| {
            wanted.is_empty() || s.origin == Origin::Builtin || wanted.iter().any(|w| w == s.name())
        })
        .collect())
}

/// Loads the project rules and every selected skill's `sast_rules_file`
/// (and `overrides_file`).
///
/// # Errors
/// A rule file that does not parse (the error names file, line and field).
pub fn load_rules(
    opts: &AuditOptions,
    skills: &[&Skill],
) -> anyhow::Result<(SecurityConfig, RuleSet)> {
    let mut project = match &opts.rules_file {
        Some(p) => SecurityConfig::load(p)?,
        None => SecurityConfig::load_project(&opts.root)?.unwrap_or_default(),
    };
    let mut rules = RuleSet::new();
    rules
        .add(&project.rules, None)
        .map_err(anyhow::Error::msg)?;
    for s in skills {
        let Some(sr) = &s.manifest.security_rules else {
            continue;
        };
        if let Some(file) = &sr.sast_rules_file {
            let cfg = skill_config(s, file)?;
            rules
                .add(&cfg.rules, Some(s.name()))
                .map_err(anyhow::Error::msg)?;
            project.taint.extend(cfg.taint);
        }
        if let Some(file) = &sr.overrides_file {
            let cfg = skill_config(s, file)?;
            // The project's own overrides come last and so win.
            let mut overrides = cfg.overrides;
            overrides.append(&mut project.overrides);
            project.overrides = overrides;
        }
    }
    Ok((project, rules))
}

/// A rule file of a skill: from its directory, or, for a built-in, from
/// the files embedded (and verified) with it.
fn skill_config(s: &Skill, file: &std::path::Path) -> anyhow::Result<SecurityConfig> {
    if let Some(dir) = &s.dir {
        return Ok(SecurityConfig::load(&dir.join(file))?);
    }
    let rel = file.to_string_lossy().replace('\\', "/");
    let Some(bytes) = s.embedded_file(&rel) else {
        bail!("skill {}: {rel} is not embedded with it", s.name());
    };
    let text = std::str::from_utf8(bytes)
        .with_context(|| format!("skill {}: {rel} is not UTF-8", s.name()))?;
    let shown = std::path::Path::new(&format!("<built-in {}>", s.name())).join(&rel);
    Ok(SecurityConfig::parse(text, &shown)?)
}

fn block_on<F: std::future::Future>(rt: &tokio::runtime::Runtime, f: F) -> F::Output {
    rt.block_on(f)
}

fn new_rt() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

fn call_error_message(e: &CallError) -> String {
    let s = e.to_string();
    // Keep reports readable: the first lines of a trap are enough.
    let mut lines: Vec<&str> = s.lines().take(6).collect();
    if s.lines().count() > 6 {
        lines.push("…");
    }
    lines.join("\n")
}

/// Lists the scanners of each skill (one instance per skill).
fn list_scanners(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[&Skill],
    errors: &mut Vec<ScanError>,
) -> Vec<(ScannerEntry, ScannerSpec)> {
    let mut out = Vec::new();
    let found: Vec<(usize, Result<Vec<ScannerSpec>, String>)> = std::thread::scope(|s| {
        s.spawn(|| {
            let rt = match new_rt() {
                Ok(rt) => rt,
                Err(e) => {
                    return skills
                        .iter()
                        .enumerate()
                        .map(|(i, _)| (i, Err(format!("starting a runtime: {e}"))))
                        .collect();
                }
            };
            skills
                .iter()
                .enumerate()
                .filter(|(_, s)| s.exports(ExportKind::Scanner))
                .map(|(i, skill)| {
                    let r = block_on(&rt, async {
                        let mut inst = runtime
                            .instantiate_for(skill, ctx, FileIntent::Read)
                            .await?;
                        inst.list_scanners().await
                    });
                    (i, r.map_err(|e| call_error_message(&e)))
                })
                .collect()
        })
        .join()
        .unwrap_or_default()
    });
    for (i, r) in found {
        let skill = skills[i];
        match r {
            Err(message) => errors.push(ScanError {
                scanner: skill.name().to_string(),
                file: None,
                message: format!("listing scanners: {message}"),
            }),
            Ok(specs) => {
                for spec in specs {
                    let full = format!("{}/{}", skill.name(), spec.name);
                    let patterns = match scanner_globs(&spec.file_patterns) {
                        Ok(p) => p,
                        Err(e) => {
                            errors.push(ScanError {
                                scanner: full,
                                file: None,
                                message: format!("bad file pattern: {e}"),
                            });
                            continue;
                        }
                    };
                    out.push((
                        ScannerEntry {
                            skill: i,
                            name: spec.name.clone(),
                            full,
                            patterns,
                            languages: spec
                                .languages
                                .iter()
                                .map(|l| l.to_ascii_lowercase())
                                .collect(),
                        },
                        spec,
                    ));
                }
            }
        }
    }
    out
}

struct Shared<'a> {
    runtime: &'a Runtime,
    ctx: &'a Arc<CallContext>,
    skills: &'a [&'a Skill],
    scanners: &'a [ScannerEntry],
    rules: &'a RuleSet,
    taint: Option<&'a crate::taint::Specs>,
    files: &'a [WalkedFile],
    policy: &'a Policy,
    diff: Option<&'a DiffScope>,
    caps: FindingCaps,
    collector: &'a Mutex<Collector>,
    max_file_bytes: u64,
    next: AtomicUsize,
    done: AtomicUsize,
    progress: &'a (dyn Fn(usize, usize) + Sync),
}

fn worker(sh: &Shared<'_>) -> WorkerOut {
    let mut out = WorkerOut::default();
    let rt = match new_rt() {
        Ok(rt) => rt,
        Err(e) => {
            out.errors.push(ScanError {
                scanner: "engine".into(),
                file: None,
                message: format!("starting a worker runtime: {e}"),
            });
            return out;
        }
    };
    let mut instances: Vec<Option<SkillInstance<'_>>> = sh.skills.iter().map(|_| None).collect();
    let mut restarts = vec![0usize; sh.skills.len()];
    let total = sh.files.len();
    loop {
        let i = sh.next.fetch_add(1, Ordering::Relaxed);
        if i >= total {
            break;
        }
        let file = &sh.files[i];
        scan_file(sh, &rt, file, &mut instances, &mut restarts, &mut out);
        let found = std::mem::take(&mut out.findings);
        collect(sh, i, found, &mut out.cut);
        let done = sh.done.fetch_add(1, Ordering::Relaxed) + 1;
        (sh.progress)(done, total);
    }
    out
}

/// Admits a file's findings (allowlist, overrides, diff lines), caps them
/// per rule and hands them to the collector.
fn collect(sh: &Shared<'_>, source: usize, found: Vec<Finding>, cut: &mut Truncated) {
    if found.is_empty() {
        return;
    }
    let admitted = admit(sh.policy, sh.diff, found);
    let ranked = rank_source(
        u32::try_from(source).unwrap_or(u32::MAX - 1),
        admitted,
        &sh.caps,
        cut,
    );
    if let Ok(mut c) = sh.collector.lock() {
        c.add(ranked, Truncated::new(sh.caps));
    }
}

fn admit(policy: &Policy, diff: Option<&DiffScope>, found: Vec<Finding>) -> Vec<Finding> {
    found
        .into_iter()
        .filter_map(|f| policy.admit(f))
        .filter(|f| {
            diff.is_none_or(|d| {
                d.overlaps(&f.location.file, f.location.start_line, f.location.end_line)
            })
        })
        .collect()
}

fn scan_file<'s>(
    sh: &Shared<'s>,
    rt: &tokio::runtime::Runtime,
    file: &WalkedFile,
    instances: &mut [Option<SkillInstance<'s>>],
    restarts: &mut [usize],
    out: &mut WorkerOut,
) {
    let wanted: Vec<&ScannerEntry> = sh
        .scanners
        .iter()
        .filter(|s| s.wants(&file.path, file.language))
        .collect();
    let rules_apply = sh.rules.wants(&file.path, file.language);
    let taint_applies = sh
        .taint
        .is_some_and(|t| crate::taint::supports(file.language, t));
    let content = match read_text(&file.abs, sh.max_file_bytes) {
        Ok(Some(c)) => c,
        Ok(None) => {
            out.skipped.push(Skipped {
                path: file.path.clone(),
                reason: SkipReason::Binary,
            });
            return;
        }
        Err(e) => {
            out.unreadable.push(Unreadable {
                path: file.path.clone(),
                message: e.to_string(),
            });
            return;
        }
    };
    out.scanned += 1;
    out.lines += content.lines().count();
    if wanted.is_empty() && !rules_apply && !taint_applies {
        return;
    }
    let lines: Vec<&str> = content.lines().collect();
    let line_at = |n: u32| -> Option<&str> {
        (n as usize)
            .checked_sub(1)
            .and_then(|i| lines.get(i).copied())
    };
    if rules_apply {
        let t = Instant::now();
        let (mut found, mut errs) = sh.rules.scan(&file.path, file.language, &content);
        // The iOS data-flow pass rides with the rules (it reports iOS rules).
        crate::ios::flow::scan(&file.path, file.language, &content, &mut found, &mut errs);
        let elapsed = t.elapsed();
        // Split the time between project rules and skills' rules by finding
        // scanner; the rule set as a whole is timed under `rules`.
        let st = out.stat("rules");
        st.files += 1;
        st.findings += found.len();
        st.errors += errs.len();
        st.millis += elapsed.as_millis() as u64;
        for e in errs {
            out.errors.push(ScanError {
                scanner: format!("rules/{}", e.rule_id),
                file: Some(e.file),
                message: e.message,
            });
        }
        out.findings.extend(found);
    }
    // Sinks the dataflow leaves open (see `taint::supersede`).
    let mut open = Vec::new();
    if let (true, Some(specs), Some(lang)) = (taint_applies, sh.taint, file.language) {
        let t = Instant::now();
        let result = crate::taint::analyse(&file.path, lang, &content, specs);
        let millis = t.elapsed().as_millis() as u64;
        let st = out.stat(crate::taint::SCANNER);
        st.files += 1;
        st.millis += millis;
        match result {
            Ok(found) => {
                out.stat(crate::taint::SCANNER).findings += found.findings.len();
                out.findings.extend(found.findings);
                open = found.open;
            }
            Err(message) => {
                out.stat(crate::taint::SCANNER).errors += 1;
                out.errors.push(ScanError {
                    scanner: crate::taint::SCANNER.into(),
                    file: Some(file.path.clone()),
                    message,
                });
            }
        }
    }
    if wanted.is_empty() {
        if let Some(specs) = sh.taint {
            crate::taint::supersede(&mut out.findings, file.language, specs, &open);
        }
        return;
    }
    let target = ScanTarget {
        path: file.path.clone(),
        content: content.clone(),
        language: file.language.map(str::to_string),
    };
    for s in wanted {
        let skill = sh.skills[s.skill];
        if instances[s.skill].is_none() {
            if restarts[s.skill] >= MAX_RESTARTS {
                out.stat(&s.full).errors += 1;
                out.errors.push(ScanError {
                    scanner: s.full.clone(),
                    file: Some(file.path.clone()),
                    message: "skipped: the skill failed too often in this worker".into(),
                });
                continue;
            }
            restarts[s.skill] += 1;
            match block_on(
                rt,
                sh.runtime.instantiate_for(skill, sh.ctx, FileIntent::Read),
            ) {
                Ok(inst) => instances[s.skill] = Some(inst),
                Err(e) => {
                    out.stat(&s.full).errors += 1;
                    out.errors.push(ScanError {
                        scanner: s.full.clone(),
                        file: Some(file.path.clone()),
                        message: format!("starting the skill: {}", call_error_message(&e)),
                    });
                    continue;
                }
            }
        }
        let Some(inst) = instances[s.skill].as_mut() else {
            continue;
        };
        let t = Instant::now();
        let r = block_on(rt, inst.scan(&s.name, &target));
        let elapsed: Duration = t.elapsed();
        let builtin = skill.origin == Origin::Builtin;
        let st = out.stat(&s.full);
        st.files += 1;
        st.millis += elapsed.as_millis() as u64;
        let message = match r {
            Ok(Ok(list)) => {
                st.findings += list.len();
                for mut w in list {
                    // A scanner reports on the file it was handed, nothing else.
                    w.location.file = file.path.clone();
                    let line = line_at(w.location.start_line);
                    out.findings
                        .push(Finding::from_wit(w, skill.name(), &s.name, builtin, line));
                }
                continue;
            }
            Ok(Err(e)) => format!("{e:?}"),
            Err(e) => {
                // A trap poisons the instance: the next file gets a new one.
                instances[s.skill] = None;
                call_error_message(&e)
            }
        };
        st.errors += 1;
        out.errors.push(ScanError {
            scanner: s.full.clone(),
            file: Some(file.path.clone()),
            message,
        });
    }
    if let Some(specs) = sh.taint {
        crate::taint::supersede(&mut out.findings, file.language, specs, &open);
    }
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".into())
}

/// Runs a security audit of `opts.root`.
///
/// `skills` are the loaded skills; the security-rule ones (scanner exports,
/// rule files) take part (see [`select_skills`]). The work is spread over
/// `opts.jobs` threads (0: one per core); each thread keeps one instance of
/// each scanner skill and re-creates it after a trap. A scanner failing on a
/// file is recorded in [`AuditReport::errors`], never fatal. `progress` is
/// called with (files done, files total) from the worker threads.
///
/// Call it outside of an async context, or through `spawn_blocking`: it
/// drives the runtime on its own threads.
///
/// # Errors
/// A broken rule file, an unknown `--skills` name, a root that is not a
/// directory, or git failing in diff scope.
pub fn audit(
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    skills: &[Skill],
    opts: &AuditOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> anyhow::Result<AuditReport> {
    let started = Instant::now();
    let started_at = now_rfc3339();
    let root = &opts.root;
    if !root.is_dir() {
        bail!("{}: not a directory", root.display());
    }
    let selected = select_skills(skills, &opts.skills)?;
    let (config, mut rules) = load_rules(opts, &selected)?;
    if !opts.scanners.runs_engine("rules") {
        rules = RuleSet::new();
    }

    let diff: Option<DiffScope> = match &opts.scope {
        Scope::Full => None,
        Scope::Diff { .. } if opts.diff_lines.is_some() => opts.diff_lines.clone(),
        Scope::Diff { base, head } => Some(
            diff_scope(root, base, head)
                .with_context(|| format!("computing the diff {base}..{head}"))?,
        ),
    };
    let walk_opts = WalkOptions {
        max_file_bytes: opts.max_file_bytes,
        only: diff.as_ref().map(|d| d.files.clone()),
        allowlist: crate::paths::PathPatterns::new(&config.allowlist.paths).unwrap_or_default(),
    };
    let walked = walk(root, &walk_opts)?;

    let mut errors = Vec::new();
    let mut entries = list_scanners(runtime, ctx, &selected, &mut errors);
    entries.retain(|(e, _)| opts.scanners.runs(selected[e.skill].name(), &e.name));
    let scanner_infos: Vec<ScannerInfo> = entries
        .iter()
        .map(|(e, spec)| ScannerInfo {
            name: e.full.clone(),
            skill: selected[e.skill].name().to_string(),
            description: spec.description.clone(),
        })
        .collect();
    let scanners: Vec<ScannerEntry> = entries.into_iter().map(|(e, _)| e).collect();

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut jobs = if opts.jobs == 0 { cores } else { opts.jobs };
    // Each worker holds one instance per scanner skill; stay well inside
    // the runtime's instance pool.
    let per_worker = selected.len().max(1);
    jobs = jobs
        .min(MAX_LIVE_INSTANCES / per_worker)
        .min(walked.files.len())
        .max(1);

    let taint_specs = if opts.scanners.runs_engine(crate::taint::SCANNER) {
        let mut specs = crate::taint::Specs::builtin();
        for t in &config.taint {
            specs.add(t).map_err(|(field, e)| {
                anyhow::anyhow!("taint spec for {}: {field}: {e}", t.language)
            })?;
        }
        Some(specs)
    } else {
        None
    };

    let policy = Policy::new(&config.allowlist, &config.overrides);
    let collector = Mutex::new(Collector::new(opts.caps));
    let shared = Shared {
        runtime,
        ctx,
        skills: &selected,
        scanners: &scanners,
        rules: &rules,
        taint: taint_specs.as_ref(),
        files: &walked.files,
        policy: &policy,
        diff: diff.as_ref(),
        caps: opts.caps,
        collector: &collector,
        max_file_bytes: opts.max_file_bytes,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        progress,
    };
    let outs: Vec<WorkerOut> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..jobs).map(|_| s.spawn(|| worker(&shared))).collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| WorkerOut {
                    errors: vec![ScanError {
                        scanner: "engine".into(),
                        file: None,
                        message: "a scan worker panicked".into(),
                    }],
                    ..WorkerOut::default()
                })
            })
            .collect()
    });

    let mut cut = Truncated::new(opts.caps);
    let mut unreadable = walked.unreadable.clone();
    let mut skipped = walked.skipped.clone();
    let mut stats = Stats {
        workers: jobs,
        excluded: walked.excluded.clone(),
        ..Stats::default()
    };
    let mut per: BTreeMap<String, ScannerStats> = BTreeMap::new();
    for o in outs {
        cut.merge(o.cut);
        unreadable.extend(o.unreadable);
        errors.extend(o.errors);
        skipped.extend(o.skipped);
        stats.files_scanned += o.scanned;
        stats.lines += o.lines;
        for (k, v) in o.stats {
            let e = per.entry(k.clone()).or_insert_with(|| ScannerStats {
                name: k,
                ..ScannerStats::default()
            });
            e.files += v.files;
            e.findings += v.findings;
            e.errors += v.errors;
            e.millis += v.millis;
        }
    }

    // Dependencies.
    let t = Instant::now();
    let lockfiles: &[WalkedFile] = if opts.scanners.runs_engine("deps") {
        &walked.lockfiles
    } else {
        &[]
    };
    let dep = audit_dependencies(
        lockfiles,
        &AdvisorySources {
            osv_dir: opts.osv_dir.as_deref(),
            online: opts.online,
            api_base: opts.osv_api_base.as_deref(),
        },
        &config.banned,
    );
    if !lockfiles.is_empty() {
        per.insert(
            "deps".into(),
            ScannerStats {
                name: "deps".into(),
                files: lockfiles.len(),
                findings: dep.findings.len(),
                errors: dep.errors.len(),
                millis: t.elapsed().as_millis() as u64,
            },
        );
    }
    stats.lockfiles = lockfiles.len();
    // The dependency audit is one more source, ranked after every file.
    let dep_findings = admit(&policy, diff.as_ref(), dep.findings);
    // The plist/entitlements scanner: one more source after the files.
    let apple = if opts.scanners.runs_engine("plist") {
        let t = Instant::now();
        let scan = crate::ios::plist::scan(&walked.files, opts.max_file_bytes);
        if scan.files > 0 {
            per.insert(
                crate::ios::plist::SCANNER.into(),
                ScannerStats {
                    name: crate::ios::plist::SCANNER.into(),
                    files: scan.files,
                    findings: scan.findings.len(),
                    errors: scan.errors.len(),
                    millis: t.elapsed().as_millis() as u64,
                },
            );
        }
        for (file, message) in scan.errors {
            errors.push(ScanError {
                scanner: crate::ios::plist::SCANNER.into(),
                file: Some(file),
                message,
            });
        }
        scan.findings
    } else {
        Vec::new()
    };
    let dep_findings = [dep_findings, admit(&policy, diff.as_ref(), apple)].concat();
    let ranked = rank_source(u32::MAX, dep_findings, &opts.caps, &mut cut);
    let mut collector = collector
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a scan worker panicked while adding findings"))?;
    collector.add(ranked, cut);
    let (findings, truncated) = collector.finish();
    for (file, message) in dep.errors {
        errors.push(ScanError {
            scanner: "deps".into(),
            file: Some(file),
            message,
        });
    }

    let findings = dedup(findings);

    let thresholds = Thresholds::resolve(
        opts.fail_on,
        &config.ci,
        opts.config_fail_on,
        opts.max_findings,
    );

    unreadable.sort_by(|a, b| a.path.cmp(&b.path));
    stats.unreadable = unreadable.len();
    errors.extend(unreadable.into_iter().map(|u| ScanError {
        scanner: "walk".into(),
        file: Some(u.path),
        message: format!("could not be read: {}", u.message),
    }));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    errors.sort_by(|a, b| (&a.file, &a.scanner).cmp(&(&b.file, &b.scanner)));
    stats.files_skipped = skipped.len();
    stats.scanners = per.into_values().collect();
    stats.duration_ms = started.elapsed().as_millis() as u64;
    let mut report = AuditReport {
        tool: "agent".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        root: root.display().to_string(),
        scope: opts.scope.clone(),
        started_at,
        findings,
        truncated,
        packages: dep.packages,
        vulnerabilities: dep.vulnerabilities,
        scanners: scanner_infos,
        stats,
        errors,
        skipped,
        thresholds,
        verdict: Verdict::default(),
    };
    report.judge();
    Ok(report)
}

//! What every command needs: paths, trust, grants, the runtime, and the
//! discovered skills.

use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_config::Config;
use agent_core::{ApprovalGate, Invoker, ProviderLlm, SkillUsage};
use agent_manifest::{Manifest, Permission};
use agent_policy::{AllowList, Answer, ApprovalRequest, Approver, AuditLog, Grants};
use agent_providers::Provider;
use agent_runtime::{
    Budget, BudgetLimits, CacheConfig, CallContext, GrantsAuthorizer, Limits, LoadError, Origin,
    Prebuilt, Runtime, Signer, Skill, SkillPackage, TrustPolicy, UseLimit,
};
use agent_store::{AgentPaths, Store};
use agent_trust::TrustStore;
use anyhow::{Context, Result, bail};

use crate::cli::{GlobalArgs, UsageError};
use crate::shadow::{self, AllowedShadows, Shadow};

/// `max_tokens` of every model request (the loop's and skills').
pub const MAX_TOKENS: u32 = 4096;

/// A call context with the model and other skills attached (see
/// [`App::services`]).
pub struct Services {
    /// The context, shared by every call of the run.
    pub ctx: Arc<CallContext>,
    /// Serves `skills.invoke`; takes the run's constraints once known.
    pub invoker: Arc<Invoker>,
    /// Token usage of skills' own model requests (when a model is attached).
    pub skill_usage: Option<Arc<SkillUsage>>,
}

/// A skill that could not be used, and why.
pub struct Broken {
    /// Where it was found.
    pub location: String,
    /// The error, already phrased for the user.
    pub error: String,
}

/// Lazily built process state shared by the commands.
pub struct App {
    pub paths: AgentPaths,
    pub project_root: PathBuf,
    pub global: GlobalArgs,
    pub interactive: bool,
    /// `--approve-skills`: skills granted what they declare, for this run
    /// (set before [`App::grants`]).
    pub approved_skills: Vec<String>,
    store: Option<Arc<Store>>,
    grants: Option<Arc<GrantsAuthorizer>>,
    runtime: Option<Arc<Runtime>>,
    config: Option<Arc<Config>>,
    approver: Option<Arc<dyn Approver>>,
    /// Whether discovery's shadowing decisions were warned about and audited.
    shadows_reported: bool,
}

/// What discovery found (see [`App::discover_all`]).
pub struct Discovery {
    /// One package per name, sorted by name.
    pub packages: Vec<SkillPackage>,
    /// Skills that could not be used.
    pub broken: Vec<Broken>,
    /// Built-ins replaced with `--allow-shadow`, used when the replacement
    /// fails to load.
    pub(crate) fallbacks: Vec<SkillPackage>,
}

impl App {
    pub fn new(global: GlobalArgs) -> Result<App> {
        let paths = AgentPaths::from_env().context("finding the agent's directories")?;
        let project_root = match &global.project {
            Some(p) => p.clone(),
            None => std::env::current_dir().context("reading the current directory")?,
        };
        if !project_root.is_dir() {
            return Err(UsageError(format!(
                "--project {}: not a directory",
                project_root.display()
            ))
            .into());
        }
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false");
        let interactive = !global.non_interactive
            && !ci
            && std::io::stdin().is_terminal()
            && std::io::stderr().is_terminal();
        Ok(App {
            paths,
            project_root,
            global,
            interactive,
            approved_skills: Vec::new(),
            store: None,
            grants: None,
            runtime: None,
            config: None,
            approver: None,
            shadows_reported: false,
        })
    }

    /// The configuration (`config.toml`, defaults, environment overrides), loaded on first
    /// use. A broken file is an error for every command that needs it.
    pub fn config(&mut self) -> Result<Arc<Config>> {
        if let Some(c) = &self.config {
            return Ok(c.clone());
        }
        let config = Arc::new(Config::load(&self.paths.config_file(), |k| {
            std::env::var(k).ok()
        })?);
        self.config = Some(config.clone());
        Ok(config)
    }

    /// The grant store (opened on first use).
    pub fn store(&mut self) -> Result<Arc<Store>> {
        if let Some(s) = &self.store {
            return Ok(s.clone());
        }
        self.paths
            .ensure_dirs()
            .context("creating the agent's directories")?;
        let store = Arc::new(Store::open(self.paths.db_path())?);
        self.store = Some(store.clone());
        Ok(store)
    }

    /// The allowlist from `--allow` and `--capabilities`.
    pub fn allowlist(&self) -> Result<AllowList> {
        let mut list =
            AllowList::from_flags(&self.global.allow).map_err(|e| UsageError(e.to_string()))?;
        for file in &self.global.capabilities {
            list.extend(
                AllowList::from_file(file)
                    .map_err(|e| UsageError(format!("--capabilities {e}")))?,
            );
        }
        Ok(list)
    }

    /// Who asks the user in interactive sessions (default: a prompt on the
    /// terminal); the TUI sets its dialog. Takes effect if set before [`App::grants`].
    pub fn set_approver(&mut self, approver: Arc<dyn Approver>) {
        self.approver = Some(approver);
    }

    /// The grant decision point: interactive (stored grants, then ask) or
    /// not (flags and allowlist files only).
    pub fn grants(&mut self) -> Result<Arc<GrantsAuthorizer>> {
        if let Some(g) = &self.grants {
            return Ok(g.clone());
        }
        self.paths
            .ensure_dirs()
            .context("creating the agent's directories")?;
        let audit = Arc::new(AuditLog::open(self.paths.audit_log_path())?);
        let allow = self.allowlist()?;
        let config = self.config()?;
        let grants = if self.interactive {
            let store = self.store()?;
            let approver = self
                .approver
                .clone()
                .unwrap_or_else(|| Arc::new(TerminalApprover));
            let mut g = Grants::interactive(store, approver, audit)
                .with_auto_approve(config.skills.auto_approve.clone());
            if !allow.is_empty() {
                g = g.with_allowlist(allow);
            }
            g
        } else {
            Grants::non_interactive(allow, audit)
        };
        let grants = grants.with_approved_skills(self.approved_skills.iter().cloned());
        let auth = Arc::new(GrantsAuthorizer::new(Arc::new(grants)));
        self.grants = Some(auth.clone());
        Ok(auth)
    }

    /// The runtime (engine, linker, artifact cache).
    pub fn runtime(&mut self) -> Result<&Arc<Runtime>> {
        if self.runtime.is_none() {
            let shell = self.config()?.skills.skill_shell_timeout;
            if shell > agent_manifest::MAX_EXEC_TIMEOUT {
                eprintln!(
                    "warning: skills.skill_shell_timeout ({} s) is above the host's maximum for a program; using {} s",
                    shell.as_secs(),
                    agent_manifest::MAX_EXEC_TIMEOUT.as_secs()
                );
            }
            let limits = Limits {
                exec_timeout: shell.min(agent_manifest::MAX_EXEC_TIMEOUT),
                ..Limits::default()
            };
            let cache = CacheConfig {
                dir: self.paths.component_cache_dir(),
                key_file: self.paths.component_cache_key(),
            };
            let rt = Runtime::new(Some(cache), limits)?;
            self.runtime = Some(Arc::new(rt));
        }
        self.runtime.as_ref().context("runtime")
    }

    /// The trust policy: trusted keys, the built-ins' key, --allow-unsigned.
    pub fn trust(&self) -> Result<TrustPolicy> {
        Ok(TrustPolicy {
            store: TrustStore::load(&self.paths.trusted_keys_dir())?,
            builtin_key: Some(agent_builtins::public_key()?),
            allow_unsigned: self.global.allow_unsigned,
        })
    }

    /// A call context for this project, with each skill's `[skills.config.<name>]` table.
    pub fn call_context(&mut self, mode: &str) -> Result<Arc<CallContext>> {
        Ok(Arc::new(self.call_context_with(mode)?))
    }

    /// The call context of a run with the services skills reach through
    /// imports: `model` (a provider and model name) for `llm`, and an
    /// [`Invoker`] over `skills` (through `gate`) for `skills.invoke`.
    pub fn services(
        &mut self,
        mode: &str,
        skills: &Arc<Vec<Skill>>,
        gate: Arc<dyn ApprovalGate>,
        model: Option<(Arc<dyn Provider>, &str)>,
    ) -> Result<Services> {
        let runtime = self.runtime()?.clone();
        let invoker = Arc::new(Invoker::new(runtime, skills.clone(), gate));
        let mut ctx = self.call_context_with(mode)?;
        let mut skill_usage = None;
        if let Some((provider, model)) = model {
            let llm = ProviderLlm::new(provider, model, MAX_TOKENS);
            skill_usage = Some(llm.usage());
            ctx.llm = Some(Arc::new(llm));
        }
        ctx.invoker = Some(invoker.clone());
        Ok(Services {
            ctx: Arc::new(ctx),
            invoker,
            skill_usage,
        })
    }

    /// The call context, before it is shared: the caller may still attach
    /// services (a model, other skills).
    pub fn call_context_with(&mut self, mode: &str) -> Result<CallContext> {
        let config = self.config()?;
        let auth = self.grants()?;
        let mut ctx = CallContext::new(&self.project_root, mode, auth)?;
        // Skills never reach the agent's own files, even when the project
        // contains them (project = home directory).
        ctx.mask_dirs([
            self.paths.config_dir.clone(),
            self.paths.data_dir.clone(),
            self.paths.cache_dir.clone(),
        ]);
        ctx.skill_config = config
            .skills
            .config
            .iter()
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect();
        ctx.budget = Arc::new(Budget::new(budget_limits(&config.skills)));
        Ok(ctx)
    }

    /// [`App::discover_all`]'s packages and broken skills.
    pub fn discover(&mut self) -> Result<(Vec<SkillPackage>, Vec<Broken>)> {
        let d = self.discover_all()?;
        Ok((d.packages, d.broken))
    }

    /// Finds every skill: built-ins, then the user dir, then the project's
    /// `.agent/skills/`, then `--skills`; later sources replace earlier ones of
    /// the same name, except that taking a built-in's name (or, for a project
    /// skill, a user skill's) needs `--allow-shadow NAME` or
    /// `skills.allow_shadow` (see [`crate::shadow`]). Broken ones are returned
    /// separately, never fatal.
    ///
    /// # Errors
    /// A broken configuration file.
    pub fn discover_all(&mut self) -> Result<Discovery> {
        let mut found: Vec<SkillPackage> = Vec::new();
        let mut broken = Vec::new();
        for b in agent_builtins::all() {
            let files = b
                .named_files()
                .map(|(p, bytes)| (p.to_string(), Arc::from(bytes)))
                .collect();
            match SkillPackage::in_memory(
                "<built-in>/SKILL.yaml",
                b.manifest,
                files,
                Some(agent_runtime::ComponentBytes::Deflated(b.component)),
                Origin::Builtin,
            ) {
                Ok(pkg) => found.push(pkg.with_prebuilt(Prebuilt {
                    digest: b.digest,
                    precompiled: b.precompiled,
                })),
                Err(e) => broken.push(Broken {
                    location: format!("built-in {}", b.name),
                    error: e.to_string(),
                }),
            }
        }
        let sources = [
            (self.paths.user_skills_dir(), Origin::User),
            (
                self.project_root.join(".agent").join("skills"),
                Origin::Project,
            ),
        ];
        for (dir, origin) in sources {
            tidy_skills_dir(&dir);
            scan_dir(&dir, origin, &mut found, &mut broken);
        }
        for dir in &self.global.skills {
            if is_skill_name_arg(dir) {
                continue;
            }
            if dir.join("SKILL.yaml").is_file() {
                add_dir(dir, Origin::CommandLine, &mut found, &mut broken);
            } else if dir.is_dir() {
                scan_dir(dir, Origin::CommandLine, &mut found, &mut broken);
            } else {
                broken.push(Broken {
                    location: dir.display().to_string(),
                    error:
                        "--skills: not a skill directory (no SKILL.yaml) or a directory of skills"
                            .into(),
                });
            }
        }
        let config = self.config()?;
        let allowed = AllowedShadows::new(&self.global.allow_shadow, &config.skills.allow_shadow);
        let resolved = shadow::resolve(found, &allowed);
        if !self.shadows_reported {
            self.shadows_reported = true;
            self.report_shadows(&resolved.shadows, &resolved.unused)?;
        }
        Ok(Discovery {
            packages: resolved.packages,
            broken,
            fallbacks: resolved.fallbacks,
        })
    }

    /// Warns about each shadowing decision on stderr and audits it.
    fn report_shadows(&self, shadows: &[Shadow], unused: &[String]) -> Result<()> {
        for w in unused {
            eprintln!("warning: {w}");
        }
        if shadows.is_empty() {
            return Ok(());
        }
        self.paths
            .ensure_dirs()
            .context("creating the agent's directories")?;
        let audit = AuditLog::open(self.paths.audit_log_path())?;
        for s in shadows {
            eprintln!("warning: {}", s.warning());
            audit
                .append(s.audit_record())
                .context("writing the audit log")?;
        }
        Ok(())
    }

    /// Loads `pkg`; when it replaced a built-in and fails to load, the
    /// built-in is loaded instead (with a warning).
    fn load_package(
        &mut self,
        pkg: SkillPackage,
        fallbacks: &mut Vec<SkillPackage>,
        trust: &TrustPolicy,
    ) -> std::result::Result<Skill, Broken> {
        let name = pkg.manifest.name.clone();
        let location = pkg
            .dir
            .as_ref()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|| format!("built-in {name}"));
        let runtime = Arc::clone(self.runtime().map_err(|e| Broken {
            location: location.clone(),
            error: e.to_string(),
        })?);
        match runtime.load(pkg, trust) {
            Ok(skill) => {
                crate::cache_audit::report_recompiled(&self.paths, &runtime, &skill);
                Ok(skill)
            }
            Err(e) => {
                let Some(i) = fallbacks.iter().position(|p| p.manifest.name == name) else {
                    return Err(Broken {
                        location,
                        error: e.to_string(),
                    });
                };
                eprintln!(
                    "warning: skipping skill at {location}: {e}; the built-in `{name}` stays in use"
                );
                let skill = runtime
                    .load(fallbacks.remove(i), trust)
                    .map_err(|e| Broken {
                        location: format!("built-in {name}"),
                        error: e.to_string(),
                    })?;
                crate::cache_audit::report_recompiled(&self.paths, &runtime, &skill);
                Ok(skill)
            }
        }
    }

    /// Discovers and loads every skill; broken ones are reported on stderr
    /// and skipped.
    pub fn load_all(&mut self) -> Result<Vec<Skill>> {
        let Discovery {
            packages,
            mut broken,
            mut fallbacks,
        } = self.discover_all()?;
        let trust = self.trust()?;
        let mut skills = Vec::new();
        for pkg in packages {
            match self.load_package(pkg, &mut fallbacks, &trust) {
                Ok(skill) => skills.push(skill),
                Err(b) => broken.push(b),
            }
        }
        report_broken(&broken);
        warn_unsigned(skills.iter().map(|s| (s.name(), &s.signer)));
        Ok(skills)
    }

    /// Loads one skill by name (discovery) or by directory path.
    pub fn load_one(&mut self, target: &str) -> Result<Skill> {
        let path = Path::new(target);
        if target.contains('/') || target.starts_with('.') || path.join("SKILL.yaml").is_file() {
            let pkg = SkillPackage::from_dir(path, Origin::Path).map_err(load_err)?;
            let trust = self.trust()?;
            let runtime = Arc::clone(self.runtime()?);
            let skill = runtime.load(pkg, &trust).map_err(load_err)?;
            crate::cache_audit::report_recompiled(&self.paths, &runtime, &skill);
            warn_unsigned([(skill.name(), &skill.signer)]);
            return Ok(skill);
        }
        let Discovery {
            packages,
            broken,
            mut fallbacks,
        } = self.discover_all()?;
        let Some(pkg) = packages.into_iter().find(|p| p.manifest.name == target) else {
            if let Some(b) = broken.iter().find(|b| b.location.contains(target)) {
                bail!("skill `{target}` is broken: {}: {}", b.location, b.error);
            }
            bail!("no skill named `{target}` (see `agent skill list`)");
        };
        let trust = self.trust()?;
        let skill = self
            .load_package(pkg, &mut fallbacks, &trust)
            .map_err(|b| anyhow::anyhow!("{}", b.error))?;
        warn_unsigned([(skill.name(), &skill.signer)]);
        Ok(skill)
    }

    /// Prints what was denied in this run (non-interactive runs especially).
    /// Skills to activate whatever their triggers: the names given to
    /// `--skills`, and the skills loaded from directories given to it.
    pub fn explicit_skills(&self, skills: &[Skill]) -> Vec<String> {
        let mut names: Vec<String> = self
            .global
            .skills
            .iter()
            .filter(|a| is_skill_name_arg(a))
            .map(|a| a.display().to_string())
            .collect();
        for s in skills {
            if s.origin == Origin::CommandLine && !names.iter().any(|n| n == s.name()) {
                names.push(s.name().to_string());
            }
        }
        names
    }

    pub fn report_denials(&self) -> bool {
        let Some(g) = &self.grants else { return false };
        let denials = g.grants().denials();
        for d in &denials {
            let scope = d
                .scope
                .as_deref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            eprintln!("denied: {} {}{scope}: {}", d.skill, d.permission, d.reason);
        }
        !denials.is_empty()
    }
}

/// The `llm`, `exec` and `http` budgets of `[skills]`.
fn budget_limits(s: &agent_config::SkillsConfig) -> BudgetLimits {
    BudgetLimits {
        llm: UseLimit {
            per_skill: s.max_llm_calls_per_skill,
            per_turn: s.max_llm_calls_per_turn,
        },
        exec: UseLimit {
            per_skill: s.max_shell_exec_per_skill,
            per_turn: s.max_shell_exec_per_turn,
        },
        http: UseLimit {
            per_skill: s.max_http_requests_per_skill,
            per_turn: s.max_http_requests_per_turn,
        },
    }
}

fn load_err(e: LoadError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// Recovers what interrupted installs, replaces and removes left in an
/// install directory (see `agent_registry::tidy`), saying what it did; a
/// failure is a warning, never fatal.
pub fn tidy_skills_dir(dir: &Path) {
    match agent_registry::tidy(dir) {
        Ok(done) => {
            for d in done {
                eprintln!("note: {}: {d}", dir.display());
            }
        }
        Err(e) => eprintln!("warning: cleaning up {}: {e}", dir.display()),
    }
}

/// The skills in `dir`'s subdirectories. A dot-directory is never a skill:
/// it is an install being staged, a previous version on its way out, or
/// not ours (`.git`).
fn scan_dir(dir: &Path, origin: Origin, found: &mut Vec<SkillPackage>, broken: &mut Vec<Broken>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.join("SKILL.yaml").is_file())
        .collect();
    dirs.sort();
    for d in dirs {
        add_dir(&d, origin, found, broken);
    }
}

fn add_dir(dir: &Path, origin: Origin, found: &mut Vec<SkillPackage>, broken: &mut Vec<Broken>) {
    match SkillPackage::from_dir(dir, origin) {
        Ok(pkg) => found.push(pkg),
        Err(e) => broken.push(Broken {
            location: dir.display().to_string(),
            error: e.to_string(),
        }),
    }
}

pub fn report_broken(broken: &[Broken]) {
    for b in broken {
        eprintln!("warning: skipping skill at {}: {}", b.location, b.error);
    }
}

/// Warns about each skill (name, signer) used only because of `--allow-unsigned`.
pub(crate) fn warn_unsigned<'a>(skills: impl IntoIterator<Item = (&'a str, &'a Signer)>) {
    for (name, signer) in skills {
        if *signer == Signer::Unsigned {
            eprintln!(
                "WARNING: skill `{name}` is UNSIGNED and was loaded only because of --allow-unsigned (development use only)"
            );
        }
    }
}

/// Asks on the terminal: once / always / deny.
struct TerminalApprover;

impl Approver for TerminalApprover {
    fn ask(&self, req: &ApprovalRequest) -> Answer {
        let mut err = std::io::stderr().lock();
        let scope = req
            .scope
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let _ = writeln!(
            err,
            "\nSkill `{}` asks for {}{scope} — {}\n  about to: {}",
            req.skill,
            req.permission,
            req.permission.describe(),
            req.detail
        );
        loop {
            let _ = write!(err, "  [o] allow once  [a] allow always  [d] deny > ");
            let _ = err.flush();
            let mut line = String::new();
            if std::io::stdin().lock().read_line(&mut line).unwrap_or(0) == 0 {
                return Answer::Deny;
            }
            match line.trim().to_ascii_lowercase().as_str() {
                "o" | "once" | "y" | "yes" => return Answer::Once,
                "a" | "always" => return Answer::Always,
                "d" | "deny" | "n" | "no" => return Answer::Deny,
                _ => {}
            }
        }
    }
}

/// The permissions a skill declares, each with its grant status for listings.
pub fn permission_status(
    skill: &Manifest,
    store: Option<&Store>,
    allow: &AllowList,
    interactive: bool,
) -> Result<Vec<(Permission, String)>, agent_store::StoreError> {
    skill
        .permissions
        .iter()
        .map(|p| {
            let standing = agent_policy::standing(&skill.name, *p, store, allow, interactive)?;
            Ok((*p, standing.to_string()))
        })
        .collect()
}

/// Whether a `--skills` value names a skill rather than a directory: a
/// valid skill name that is not a path on disk.
fn is_skill_name_arg(arg: &Path) -> bool {
    let s = arg.to_string_lossy();
    !arg.exists() && !s.contains('/') && agent_manifest::is_skill_name(&s)
}

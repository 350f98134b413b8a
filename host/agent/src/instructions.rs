//! SKILL.md instruction skills for the binary: found in the same places as components (the
//! user's skills directory, the project's `.agent/skills/`, `--skills DIR`), eligibility
//! against this machine and config.toml, the content scan before loading, and an invocation
//! whose `!command` lines run only through the runtime's exec path with the grant
//! (`Runtime::run_program`).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use agent_instructions::{
    CommandLine, Finding, HostEnvironment, InstructionSkill, ParseError, RunOutcome, Severity,
};
use agent_policy::{AuditLog, AuditRecord};
use agent_runtime::{CallContext, ProgramError, ProgramSkill, Runtime};
use agent_store::AgentPaths;
use anyhow::{Context, Result};

use crate::app::App;

/// One instruction skill and where it came from.
pub struct Instruction {
    /// The parsed SKILL.md.
    pub skill: InstructionSkill,
    /// `user`, `project` or `command-line`.
    pub origin: &'static str,
    /// Why it is not offered here (empty: it is).
    pub ineligible: Vec<String>,
}

impl Instruction {
    /// The skill's name.
    pub fn name(&self) -> &str {
        self.skill.name()
    }

    /// The programs its `!` lines name (as the grant names them), in order, once each.
    pub fn programs(&self) -> Vec<String> {
        let mut progs: Vec<String> = Vec::new();
        // Most skills have no `!` line: no need to walk the body.
        if !self
            .skill
            .body
            .lines()
            .any(|l| l.trim_start().starts_with('!'))
        {
            return progs;
        }
        agent_instructions::render(&self.skill, "", &mut |c| {
            if !progs.contains(&c.program) {
                progs.push(c.program.clone());
            }
            RunOutcome::LeftOut(String::new())
        });
        progs
    }

    /// Who the runtime runs its programs for.
    pub fn program_skill(&self) -> ProgramSkill {
        ProgramSkill {
            name: self.name().to_string(),
            digest: self.skill.digest.clone(),
            programs: self.programs(),
        }
    }
}

/// What discovery found.
#[derive(Default)]
pub struct Instructions {
    /// One per name, sorted by name.
    pub skills: Vec<Instruction>,
    /// SKILL.md files that did not parse (file:line in each), and refused shadowing.
    pub broken: Vec<String>,
}

impl Instructions {
    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Instruction> {
        self.skills.iter().find(|s| s.name() == name)
    }
}

/// What discovery needs, captured from the process's state so that a session can discover
/// again each turn (a skill saved meanwhile is offered) without the [`App`].
#[derive(Clone)]
pub struct Discoverer {
    /// Directories in order: (path, origin, whether the path is one skill or a directory of them).
    sources: Vec<(std::path::PathBuf, &'static str, bool)>,
    /// Names a project skill may take from a user skill (`--allow-shadow`, config).
    allow_shadow: Vec<String>,
    /// Names component skills hold.
    taken: Vec<String>,
    /// config.toml as a table, for `requires.config`.
    config: Option<toml::Table>,
}

impl Discoverer {
    /// The sources of `app`: the user's skills directory, the project's `.agent/skills/`,
    /// then each `--skills DIR`. `taken`: names of component skills, which stay theirs.
    ///
    /// # Errors
    /// A broken configuration file.
    pub fn new(app: &mut App, taken: &[String]) -> Result<Discoverer> {
        let mut sources = vec![
            (app.paths.user_skills_dir(), "user", false),
            (
                app.project_root.join(".agent").join("skills"),
                "project",
                false,
            ),
        ];
        for d in &app.global.skills {
            if d.is_dir() {
                sources.push((d.clone(), "command-line", true));
            }
        }
        let mut allow_shadow = app.global.allow_shadow.clone();
        allow_shadow.extend(app.config()?.skills.allow_shadow.iter().cloned());
        Ok(Discoverer {
            sources,
            allow_shadow,
            taken: taken.to_vec(),
            config: read_config_table(&app.paths.config_file()),
        })
    }

    /// Finds every SKILL.md skill. A later source replaces an earlier one of the same
    /// name, except that a project skill taking a user skill's name needs
    /// `--allow-shadow NAME`; names of component skills stay theirs.
    pub fn discover(&self) -> Instructions {
        let env = HostEnvironment::new(|key: &str| config_truthy(self.config.as_ref(), key));
        let mut out = Instructions::default();
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for (dir, origin, single) in &self.sources {
            let found = if *single {
                agent_instructions::load_dir(dir)
            } else {
                agent_instructions::discover_dir(dir)
            };
            out.broken
                .extend(found.broken.iter().map(ParseError::to_string));
            for skill in found.skills {
                let name = skill.name().to_string();
                if self.taken.contains(&name) {
                    out.broken.push(format!(
                        "{}: the name `{name}` belongs to a component skill, which stays in use; rename this SKILL.md skill",
                        skill.file.display()
                    ));
                    continue;
                }
                let ineligible = agent_instructions::ineligibility(&skill.front, &env);
                let inst = Instruction {
                    skill,
                    origin,
                    ineligible,
                };
                match by_name.get(&name) {
                    Some(&i) => {
                        if *origin == "project"
                            && out.skills[i].origin == "user"
                            && !self.allow_shadow.contains(&name)
                        {
                            out.broken.push(format!(
                                "{}: a project skill may not replace your skill `{name}` without --allow-shadow {name}",
                                inst.skill.file.display()
                            ));
                            continue;
                        }
                        out.skills[i] = inst;
                    }
                    None => {
                        by_name.insert(name, out.skills.len());
                        out.skills.push(inst);
                    }
                }
            }
        }
        out.skills.sort_by(|a, b| a.name().cmp(b.name()));
        out
    }
}

/// [`Discoverer::discover`] over `app`'s sources.
///
/// # Errors
/// A broken configuration file.
pub fn discover(app: &mut App, taken: &[String]) -> Result<Instructions> {
    Ok(Discoverer::new(app, taken)?.discover())
}

fn read_config_table(path: &Path) -> Option<toml::Table> {
    let text = std::fs::read_to_string(path).ok()?;
    text.parse::<toml::Table>().ok()
}

/// A dotted key of config.toml that is true, a non-zero number or a non-empty string/list.
fn config_truthy(table: Option<&toml::Table>, key: &str) -> bool {
    let Some(mut t) = table else { return false };
    let parts: Vec<&str> = key.split('.').collect();
    for (i, p) in parts.iter().enumerate() {
        let Some(v) = t.get(*p) else { return false };
        if i + 1 == parts.len() {
            return match v {
                toml::Value::Boolean(b) => *b,
                toml::Value::Integer(n) => *n != 0,
                toml::Value::String(s) => !s.is_empty(),
                toml::Value::Array(a) => !a.is_empty(),
                toml::Value::Table(t) => !t.is_empty(),
                _ => true,
            };
        }
        match v {
            toml::Value::Table(inner) => t = inner,
            _ => return false,
        }
    }
    false
}

/// The content scan's findings for the skill's directory.
pub fn scan(skill: &InstructionSkill) -> Vec<Finding> {
    agent_instructions::scan_dir(&skill.dir)
}

/// Whether any finding blocks.
pub fn blocking(findings: &[Finding]) -> bool {
    findings.iter().any(|f| f.severity == Severity::High)
}

/// Appends one record to the audit log.
pub fn audit(app: &App, skill: &str, capability: &str, target: &str, decision: &str) -> Result<()> {
    audit_at(&app.paths, skill, capability, target, decision)
}

/// [`audit`] with the paths only.
pub fn audit_at(
    paths: &AgentPaths,
    skill: &str,
    capability: &str,
    target: &str,
    decision: &str,
) -> Result<()> {
    paths
        .ensure_dirs()
        .context("creating the agent's directories")?;
    let log = AuditLog::open(paths.audit_log_path())?;
    log.append(AuditRecord {
        skill: skill.into(),
        capability: capability.into(),
        target: target.into(),
        decision: decision.into(),
    })
    .context("writing the audit log")?;
    Ok(())
}

/// The `--allow` flag that grants `program` to `skill`.
pub fn allow_flag(skill: &str, program: &str) -> String {
    format!("--allow {skill}/shell:exec:{program}")
}

/// A loaded body: the instructions with arguments substituted and command output in place.
pub struct Loaded {
    /// The text for the model.
    pub text: String,
    /// What the user should be told: lines left out and the grant that would run them.
    pub notes: Vec<String>,
}

/// Loads the skill's body for an invocation with `args`: the content scan first (a
/// high-severity finding refuses, audited), then substitution and the `!` lines, each run
/// through the runtime's exec path under the skill's grants.
///
/// # Errors
/// The scan's refusal, naming file:line of each finding.
pub async fn load_body(
    paths: &AgentPaths,
    runtime: &Runtime,
    ctx: &Arc<CallContext>,
    inst: &Instruction,
    args: &str,
) -> Result<Loaded> {
    // Read again: the file may have changed since discovery.
    let skill = InstructionSkill::load(&inst.skill.dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    let findings = scan(&skill);
    if blocking(&findings) {
        audit_at(
            paths,
            skill.name(),
            "skill:load",
            &skill.dir.display().to_string(),
            "refused: content scan",
        )?;
        anyhow::bail!(
            "skill `{}` was not loaded: the content scan found\n{}",
            skill.name(),
            findings
                .iter()
                .map(|f| format!("  {}: {f}", skill.dir.display()))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    let program_skill = inst.program_skill();
    // First the commands (each once), then the text with their output in place.
    let mut commands: Vec<CommandLine> = Vec::new();
    agent_instructions::render(&skill, args, &mut |c| {
        commands.push(c.clone());
        RunOutcome::LeftOut(String::new())
    });
    let mut outcomes: HashMap<usize, RunOutcome> = HashMap::new();
    for c in &commands {
        let outcome = match runtime
            .run_program(ctx, &program_skill, &c.program, &c.args)
            .await
        {
            Ok(out) if out.exit_code == Some(0) => RunOutcome::Output(out.stdout),
            Ok(out) => RunOutcome::LeftOut(format!(
                "`{}` failed ({}): {}",
                c.display(),
                out.exit_code
                    .map_or("killed or timed out".to_string(), |c| format!("exit {c}")),
                out.stderr.trim()
            )),
            Err(ProgramError::Denied(why)) => RunOutcome::LeftOut(format!(
                "not run: {why}; to run it, grant shell:exec:{} to {} ({})",
                c.program,
                skill.name(),
                allow_flag(skill.name(), &c.program)
            )),
            Err(ProgramError::Failed(why)) => RunOutcome::LeftOut(format!("not run: {why}")),
        };
        outcomes.insert(c.line, outcome);
    }
    let rendered = agent_instructions::render(&skill, args, &mut |c| {
        outcomes
            .remove(&c.line)
            .unwrap_or_else(|| RunOutcome::LeftOut("not run".into()))
    });
    let notes = rendered
        .left_out
        .iter()
        .map(|l| {
            format!(
                "{}:{}: `{}` left out: {}",
                skill.file.display(),
                l.line,
                l.text,
                l.reason
            )
        })
        .collect();
    Ok(Loaded {
        text: rendered.text,
        notes,
    })
}

/// Runs [`load_body`] to completion from synchronous code inside the process's runtime: on
/// a thread of its own with its own current-thread runtime (the `!` lines' programs are
/// tokio processes), so no worker of the main runtime is blocked.
pub fn load_body_blocking(
    app: &App,
    runtime: &Arc<Runtime>,
    ctx: &Arc<CallContext>,
    inst: &Instruction,
    args: &str,
) -> Result<Loaded> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting a runtime for the skill's commands")?;
            rt.block_on(load_body(&app.paths, runtime, ctx, inst, args))
        })
        .join()
        .unwrap_or_else(|_| Err(anyhow::anyhow!("loading the skill's body panicked")))
    })
}

/// `--skills NAME` naming SKILL.md skills: each one's body, loaded now (content scan,
/// `$ARGUMENTS` = `args`, `!` lines under the grants), as an attachment of the first
/// message; the names are taken out of `explicit` (they are not components to activate).
/// What was left out is said on stderr.
///
/// # Errors
/// A skill refused by the content scan, or not offered here (the reasons named).
pub fn explicit_attachments(
    app: &mut App,
    explicit: &mut Vec<String>,
    runtime: &Arc<Runtime>,
    ctx: &Arc<CallContext>,
    args: &str,
) -> Result<Vec<agent_protocol::Attachment>> {
    if explicit.is_empty() {
        return Ok(Vec::new());
    }
    let found = discover(app, &[])?;
    let mut out = Vec::new();
    let mut kept = Vec::new();
    for name in explicit.drain(..) {
        let Some(inst) = found.get(&name) else {
            kept.push(name);
            continue;
        };
        if !inst.ineligible.is_empty() {
            anyhow::bail!(
                "--skills {name}: not offered here: {}",
                inst.ineligible.join("; ")
            );
        }
        let loaded = load_body_blocking(app, runtime, ctx, inst, args)?;
        for n in &loaded.notes {
            eprintln!("note: {n}");
        }
        out.push(agent_protocol::Attachment {
            name: format!("skill:{name}"),
            content: loaded.text,
        });
    }
    *explicit = kept;
    Ok(out)
}

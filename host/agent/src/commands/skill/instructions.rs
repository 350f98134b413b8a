//! `agent skill` for SKILL.md instruction skills: their rows in `skill list`, `skill info`,
//! install from a directory or a git repository (with a sub-path) after the content scan,
//! `skill save`, and `skill scan`.

use std::path::{Path, PathBuf};

use agent_instructions::{Finding, SaveRequest, Severity};
use agent_manifest::Permission;
use agent_registry::GitSource;
use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::app::App;
use crate::cli::{Format, UsageError, exit};
use crate::instructions::{self, Instruction, Instructions, audit, blocking};

/// The signature column's text for every SKILL.md skill.
pub(super) const UNSIGNED: &str = "unsigned instructions (SKILL.md: content scan + grants)";

/// Every SKILL.md skill (names of component skills stay theirs).
pub(super) fn discover(app: &mut App, components: &[String]) -> Result<Instructions> {
    let found = instructions::discover(app, components)?;
    for b in &found.broken {
        eprintln!("warning: skipping SKILL.md skill: {b}");
    }
    Ok(found)
}

/// The instruction skills installed from index `id`: name and version (for `skill update`,
/// which updates components only and says so for these).
pub(super) fn installed_from(app: &mut App, id: &str) -> Result<Vec<(String, String)>> {
    let found = instructions::discover(app, &[])?;
    Ok(found
        .skills
        .iter()
        .filter_map(|i| {
            let p = Provenance::read(&i.skill.dir)?;
            (p.source == format!("index:{id}")).then(|| (i.name().to_string(), p.version))
        })
        .collect())
}

fn grant_status(app: &mut App, inst: &Instruction) -> Result<Vec<(String, String)>> {
    let programs = inst.programs();
    if programs.is_empty() {
        return Ok(Vec::new());
    }
    let store = app.store()?;
    let allow = app.allowlist()?;
    let standing = agent_policy::standing(
        inst.name(),
        Permission::ShellExec,
        Some(&store),
        &allow,
        app.interactive,
    )?
    .to_string();
    Ok(programs
        .into_iter()
        .map(|p| (format!("shell:exec:{p}"), standing.clone()))
        .collect())
}

/// `skill list`'s rows for SKILL.md skills: NAME, VERSION, TYPES, SOURCE, PERMISSIONS.
pub(super) fn list_rows(app: &mut App, components: &[String]) -> Result<Vec<[String; 5]>> {
    let found = discover(app, components)?;
    let mut rows = Vec::new();
    for inst in &found.skills {
        let perms = grant_status(app, inst)?;
        let mut p = if perms.is_empty() {
            "(none)".to_string()
        } else {
            perms
                .iter()
                .map(|(p, st)| format!("{p} [{st}]"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !inst.ineligible.is_empty() {
            p.push_str(&format!("; not offered: {}", inst.ineligible.join("; ")));
        }
        let (version, source) = version_source(inst);
        rows.push([
            inst.name().to_string(),
            version.unwrap_or_else(|| "-".into()),
            "instructions (unsigned)".into(),
            source,
            p,
        ]);
    }
    Ok(rows)
}

/// The version and source shown for `inst`: from its provenance file when an index installed
/// it, else no version and where it was discovered (`user`, `project`, ...).
fn version_source(inst: &Instruction) -> (Option<String>, String) {
    match Provenance::read(&inst.skill.dir) {
        Some(p) => (Some(p.version), format!("{} ({})", p.source, inst.origin)),
        None => (None, inst.origin.to_string()),
    }
}

/// `skill list --format json`'s rows for SKILL.md skills.
pub(super) fn list_json(app: &mut App, components: &[String]) -> Result<Vec<serde_json::Value>> {
    let found = discover(app, components)?;
    let mut rows = Vec::new();
    for inst in &found.skills {
        let perms = grant_status(app, inst)?;
        let (version, source) = version_source(inst);
        rows.push(json!({
            "name": inst.name(),
            "version": version,
            "types": ["instructions"],
            "source": source,
            "signature": "unsigned-instructions",
            "description": inst.skill.front.description,
            "offered": inst.ineligible.is_empty(),
            "not_offered_because": inst.ineligible,
            "permissions": perms.iter().map(|(p, st)| json!({"permission": p, "status": st})).collect::<Vec<_>>(),
        }));
    }
    Ok(rows)
}

/// `skill info NAME` for a SKILL.md skill; `Ok(None)` when `name` is not one.
pub(super) fn info(app: &mut App, name: &str, format: Format) -> Result<Option<u8>> {
    let found = instructions::discover(app, &[])?;
    let Some(inst) = found.get(name) else {
        return Ok(None);
    };
    let f = &inst.skill.front;
    let findings = instructions::scan(&inst.skill);
    let perms = grant_status(app, inst)?;
    let files = resource_files(&inst.skill.dir);
    let (version, source) = version_source(inst);
    if format == Format::Json {
        let v = json!({
            "name": f.name,
            "description": f.description,
            "kind": "instructions",
            "version": version,
            "signature": "unsigned-instructions",
            "source": source,
            "dir": inst.skill.dir,
            "sha256": inst.skill.digest,
            "frontmatter": f,
            "offered": inst.ineligible.is_empty(),
            "not_offered_because": inst.ineligible,
            "permissions": perms.iter().map(|(p, st)| json!({"permission": p, "status": st})).collect::<Vec<_>>(),
            "files": files,
            "body": inst.skill.body,
            "findings": findings,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(Some(exit::OK));
    }
    println!("{} — {}", f.name, f.description);
    println!("  type:       instructions (SKILL.md)");
    if let Some(v) = &version {
        println!("  version:    {v}");
    }
    println!("  source:     {source} ({})", inst.skill.dir.display());
    if version.is_some() {
        println!(
            "  signature:  {UNSIGNED}; the artifact matched the digest in the index's signed snapshot at install"
        );
    } else {
        println!("  signature:  {UNSIGNED}");
    }
    println!("  sha256:     {}", inst.skill.digest);
    match f.context {
        agent_instructions::Context::Inline => println!("  context:    inline"),
        agent_instructions::Context::Fork => println!(
            "  context:    fork (runs as a sub-agent: a fresh conversation; only its answer comes back)"
        ),
    }
    if let Some(m) = &f.model {
        match f.context {
            agent_instructions::Context::Inline => {
                println!("  model:      {m} (the turn's requests once it is loaded)")
            }
            agent_instructions::Context::Fork => {
                println!("  model:      {m} (the sub-agent's requests)")
            }
        }
    }
    if !f.tools.is_empty() {
        println!("  tools:      {}", f.tools.join(", "));
    }
    match &f.allowed_tools {
        Some(t) => println!(
            "  allowed tools (a constraint while it is active): {}",
            t.join(", ")
        ),
        None => println!("  allowed tools: any"),
    }
    println!(
        "  invocation: {}{}",
        if f.user_invocable {
            format!("/{} by the user", f.name)
        } else {
            "not by the user".into()
        },
        if f.disable_model_invocation {
            "; never by the model"
        } else {
            "; by the model (load_skill)"
        }
    );
    let r = &f.requires;
    for (label, v) in [
        ("requires bins", &r.bins),
        ("requires anyBins", &r.any_bins),
        ("requires env", &r.env),
        ("requires config", &r.config),
        ("os", &f.os),
    ] {
        if !v.is_empty() {
            println!("  {label}: {}", v.join(", "));
        }
    }
    if inst.ineligible.is_empty() {
        println!("  offered:    yes");
    } else {
        println!("  offered:    no");
        for why in &inst.ineligible {
            println!("    - {why}");
        }
    }
    println!("  permissions:");
    if perms.is_empty() {
        println!("    (none: no `!command` lines)");
    }
    for (p, st) in &perms {
        println!("    {p:<24} {st}");
    }
    if !files.is_empty() {
        println!("  files:      {}", files.join(", "));
    }
    for u in &f.unknown {
        println!(
            "  note: unknown frontmatter key `{}` ({}:{}) kept, not used",
            u.key,
            inst.skill.file.display(),
            u.line
        );
    }
    print_findings(&inst.skill.dir, &findings);
    Ok(Some(exit::OK))
}

fn resource_files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            if e.file_name().to_string_lossy().starts_with('.') || out.len() >= 200 {
                continue;
            }
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else if let Ok(rel) = p.strip_prefix(root)
                && rel != Path::new(agent_instructions::SKILL_FILE)
            {
                out.push(rel.display().to_string());
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

fn print_findings(dir: &Path, findings: &[Finding]) {
    if findings.is_empty() {
        println!("  content scan: no findings");
        return;
    }
    println!("  content scan:");
    for f in findings {
        println!("    {}/{f}", dir.display());
    }
}

/// `skill scan DIR`: the content scan of a skill directory; exit 1 on a high finding.
pub(super) fn scan(path: &Path) -> Result<u8> {
    if !path.is_dir() {
        return Err(UsageError(format!("{}: not a directory", path.display())).into());
    }
    let findings = agent_instructions::scan_dir(path);
    if findings.is_empty() {
        println!("{}: no findings", path.display());
        return Ok(exit::OK);
    }
    for f in &findings {
        println!("{}/{f}", path.display());
    }
    Ok(if blocking(&findings) {
        exit::FAILURE
    } else {
        exit::OK
    })
}

/// A git source followed by `//SUB/PATH`: the repository and the skill's directory in it.
fn split_subpath(target: &str) -> (&str, Option<&str>) {
    let scheme_end = target.find("://").map_or(0, |i| i + 3);
    match target[scheme_end..].rfind("//") {
        Some(i) => {
            let at = scheme_end + i;
            (&target[..at], Some(&target[at + 2..]))
        }
        None => (target, None),
    }
}

/// `skill install` of a SKILL.md skill: `Ok(None)` when `target` is not one (a component
/// skill, an index name). Directories and git repositories (`SOURCE//SUB/PATH` for a skill
/// inside the repository) are scanned before anything is installed.
pub(super) fn try_install(app: &mut App, target: &str, force: bool) -> Result<Option<u8>> {
    let path = Path::new(target);
    if path.is_dir() {
        if !agent_instructions::discover::is_instruction_dir(path) {
            return Ok(None);
        }
        let from = format!("path:{}", abs(path).display());
        return install_from(app, path, &from, force, None).map(Some);
    }
    let (source, sub) = split_subpath(target);
    let Some(git) = GitSource::parse(source).map_err(|e| UsageError(format!("{target}: {e}")))?
    else {
        return Ok(None);
    };
    let progress = agent_registry::NoProgress;
    let checkout = agent_registry::checkout_git(
        &git.url,
        git.rev.as_deref(),
        &app.paths.registry_cache_dir(),
        &progress,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let dir = match sub {
        Some(s) => agent_instructions::render::confined(&checkout, s)
            .map_err(|e| UsageError(format!("{target}: {e}")))?,
        None => checkout.clone(),
    };
    if !agent_instructions::discover::is_instruction_dir(&dir) {
        if sub.is_some() {
            bail!("{target}: `{}` holds no SKILL.md", sub.unwrap_or_default());
        }
        return Ok(None);
    }
    install_from(app, &dir, &format!("git:{target}"), force, None).map(Some)
}

fn abs(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or(p.to_path_buf())
}

/// `skill install NAME --index DIR` of an instruction record: the artifact checked against the
/// signed snapshot's versions file, unpacked, scanned, and put in place with its provenance.
pub(super) fn install_from_index(
    app: &mut App,
    index: &agent_registry::Index,
    rec: &agent_registry::InstructionRecord,
    index_id: &str,
    force: bool,
) -> Result<u8> {
    let provenance = Provenance {
        source: format!("index:{index_id}"),
        version: rec.version.to_string(),
    };
    let from = format!("index:{index_id} {} {}", rec.name, rec.version);
    let name = rec.name.clone();
    install_checked(
        app,
        &name,
        &from,
        force,
        Some(&provenance),
        &mut |dest, check| {
            index
                .install_instructions(rec, dest, check, &agent_registry::NoProgress)
                .map_err(|e| anyhow::anyhow!("{e}"))
        },
    )
}

/// Where an instruction skill installed from an index came from: written into the staged
/// copy (so it appears with the rename) as [`PROVENANCE_FILE`].
pub(crate) struct Provenance {
    pub source: String,
    pub version: String,
}

/// The hidden file in an installed instruction skill naming the index and version.
pub(crate) const PROVENANCE_FILE: &str = ".agent-installed.json";

impl Provenance {
    fn write(&self, dir: &Path) -> Result<(), String> {
        let text = json!({"source": self.source, "version": self.version}).to_string();
        std::fs::write(dir.join(PROVENANCE_FILE), text)
            .map_err(|e| format!("{}: {e}", dir.join(PROVENANCE_FILE).display()))
    }

    /// Reads it back; `None` when the skill was not installed from an index.
    pub(crate) fn read(dir: &Path) -> Option<Provenance> {
        let text = std::fs::read_to_string(dir.join(PROVENANCE_FILE)).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        Some(Provenance {
            source: v.get("source")?.as_str()?.to_string(),
            version: v.get("version")?.as_str()?.to_string(),
        })
    }
}

type Installer<'a> =
    dyn FnMut(&Path, &mut dyn FnMut(&Path) -> Result<(), String>) -> Result<PathBuf> + 'a;

fn install_from(
    app: &mut App,
    src: &Path,
    from: &str,
    force: bool,
    provenance: Option<&Provenance>,
) -> Result<u8> {
    // Parsed first (errors name file and line), under the name the frontmatter gives.
    let mut skill = agent_instructions::parse::parse(
        &src.join(agent_instructions::SKILL_FILE),
        &std::fs::read_to_string(src.join(agent_instructions::SKILL_FILE))
            .with_context(|| format!("reading {}", src.display()))?,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    skill.dir = src.to_path_buf();
    let name = skill.name().to_string();
    install_checked(app, &name, from, force, provenance, &mut |dest, check| {
        agent_registry::install_instruction_dir(src, dest, &name, check)
            .map_err(|e| anyhow::anyhow!("{e}"))
    })
}

fn install_checked(
    app: &mut App,
    name: &str,
    from: &str,
    force: bool,
    provenance: Option<&Provenance>,
    installer: &mut Installer,
) -> Result<u8> {
    let name = name.to_string();
    let dest = app.paths.user_skills_dir();
    crate::app::tidy_skills_dir(&dest);
    let mut scanned: Vec<Finding> = Vec::new();
    let installed = installer(&dest, &mut |staged| {
        scanned = agent_instructions::scan_dir(staged);
        if blocking(&scanned) && !force {
            return Err(format!(
                "not installed: the content scan of {from} found high-severity content:\n{}\n(read it; `--force` installs it anyway, audited)",
                scanned
                    .iter()
                    .filter(|f| f.severity == Severity::High)
                    .map(|f| format!("  {f}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ));
        }
        match provenance {
            Some(p) => p.write(staged),
            None => Ok(()),
        }
    });
    let high = scanned
        .iter()
        .filter(|f| f.severity == Severity::High)
        .count();
    let installed = match installed {
        Ok(dir) => dir,
        Err(e) => {
            if high > 0 && !force {
                audit(
                    app,
                    &name,
                    "skill:install",
                    from,
                    &format!("refused: content scan ({high} high)"),
                )?;
            }
            return Err(e);
        }
    };
    if high > 0 {
        audit(
            app,
            &name,
            "skill:install",
            from,
            &format!("forced: content scan ({high} high)"),
        )?;
        eprintln!("warning: installed despite {high} high-severity finding(s) (--force):");
    }
    for f in &scanned {
        eprintln!("  {f}");
    }
    match provenance {
        Some(p) => println!(
            "installed {name} {} (SKILL.md instructions from {}, covered by the signed snapshot) into {}",
            p.version,
            p.source,
            installed.display()
        ),
        None => println!(
            "installed {name} (SKILL.md instructions, unsigned) into {}",
            installed.display()
        ),
    }
    Ok(exit::OK)
}

/// `skill save NAME`: writes `<dir>/<name>/SKILL.md` (and resources) after the content scan.
pub(super) fn save(app: &mut App, args: SaveArgs) -> Result<u8> {
    let body = match &args.body {
        Some(p) if p.as_os_str() == "-" => {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)
                .context("reading the body from stdin")?;
            s
        }
        Some(p) => std::fs::read_to_string(p).with_context(|| format!("--body {}", p.display()))?,
        None => String::new(),
    };
    let mut resources = Vec::new();
    for r in &args.resources {
        let Some((rel, file)) = r.split_once('=') else {
            return Err(UsageError(format!("--resource {r}: expected REL/PATH=FILE")).into());
        };
        let content = std::fs::read_to_string(file).with_context(|| format!("--resource {r}"))?;
        resources.push((rel.to_string(), content));
    }
    let dir = if args.in_project {
        app.project_root.join(".agent").join("skills")
    } else {
        app.paths.user_skills_dir()
    };
    let req = SaveRequest {
        name: args.name.clone(),
        description: args.description.clone(),
        body,
        resources,
        replace: args.replace,
    };
    match agent_instructions::save(&dir, &req) {
        Ok((path, findings)) => {
            for f in &findings {
                eprintln!("  {f}");
            }
            audit(
                app,
                &args.name,
                "skill:save",
                &path.display().to_string(),
                "saved",
            )?;
            println!("saved {} into {}", args.name, path.display());
            Ok(exit::OK)
        }
        Err(agent_instructions::SaveError::Invalid(m)) => Err(UsageError(m).into()),
        Err(e) => {
            if matches!(e, agent_instructions::SaveError::Refused(_)) {
                audit(
                    app,
                    &args.name,
                    "skill:save",
                    &dir.join(&args.name).display().to_string(),
                    "refused: content scan",
                )?;
            }
            bail!("{} was not saved: {e}", args.name)
        }
    }
}

/// `skill save`'s arguments.
pub(crate) struct SaveArgs {
    pub name: String,
    pub description: String,
    pub body: Option<PathBuf>,
    pub resources: Vec<String>,
    pub in_project: bool,
    pub replace: bool,
}

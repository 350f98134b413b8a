//! `agent skill ...`

use std::path::{Path, PathBuf};

use agent_manifest::{Manifest, Permission};
use agent_runtime::{
    ComponentInfo, ExportKind, ImportNeed, Signer, Skill, SkillError, SkillPackage,
};
use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::app::{App, permission_status};
use crate::cli::{Format, SkillCommand, exit};

pub async fn run(app: &mut App, cmd: SkillCommand) -> Result<u8> {
    match cmd {
        SkillCommand::List {
            format,
            available: false,
            index: _,
        } => list(app, format),
        SkillCommand::List {
            format,
            available: true,
            index,
        } => crate::commands::registry::available(app, &index, format),
        SkillCommand::Search { query, index } => {
            crate::commands::registry::search(app, &index, &query)
        }
        SkillCommand::Install { target, index } => {
            crate::commands::registry::install(app, &index, &target, false)
        }
        SkillCommand::Add { target, index } => {
            crate::commands::registry::install(app, &index, &target, true)
        }
        SkillCommand::Remove { name, in_project } => {
            crate::commands::registry::remove(app, &name, in_project)
        }
        SkillCommand::Update { name, index } => {
            crate::commands::registry::update(app, &index, name.as_deref())
        }
        SkillCommand::Info { name, format } => info(app, &name, format).await,
        SkillCommand::Inspect { target, format } => inspect(app, &target, format),
        SkillCommand::Call { skill, tool, input } => call(app, &skill, &tool, &input).await,
        SkillCommand::Test { path } => test(app, &path).await,
        SkillCommand::Create {
            name,
            kind,
            lang,
            dir,
            sdk,
        } => crate::scaffold::create(&name, kind, lang, dir.as_deref(), sdk.as_deref()),
        SkillCommand::Build { path, key, no_sign } => {
            let key = match (no_sign, key) {
                (true, _) => crate::build::Signing::None,
                (false, Some(k)) => crate::build::Signing::Key(k),
                (false, None) => crate::build::Signing::Default(app.paths.keys_dir()),
            };
            crate::build::build(path.as_deref(), key)
        }
        SkillCommand::Sign { path, key } => sign(&path, &key),
        SkillCommand::Permissions { name, revoke } => permissions(app, &name, revoke.as_deref()),
    }
}

fn types(m: &Manifest) -> String {
    m.types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn signer_text(s: &Signer) -> String {
    match s {
        Signer::Key(k) => format!("signed by key {k}"),
        Signer::Builtin(k) => format!("built-in (build key {k})"),
        Signer::Unsigned => "UNSIGNED (--allow-unsigned)".into(),
        Signer::NoComponent => "no component (prompt only)".into(),
    }
}

fn list(app: &mut App, format: Format) -> Result<u8> {
    // Manifests and signatures only: listing never compiles a component.
    let skills = app.verify_all()?;
    // A database that cannot be read is an error, not a list without the stored grants.
    let store = app.store()?;
    let allow = app.allowlist()?;
    let statuses = skills
        .iter()
        .map(|s| permission_status(&s.package.manifest, Some(&store), &allow, app.interactive))
        .collect::<Result<Vec<Vec<(Permission, String)>>, _>>()?;
    if format == Format::Json {
        let rows: Vec<serde_json::Value> = skills
            .iter()
            .zip(&statuses)
            .map(|(s, perms)| {
                let m = &s.package.manifest;
                json!({
                    "name": m.name,
                    "version": m.version.to_string(),
                    "types": m.types,
                    "source": s.package.origin.as_str(),
                    "signature": s.signer,
                    "permissions": perms
                        .iter()
                        .map(|(p, st)| json!({"permission": p.as_str(), "status": st}))
                        .collect::<Vec<_>>(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(exit::OK);
    }
    let mut table = vec![[
        "NAME".to_string(),
        "VERSION".into(),
        "TYPES".into(),
        "SOURCE".into(),
        "PERMISSIONS".into(),
    ]];
    for (s, perms) in skills.iter().zip(&statuses) {
        let perms = if perms.is_empty() {
            "(none)".to_string()
        } else {
            perms
                .iter()
                .map(|(p, st)| format!("{p} [{st}]"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let m = &s.package.manifest;
        table.push([
            m.name.clone(),
            m.version.to_string(),
            types(m),
            s.package.origin.as_str().to_string(),
            perms,
        ]);
    }
    print_table(&table);
    Ok(exit::OK)
}

pub(crate) fn print_table<const N: usize>(rows: &[[String; N]]) {
    let mut widths = [0usize; N];
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    for row in rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
            }
        }
        println!("{}", line.trim_end());
    }
}

async fn info(app: &mut App, name: &str, format: Format) -> Result<u8> {
    let skill = app.load_one(name)?;
    let ctx = app.call_context("cli")?;
    let tools = if skill.exports(ExportKind::Tool) {
        awaited(app.runtime()?.list_tools(&skill, &ctx).await)?
    } else {
        Vec::new()
    };
    let store = app.store()?;
    let allow = app.allowlist()?;
    let perms = permission_status(&skill.manifest, Some(&store), &allow, app.interactive)?;
    if format == Format::Json {
        let v = json!({
            "manifest": skill.manifest,
            "source": skill.origin.as_str(),
            "dir": skill.dir,
            "signature": skill.signer,
            "digest": skill.digest,
            "permissions": perms.iter().map(|(p, st)| json!({"permission": p.as_str(), "status": st})).collect::<Vec<_>>(),
            "tools": tools.iter().map(|t| json!({"name": t.name, "description": t.description, "requires_approval": t.requires_approval, "input_schema": schema_json(&t.input_schema, "input schema").unwrap_or(serde_json::Value::Null)})).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(exit::OK);
    }
    let m = &skill.manifest;
    println!("{} {} — {}", m.name, m.version, m.description);
    println!("  types:      {}", types(m));
    println!(
        "  source:     {}{}",
        skill.origin.as_str(),
        skill
            .dir
            .as_ref()
            .map(|d| format!(" ({})", d.display()))
            .unwrap_or_default()
    );
    println!("  signature:  {}", signer_text(&skill.signer));
    if let Some(d) = &skill.digest {
        println!("  sha256:     {d}");
    }
    for (label, v) in [
        ("author", &m.author),
        ("license", &m.license),
        ("homepage", &m.homepage),
    ] {
        if let Some(v) = v {
            println!("  {:<11} {v}", format!("{label}:"));
        }
    }
    println!("  permissions:");
    if perms.is_empty() {
        println!("    (none: pure computation)");
    }
    for (p, st) in &perms {
        println!("    {p:<13} {st:<18} {}", p.describe());
    }
    if !m.exec.is_empty() {
        println!("  exec allowlist: {}", m.exec.join(", "));
    }
    if !m.hosts.is_empty() {
        println!(
            "  hosts:          {}",
            m.hosts
                .iter()
                .map(|h| h.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !m.env.is_empty() {
        println!("  env:            {}", m.env.join(", "));
    }
    if !tools.is_empty() {
        println!("  tools:");
        for t in &tools {
            let approval = if t.requires_approval {
                " (asks before running)"
            } else {
                ""
            };
            println!("    {}{approval} — {}", t.name, t.description);
        }
    }
    for w in m.warnings() {
        println!("  note: {w}");
    }
    Ok(exit::OK)
}

/// A runtime call's result with its error as text (the runtime's errors
/// print as the user should read them).
fn awaited<T, E: std::fmt::Display>(r: Result<T, E>) -> Result<T> {
    r.map_err(|e| anyhow::anyhow!("{e}"))
}

fn could_do(info: &ComponentInfo, m: Option<&Manifest>) -> Vec<String> {
    let mut out = Vec::new();
    let mut perms: Vec<Permission> = info.needed_permissions();
    if info.uses_filesystem()
        && let Some(m) = m
    {
        for p in [Permission::FileRead, Permission::FileWrite] {
            if m.declares(p) {
                perms.push(p);
            }
        }
    }
    if let Some(m) = m {
        if m.declares(Permission::EnvRead) {
            perms.push(Permission::EnvRead);
        }
        if m.declares(Permission::EnvWrite) {
            perms.push(Permission::EnvWrite);
        }
    }
    perms.sort();
    perms.dedup();
    for p in perms {
        let scope = match (p, m) {
            (Permission::ShellExec, Some(m)) if !m.exec.is_empty() => {
                format!(": {}", m.exec.join(", "))
            }
            (Permission::ShellExec, _) => ": ANY program".to_string(),
            (Permission::NetFetch, Some(m)) => format!(
                ": {}",
                m.hosts
                    .iter()
                    .map(|h| h.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            (Permission::EnvRead | Permission::EnvWrite, Some(m)) => {
                format!(": {}", m.env.join(", "))
            }
            _ => String::new(),
        };
        out.push(format!("{} ({p}){scope}", p.describe()));
    }
    if out.is_empty() {
        out.push("nothing beyond computing: no files, programs, network or environment".into());
    }
    out
}

fn inspect(app: &mut App, target: &str, format: Format) -> Result<u8> {
    let path = Path::new(target);
    let (manifest, bytes, origin_label): (Option<Manifest>, Vec<u8>, String) = if path.is_file() {
        (
            None,
            std::fs::read(path).with_context(|| format!("reading {}", path.display()))?,
            path.display().to_string(),
        )
    } else if path.join("SKILL.yaml").is_file() {
        let pkg = SkillPackage::from_dir(path, agent_runtime::Origin::Path)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let bytes = pkg
            .component
            .as_deref()
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        (Some(pkg.manifest), bytes, path.display().to_string())
    } else {
        let (packages, _) = app.discover()?;
        let pkg = packages
            .into_iter()
            .find(|p| p.manifest.name == target)
            .with_context(|| {
                format!("`{target}` is neither a file, a skill directory nor a known skill name")
            })?;
        let label = pkg
            .dir
            .as_ref()
            .map(|d| d.display().to_string())
            .unwrap_or_else(|| "built-in".into());
        let bytes = pkg
            .component
            .as_deref()
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        let builtin = pkg.origin == agent_runtime::Origin::Builtin;
        let label = if builtin {
            format!("{label} (built-in)")
        } else {
            label
        };
        (Some(pkg.manifest), bytes, label)
    };
    if bytes.is_empty() {
        println!("{origin_label}: no component (a prompt-only skill)");
        return Ok(exit::OK);
    }
    let trust = app.trust()?;
    let origin = if origin_label.ends_with("(built-in)") {
        agent_runtime::Origin::Builtin
    } else {
        agent_runtime::Origin::Path
    };
    let (info, sig) = app.runtime()?.inspect_component(&bytes, &trust, origin)?;
    let sig_text = match &sig {
        Ok(k) => format!("valid, signed by trusted key {k}"),
        Err(e) => format!("NOT VERIFIED: {e}"),
    };
    let problems = manifest
        .as_ref()
        .map(|m| agent_runtime::inspect::check(&info, m))
        .unwrap_or_default();
    if format == Format::Json {
        let v = json!({
            "target": origin_label,
            "signature": {"verified": sig.is_ok(), "detail": sig_text},
            "imports": info.imports,
            "contract": info.contract.map(|v| v.to_string()),
            "exports": info.exports.iter().map(|e| info.export_name(*e)).chain(info.other_exports.iter().cloned()).collect::<Vec<_>>(),
            "needs": info.needed_permissions().iter().map(|p| p.as_str()).collect::<Vec<_>>(),
            "declared": manifest.as_ref().map(|m| m.permissions.iter().map(|p| p.as_str()).collect::<Vec<_>>()),
            "could_do": could_do(&info, manifest.as_ref()),
            "problems": problems.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(if sig.is_ok() && problems.is_empty() {
            exit::OK
        } else {
            exit::FAILURE
        });
    }
    if let Some(m) = &manifest {
        println!("{} {} ({origin_label})", m.name, m.version);
    } else {
        println!("{origin_label}");
    }
    println!("signature: {sig_text}");
    println!("contract: {}", contract_line(info.contract));
    println!("exports:");
    for e in &info.exports {
        println!("  {} ({})", info.export_name(*e), e.skill_type());
    }
    for e in &info.other_exports {
        println!("  {e} (not used by agent)");
    }
    println!("imports:");
    for i in &info.imports {
        let need = match &i.need {
            ImportNeed::Nothing if i.name.starts_with("wasi:filesystem/") => {
                "files only with file:read / file:write".to_string()
            }
            ImportNeed::Nothing => "no permission".to_string(),
            ImportNeed::Permission(p) => {
                let declared = manifest
                    .as_ref()
                    .map(|m| {
                        if m.declares(*p) {
                            " (declared)"
                        } else {
                            " (NOT declared)"
                        }
                    })
                    .unwrap_or("");
                format!("needs {p}{declared}")
            }
            ImportNeed::Forbidden(r) => format!("NEVER LINKED: {r}"),
            ImportNeed::Unknown(r) => format!("UNKNOWN: {r}"),
        };
        println!("  {:<40} {need}", i.name);
    }
    println!("could, once granted:");
    for c in could_do(&info, manifest.as_ref()) {
        println!("  - {c}");
    }
    for p in &problems {
        println!("problem: {p}");
    }
    Ok(if sig.is_ok() && problems.is_empty() {
        exit::OK
    } else {
        exit::FAILURE
    })
}

async fn call(app: &mut App, skill_name: &str, tool: &str, input: &str) -> Result<u8> {
    let skill = app.load_one(skill_name)?;
    if !skill.exports(ExportKind::Tool) {
        bail!(
            "skill `{}` has no tools (it is not a tool skill)",
            skill.name()
        );
    }
    let ctx = app.call_context("cli")?;
    let verbose = app.global.verbose;
    let rt = app.runtime()?;
    let tools = awaited(rt.list_tools(&skill, &ctx).await)?;
    let Some(spec) = tools.iter().find(|t| t.name == tool) else {
        bail!(
            "skill `{}` has no tool `{tool}` (its tools: {})",
            skill.name(),
            tools
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    if let Err(problem) = agent_runtime::schema::check_input(&spec.input_schema, input) {
        eprintln!("error: --input for `{tool}`: {problem}");
        return Ok(exit::USAGE);
    }
    let (result, logs) = awaited(rt.call_tool(&skill, &ctx, tool, input).await)?;
    if verbose {
        for l in &logs {
            eprintln!("[{} {}] {}", skill.name(), l.level, l.message);
        }
    }
    let denied = app.report_denials();
    match result {
        Ok(out) => {
            println!("{}", out.text);
            Ok(exit::OK)
        }
        Err(err) => {
            let (kind, msg) = match &err {
                SkillError::InvalidInput(m) => ("invalid input", m),
                SkillError::NotFound(m) => ("not found", m),
                SkillError::Denied(m) => ("denied", m),
                SkillError::Failed(m) => ("failed", m),
            };
            eprintln!("error: {}.{tool} {kind}: {msg}", skill.name());
            Ok(if denied || matches!(err, SkillError::Denied(_)) {
                exit::DENIED
            } else {
                exit::FAILURE
            })
        }
    }
}

async fn test(app: &mut App, path: &Path) -> Result<u8> {
    let mut problems = Vec::new();
    let manifest = match Manifest::load_dir(path) {
        Ok(m) => {
            println!("ok    manifest {} {} ({})", m.name, m.version, types(&m));
            m
        }
        Err(e) => {
            println!("FAIL  manifest: {e}");
            return Ok(exit::FAILURE);
        }
    };
    let pkg = match SkillPackage::from_dir(path, agent_runtime::Origin::Path) {
        Ok(p) => p,
        Err(e) => {
            println!("FAIL  {e}");
            return Ok(exit::FAILURE);
        }
    };
    let trust = app.trust()?;
    let runtime = app.runtime()?.clone();
    let skill: Skill = match runtime.load(pkg, &trust) {
        Ok(s) => {
            crate::cache_audit::report_recompiled(&app.paths, &runtime, &s);
            println!("ok    signature: {}", signer_text(&s.signer));
            println!("ok    imports match permissions, exports match types");
            s
        }
        Err(e) => {
            println!("FAIL  load: {e}");
            return Ok(exit::FAILURE);
        }
    };
    let ctx = app.call_context("cli")?;
    if skill.exports(ExportKind::Tool) {
        match awaited(runtime.list_tools(&skill, &ctx).await) {
            Ok(tools) => {
                println!("ok    {} tool(s):", tools.len());
                for t in &tools {
                    let schema_ok = schema_json(&t.input_schema, "input schema")
                        .map(|v| v.is_object())
                        .unwrap_or(false);
                    if !schema_ok {
                        problems.push(format!(
                            "tool `{}`: its input schema is not a JSON object",
                            t.name
                        ));
                    }
                    println!("        {} — {}", t.name, t.description);
                    match manifest.tool(&t.name) {
                        None if manifest.tools.is_empty() => {}
                        None => problems.push(format!("tool `{}` is offered by the component but not listed in SKILL.yaml `tools`", t.name)),
                        Some(decl) => {
                            if decl.requires_approval != t.requires_approval {
                                problems.push(format!("tool `{}`: requires_approval is {} in SKILL.yaml but {} in the component", t.name, decl.requires_approval, t.requires_approval));
                            }
                            if let Some(file) = &decl.input_schema_file {
                                let p = manifest.resolve_path(path, file);
                                match std::fs::read_to_string(&p).map_err(|e| e.to_string()).and_then(|s| schema_json(&s, p.display())) {
                                    Ok(file_schema) => {
                                        let comp = schema_json(&t.input_schema, "input schema").unwrap_or_default();
                                        if file_schema != comp {
                                            problems.push(format!("tool `{}`: {} differs from the schema the component returns", t.name, p.display()));
                                        }
                                    }
                                    Err(e) => problems.push(format!("tool `{}`: input_schema_file {}: {e}", t.name, p.display())),
                                }
                            }
                        }
                    }
                }
                for decl in &manifest.tools {
                    if !tools.iter().any(|t| t.name == decl.name) {
                        problems.push(format!(
                            "SKILL.yaml lists tool `{}` but the component does not offer it",
                            decl.name
                        ));
                    }
                }
            }
            Err(e) => problems.push(format!("list-tools failed: {e}")),
        }
    }
    let others = test_other_exports(&runtime, &ctx, &skill, &manifest).await;
    problems.extend(others);
    if manifest.tools.is_empty() && skill.exports(ExportKind::Tool) {
        println!(
            "note  SKILL.yaml lists no `tools`: users see them only after loading the component"
        );
    }
    for w in manifest.warnings() {
        println!("note  {w}");
    }
    if problems.is_empty() {
        println!("PASS  {}", manifest.name);
        Ok(exit::OK)
    } else {
        for p in &problems {
            println!("FAIL  {p}");
        }
        Ok(exit::FAILURE)
    }
}

/// `agent skill test` for prompt, workflow, scanner and transform exports:
/// calls what is pure (fragments for this project, the workflow and scanner
/// lists) and checks them against the manifest. Returns the problems found.
async fn test_other_exports(
    runtime: &agent_runtime::Runtime,
    ctx: &std::sync::Arc<agent_runtime::CallContext>,
    skill: &Skill,
    manifest: &Manifest,
) -> Vec<String> {
    let mut problems = Vec::new();
    if skill.exports(ExportKind::Prompt) {
        let context = agent_runtime::PromptContext {
            mode: "cli".into(),
            user_message: String::new(),
            languages: ctx.project.languages.clone(),
            max_tokens: manifest
                .prompt
                .as_ref()
                .map(|p| p.max_context_tokens)
                .unwrap_or(2000),
        };
        match awaited(runtime.prompt_fragments(skill, ctx, &context).await) {
            Ok(fragments) => {
                println!(
                    "ok    {} prompt fragment(s) for this project (languages: {}):",
                    fragments.len(),
                    if context.languages.is_empty() {
                        "none".to_string()
                    } else {
                        context.languages.join(", ")
                    }
                );
                for f in &fragments {
                    println!(
                        "        {} (priority {}, {} chars)",
                        f.title,
                        f.priority,
                        f.content.chars().count()
                    );
                    if f.title.trim().is_empty() {
                        problems.push("a prompt fragment has an empty title".into());
                    }
                }
            }
            Err(e) => problems.push(format!("fragments failed: {e}")),
        }
    }
    if skill.exports(ExportKind::Workflow) {
        match awaited(runtime.list_workflows(skill, ctx).await) {
            Ok(workflows) => {
                println!("ok    {} workflow(s):", workflows.len());
                for w in &workflows {
                    println!("        {} — {}", w.name, w.description);
                    let schema_ok = schema_json(&w.input_schema, "input schema")
                        .map(|v| v.is_object())
                        .unwrap_or(false);
                    if !schema_ok {
                        problems.push(format!(
                            "workflow `{}`: its input schema is not a JSON object",
                            w.name
                        ));
                    }
                }
                if workflows.is_empty() {
                    problems.push("the workflow export offers no workflow".into());
                }
            }
            Err(e) => problems.push(format!("list-workflows failed: {e}")),
        }
    }
    if skill.exports(ExportKind::Scanner) {
        let listed: Vec<&str> = manifest
            .security_rules
            .as_ref()
            .map(|r| r.scanners.iter().map(|s| s.name.as_str()).collect())
            .unwrap_or_default();
        let offered = awaited(
            async {
                let mut instance = runtime.instantiate_bare(skill, ctx).await?;
                instance.list_scanners().await
            }
            .await,
        );
        match offered {
            Ok(scanners) => {
                println!("ok    {} scanner(s):", scanners.len());
                for sc in &scanners {
                    println!("        {} — {}", sc.name, sc.description);
                    if !listed.is_empty() && !listed.contains(&sc.name.as_str()) {
                        problems.push(format!(
                            "scanner `{}` is offered by the component but not listed in SKILL.yaml `security_rules.scanners`",
                            sc.name
                        ));
                    }
                }
                for name in &listed {
                    if !scanners.iter().any(|sc| sc.name == *name) {
                        problems.push(format!(
                            "SKILL.yaml lists scanner `{name}` but the component does not offer it"
                        ));
                    }
                }
            }
            Err(e) => problems.push(format!("list-scanners failed: {e}")),
        }
    }
    if skill.exports(ExportKind::Transform) {
        println!(
            "ok    transform export (applied to the final output of `agent run` when the skill is active)"
        );
    }
    if skill.exports(ExportKind::Hooks) {
        match awaited(runtime.hook_subscriptions(skill, ctx).await) {
            Ok(subs) => println!("ok    {} hook subscription(s)", subs.len()),
            Err(e) => problems.push(format!("hook subscriptions failed: {e}")),
        }
    }
    problems
}

fn sign(path: &Path, key_file: &Path) -> Result<u8> {
    let key = agent_trust::SecretKey::read(key_file)?;
    let dir: PathBuf = if path.is_dir() {
        path.to_path_buf()
    } else {
        // A .wasm path: the skill directory holding it must name it.
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = parent.unwrap_or(Path::new("."));
        let named = Manifest::load_dir(parent)
            .ok()
            .and_then(|m| m.component_path(parent))
            .is_some_and(|c| c == parent.join(path.file_name().unwrap_or_default()));
        if !named {
            anyhow::bail!(
                "{}: a signature covers the component, SKILL.yaml and the files it names; \
                 give the skill directory (the one holding SKILL.yaml that names this component)",
                path.display()
            );
        }
        parent.to_path_buf()
    };
    let (component, files) = sign_skill(&dir, &key)?;
    println!(
        "signed {} with key {} (covers {})",
        component.display(),
        key.public().id(),
        files.join(", ")
    );
    Ok(exit::OK)
}

/// Signs the skill in `dir` in place: its component (replacing any signature it has),
/// `SKILL.yaml` and every file the manifest names. Returns the component's path and the
/// covered files.
pub(crate) fn sign_skill(
    dir: &Path,
    key: &agent_trust::SecretKey,
) -> Result<(PathBuf, Vec<String>)> {
    let manifest_path = dir.join(agent_manifest::MANIFEST_FILE);
    let (manifest, manifest_bytes) = Manifest::from_file_with_bytes(&manifest_path)?;
    let target = manifest.component_path(dir).with_context(|| {
        format!(
            "{}: SKILL.yaml has no implementation.component to sign",
            dir.display()
        )
    })?;
    let mut files = Vec::new();
    for rel in manifest.signed_files() {
        let bytes = if rel == agent_manifest::MANIFEST_FILE {
            manifest_bytes.clone()
        } else {
            agent_trust::read_skill_file(dir, &rel).map_err(|e| {
                anyhow::anyhow!(
                    "{}: named by {} but it {e}",
                    dir.join(&rel).display(),
                    manifest_path.display()
                )
            })?
        };
        files.push((rel, bytes));
    }
    let bytes = std::fs::read(&target).with_context(|| format!("reading {}", target.display()))?;
    let signed = agent_trust::sign(&bytes, &files, key.signing_key())
        .map_err(|e| anyhow::anyhow!("{}: {e}", target.display()))?;
    let tmp = target.with_extension("wasm.signing");
    let replaced = std::fs::write(&tmp, &signed)
        .with_context(|| format!("writing {}", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, &target)
                .with_context(|| format!("replacing {}", target.display()))
        });
    if replaced.is_err() {
        // A full disk must not keep a half-written copy.
        let _ = std::fs::remove_file(&tmp);
    }
    replaced?;
    Ok((target, files.into_iter().map(|(p, _)| p).collect()))
}

fn permissions(app: &mut App, name: &str, revoke: Option<&str>) -> Result<u8> {
    let (packages, _) = app.discover()?;
    let manifest = packages
        .iter()
        .find(|p| p.manifest.name == name)
        .map(|p| p.manifest.clone());
    let store = app.store()?;
    if let Some(which) = revoke {
        let perm = if which == "all" {
            None
        } else {
            Some(
                which
                    .parse::<Permission>()
                    .map_err(|e| anyhow::anyhow!("--revoke: {e}"))?,
            )
        };
        let grants = app.grants()?;
        let removed = grants.grants().revoke(name, perm)?;
        grants.forget(name);
        // Non-interactive Grants hold no store: remove stored answers directly too.
        let removed = if app.interactive {
            removed
        } else {
            store.revoke(name, perm)?
        };
        println!(
            "revoked {removed} stored grant(s) of {name}{}",
            perm.map(|p| format!(" for {p}")).unwrap_or_default()
        );
        return Ok(exit::OK);
    }
    let stored = store.grants_for(name)?;
    match &manifest {
        Some(m) => {
            println!("{} declares:", m.name);
            if m.permissions.is_empty() {
                println!("  (no permissions)");
            }
            for p in &m.permissions {
                let rec = stored.iter().find(|r| r.permission == *p);
                let st = match rec {
                    Some(r) => format!(
                        "{} since {}",
                        format!("{:?}", r.decision).to_lowercase(),
                        r.at
                    ),
                    None => "not granted (asked on first use)".into(),
                };
                println!("  {p:<13} {st:<40} {}", p.describe());
            }
        }
        None => {
            if stored.is_empty() {
                bail!("no skill named `{name}` and no stored grants for it");
            }
            println!("{name} (not installed) has stored grants:");
            for r in &stored {
                println!(
                    "  {:<13} {:?} since {}",
                    r.permission.as_str(),
                    r.decision,
                    r.at
                );
            }
        }
    }
    Ok(exit::OK)
}

/// An input schema (from a component or a schema file), within the limits on
/// size and depth; `origin` names it in the error.
fn schema_json(text: &str, origin: impl std::fmt::Display) -> Result<serde_json::Value, String> {
    agent_bounded::parse_json(text, origin, agent_bounded::Limits::MESSAGE)
        .map_err(|e| e.to_string())
}

/// The `contract:` line of `skill inspect`: the version the component was
/// built against, and whether it runs through the adapter.
fn contract_line(version: Option<agent_runtime::contract::Version>) -> String {
    use agent_runtime::contract::LATEST;
    match version {
        None => "none (no agent:skill import or export of a version this agent links)".into(),
        Some(v) if v == LATEST => v.to_string(),
        Some(v) => format!("{v} (runs through this agent's adapter to {LATEST})"),
    }
}

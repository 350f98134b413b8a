//! `agent skill call` and `agent skill test`: running a skill's exports from the command line.

use std::path::Path;

use agent_manifest::Manifest;
use agent_runtime::{ExportKind, Skill, SkillError, SkillPackage};
use anyhow::{Result, bail};

use crate::app::App;
use crate::cli::exit;

use super::inspect::{awaited, schema_json};
use super::{signer_text, types};

pub(super) async fn call(app: &mut App, skill_name: &str, tool: &str, input: &str) -> Result<u8> {
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

pub(super) async fn test(app: &mut App, path: &Path) -> Result<u8> {
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

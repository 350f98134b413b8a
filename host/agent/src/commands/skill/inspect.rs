//! `agent skill info` and `agent skill inspect`: what a skill is and could do.

use std::path::Path;

use agent_manifest::{Manifest, Permission};
use agent_runtime::{ComponentInfo, ExportKind, ImportNeed, SkillPackage};
use anyhow::{Context, Result};
use serde_json::json;

use crate::app::{App, permission_status};
use crate::cli::{Format, exit};

use super::{signer_text, types};

pub(super) async fn info(app: &mut App, name: &str, format: Format) -> Result<u8> {
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
pub(super) fn awaited<T, E: std::fmt::Display>(r: Result<T, E>) -> Result<T> {
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

pub(super) fn inspect(app: &mut App, target: &str, format: Format) -> Result<u8> {
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
        let bytes = component_bytes(&pkg)?;
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
        let bytes = component_bytes(&pkg)?;
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

/// An input schema (from a component or a schema file), within the limits on
/// size and depth; `origin` names it in the error.
pub(super) fn schema_json(
    text: &str,
    origin: impl std::fmt::Display,
) -> Result<serde_json::Value, String> {
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

/// The component of `pkg` (inflated for a built-in), empty for a
/// prompt-only skill.
fn component_bytes(pkg: &SkillPackage) -> Result<Vec<u8>> {
    let Some(component) = &pkg.component else {
        return Ok(Vec::new());
    };
    let bytes = component.get().with_context(|| {
        format!(
            "the component of the built-in `{}` does not decompress: the binary is damaged; \
             reinstall agent",
            pkg.manifest.name
        )
    })?;
    Ok(bytes.to_vec())
}

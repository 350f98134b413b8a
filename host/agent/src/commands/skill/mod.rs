//! `agent skill ...`: one module per group of subcommands.

mod exercise;
mod inspect;
mod install;
mod instruction_update;
mod instructions;
mod mcp_rows;
mod permissions;
mod sign;

pub(crate) use sign::sign_skill;

use agent_manifest::{Manifest, Permission};
use agent_runtime::Signer;
use anyhow::Result;
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
        } => install::available(app, &index, format),
        SkillCommand::Search { query, index } => install::search(app, &index, &query),
        SkillCommand::Install {
            target,
            index,
            force,
        } => match instructions::try_install(app, &target, force)? {
            Some(code) => Ok(code),
            None => install::install(app, &index, &target, false, force),
        },
        SkillCommand::Add { target, index } => install::install(app, &index, &target, true, false),
        SkillCommand::Remove { name, in_project } => install::remove(app, &name, in_project),
        SkillCommand::Update { name, index, force } => {
            install::update(app, &index, name.as_deref(), force)
        }
        SkillCommand::Info { name, format } => match instructions::info(app, &name, format)? {
            Some(code) => Ok(code),
            None => inspect::info(app, &name, format).await,
        },
        SkillCommand::Inspect { target, format } => inspect::inspect(app, &target, format),
        SkillCommand::Call { skill, tool, input } => {
            exercise::call(app, &skill, &tool, &input).await
        }
        SkillCommand::Test { path } => exercise::test(app, &path).await,
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
        SkillCommand::Sign { path, key } => sign::sign(&path, &key),
        SkillCommand::Permissions { name, revoke } => {
            permissions::permissions(app, &name, revoke.as_deref())
        }
        SkillCommand::Save {
            name,
            description,
            body,
            resources,
            in_project,
            replace,
        } => instructions::save(
            app,
            instructions::SaveArgs {
                name,
                description,
                body,
                resources,
                in_project,
                replace,
            },
        ),
        SkillCommand::Scan { path } => instructions::scan(&path),
    }
}

pub(super) fn types(m: &Manifest) -> String {
    m.types
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

pub(super) fn signer_text(s: &Signer) -> String {
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
    let mcp = mcp_rows::mcp_rows(app, &store, &allow)?;
    if format == Format::Json {
        let mut rows: Vec<serde_json::Value> = skills
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
        rows.extend(instructions::list_json(app, &component_names(&skills))?);
        rows.extend(mcp.iter().map(mcp_rows::McpRow::json));
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
    table.extend(instructions::list_rows(app, &component_names(&skills))?);
    table.extend(mcp.iter().map(mcp_rows::McpRow::cells));
    crate::table::print_table(&table);
    Ok(exit::OK)
}

/// The names component skills hold (SKILL.md skills may not take them).
fn component_names(skills: &[crate::listing::Listed]) -> Vec<String> {
    skills
        .iter()
        .map(|s| s.package.manifest.name.clone())
        .collect()
}

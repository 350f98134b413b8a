//! `agent skill search|install|add|remove|update` and `agent skill list --available`: skills
//! from an index, a git repository or a directory. The verification lives in `agent-registry`;
//! this module shows what a skill could do before installing it, asks for grants on a terminal
//! and records installs (the store's `installed` table).

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use agent_manifest::Permission;
use agent_registry::{GitSource, PermissionRef, UpdatePlan};
use agent_store::{
    GrantRecord, InstallPlace, InstalledPermission, InstalledRecord, RegistrySeen, Store,
    StoredDecision,
};
use anyhow::{Result, bail};

use crate::app::App;
use crate::cli::{Format, IndexArg, UsageError, exit};
use crate::index_access::{agent_version, open, progress, trust_store};

// ---------------------------------------------------------------------------
// search / list --available

pub(super) fn search(app: &mut App, arg: &IndexArg, query: &str) -> Result<u8> {
    let progress = progress();
    let opened = open(app, arg, progress.as_ref())?;
    let hits = opened.index.search(query);
    if hits.is_empty() {
        println!("no skill in the index matches `{query}`");
        return Ok(exit::OK);
    }
    let mut rows = vec![["NAME".to_string(), "LATEST".into(), "DESCRIPTION".into()]];
    for e in hits {
        rows.push([e.name.clone(), e.latest.to_string(), e.description.clone()]);
    }
    crate::table::print_table(&rows);
    Ok(exit::OK)
}

pub(super) fn available(app: &mut App, arg: &IndexArg, format: Format) -> Result<u8> {
    let progress = progress();
    let opened = open(app, arg, progress.as_ref())?;
    let installed = opened.store.all_installed()?;
    let installed_version = |name: &str| {
        installed
            .iter()
            .filter(|(_, r)| r.name == name)
            .map(|(_, r)| r.version.clone())
            .next()
    };
    if format == Format::Json {
        let rows: Vec<serde_json::Value> = opened
            .index
            .skills()
            .iter()
            .map(|e| {
                serde_json::json!({
                    "name": e.name,
                    "latest": e.latest.to_string(),
                    "versions": e.versions.iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "description": e.description,
                    "keywords": e.keywords,
                    "author": e.author,
                    "installed": installed_version(&e.name),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(exit::OK);
    }
    let mut rows = vec![[
        "NAME".to_string(),
        "LATEST".into(),
        "INSTALLED".into(),
        "DESCRIPTION".into(),
    ]];
    for e in opened.index.skills() {
        rows.push([
            e.name.clone(),
            e.latest.to_string(),
            installed_version(&e.name).unwrap_or_else(|| "-".into()),
            e.description.clone(),
        ]);
    }
    crate::table::print_table(&rows);
    println!(
        "(index snapshot {}, {} skill(s))",
        opened.index.snapshot_version(),
        opened.index.skills().len()
    );
    Ok(exit::OK)
}

// ---------------------------------------------------------------------------
// install / add

/// Where a skill goes: the user skills directory, or the project's `.agent/skills`.
fn destination(app: &App, project: bool) -> (PathBuf, InstallPlace) {
    if project {
        let root = std::path::absolute(&app.project_root).unwrap_or(app.project_root.clone());
        (
            root.join(".agent").join("skills"),
            InstallPlace::Project(root.display().to_string()),
        )
    } else {
        (app.paths.user_skills_dir(), InstallPlace::User)
    }
}

/// `NAME[@REQ]` into a name and a version requirement.
fn name_and_req(target: &str) -> Result<(String, Option<semver::VersionReq>)> {
    let (name, req) = match target.split_once('@') {
        Some((n, r)) => (n, Some(r)),
        None => (target, None),
    };
    if !agent_manifest::is_skill_name(name) {
        return Err(UsageError(format!(
            "`{target}`: expected a skill name (lowercase letters, digits, hyphens), optionally \
             with `@VERSION-REQ`, a directory (`./path`) or `git+URL`"
        ))
        .into());
    }
    let req = req
        .map(|r| {
            semver::VersionReq::parse(r)
                .map_err(|e| UsageError(format!("`{target}`: version requirement `{r}`: {e}")))
        })
        .transpose()?;
    Ok((name.to_string(), req))
}

fn perm_text(p: &PermissionRef) -> String {
    let describe = p
        .permission
        .parse::<Permission>()
        .map(|x| x.describe().to_string())
        .unwrap_or_else(|_| "a permission this agent does not know".into());
    match &p.scope {
        Some(s) => format!("{describe} ({}): {s}", p.permission),
        None => format!("{describe} ({})", p.permission),
    }
}

fn to_installed_perms(perms: &[PermissionRef]) -> Vec<InstalledPermission> {
    perms
        .iter()
        .map(|p| InstalledPermission {
            permission: p.permission.clone(),
            scope: p.scope.clone(),
        })
        .collect()
}

/// Prints what the skill could do once granted.
fn summary(name: &str, version: &str, from: &str, signer: Option<&str>, perms: &[PermissionRef]) {
    eprintln!("{name} {version} from {from}");
    if let Some(k) = signer {
        eprintln!("  signed by key {k}");
    }
    eprintln!("  could, once granted:");
    if perms.is_empty() {
        eprintln!("    - nothing beyond computing: no files, programs, network or environment");
    }
    for p in perms {
        eprintln!("    - {}", perm_text(p));
    }
}

/// Reads one answer from the terminal.
fn ask(question: &str) -> String {
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{question}");
    let _ = err.flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).unwrap_or(0) == 0 {
        return String::new();
    }
    line.trim().to_ascii_lowercase()
}

/// Lasting answers given at install time, stored once the installed manifest is known.
type Answers = Vec<(Permission, StoredDecision)>;

/// Interactive only: confirms and asks for a lasting grant of each permission in `perms`.
/// Returns `None` when the user declines the install; the answers are stored by
/// [`store_answers`] after the install, bound to the installed manifest.
fn confirm_and_grant(
    name: &str,
    version: &str,
    perms: &[PermissionRef],
    verb: &str,
) -> Option<Answers> {
    let answer = ask(&format!("{verb} {name} {version}? [y/N] > "));
    if !matches!(answer.as_str(), "y" | "yes") {
        return None;
    }
    let mut answers = Answers::new();
    let mut asked = BTreeSet::new();
    for p in perms {
        let Ok(perm) = p.permission.parse::<Permission>() else {
            continue;
        };
        if !asked.insert(perm) {
            continue;
        }
        let scopes: Vec<&str> = perms
            .iter()
            .filter(|q| q.permission == p.permission)
            .filter_map(|q| q.scope.as_deref())
            .collect();
        let scope_text = if scopes.is_empty() {
            String::new()
        } else {
            format!(" ({})", scopes.join(", "))
        };
        loop {
            let a = ask(&format!(
                "  grant {perm}{scope_text} — {}?  [a] always  [l] ask on first use  [d] deny > ",
                perm.describe()
            ));
            let decision = match a.as_str() {
                "a" | "always" => Some(StoredDecision::Always),
                "d" | "deny" => Some(StoredDecision::Deny),
                "l" | "later" | "" => None,
                _ => continue,
            };
            if let Some(d) = decision {
                answers.push((perm, d));
            }
            break;
        }
    }
    Some(answers)
}

/// Stores install-time answers for the skill just installed, bound to its manifest's digest
/// (a later manifest, even a signed one, is asked again).
fn store_answers(
    app: &mut App,
    installed: &agent_registry::Installed,
    answers: &Answers,
) -> Result<()> {
    if answers.is_empty() {
        return Ok(());
    }
    let store = app.store()?;
    for (perm, decision) in answers {
        store.put_grant(
            &GrantRecord::new(
                &installed.name,
                *perm,
                *decision,
                None,
                Some(installed.version.to_string()),
            )
            .for_manifest(&installed.manifest_sha256),
        )?;
    }
    Ok(())
}

/// The installed permissions as the index spells them, for [`UpdatePlan`].
fn as_refs(installed: &[InstalledPermission]) -> Vec<PermissionRef> {
    installed
        .iter()
        .map(|p| PermissionRef {
            permission: p.permission.clone(),
            scope: p.scope.clone(),
        })
        .collect()
}

fn allow_flag(skill: &str, p: &PermissionRef) -> String {
    match &p.scope {
        Some(s) => format!("--allow {skill}/{}:{s}", p.permission),
        None => format!("--allow {skill}/{}", p.permission),
    }
}

/// Refuses (non-interactive) or asks again (interactive) for permissions an update adds.
/// `Ok(Ok(answers))` to go on (the answers to store after the update), `Ok(Err(code))` to
/// stop with that exit code.
fn check_added(
    app: &mut App,
    name: &str,
    version: &str,
    plan: &UpdatePlan,
) -> Result<std::result::Result<Answers, u8>> {
    if plan.added.is_empty() {
        return Ok(Ok(Answers::new()));
    }
    let allow = app.allowlist()?;
    let uncovered = plan.uncovered(|perm, scope| allow.matches(name, perm, scope));
    let added = &plan.added;
    if uncovered.is_empty() {
        return Ok(Ok(Answers::new()));
    }
    if app.interactive {
        eprintln!("{name} {version} asks for permissions the installed version did not have:");
        for p in added {
            eprintln!("    - {}", perm_text(p));
        }
        return Ok(match confirm_and_grant(name, version, added, "Update to") {
            Some(answers) => Ok(answers),
            None => {
                eprintln!("not updated: {name} stays as it is");
                Err(exit::DENIED)
            }
        });
    }
    eprintln!(
        "error: refusing to update {name} to {version}: it asks for new permissions: {}",
        uncovered
            .iter()
            .map(|p| match &p.scope {
                Some(s) => format!("{} ({s})", p.permission),
                None => p.permission.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    eprintln!(
        "  to accept them without a terminal, run again with: {}",
        uncovered
            .iter()
            .map(|p| allow_flag(name, p))
            .collect::<Vec<_>>()
            .join(" ")
    );
    Ok(Err(exit::DENIED))
}

pub(super) fn install(
    app: &mut App,
    arg: &IndexArg,
    target: &str,
    project: bool,
    force: bool,
) -> Result<u8> {
    let (dest, place) = destination(app, project);
    crate::app::tidy_skills_dir(&dest);
    let path = Path::new(target);
    // A path that exists, or is spelt as one, stays a local path even when
    // it would also read as a git source (`./github.com/o/r`, `x.git`).
    let local = path.exists()
        || ["./", "../", "/", "~"]
            .iter()
            .any(|p| target.starts_with(p));
    let git = if local {
        None
    } else {
        GitSource::parse(target).map_err(|e| UsageError(format!("{target}: {e}")))?
    };
    if let Some(git) = git {
        if project {
            return Err(UsageError(
                "`agent skill add` takes a skill name from the index; use `agent skill install` for a git repository".into(),
            )
            .into());
        }
        return install_git(app, &git, &dest, &place);
    }
    if target.contains('/') || target.starts_with('.') || path.join("SKILL.yaml").is_file() {
        if project {
            return Err(UsageError(
                "`agent skill add` takes a skill name from the index; use `agent skill install` for a directory".into(),
            )
            .into());
        }
        return install_dir(app, path, &dest, &place);
    }
    let (name, req) = name_and_req(target)?;
    let progress = progress();
    let opened = open(app, arg, progress.as_ref())?;
    let rec = match opened
        .index
        .resolve_any(&name, req.as_ref(), &opened.seen)
        .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        agent_registry::Resolved::Component(rec) => rec,
        agent_registry::Resolved::Instructions(rec) => {
            if project {
                return Err(UsageError(format!(
                    "`{name}` is a SKILL.md instruction skill; `agent skill add` installs \
                     component skills into the project — use `agent skill install {name}`"
                ))
                .into());
            }
            return super::instructions::install_from_index(
                app,
                &opened.index,
                &rec,
                &opened.id,
                force,
            );
        }
    };
    let previous = opened.store.installed(&place, &name)?;
    if let Some(prev) = &previous
        && prev.version == rec.version.to_string()
        && prev.source == opened.id
        && Path::new(&prev.dir).join("SKILL.yaml").is_file()
    {
        println!(
            "{name} {} is already installed in {}",
            prev.version, prev.dir
        );
        return Ok(exit::OK);
    }
    summary(
        &name,
        &rec.version.to_string(),
        &opened.id,
        Some(&rec.component.key_id.to_string()),
        &rec.permissions,
    );
    let answers = if let Some(prev) = &previous {
        let plan = UpdatePlan::new(&as_refs(&prev.permissions), &rec.permissions);
        match check_added(app, &name, &rec.version.to_string(), &plan)? {
            Ok(answers) => answers,
            Err(code) => return Ok(code),
        }
    } else if app.interactive {
        match confirm_and_grant(&name, &rec.version.to_string(), &rec.permissions, "Install") {
            Some(answers) => answers,
            None => {
                eprintln!("not installed");
                return Ok(exit::FAILURE);
            }
        }
    } else {
        Answers::new()
    };
    let trust = trust_store(app)?;
    let installed = opened
        .index
        .install(&rec, &dest, &trust, &agent_version(), progress.as_ref())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut raised = RegistrySeen {
        snapshot: Some(opened.index.snapshot_version()),
        ..RegistrySeen::default()
    };
    raised
        .skills
        .insert(name.clone(), installed.version.clone());
    opened.store.raise_registry_seen(&opened.id, &raised)?;
    store_answers(app, &installed, &answers)?;
    finish_install(app, &opened.store, &place, &installed, &opened.id)
}

/// Records an install (`source`: where it came from), says where it went,
/// and how to grant its permissions when nothing was asked.
fn finish_install(
    app: &App,
    store: &Store,
    place: &InstallPlace,
    installed: &agent_registry::Installed,
    source: &str,
) -> Result<u8> {
    record(store, place, installed, source)?;
    println!(
        "installed {} {} into {}",
        installed.name,
        installed.version,
        installed.dir.display()
    );
    not_granted_note(app, &installed.name, &installed.permissions);
    Ok(exit::OK)
}

fn record(
    store: &Store,
    place: &InstallPlace,
    installed: &agent_registry::Installed,
    source: &str,
) -> Result<()> {
    store.put_installed(
        place,
        &InstalledRecord::new(
            installed.name.clone(),
            installed.version.to_string(),
            source,
            installed.digest.clone(),
            installed.dir.display().to_string(),
            to_installed_perms(&installed.permissions),
        ),
    )?;
    Ok(())
}

fn not_granted_note(app: &App, name: &str, perms: &[PermissionRef]) {
    if !app.interactive && !perms.is_empty() {
        eprintln!(
            "note: no permission was granted; pass them when you use it, e.g. {}",
            allow_flag(name, &perms[0])
        );
    }
}

fn install_dir(app: &mut App, src: &Path, dest: &Path, place: &InstallPlace) -> Result<u8> {
    let trust = trust_store(app)?;
    let installed =
        agent_registry::install_from_dir(src, dest, &trust).map_err(|e| anyhow::anyhow!("{e}"))?;
    let abs = std::path::absolute(src).unwrap_or(src.to_path_buf());
    let store = app.store()?;
    finish_install(
        app,
        &store,
        place,
        &installed,
        &format!("path:{}", abs.display()),
    )
}

fn install_git(app: &mut App, git: &GitSource, dest: &Path, place: &InstallPlace) -> Result<u8> {
    let trust = trust_store(app)?;
    let progress = progress();
    let installed = agent_registry::install_from_git(
        &git.url,
        git.rev.as_deref(),
        &app.paths.registry_cache_dir(),
        dest,
        &trust,
        progress.as_ref(),
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let store = app.store()?;
    let source = match &git.rev {
        Some(rev) => format!("git:{}#{rev}", git.url),
        None => format!("git:{}", git.url),
    };
    finish_install(app, &store, place, &installed, &source)
}

// ---------------------------------------------------------------------------
// remove / update

pub(super) fn remove(app: &mut App, name: &str, in_project: bool) -> Result<u8> {
    let (dest, place) = destination(app, in_project);
    crate::app::tidy_skills_dir(&dest);
    let store = app.store()?;
    let had_record = store.installed(&place, name)?.is_some();
    if !dest.join(name).exists() {
        if had_record {
            store.remove_installed(&place, name)?;
            println!("{name} was already gone from {}; forgot it", dest.display());
            return Ok(exit::OK);
        }
        let hint = if in_project {
            ""
        } else {
            " (a project skill? add --in-project)"
        };
        bail!("no skill `{name}` is installed in {}{hint}", dest.display());
    }
    agent_registry::remove(&dest, name).map_err(|e| anyhow::anyhow!("{e}"))?;
    store.remove_installed(&place, name)?;
    println!("removed {name} from {}", dest.display());
    Ok(exit::OK)
}

pub(super) fn update(app: &mut App, arg: &IndexArg, only: Option<&str>, force: bool) -> Result<u8> {
    let progress = progress();
    let opened = open(app, arg, progress.as_ref())?;
    let (_, project_place) = destination(app, true);
    let candidates: Vec<(InstallPlace, InstalledRecord)> = opened
        .store
        .all_installed()?
        .into_iter()
        .filter(|(place, _)| *place == InstallPlace::User || *place == project_place)
        .filter(|(_, r)| only.is_none_or(|n| n == r.name))
        .collect();
    // SKILL.md skills from this index are updated in place, as `skill install` installs them.
    let instructions: Vec<(String, String)> = super::instructions::installed_from(app, &opened.id)?
        .into_iter()
        .filter(|(n, _)| only.is_none_or(|o| o == n))
        .collect();
    if let Some(n) = only
        && candidates.is_empty()
        && instructions.is_empty()
    {
        bail!("`{n}` was not installed with `agent skill install` or `agent skill add`");
    }
    let done = super::instruction_update::update_instructions(app, &opened, &instructions, force)?;
    let mut code = done.code;
    let mut updated = done.count;
    for (place, prev) in candidates {
        if prev.source != opened.id {
            if only.is_some() {
                eprintln!(
                    "note: {} came from {}, not this index ({}); skipped",
                    prev.name, prev.source, opened.id
                );
            }
            continue;
        }
        let rec = match opened.index.resolve(&prev.name, None, &opened.seen) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {}: {e}", prev.name);
                code = exit::FAILURE;
                continue;
            }
        };
        let current = semver::Version::parse(&prev.version).ok();
        if current.as_ref().is_some_and(|c| rec.version <= *c) {
            println!("{} {} is up to date", prev.name, prev.version);
            continue;
        }
        let version = rec.version.to_string();
        summary(
            &prev.name,
            &version,
            &opened.id,
            Some(&rec.component.key_id.to_string()),
            &rec.permissions,
        );
        let plan = UpdatePlan::new(&as_refs(&prev.permissions), &rec.permissions);
        let answers = match check_added(app, &prev.name, &version, &plan)? {
            Ok(answers) => answers,
            Err(c) => {
                code = code.max(c);
                continue;
            }
        };
        let dest = Path::new(&prev.dir)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| destination(app, place != InstallPlace::User).0);
        let trust = trust_store(app)?;
        match opened
            .index
            .install(&rec, &dest, &trust, &agent_version(), progress.as_ref())
        {
            Ok(installed) => {
                let mut raised = RegistrySeen {
                    snapshot: Some(opened.index.snapshot_version()),
                    ..RegistrySeen::default()
                };
                raised
                    .skills
                    .insert(installed.name.clone(), installed.version.clone());
                opened.store.raise_registry_seen(&opened.id, &raised)?;
                record(&opened.store, &place, &installed, &opened.id)?;
                store_answers(app, &installed, &answers)?;
                println!(
                    "updated {} {} -> {}",
                    installed.name, prev.version, installed.version
                );
                updated += 1;
            }
            Err(e) => {
                eprintln!("error: {}: {e}", prev.name);
                code = code.max(exit::FAILURE);
            }
        }
    }
    if updated == 0 && code == exit::OK && only.is_none() {
        println!("nothing to update");
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(permission: &str, scope: Option<&str>) -> PermissionRef {
        PermissionRef {
            permission: permission.into(),
            scope: scope.map(Into::into),
        }
    }

    #[test]
    fn names_with_requirements() {
        let (n, r) = name_and_req("rust-hello@^0.2").unwrap();
        assert_eq!(n, "rust-hello");
        assert!(r.unwrap().matches(&semver::Version::new(0, 2, 5)));
        assert_eq!(name_and_req("x").unwrap(), ("x".to_string(), None));
        assert!(name_and_req("Bad Name").is_err());
        assert!(name_and_req("x@not a req").is_err());
    }

    #[test]
    fn added_permissions_compare_permission_and_scope() {
        let old = vec![InstalledPermission {
            permission: "shell:exec".into(),
            scope: Some("git".into()),
        }];
        let new = vec![
            p("shell:exec", Some("git")),
            p("shell:exec", Some("curl")),
            p("file:read", None),
        ];
        assert_eq!(
            UpdatePlan::new(&as_refs(&old), &new).added,
            vec![p("shell:exec", Some("curl")), p("file:read", None)]
        );
        assert_eq!(allow_flag("s", &new[1]), "--allow s/shell:exec:curl");
        assert_eq!(allow_flag("s", &new[2]), "--allow s/file:read");
    }
}

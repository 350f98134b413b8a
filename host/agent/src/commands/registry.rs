//! The skill registry: `agent skill search|install|add|remove|update`, `agent skill list
//! --available`, and `agent registry init|publish|verify`.
//!
//! The verification itself lives in `agent-registry`; this module picks the index, loads and
//! saves what was seen from it (the store's `registry_seen` table, so that a rollback to an
//! older snapshot or version is refused), records installs (the `installed` table), shows what
//! a skill could do before installing it, and asks for grants on a terminal.

use std::collections::BTreeSet;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use agent_manifest::Permission;
use agent_registry::{GitSource, Index, IndexSource, NoProgress, PermissionRef, Progress, Seen};
use agent_store::{
    GrantRecord, InstallPlace, InstalledPermission, InstalledRecord, RegistrySeen, Store,
    StoredDecision,
};
use agent_trust::TrustStore;
use anyhow::{Context, Result, bail};

use crate::app::App;
use crate::cli::{Format, IndexArg, RegistryCommand, UsageError, exit};

/// The version of this agent, checked against a skill's `min_agent_version`.
fn agent_version() -> semver::Version {
    semver::Version::parse(env!("CARGO_PKG_VERSION")).unwrap_or(semver::Version::new(0, 0, 0))
}

// ---------------------------------------------------------------------------
// Progress on a terminal.

/// An indicatif bar on stderr, or nothing when stderr is not a terminal.
struct Bars {
    bar: Mutex<Option<indicatif::ProgressBar>>,
}

impl Bars {
    fn new() -> Bars {
        Bars {
            bar: Mutex::new(None),
        }
    }
}

impl Progress for Bars {
    fn start(&self, what: &str, total: Option<u64>) {
        let bar = match total {
            Some(n) => {
                let b = indicatif::ProgressBar::new(n);
                if let Ok(style) = indicatif::ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes}",
                ) {
                    b.set_style(style.progress_chars("=> "));
                }
                b
            }
            None => {
                let b = indicatif::ProgressBar::new_spinner();
                b.enable_steady_tick(Duration::from_millis(120));
                b
            }
        };
        bar.set_message(what.to_string());
        if let Ok(mut slot) = self.bar.lock()
            && let Some(old) = slot.replace(bar)
        {
            old.finish_and_clear();
        }
    }

    fn advance(&self, n: u64) {
        if let Ok(slot) = self.bar.lock()
            && let Some(b) = slot.as_ref()
        {
            b.inc(n);
        }
    }

    fn finish(&self, what: &str) {
        if let Ok(mut slot) = self.bar.lock()
            && let Some(b) = slot.take()
        {
            b.finish_and_clear();
            eprintln!("{what}");
        }
    }
}

/// Progress bars only on a terminal.
fn progress() -> Box<dyn Progress> {
    if std::io::stderr().is_terminal() {
        Box::new(Bars::new())
    } else {
        Box::new(NoProgress)
    }
}

// ---------------------------------------------------------------------------
// Opening the index.

/// The index source: `--index`, else config `skills.registry_url`.
fn source(app: &mut App, arg: &IndexArg) -> Result<IndexSource> {
    let text = match &arg.index {
        Some(s) => agent_config::check_registry_source(s)
            .map_err(|m| UsageError(format!("--index {s}: {m}")))?,
        None => app.config()?.skills.registry_url.clone(),
    };
    // A relative directory is taken from the current directory, made absolute so that the
    // stored state is keyed the same from anywhere.
    let text = match text.strip_prefix("file://") {
        Some(path) => path.to_string(),
        None => text,
    };
    let source =
        IndexSource::parse(&text).map_err(|e| UsageError(format!("--index {text}: {e}")))?;
    Ok(match source {
        IndexSource::Path(p) => IndexSource::Path(
            std::fs::canonicalize(&p)
                .or_else(|_| std::path::absolute(&p))
                .unwrap_or(p),
        ),
        other => other,
    })
}

fn trust_store(app: &App) -> Result<TrustStore> {
    Ok(TrustStore::load(&app.paths.trusted_keys_dir())?)
}

fn to_seen(s: RegistrySeen) -> Seen {
    Seen {
        snapshot: s.snapshot,
        skills: s.skills,
    }
}

/// An opened, verified index and what this user had seen from it.
struct Opened {
    index: Index,
    id: String,
    seen: Seen,
    store: std::sync::Arc<Store>,
}

/// Fetches and verifies the index (signature, expiry, snapshot rollback), then records its
/// snapshot version as seen.
fn open(app: &mut App, arg: &IndexArg, progress: &dyn Progress) -> Result<Opened> {
    let source = source(app, arg)?;
    let id = source.id();
    let store = app.store()?;
    let seen = to_seen(store.registry_seen(&id)?);
    let trust = trust_store(app)?;
    let now = time::OffsetDateTime::now_utc();
    let index = Index::open(
        &source,
        &app.paths.registry_cache_dir(),
        &trust,
        &seen,
        now,
        progress,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    // The snapshot version is recorded on every successful open; a skill's version only when
    // it is installed (so that an older version can still be pinned with `NAME@REQ` until a
    // newer one was actually installed — `resolve` refuses anything older than that).
    let raised = RegistrySeen {
        snapshot: Some(index.snapshot_version()),
        ..RegistrySeen::default()
    };
    store.raise_registry_seen(&id, &raised)?;
    Ok(Opened {
        index,
        id,
        seen,
        store,
    })
}

// ---------------------------------------------------------------------------
// search / list --available

pub fn search(app: &mut App, arg: &IndexArg, query: &str) -> Result<u8> {
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
    crate::commands::skill::print_table(&rows);
    Ok(exit::OK)
}

pub fn available(app: &mut App, arg: &IndexArg, format: Format) -> Result<u8> {
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
    crate::commands::skill::print_table(&rows);
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

/// The permissions in `new` that `old` does not have (same permission and scope).
fn added_permissions(old: &[InstalledPermission], new: &[PermissionRef]) -> Vec<PermissionRef> {
    new.iter()
        .filter(|p| {
            !old.iter()
                .any(|o| o.permission == p.permission && o.scope == p.scope)
        })
        .cloned()
        .collect()
}

/// Whether `--allow`/`--capabilities` grant `p` to `skill`.
fn allowed(app: &App, skill: &str, p: &PermissionRef) -> Result<bool> {
    let Ok(perm) = p.permission.parse::<Permission>() else {
        return Ok(false);
    };
    Ok(app.allowlist()?.entries().iter().any(|e| {
        e.permission == perm
            && e.skill.as_deref().is_none_or(|s| s == skill)
            && (e.scope.is_none() || e.scope == p.scope)
    }))
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
    added: &[PermissionRef],
) -> Result<std::result::Result<Answers, u8>> {
    if added.is_empty() {
        return Ok(Ok(Answers::new()));
    }
    let mut uncovered = Vec::new();
    for p in added {
        if !allowed(app, name, p)? {
            uncovered.push(p.clone());
        }
    }
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

pub fn install(app: &mut App, arg: &IndexArg, target: &str, project: bool) -> Result<u8> {
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
    let rec = opened
        .index
        .resolve(&name, req.as_ref(), &opened.seen)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
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
        let added = added_permissions(&prev.permissions, &rec.permissions);
        match check_added(app, &name, &rec.version.to_string(), &added)? {
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

pub fn remove(app: &mut App, name: &str, in_project: bool) -> Result<u8> {
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

pub fn update(app: &mut App, arg: &IndexArg, only: Option<&str>) -> Result<u8> {
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
    if let Some(n) = only
        && candidates.is_empty()
    {
        bail!("`{n}` was not installed with `agent skill install` or `agent skill add`");
    }
    let mut code = exit::OK;
    let mut updated = 0;
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
        let added = added_permissions(&prev.permissions, &rec.permissions);
        let answers = match check_added(app, &prev.name, &version, &added)? {
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

// ---------------------------------------------------------------------------
// agent registry ...

/// `365d`, `12h`, `30m`, `90s`, `500ms` ([`agent_bounded::parse_duration`]).
fn parse_expiry(s: &str) -> Result<time::Duration> {
    agent_bounded::parse_duration(s, agent_bounded::BareNumber::Seconds)
        .ok()
        .and_then(|d| time::Duration::try_from(d).ok())
        .ok_or_else(|| {
            UsageError(format!(
                "--expires {s}: expected e.g. `365d`, `12h`, `30m`, `90s`"
            ))
            .into()
        })
}

pub fn registry(app: &mut App, cmd: RegistryCommand) -> Result<u8> {
    match cmd {
        RegistryCommand::Init { dir } => {
            agent_registry::init(&dir).map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("created an empty skill index in {}", dir.display());
            Ok(exit::OK)
        }
        RegistryCommand::Publish {
            component,
            manifest,
            key,
            index,
            expires,
        } => {
            let expires_in = parse_expiry(&expires)?;
            let key = agent_trust::SecretKey::read(&key)
                .context("reading the publisher's secret key (--key)")?;
            let rec = agent_registry::publish(&agent_registry::PublishRequest {
                component: &component,
                manifest: &manifest,
                key: &key,
                index: &index,
                expires_in,
            })
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            println!(
                "published {} {} to {} (signed by key {})",
                rec.name,
                rec.version,
                index.display(),
                rec.component.key_id
            );
            Ok(exit::OK)
        }
        RegistryCommand::Resign {
            key,
            index,
            expires,
        } => {
            let expires_in = parse_expiry(&expires)?;
            let key = agent_trust::SecretKey::read(&key)
                .context("reading the publisher's secret key (--key)")?;
            let report = agent_registry::resign_index(&index, &key, expires_in)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for r in &report.versions {
                println!(
                    "re-signed {} (was key {}, now {})",
                    r.versions_file,
                    r.old_key_id,
                    key.public().id()
                );
            }
            println!(
                "{}: {} version(s) re-signed by key {}; snapshot {}",
                index.display(),
                report.versions.len(),
                key.public().id(),
                report.snapshot_version
            );
            Ok(exit::OK)
        }
        RegistryCommand::Verify { dir } => {
            let trust = trust_store(app)?;
            let report =
                agent_registry::verify_index(&dir, Some(&trust), time::OffsetDateTime::now_utc())
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            verify_report(&dir, &report)
        }
    }
}

fn verify_report(dir: &Path, report: &agent_registry::VerifyReport) -> Result<u8> {
    println!(
        "{}: snapshot {}, {} skill(s), {} version file(s)",
        dir.display(),
        report
            .snapshot_version
            .map_or_else(|| "unreadable".to_string(), |v| v.to_string()),
        report.skills,
        report.versions
    );
    if report.problems.is_empty() {
        println!("every signature and digest checks out");
        Ok(exit::OK)
    } else {
        for p in &report.problems {
            println!("problem: {p}");
        }
        Ok(exit::FAILURE)
    }
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
    fn expiry_durations() {
        assert_eq!(parse_expiry("365d").unwrap(), time::Duration::days(365));
        assert_eq!(parse_expiry("12h").unwrap(), time::Duration::hours(12));
        assert_eq!(parse_expiry("1s").unwrap(), time::Duration::seconds(1));
        assert!(parse_expiry("soon").is_err());
        assert!(parse_expiry("3w").is_err());
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
            added_permissions(&old, &new),
            vec![p("shell:exec", Some("curl")), p("file:read", None)]
        );
        assert_eq!(allow_flag("s", &new[1]), "--allow s/shell:exec:curl");
        assert_eq!(allow_flag("s", &new[2]), "--allow s/file:read");
    }
}

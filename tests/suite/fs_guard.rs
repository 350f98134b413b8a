//! A hostile skill (`tests/guests/fs-hostile`) against the host's filesystem
//! guard: FIFOs and sockets, writes into `.git` and `.agent/skills` (also
//! relative to a directory descriptor and through symlinks), symlinks out of
//! the mount, and the agent's own files when the project is the home
//! directory. Each test asserts the guest's error, that nothing changed on
//! the host, and the audit entry naming the path.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_runtime::{CallContext, GrantsAuthorizer, Skill, SkillError, ToolOutput};
use serde_json::json;

use crate::common::{Harness, guest, skill_error_text};

/// Well under the 30 s call limit: a refused open returns at once.
const PROMPT: Duration = Duration::from_secs(5);

const FILE_WRITE: &str = "permissions: [file:write]\n";

fn load(h: &Harness, name: &str) -> Skill {
    h.load_guest(&guest("guest-fs-hostile"), name, FILE_WRITE)
        .expect("load the fs-hostile skill")
}

/// The guest's error text for a tool that must fail.
async fn refused(h: &Harness, skill: &Skill, tool: &str, input: serde_json::Value) -> String {
    let text = skill_error_text(&h.call_tool_err(skill, tool, input).await).to_string();
    println!("{tool}: {text}");
    text
}

/// Asserts that `tool` fails with an error starting with `prefix`.
async fn refused_with(
    h: &Harness,
    skill: &Skill,
    tool: &str,
    input: serde_json::Value,
    prefix: &str,
) {
    let text = refused(h, skill, tool, input).await;
    assert!(text.starts_with(prefix), "{tool}: {text}");
}

/// The `denied:` audit entries of `skill`, as `(capability, target, decision)`.
fn denials(h: &Harness, skill: &str) -> Vec<(String, String, String)> {
    h.audit_of(skill)
        .into_iter()
        .filter(|(_, _, d)| d.starts_with("denied: "))
        .collect()
}

fn entry(capability: &str, target: &str, decision: &str) -> (String, String, String) {
    (capability.into(), target.into(), decision.into())
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("running mkfifo");
    assert!(status.success(), "mkfifo {}", path.display());
}

type CallResult = Result<Result<ToolOutput, SkillError>, agent_runtime::CallError>;

/// Runs `tool` on a runtime worker and waits at most [`PROMPT`]. When the
/// call is still blocked, `unblock` opens the FIFO's other end (so the
/// stuck worker can finish) and the test fails.
async fn call_within_prompt(
    h: Arc<Harness>,
    skill: Skill,
    tool: &'static str,
    input: serde_json::Value,
    unblock: impl FnOnce() + Send + 'static,
) -> (CallResult, Duration) {
    let start = Instant::now();
    let task = tokio::spawn(async move { h.call(&skill, tool, input).await });
    match tokio::time::timeout(PROMPT, task).await {
        Ok(joined) => (joined.expect("the call task"), start.elapsed()),
        Err(_) => {
            std::thread::spawn(unblock);
            panic!(
                "`{tool}` on a FIFO was still blocked after {PROMPT:?}: it holds the runtime thread"
            );
        }
    }
}

// 4. A FIFO opened for reading: refused at once (nothing to block on), with
// EACCES to the guest and an audit entry naming the path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_opened_for_reading_is_refused_at_once() {
    let h = Arc::new(Harness::new(&["file:write"]));
    let fifo = h.project().join("pipe");
    mkfifo(&fifo);
    let skill = load(&h, "fifo-reader");

    let unblock_path = fifo.clone();
    let (result, took) = call_within_prompt(
        h.clone(),
        skill,
        "read",
        json!({"path": "/project/pipe"}),
        move || drop(std::fs::OpenOptions::new().write(true).open(unblock_path)),
    )
    .await;
    let err = result
        .expect("no host error")
        .expect_err("the read must fail");
    let text = skill_error_text(&err);
    println!("FIFO read: {text} after {took:?}");
    assert!(took < PROMPT, "{took:?}");
    assert!(text.starts_with("read failed: Permission denied"), "{text}");
    assert_eq!(
        denials(&h, "fifo-reader"),
        vec![entry(
            "file:read",
            "/project/pipe",
            "denied: /project/pipe is a FIFO (named pipe); skills may open only regular files and directories",
        )]
    );
}

// 4b. A FIFO opened for writing (std::fs::write: create + truncate) is
// refused the same way, as a write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_opened_for_writing_is_refused_at_once() {
    let h = Arc::new(Harness::new(&["file:write"]));
    let fifo = h.project().join("pipe");
    mkfifo(&fifo);
    let skill = load(&h, "fifo-writer");

    let unblock_path = fifo.clone();
    let (result, took) = call_within_prompt(
        h.clone(),
        skill,
        "write",
        json!({"path": "/project/pipe", "text": "x"}),
        move || drop(std::fs::File::open(unblock_path)),
    )
    .await;
    let err = result
        .expect("no host error")
        .expect_err("the write must fail");
    let text = skill_error_text(&err);
    println!("FIFO write: {text} after {took:?}");
    assert!(took < PROMPT, "{took:?}");
    assert!(
        text.starts_with("write failed: Permission denied"),
        "{text}"
    );
    assert_eq!(
        denials(&h, "fifo-writer"),
        vec![entry(
            "file:write",
            "/project/pipe",
            "denied: /project/pipe is a FIFO (named pipe); skills may open only regular files and directories",
        )]
    );
}

// 4c. A unix socket in the project is refused and audited too.
#[tokio::test]
async fn a_unix_socket_is_refused_and_audited() {
    let h = Harness::new(&["file:write"]);
    let _listener =
        std::os::unix::net::UnixListener::bind(h.project().join("sock")).expect("binding");
    let skill = load(&h, "socket-reader");
    let text = refused(&h, &skill, "read", json!({"path": "/project/sock"})).await;
    assert!(text.starts_with("read failed: Permission denied"), "{text}");
    assert_eq!(
        denials(&h, "socket-reader"),
        vec![entry(
            "file:read",
            "/project/sock",
            "denied: /project/sock is a socket; skills may open only regular files and directories",
        )]
    );
}

const GIT_DENIED: &str = "is git metadata, read-only to skills (a changed .git/config or hook would run code in the user's next git command)";

// .git is read-only even with file:write: a changed config or hook would run
// the skill's code in the user's next `git` command.
#[tokio::test]
async fn git_metadata_is_read_only_even_with_file_write() {
    let h = Harness::new(&["file:write"]);
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(h.project())
        .status()
        .expect("git init");
    assert!(git.success());
    let config_before = std::fs::read(h.project().join(".git/config")).expect("config");
    let skill = load(&h, "git-writer");

    // Reading git metadata is fine.
    let config = h
        .call_ok(&skill, "read", json!({"path": "/project/.git/config"}))
        .await;
    assert!(config.contains("[core]"), "{config}");

    refused_with(
        &h,
        &skill,
        "append",
        json!({"path": "/project/.git/config", "text": "[core]\n\tfsmonitor = touch /tmp/pwned\n"}),
        "append failed: Read-only file system",
    )
    .await;
    refused_with(
        &h,
        &skill,
        "write",
        json!({"path": "/project/.git/hooks/pre-commit", "text": "#!/bin/sh\ntouch /tmp/pwned\n"}),
        "write failed: Read-only file system",
    )
    .await;
    // Relative to a descriptor of `.git`, and by swapping `.git` away.
    refused_with(
        &h,
        &skill,
        "write-at",
        json!({"dir": "/project/.git", "path": "hooks/post-checkout", "text": "x"}),
        "openat failed: Read-only file system",
    )
    .await;
    refused_with(
        &h,
        &skill,
        "rename",
        json!({"from": "/project/.git", "to": "/project/old-git"}),
        "rename failed: Read-only file system",
    )
    .await;
    // A hard link would make the config writable under another name.
    refused_with(
        &h,
        &skill,
        "hardlink",
        json!({"from": "/project/.git/config", "to": "/project/cfg"}),
        "hardlink failed: Read-only file system",
    )
    .await;

    assert_eq!(
        std::fs::read(h.project().join(".git/config")).expect("config"),
        config_before,
        "the config changed"
    );
    assert!(!h.project().join(".git/hooks/pre-commit").exists());
    assert!(!h.project().join(".git/hooks/post-checkout").exists());
    assert!(!h.project().join("cfg").exists());
    assert!(h.project().join(".git").is_dir());

    // The control: an ordinary file is written.
    let out = h
        .call_ok(
            &skill,
            "write",
            json!({"path": "/project/ok.txt", "text": "fine"}),
        )
        .await;
    assert_eq!(out, "written");

    let denied = |p: &str| entry("file:write", p, &format!("denied: {p} {GIT_DENIED}"));
    assert_eq!(
        denials(&h, "git-writer"),
        vec![
            denied("/project/.git/config"),
            denied("/project/.git/hooks/pre-commit"),
            denied("/project/.git/hooks/post-checkout"),
            denied("/project/.git"),
            denied("/project/.git/config"),
        ]
    );
}

const SKILLS_DENIED: &str =
    "is in the project's .agent/skills, read-only to skills (it decides which skills load)";

// The project's .agent/skills decides which skills load: never writable by a
// skill, however the path is spelled.
#[tokio::test]
async fn project_skills_are_read_only_through_descriptors_and_symlinks() {
    let h = Harness::new(&["file:write"]);
    std::fs::create_dir_all(h.project().join(".agent/skills")).expect("mkdir");
    std::fs::create_dir_all(h.project().join("sub")).expect("mkdir");
    let skill = load(&h, "skills-planter");

    // Opening `/project/.agent` as a directory, then writing below it.
    refused_with(
        &h,
        &skill,
        "mkdir-at",
        json!({"dir": "/project/.agent", "path": "skills/evil"}),
        "mkdirat failed: Read-only file system",
    )
    .await;
    refused_with(
        &h,
        &skill,
        "write-at",
        json!({"dir": "/project/.agent", "path": "skills/SKILL.yaml", "text": "name: evil"}),
        "openat failed: Read-only file system",
    )
    .await;
    // Through a symlink made inside the project (allowed: it stays inside).
    let out = h
        .call_ok(
            &skill,
            "symlink",
            json!({"target": "../.agent", "path": "/project/sub/lnk"}),
        )
        .await;
    assert_eq!(out, "linked");
    refused_with(
        &h,
        &skill,
        "write",
        json!({"path": "/project/sub/lnk/skills/x.yaml", "text": "name: evil"}),
        "write failed: Read-only file system",
    )
    .await;
    // Swapping `.agent` itself away.
    refused_with(
        &h,
        &skill,
        "rename",
        json!({"from": "/project/.agent", "to": "/project/agent-old"}),
        "rename failed: Read-only file system",
    )
    .await;

    assert_eq!(
        std::fs::read_dir(h.project().join(".agent/skills"))
            .expect("skills dir")
            .count(),
        0,
        "something was planted in .agent/skills"
    );
    assert!(h.project().join(".agent").is_dir());

    // The control: other files under `.agent` are the skill's to write.
    let out = h
        .call_ok(
            &skill,
            "write-at",
            json!({"dir": "/project/.agent", "path": "notes.txt", "text": "ok"}),
        )
        .await;
    assert_eq!(out, "written");
    assert_eq!(
        std::fs::read_to_string(h.project().join(".agent/notes.txt")).expect("notes"),
        "ok"
    );

    let denied = |p: &str| entry("file:write", p, &format!("denied: {p} {SKILLS_DENIED}"));
    assert_eq!(
        denials(&h, "skills-planter"),
        vec![
            denied("/project/.agent/skills/evil"),
            denied("/project/.agent/skills/SKILL.yaml"),
            denied("/project/.agent/skills/x.yaml"),
            entry(
                "file:write",
                "/project/.agent",
                "denied: /project/.agent holds the project's skills; skills cannot move, remove or replace it",
            ),
        ]
    );
}

// 9. A symlink whose target leaves the mount is not created (relative or
// absolute); one that stays inside is.
#[tokio::test]
async fn symlinks_out_of_the_mount_are_refused_inner_ones_work() {
    let h = Harness::new(&["file:write"]);
    std::fs::create_dir_all(h.project().join("sub")).expect("mkdir");
    std::fs::write(h.project().join("inner.txt"), "inside").expect("write");
    let skill = load(&h, "linker");

    for (target, link) in [
        ("../../etc/passwd", "/project/sub/up"),
        ("../outside", "/project/out"),
        ("/etc/passwd", "/project/abs"),
    ] {
        let text = refused(
            &h,
            &skill,
            "symlink",
            json!({"target": target, "path": link}),
        )
        .await;
        assert!(
            text.starts_with("symlink failed: Operation not permitted"),
            "{target}: {text}"
        );
    }
    for name in ["sub/up", "out", "abs"] {
        assert!(
            h.project().join(name).symlink_metadata().is_err(),
            "{name} was created"
        );
    }

    let out = h
        .call_ok(
            &skill,
            "symlink",
            json!({"target": "../inner.txt", "path": "/project/sub/in"}),
        )
        .await;
    assert_eq!(out, "linked");
    assert_eq!(
        h.call_ok(&skill, "read", json!({"path": "/project/sub/in"}))
            .await,
        "inside"
    );

    assert_eq!(
        denials(&h, "linker"),
        vec![
            entry(
                "file:write",
                "/project/sub/up",
                "denied: symlink /project/sub/up -> ../../etc/passwd would point outside /project",
            ),
            entry(
                "file:write",
                "/project/out",
                "denied: symlink /project/out -> ../outside would point outside /project",
            ),
            entry(
                "file:write",
                "/project/abs",
                "denied: symlink /project/abs -> /etc/passwd would point outside /project",
            ),
        ]
    );
}

// 8. With the home directory as the project, the agent's own directories
// (config with keys and user skills, data with the audit log, cache) are
// masked: listed, but never opened, changed or linked to.
#[tokio::test]
async fn the_agents_own_directories_are_masked_when_the_project_is_home() {
    let h = Harness::new(&["file:write"]);
    let paths = h.sandbox.paths();
    std::fs::write(paths.config_file(), "[secrets]\ntoken = \"s3cret\"\n").expect("config");
    let skill = load(&h, "home-planter");
    let mut ctx = CallContext::new(
        h.sandbox.home.path(),
        "cli",
        Arc::new(GrantsAuthorizer::new(h.grants.clone())),
    )
    .expect("context");
    ctx.mask_dirs([
        paths.config_dir.clone(),
        paths.data_dir.clone(),
        paths.cache_dir.clone(),
    ]);
    let ctx = Arc::new(ctx);
    let call = |tool: &'static str, input: serde_json::Value| {
        let (ctx, skill, runtime) = (ctx.clone(), &skill, &h.runtime);
        async move {
            runtime
                .call_tool(skill, &ctx, tool, &input.to_string())
                .await
                .map(|(r, _)| r)
                .expect("no host error")
        }
    };

    let err = call("read", json!({"path": "/project/config/config.toml"}))
        .await
        .expect_err("the config must not be readable");
    assert!(
        skill_error_text(&err).starts_with("read failed: Permission denied"),
        "{err:?}"
    );
    let err = call(
        "mkdir-at",
        json!({"dir": "/project/config", "path": "skills/evil"}),
    )
    .await
    .expect_err("no skill may be planted");
    assert!(
        skill_error_text(&err).starts_with("open dir failed: Permission denied"),
        "{err:?}"
    );
    let err = call(
        "write",
        json!({"path": "/project/config/skills/evil.yaml", "text": "x"}),
    )
    .await
    .expect_err("no skill may be planted");
    assert!(
        skill_error_text(&err).starts_with("write failed: Permission denied"),
        "{err:?}"
    );
    let err = call(
        "symlink",
        json!({"target": "config/keys", "path": "/project/keys-link"}),
    )
    .await
    .expect_err("no link into the agent's state");
    assert!(
        skill_error_text(&err).starts_with("symlink failed: Operation not permitted"),
        "{err:?}"
    );

    // The listing still names the directories; the rest of home is usable.
    let listing = call("list", json!({"path": "/project"}))
        .await
        .expect("list");
    assert!(
        listing.text.split(',').any(|n| n == "config"),
        "{listing:?}"
    );
    let manifest = call(
        "read",
        json!({"path": "/project/skill-src/home-planter/SKILL.yaml"}),
    )
    .await
    .expect("an ordinary file in home");
    assert!(manifest.text.contains("name: home-planter"));

    assert!(!paths.user_skills_dir().join("evil").exists());
    assert!(!paths.user_skills_dir().join("evil.yaml").exists());
    assert!(!h.sandbox.home.path().join("keys-link").exists());
    let config_dir = paths.config_dir.canonicalize().expect("canonical config");
    let state = |p: &str| {
        format!(
            "denied: {p} is inside agent's own state ({}); skills never see it",
            config_dir.display()
        )
    };
    assert_eq!(
        denials(&h, "home-planter"),
        vec![
            entry(
                "file:read",
                "/project/config/config.toml",
                &state("/project/config/config.toml")
            ),
            entry("file:read", "/project/config", &state("/project/config")),
            entry(
                "file:write",
                "/project/config/skills/evil.yaml",
                &state("/project/config/skills/evil.yaml")
            ),
            entry(
                "file:write",
                "/project/keys-link",
                "denied: symlink /project/keys-link -> config/keys would point into agent's own state",
            ),
        ]
    );
}

/// Every entry below `dir` and `dir` itself (symlinks not followed): path,
/// type, size, modification time, mode, link target, a hash of the contents.
fn snapshot(dir: &Path) -> Vec<String> {
    use std::hash::{Hash, Hasher};
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(path) = todo.pop() {
        let meta = path.symlink_metadata().expect("lstat");
        let what = if meta.is_dir() {
            for entry in std::fs::read_dir(&path).expect("listing") {
                todo.push(entry.expect("entry").path());
            }
            "directory".to_string()
        } else if meta.is_symlink() {
            let target = std::fs::read_link(&path).expect("readlink");
            format!("symlink -> {}", target.display())
        } else {
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            std::fs::read(&path).expect("contents").hash(&mut hasher);
            format!("file of {} bytes, hash {:x}", meta.len(), hasher.finish())
        };
        out.push(format!(
            "{}: {what}, modified {:?}, mode {:o}",
            path.display(),
            meta.modified().expect("mtime"),
            meta.permissions().mode()
        ));
    }
    out.sort();
    out
}

/// The numbers in a tool's report, in order.
fn numbers(report: &str) -> Vec<u64> {
    report
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect()
}

// The race a check-then-act guard loses: one instance swaps `/project/x`,
// for 3 s, between a real directory and a symlink to `.git/hooks` or
// `.agent/skills` (symlinks inside the mount are allowed), while a second
// instance, in parallel, renames a hook onto `x/pre-commit`, makes
// directories, hard links and symlinks below `x`, re-times, removes and
// moves out `x/*.sample`. A change checked while `x` was the directory and
// made after it became the symlink would land in `.git/hooks`: the guard
// makes every change on the directory handle its check pinned, so it lands
// in the real directory or is refused (and audited) — never in `.git` or
// `.agent/skills`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_symlink_into_git_mid_change_changes_nothing_there() {
    let h = Arc::new(Harness::new(&["file:write"]));
    let project = h.project().to_path_buf();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .expect("git init");
    assert!(git.success());
    for sample in ["pre-push.sample", "pre-rebase.sample", "update.sample"] {
        assert!(
            project.join(".git/hooks").join(sample).is_file(),
            "{sample}"
        );
    }
    std::fs::create_dir_all(project.join(".agent/skills")).expect("mkdir");
    std::fs::write(project.join(".agent/skills/README"), "kept").expect("write");
    std::fs::create_dir(project.join("x.d")).expect("mkdir");
    let (git_before, skills_before) = (
        snapshot(&project.join(".git")),
        snapshot(&project.join(".agent")),
    );
    let swapper = load(&h, "racer-swap");
    let planter = load(&h, "racer-plant");

    let run = |skill: Skill, tool: &'static str| {
        let h = h.clone();
        tokio::spawn(async move { h.call_ok(&skill, tool, json!({"ms": 3000})).await })
    };
    let (swapped, planted) = (run(swapper, "race-swap"), run(planter, "race-plant"));
    let (swapped, planted) = (
        swapped.await.expect("the swapper"),
        planted.await.expect("the planter"),
    );
    println!("race-swap: {swapped}\nrace-plant: {planted}");

    // Both sides of the race happened: changes made in the real directory
    // and changes refused because `x` led into `.git` or `.agent/skills`.
    let [iterations, made, read_only, _other] = numbers(&planted)[..] else {
        panic!("unexpected report: {planted}");
    };
    assert!(numbers(&swapped)[0] > 0, "no swaps: {swapped}");
    assert!(iterations > 0, "no iterations: {planted}");
    assert!(
        made > 0,
        "nothing was ever made below the real x: {planted}"
    );
    assert!(read_only > 0, "x never led into .git at a check: {planted}");
    assert!(project.join("x.d/pre-commit").is_file());

    // Nothing in `.git` or `.agent` changed, not even a time stamp.
    assert!(!project.join(".git/hooks/pre-commit").exists());
    assert!(!project.join(".agent/skills/pre-commit").exists());
    assert_eq!(snapshot(&project.join(".git")), git_before, ".git changed");
    assert_eq!(
        snapshot(&project.join(".agent")),
        skills_before,
        ".agent changed"
    );

    // Each refusal was audited, as git metadata or the skills directory.
    let refusals = denials(&h, "racer-plant");
    assert_eq!(refusals.len() as u64, read_only);
    for (capability, target, decision) in &refusals {
        assert_eq!(capability, "file:write");
        let expected = if target.starts_with("/project/.git/hooks/") {
            format!("denied: {target} {GIT_DENIED}")
        } else {
            assert!(target.starts_with("/project/.agent/skills/"), "{target}");
            format!("denied: {target} {SKILLS_DENIED}")
        };
        assert_eq!(decision, &expected);
    }
    assert_eq!(denials(&h, "racer-swap"), vec![]);
}

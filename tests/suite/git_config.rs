//! Issue 12, escape 1: git configuration runs commands. A repository's
//! configuration can name programs — `core.fsmonitor`, a diff driver's
//! `textconv` and `command`, `diff.external`, filter drivers, pagers,
//! editors, credential helpers, `gpg.program`, hooks, and `include.path` /
//! `includeIf` files that bring more of them — and git runs them. A skill
//! with `git:read`/`git:write` but no `shell:exec` must not get a program run
//! on the host by the host's git imports.
//!
//! The hostile configuration is seeded from the test (a skill may not be able
//! to write `.git/` at all); the hostile guest `tests/guests/git-hostile`
//! also tries to plant it itself, and then calls every git import. Every
//! planted command would `touch` a marker file in a directory outside the
//! project: none may appear, the answers must be the repository's real
//! content, and the audit log must record each use and the ignored settings.

use std::path::Path;
use std::process::Command;

use agent_runtime::Skill;
use serde_json::{Value, json};

use crate::common::{Harness, guest};

/// Runs the host's git in `dir` for setup and checks: no system or global
/// configuration, and every command-running key of the seeded configuration
/// switched off on the command line, so the test's own git runs nothing.
fn git(dir: &Path, args: &[&str]) -> String {
    let home = tempfile::tempdir().expect("empty home");
    let out = Command::new("git")
        .args([
            "--no-pager",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The command that leaves marker `name` in `markers`, then does `then`.
fn touch(markers: &Path, name: &str, then: &str) -> String {
    format!("touch {}/{name}; {then}", markers.display())
}

/// A repository in `project` with two commits (`notes.md`: "one", then
/// "one\ntwo"), `.gitattributes` sending every `.md` file through diff
/// driver `x`, filter `y` and merge driver `m`; then a modified `notes.md`
/// ("three" added) and a staged new `staged.md`.
fn make_repository(project: &Path) {
    git(project, &["init", "-q", "-b", "main"]);
    git(project, &["config", "user.name", "Test User"]);
    git(project, &["config", "user.email", "test@example.com"]);
    std::fs::write(
        project.join(".gitattributes"),
        "*.md diff=x filter=y merge=m\n",
    )
    .unwrap();
    std::fs::write(project.join("notes.md"), "one\n").unwrap();
    git(project, &["add", "."]);
    git(project, &["commit", "-q", "-m", "first"]);
    std::fs::write(project.join("notes.md"), "one\ntwo\n").unwrap();
    git(project, &["commit", "-q", "-am", "second"]);
    std::fs::write(project.join("notes.md"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(project.join("staged.md"), "staged\n").unwrap();
    git(project, &["add", "staged.md"]);
}

/// Seeds the hostile configuration into the repository: every key that
/// names a program, hooks, an `include.path` and an `includeIf` file, each
/// command leaving its own marker in `markers`.
fn seed_hostile_configuration(project: &Path, markers: &Path, extra: &Path) {
    let t = |name: &str, then: &str| touch(markers, name, then);
    let hooks = extra.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let included = extra.join("included.config");
    std::fs::write(
        &included,
        format!(
            "[core]\n\tfsmonitor = \"{}\"\n[diff \"z\"]\n\ttextconv = \"{}\"\n[filter \"y\"]\n\tprocess = \"{}\"\n",
            t("include-fsmonitor", "false"),
            t("include-textconv", "cat"),
            t("include-filter-process", "false"),
        ),
    )
    .unwrap();
    let conditional = extra.join("conditional.config");
    std::fs::write(
        &conditional,
        format!(
            "[core]\n\thooksPath = {}\n\tpager = \"{}\"\n",
            hooks.display(),
            t("includeif-pager", "cat")
        ),
    )
    .unwrap();
    let config = format!(
        r#"[core]
	fsmonitor = "{fsmonitor}"
	pager = "{pager}"
	editor = "{editor}"
	sshCommand = "{ssh}"
	askPass = "{askpass}"
[pager]
	status = "{pager_status}"
	diff = "{pager_diff}"
	log = "{pager_log}"
	show = "{pager_show}"
[diff]
	external = "{external}"
[diff "x"]
	textconv = "{textconv}"
	command = "{diff_command}"
[filter "y"]
	clean = "{clean}"
	smudge = "{smudge}"
[merge "m"]
	driver = "{merge}"
[credential]
	helper = "!{credential}"
[gpg]
	program = "{gpg}"
[commit]
	gpgSign = true
[sequence]
	editor = "{sequence}"
[include]
	path = {included}
[includeIf "gitdir:{gitdir}/"]
	path = {conditional}
"#,
        fsmonitor = t("fsmonitor", "false"),
        pager = t("pager", "cat"),
        editor = t("editor", "true"),
        ssh = t("ssh", "false"),
        askpass = t("askpass", "false"),
        pager_status = t("pager-status", "cat"),
        pager_diff = t("pager-diff", "cat"),
        pager_log = t("pager-log", "cat"),
        pager_show = t("pager-show", "cat"),
        external = t("external-diff", "true"),
        textconv = t("textconv", "cat"),
        diff_command = t("diff-command", "true"),
        clean = t("filter-clean", "cat"),
        smudge = t("filter-smudge", "cat"),
        merge = t("merge-driver", "true"),
        credential = t("credential-helper", "true"),
        gpg = t("gpg", "false"),
        sequence = t("sequence-editor", "true"),
        included = included.display(),
        gitdir = project.display(),
        conditional = conditional.display(),
    );
    let path = project.join(".git/config");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&config);
    std::fs::write(&path, text).unwrap();
    // Hooks, both where git looks by default and in the includeIf's
    // `core.hooksPath`.
    for dir in [project.join(".git/hooks"), hooks] {
        std::fs::create_dir_all(&dir).unwrap();
        for hook in [
            "pre-commit",
            "prepare-commit-msg",
            "commit-msg",
            "post-commit",
            "reference-transaction",
            "post-index-change",
            "pre-auto-gc",
        ] {
            agent_tests::write_executable(
                &dir.join(hook),
                &format!("#!/bin/sh\n{}\n", t(&format!("hook-{hook}"), "true")),
            );
        }
    }
}

/// The markers left so far, sorted.
fn markers_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Calls the guest's `git` tool with `input`; its text (`error: ...` when
/// the import failed).
async fn call(h: &Harness, skill: &Skill, input: Value) -> String {
    let text = h.call_ok(skill, "git", input.clone()).await;
    println!("git {input} ->\n{text}");
    text
}

#[tokio::test]
async fn git_imports_run_nothing_the_repository_or_its_includes_name() {
    let h = Harness::new(&["file:write", "git:read", "git:write"]);
    let project = h.project().to_path_buf();
    let markers = tempfile::tempdir().expect("marker dir");
    let extra = tempfile::tempdir().expect("include dir");
    make_repository(&project);
    seed_hostile_configuration(&project, markers.path(), extra.path());
    let skill = h
        .load_guest(
            &guest("guest-git-hostile"),
            "git-hostile",
            "permissions: [file:write, git:read, git:write]\n",
        )
        .expect("the hostile git skill loads");

    // The skill tries to plant the same itself; whether `.git/` is writable
    // for it is another rule's business, so its answer is only shown.
    let planted = h
        .call_ok(
            &skill,
            "plant",
            json!({"marker_dir": markers.path().display().to_string()}),
        )
        .await;
    println!("plant ->\n{planted}");

    // Reads: the real content, nothing run.
    let status = call(&h, &skill, json!({"op": "status"})).await;
    assert!(status.contains(" M notes.md\n"), "{status}");
    assert!(status.contains("A  staged.md\n"), "{status}");

    let worktree = call(&h, &skill, json!({"op": "diff"})).await;
    assert!(
        worktree.contains("diff --git a/notes.md b/notes.md") && worktree.contains("\n+three\n"),
        "{worktree}"
    );
    let between = call(
        &h,
        &skill,
        json!({"op": "diff", "base": "HEAD~1", "head": "HEAD"}),
    )
    .await;
    assert!(between.contains("\n one\n+two\n"), "{between}");
    let against_head = call(&h, &skill, json!({"op": "diff", "base": "HEAD"})).await;
    assert!(
        against_head.contains("\n+three\n") && against_head.contains("+staged\n"),
        "{against_head}"
    );
    let cached = call(&h, &skill, json!({"op": "diff", "head": "HEAD"})).await;
    assert!(
        cached.contains("b/staged.md") && !cached.contains("+three"),
        "{cached}"
    );
    let paths = call(&h, &skill, json!({"op": "diff", "paths": ["staged.md"]})).await;
    assert!(!paths.contains("notes.md"), "{paths}");

    let log = call(&h, &skill, json!({"op": "log", "max": 5})).await;
    let summaries: Vec<&str> = log
        .lines()
        .map(|l| l.rsplit(" | ").next().unwrap())
        .collect();
    assert_eq!(summaries, ["second", "first"], "{log}");
    assert!(log.contains("Test User <test@example.com>"), "{log}");

    let show = call(&h, &skill, json!({"op": "show", "rev": "HEAD"})).await;
    assert!(
        show.contains("    second\n") && show.contains("\n+two\n"),
        "{show}"
    );

    let ran = markers_in(markers.path());
    println!("markers after the reads: {ran:?}");
    assert!(
        ran.is_empty(),
        "commands named by git configuration ran during the reads: {ran:?}"
    );

    // Writes: the commit is made (unsigned: gpg.program is never run), with
    // no hook, filter or signing program; the branch too.
    let id = call(
        &h,
        &skill,
        json!({"op": "commit", "message": "third", "paths": ["notes.md"]}),
    )
    .await;
    assert!(
        id.len() == 40 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "the commit answers its id: {id}"
    );
    assert_eq!(git(&project, &["rev-parse", "HEAD"]).trim(), id);
    assert_eq!(git(&project, &["log", "-1", "--format=%s"]).trim(), "third");
    assert_eq!(
        git(&project, &["show", "HEAD:notes.md"]),
        "one\ntwo\nthree\n"
    );
    let branched = call(
        &h,
        &skill,
        json!({"op": "branch", "name": "feature", "start": "HEAD~1"}),
    )
    .await;
    assert_eq!(branched, "branched");
    assert_eq!(
        git(&project, &["rev-parse", "feature"]),
        git(&project, &["rev-parse", "HEAD~1"])
    );

    // Not one of the planted commands ran.
    let ran = markers_in(markers.path());
    println!("markers after the writes: {ran:?}");
    assert!(
        ran.is_empty(),
        "commands named by git configuration ran during the writes: {ran:?}"
    );

    // Each use is audited, with the settings the host ignored.
    let uses: Vec<(String, String, String)> = h
        .audit_of("git-hostile")
        .into_iter()
        .filter(|(c, _, d)| c.starts_with("git:") && !d.starts_with("granted"))
        .collect();
    for (_, target, decision) in &uses {
        println!("audit: {target} | {decision}");
    }
    let targets: Vec<&str> = uses.iter().map(|(_, t, _)| t.as_str()).collect();
    assert_eq!(
        targets,
        [
            "git status",
            "git diff",
            "git diff",
            "git diff",
            "git diff",
            "git diff",
            "git log",
            "git show",
            "git commit",
            "git rev-parse HEAD",
            "git branch feature",
        ],
        "{uses:?}"
    );
    for (capability, target, decision) in &uses {
        assert!(
            decision.starts_with("ok; ignored the repository's command settings: "),
            "{capability} {target}: {decision}"
        );
        assert!(decision.contains("core.fsmonitor"), "{target}: {decision}");
        assert!(decision.contains("diff.x.textconv"), "{target}: {decision}");
    }
    let commit = &uses[8];
    assert_eq!(commit.0, "git:write");
    // The write listed the configuration with its includes: the included
    // file's driver and the `includeIf` file's hooks directory.
    for key in ["filter.y.clean", "diff.z.textconv", "core.hookspath"] {
        assert!(commit.2.contains(key), "{key} in {commit:?}");
    }
}

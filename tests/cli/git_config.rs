//! Issue 12, escape 1, the user's side: the built-in `git` skill through the
//! real binary, with a hostile *global* git configuration (`HOME/.gitconfig`
//! and `XDG_CONFIG_HOME/git/config`) naming programs — fsmonitor, a pager,
//! hooks, a filter applied to every file through `core.attributesFile`,
//! commit signing. The host's git runs without the user's configuration: no
//! marker appears, and the commit still carries the user's name and e-mail,
//! the only thing the host takes from it.

use std::path::Path;
use std::process::Command;

use super::{code, ok, sandbox, text, write};

/// The test's own git in `dir`: no system or global configuration.
fn git(dir: &Path, args: &[&str]) -> String {
    let home = tempfile::tempdir().expect("empty home");
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .expect("running git");
    ok(&out)
}

#[test]
fn the_users_global_git_configuration_runs_nothing_but_names_the_author() {
    let sb = sandbox();
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    write(p, "notes.txt", "first line\n");
    git(p, &["add", "notes.txt"]);
    git(
        p,
        &[
            "-c",
            "user.name=Setup",
            "-c",
            "user.email=setup@example.com",
            "commit",
            "-q",
            "-m",
            "initial notes",
        ],
    );
    write(p, "notes.txt", "first line\nsecond line\n");

    let fake_home = tempfile::tempdir().expect("fake home");
    let markers = tempfile::tempdir().expect("markers");
    let home = fake_home.path();
    let m = markers.path().display();
    std::fs::create_dir_all(home.join("hooks")).expect("hooks");
    for (hook, marker) in [
        ("post-commit", "hook"),
        ("reference-transaction", "hook-ref"),
    ] {
        let script = format!("#!/bin/sh\ntouch {m}/{marker}\n");
        agent_tests::write_executable(&home.join("hooks").join(hook), &script);
    }
    write(home, "attributes", "* filter=g diff=g\n");
    write(
        home,
        ".gitconfig",
        &format!(
            "[user]\n\tname = Global User\n\temail = global@example.com\n[core]\n\tfsmonitor = \"touch {m}/fsmonitor; false\"\n\tpager = \"touch {m}/pager; cat\"\n\thooksPath = {hooks}\n\tattributesFile = {attributes}\n[filter \"g\"]\n\tclean = \"touch {m}/clean; cat\"\n\tsmudge = \"touch {m}/smudge; cat\"\n[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = \"touch {m}/gpg; false\"\n",
            hooks = home.join("hooks").display(),
            attributes = home.join("attributes").display(),
        ),
    );
    write(
        home,
        "xdg/git/config",
        &format!("[diff \"g\"]\n\ttextconv = \"touch {m}/textconv; cat\"\n"),
    );

    let call = |tool: &str, input: &str, allow: &str| {
        let out = sb
            .agent_cmd(&[
                "skill", "call", "git", tool, "--input", input, "--allow", allow,
            ])
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join("xdg"))
            .output()
            .expect("running agent");
        let (stdout, stderr) = text(&out);
        println!("{tool} -> {:?}\n{stdout}{stderr}", code(&out));
        ok(&out)
    };
    let status = call("git_status", "{}", "git:read");
    assert!(status.contains(" M notes.txt"), "{status}");
    let diff = call("git_diff", "{}", "git:read");
    assert!(diff.contains("+second line"), "{diff}");
    let committed = call(
        "git_commit",
        r#"{"message":"add a second line","paths":["notes.txt"]}"#,
        "git:write",
    );
    assert!(committed.contains("committed"), "{committed}");

    let ran: Vec<String> = std::fs::read_dir(markers.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        ran.is_empty(),
        "the global configuration's commands ran: {ran:?}"
    );
    assert_eq!(
        git(p, &["log", "-1", "--format=%s|%an|%ae|%cn|%G?"]).trim(),
        "add a second line|Global User|global@example.com|Global User|N",
        "the commit is the user's, unsigned"
    );
}

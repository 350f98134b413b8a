//! Rough edges a new user meets in the first hour (issue 15): log colours in
//! a redirected stderr, docs that name commands the binary does not have,
//! global flags refused before the subcommand.

use std::collections::BTreeSet;
use std::process::Command;

use agent_tests::text;

use super::{code, ok, sandbox};

/// Issue 15, item 7: with `-v` and stderr redirected to a file, log lines
/// kept their ANSI colours. Colour only on a terminal: a pipe (what
/// `Command::output` gives the binary) gets plain text, with or without
/// `NO_COLOR`.
#[test]
fn verbose_logs_on_a_redirected_stderr_have_no_colours() {
    let sb = sandbox();
    let out = sb
        .agent_cmd(&["skill", "list", "-v"])
        .env_remove("NO_COLOR")
        .env("AGENT_LOG", "debug")
        .output()
        .expect("running agent");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("DEBUG"), "no log line to check:\n{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "ANSI escapes in a redirected stderr:\n{stderr:?}"
    );
}

/// The binary's subcommands under `path` (e.g. `[]` or `["skill"]`), read
/// from the "Commands:" section of its `--help`.
fn subcommands(path: &[&str]) -> BTreeSet<String> {
    let mut args: Vec<&str> = path.to_vec();
    args.push("--help");
    let out = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(&args)
        .output()
        .expect("agent --help");
    let help = String::from_utf8_lossy(&out.stdout).to_string();
    help.lines()
        .skip_while(|l| l.trim() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

/// Flags before a subcommand that take a value (skipped with their value).
const VALUE_FLAGS: &[&str] = &[
    "--project",
    "--allow",
    "--capabilities",
    "--skills",
    "--allow-shadow",
    "--resume",
    "--provider",
    "--model",
    "--base-url",
];

/// The command words after `agent` in `invocation` (up to two), skipping
/// flags; stops at anything that is not a plain word (a path, a
/// placeholder).
fn command_words(invocation: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut tokens = invocation.split_whitespace();
    while let Some(t) = tokens.next() {
        if t.starts_with('-') {
            if VALUE_FLAGS.contains(&t) {
                tokens.next();
            }
            continue;
        }
        if !t.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
            break;
        }
        words.push(t.to_string());
        if words.len() == 2 {
            break;
        }
    }
    words
}

/// Every `agent ...` invocation in the docs' code: inline code spans that
/// start with `agent `, and fenced lines (or parts after `&&`, `|`, `;`)
/// that do, with the file and line.
fn invocations(doc: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut fenced = false;
    for (n, line) in doc.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            for part in line.split(['&', '|', ';']) {
                let part = part.trim().trim_start_matches("$ ");
                if let Some(rest) = part.strip_prefix("agent ") {
                    found.push((n + 1, rest.to_string()));
                }
            }
        } else {
            for (i, span) in line.split('`').enumerate() {
                if i % 2 == 1
                    && let Some(rest) = span.strip_prefix("agent ")
                {
                    found.push((n + 1, rest.to_string()));
                }
            }
        }
    }
    found
}

/// Issue 15, item 9: docs/permissions.md told users to run `agent skill
/// run`, which does not exist. Every `agent <subcommand>` (and `agent
/// <subcommand> <subcommand>`) in README.md and docs/*.md names a command the
/// binary's `--help` lists.
#[test]
fn every_agent_command_in_the_docs_exists() {
    let root = agent_tests::workspace();
    let top = subcommands(&[]);
    assert!(top.contains("skill"), "{top:?}");
    let mut files = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).expect("docs") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    let mut wrong = Vec::new();
    let mut checked = 0;
    for file in &files {
        let doc = std::fs::read_to_string(file).expect("read doc");
        let name = file
            .strip_prefix(&root)
            .unwrap_or(file)
            .display()
            .to_string();
        for (line, invocation) in invocations(&doc) {
            let words = command_words(&invocation);
            let Some(first) = words.first() else { continue };
            checked += 1;
            if !top.contains(first) {
                wrong.push(format!(
                    "{name}:{line}: `agent {invocation}`: no command `{first}`"
                ));
                continue;
            }
            let Some(second) = words.get(1) else { continue };
            let below = subcommands(&[first]);
            if !below.is_empty() && !below.contains(second) {
                wrong.push(format!(
                    "{name}:{line}: `agent {invocation}`: no command `{first} {second}`"
                ));
            }
        }
    }
    assert!(checked > 20, "too few invocations found ({checked})");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Issue 15, item 15: the README calls `--verbose`, `--allow` and friends
/// global flags, but `agent -v security-audit …` and `agent --allow file:read
/// skill list` were refused ("the subcommand cannot be used with …").
/// Global flags work before or after the subcommand; the interface's own
/// flags before a subcommand are a usage error that says where they go.
#[test]
fn global_flags_work_before_the_subcommand() {
    let sb = sandbox();
    let before = sb.agent(&["--allow", "file:read", "skill", "list"]);
    let stdout = ok(&before);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("core-tools"))
        .unwrap_or_else(|| panic!("no core-tools row:\n{stdout}"));
    assert!(!line.contains("file:read [not granted]"), "{line}");

    let after = sb.agent(&["skill", "list", "--allow", "file:read"]);
    assert_eq!(ok(&after), stdout);

    let dir = sb.project.path().display().to_string();
    let audit = sb.agent(&["-v", "security-audit", &dir, "--output", "json"]);
    let (out, err) = text(&audit);
    assert_ne!(code(&audit), 2, "refused as a usage error:\n{out}\n{err}");
    assert!(!err.contains("cannot be used with"), "{err}");
    serde_json::from_str::<serde_json::Value>(&out)
        .unwrap_or_else(|e| panic!("no JSON report ({e}):\n{out}\n{err}"));

    let misplaced = sb.agent(&["--model", "m", "skill", "list"]);
    let (out, err) = text(&misplaced);
    assert_eq!(code(&misplaced), 2, "{out}\n{err}");
    assert!(
        err.contains("--model before the subcommand belong to the interactive interface; give them after the subcommand"),
        "{err}"
    );
}

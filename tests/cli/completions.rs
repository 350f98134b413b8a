//! Shell completions and the manual page (issue 15, item 8), checked with
//! the programs users have: the bash script is sourced in a real `bash` and
//! its completion function asked to complete `agent sk`; the zsh and fish
//! scripts go through their shells' syntax checks; the man page is rendered
//! by `groff`/`man`.

use std::io::Write;
use std::process::{Command, Stdio};

use agent_tests::text;

use super::{code, ok, sandbox};

/// Whether `program` runs here (`program --version`).
fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `program args` with `input` on stdin.
fn run_with_stdin(program: &str, args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {program}: {e}"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("writing stdin");
    child.wait_with_output().expect("waiting")
}

/// The script `agent completions SHELL` prints, saved in a temporary
/// directory (kept as long as the returned guard).
fn script(shell: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let sb = sandbox();
    let out = sb.agent(&["completions", shell]);
    let body = ok(&out);
    assert!(!body.is_empty(), "empty {shell} script");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(format!("agent.{shell}"));
    std::fs::write(&path, body).expect("write script");
    (dir, path)
}

/// Sourced in bash, the script registers a completion for `agent`, and its
/// function completes `agent sk` to `skill` and `agent skill li` to `list`.
#[test]
fn bash_completion_completes_subcommands_in_a_real_bash() {
    let (_dir, path) = script("bash");
    let probe = format!(
        r#"source '{script}' || exit 9
complete -p agent || exit 8
fn=$(complete -p agent | sed -n 's/.*-F \([^ ]*\).*/\1/p')
[ -n "$fn" ] || exit 7
COMP_WORDS=(agent sk); COMP_CWORD=1; COMP_LINE='agent sk'; COMP_POINT=${{#COMP_LINE}}
"$fn" agent sk agent
echo "top: ${{COMPREPLY[*]}}"
COMPREPLY=()
COMP_WORDS=(agent skill li); COMP_CWORD=2; COMP_LINE='agent skill li'; COMP_POINT=${{#COMP_LINE}}
"$fn" agent li skill
echo "skill: ${{COMPREPLY[*]}}"
COMPREPLY=()
COMP_WORDS=(agent --headl); COMP_CWORD=1; COMP_LINE='agent --headl'; COMP_POINT=${{#COMP_LINE}}
"$fn" agent --headl agent
echo "flag: ${{COMPREPLY[*]}}"
"#,
        script = path.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .output()
        .expect("running bash");
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "bash exited {:?}\n{stdout}\n{stderr}",
        out.status.code()
    );
    let registered = stdout
        .lines()
        .find(|l| l.starts_with("complete "))
        .unwrap_or_else(|| panic!("no completion registered for agent:\n{stdout}"));
    assert!(
        registered.contains(" -F _agent") && registered.ends_with(" agent"),
        "{registered}"
    );
    let top = stdout
        .lines()
        .find(|l| l.starts_with("top:"))
        .expect("top line");
    assert_eq!(
        top.split_whitespace().skip(1).collect::<Vec<_>>(),
        ["skill"],
        "{stdout}"
    );
    // The spec's `--headless` spelling is offered too.
    let flag = stdout
        .lines()
        .find(|l| l.starts_with("flag:"))
        .expect("flag line");
    assert_eq!(
        flag.split_whitespace().skip(1).collect::<Vec<_>>(),
        ["--headless"],
        "{stdout}"
    );
    let sub = stdout
        .lines()
        .find(|l| l.starts_with("skill:"))
        .expect("skill line");
    assert_eq!(
        sub.split_whitespace().skip(1).collect::<Vec<_>>(),
        ["list"],
        "{stdout}"
    );
}

/// The zsh and fish scripts pass their shells' own syntax checks (skipped,
/// with the reason printed, where the shell is not installed).
#[test]
fn zsh_and_fish_scripts_pass_their_shells_syntax_checks() {
    for (shell, check) in [("zsh", ["-n"]), ("fish", ["-n"])] {
        if !have(shell) {
            println!(
                "skipped: {shell} is not installed (apt-get install {shell}) — its script was not syntax-checked"
            );
            continue;
        }
        let (_dir, path) = script(shell);
        let out = Command::new(shell)
            .args(check)
            .arg(&path)
            .output()
            .unwrap_or_else(|e| panic!("running {shell}: {e}"));
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "{shell} -n rejected the script:\n{stdout}\n{stderr}"
        );
    }
    let (_dir, ps) = script("powershell");
    let ps = std::fs::read_to_string(ps).expect("read");
    assert!(
        ps.contains("Register-ArgumentCompleter") && ps.contains("'agent'"),
        "not a PowerShell completer:\n{ps}"
    );
}

/// A shell the binary has no script for is a usage error (exit 2) that
/// lists the ones it has.
#[test]
fn an_unknown_shell_is_a_usage_error_listing_the_valid_ones() {
    let sb = sandbox();
    let out = sb.agent(&["completions", "tcsh"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stdout}\n{stderr}");
    assert!(stdout.is_empty(), "a script was printed anyway:\n{stdout}");
    assert!(stderr.contains("'tcsh'"), "{stderr}");
    assert!(
        stderr.contains("bash, zsh, fish, powershell"),
        "the valid shells are not listed:\n{stderr}"
    );
}

/// `agent man` is a roff page that `groff` (or `man -l`) renders, naming
/// the subcommands; `--help` says how to install both.
#[test]
fn the_man_page_renders_and_names_the_subcommands() {
    let sb = sandbox();
    let roff = ok(&sb.agent(&["man"]));
    assert!(
        roff.starts_with(".ie") || roff.contains(".TH agent 1"),
        "not roff:\n{roff}"
    );
    let rendered = if have("groff") {
        run_with_stdin("groff", &["-k", "-man", "-Tutf8"], roff.as_bytes())
    } else if have("man") {
        run_with_stdin("man", &["-l", "-"], roff.as_bytes())
    } else {
        println!(
            "skipped rendering: neither groff nor man is installed (apt-get install groff-base)"
        );
        return;
    };
    let (page, stderr) = text(&rendered);
    assert!(rendered.status.success(), "{stderr}");
    assert!(
        !stderr.contains("warning"),
        "the renderer warned:\n{stderr}"
    );
    let page = strip_overstrike(&page);
    for section in ["NAME", "SYNOPSIS", "SUBCOMMANDS"] {
        assert!(page.contains(section), "no {section} section:\n{page}");
    }
    for sub in ["skill", "run", "security-audit", "completions", "man"] {
        assert!(
            page.contains(&format!("agent-{sub}(1)")),
            "the page does not name `{sub}`:\n{page}"
        );
    }

    let help = ok(&sb.agent(&["completions", "--help"]));
    assert!(
        help.contains("agent completions bash > ~/.local/share/bash-completion/completions/agent"),
        "{help}"
    );
    let help = ok(&sb.agent(&["man", "--help"]));
    assert!(
        help.contains("agent man --dir ~/.local/share/man/man1"),
        "{help}"
    );

    // `--dir` writes the pages the main page points to, e.g. agent-skill-list.1.
    let dir = sb.home.path().join("man/man1");
    let out = ok(&sb.agent(&["man", "--dir", dir.to_str().expect("utf-8")]));
    assert!(out.contains("wrote the manual pages"), "{out}");
    for page in [
        "agent.1",
        "agent-skill.1",
        "agent-skill-list.1",
        "agent-run.1",
        "agent-man.1",
    ] {
        assert!(dir.join(page).is_file(), "no {page} in {}", dir.display());
    }
    let run_page = std::fs::read(dir.join("agent-run.1")).expect("agent-run.1");
    if have("groff") {
        let rendered = run_with_stdin("groff", &["-k", "-man", "-Tutf8"], &run_page);
        let page = strip_overstrike(&text(&rendered).0);
        assert!(
            page.contains("--prompt") && page.contains("--max-turns"),
            "{page}"
        );
    }
}

/// `groff -Tutf8` marks bold and underline with backspaces (`N\bN`): keep
/// the printed characters.
fn strip_overstrike(s: &str) -> String {
    let mut out: Vec<char> = Vec::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{8}' {
            out.pop();
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out.into_iter().collect()
}

//! Argument guards for `exec`: programs whose options run other programs or
//! code given on the command line. One table, matched on the program's file
//! name (`/usr/bin/git` and `git` alike); an argument it names refuses the
//! whole run before anyone is asked.
//!
//! Allowing `git` is meant to allow git, not whatever `git -c alias.x='!cmd'
//! x` runs; allowing `python3` to run the project's scripts, not `-c CODE`.

/// How a program's arguments are checked.
enum Rule {
    /// The program's job is to run another program (`env`, `xargs`):
    /// refused whatever the arguments; name the other program in `exec`.
    Runner,
    /// Any argument equal to one of these, or starting with one followed by
    /// `=`, is refused.
    Options(&'static [&'static str]),
    /// Like `Options`, plus short-option clusters (`-ec`, `-Ic`) holding one
    /// of these letters: interpreters that run code given as an argument.
    Interpreter {
        long: &'static [&'static str],
        short: &'static [char],
    },
    /// git's global options before the subcommand, the subcommands that set
    /// configuration, and the transport options that name a program.
    Git,
}

/// Program file names (a trailing `*` is a prefix) and their rule.
const GUARDS: &[(&str, Rule)] = &[
    ("env", Rule::Runner),
    ("xargs", Rule::Runner),
    ("busybox", Rule::Runner),
    ("toybox", Rule::Runner),
    ("nohup", Rule::Runner),
    ("timeout", Rule::Runner),
    ("nice", Rule::Runner),
    ("ionice", Rule::Runner),
    ("setsid", Rule::Runner),
    ("stdbuf", Rule::Runner),
    ("chroot", Rule::Runner),
    ("unshare", Rule::Runner),
    ("nsenter", Rule::Runner),
    ("sudo", Rule::Runner),
    ("doas", Rule::Runner),
    ("su", Rule::Runner),
    ("runuser", Rule::Runner),
    ("flock", Rule::Runner),
    ("watch", Rule::Runner),
    ("parallel", Rule::Runner),
    ("strace", Rule::Runner),
    ("ltrace", Rule::Runner),
    ("script", Rule::Runner),
    (
        "find",
        Rule::Options(&["-exec", "-execdir", "-ok", "-okdir"]),
    ),
    ("git", Rule::Git),
    (
        "sh",
        Rule::Interpreter {
            long: &[],
            short: &['c'],
        },
    ),
    (
        "bash",
        Rule::Interpreter {
            long: &["--rcfile", "--init-file"],
            short: &['c'],
        },
    ),
    (
        "dash",
        Rule::Interpreter {
            long: &[],
            short: &['c'],
        },
    ),
    (
        "zsh",
        Rule::Interpreter {
            long: &[],
            short: &['c'],
        },
    ),
    (
        "ksh",
        Rule::Interpreter {
            long: &[],
            short: &['c'],
        },
    ),
    (
        "fish",
        Rule::Interpreter {
            long: &["--command", "--init-command"],
            short: &['c', 'C'],
        },
    ),
    (
        "python*",
        Rule::Interpreter {
            long: &[],
            short: &['c'],
        },
    ),
    (
        "pypy*",
        Rule::Interpreter {
            long: &[],
            short: &['c'],
        },
    ),
    (
        "node",
        Rule::Interpreter {
            long: &["--eval", "--print", "--require", "--import", "--loader"],
            short: &['e', 'p', 'r'],
        },
    ),
    ("deno", Rule::Options(&["eval"])),
    (
        "perl*",
        Rule::Interpreter {
            long: &[],
            short: &['e', 'E', 'M', 'm'],
        },
    ),
    (
        "ruby",
        Rule::Interpreter {
            long: &["--require"],
            short: &['e', 'r'],
        },
    ),
    (
        "php",
        Rule::Interpreter {
            long: &[],
            short: &['r'],
        },
    ),
    (
        "lua*",
        Rule::Interpreter {
            long: &[],
            short: &['e', 'l'],
        },
    ),
    ("awk", Rule::Runner),
    ("gawk", Rule::Runner),
    ("mawk", Rule::Runner),
];

/// Options git reads before its subcommand that set configuration or name
/// the programs it runs (`-cKEY=V` too).
const GIT_GLOBAL: &[&str] = &["-c", "--config-env", "--exec-path"];

/// Options git reads before its subcommand that take the next argument.
const GIT_GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--attr-source",
];

/// Options of any git subcommand that name a program or a command to run,
/// or configuration for a new repository (`clone --config`).
const GIT_ANYWHERE: &[&str] = &[
    "--upload-pack",
    "--receive-pack",
    "--exec",
    "--extcmd",
    "--config",
];

/// Short options that run a program in one subcommand.
const GIT_SUB_SHORT: &[(&str, &str)] = &[
    ("clone", "-u"),
    ("fetch", "-u"),
    ("pull", "-u"),
    ("ls-remote", "-u"),
    ("rebase", "-x"),
    ("difftool", "-x"),
];

/// Subcommands (with their first argument, when it matters) refused
/// outright: they set configuration that runs commands (`config`: alias.*,
/// core.fsmonitor, filters) or exist to run commands.
const GIT_REFUSED_SUBCOMMANDS: &[(&str, Option<&str>)] = &[
    ("config", None),
    ("filter-branch", None),
    ("difftool", None),
    ("mergetool", None),
    ("instaweb", None),
    ("daemon", None),
    ("bisect", Some("run")),
    ("submodule", Some("foreach")),
];

/// Configuration given to every git run through `exec`, before the
/// skill's arguments: the keys that run commands on read operations and
/// on ordinary writes are switched off (see docs/permissions.md for what
/// git still trusts).
pub(crate) const GIT_SAFE_CONFIG: &[&str] = &[
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "protocol.ext.allow=never",
];

/// The file name of `program` (after the last `/`).
pub(crate) fn file_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// Whether `arg` is `option` or `option=...`.
fn is_option(arg: &str, option: &str) -> bool {
    arg == option
        || arg
            .strip_prefix(option)
            .is_some_and(|rest| rest.starts_with('='))
}

/// Why running `program` with `args` is refused, or `None`.
pub(crate) fn refusal(program: &str, args: &[String]) -> Option<String> {
    let name = file_name(program);
    let (_, rule) = GUARDS.iter().find(|(p, _)| matches(p, name))?;
    match rule {
        Rule::Runner => Some(format!(
            "`{name}` runs other programs; name the program it would run in `exec` and run it directly"
        )),
        Rule::Options(options) => args
            .iter()
            .find(|a| options.iter().any(|o| is_option(a, o)))
            .map(|a| format!("`{name} {a}` runs another program or code given as an argument")),
        Rule::Interpreter { long, short } => args
            .iter()
            .find(|a| {
                long.iter().any(|o| is_option(a, o))
                    || (a.starts_with('-')
                        && !a.starts_with("--")
                        && a[1..].chars().any(|c| short.contains(&c)))
            })
            .map(|a| format!("`{name} {a}` runs code given as an argument")),
        Rule::Git => git_refusal(args),
    }
}

fn git_refusal(args: &[String]) -> Option<String> {
    let refuse = |a: &str, why: &str| Some(format!("`git {a}` {why}"));
    let mut subcommand: Option<&str> = None;
    let mut skip_value = false;
    for (i, a) in args.iter().enumerate() {
        if let Some(o) = GIT_ANYWHERE.iter().find(|o| is_option(a, o)) {
            return refuse(
                a,
                &format!("(`{o}`) names a program or configuration to run"),
            );
        }
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let Some(sub) = subcommand else {
            if a.starts_with("-c") || GIT_GLOBAL.iter().any(|o| a.starts_with(o)) {
                return refuse(
                    a,
                    "sets configuration or the program path, which can run commands",
                );
            }
            if a.starts_with('-') {
                skip_value = GIT_GLOBAL_WITH_VALUE.contains(&a.as_str());
                continue;
            }
            let next = args.get(i + 1).map(String::as_str);
            let refused = GIT_REFUSED_SUBCOMMANDS
                .iter()
                .any(|(s, first)| *s == a.as_str() && (first.is_none() || *first == next));
            if refused {
                let shown = match next {
                    Some(n) if a == "bisect" || a == "submodule" => format!("{a} {n}"),
                    _ => a.clone(),
                };
                return refuse(
                    &shown,
                    "runs commands or sets configuration that runs them (alias.*, core.fsmonitor, filters)",
                );
            }
            subcommand = Some(a.as_str());
            continue;
        };
        if GIT_SUB_SHORT.contains(&(sub, a.as_str())) {
            return refuse(&format!("{sub} {a}"), "names a program to run");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(program: &str, args: &[&str]) -> Option<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        refusal(program, &args)
    }

    #[test]
    fn git_options_that_run_commands_are_refused() {
        for args in [
            &["-c", "alias.x=!touch M", "x"][..],
            &["-calias.x=!touch M", "x"],
            &["--config-env=alias.x=V", "x"],
            &["--exec-path=/tmp", "status"],
            &["fetch", "--upload-pack=touch M", "origin"],
            &["clone", "-u", "touch M", "a", "b"],
            &["push", "--receive-pack", "touch M"],
            &["archive", "--exec=touch M", "--remote=x"],
            &["config", "alias.x", "!touch M"],
            &["-C", "sub", "config", "core.fsmonitor", "touch M"],
        ] {
            assert!(refused("git", args).is_some(), "{args:?} passed");
        }
    }

    #[test]
    fn ordinary_git_passes() {
        for args in [
            &["status"][..],
            &["-C", "sub", "log", "-n", "3"],
            &["grep", "-c", "needle"],
            &["add", "-u"],
            &["push", "-u", "origin", "main"],
            &["commit", "-m", "x"],
        ] {
            assert_eq!(refused("/usr/bin/git", args), None, "{args:?} refused");
        }
    }

    #[test]
    fn interpreters_refuse_code_on_the_command_line() {
        assert!(refused("sh", &["-c", "touch M"]).is_some());
        assert!(refused("/bin/bash", &["-ec", "touch M"]).is_some());
        assert!(refused("python3", &["-Ic", "print(1)"]).is_some());
        assert!(refused("python3.12", &["-c", "print(1)"]).is_some());
        assert!(refused("node", &["--eval=1"]).is_some());
        assert!(refused("perl", &["-le", "print 1"]).is_some());
        assert_eq!(refused("python3", &["tool.py", "--count"]), None);
        assert_eq!(refused("sh", &["build.sh"]), None);
    }

    #[test]
    fn runners_and_find_exec_are_refused() {
        assert!(refused("env", &[]).is_some());
        assert!(refused("/usr/bin/xargs", &["touch"]).is_some());
        assert!(refused("find", &[".", "-exec", "touch", "M", ";"]).is_some());
        assert!(refused("find", &[".", "-okdir", "rm", "{}", ";"]).is_some());
        assert_eq!(refused("find", &[".", "-name", "*.rs"]), None);
        assert_eq!(refused("echo", &["-c", "-e"]), None);
    }
}

//! The spec's headless spelling: `agent --headless --prompt …` is
//! `agent run --prompt …`. The command line is rewritten before clap sees
//! it, so `--headless` takes exactly `run`'s flags and gives its errors:
//! `--headless` before any subcommand is removed and `run` put first (every
//! flag around it, global or `run`'s own, is accepted after `run`).

use std::ffi::OsString;

use clap::CommandFactory;

use crate::cli::Cli;

/// The spelling.
const FLAG: &str = "--headless";

/// The command-line definition with `--headless` documented, for `--help`,
/// the completion scripts and the man page. Parsing goes through
/// [`as_run`] first, so the flag itself never reaches the parsed [`Cli`].
pub fn command() -> clap::Command {
    Cli::command().arg(
        clap::Arg::new("headless")
            .long("headless")
            .action(clap::ArgAction::SetTrue)
            .help("Run without the interface: `agent --headless ARGS` is `agent run ARGS` (every `run` flag is accepted)"),
    )
}

/// Parses `args` (the program name first) as [`Cli`], `--headless` included.
///
/// # Errors
/// clap's usage errors (and `--help`/`--version`, which clap reports as errors).
pub fn parse(args: Vec<OsString>) -> Result<Cli, clap::Error> {
    use clap::FromArgMatches;
    let mut cmd = command();
    let matches = cmd.try_get_matches_from_mut(as_run(args))?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// `args` (the program name first) with a top-level `--headless` turned
/// into the `run` subcommand; anything else unchanged.
pub fn as_run(args: Vec<OsString>) -> Vec<OsString> {
    let Some(at) = top_level_position(&args) else {
        return args;
    };
    let mut args = args;
    args.remove(at);
    args.insert(1.min(args.len()), OsString::from("run"));
    args
}

/// Where `--headless` is among the flags before the subcommand, if it is:
/// the scan skips flags and their values and stops at the first word
/// (a subcommand) or at `--`.
fn top_level_position(args: &[OsString]) -> Option<usize> {
    if !args.iter().any(|a| a == FLAG) {
        return None;
    }
    let cmd = Cli::command();
    let mut i = 1;
    while i < args.len() {
        let arg = args[i].to_str()?;
        if arg == FLAG {
            return Some(i);
        }
        if arg == "--" || !arg.starts_with('-') {
            return None;
        }
        let next_is_value = args
            .get(i + 1)
            .and_then(|n| n.to_str())
            .is_some_and(|n| !n.starts_with('-'));
        if !arg.contains('=') && takes_value(&cmd, arg) && next_is_value {
            i += 1;
        }
        i += 1;
    }
    None
}

/// Whether the top-level flag `arg` (`--name` or `-x`) takes a value.
fn takes_value(cmd: &clap::Command, arg: &str) -> bool {
    let named = |a: &&clap::Arg| match arg.strip_prefix("--") {
        Some(long) => {
            a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|al| al.contains(&long))
        }
        None => arg.len() == 2 && a.get_short() == arg.chars().nth(1),
    };
    cmd.get_arguments()
        .find(named)
        .is_some_and(|a| a.get_action().takes_values())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(line: &str) -> String {
        let args = line.split(' ').map(OsString::from).collect();
        as_run(args)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn headless_before_the_subcommand_becomes_run() {
        assert_eq!(
            rewrite("agent --headless --prompt x --max-turns 5"),
            "agent run --prompt x --max-turns 5"
        );
        // Flags before it, and a flag value spelled like a word, stay where they were.
        assert_eq!(
            rewrite("agent --project dir -v --allow file:read --headless -p x"),
            "agent run --project dir -v --allow file:read -p x"
        );
        assert_eq!(
            rewrite("agent --model m --headless -p x"),
            "agent run --model m -p x"
        );
    }

    #[test]
    fn headless_elsewhere_is_left_for_clap_to_refuse() {
        for line in [
            "agent run --headless -p x",
            "agent skill list --headless",
            "agent -- --headless",
            "agent --prompt x",
        ] {
            assert_eq!(rewrite(line), line);
        }
    }
}

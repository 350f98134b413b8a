//! `agent completions SHELL` and `agent man`: the shell completion script
//! and the manual page, both generated from the command-line definitions
//! (so they never drift from what the binary accepts).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use clap::ValueEnum;

use crate::cli::exit;

/// The shells `agent completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    /// GNU Bash (the bash-completion package loads it).
    Bash,
    /// Zsh (a `_agent` file in a directory on `$fpath`).
    Zsh,
    /// fish.
    Fish,
    /// PowerShell (dot-source it from `$PROFILE`).
    Powershell,
}

impl CompletionShell {
    fn generator(self) -> clap_complete::Shell {
        match self {
            CompletionShell::Bash => clap_complete::Shell::Bash,
            CompletionShell::Zsh => clap_complete::Shell::Zsh,
            CompletionShell::Fish => clap_complete::Shell::Fish,
            CompletionShell::Powershell => clap_complete::Shell::PowerShell,
        }
    }
}

/// Where each shell looks for completions (also in the command's `--help`).
pub const COMPLETIONS_AFTER_HELP: &str = "\
Install (the script goes to standard output):
  bash        agent completions bash > ~/.local/share/bash-completion/completions/agent
  zsh         agent completions zsh > ~/.zfunc/_agent   (with `fpath+=~/.zfunc; autoload -U compinit; compinit` in ~/.zshrc)
  fish        agent completions fish > ~/.config/fish/completions/agent.fish
  powershell  agent completions powershell >> $PROFILE
Open a new shell afterwards.";

/// Where `man` finds the pages (also in the command's `--help`).
pub const MAN_AFTER_HELP: &str = "\
Install every page (agent.1 and one per command, e.g. agent-skill-list.1):
  agent man --dir ~/.local/share/man/man1
Then `man agent`, `man agent-run`. Only the main page: agent man > ~/.local/share/man/man1/agent.1
To read it without installing: agent man | man -l -";

/// Write the completion script for `shell` to standard output.
pub fn completions(shell: CompletionShell) -> Result<u8> {
    let mut cmd = crate::headless::command();
    let mut out = Vec::new();
    clap_complete::generate(shell.generator(), &mut cmd, "agent", &mut out);
    write_stdout(&out)
}

/// Write the roff manual page to standard output, or with `dir` one page
/// per command into `dir` (their names printed).
pub fn man(dir: Option<&Path>) -> Result<u8> {
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--dir {}: creating the directory", dir.display()))?;
        clap_mangen::generate_to(crate::headless::command(), dir)
            .with_context(|| format!("--dir {}: writing the manual pages", dir.display()))?;
        println!("wrote the manual pages to {}", dir.display());
        return Ok(exit::OK);
    }
    let mut out = Vec::new();
    clap_mangen::Man::new(crate::headless::command())
        .render(&mut out)
        .context("rendering the manual page")?;
    write_stdout(&out)
}

fn write_stdout(bytes: &[u8]) -> Result<u8> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .context("writing to standard output")?;
    Ok(exit::OK)
}

//! `agent`: the command-line entry point. It parses flags, builds the
//! shared state and routes to one command; the work lives in the crates.

mod app;
mod approval_mode;
mod assembly;
mod build;
mod cache_audit;
mod cli;
mod config_cmd;
mod doctor_cmd;
mod error_chain;
mod headless;
mod keys_cmd;
mod listing;
mod registry_cmd;
mod run_cmd;
mod scaffold;
mod security_cmd;
mod sessions_cmd;
mod shadow;
mod shell_cmd;
mod skill_cmd;
mod stdin_doc;
mod tool_names;
mod tui_cmd;
mod workflow_cmd;

use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{Cli, Command, exit};

fn main() -> ExitCode {
    let cli = match headless::parse(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let misplaced = cli.interface_flags_with_command();
    if !misplaced.is_empty() {
        let _ = Cli::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "{} before the subcommand belong to the interactive interface; \
                     give them after the subcommand (e.g. `agent run --model M ...`)",
                    misplaced.join(", ")
                ),
            )
            .print();
        return ExitCode::from(exit::USAGE);
    }
    let filter = if cli.global.verbose {
        "agent=debug,warn"
    } else {
        "warn"
    };
    // The interface owns the terminal: log lines on stderr would tear its
    // screen, so it logs nothing (`agent run` has the logs).
    let tui = cli.command.is_none();
    let _ = tracing_subscriber::fmt()
        .with_ansi(log_colours())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AGENT_LOG")
                .unwrap_or_else(|_| filter.into()),
        )
        .with_writer(move || -> Box<dyn std::io::Write> {
            if tui {
                Box::new(std::io::sink())
            } else {
                Box::new(std::io::stderr())
            }
        })
        .without_time()
        .try_init();

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return ExitCode::from(exit::FAILURE);
        }
    };
    let result = runtime.block_on(async move { run(cli) });
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", error_chain::chain_line(&e));
            if e.downcast_ref::<cli::UsageError>().is_some() {
                ExitCode::from(exit::USAGE)
            } else {
                ExitCode::from(exit::FAILURE)
            }
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<u8> {
    // Generated from the flags alone: no configuration, no data directory
    // (a broken config.toml must not break a shell's completion).
    match cli.command {
        Some(Command::Completions { shell }) => shell_cmd::completions(shell),
        Some(Command::Man { dir }) => shell_cmd::man(dir.as_deref()),
        command => run_with_app(cli.global, cli.tui, command),
    }
}

fn run_with_app(
    global: cli::GlobalArgs,
    tui: cli::TuiArgs,
    command: Option<Command>,
) -> anyhow::Result<u8> {
    let mut app = app::App::new(global)?;
    let Some(command) = command else {
        return tui_cmd::run(&mut app, tui);
    };
    match command {
        Command::Skill(cmd) => skill_cmd::run(&mut app, cmd),
        Command::Keys(cmd) => keys_cmd::keys(&mut app, cmd),
        Command::Audit(cmd) => keys_cmd::audit(&mut app, cmd),
        Command::Config(cmd) => config_cmd::run(&mut app, cmd),
        Command::Run(args) => run_cmd::run(&mut app, args),
        Command::Sessions(cmd) => sessions_cmd::run(&mut app, cmd),
        Command::Workflow(cmd) => workflow_cmd::run(&mut app, cmd),
        Command::Registry(cmd) => registry_cmd::registry(&mut app, cmd),
        Command::SecurityAudit(args) => security_cmd::run(&mut app, args),
        Command::Doctor(args) => doctor_cmd::run(&mut app, args),
        Command::Completions { shell } => shell_cmd::completions(shell),
        Command::Man { dir } => shell_cmd::man(dir.as_deref()),
    }
}

/// Log lines are coloured only on a terminal, and never with `NO_COLOR` set
/// (to anything non-empty, as no-color.org asks).
fn log_colours() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}

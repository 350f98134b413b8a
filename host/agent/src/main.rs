//! `agent`: the command-line entry point. It parses flags, builds the
//! shared state and routes to one command; the work lives in the crates.

mod app;
mod approval_mode;
mod assembly;
mod build;
mod cache_audit;
mod cli;
mod commands;
mod error_chain;
mod headless;
mod index_access;
mod instruction_tools;
mod instructions;
mod listing;
mod log_analysis;
mod mcp_context;
mod mcp_servers;
mod mcp_tools;
mod report_finding;
mod scaffold;
mod shadow;
mod stdin_doc;
mod table;
mod tool_names;

use std::process::ExitCode;

use clap::CommandFactory;

use crate::cli::{Cli, Command, exit};
use crate::commands::run::mode::RunMode;

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
    let result = runtime.block_on(run(cli));
    // No MCP server outlives the command that started it.
    mcp_servers::stop_all();
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

/// Every command runs inside the one tokio runtime started above: a command
/// that needs async code awaits it; none starts a runtime or blocks on one.
async fn run(cli: Cli) -> anyhow::Result<u8> {
    // Generated from the flags alone: no configuration, no data directory
    // (a broken config.toml must not break a shell's completion).
    match cli.command {
        Some(Command::Completions { shell }) => commands::shell::completions(shell),
        Some(Command::Man { dir }) => commands::shell::man(dir.as_deref()),
        command => run_with_app(cli.global, cli.tui, command).await,
    }
}

async fn run_with_app(
    global: cli::GlobalArgs,
    tui: cli::TuiArgs,
    command: Option<Command>,
) -> anyhow::Result<u8> {
    let mut app = app::App::new(global)?;
    let Some(command) = command else {
        return commands::tui::run(&mut app, tui);
    };
    match command {
        Command::Skill(cmd) => commands::skill::run(&mut app, cmd).await,
        Command::Keys(cmd) => commands::keys::keys(&mut app, cmd),
        Command::Audit(cmd) => commands::keys::audit(&mut app, cmd),
        Command::Config(cmd) => commands::config::run(&mut app, cmd),
        Command::Run(args) => match args.mode {
            Some(RunMode::CodeReview) => {
                let args = commands::review::ReviewArgs::from_run(args)?;
                commands::review::run(&mut app, args).await
            }
            Some(RunMode::LogAnalysis) => {
                commands::run::mode::refuse_review_flags(&args)?;
                commands::run::mode::log_analysis(&mut app, args)
            }
            None => {
                commands::run::mode::refuse_review_flags(&args)?;
                commands::run::mode::refuse_log_flags(&args)?;
                commands::run::run(&mut app, args)
            }
        },
        Command::Sessions(cmd) => commands::sessions::run(&mut app, cmd),
        Command::Workflow(cmd) => commands::workflow::run(&mut app, cmd).await,
        Command::Registry(cmd) => commands::registry::registry(&mut app, cmd),
        Command::SecurityAudit(args) => commands::security::run(&mut app, args).await,
        Command::Review(args) => commands::review::run(&mut app, args).await,
        Command::Wiki(args) => commands::wiki::run(&mut app, args).await,
        Command::Doctor(args) => commands::doctor::run(&mut app, args),
        Command::Completions { shell } => commands::shell::completions(shell),
        Command::Man { dir } => commands::shell::man(dir.as_deref()),
        Command::Mcp(cmd) => commands::mcp::run(&mut app, cmd).await,
        Command::Logs(args) => commands::logs::run(&mut app, args),
    }
}

/// Log lines are coloured only on a terminal, and never with `NO_COLOR` set
/// (to anything non-empty, as no-color.org asks).
fn log_colours() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stderr().is_terminal()
}

//! `agent` without a command: the interactive interface (agent-tui) over a
//! session of the same core as `agent run`. The interface is a renderer:
//! it speaks the protocol to the session ([`agent_core::Session`]) and
//! answers its approval requests; it knows nothing else of the agent.

use std::io::IsTerminal;

use agent_core::Session;
use agent_manifest::Mode;
use agent_protocol::Op;
use anyhow::Result;

use crate::app::App;
use crate::assembly::provider_for;
use crate::assembly::{Approval, Frontend, assemble};
use crate::cli::{TuiArgs, UsageError, exit};

/// Opens the interface; returns the exit code.
pub fn run(app: &mut App, args: TuiArgs) -> Result<u8> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(UsageError(
            "`agent` without a command opens the interactive interface, which needs a terminal; \
             use `agent run` for headless runs (agent --help lists the commands)"
                .into(),
        )
        .into());
    }
    // The interface is the interactive mode: it asks, unless told never to.
    app.interactive = !app.global.non_interactive;
    let config = app.config()?;
    let provider = match provider_for(&args.provider_args, &config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: provider: {e}");
            return Ok(exit::PROVIDER);
        }
    };
    let store = app.store()?;
    let project_root = app.project_root.clone();
    let resume = match &args.resume {
        None => None,
        Some(id) if id.is_empty() => Some(
            store
                .last_session(Some(&project_root))?
                .ok_or_else(|| UsageError("--resume: no session in this project yet".into()))?
                .id,
        ),
        Some(id) => Some(store.find_session(id)?.id),
    };
    let mut parts = assemble(
        app,
        Frontend {
            mode: Mode::Interactive,
            provider_args: args.provider_args.clone(),
            provider,
            approval: Approval::Ask,
            format: "markdown".into(),
            max_turns: None,
            timeout: None,
            tools: None,
            report_setup: false,
            host_tools: Vec::new(),
        },
    )?;
    // SKILL.md skills: listed for the model, `/name args` from the interface.
    crate::instruction_tools::attach(app, &mut parts, None)?;
    let client = Session::spawn(parts, tokio::runtime::Handle::current());
    if let Some(id) = resume {
        client.send(Op::Resume { id });
    }
    let last = agent_tui::run(
        client,
        agent_tui::TuiOptions {
            project_root,
            theme: agent_tui::Theme::from_env(),
        },
    )?;
    if let Some(id) = last {
        // One short line: it must not wrap on an 80-column terminal.
        println!("continue with `agent --resume {id}`");
    }
    Ok(exit::OK)
}

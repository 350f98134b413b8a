//! `agent run`: the agent loop from the command line — the arguments, the
//! session assembled and spawned, then [`render`] shows its events.

pub mod mode;
mod render;

use std::io::{IsTerminal, Read};
use std::time::Duration;

use agent_core::Session;
use agent_manifest::Mode;
use agent_protocol::{Attachment, Event, Op, StopKind, TurnFailure};
use anyhow::{Context, Result};

use crate::app::App;
use crate::assembly::{Approval, Frontend, assemble, provider_for};
use crate::cli::{RunArgs, UsageError, exit};
use crate::stdin_doc::{self, STDIN_CAP};

use render::{finish_output, misbehaviour_summary, output_format, render};

/// The skills `--approve-skills` names, each checked against the skills
/// discovery finds (their manifests only; nothing is loaded).
///
/// # Errors
/// A name no skill has: a usage error naming the installed ones.
fn approved_skills(app: &mut App, names: &[String]) -> Result<Vec<String>> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let (packages, _broken) = app.discover()?;
    for name in names {
        if !packages.iter().any(|p| &p.manifest.name == name) {
            let known: Vec<&str> = packages.iter().map(|p| p.manifest.name.as_str()).collect();
            return Err(UsageError(format!(
                "--approve-skills: no skill named `{name}`; the skills here are: {}",
                known.join(", ")
            ))
            .into());
        }
    }
    Ok(names.to_vec())
}

/// Parses `120s`, `5m`, `500ms`, `1h` or plain seconds (the workspace's one
/// duration syntax, [`agent_bounded::parse_duration`]).
fn parse_duration(s: &str) -> Option<Duration> {
    agent_bounded::parse_duration(s, agent_bounded::BareNumber::Seconds).ok()
}

/// The task as given (the session's title) and what is attached to it: with
/// `--prompt` or `--file`, piped standard input is attached as a document
/// named `stdin` (at most [`STDIN_CAP`] bytes, said so when cut); a
/// terminal is never read.
fn read_prompt(args: &RunArgs) -> Result<(String, Vec<Attachment>)> {
    let given = if let Some(p) = &args.prompt {
        Some(p.clone())
    } else if let Some(f) = &args.file {
        Some(
            std::fs::read_to_string(f)
                .map_err(|e| UsageError(format!("--file {}: {e}", f.display())))?,
        )
    } else {
        None
    };
    let piped = !std::io::stdin().is_terminal();
    let (task, attachments) = match given {
        Some(task) => {
            let doc = if piped {
                stdin_doc::read(std::io::stdin().lock(), STDIN_CAP)
                    .context("reading standard input to attach it to the task")?
            } else {
                None
            };
            match doc {
                Some(doc) => {
                    if let Some(w) = doc.warning() {
                        eprintln!("{w}");
                    }
                    (task, vec![doc.attachment()])
                }
                None => (task, Vec::new()),
            }
        }
        None if piped => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .context("reading the task from standard input")?;
            (s, Vec::new())
        }
        None => {
            return Err(UsageError(
                "no task: give --prompt TEXT, --file FILE, or pipe it on standard input".into(),
            )
            .into());
        }
    };
    if task.trim().is_empty() {
        return Err(UsageError("the task is empty".into()).into());
    }
    Ok((task, attachments))
}

pub fn run(app: &mut App, args: RunArgs) -> Result<u8> {
    // Headless: grants come from --allow / --capabilities only, and nothing
    // ever waits for an answer on the terminal (the TUI is the interactive
    // mode).
    app.interactive = false;
    let (task, attachments) = read_prompt(&args)?;
    let mcp = crate::mcp_context::Wanted {
        resources: args.mcp_resource.clone(),
        prompts: args.mcp_prompt.clone(),
        args: args.mcp_arg.clone(),
    };
    let mut attachments = attachments;
    match crate::mcp_context::read(app, &mcp)? {
        Ok(more) => attachments.extend(more),
        Err(code) => return Ok(code),
    }
    let config = app.config()?;
    let max_turns = args.max_turns.unwrap_or(config.agent.max_turns);
    if max_turns == 0 {
        return Err(UsageError("--max-turns must be at least 1".into()).into());
    }
    let timeout = match &args.timeout {
        Some(t) => parse_duration(t).ok_or_else(|| {
            UsageError(format!(
                "--timeout {t}: expected a duration such as 120s, 5m or 500ms"
            ))
        })?,
        None => config.agent.timeout,
    };
    // Flags are checked before anything is set up or stored.
    app.allowlist()?;
    app.approved_skills = approved_skills(app, &args.approve_skills)?;
    let provider = match provider_for(&args.provider_args, &config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: provider: {e}");
            return Ok(exit::PROVIDER);
        }
    };
    let store = app.store()?;
    let resume = if args.resume.is_some() || args.last {
        Some(match &args.resume {
            Some(id) => store.find_session(id)?.id,
            None => {
                store
                    .last_session(Some(&app.project_root))?
                    .ok_or_else(|| UsageError("--last: no session in this project yet".into()))?
                    .id
            }
        })
    } else {
        None
    };
    let mut parts = assemble(
        app,
        Frontend {
            mode: Mode::Headless,
            provider_args: args.provider_args.clone(),
            provider,
            approval: Approval::Headless {
                yes: args.yes,
                approved: app.approved_skills.clone(),
            },
            format: output_format(args.output).to_string(),
            max_turns: Some(max_turns),
            timeout: Some(timeout),
            tools: args.tools.clone(),
            report_setup: app.global.verbose,
            host_tools: Vec::new(),
        },
    )?;
    // `--skills NAME` of a SKILL.md skill: its body comes with the task.
    attachments.extend(crate::instruction_tools::attach(
        app,
        &mut parts,
        Some(&task),
    )?);
    let client = Session::spawn(parts, tokio::runtime::Handle::current());
    if let Some(id) = resume {
        client.send(Op::Resume { id });
    }
    client.send(Op::UserTurn {
        text: task,
        attachments,
    });
    let done = render(&client, args.output);
    client.send(Op::Shutdown);
    while client.recv().is_some_and(|e| e != Event::ShutdownComplete) {}
    let done = done?;
    let session_id = done.session_id;
    let (stop, outcome) = match (done.failure, done.summary, done.stop) {
        (None, Some(summary), Some(stop)) => (stop, summary),
        (Some(TurnFailure::ToolFilter), ..) => {
            return Err(UsageError(done.error.unwrap_or_default()).into());
        }
        (Some(TurnFailure::Model), ..) => {
            eprintln!("error: {}", done.error.unwrap_or_default());
            eprintln!("session: {session_id}");
            return Ok(exit::PROVIDER);
        }
        _ => return Err(anyhow::Error::msg(done.error.unwrap_or_default())),
    };
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(line) = misbehaviour_summary(&outcome) {
        eprintln!("{line}");
    }
    // What skills spent of their budgets: with --verbose, and always when a
    // use was refused.
    for u in &outcome.skill_uses {
        if app.global.verbose || u.refused > 0 {
            eprintln!("skill uses: {}", u.summary);
        }
    }
    finish_output(args.output, stop, &outcome, &session_id)?;
    app.report_denials();
    Ok(match stop {
        StopKind::EndTurn => exit::OK,
        StopKind::MaxTurns | StopKind::Timeout | StopKind::Cancelled => {
            let why = if stop == StopKind::MaxTurns {
                format!("the turn limit ({}) was reached", outcome.max_turns)
            } else {
                format!("the time limit ({:?}) was reached", outcome.timeout)
            };
            eprintln!("stopped: {why} (continue with `agent run --resume {session_id}`)");
            if outcome.denials.is_empty() {
                exit::LIMIT
            } else {
                exit::DENIED
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("120s"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("7"), Some(Duration::from_secs(7)));
        assert_eq!(parse_duration("0s"), None);
        assert_eq!(parse_duration("x"), None);
    }
}

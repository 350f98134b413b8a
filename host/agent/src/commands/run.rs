//! `agent run`: the agent loop from the command line.

use std::io::{IsTerminal, Read, Write};
use std::time::Duration;

use agent_core::{AgentEvent, Session};
use agent_manifest::Mode;
use agent_protocol::{
    ApprovalAnswer, Attachment, Client, Event, NoticeKind, Op, SkillUseRow, StopKind, TurnComplete,
    TurnFailure, TurnSummary,
};
use anyhow::{Context, Result};

use crate::app::App;
use crate::assembly::{Approval, Frontend, assemble, provider_for};
use crate::cli::{RunArgs, RunOutput, UsageError, exit};
use crate::stdin_doc::{self, STDIN_CAP};

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
    let parts = assemble(
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
        },
    )?;
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

/// Renders the session's events until the turn completes: the turn's
/// events as they happen (see [`print_event`]), the setup's warnings and
/// report on stderr.
///
/// # Errors
/// The session could not resume the session asked for, or ended early.
fn render(client: &Client, output: RunOutput) -> Result<TurnComplete> {
    let mut rewrites = false;
    let mut mid_line = false;
    while let Some(event) = client.recv() {
        match event {
            Event::Agent(e) => print_event(output, &e, rewrites, &mut mid_line),
            Event::TurnStarted(t) => rewrites = t.rewrites_output,
            Event::Notice {
                kind: NoticeKind::Warning,
                text,
            } => eprintln!("warning: {text}"),
            Event::SetupReport { lines } => {
                for line in lines {
                    eprintln!("{line}");
                }
            }
            // Headless approvals are decided inside the session; a question
            // reaching this renderer is refused, never left waiting.
            Event::ApprovalRequested(req) => {
                client.send(Op::Approve {
                    id: req.id,
                    answer: ApprovalAnswer::Deny,
                });
            }
            Event::Error { message, .. } => return Err(anyhow::Error::msg(message)),
            Event::TurnComplete(done) => return Ok(done),
            _ => {}
        }
    }
    anyhow::bail!("the agent's session ended before the turn completed")
}

/// One line counting what the model got wrong in this run (tool calls
/// whose arguments were not JSON, calls over the per-turn cap, answers that
/// broke off), or `None` when it got nothing wrong.
fn misbehaviour_summary(o: &TurnSummary) -> Option<String> {
    let mut parts = Vec::new();
    if o.invalid_tool_calls > 0 {
        parts.push(format!(
            "{} tool call(s) with arguments that are not JSON (answered with the error)",
            o.invalid_tool_calls
        ));
    }
    if o.skipped_tool_calls > 0 {
        parts.push(format!(
            "{} tool call(s) over `agent.max_tool_calls_per_turn` (answered \"not run\")",
            o.skipped_tool_calls
        ));
    }
    if o.interrupted_streams > 0 {
        parts.push(format!(
            "{} answer(s) cut off mid-stream (sent again)",
            o.interrupted_streams
        ));
    }
    (!parts.is_empty()).then(|| format!("model: {}", parts.join("; ")))
}

/// The format name transforms are told.
fn output_format(output: RunOutput) -> &'static str {
    match output {
        RunOutput::Text => "text",
        RunOutput::Json => "json",
        RunOutput::Jsonl => "jsonl",
        RunOutput::Markdown => "markdown",
    }
}

/// Prints one event. `mid_line`: text output left the cursor after text
/// without a line break (a new turn then starts on a new line).
fn print_event(output: RunOutput, e: &AgentEvent, rewrites: bool, mid_line: &mut bool) {
    match output {
        RunOutput::Jsonl => {
            if let Ok(line) = serde_json::to_string(e) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
        }
        RunOutput::Text => match e {
            // Hooks or transforms rewrite the text: print only the result.
            AgentEvent::Final { text, .. } if rewrites => {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "{text}");
                let _ = out.flush();
            }
            AgentEvent::TextDelta { text } if !rewrites => {
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "{text}");
                let _ = out.flush();
                if !text.is_empty() {
                    *mid_line = !text.ends_with('\n');
                }
            }
            AgentEvent::TurnStart { turn } if *turn > 1 && *mid_line => {
                println!();
                *mid_line = false;
            }
            AgentEvent::ToolCall { name, .. } => eprintln!("[tool] {name}"),
            AgentEvent::Refused { tool, reason, .. } => eprintln!("[refused] {tool}: {reason}"),
            AgentEvent::Warning { message } => eprintln!("[warning] {message}"),
            AgentEvent::Interrupted {
                message, retrying, ..
            } => {
                if *mid_line {
                    println!();
                    *mid_line = false;
                }
                let next = if *retrying {
                    "sending the request again"
                } else {
                    "giving up"
                };
                eprintln!("[interrupted] {message}; {next}");
            }
            AgentEvent::Approval {
                tool,
                approved: false,
                reason,
            } => eprintln!("[not approved] {tool}: {reason}"),
            _ => {}
        },
        RunOutput::Json | RunOutput::Markdown => {}
    }
}

fn finish_output(
    output: RunOutput,
    stop: StopKind,
    o: &TurnSummary,
    session_id: &str,
) -> Result<()> {
    match output {
        RunOutput::Text => println!(),
        RunOutput::Jsonl => {}
        RunOutput::Json => {
            let v = serde_json::json!({
                "session": session_id,
                "text": o.text,
                "turns": o.turns,
                "stop": stop,
                "usage": {"input_tokens": o.input_tokens, "output_tokens": o.output_tokens},
                "tool_calls": o.tool_calls,
                "denials": o.denials,
                "skill_uses": skill_uses_json(&o.skill_uses),
                "model_errors": {
                    "invalid_tool_calls": o.invalid_tool_calls,
                    "skipped_tool_calls": o.skipped_tool_calls,
                    "interrupted_streams": o.interrupted_streams,
                },
            });
            println!("{}", serde_json::to_string_pretty(&v)?);
        }
        RunOutput::Markdown => {
            println!("{}\n", o.text.trim_end());
            if !o.tool_calls.is_empty() {
                println!("## Tool calls\n");
                for c in &o.tool_calls {
                    let status = if c.is_error { "error" } else { "ok" };
                    let skill = if c.skill.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", c.skill)
                    };
                    println!("- `{}`{skill}: {status} — `{}`", c.tool, c.input);
                }
                println!();
            }
            if !o.denials.is_empty() {
                println!("## Denied\n");
                for d in &o.denials {
                    println!("- {} {}: {}", d.skill, d.permission, d.reason);
                }
                println!();
            }
            if !o.skill_uses.is_empty() {
                println!("## Skill uses\n");
                for u in &o.skill_uses {
                    println!("- {}", u.summary);
                }
                println!();
            }
            println!(
                "_{} turn(s), {} input / {} output tokens, session {session_id}_",
                o.turns, o.input_tokens, o.output_tokens
            );
        }
    }
    Ok(())
}

/// The skills' uses as `--output json` has always given them.
fn skill_uses_json(uses: &[SkillUseRow]) -> serde_json::Value {
    uses.iter()
        .map(|u| {
            serde_json::json!({
                "skill": u.skill,
                "llm": u.llm,
                "exec": u.exec,
                "http": u.http,
                "refused": u.refused,
            })
        })
        .collect()
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

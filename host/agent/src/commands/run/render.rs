//! The headless renderer of `agent run`: the session's events as text,
//! Markdown, JSON or JSON lines. It reads the protocol only (`agent-protocol`):
//! whatever runs the session, this module sees `Event`s.

use std::io::Write;

use agent_protocol::{
    AgentEvent, ApprovalAnswer, Client, Event, NoticeKind, Op, SkillUseRow, StopKind, TurnComplete,
    TurnSummary,
};
use anyhow::Result;

use crate::cli::RunOutput;

/// Renders the session's events until the turn completes: the turn's
/// events as they happen (see [`print_event`]), the setup's warnings and
/// report on stderr.
///
/// # Errors
/// The session could not resume the session asked for, or ended early.
pub(super) fn render(client: &Client, output: RunOutput) -> Result<TurnComplete> {
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
            // What the session did on its own: a sub-agent started or answered.
            Event::Notice {
                kind: NoticeKind::Info,
                text,
            } => eprintln!("note: {text}"),
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
pub(super) fn misbehaviour_summary(o: &TurnSummary) -> Option<String> {
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
pub(super) fn output_format(output: RunOutput) -> &'static str {
    match output {
        RunOutput::Text => "text",
        RunOutput::Json => "json",
        RunOutput::Jsonl => "jsonl",
        RunOutput::Markdown => "markdown",
        RunOutput::Sarif => "sarif",
        RunOutput::Github => "github",
        RunOutput::GithubReview => "github-review",
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
        // A review's formats: refused before a run starts (`mode::refuse_review_flags`).
        RunOutput::Sarif | RunOutput::Github | RunOutput::GithubReview => {}
    }
}

pub(super) fn finish_output(
    output: RunOutput,
    stop: StopKind,
    o: &TurnSummary,
    session_id: &str,
) -> Result<()> {
    match output {
        RunOutput::Text => println!(),
        // A review's formats: refused before a run starts (`mode::refuse_review_flags`).
        RunOutput::Jsonl | RunOutput::Sarif | RunOutput::Github | RunOutput::GithubReview => {}
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

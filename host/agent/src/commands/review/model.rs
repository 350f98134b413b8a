//! Step 3 of a review: one headless session (the same assembly as `agent
//! run`, read-only tools, the `code-review` skill active), one fresh
//! conversation per chunk of the diff; the model's findings arrive through
//! the `report_finding` host tool and go into the review's
//! [`Intake`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::Session;
use agent_findings::{Chunk, Intake};
use agent_manifest::Mode;
use agent_protocol::{ApprovalAnswer, Event, Op, TurnFailure};
use anyhow::Result;
use serde::Serialize;

use super::{DEFAULT_TURNS_PER_CHUNK, ReviewArgs};
use crate::app::App;
use crate::assembly::{Approval, Frontend, assemble, provider_for};

/// The tools a review's model may call: reading the project and its
/// history, and reporting.
pub const READ_ONLY_TOOLS: &[&str] = &[
    "read_file",
    "list_dir",
    "search",
    "git_status",
    "git_diff",
    "git_log",
    "git_show",
    agent_findings::REPORT_FINDING,
];

/// What the model spent on a review.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Spent {
    /// Model requests (turns of the loop) over every chunk.
    pub model_calls: usize,
    /// Conversations (one per chunk).
    pub turns: usize,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

/// The first message of a chunk's conversation.
fn task(chunk: &Chunk, index: usize, total: usize) -> String {
    format!(
        "Code review, part {} of {total}. Review the change below and report each problem with \
         `report_finding` (one call per finding, on the `+` lines). When you are done, answer \
         with one sentence.\n\n{}",
        index + 1,
        chunk.text
    )
}

/// Reviews every chunk. `Ok(Err(message))`: the provider failed (exit 3).
///
/// # Errors
/// The session cannot be assembled, or ends early.
pub fn review(
    app: &mut App,
    args: &ReviewArgs,
    chunks: &[Chunk],
    intake: Arc<Mutex<Intake>>,
) -> Result<std::result::Result<Spent, String>> {
    let config = app.config()?;
    let provider = match provider_for(&args.provider_args, &config) {
        Ok(p) => p,
        Err(e) => return Ok(Err(format!("provider: {e}"))),
    };
    let timeout = match &args.timeout {
        Some(t) => Some(
            agent_bounded::parse_duration(t, agent_bounded::BareNumber::Seconds).map_err(|_| {
                crate::cli::UsageError(format!(
                    "--timeout {t}: expected a duration such as 120s, 5m or 500ms"
                ))
            })?,
        ),
        None => None,
    };
    let reached = Arc::new(AtomicUsize::new(0));
    let mut parts = assemble(
        app,
        Frontend {
            mode: Mode::Headless,
            provider_args: args.provider_args.clone(),
            provider,
            approval: Approval::Headless {
                yes: false,
                approved: Vec::new(),
            },
            format: "text".to_string(),
            max_turns: Some(args.max_turns.unwrap_or(DEFAULT_TURNS_PER_CHUNK)),
            timeout,
            tools: Some(READ_ONLY_TOOLS.iter().map(|t| (*t).to_string()).collect()),
            report_setup: app.global.verbose,
            host_tools: vec![super::tool::source(intake.clone(), reached.clone())],
        },
    )?;
    if !parts.explicit.iter().any(|s| s == "code-review") {
        parts.explicit.push("code-review".to_string());
    }
    let client = Session::spawn(parts, tokio::runtime::Handle::current());
    let mut spent = Spent::default();
    // report_finding calls the model made, and those the tool received:
    // the difference the router refused (the schema check), counted as
    // invalid reports.
    let mut asked = 0usize;
    let mut failure = None;
    for (i, chunk) in chunks.iter().enumerate() {
        if i > 0 {
            client.send(Op::NewConversation);
        }
        client.send(Op::UserTurn {
            text: task(chunk, i, chunks.len()),
            attachments: Vec::new(),
        });
        let done = loop {
            match client.recv() {
                Some(Event::TurnComplete(done)) => break Some(done),
                Some(Event::ApprovalRequested(req)) => {
                    client.send(Op::Approve {
                        id: req.id,
                        answer: ApprovalAnswer::Deny,
                    });
                }
                Some(Event::Notice { text, .. }) if app.global.verbose => eprintln!("{text}"),
                Some(Event::Error { message, .. }) => {
                    failure = Some(Err(anyhow::Error::msg(message)));
                    break None;
                }
                Some(_) => {}
                None => break None,
            }
        };
        let Some(done) = done else {
            failure.get_or_insert_with(|| {
                Err(anyhow::anyhow!(
                    "the review's session ended before chunk {} was reviewed",
                    i + 1
                ))
            });
            break;
        };
        spent.turns += 1;
        if let Some(s) = &done.summary {
            spent.model_calls += s.turns as usize;
            spent.input_tokens += s.input_tokens;
            spent.output_tokens += s.output_tokens;
            asked += s
                .tool_calls
                .iter()
                .filter(|c| c.tool == agent_findings::REPORT_FINDING)
                .count();
        }
        match done.failure {
            None => {}
            Some(TurnFailure::Model) => {
                failure = Some(Ok(format!(
                    "the model failed on chunk {} of {}: {}",
                    i + 1,
                    chunks.len(),
                    done.error.unwrap_or_default()
                )));
                break;
            }
            Some(_) => {
                failure = Some(Err(anyhow::Error::msg(done.error.unwrap_or_default())));
                break;
            }
        }
    }
    client.send(Op::Shutdown);
    while client.recv().is_some_and(|e| e != Event::ShutdownComplete) {}
    let refused = asked.saturating_sub(reached.load(Ordering::SeqCst));
    if let Ok(mut intake) = intake.lock() {
        intake.refused(refused);
    }
    match failure {
        None => Ok(Ok(spent)),
        Some(Ok(provider_error)) => Ok(Err(provider_error)),
        Some(Err(e)) => Err(e),
    }
}

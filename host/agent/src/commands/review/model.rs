//! Step 3 of a review: one headless session (the same assembly as `agent
//! run`, read-only tools, the `code-review` skill active), one fresh
//! conversation per chunk of the diff; the model's findings arrive through
//! the `report_finding` host tool and go into the review's
//! [`Intake`].

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::Session;
use agent_findings::{Chunk, Intake};
use agent_manifest::Mode;
use agent_protocol::{ApprovalAnswer, Event, Op, TurnFailure};
use anyhow::Result;
use serde::Serialize;

use super::{DEFAULT_JOBS, DEFAULT_TURNS_PER_CHUNK, ReviewArgs};
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

/// What one chunk's conversation gave.
#[derive(Default)]
struct ChunkOutcome {
    spent: Spent,
    /// `report_finding` calls the model made in it.
    asked: usize,
    /// `Some(Ok(message))`: the provider failed (exit 3); `Some(Err)`: another failure.
    failure: Option<std::result::Result<String, anyhow::Error>>,
}

/// Reviews every chunk, up to `--jobs` (default [`DEFAULT_JOBS`]) at once:
/// one session per job, each taking the next chunk not yet taken, one fresh
/// conversation per chunk. What they spent is added up in chunk order; the
/// findings go to the shared intake (the report sorts them, so the output
/// does not depend on which chunk finished first). `Ok(Err(message))`: the
/// provider failed (exit 3).
///
/// # Errors
/// The sessions cannot be assembled, or one ends early.
pub fn review(
    app: &mut App,
    args: &ReviewArgs,
    chunks: &[Chunk],
    intake: Arc<Mutex<Intake>>,
) -> Result<std::result::Result<Spent, String>> {
    let config = app.config()?;
    let provider = match provider_for(&args.model.provider_args, &config) {
        Ok(p) => p,
        Err(e) => return Ok(Err(format!("provider: {e}"))),
    };
    let timeout = args.model.timeout()?;
    let max_turns = args.model.max_turns_or(DEFAULT_TURNS_PER_CHUNK)?;
    let jobs = args
        .flags
        .jobs
        .unwrap_or(DEFAULT_JOBS)
        .clamp(1, chunks.len().max(1));
    let reached = Arc::new(AtomicUsize::new(0));
    let mut clients = Vec::with_capacity(jobs);
    for _ in 0..jobs {
        let mut parts = assemble(
            app,
            Frontend {
                mode: Mode::Headless,
                provider_args: args.model.provider_args.clone(),
                provider: provider.clone(),
                approval: Approval::Headless {
                    yes: false,
                    approved: Vec::new(),
                },
                format: "text".to_string(),
                max_turns: Some(max_turns),
                timeout,
                tools: Some(READ_ONLY_TOOLS.iter().map(|t| (*t).to_string()).collect()),
                report_setup: app.global.verbose && clients.is_empty(),
                host_tools: vec![crate::report_finding::source(
                    super::tool::OWNER,
                    intake.clone(),
                    reached.clone(),
                )],
            },
        )?;
        if !parts.explicit.iter().any(|s| s == "code-review") {
            parts.explicit.push("code-review".to_string());
        }
        clients.push(Session::spawn(parts, tokio::runtime::Handle::current()));
    }
    let verbose = app.global.verbose;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let outcomes: Vec<Mutex<Option<ChunkOutcome>>> =
        chunks.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for client in clients {
            let (next, stop, outcomes) = (&next, &stop, &outcomes);
            s.spawn(move || {
                let mut fresh = true;
                while !stop.load(Ordering::SeqCst) {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(chunk) = chunks.get(i) else { break };
                    if !fresh {
                        client.send(Op::NewConversation);
                    }
                    fresh = false;
                    let outcome = review_chunk(&client, chunk, i, chunks.len(), verbose);
                    if outcome.failure.is_some() {
                        stop.store(true, Ordering::SeqCst);
                    }
                    if let Ok(mut slot) = outcomes[i].lock() {
                        *slot = Some(outcome);
                    }
                }
                client.send(Op::Shutdown);
                while client.recv().is_some_and(|e| e != Event::ShutdownComplete) {}
            });
        }
    });
    let mut spent = Spent::default();
    // report_finding calls the model made, and those the tool received:
    // the difference the router refused (the schema check), counted as
    // invalid reports.
    let mut asked = 0usize;
    let mut failure = None;
    for slot in outcomes {
        let Some(o) = slot.into_inner().ok().flatten() else {
            continue;
        };
        spent.model_calls += o.spent.model_calls;
        spent.turns += o.spent.turns;
        spent.input_tokens += o.spent.input_tokens;
        spent.output_tokens += o.spent.output_tokens;
        asked += o.asked;
        if failure.is_none() {
            failure = o.failure;
        }
    }
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

/// One chunk's conversation on `client`, to its end.
fn review_chunk(
    client: &agent_protocol::Client,
    chunk: &Chunk,
    i: usize,
    total: usize,
    verbose: bool,
) -> ChunkOutcome {
    let mut outcome = ChunkOutcome::default();
    client.send(Op::UserTurn {
        text: task(chunk, i, total),
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
            Some(Event::Notice { text, .. }) if verbose => eprintln!("{text}"),
            Some(Event::Error { message, .. }) => {
                outcome.failure = Some(Err(anyhow::Error::msg(message)));
                return outcome;
            }
            Some(_) => {}
            None => break None,
        }
    };
    let Some(done) = done else {
        outcome.failure = Some(Err(anyhow::anyhow!(
            "the review's session ended before chunk {} was reviewed",
            i + 1
        )));
        return outcome;
    };
    outcome.spent.turns = 1;
    if let Some(s) = &done.summary {
        outcome.spent.model_calls = s.turns as usize;
        outcome.spent.input_tokens = s.input_tokens;
        outcome.spent.output_tokens = s.output_tokens;
        outcome.asked = s
            .tool_calls
            .iter()
            .filter(|c| c.tool == agent_findings::REPORT_FINDING)
            .count();
    }
    outcome.failure = match done.failure {
        None => None,
        Some(TurnFailure::Model) => Some(Ok(format!(
            "the model failed on chunk {} of {total}: {}",
            i + 1,
            done.error.unwrap_or_default()
        ))),
        Some(_) => Some(Err(anyhow::Error::msg(done.error.unwrap_or_default()))),
    };
    outcome
}

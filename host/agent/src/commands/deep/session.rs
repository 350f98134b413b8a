//! The model's part of the deep analysis: headless sessions (the same
//! assembly as `agent run`, the `security-deep` skill active, read-only
//! tools and `report_finding`), one fresh conversation per work item (a
//! batch of files and one analysis), highest risk first, until the budget
//! of model calls is spent. Every request goes through the redacting
//! provider.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::Session;
use agent_deep::plan::Item;
use agent_findings::Intake;
use agent_manifest::Mode;
use agent_protocol::{ApprovalAnswer, Client, Event, Op, TurnFailure};
use agent_providers::Provider;
use anyhow::Result;

use crate::app::App;
use crate::assembly::{Approval, Frontend, assemble};
use crate::cli::ProviderArgs;

/// The tools the deep analysis' model may call.
pub const TOOLS: &[&str] = &[
    "read_file",
    "list_dir",
    "search",
    agent_findings::REPORT_FINDING,
];

/// Model requests one conversation may make at most: one to report, a few
/// to follow a flow with the read tools.
pub const TURNS_PER_CONVERSATION: usize = 4;

/// What the model was given and spent.
#[derive(Debug, Default)]
pub struct Spent {
    /// Model requests.
    pub model_calls: usize,
    /// Conversations.
    pub conversations: usize,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// The batches the model was shown.
    pub batches: BTreeSet<usize>,
}

/// What the conversations are made of.
pub struct Work<'a> {
    /// The items, in order.
    pub items: &'a [Item],
    /// The first message of each item's conversation.
    pub task: &'a dyn Fn(usize, Item) -> String,
}

struct Open {
    client: Client,
    max_turns: usize,
    used: bool,
}

fn open(
    app: &mut App,
    provider_args: &ProviderArgs,
    provider: &(Arc<dyn Provider>, String, String),
    max_turns: usize,
    intake: &Arc<Mutex<Intake>>,
    reached: &Arc<AtomicUsize>,
) -> Result<Open> {
    let mut parts = assemble(
        app,
        Frontend {
            mode: Mode::Headless,
            provider_args: provider_args.clone(),
            provider: provider.clone(),
            approval: Approval::Headless {
                yes: false,
                approved: Vec::new(),
            },
            format: "text".to_string(),
            max_turns: Some(u32::try_from(max_turns).unwrap_or(u32::MAX)),
            timeout: None,
            tools: Some(TOOLS.iter().map(|t| (*t).to_string()).collect()),
            report_setup: app.global.verbose,
            host_tools: vec![crate::report_finding::source(
                super::tool::OWNER,
                intake.clone(),
                reached.clone(),
            )],
        },
    )?;
    if !parts.explicit.iter().any(|s| s == super::tool::OWNER) {
        parts.explicit.push(super::tool::OWNER.to_string());
    }
    Ok(Open {
        client: Session::spawn(parts, tokio::runtime::Handle::current()),
        max_turns,
        used: false,
    })
}

fn close(open: Open) {
    open.client.send(Op::Shutdown);
    while open
        .client
        .recv()
        .is_some_and(|e| e != Event::ShutdownComplete)
    {}
}

/// Runs the work items within `budget` model calls. `Ok(Err(message))`:
/// the provider failed (exit 3).
///
/// # Errors
/// A session cannot be assembled, or ends early.
pub fn analyse(
    app: &mut App,
    provider_args: &ProviderArgs,
    provider: &(Arc<dyn Provider>, String, String),
    budget: usize,
    work: &Work<'_>,
    intake: Arc<Mutex<Intake>>,
) -> Result<std::result::Result<Spent, String>> {
    let reached = Arc::new(AtomicUsize::new(0));
    let mut spent = Spent::default();
    let mut asked = 0usize;
    let mut session: Option<Open> = None;
    let mut failure = None;
    for item in work.items {
        let remaining = budget.saturating_sub(spent.model_calls);
        if remaining == 0 {
            break;
        }
        let turns = remaining.min(TURNS_PER_CONVERSATION);
        // A session's turn limit is fixed: the last conversations, with
        // less of the budget left, get a session of their own.
        if session.as_ref().is_some_and(|s| s.max_turns != turns)
            && let Some(s) = session.take()
        {
            close(s);
        }
        if session.is_none() {
            session = Some(open(
                app,
                provider_args,
                provider,
                turns,
                &intake,
                &reached,
            )?);
        }
        let Some(s) = session.as_mut() else { break };
        if s.used {
            s.client.send(Op::NewConversation);
        }
        s.used = true;
        s.client.send(Op::UserTurn {
            text: (work.task)(spent.conversations, *item),
            attachments: Vec::new(),
        });
        let done = loop {
            match s.client.recv() {
                Some(Event::TurnComplete(done)) => break Some(done),
                Some(Event::ApprovalRequested(req)) => {
                    s.client.send(Op::Approve {
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
                    "the deep analysis' session ended during conversation {}",
                    spent.conversations + 1
                ))
            });
            break;
        };
        spent.conversations += 1;
        spent.batches.insert(item.batch);
        if let Some(sum) = &done.summary {
            spent.model_calls += sum.turns as usize;
            spent.input_tokens += sum.input_tokens;
            spent.output_tokens += sum.output_tokens;
            asked += sum
                .tool_calls
                .iter()
                .filter(|c| c.tool == agent_findings::REPORT_FINDING)
                .count();
        }
        match done.failure {
            None => {}
            Some(TurnFailure::Model) => {
                failure = Some(Ok(format!(
                    "the model failed during the deep analysis (conversation {}): {}",
                    spent.conversations,
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
    if let Some(s) = session.take() {
        close(s);
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

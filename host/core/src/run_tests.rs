//! The loop against scripted providers: context budget, cancellation.

use std::sync::Arc;
use std::time::Duration;

use agent_providers::{
    CancellationToken, ContentBlock, Message, Provider, ProviderError, Request, Role,
};
use agent_runtime::{CallContext, Runtime};

use crate::*;
use agent_providers::{BoxFuture, Completion, EventSink, StopReason, Usage};
use agent_runtime::{Access, AccessRequest, Authorizer, Limits};
use std::sync::Mutex;

struct DenyAll;

impl Authorizer for DenyAll {
    fn check(&self, _: &AccessRequest<'_>) -> Access {
        Access::Denied("test".into())
    }
    fn record_use(&self, _: &str, _: &str, _: &str, _: &str) {}
}

struct NoGate;

impl ApprovalGate for NoGate {
    fn approve_tool(&self, _: &str, _: &str, _: &str) -> bool {
        false
    }
    fn refusal(&self) -> String {
        "the test refuses every tool".into()
    }
}

/// Answers summarisation requests (no tools, summary instruction) with
/// a fixed summary and everything else with "done"; records requests.
struct Scripted {
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }

    fn stream<'a>(
        &'a self,
        req: &'a Request,
        _cancel: &'a CancellationToken,
        _on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(async move {
            self.requests.lock().unwrap().push(req.clone());
            let text = if req.system.as_deref() == Some(context::SUMMARY_INSTRUCTION) {
                "old work"
            } else {
                "done"
            };
            Ok(Completion {
                message: Message::assistant(text),
                usage: Usage::default(),
                stop_reason: StopReason::EndTurn,
                invalid_inputs: Vec::new(),
            })
        })
    }
}

fn history(rounds: usize, size: usize) -> Vec<Message> {
    let mut m = vec![Message::user("start")];
    for i in 0..rounds {
        let id = format!("t{i}");
        m.push(Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.clone(),
                name: "read".into(),
                input: serde_json::json!({}),
            }],
        });
        m.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: id,
                content: "y".repeat(size),
                is_error: false,
            }],
        });
    }
    m.push(Message::assistant("ok"));
    m
}

async fn run_once(
    history: Vec<Message>,
    budget: usize,
) -> (Vec<Request>, Vec<AgentEvent>, RunOutcome) {
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(None, Limits::default()).unwrap();
    let ctx = Arc::new(CallContext::new(dir.path(), "headless", Arc::new(DenyAll)).unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let provider = Arc::new(Scripted {
        requests: requests.clone(),
    });
    let agent = Agent::builder(provider, &runtime, ctx, &[], &NoGate)
        .system("sys".into())
        .limits(RunLimits {
            max_turns: 3,
            timeout: Duration::from_secs(30),
        })
        .max_tokens(256)
        .build();
    let mut events = Vec::new();
    let mut sink = |e: &AgentEvent| events.push(e.clone());
    let out = agent
        .run_with(
            history,
            "next",
            None,
            &mut sink,
            RunOptions {
                context_budget: budget,
                ..RunOptions::default()
            },
        )
        .await
        .unwrap();
    let reqs = requests.lock().unwrap().clone();
    (reqs, events, out)
}

/// Streams nothing until the run is cancelled.
struct Hanging;

impl Provider for Hanging {
    fn name(&self) -> &str {
        "hanging"
    }

    fn stream<'a>(
        &'a self,
        _req: &'a Request,
        cancel: &'a CancellationToken,
        _on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(async move {
            cancel.cancelled().await;
            Err(ProviderError::Cancelled)
        })
    }
}

#[tokio::test]
async fn cancelling_stops_the_request_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = Runtime::new(None, Limits::default()).unwrap();
    let ctx = Arc::new(CallContext::new(dir.path(), "interactive", Arc::new(DenyAll)).unwrap());
    let cancel = CancellationToken::new();
    let agent = Agent::builder(Arc::new(Hanging), &runtime, ctx, &[], &NoGate)
        .system("sys".into())
        .limits(RunLimits {
            max_turns: 3,
            timeout: Duration::from_secs(30),
        })
        .cancel(cancel.clone())
        .build();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let mut events = Vec::new();
    let mut sink = |e: &AgentEvent| events.push(e.clone());
    let out = agent.run(Vec::new(), "go", None, &mut sink).await.unwrap();
    canceller.await.unwrap();
    assert_eq!(out.stop, StopKind::Cancelled);
    assert_eq!(out.turns, 1);
    assert!(matches!(
        events.last(),
        Some(AgentEvent::Final {
            stop: StopKind::Cancelled,
            ..
        })
    ));
}

#[tokio::test]
async fn loop_sends_history_unchanged_under_budget() {
    let h = history(2, 100);
    let (reqs, events, out) = run_once(h.clone(), DEFAULT_CONTEXT_BUDGET).await;
    assert_eq!(out.text, "done");
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].messages[..h.len()], h[..]);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::Context { .. }))
    );
}

#[tokio::test]
async fn loop_trims_old_tool_outputs_over_budget() {
    let h = history(3, 4000);
    let full = context::estimate_tokens(&h);
    let (reqs, events, _) = run_once(h, full - 500).await;
    assert_eq!(reqs.len(), 1);
    let trimmed = reqs[0].messages[2].content[0].clone();
    assert!(matches!(
        trimmed,
        ContentBlock::ToolResult { content, .. } if content == "[tool output trimmed: 4000 bytes]"
    ));
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::Context {
            trimmed_results: 1,
            summarized_messages: 0,
            ..
        }
    )));
}

#[tokio::test]
async fn loop_summarises_when_trimming_is_not_enough() {
    let h = history(3, 400);
    let (reqs, events, out) = run_once(h, 60).await;
    assert_eq!(out.text, "done");
    assert_eq!(reqs.len(), 2);
    assert!(reqs[0].tools.is_empty());
    let sent = &reqs[1].messages;
    assert_eq!(
        sent[0],
        Message::user("Summary of the earlier conversation: old work")
    );
    assert_eq!(sent.last(), Some(&Message::user("next")));
    assert!(events.iter().any(|e| matches!(
        e,
        AgentEvent::Context {
            summarized_messages: 1..,
            ..
        }
    )));
}

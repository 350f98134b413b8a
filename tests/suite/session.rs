//! A session driven end to end over the protocol (issue 14): the real
//! core-tools component, the real interactive grants and store, a scripted
//! Anthropic model on 127.0.0.1. The test is the frontend: it sends `Op`s
//! and reads `Event`s — approvals arrive as events and are answered with
//! `Op::Approve`, never through a callback.

use std::sync::Arc;
use std::time::Duration;

use agent_core::session::{Approvals, SessionOptions, SessionParts};
use agent_core::{AgentEvent, Invoker, RunLimits, RunOptions, Session, StopKind};
use agent_manifest::Mode;
use agent_policy::{AuditLog, Grants};
use agent_protocol::{
    ApprovalAnswer, ApprovalKind, Client, Event, NoticeKind, Op, ToolPreview, TurnComplete,
};
use agent_providers::{AnthropicProvider, Provider, ProviderConfig};
use agent_runtime::{CallContext, GrantsAuthorizer, Limits, Origin, Runtime, TrustPolicy};
use agent_store::Store;
use agent_tests::model_server::{ModelServer, Wire, anthropic_answer};
use agent_tests::{Sandbox, builtin_package};
use serde_json::json;

use crate::common::shared_cache;

/// The session's parts, as the binary's assembly makes them for the
/// interface: core-tools, interactive grants asking through the session.
pub(crate) fn parts(sb: &Sandbox, model_url: &str) -> SessionParts {
    let paths = sb.paths();
    paths.ensure_dirs().expect("dirs");
    let store = Arc::new(Store::open(paths.db_path()).expect("store"));
    let audit = Arc::new(AuditLog::open(paths.audit_log_path()).expect("audit"));
    let approvals = Approvals::new();
    let grants = Arc::new(GrantsAuthorizer::new(Arc::new(Grants::interactive(
        store.clone(),
        approvals.approver(),
        audit,
    ))));
    let runtime = Arc::new(Runtime::new(Some(shared_cache()), Limits::default()).expect("rt"));
    let trust = TrustPolicy {
        store: agent_trust::TrustStore::load(&paths.trusted_keys_dir()).expect("trust"),
        builtin_key: Some(agent_builtins::public_key().expect("key")),
        allow_unsigned: false,
    };
    let core_tools = runtime
        .load(builtin_package("core-tools", Origin::Builtin), &trust)
        .expect("core-tools loads");
    let skills = Arc::new(vec![core_tools]);
    let root = sb.project.path().canonicalize().expect("root");
    let gate = approvals.gate(root.clone());
    let invoker = Arc::new(Invoker::new(runtime.clone(), skills.clone(), gate.clone()));
    let mut ctx = CallContext::new(&root, "interactive", grants.clone()).expect("ctx");
    ctx.invoker = Some(invoker.clone());
    let provider = move |model: &str| -> Arc<dyn Provider> {
        Arc::new(
            AnthropicProvider::new(
                ProviderConfig::anthropic(model)
                    .api_key("test-key")
                    .base_url(model_url),
            )
            .expect("provider"),
        )
    };
    let url = model_url.to_string();
    SessionParts {
        provider: provider("claude-test"),
        provider_name: "anthropic".into(),
        model: "claude-test".into(),
        switch_model: Box::new(move |model| {
            let p: Arc<dyn Provider> = Arc::new(
                AnthropicProvider::new(
                    ProviderConfig::anthropic(model)
                        .api_key("test-key")
                        .base_url(url.clone()),
                )
                .map_err(|e| e.to_string())?,
            );
            Ok((p, "anthropic".into(), model.to_string()))
        }),
        runtime,
        skills,
        ctx: Arc::new(ctx),
        invoker,
        skill_usage: None,
        grants,
        gate,
        approvals,
        store,
        permission_status: Box::new(|m| {
            Ok(m.permissions
                .iter()
                .map(|p| (*p, "ask on first use".to_string()))
                .collect())
        }),
        project_root: root,
        explicit: Vec::new(),
        host_tools: Vec::new(),
        options: SessionOptions {
            mode: Mode::Interactive,
            format: "markdown".into(),
            limits: RunLimits {
                max_turns: 10,
                timeout: Duration::from_secs(60),
            },
            run: RunOptions::default(),
            max_tokens: 1024,
            context_budget: 100_000,
            tool_filter: None,
            report_setup: false,
            describe_error: |e| format!("{e:#}"),
        },
    }
}

/// The next event, within a generous time.
pub(crate) fn next(client: &Client) -> Event {
    client
        .recv_timeout(Duration::from_secs(60))
        .expect("the session sends an event")
}

/// What a turn showed its frontend.
struct Turn {
    /// The agent events.
    events: Vec<AgentEvent>,
    /// The tool questions' previews.
    previews: Vec<ToolPreview>,
    /// The permission questions: skill and permission.
    permissions: Vec<(String, String)>,
    /// The completion.
    done: TurnComplete,
}

/// Reads events until the turn completes, answering tool questions with
/// `tool` and permission questions with Once.
fn turn(client: &Client, tool: ApprovalAnswer) -> Turn {
    let (mut events, mut previews, mut permissions) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        match next(client) {
            Event::Agent(e) => events.push(e),
            Event::ApprovalRequested(req) => {
                let answer = match req.kind {
                    ApprovalKind::Tool { preview, .. } => {
                        previews.push(preview);
                        tool
                    }
                    ApprovalKind::Permission {
                        skill, permission, ..
                    } => {
                        permissions.push((skill, permission));
                        ApprovalAnswer::Once
                    }
                };
                assert!(client.send(Op::Approve { id: req.id, answer }));
            }
            Event::TurnComplete(done) => {
                return Turn {
                    events,
                    previews,
                    permissions,
                    done,
                };
            }
            _ => {}
        }
    }
}

fn edit(id: &str, old: &str, new: &str) -> agent_tests::model_server::Reply {
    Wire::Anthropic.tool(
        id,
        "edit",
        &json!({"path": "notes.txt", "old": old, "new": new}),
    )
}

#[test]
fn a_session_runs_turns_asks_approvals_as_events_and_resumes() {
    let rt = agent_tests::model_server::tokio_rt();
    let slow: Vec<String> = (0..200).map(|i| format!("word{i} ")).collect();
    let server = rt
        .block_on(ModelServer::start(vec![
            edit("call_1", "world", "agent"),
            Wire::Anthropic.answer("Edited."),
            edit("call_2", "agent", "session"),
            Wire::Anthropic.answer("Left it."),
            anthropic_answer(&slow).split(8, Duration::from_millis(20)),
        ]))
        .expect("model server");
    let sb = Sandbox::new();
    std::fs::write(sb.project.path().join("notes.txt"), "hello world\n").expect("notes");
    let notes = || std::fs::read_to_string(sb.project.path().join("notes.txt")).expect("notes");
    let client = Session::spawn(parts(&sb, server.url()), rt.handle().clone());

    // The first event says what the session runs with.
    assert_eq!(
        next(&client),
        Event::SessionConfigured {
            model: "anthropic/claude-test".into(),
            context_budget: 100_000
        }
    );

    // A turn whose edit is approved once: the question carries the diff,
    // computed in core; the tool runs; the turn completes.
    client.send(Op::UserTurn {
        text: "Greet the agent".into(),
        attachments: vec![],
    });
    let Turn {
        events,
        previews,
        permissions,
        done,
    } = turn(&client, ApprovalAnswer::Once);
    // The skill's first write asked too, as an event (answered Once).
    assert_eq!(
        permissions,
        [("core-tools".to_string(), "file:write".to_string())]
    );
    assert_eq!(done.stop, Some(StopKind::EndTurn), "{done:?}");
    assert!(
        matches!(&previews[..], [ToolPreview::Diff { path, lines, .. }] if path == "notes.txt" && lines.len() == 3),
        "{previews:?}"
    );
    assert_eq!(notes(), "hello agent\n");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Approval { approved: true, .. })),
        "{events:?}"
    );
    assert_eq!(
        done.summary.as_ref().map(|s| s.text.as_str()),
        Some("Edited.")
    );
    let session_id = done.session_id.clone();
    assert!(!session_id.is_empty());

    // The next edit is denied: the refusal is in the events, the file is
    // unchanged, and the turn goes on to the model's answer.
    client.send(Op::UserTurn {
        text: "Now rename it".into(),
        attachments: vec![],
    });
    let Turn {
        events,
        previews,
        done,
        ..
    } = turn(&client, ApprovalAnswer::Deny);
    assert_eq!(previews.len(), 1);
    assert!(
        events.iter().any(
            |e| matches!(e, AgentEvent::Approval { approved: false, reason, .. }
            if reason == "you declined it in the approval dialog")
        ),
        "{events:?}"
    );
    assert_eq!(notes(), "hello agent\n", "a denied edit changed the file");
    assert_eq!(done.session_id, session_id, "the same session goes on");

    // Interrupt: the model's slow answer is cut off and the turn ends as
    // cancelled.
    client.send(Op::UserTurn {
        text: "Tell me a long story".into(),
        attachments: vec![],
    });
    // A second turn sent while it streams is refused with an error event.
    let (mut refused, mut interrupted) = (None, false);
    let done = loop {
        match next(&client) {
            Event::Agent(AgentEvent::TextDelta { .. }) if !interrupted => {
                client.send(Op::UserTurn {
                    text: "and another".into(),
                    attachments: vec![],
                });
                client.send(Op::Interrupt);
                interrupted = true;
            }
            Event::Error { op, message } => refused = Some((op, message)),
            Event::TurnComplete(done) => break done,
            _ => {}
        }
    };
    assert_eq!(done.stop, Some(StopKind::Cancelled), "{done:?}");
    assert_eq!(
        refused,
        Some((
            "user_turn".to_string(),
            "a turn is still running: wait for it to complete, or interrupt it first".to_string()
        ))
    );

    // The model is switched for the following turns.
    client.send(Op::SetModel {
        model: "claude-other".into(),
    });
    assert_eq!(
        next(&client),
        Event::ModelChanged {
            model: "anthropic/claude-other".into()
        }
    );
    assert_eq!(
        next(&client),
        Event::Notice {
            kind: NoticeKind::Info,
            text: "model: anthropic/claude-other from the next prompt on".into()
        }
    );

    // Lists answer as events.
    client.send(Op::ListSkills);
    let Event::Skills(rows) = next(&client) else {
        panic!("expected the skills");
    };
    assert!(rows.iter().any(|r| r.name == "core-tools"), "{rows:?}");
    client.send(Op::SkillInfo {
        name: "nope".into(),
    });
    assert_eq!(
        next(&client),
        Event::Error {
            op: "skill_info".into(),
            message: "no skill named `nope` (see /skill list)".into()
        }
    );

    // A new conversation, then the recorded one resumed by a prefix of its id.
    client.send(Op::NewConversation);
    client.send(Op::Resume {
        id: session_id[..8].to_string(),
    });
    let Event::Resumed { id, events } = next(&client) else {
        panic!("expected the resumed session");
    };
    assert_eq!(id, session_id);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::User { text } if text == "Greet the agent")),
        "{events:?}"
    );

    // Shutdown is the last event.
    client.send(Op::Shutdown);
    assert_eq!(next(&client), Event::ShutdownComplete);
    assert!(client.recv().is_none());
}

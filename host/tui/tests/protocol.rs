//! The interface as a frontend of the protocol: every question is an
//! `Event::ApprovalRequested` answered by an `Op::Approve` with its id, every
//! command an `Op` whose answer arrives as an event, and quitting an
//! `Op::Shutdown` waited for — against a scripted agent end (`common`).

mod common;

use std::time::{Duration, Instant};

use agent_protocol::{
    AgentEvent, ApprovalAnswer, ApprovalKind, ApprovalRequest, Event, Op, StopKind, ToolPreview,
    channel,
};
use agent_tui::UiMsg;
use agent_tui::term::{shut_down, spawn_events};
use common::{Harness, PLAIN, agent, ctrl, permission_request, screen};
use crossterm::event::KeyCode;

fn asking(requests: Vec<Event>) -> Harness {
    let n = requests.len();
    let mut h = Harness::start(
        std::path::Path::new("."),
        PLAIN,
        requests,
        agent(Vec::new()),
    );
    h.pump(n);
    h
}

/// Each key of the dialog answers the question shown (the oldest) with the
/// answer it names, as an `Op::Approve` carrying that question's id.
#[test]
fn each_dialog_key_sends_its_answer_with_the_requests_id() {
    let keys = [
        (KeyCode::Char('o'), ApprovalAnswer::Once),
        (KeyCode::Char('a'), ApprovalAnswer::Always),
        (KeyCode::Char('d'), ApprovalAnswer::Deny),
        (KeyCode::Char('y'), ApprovalAnswer::Once),
        (KeyCode::Char('n'), ApprovalAnswer::Deny),
        (KeyCode::Esc, ApprovalAnswer::Deny),
        (KeyCode::Enter, ApprovalAnswer::Once),
    ];
    let requests = (0..keys.len() as u64)
        .map(|i| permission_request(100 + i, &format!("perm:{i}"), ""))
        .collect();
    let mut h = asking(requests);
    for (i, (key, answer)) in keys.into_iter().enumerate() {
        let id = 100 + i as u64;
        let shown = screen(&mut h.app);
        assert!(shown.contains(&format!("perm:{i}")), "{key:?}: {shown}");
        assert!(
            shown.contains(&format!("{} approval(s) pending", keys.len() - i)),
            "{shown}"
        );
        h.key(key);
        assert_eq!(h.op(), Op::Approve { id, answer }, "{key:?}");
    }
    assert!(h.app.asks.is_empty());
    assert!(!screen(&mut h.app).contains("Permission requested"));
}

/// ←/→ move the highlighted answer; Enter sends it. Ctrl-C in a dialog
/// denies and interrupts the turn.
#[test]
fn arrows_pick_the_answer_and_ctrl_c_denies_and_interrupts() {
    let mut h = asking(vec![
        permission_request(1, "file:write", ""),
        permission_request(2, "file:write", ""),
        permission_request(3, "file:write", ""),
    ]);
    h.key(KeyCode::Right);
    h.key(KeyCode::Right);
    h.key(KeyCode::Enter);
    assert_eq!(
        h.op(),
        Op::Approve {
            id: 1,
            answer: ApprovalAnswer::Deny
        }
    );
    // The next question starts at "Allow once" again; ← wraps to Deny, ← again Always.
    h.key(KeyCode::Left);
    h.key(KeyCode::Left);
    h.key(KeyCode::Enter);
    assert_eq!(
        h.op(),
        Op::Approve {
            id: 2,
            answer: ApprovalAnswer::Always
        }
    );
    h.app.handle(ctrl('c'));
    assert_eq!(
        h.op(),
        Op::Approve {
            id: 3,
            answer: ApprovalAnswer::Deny
        }
    );
    assert_eq!(h.op(), Op::Interrupt);
}

/// A tool's command line and a preview problem are drawn from the request.
#[test]
fn a_command_approval_shows_its_command_line() {
    let mut h = asking(vec![
        Event::ApprovalRequested(ApprovalRequest {
            id: 4,
            kind: ApprovalKind::Tool {
                skill: "core-tools".into(),
                tool: "exec".into(),
                preview: ToolPreview::Command {
                    line: "git commit -m 'a b'".into(),
                },
            },
        }),
        Event::ApprovalRequested(ApprovalRequest {
            id: 5,
            kind: ApprovalKind::Tool {
                skill: "core-tools".into(),
                tool: "edit".into(),
                preview: ToolPreview::Problem {
                    message: "a.txt: the text to replace occurs 0 times (the edit will fail)"
                        .into(),
                },
            },
        }),
    ]);
    let s = screen(&mut h.app);
    assert!(s.contains("core-tools wants to run exec"), "{s}");
    assert!(s.contains("$ git commit -m 'a b'"), "{s}");
    h.key(KeyCode::Char('d'));
    assert_eq!(
        h.op(),
        Op::Approve {
            id: 4,
            answer: ApprovalAnswer::Deny
        }
    );
    let s = screen(&mut h.app);
    assert!(s.contains("occurs 0 times (the edit will fail)"), "{s}");
}

/// An operation the agent refuses comes back as `Event::Error`, shown as an
/// error notice; a turn that could not start is no longer running.
#[test]
fn an_error_event_is_shown_as_an_error_notice() {
    let mut h = Harness::start(
        std::path::Path::new("."),
        PLAIN,
        Vec::new(),
        |op: &Op| match op {
            Op::UserTurn { .. } => vec![Event::Error {
                op: "user_turn".into(),
                message: "cannot record the session: disk full".into(),
            }],
            other => agent(Vec::new())(other),
        },
    );
    assert_eq!(
        h.round_trip("/skill info nope"),
        Op::SkillInfo {
            name: "nope".into()
        }
    );
    let s = screen(&mut h.app);
    assert!(s.contains("• no skill named `nope`"), "{s}");
    assert!(h.app.modal.is_none());
    assert!(matches!(h.round_trip("hello"), Op::UserTurn { .. }));
    let s = screen(&mut h.app);
    assert!(s.contains("• cannot record the session: disk full"), "{s}");
    assert!(!h.app.transcript.running, "the turn did not start");
    assert!(!s.contains("running"), "{s}");
}

/// `/skill list` is an `Op::ListSkills`; the `Event::Skills` answer opens the
/// table; other commands round-trip the same way.
#[test]
fn commands_round_trip_as_ops_and_events() {
    let mut h = Harness::with_turn(Vec::new());
    assert_eq!(h.round_trip("/skill list"), Op::ListSkills);
    let s = screen(&mut h.app);
    assert!(s.contains("Skills · Esc closes"), "{s}");
    assert!(
        s.contains("code-review        1.2.0    user     off"),
        "{s}"
    );
    h.key(KeyCode::Esc);

    assert_eq!(
        h.round_trip("/skill activate git"),
        Op::SetSkill {
            name: "git".into(),
            active: true
        }
    );
    assert!(screen(&mut h.app).contains("• git true"));

    assert_eq!(h.round_trip("/permissions"), Op::ListPermissions);
    let s = screen(&mut h.app);
    assert!(
        s.contains("core-tools               file:write         always"),
        "{s}"
    );
    h.key(KeyCode::Esc);

    assert_eq!(
        h.round_trip("/model other-model"),
        Op::SetModel {
            model: "other-model".into()
        }
    );
    let s = screen(&mut h.app);
    assert!(
        s.contains("• model: other-model from the next prompt on"),
        "{s}"
    );
    assert!(s.contains(" other-model · ctx 0/100k"), "status line: {s}");

    assert_eq!(h.round_trip("/resume"), Op::ListSessions);
    assert!(screen(&mut h.app).contains("no earlier session in this project"));
    assert_eq!(h.round_trip("/clear"), Op::NewConversation);
    assert_eq!(h.round_trip("/compact"), Op::Compact);
    assert!(
        h.app.transcript.running,
        "compacting runs until TurnComplete"
    );
}

/// `Event::Resumed` replaces the transcript with the session's events and
/// names the session; it is the session to continue with.
#[test]
fn a_resumed_session_is_shown_and_remembered() {
    let resumed = Event::Resumed {
        id: "0123456789abcdef".into(),
        events: vec![
            AgentEvent::User {
                text: "Greet the agent in notes.txt".into(),
            },
            AgentEvent::TextDelta {
                text: "All done.".into(),
            },
            AgentEvent::Final {
                text: "All done.".into(),
                turns: 1,
                stop: StopKind::EndTurn,
            },
        ],
    };
    let mut h = Harness::start(
        std::path::Path::new("."),
        PLAIN,
        Vec::new(),
        move |op: &Op| match op {
            Op::UserTurn { text, .. } => vec![
                Event::Agent(AgentEvent::User { text: text.clone() }),
                common::turn_complete(""),
            ],
            Op::Resume { .. } => vec![resumed.clone()],
            _ => Vec::new(),
        },
    );
    h.round_trip("earlier text");
    assert!(screen(&mut h.app).contains("› earlier text"));
    assert_eq!(h.app.session, None, "no session recorded yet");
    assert_eq!(
        h.round_trip("/resume 0123"),
        Op::Resume { id: "0123".into() }
    );
    let s = screen(&mut h.app);
    assert!(s.contains("› Greet the agent in notes.txt"), "{s}");
    assert!(s.contains("All done."), "{s}");
    assert!(s.contains("• resumed session 0123456789abcdef"), "{s}");
    assert!(!s.contains("earlier text"), "{s}");
    assert!(!h.app.transcript.running);
    assert_eq!(h.app.session.as_deref(), Some("0123456789abcdef"));
}

/// Quitting refuses the question still open, sends `Op::Shutdown` and waits
/// for `ShutdownComplete`, folding in what arrives meanwhile (the cancelled
/// turn's end names the session to continue).
#[test]
fn quitting_denies_what_is_open_and_waits_for_the_shutdown() {
    let mut h = Harness::start(
        std::path::Path::new("."),
        PLAIN,
        vec![permission_request(8, "file:write", "")],
        |op: &Op| match op {
            Op::Shutdown => vec![common::turn_ended("s-42", StopKind::Cancelled)],
            _ => Vec::new(),
        },
    );
    h.pump(1);
    assert_eq!(h.app.asks.len(), 1);
    let (mut app, rx, seen) = h.into_ui();
    assert!(shut_down(&mut app, &rx, Duration::from_secs(10)));
    let ops: Vec<Op> = seen.try_iter().collect();
    assert_eq!(
        ops,
        vec![
            Op::Approve {
                id: 8,
                answer: ApprovalAnswer::Deny
            },
            Op::Shutdown
        ]
    );
    assert_eq!(app.session.as_deref(), Some("s-42"));
}

/// An agent that never confirms does not hold the interface: the wait is
/// bounded.
#[test]
fn the_wait_for_the_shutdown_is_bounded() {
    let (client, _server) = channel();
    let (ops, events) = client.split();
    let (tx, rx) = std::sync::mpsc::channel();
    spawn_events(events, tx);
    let mut app = agent_tui::App::new(ops, std::path::Path::new("."), PLAIN);
    let start = Instant::now();
    assert!(!shut_down(&mut app, &rx, Duration::from_millis(200)));
    assert!(start.elapsed() < Duration::from_secs(5));
}

/// An agent whose end is gone is said so; the interface stays to be left.
#[test]
fn a_gone_agent_is_shown() {
    let (client, server) = channel();
    let (ops, events) = client.split();
    let (tx, rx) = std::sync::mpsc::channel();
    spawn_events(events, tx);
    let mut app = agent_tui::App::new(ops, std::path::Path::new("."), PLAIN);
    drop(server);
    let msg = rx.recv_timeout(Duration::from_secs(10)).expect("a message");
    assert!(matches!(msg, UiMsg::Disconnected));
    app.handle(msg);
    let s = screen(&mut app);
    assert!(
        s.contains("• the agent stopped; press Ctrl-D to leave"),
        "{s}"
    );
    assert!(app.ended);
}

//! The interface drawn on ratatui's `TestBackend`: snapshots of the screens
//! the issue names, at 80×24, and the answers dialogs send back — all over
//! the protocol, against a scripted agent end (`common`).

mod common;

use agent_protocol::{
    AgentEvent, ApprovalAnswer, ApprovalKind, ApprovalRequest, DiffLine, Event, Op, StopKind,
    ToolPreview,
};
use agent_tui::UiMsg;
use agent_tui::theme::Theme;
use common::{Harness, PLAIN, agent, agent_events, draw, permission_request, screen, terminal};
use crossterm::event::{Event as TermEvent, KeyCode};
use ratatui::style::Color;
use serde_json::json;

fn streamed_answer() -> Vec<AgentEvent> {
    let mut events = vec![
        AgentEvent::User {
            text: "How do I print in Rust?".into(),
        },
        AgentEvent::Activated {
            skill: "core-tools".into(),
            reason: "no triggers".into(),
        },
        AgentEvent::TurnStart { turn: 1 },
    ];
    for piece in [
        "Use the **`println!`** macro",
        ":\n\n```rust\n// greet\nfn main() {\n",
        "    let n = 42;\n    println!(\"hi {n}\");\n}\n```\n",
        "\n- it appends a newline\n- `print!` does not",
    ] {
        events.push(AgentEvent::TextDelta { text: piece.into() });
    }
    events
}

/// The streamed answer, sent by the agent when the user asks.
fn asked(theme: Theme, turn: Vec<Event>) -> Harness {
    let mut h = Harness::start(std::path::Path::new("."), theme, Vec::new(), agent(turn));
    h.enter("How do I print in Rust?");
    assert!(matches!(h.op(), Op::UserTurn { .. }));
    h
}

#[test]
fn a_streamed_answer_with_a_code_block() {
    let mut turn = agent_events(&streamed_answer());
    turn.extend(agent_events(&[
        AgentEvent::Usage {
            input_tokens: 1234,
            output_tokens: 56,
        },
        AgentEvent::Final {
            text: String::new(),
            turns: 1,
            stop: StopKind::EndTurn,
        },
    ]));
    turn.push(common::turn_complete("s-1"));
    let mut h = asked(PLAIN, turn);
    // Mid-stream: the fence is still open and already drawn as code.
    h.pump(5);
    let mid = screen(&mut h.app);
    assert!(mid.contains("│ fn main() {"), "{mid}");
    assert!(mid.contains("running"), "{mid}");
    h.settle();
    insta::assert_snapshot!("streamed_answer", screen(&mut h.app));
}

#[test]
fn code_is_highlighted_in_colour_and_not_under_no_color() {
    let mut h = asked(Theme { color: true }, agent_events(&streamed_answer()));
    h.settle();
    let mut term = terminal(80, 24);
    let text = draw(&mut term, &mut h.app);
    let (y, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.starts_with("│ fn main"))
        .expect("code line");
    let x = line.chars().position(|c| c == 'f').expect("fn") as u16;
    let buf = term.backend().buffer();
    assert_eq!(buf[(x, y as u16)].fg, Color::Magenta, "keyword colour");
    let comment_y = y as u16 - 1;
    assert_eq!(buf[(2, comment_y)].fg, Color::DarkGray, "comment colour");

    let mut plain = asked(PLAIN, agent_events(&streamed_answer()));
    plain.settle();
    let mut term = terminal(80, 24);
    draw(&mut term, &mut plain.app);
    let buf = term.backend().buffer();
    assert!(
        buf.content()
            .iter()
            .all(|c| c.fg == Color::Reset && c.bg == Color::Reset),
        "NO_COLOR: no colours at all"
    );
}

#[test]
fn a_tool_call() {
    let mut h = Harness::with_turn(agent_events(&[
        AgentEvent::User {
            text: "What is in notes.txt?".into(),
        },
        AgentEvent::TurnStart { turn: 1 },
        AgentEvent::ToolCall {
            id: "t1".into(),
            skill: "core-tools".into(),
            tool: "read_file".into(),
            name: "read_file".into(),
            input: json!({"path": "notes.txt"}),
        },
        AgentEvent::ToolResult {
            id: "t1".into(),
            output: "hello world\nsecond line\nthird line".into(),
            is_error: false,
        },
        AgentEvent::ToolCall {
            id: "t2".into(),
            skill: "core-tools".into(),
            tool: "exec".into(),
            name: "exec".into(),
            input: json!({"program": "cargo", "args": ["test"]}),
        },
        AgentEvent::Approval {
            tool: "exec".into(),
            approved: false,
            reason: "denied by the user".into(),
        },
        AgentEvent::ToolResult {
            id: "t2".into(),
            output: "tool `exec` was not run".into(),
            is_error: true,
        },
        AgentEvent::ToolCall {
            id: "t3".into(),
            skill: "core-tools".into(),
            tool: "search".into(),
            name: "search".into(),
            input: json!({"pattern": "TODO"}),
        },
    ]));
    h.round_trip("What is in notes.txt?");
    insta::assert_snapshot!("tool_call", screen(&mut h.app));
}

/// The diff of `notes.txt` ("# Notes\nhello world\nsee you\n") with
/// "world" → "agent", as the agent computes it before the edit runs.
fn notes_edit() -> ToolPreview {
    ToolPreview::Diff {
        path: "notes.txt".into(),
        new_file: false,
        lines: vec![
            DiffLine::Hunk("@@ -1,3 +1,3 @@".into()),
            DiffLine::Same(1, 1, "# Notes".into()),
            DiffLine::Removed(2, "hello world".into()),
            DiffLine::Added(2, "hello agent".into()),
            DiffLine::Same(3, 3, "see you".into()),
        ],
    }
}

#[test]
fn a_diff_approval_and_its_answer() {
    let mut h = Harness::with_turn(vec![
        Event::Agent(AgentEvent::User {
            text: "Greet the agent in notes.txt".into(),
        }),
        Event::ApprovalRequested(ApprovalRequest {
            id: 3,
            kind: ApprovalKind::Tool {
                skill: "core-tools".into(),
                tool: "edit".into(),
                preview: notes_edit(),
            },
        }),
    ]);
    h.round_trip("Greet the agent in notes.txt");
    insta::assert_snapshot!("diff_approval", screen(&mut h.app));
    h.key(KeyCode::Char('o'));
    assert_eq!(
        h.op(),
        Op::Approve {
            id: 3,
            answer: ApprovalAnswer::Once
        }
    );
    assert!(h.app.asks.is_empty());
}

#[test]
fn a_permission_dialog_answered_with_an_approve_op() {
    // The agent asks from its side, unprompted by a key.
    let mut h = Harness::start(
        std::path::Path::new("."),
        PLAIN,
        vec![permission_request(
            9,
            "file:write",
            "create, change and delete files inside the project",
        )],
        agent(Vec::new()),
    );
    h.pump(1);
    h.key(KeyCode::Right);
    let shown = screen(&mut h.app);
    insta::assert_snapshot!("permission_dialog", shown);
    h.key(KeyCode::Enter);
    assert_eq!(
        h.op(),
        Op::Approve {
            id: 9,
            answer: ApprovalAnswer::Always
        }
    );
}

#[test]
fn the_skill_list() {
    let mut h = Harness::with_turn(Vec::new());
    assert_eq!(h.round_trip("/skill list"), Op::ListSkills);
    insta::assert_snapshot!("skill_list", screen(&mut h.app));
    h.key(KeyCode::Esc);
    assert!(h.app.modal.is_none());
    assert!(
        h.seen
            .try_iter()
            .all(|op| !matches!(op, Op::UserTurn { .. })),
        "commands are not sent to the model"
    );
}

#[test]
fn prompts_attach_files_and_esc_cancels_a_running_turn() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
    let mut h = Harness::start(dir.path(), PLAIN, Vec::new(), agent(Vec::new()));
    h.app.handle(UiMsg::Term(TermEvent::Paste(
        "explain @a.rs\nplease".into(),
    )));
    h.key(KeyCode::Enter);
    assert_eq!(
        h.op(),
        Op::UserTurn {
            text: "explain @a.rs\nplease\n\n<file path=\"a.rs\">\nfn a() {}\n</file>".into(),
            attachments: Vec::new(),
        }
    );
    assert!(h.app.transcript.running);
    h.key(KeyCode::Esc);
    assert_eq!(h.op(), Op::Interrupt);
    assert_eq!(
        h.round_trip("/permissions revoke core-tools file:write"),
        Op::Revoke {
            skill: "core-tools".into(),
            permission: Some("file:write".into()),
        }
    );
}

#[test]
fn small_and_resized_terminals_draw_without_panicking() {
    let mut turn = agent_events(&streamed_answer());
    turn.push(Event::ApprovalRequested(ApprovalRequest {
        id: 1,
        kind: ApprovalKind::Permission {
            skill: "core-tools".into(),
            permission: "shell:exec".into(),
            description: "run programs (no shell) inside the project".into(),
            scope: Some("git".into()),
            detail: "run git status".into(),
        },
    }));
    let mut h = asked(PLAIN, turn);
    h.settle();
    let mut term = terminal(80, 24);
    for (w, h2) in [(80, 24), (20, 6), (120, 40), (40, 12), (1, 1)] {
        term.backend_mut().resize(w, h2);
        term.resize(ratatui::layout::Rect::new(0, 0, w, h2))
            .unwrap();
        draw(&mut term, &mut h.app);
    }
}

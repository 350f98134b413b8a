//! The interface drawn on ratatui's `TestBackend`: snapshots of the screens
//! the issue names, at 80×24, and the answers dialogs send back.

use std::sync::mpsc::channel;

use agent_core::{AgentEvent, StopKind};
use agent_manifest::Permission;
use agent_policy::{Answer, ApprovalRequest, Approver};
use agent_tui::app::{App, Backend, PermissionRow, SessionRow, SkillRow};
use agent_tui::approval::{Ask, Question, TuiApprover};
use agent_tui::diff::preview;
use agent_tui::theme::Theme;
use agent_tui::{UiMsg, ui};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::json;

#[derive(Default)]
struct Fake {
    submitted: Vec<String>,
    cancelled: usize,
    revoked: Vec<(String, Option<String>)>,
}

impl Backend for Fake {
    fn submit(&mut self, prompt: String) {
        self.submitted.push(prompt);
    }
    fn cancel(&mut self) {
        self.cancelled += 1;
    }
    fn model(&self) -> String {
        "anthropic/test-model".into()
    }
    fn context_budget(&self) -> u64 {
        100_000
    }
    fn skills(&mut self) -> Vec<SkillRow> {
        vec![
            SkillRow {
                name: "core-tools".into(),
                version: "0.1.0".into(),
                source: "builtin".into(),
                state: "active".into(),
                description: "Read, write and edit project files".into(),
            },
            SkillRow {
                name: "git".into(),
                version: "0.1.0".into(),
                source: "builtin".into(),
                state: "-".into(),
                description: "Git status, diff and log".into(),
            },
            SkillRow {
                name: "code-review".into(),
                version: "1.2.0".into(),
                source: "user".into(),
                state: "off".into(),
                description: "Reviews diffs".into(),
            },
        ]
    }
    fn skill_info(&mut self, name: &str) -> Result<String, String> {
        Err(format!("no skill named `{name}`"))
    }
    fn set_skill(&mut self, name: &str, active: bool) -> Result<String, String> {
        Ok(format!("{name} {active}"))
    }
    fn permissions(&mut self) -> Result<Vec<PermissionRow>, String> {
        Ok(vec![PermissionRow {
            skill: "core-tools".into(),
            permission: "file:write".into(),
            decision: "always".into(),
        }])
    }
    fn revoke(&mut self, skill: &str, permission: Option<&str>) -> Result<String, String> {
        self.revoked
            .push((skill.to_string(), permission.map(str::to_string)));
        Ok("revoked".into())
    }
    fn set_model(&mut self, model: &str) -> Result<String, String> {
        Ok(model.to_string())
    }
    fn clear(&mut self) {}
    fn compact(&mut self) {}
    fn sessions(&mut self) -> Result<Vec<SessionRow>, String> {
        Ok(Vec::new())
    }
    fn resume(&mut self, id: &str) -> Result<Vec<AgentEvent>, String> {
        Err(format!("no session {id}"))
    }
}

const PLAIN: Theme = Theme { color: false };

fn app(fake: &Fake, theme: Theme) -> App {
    App::new(fake, std::path::Path::new("."), theme)
}

fn terminal(w: u16, h: u16) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(w, h)).expect("terminal")
}

fn draw(term: &mut Terminal<TestBackend>, app: &mut App) -> String {
    term.draw(|f| ui::draw(f, app)).expect("draw");
    let buf = term.backend().buffer();
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn screen(app: &mut App) -> String {
    draw(&mut terminal(80, 24), app)
}

fn key(code: KeyCode) -> UiMsg {
    UiMsg::Term(Event::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

fn feed(app: &mut App, fake: &mut Fake, events: &[AgentEvent]) {
    for e in events {
        app.handle(UiMsg::Agent(e.clone()), fake);
    }
}

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

#[test]
fn a_streamed_answer_with_a_code_block() {
    let mut fake = Fake::default();
    let mut a = app(&fake, PLAIN);
    let events = streamed_answer();
    // Mid-stream: the fence is still open and already drawn as code.
    feed(&mut a, &mut fake, &events[..5]);
    let mid = screen(&mut a);
    assert!(mid.contains("│ fn main() {"), "{mid}");
    assert!(mid.contains("running"), "{mid}");
    feed(&mut a, &mut fake, &events[5..]);
    feed(
        &mut a,
        &mut fake,
        &[
            AgentEvent::Usage {
                input_tokens: 1234,
                output_tokens: 56,
            },
            AgentEvent::Final {
                text: String::new(),
                turns: 1,
                stop: StopKind::EndTurn,
            },
        ],
    );
    insta::assert_snapshot!("streamed_answer", screen(&mut a));
}

#[test]
fn code_is_highlighted_in_colour_and_not_under_no_color() {
    let mut fake = Fake::default();
    let mut a = app(&fake, Theme { color: true });
    feed(&mut a, &mut fake, &streamed_answer());
    let mut term = terminal(80, 24);
    let text = draw(&mut term, &mut a);
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

    let mut plain = app(&fake, PLAIN);
    feed(&mut plain, &mut fake, &streamed_answer());
    let mut term = terminal(80, 24);
    draw(&mut term, &mut plain);
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
    let mut fake = Fake::default();
    let mut a = app(&fake, PLAIN);
    feed(
        &mut a,
        &mut fake,
        &[
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
        ],
    );
    insta::assert_snapshot!("tool_call", screen(&mut a));
}

#[test]
fn a_diff_approval_and_its_answer() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.txt"),
        "# Notes\nhello world\nsee you\n",
    )
    .unwrap();
    let mut fake = Fake::default();
    let mut a = app(&fake, PLAIN);
    a.handle(
        UiMsg::Agent(AgentEvent::User {
            text: "Greet the agent in notes.txt".into(),
        }),
        &mut fake,
    );
    let (reply, answer) = channel();
    a.handle(
        UiMsg::Ask(Ask {
            question: Question::Tool {
                skill: "core-tools".into(),
                tool: "edit".into(),
                preview: preview(
                    dir.path(),
                    "core-tools",
                    "edit",
                    r#"{"path":"notes.txt","old":"world","new":"agent"}"#,
                ),
            },
            reply,
        }),
        &mut fake,
    );
    insta::assert_snapshot!("diff_approval", screen(&mut a));
    a.handle(key(KeyCode::Char('o')), &mut fake);
    assert_eq!(answer.recv().unwrap(), Answer::Once);
    assert!(a.asks.is_empty());
}

#[test]
fn a_permission_dialog_answered_through_the_approver() {
    let mut fake = Fake::default();
    let mut a = app(&fake, PLAIN);
    let (tx, rx) = channel();
    let approver = TuiApprover::new(tx);
    // The core asks from its own thread and blocks until the user answers.
    let asking = std::thread::spawn(move || {
        approver.ask(&ApprovalRequest {
            skill: "core-tools".into(),
            permission: Permission::FileWrite,
            scope: None,
            detail: "write /project/notes.txt".into(),
        })
    });
    let msg = rx.recv().unwrap();
    a.handle(msg, &mut fake);
    a.handle(key(KeyCode::Right), &mut fake);
    let shown = screen(&mut a);
    insta::assert_snapshot!("permission_dialog", shown);
    a.handle(key(KeyCode::Enter), &mut fake);
    assert_eq!(asking.join().unwrap(), Answer::Always);
}

#[test]
fn the_skill_list() {
    let mut fake = Fake::default();
    let mut a = app(&fake, PLAIN);
    a.editor.insert_str("/skill list");
    a.handle(key(KeyCode::Enter), &mut fake);
    insta::assert_snapshot!("skill_list", screen(&mut a));
    a.handle(key(KeyCode::Esc), &mut fake);
    assert!(a.modal.is_none());
    assert!(
        fake.submitted.is_empty(),
        "commands are not sent to the model"
    );
}

#[test]
fn prompts_attach_files_and_esc_cancels_a_running_turn() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
    let mut fake = Fake::default();
    let mut a = App::new(&fake, dir.path(), PLAIN);
    a.handle(
        UiMsg::Term(Event::Paste("explain @a.rs\nplease".into())),
        &mut fake,
    );
    a.handle(key(KeyCode::Enter), &mut fake);
    assert_eq!(
        fake.submitted,
        vec!["explain @a.rs\nplease\n\n<file path=\"a.rs\">\nfn a() {}\n</file>".to_string()]
    );
    assert!(a.transcript.running);
    a.handle(key(KeyCode::Esc), &mut fake);
    assert_eq!(fake.cancelled, 1);
    a.editor
        .insert_str("/permissions revoke core-tools file:write");
    a.handle(key(KeyCode::Enter), &mut fake);
    assert_eq!(
        fake.revoked,
        vec![("core-tools".to_string(), Some("file:write".to_string()))]
    );
}

#[test]
fn small_and_resized_terminals_draw_without_panicking() {
    let mut fake = Fake::default();
    let mut a = app(&fake, PLAIN);
    feed(&mut a, &mut fake, &streamed_answer());
    let (reply, _answer) = channel();
    a.handle(
        UiMsg::Ask(Ask {
            question: Question::Permission(ApprovalRequest {
                skill: "core-tools".into(),
                permission: Permission::ShellExec,
                scope: Some("git".into()),
                detail: "run git status".into(),
            }),
            reply,
        }),
        &mut fake,
    );
    let mut term = terminal(80, 24);
    for (w, h) in [(80, 24), (20, 6), (120, 40), (40, 12), (1, 1)] {
        term.backend_mut().resize(w, h);
        term.resize(ratatui::layout::Rect::new(0, 0, w, h)).unwrap();
        draw(&mut term, &mut a);
    }
}

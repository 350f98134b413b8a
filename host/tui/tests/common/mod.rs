//! A scripted agent end on the protocol's `Server`: a thread that starts
//! with `SessionConfigured`, then answers each `Op` with the events a script
//! gives for it, and reports every `Op` it received to the test. The
//! interface under test is the real [`App`] on the `Client` side: this is
//! the seam, not a mock of the interface's own code.
#![allow(dead_code)]

use std::path::Path;
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use agent_protocol::{
    AgentEvent, ApprovalKind, ApprovalRequest, Event, NoticeKind, Op, PermissionRow, SkillRow,
    StopKind, channel,
};
use agent_tui::app::App;
use agent_tui::theme::Theme;
use agent_tui::{UiMsg, ui};
use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

pub const PLAIN: Theme = Theme { color: false };
const WAIT: Duration = Duration::from_secs(10);

/// The interface, connected to a scripted agent.
pub struct Harness {
    pub app: App,
    /// The agent's events not yet handled by the interface.
    pub events: Receiver<Event>,
    /// The operations the agent received, in order.
    pub seen: Receiver<Op>,
}

/// What the agent answers to each operation.
pub trait Script: FnMut(&Op) -> Vec<Event> + Send + 'static {}
impl<F: FnMut(&Op) -> Vec<Event> + Send + 'static> Script for F {}

impl Harness {
    /// The interface in `root`; the agent sends `SessionConfigured`, then
    /// `first` unprompted, then answers with `script`.
    pub fn start(root: &Path, theme: Theme, first: Vec<Event>, mut script: impl Script) -> Self {
        let (client, server) = channel();
        let (seen_tx, seen) = mpsc::channel();
        // The thread ends when the interface (the ops' sender) is dropped.
        std::thread::spawn(move || {
            server.emit(Event::SessionConfigured {
                model: "anthropic/test-model".into(),
                context_budget: 100_000,
            });
            for e in first {
                server.emit(e);
            }
            while let Some(op) = server.recv() {
                // The answer is sent before the op is reported: once the test
                // has seen an op, every event it caused is waiting.
                for e in script(&op) {
                    server.emit(e);
                }
                let shutdown = op == Op::Shutdown;
                let _ = seen_tx.send(op);
                if shutdown {
                    server.emit(Event::ShutdownComplete);
                    return;
                }
            }
        });
        let (ops, events) = client.split();
        let mut h = Harness {
            app: App::new(ops, root, theme),
            events,
            seen,
        };
        h.pump(1);
        h
    }

    /// A plain interface in `.` whose agent answers a user turn with `turn`.
    pub fn with_turn(turn: Vec<Event>) -> Self {
        Harness::start(Path::new("."), PLAIN, Vec::new(), agent(turn))
    }

    /// Handles the next `n` events from the agent, waiting for them.
    pub fn pump(&mut self, n: usize) {
        for _ in 0..n {
            let e = self
                .events
                .recv_timeout(WAIT)
                .expect("an event from the agent");
            self.app.handle(UiMsg::Protocol(e));
        }
    }

    /// Handles every event from the agent that is waiting.
    pub fn settle(&mut self) {
        while let Ok(e) = self.events.try_recv() {
            self.app.handle(UiMsg::Protocol(e));
        }
    }

    /// The next operation the agent received.
    pub fn op(&self) -> Op {
        self.seen.recv_timeout(WAIT).expect("an op at the agent")
    }

    /// The interface and its messages as [`agent_tui::run`] has them: the
    /// agent's events forwarded into one `UiMsg` channel by a thread.
    pub fn into_ui(self) -> (App, Receiver<UiMsg>, Receiver<Op>) {
        let (tx, rx) = mpsc::channel();
        agent_tui::term::spawn_events(self.events, tx);
        (self.app, rx, self.seen)
    }

    /// Presses `code`.
    pub fn key(&mut self, code: KeyCode) {
        self.app.handle(key(code));
    }

    /// Types `text` and presses Enter.
    pub fn enter(&mut self, text: &str) {
        self.app.editor.insert_str(text);
        self.key(KeyCode::Enter);
    }

    /// Types `text`, presses Enter, waits until the agent received the
    /// resulting op and handles what it answered; returns the op.
    pub fn round_trip(&mut self, text: &str) -> Op {
        self.enter(text);
        let op = self.op();
        self.settle();
        op
    }
}

pub fn key(code: KeyCode) -> UiMsg {
    UiMsg::Term(TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

pub fn ctrl(c: char) -> UiMsg {
    UiMsg::Term(TermEvent::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::CONTROL,
    )))
}

/// A script: a user turn is answered with `turn`, the commands with a fixed
/// skill list, permission list and so on.
pub fn agent(turn: Vec<Event>) -> impl Script {
    move |op: &Op| match op {
        Op::UserTurn { .. } => turn.clone(),
        Op::ListSkills => vec![Event::Skills(skills())],
        Op::SkillInfo { name } => vec![Event::Error {
            op: "skill_info".into(),
            message: format!("no skill named `{name}`"),
        }],
        Op::SetSkill { name, active } => vec![notice(format!("{name} {active}"))],
        Op::ListPermissions => vec![Event::Permissions(vec![PermissionRow {
            skill: "core-tools".into(),
            permission: "file:write".into(),
            decision: "always".into(),
        }])],
        Op::Revoke { .. } => vec![notice("revoked".into())],
        Op::SetModel { model } => vec![
            Event::ModelChanged {
                model: model.clone(),
            },
            notice(format!("model: {model} from the next prompt on")),
        ],
        Op::ListSessions => vec![Event::Sessions(Vec::new())],
        Op::Resume { id } => vec![Event::Error {
            op: "resume".into(),
            message: format!("no session {id}"),
        }],
        _ => Vec::new(),
    }
}

fn notice(text: String) -> Event {
    Event::Notice {
        kind: NoticeKind::Info,
        text,
    }
}

pub fn skills() -> Vec<SkillRow> {
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

/// Agent events as protocol events.
pub fn agent_events(events: &[AgentEvent]) -> Vec<Event> {
    events.iter().cloned().map(Event::Agent).collect()
}

/// The end of a turn in session `id`, stopped for `stop`. Built from its
/// JSON as it crosses the seam, so that fields the agent adds (optional
/// ones) do not change the tests.
pub fn turn_ended(id: &str, stop: StopKind) -> Event {
    let done = serde_json::json!({ "session_id": id, "stop": stop, "error": null });
    Event::TurnComplete(serde_json::from_value(done).expect("a TurnComplete"))
}

/// The end of a turn in session `id`.
pub fn turn_complete(id: &str) -> Event {
    turn_ended(id, StopKind::EndTurn)
}

/// A permission question.
pub fn permission_request(id: u64, permission: &str, description: &str) -> Event {
    Event::ApprovalRequested(ApprovalRequest {
        id,
        kind: ApprovalKind::Permission {
            skill: "core-tools".into(),
            permission: permission.into(),
            description: description.into(),
            scope: None,
            detail: "write /project/notes.txt".into(),
        },
    })
}

pub fn terminal(w: u16, h: u16) -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(w, h)).expect("terminal")
}

pub fn draw(term: &mut Terminal<TestBackend>, app: &mut App) -> String {
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

pub fn screen(app: &mut App) -> String {
    draw(&mut terminal(80, 24), app)
}

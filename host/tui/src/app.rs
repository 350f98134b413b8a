//! The interface's state and what each key and message does to it. The
//! agent is at the other end of a protocol connection: the interface sends
//! [`Op`]s and folds the [`agent_protocol::Event`]s that come back in
//! ([`App::event`]), so the whole interface runs in tests against a
//! scripted agent end and ratatui's `TestBackend`.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;

use agent_protocol::{AgentEvent, ApprovalAnswer, ApprovalRequest, Op, SessionRow, SkillRow};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::text::Line;

use crate::UiMsg;
use crate::input::Editor;
use crate::state::{NoticeKind, Transcript};
use crate::theme::Theme;

/// A window over the transcript.
#[derive(Debug, Clone)]
pub enum Modal {
    /// Text to read (help, skill info, lists).
    Text {
        /// The title.
        title: String,
        /// The lines.
        lines: Vec<String>,
        /// Lines scrolled.
        scroll: usize,
    },
    /// Pick a session to resume.
    Sessions {
        /// The sessions.
        rows: Vec<SessionRow>,
        /// The highlighted one.
        selected: usize,
    },
}

/// The help text of `/help`.
pub const HELP: &str = "\
Enter send · Alt-Enter or Ctrl-J new line · ↑/↓ history · PgUp/PgDn scroll
Esc cancel the running turn · Ctrl-C cancel, or quit when idle · Ctrl-D quit
@path attach a file's content to the prompt

/skill list                 loaded skills and their state
/skill info NAME            a skill's manifest: permissions, tools, triggers
/skill activate NAME        keep a skill active for the next turns
/skill deactivate NAME      leave a skill out of the next turns
/permissions                stored permission decisions
/permissions revoke SKILL [PERMISSION]
/model [NAME]               show or switch the model
/clear                      start a new conversation
/compact                    summarise the conversation to free context
/resume [ID]                pick a session to continue
/NAME [ARGS]                use the SKILL.md skill NAME for this message
/help                       this help
/quit                       leave";

/// The interface's state.
pub struct App {
    /// Styles.
    pub theme: Theme,
    /// The transcript.
    pub transcript: Transcript,
    /// The prompt editor.
    pub editor: Editor,
    /// Questions waiting for the user, oldest first (the first is shown).
    pub asks: VecDeque<ApprovalRequest>,
    /// The highlighted answer of the shown question: 0 once, 1 always, 2 deny.
    pub choice: usize,
    /// A window over the transcript.
    pub modal: Option<Modal>,
    /// Lines scrolled up from the bottom of the transcript.
    pub scroll: usize,
    /// The model, for the status line (from `SessionConfigured`, then
    /// `ModelChanged`).
    pub model: String,
    /// The context budget, for the status line.
    pub budget: u64,
    /// Whether to leave.
    pub quit: bool,
    /// The project root (`@path` attachments).
    pub project_root: PathBuf,
    /// The last recorded session seen (a completed turn's, or a resumed
    /// one's): the one to continue with `agent --resume`.
    pub session: Option<String>,
    /// Whether the agent's end has shut down (or gone).
    pub ended: bool,
    /// Where operations go.
    ops: Sender<Op>,
    /// Rendered cells, by index: (text hash, width, lines).
    pub(crate) cache: HashMap<usize, (u64, u16, Vec<Line<'static>>)>,
}

/// The most a single `@path` attachment may add.
pub const MAX_ATTACHMENT: usize = 256 * 1024;

impl App {
    /// A fresh interface in `project_root` that sends its operations to
    /// `ops`. The model and the budget arrive with the session's first event.
    pub fn new(ops: Sender<Op>, project_root: &Path, theme: Theme) -> App {
        App {
            theme,
            transcript: Transcript::default(),
            editor: Editor::default(),
            asks: VecDeque::new(),
            choice: 0,
            modal: None,
            scroll: 0,
            model: String::new(),
            budget: 0,
            quit: false,
            project_root: project_root.to_path_buf(),
            session: None,
            ended: false,
            ops,
            cache: HashMap::new(),
        }
    }

    /// Handles one message.
    pub fn handle(&mut self, msg: UiMsg) {
        match msg {
            UiMsg::Protocol(e) => self.event(e),
            UiMsg::Disconnected if self.ended => {}
            UiMsg::Disconnected => {
                self.ended = true;
                self.transcript.running = false;
                self.transcript.notice(
                    NoticeKind::Error,
                    "the agent stopped; press Ctrl-D to leave".into(),
                );
            }
            UiMsg::Term(Event::Key(k)) if k.kind != KeyEventKind::Release => self.key(k),
            UiMsg::Term(Event::Paste(text)) => {
                if self.asks.is_empty() && self.modal.is_none() {
                    self.editor.insert_str(&text);
                }
            }
            UiMsg::Term(_) => {}
        }
    }

    /// Sends `op` to the agent; says so when the agent is gone.
    pub(crate) fn send(&mut self, op: Op) {
        if self.ops.send(op).is_err() && !self.ended {
            self.ended = true;
            self.transcript.running = false;
            self.transcript.notice(
                NoticeKind::Error,
                "the agent stopped; press Ctrl-D to leave".into(),
            );
        }
    }

    fn answer(&mut self, answer: ApprovalAnswer) {
        if let Some(req) = self.asks.pop_front() {
            self.send(Op::Approve { id: req.id, answer });
        }
        self.choice = 0;
    }

    /// Refuses every question still waiting (the interface is closing).
    pub fn deny_pending(&mut self) {
        while !self.asks.is_empty() {
            self.answer(ApprovalAnswer::Deny);
        }
    }

    fn key(&mut self, k: KeyEvent) {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if !self.asks.is_empty() {
            match k.code {
                KeyCode::Left | KeyCode::BackTab => self.choice = (self.choice + 2) % 3,
                KeyCode::Right | KeyCode::Tab => self.choice = (self.choice + 1) % 3,
                KeyCode::Char('o' | 'y' | '1') => self.answer(ApprovalAnswer::Once),
                KeyCode::Char('a' | '2') => self.answer(ApprovalAnswer::Always),
                KeyCode::Char('d' | 'n' | '3') | KeyCode::Esc => {
                    self.answer(ApprovalAnswer::Deny);
                }
                KeyCode::Char('c') if ctrl => {
                    self.answer(ApprovalAnswer::Deny);
                    self.send(Op::Interrupt);
                }
                KeyCode::Enter => {
                    let a = [
                        ApprovalAnswer::Once,
                        ApprovalAnswer::Always,
                        ApprovalAnswer::Deny,
                    ][self.choice.min(2)];
                    self.answer(a);
                }
                _ => {}
            }
            return;
        }
        if let Some(modal) = &mut self.modal {
            match modal {
                Modal::Text { lines, scroll, .. } => match k.code {
                    KeyCode::Up => *scroll = scroll.saturating_sub(1),
                    KeyCode::Down => *scroll = (*scroll + 1).min(lines.len().saturating_sub(1)),
                    KeyCode::PageUp => *scroll = scroll.saturating_sub(10),
                    KeyCode::PageDown => {
                        *scroll = (*scroll + 10).min(lines.len().saturating_sub(1))
                    }
                    _ => self.modal = None,
                },
                Modal::Sessions { rows, selected } => match k.code {
                    KeyCode::Up => *selected = selected.saturating_sub(1),
                    KeyCode::Down => *selected = (*selected + 1).min(rows.len().saturating_sub(1)),
                    KeyCode::Enter => {
                        let id = rows.get(*selected).map(|r| r.id.clone());
                        self.modal = None;
                        if let Some(id) = id {
                            self.send(Op::Resume { id });
                        }
                    }
                    _ => self.modal = None,
                },
            }
            return;
        }
        match k.code {
            KeyCode::Char('c') if ctrl => {
                if self.transcript.running {
                    self.send(Op::Interrupt);
                } else if !self.editor.is_empty() {
                    self.editor.take();
                } else {
                    self.quit = true;
                }
            }
            KeyCode::Char('d') if ctrl && self.editor.is_empty() => self.quit = true,
            KeyCode::Esc if self.transcript.running => {
                self.send(Op::Interrupt);
                self.transcript
                    .notice(NoticeKind::Info, "cancelling…".into());
            }
            KeyCode::Char('j') if ctrl => self.editor.newline(),
            KeyCode::Enter
                if k.modifiers
                    .intersects(KeyModifiers::ALT | KeyModifiers::SHIFT) =>
            {
                self.editor.newline();
            }
            KeyCode::Enter => self.submit(),
            KeyCode::Char(c) if !ctrl => self.editor.insert(c),
            KeyCode::Backspace => self.editor.backspace(),
            KeyCode::Delete => self.editor.delete(),
            KeyCode::Left => self.editor.left(),
            KeyCode::Right => self.editor.right(),
            KeyCode::Home => self.editor.home(),
            KeyCode::End => self.editor.end(),
            KeyCode::Up => self.editor.up(),
            KeyCode::Down => self.editor.down(),
            KeyCode::PageUp => self.scroll += 10,
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(10),
            _ => {}
        }
    }

    fn submit(&mut self) {
        if self.editor.text().trim().is_empty() {
            return;
        }
        if self.editor.text().trim_start().starts_with('/') {
            let line = self.editor.take();
            self.command(line.trim());
            return;
        }
        if self.transcript.running {
            self.transcript.notice(
                NoticeKind::Info,
                "a turn is running: wait for it, or press Esc to cancel it".into(),
            );
            return;
        }
        let text = self.editor.take();
        // The files stay inline in the message: the model receives the same
        // bytes as before, and the recorded `user` event carries them, which
        // is how the transcript (and a resumed session) shows "@ path attached".
        let prompt = self.attach(&text);
        self.transcript.running = true;
        self.scroll = 0;
        self.send(Op::UserTurn {
            text: prompt,
            attachments: Vec::new(),
        });
    }

    /// Appends the content of each `@path` naming a file of the project.
    pub fn attach(&mut self, text: &str) -> String {
        let mut prompt = text.to_string();
        let mut seen = Vec::new();
        for word in text.split_whitespace() {
            let Some(path) = word.strip_prefix('@') else {
                continue;
            };
            let path = path.trim_end_matches([',', '.', ';', ':', ')', '?', '!']);
            if path.is_empty() || seen.contains(&path) {
                continue;
            }
            let file = self.project_root.join(path);
            if !file.is_file() {
                continue;
            }
            seen.push(path);
            match std::fs::read(&file) {
                Ok(bytes) if bytes.len() <= MAX_ATTACHMENT => {
                    let content = String::from_utf8_lossy(&bytes);
                    prompt.push_str(&format!(
                        "\n\n<file path=\"{path}\">\n{}{}</file>",
                        content,
                        if content.ends_with('\n') { "" } else { "\n" }
                    ));
                }
                Ok(bytes) => self.transcript.notice(
                    NoticeKind::Warning,
                    format!(
                        "@{path} not attached: {} bytes (the limit is {MAX_ATTACHMENT})",
                        bytes.len()
                    ),
                ),
                Err(e) => self
                    .transcript
                    .notice(NoticeKind::Warning, format!("@{path} not attached: {e}")),
            }
        }
        prompt
    }

    pub(crate) fn text_modal(&mut self, title: &str, text: &str) {
        self.modal = Some(Modal::Text {
            title: title.to_string(),
            lines: text.lines().map(str::to_string).collect(),
            scroll: 0,
        });
    }

    /// Replaces the transcript with a resumed session's events.
    pub(crate) fn resumed(&mut self, id: &str, events: &[AgentEvent]) {
        self.transcript = Transcript::default();
        self.cache.clear();
        for e in events {
            self.transcript.apply(e);
        }
        self.transcript.running = false;
        self.transcript
            .notice(NoticeKind::Info, format!("resumed session {id}"));
        self.session = Some(id.to_string());
    }

    /// Runs a slash command: what the interface knows itself is answered
    /// here, the rest is an [`Op`] whose answer arrives as an event.
    pub fn command(&mut self, line: &str) {
        let words: Vec<&str> = line.split_whitespace().collect();
        let busy = |app: &mut App| {
            app.transcript.notice(
                NoticeKind::Info,
                format!("{} is not available while a turn is running", words[0]),
            );
        };
        match words.as_slice() {
            ["/quit" | "/exit" | "/q"] => self.quit = true,
            ["/help" | "/?"] => self.text_modal("Help", HELP),
            ["/skill" | "/skills"] | ["/skill" | "/skills", "list"] => self.send(Op::ListSkills),
            ["/skill", "info", name] => self.send(Op::SkillInfo {
                name: name.to_string(),
            }),
            ["/skill", verb @ ("activate" | "deactivate"), name] => self.send(Op::SetSkill {
                name: name.to_string(),
                active: *verb == "activate",
            }),
            ["/permissions"] | ["/permissions", "view" | "list"] => {
                self.send(Op::ListPermissions);
            }
            ["/permissions", "revoke", skill, rest @ ..] if rest.len() <= 1 => {
                self.send(Op::Revoke {
                    skill: skill.to_string(),
                    permission: rest.first().map(|p| p.to_string()),
                });
            }
            ["/model"] => {
                let m = format!("model: {}", self.model);
                self.transcript.notice(NoticeKind::Info, m);
            }
            ["/model", name] => self.send(Op::SetModel {
                model: name.to_string(),
            }),
            ["/clear"] if self.transcript.running => busy(self),
            ["/clear"] => {
                self.send(Op::NewConversation);
                self.transcript = Transcript::default();
                self.cache.clear();
                self.scroll = 0;
            }
            ["/compact"] if self.transcript.running => busy(self),
            ["/compact"] => {
                self.transcript.running = true;
                self.send(Op::Compact);
            }
            ["/resume", ..] if self.transcript.running => busy(self),
            ["/resume", id] => self.send(Op::Resume { id: id.to_string() }),
            ["/resume"] => self.send(Op::ListSessions),
            // `/name args`: an instruction skill invoked by the user. The message goes to the
            // session as typed; the session loads the skill's body into that turn (or says
            // there is no such skill).
            [first, ..] if is_skill_command(first) && self.transcript.running => busy(self),
            [first, ..] if is_skill_command(first) => {
                self.transcript.running = true;
                self.scroll = 0;
                self.send(Op::UserTurn {
                    text: line.to_string(),
                    attachments: Vec::new(),
                });
            }
            _ => self.transcript.notice(
                NoticeKind::Error,
                format!("unknown command `{line}` (/help lists them)"),
            ),
        }
    }
}

/// Whether `/word` can name an instruction skill: lowercase letters, digits and hyphens.
fn is_skill_command(word: &str) -> bool {
    word.strip_prefix('/').is_some_and(|n| {
        !n.is_empty()
            && !n.starts_with('-')
            && n.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    })
}

/// The skill list as a table.
pub fn skill_table(rows: &[SkillRow]) -> String {
    let mut text = format!(
        "{:<18} {:<8} {:<8} {:<8} description\n",
        "name", "version", "source", "state"
    );
    for r in rows {
        text.push_str(&format!(
            "{:<18} {:<8} {:<8} {:<8} {}\n",
            r.name, r.version, r.source, r.state, r.description
        ));
    }
    text
}

/// The stored permission decisions as a table (or a sentence when there
/// are none).
pub fn permission_table(rows: &[agent_protocol::PermissionRow]) -> String {
    if rows.is_empty() {
        return "No stored decisions: skills are asked on first use.".into();
    }
    let mut text = format!("{:<24} {:<18} decision\n", "skill", "permission");
    for r in rows {
        text.push_str(&format!(
            "{:<24} {:<18} {}\n",
            r.skill, r.permission, r.decision
        ));
    }
    text.push_str("\n/permissions revoke SKILL [PERMISSION] forgets a decision.");
    text
}

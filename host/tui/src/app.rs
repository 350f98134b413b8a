//! The interface's state and what each key and message does to it. The
//! agent side is behind [`Backend`], so the whole interface runs in tests
//! with a fake backend and ratatui's `TestBackend`.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

use agent_core::AgentEvent;
use agent_policy::Answer;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::text::Line;

use crate::UiMsg;
use crate::approval::Ask;
use crate::input::Editor;
use crate::state::{NoticeKind, Transcript};
use crate::theme::Theme;

/// A skill, for `/skill list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRow {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Where it comes from (`builtin`, `user`, `project`...).
    pub source: String,
    /// `active`, `inactive`, `on` (activated with /skill activate), `off`.
    pub state: String,
    /// Its description.
    pub description: String,
}

/// A stored permission decision, for `/permissions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionRow {
    /// The skill.
    pub skill: String,
    /// The permission.
    pub permission: String,
    /// `always` or `deny`.
    pub decision: String,
}

/// A recorded session, for `/resume`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// Its id.
    pub id: String,
    /// Its title (the first message).
    pub title: String,
    /// When it was last used.
    pub updated: String,
    /// Turns taken.
    pub turns: u32,
}

/// The agent side of the interface. Turns run in the background: their
/// events, questions and end come back as [`UiMsg`]s.
pub trait Backend {
    /// Starts a turn with `prompt`.
    fn submit(&mut self, prompt: String);
    /// Cancels the running turn, if any.
    fn cancel(&mut self);
    /// The model in use.
    fn model(&self) -> String;
    /// The context budget, in tokens.
    fn context_budget(&self) -> u64;
    /// Every loaded skill.
    fn skills(&mut self) -> Vec<SkillRow>;
    /// A skill's details, as lines of text.
    ///
    /// # Errors
    /// When there is no such skill.
    fn skill_info(&mut self, name: &str) -> Result<String, String>;
    /// Activates (`true`) or deactivates a skill for the following turns.
    ///
    /// # Errors
    /// When there is no such skill.
    fn set_skill(&mut self, name: &str, active: bool) -> Result<String, String>;
    /// The stored permission decisions.
    ///
    /// # Errors
    /// When the store cannot be read.
    fn permissions(&mut self) -> Result<Vec<PermissionRow>, String>;
    /// Revokes stored decisions of `skill` (for `permission`, or all).
    ///
    /// # Errors
    /// A bad permission name, or a store failure.
    fn revoke(&mut self, skill: &str, permission: Option<&str>) -> Result<String, String>;
    /// Switches the model for the following turns.
    ///
    /// # Errors
    /// When the provider cannot be built for it.
    fn set_model(&mut self, model: &str) -> Result<String, String>;
    /// Starts a new conversation (a new session on the next prompt).
    fn clear(&mut self);
    /// Summarises the conversation so far to make room (in the background;
    /// reports with a [`UiMsg::Notice`] and [`UiMsg::TurnDone`]).
    fn compact(&mut self);
    /// The sessions of this project, newest first.
    ///
    /// # Errors
    /// When the store cannot be read.
    fn sessions(&mut self) -> Result<Vec<SessionRow>, String>;
    /// Continues session `id`; returns its events to show.
    ///
    /// # Errors
    /// No such session, or a store failure.
    fn resume(&mut self, id: &str) -> Result<Vec<AgentEvent>, String>;
}

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
    pub asks: VecDeque<Ask>,
    /// The highlighted answer of the shown question: 0 once, 1 always, 2 deny.
    pub choice: usize,
    /// A window over the transcript.
    pub modal: Option<Modal>,
    /// Lines scrolled up from the bottom of the transcript.
    pub scroll: usize,
    /// The model, for the status line.
    pub model: String,
    /// The context budget, for the status line.
    pub budget: u64,
    /// Whether to leave.
    pub quit: bool,
    /// The project root (`@path` attachments).
    pub project_root: PathBuf,
    /// Rendered cells, by index: (text hash, width, lines).
    pub(crate) cache: HashMap<usize, (u64, u16, Vec<Line<'static>>)>,
}

/// The most a single `@path` attachment may add.
pub const MAX_ATTACHMENT: usize = 256 * 1024;

impl App {
    /// A fresh interface for `backend`'s model in `project_root`.
    pub fn new(backend: &dyn Backend, project_root: &Path, theme: Theme) -> App {
        App {
            theme,
            transcript: Transcript::default(),
            editor: Editor::default(),
            asks: VecDeque::new(),
            choice: 0,
            modal: None,
            scroll: 0,
            model: backend.model(),
            budget: backend.context_budget(),
            quit: false,
            project_root: project_root.to_path_buf(),
            cache: HashMap::new(),
        }
    }

    /// Handles one message.
    pub fn handle(&mut self, msg: UiMsg, backend: &mut dyn Backend) {
        match msg {
            UiMsg::Agent(e) => {
                self.transcript.apply(&e);
                if matches!(e, AgentEvent::User { .. }) {
                    self.scroll = 0;
                }
            }
            UiMsg::Ask(a) => {
                if self.asks.is_empty() {
                    self.choice = 0;
                }
                self.asks.push_back(a);
            }
            UiMsg::TurnDone(result) => {
                self.transcript.running = false;
                if let Err(e) = result {
                    self.transcript.notice(NoticeKind::Error, e);
                }
            }
            UiMsg::Notice(kind, text) => self.transcript.notice(kind, text),
            UiMsg::Term(Event::Key(k)) if k.kind != KeyEventKind::Release => self.key(k, backend),
            UiMsg::Term(Event::Paste(text)) => {
                if self.asks.is_empty() && self.modal.is_none() {
                    self.editor.insert_str(&text);
                }
            }
            UiMsg::Term(_) => {}
        }
    }

    fn answer(&mut self, answer: Answer) {
        if let Some(a) = self.asks.pop_front() {
            let _ = a.reply.send(answer);
        }
        self.choice = 0;
    }

    fn key(&mut self, k: KeyEvent, backend: &mut dyn Backend) {
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        if !self.asks.is_empty() {
            match k.code {
                KeyCode::Left | KeyCode::BackTab => self.choice = (self.choice + 2) % 3,
                KeyCode::Right | KeyCode::Tab => self.choice = (self.choice + 1) % 3,
                KeyCode::Char('o' | 'y' | '1') => self.answer(Answer::Once),
                KeyCode::Char('a' | '2') => self.answer(Answer::Always),
                KeyCode::Char('d' | 'n' | '3') | KeyCode::Esc => self.answer(Answer::Deny),
                KeyCode::Char('c') if ctrl => {
                    self.answer(Answer::Deny);
                    backend.cancel();
                }
                KeyCode::Enter => {
                    let a = [Answer::Once, Answer::Always, Answer::Deny][self.choice.min(2)];
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
                            self.resume(&id, backend);
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
                    backend.cancel();
                } else if !self.editor.is_empty() {
                    self.editor.take();
                } else {
                    self.quit = true;
                }
            }
            KeyCode::Char('d') if ctrl && self.editor.is_empty() => self.quit = true,
            KeyCode::Esc if self.transcript.running => {
                backend.cancel();
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
            KeyCode::Enter => self.submit(backend),
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

    fn submit(&mut self, backend: &mut dyn Backend) {
        if self.editor.text().trim().is_empty() {
            return;
        }
        if self.editor.text().trim_start().starts_with('/') {
            let line = self.editor.take();
            self.command(line.trim(), backend);
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
        let prompt = self.attach(&text);
        self.transcript.running = true;
        self.scroll = 0;
        backend.submit(prompt);
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

    fn text_modal(&mut self, title: &str, text: &str) {
        self.modal = Some(Modal::Text {
            title: title.to_string(),
            lines: text.lines().map(str::to_string).collect(),
            scroll: 0,
        });
    }

    fn resume(&mut self, id: &str, backend: &mut dyn Backend) {
        match backend.resume(id) {
            Ok(events) => {
                self.transcript = Transcript::default();
                self.cache.clear();
                for e in &events {
                    self.transcript.apply(e);
                }
                self.transcript.running = false;
                self.transcript
                    .notice(NoticeKind::Info, format!("resumed session {id}"));
            }
            Err(e) => self.transcript.notice(NoticeKind::Error, e),
        }
    }

    /// Runs a slash command.
    pub fn command(&mut self, line: &str, backend: &mut dyn Backend) {
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
            ["/skill" | "/skills"] | ["/skill" | "/skills", "list"] => {
                let rows = backend.skills();
                self.text_modal("Skills", &skill_table(&rows));
            }
            ["/skill", "info", name] => match backend.skill_info(name) {
                Ok(text) => self.text_modal(&format!("Skill {name}"), &text),
                Err(e) => self.transcript.notice(NoticeKind::Error, e),
            },
            ["/skill", verb @ ("activate" | "deactivate"), name] => {
                match backend.set_skill(name, *verb == "activate") {
                    Ok(m) => self.transcript.notice(NoticeKind::Info, m),
                    Err(e) => self.transcript.notice(NoticeKind::Error, e),
                }
            }
            ["/permissions"] | ["/permissions", "view" | "list"] => match backend.permissions() {
                Ok(rows) if rows.is_empty() => self.text_modal(
                    "Permissions",
                    "No stored decisions: skills are asked on first use.",
                ),
                Ok(rows) => {
                    let mut text = format!("{:<24} {:<18} decision\n", "skill", "permission");
                    for r in rows {
                        text.push_str(&format!(
                            "{:<24} {:<18} {}\n",
                            r.skill, r.permission, r.decision
                        ));
                    }
                    text.push_str("\n/permissions revoke SKILL [PERMISSION] forgets a decision.");
                    self.text_modal("Permissions", &text);
                }
                Err(e) => self.transcript.notice(NoticeKind::Error, e),
            },
            ["/permissions", "revoke", skill, rest @ ..] if rest.len() <= 1 => {
                match backend.revoke(skill, rest.first().copied()) {
                    Ok(m) => self.transcript.notice(NoticeKind::Info, m),
                    Err(e) => self.transcript.notice(NoticeKind::Error, e),
                }
            }
            ["/model"] => {
                let m = format!("model: {}", self.model);
                self.transcript.notice(NoticeKind::Info, m);
            }
            ["/model", name] => match backend.set_model(name) {
                Ok(m) => {
                    self.model = backend.model();
                    self.transcript.notice(NoticeKind::Info, m);
                }
                Err(e) => self.transcript.notice(NoticeKind::Error, e),
            },
            ["/clear"] if self.transcript.running => busy(self),
            ["/clear"] => {
                backend.clear();
                self.transcript = Transcript::default();
                self.cache.clear();
                self.scroll = 0;
            }
            ["/compact"] if self.transcript.running => busy(self),
            ["/compact"] => {
                self.transcript.running = true;
                backend.compact();
            }
            ["/resume", ..] if self.transcript.running => busy(self),
            ["/resume", id] => self.resume(id, backend),
            ["/resume"] => match backend.sessions() {
                Ok(rows) if rows.is_empty() => self.transcript.notice(
                    NoticeKind::Info,
                    "no earlier session in this project".into(),
                ),
                Ok(rows) => self.modal = Some(Modal::Sessions { rows, selected: 0 }),
                Err(e) => self.transcript.notice(NoticeKind::Error, e),
            },
            _ => self.transcript.notice(
                NoticeKind::Error,
                format!("unknown command `{line}` (/help lists them)"),
            ),
        }
    }
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

//! What each event from the agent does to the interface.

use agent_protocol::{AgentEvent, Event, NoticeKind as Kind};

use crate::app::{App, Modal, permission_table, skill_table};
use crate::state::NoticeKind;

impl App {
    /// Folds one event from the agent in.
    pub fn event(&mut self, event: Event) {
        match event {
            Event::SessionConfigured {
                model,
                context_budget,
            } => {
                self.model = model;
                self.budget = context_budget;
            }
            Event::Agent(e) => {
                self.transcript.apply(&e);
                if matches!(e, AgentEvent::User { .. }) {
                    self.scroll = 0;
                }
            }
            Event::ApprovalRequested(req) => {
                if self.asks.is_empty() {
                    self.choice = 0;
                }
                self.asks.push_back(req);
            }
            Event::TurnComplete(done) => {
                self.transcript.running = false;
                if !done.session_id.is_empty() {
                    self.session = Some(done.session_id);
                }
                if let Some(e) = done.error {
                    self.transcript.notice(NoticeKind::Error, e);
                }
            }
            Event::Notice { kind, text } => {
                let kind = match kind {
                    Kind::Info => NoticeKind::Info,
                    Kind::Warning => NoticeKind::Warning,
                };
                self.transcript.notice(kind, text);
            }
            Event::Error { op, message } => {
                // A turn or a compaction that could not start has ended.
                if op == "user_turn" || op == "compact" {
                    self.transcript.running = false;
                }
                self.transcript.notice(NoticeKind::Error, message);
            }
            Event::Skills(rows) => self.text_modal("Skills", &skill_table(&rows)),
            Event::SkillInfo { name, text } => self.text_modal(&format!("Skill {name}"), &text),
            Event::Permissions(rows) => self.text_modal("Permissions", &permission_table(&rows)),
            Event::Sessions(rows) if rows.is_empty() => self.transcript.notice(
                NoticeKind::Info,
                "no earlier session in this project".into(),
            ),
            Event::Sessions(rows) => self.modal = Some(Modal::Sessions { rows, selected: 0 }),
            Event::Resumed { id, events } => self.resumed(&id, &events),
            Event::ModelChanged { model } => self.model = model,
            Event::ShutdownComplete => {
                self.ended = true;
                self.quit = true;
            }
            // A newer agent's event this interface does not know: nothing to show.
            _ => {}
        }
    }
}

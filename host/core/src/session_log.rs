//! The session log: a run's events persisted in the store on a thread of
//! their own, and the session record updated when the run ends.

use std::sync::Arc;

use agent_policy::{Denial, Grants};
use agent_store::{SessionStatus, Store};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::{AgentEvent, DenialRecord, RunOutcome};

/// Where events are persisted: a session of the store.
#[derive(Clone)]
pub struct SessionLog {
    /// The store.
    pub store: Arc<Store>,
    /// The session id.
    pub id: String,
}

/// Persists a run's events on a thread of its own, so that the loop never
/// waits for the disk: whatever has queued up since the last write goes
/// into the next transaction (group commit). Each event is on disk a few
/// milliseconds after it happened; [`SessionWriter::finish`] waits for the
/// rest.
struct SessionWriter {
    queue: Option<std::sync::mpsc::Sender<Value>>,
    thread: Option<std::thread::JoinHandle<Vec<String>>>,
}

impl SessionWriter {
    fn start(log: SessionLog) -> SessionWriter {
        let (tx, rx) = std::sync::mpsc::channel::<Value>();
        let thread = std::thread::Builder::new()
            .name("agent-session-log".into())
            .spawn(move || {
                let mut errors = Vec::new();
                while let Ok(first) = rx.recv() {
                    let mut batch = vec![first];
                    batch.extend(rx.try_iter());
                    if let Err(e) = log.store.append_events(&log.id, &batch)
                        && errors.len() < 5
                    {
                        errors.push(format!("could not write the session log: {e}"));
                    }
                }
                errors
            });
        match thread {
            Ok(t) => SessionWriter {
                queue: Some(tx),
                thread: Some(t),
            },
            Err(_) => SessionWriter {
                queue: None,
                thread: None,
            },
        }
    }

    fn send(&self, event: &AgentEvent) -> Result<(), String> {
        let queue = self
            .queue
            .as_ref()
            .ok_or("the session log writer could not be started")?;
        let v = serde_json::to_value(event).map_err(|e| e.to_string())?;
        queue
            .send(v)
            .map_err(|_| "the session log writer stopped".to_string())
    }

    /// Writes what is queued and stops; returns the write errors.
    fn finish(&mut self) -> Vec<String> {
        self.queue.take();
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| vec!["the session log writer crashed".to_string()]),
            None => Vec::new(),
        }
    }
}

impl Drop for SessionWriter {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Where a run's events go: the caller's sink and, when given, the session
/// log; with the problems that did not stop the run.
pub(crate) struct Emitter<'s> {
    writer: Option<SessionWriter>,
    sink: &'s mut (dyn FnMut(&AgentEvent) + Send),
    pub(crate) warnings: Vec<String>,
    /// The grants' refusals as they happen (see [`Emitter::watch_denials`]).
    denials: Option<UnboundedReceiver<Denial>>,
    /// The refusals reported so far.
    pub(crate) denied: Vec<DenialRecord>,
}

impl<'s> Emitter<'s> {
    /// Events to `sink` and, when given, to `session`'s log.
    pub(crate) fn new(
        session: Option<SessionLog>,
        sink: &'s mut (dyn FnMut(&AgentEvent) + Send),
    ) -> Emitter<'s> {
        Emitter {
            writer: session.map(SessionWriter::start),
            sink,
            warnings: Vec::new(),
            denials: None,
            denied: Vec::new(),
        }
    }

    /// Reports the refusals of `grants` from now on, each as an
    /// [`AgentEvent::Denial`]: at once while a tool call is waited for
    /// ([`Emitter::next_denial`]), else before the next event.
    pub(crate) fn watch_denials(&mut self, grants: &Grants) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        // Once this emitter is gone, the next refusal ends the listening.
        grants.on_denial(move |d| tx.send(d.clone()).is_ok());
        self.denials = Some(rx);
    }

    /// The next refusal, when it happens (never, unless watched).
    pub(crate) async fn next_denial(&mut self) -> Option<Denial> {
        match &mut self.denials {
            Some(rx) => rx.recv().await,
            None => std::future::pending().await,
        }
    }

    /// Reports refusal `d` and records it for the run's outcome.
    pub(crate) fn denial(&mut self, d: Denial) {
        let rec = DenialRecord {
            skill: d.skill,
            permission: d.permission.to_string(),
            reason: d.reason,
        };
        self.send(AgentEvent::Denial {
            skill: rec.skill.clone(),
            permission: rec.permission.clone(),
            reason: rec.reason.clone(),
        });
        self.denied.push(rec);
    }

    /// Reports `event`, after any refusal that happened before it.
    pub(crate) fn emit(&mut self, event: AgentEvent) {
        while let Some(d) = self.denials.as_mut().and_then(|rx| rx.try_recv().ok()) {
            self.denial(d);
        }
        self.send(event);
    }

    fn send(&mut self, event: AgentEvent) {
        if let Some(w) = &self.writer
            && let Err(e) = w.send(&event)
            && self.warnings.len() < 5
        {
            self.warnings
                .push(format!("could not write the session log: {e}"));
        }
        (self.sink)(&event);
    }

    /// Waits until every event emitted so far is on disk.
    pub(crate) fn flush(&mut self) {
        if let Some(mut w) = self.writer.take() {
            let errors = w.finish();
            self.warnings.extend(errors);
        }
    }

    /// A problem that does not stop the run: an event and a warning.
    pub(crate) fn warn(&mut self, message: String) {
        self.emit(AgentEvent::Warning {
            message: message.clone(),
        });
        if self.warnings.len() < 50 {
            self.warnings.push(message);
        }
    }
}

/// Adds the run's turns and usage to the session record and sets its
/// status.
pub(crate) fn finish_session(
    session: Option<&SessionLog>,
    out: &RunOutcome,
    status: SessionStatus,
    em: &mut Emitter<'_>,
) {
    let Some(s) = session else { return };
    let updated = s.store.update_session(&s.id, |m| {
        m.turns = m.turns.saturating_add(out.turns);
        m.usage.input_tokens += out.input_tokens;
        m.usage.output_tokens += out.output_tokens;
        m.status = status;
    });
    if let Err(e) = updated {
        em.warnings
            .push(format!("could not update the session record: {e}"));
    }
}

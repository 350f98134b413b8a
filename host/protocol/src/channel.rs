//! The two ends of a session's connection, in one process.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Duration;

use crate::{Event, Op};

/// The frontend's end: sends operations, receives events.
#[derive(Debug)]
pub struct Client {
    ops: Sender<Op>,
    events: Receiver<Event>,
}

/// The agent's end: receives operations, sends events.
#[derive(Debug)]
pub struct Server {
    ops: Receiver<Op>,
    events: Sender<Event>,
}

/// A connected pair.
pub fn channel() -> (Client, Server) {
    let (op_tx, op_rx) = mpsc::channel();
    let (ev_tx, ev_rx) = mpsc::channel();
    (
        Client {
            ops: op_tx,
            events: ev_rx,
        },
        Server {
            ops: op_rx,
            events: ev_tx,
        },
    )
}

impl Client {
    /// Sends `op`; `false` when the session has ended.
    pub fn send(&self, op: Op) -> bool {
        self.ops.send(op).is_ok()
    }

    /// A sender of operations that can move to another thread.
    pub fn sender(&self) -> Sender<Op> {
        self.ops.clone()
    }

    /// The next event, waiting for it; `None` when the session has ended.
    pub fn recv(&self) -> Option<Event> {
        self.events.recv().ok()
    }

    /// The next event if one is waiting.
    ///
    /// # Errors
    /// [`TryRecvError::Empty`] when none waits, `Disconnected` when the
    /// session has ended.
    pub fn try_recv(&self) -> Result<Event, TryRecvError> {
        self.events.try_recv()
    }

    /// The next event, waiting at most `timeout`.
    ///
    /// # Errors
    /// `Timeout`, or `Disconnected` when the session has ended.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Event, RecvTimeoutError> {
        self.events.recv_timeout(timeout)
    }

    /// Splits into the sender and the receiver, e.g. to forward events
    /// into a frontend's own loop from another thread.
    pub fn split(self) -> (Sender<Op>, Receiver<Event>) {
        (self.ops, self.events)
    }
}

impl Server {
    /// Sends `event`; `false` when the frontend has gone.
    pub fn emit(&self, event: Event) -> bool {
        self.events.send(event).is_ok()
    }

    /// A sender of events that can move to another thread (a running turn).
    pub fn emitter(&self) -> Sender<Event> {
        self.events.clone()
    }

    /// The next operation, waiting for it; `None` when the frontend has gone.
    pub fn recv(&self) -> Option<Op> {
        self.ops.recv().ok()
    }

    /// Splits into the receiver and the sender.
    pub fn split(self) -> (Receiver<Op>, Sender<Event>) {
        (self.ops, self.events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ApprovalAnswer, ApprovalKind, ApprovalRequest};

    #[test]
    fn an_approval_request_is_answered_by_an_op_with_its_id() {
        let (client, server) = channel();
        let agent = std::thread::spawn(move || {
            server.emit(Event::ApprovalRequested(ApprovalRequest {
                id: 7,
                kind: ApprovalKind::Permission {
                    skill: "git-helper".into(),
                    permission: "shell:exec".into(),
                    description: "run programs (no shell) inside the project".into(),
                    scope: Some("git".into()),
                    detail: "run git status".into(),
                },
            }));
            server.recv()
        });
        let Some(Event::ApprovalRequested(req)) = client.recv() else {
            panic!("expected an approval request");
        };
        assert!(client.send(Op::Approve {
            id: req.id,
            answer: ApprovalAnswer::Once
        }));
        assert_eq!(
            agent.join().unwrap(),
            Some(Op::Approve {
                id: 7,
                answer: ApprovalAnswer::Once
            })
        );
    }

    #[test]
    fn events_and_ops_are_json_lines_tagged_by_name() {
        let op = Op::UserTurn {
            text: "fix it".into(),
            attachments: vec![],
        };
        assert_eq!(
            serde_json::to_string(&op).unwrap(),
            r#"{"op":"user_turn","text":"fix it","attachments":[]}"#
        );
        let back: Op = serde_json::from_str(r#"{"op":"user_turn","text":"fix it"}"#).unwrap();
        assert_eq!(back, op);
        let ev = Event::Agent(crate::AgentEvent::TextDelta { text: "hi".into() });
        let json = serde_json::to_string(&ev).unwrap();
        assert_eq!(json, r#"{"event":"agent","type":"text_delta","text":"hi"}"#);
        assert_eq!(serde_json::from_str::<Event>(&json).unwrap(), ev);
    }

    #[test]
    fn a_gone_frontend_or_session_is_reported_not_a_panic() {
        let (client, server) = channel();
        drop(server);
        assert!(!client.send(Op::Interrupt));
        assert!(client.recv().is_none());
        let (client, server) = channel();
        drop(client);
        assert!(!server.emit(Event::ShutdownComplete));
    }
}

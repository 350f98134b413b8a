//! Approvals as events: a question becomes an [`Event::ApprovalRequested`]
//! and the asking thread waits until the matching [`Op::Approve`] arrives
//! (see [`Approvals::answer`]). Nothing calls back into a frontend.
//!
//! Two askers share one [`Approvals`]: an [`EventGate`] for tools whose spec
//! requires approval (with the diff or command line computed by
//! [`crate::preview`]), and an [`EventApprover`] for a skill's first use of
//! a permission (plugged into the policy's interactive `Grants`, which
//! stores the decision).
//!
//! [`Op::Approve`]: agent_protocol::Op::Approve

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_policy::{Answer, Approver};
use agent_protocol::{ApprovalAnswer, ApprovalKind, ApprovalRequest, Event};

use crate::ApprovalGate;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The questions of one session waiting for their answers.
#[derive(Default)]
pub struct Approvals {
    next: AtomicU64,
    inner: Mutex<Pending>,
}

#[derive(Default)]
struct Pending {
    /// Where requests go; `None` before the session starts and after it ends.
    events: Option<Sender<Event>>,
    /// Whether the session has ended: every later question is denied.
    closed: bool,
    waiting: HashMap<u64, Sender<ApprovalAnswer>>,
}

impl Approvals {
    /// No questions yet, not connected: a question asked before
    /// [`Approvals::connect`] is denied.
    pub fn new() -> Arc<Approvals> {
        Arc::new(Approvals::default())
    }

    /// Sends the requests to `events` from now on.
    pub fn connect(&self, events: Sender<Event>) {
        lock(&self.inner).events = Some(events);
    }

    /// Asks `kind` and waits for the answer; [`ApprovalAnswer::Deny`] when
    /// the session is not connected, has ended, or ends before an answer.
    pub fn ask(&self, kind: ApprovalKind) -> ApprovalAnswer {
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let (reply, answer) = channel();
        {
            let mut p = lock(&self.inner);
            let Some(events) = p.events.clone().filter(|_| !p.closed) else {
                return ApprovalAnswer::Deny;
            };
            p.waiting.insert(id, reply);
            if events
                .send(Event::ApprovalRequested(ApprovalRequest { id, kind }))
                .is_err()
            {
                p.waiting.remove(&id);
                return ApprovalAnswer::Deny;
            }
        }
        answer.recv().unwrap_or(ApprovalAnswer::Deny)
    }

    /// Delivers the answer to request `id`; `false` when no such question
    /// waits (answered already, or never asked).
    pub fn answer(&self, id: u64, answer: ApprovalAnswer) -> bool {
        match lock(&self.inner).waiting.remove(&id) {
            Some(reply) => reply.send(answer).is_ok(),
            None => false,
        }
    }

    /// Ends the session's questions: every waiting one is denied, and so is
    /// every later one.
    pub fn close(&self) {
        let mut p = lock(&self.inner);
        p.closed = true;
        p.events = None;
        // Dropping the reply senders wakes the askers with a Deny.
        p.waiting.clear();
    }

    /// The approver for the policy's interactive grants.
    pub fn approver(self: &Arc<Self>) -> Arc<EventApprover> {
        Arc::new(EventApprover {
            approvals: self.clone(),
        })
    }

    /// The gate for tools that require approval in the project at `root`.
    pub fn gate(self: &Arc<Self>, root: PathBuf) -> Arc<EventGate> {
        Arc::new(EventGate {
            approvals: self.clone(),
            root,
            always: Mutex::new(HashSet::new()),
        })
    }
}

/// Asks about a skill's first use of a permission with an event.
pub struct EventApprover {
    approvals: Arc<Approvals>,
}

impl Approver for EventApprover {
    fn ask(&self, req: &agent_policy::ApprovalRequest) -> Answer {
        let kind = ApprovalKind::Permission {
            skill: req.skill.clone(),
            permission: req.permission.to_string(),
            description: req.permission.describe().to_string(),
            scope: req.scope.clone(),
            detail: req.detail.clone(),
        };
        match self.approvals.ask(kind) {
            ApprovalAnswer::Once => Answer::Once,
            ApprovalAnswer::Always => Answer::Always,
            ApprovalAnswer::Deny => Answer::Deny,
        }
    }
}

/// Asks before tools that require approval run, with the preview of what
/// they are about to do. "Always" approves the same tool of the same skill
/// for the rest of the session.
pub struct EventGate {
    approvals: Arc<Approvals>,
    root: PathBuf,
    always: Mutex<HashSet<(String, String)>>,
}

impl ApprovalGate for EventGate {
    fn approve_tool(&self, skill: &str, tool: &str, input_json: &str) -> bool {
        let key = (skill.to_string(), tool.to_string());
        if lock(&self.always).contains(&key) {
            return true;
        }
        let kind = ApprovalKind::Tool {
            skill: skill.to_string(),
            tool: tool.to_string(),
            preview: crate::preview::preview(&self.root, skill, tool, input_json),
        };
        match self.approvals.ask(kind) {
            ApprovalAnswer::Once => true,
            ApprovalAnswer::Always => {
                lock(&self.always).insert(key);
                true
            }
            ApprovalAnswer::Deny => false,
        }
    }

    fn refusal(&self) -> String {
        "you declined it in the approval dialog".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask_in_thread(approvals: &Arc<Approvals>) -> std::thread::JoinHandle<(bool, bool)> {
        let gate = approvals.gate(std::env::temp_dir());
        std::thread::spawn(move || {
            let first = gate.approve_tool("s", "t", "{}");
            let second = gate.approve_tool("s", "t", "{}");
            (first, second)
        })
    }

    /// A tool approval is an event with an id; "Always" covers the same tool
    /// of the same skill for the rest of the session without a second question.
    #[test]
    fn a_tool_question_is_an_event_answered_by_its_id_and_always_is_remembered() {
        let approvals = Approvals::new();
        let (tx, rx) = channel();
        approvals.connect(tx);
        let asker = ask_in_thread(&approvals);
        let Ok(Event::ApprovalRequested(req)) = rx.recv() else {
            panic!("expected an approval request");
        };
        assert!(matches!(req.kind, ApprovalKind::Tool { ref tool, .. } if tool == "t"));
        assert!(!approvals.answer(req.id + 100, ApprovalAnswer::Once));
        assert!(approvals.answer(req.id, ApprovalAnswer::Always));
        assert_eq!(asker.join().unwrap(), (true, true));
        assert!(rx.try_recv().is_err(), "asked twice");
    }

    /// A question left unanswered when the session ends is a denial, and so
    /// is every question after it.
    #[test]
    fn unanswered_at_the_end_is_denied() {
        let approvals = Approvals::new();
        let (tx, rx) = channel();
        approvals.connect(tx);
        let asker = ask_in_thread(&approvals);
        let Ok(Event::ApprovalRequested(_)) = rx.recv() else {
            panic!("expected an approval request");
        };
        approvals.close();
        assert_eq!(asker.join().unwrap(), (false, false));
    }
}

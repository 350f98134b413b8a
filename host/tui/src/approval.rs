//! The bridge between the core, which asks from its own threads and waits
//! for the answer, and the interface, which shows a dialog: a [`TuiApprover`]
//! for a skill's first use of a permission (decisions go to the grant store
//! through `Grants::interactive`), a [`TuiGate`] for tools that require
//! approval (with the diff or the command).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex};

use agent_core::ApprovalGate;
use agent_policy::{Answer, ApprovalRequest, Approver};

use crate::UiMsg;
use crate::diff::{Preview, preview};

/// What a dialog asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// A skill's first use of a permission.
    Permission(ApprovalRequest),
    /// A tool that requires approval.
    Tool {
        /// The skill.
        skill: String,
        /// The tool.
        tool: String,
        /// What it is about to do.
        preview: Preview,
    },
}

/// A question waiting for the user, and where the answer goes.
#[derive(Debug)]
pub struct Ask {
    /// The question.
    pub question: Question,
    /// Receives the answer; dropping it unanswered counts as Deny.
    pub reply: Sender<Answer>,
}

fn ask(tx: &Sender<UiMsg>, question: Question) -> Answer {
    let (reply, answer) = channel();
    if tx.send(UiMsg::Ask(Ask { question, reply })).is_err() {
        return Answer::Deny;
    }
    answer.recv().unwrap_or(Answer::Deny)
}

/// Asks about permissions in a dialog; blocks the asking thread until answered.
pub struct TuiApprover {
    tx: Sender<UiMsg>,
}

impl TuiApprover {
    /// An approver that sends its questions to the interface through `tx`.
    pub fn new(tx: Sender<UiMsg>) -> TuiApprover {
        TuiApprover { tx }
    }
}

impl Approver for TuiApprover {
    fn ask(&self, req: &ApprovalRequest) -> Answer {
        ask(&self.tx, Question::Permission(req.clone()))
    }
}

/// Asks before tools that require approval run, showing a diff computed from
/// the input (or the command line). "Allow always" approves the same tool of
/// the same skill for the rest of the session.
pub struct TuiGate {
    tx: Sender<UiMsg>,
    root: PathBuf,
    always: Mutex<HashSet<(String, String)>>,
}

impl TuiGate {
    /// A gate for the project at `root`.
    pub fn new(tx: Sender<UiMsg>, root: PathBuf) -> Arc<TuiGate> {
        Arc::new(TuiGate {
            tx,
            root,
            always: Mutex::new(HashSet::new()),
        })
    }
}

impl ApprovalGate for TuiGate {
    fn approve_tool(&self, skill: &str, tool: &str, input_json: &str) -> bool {
        let key = (skill.to_string(), tool.to_string());
        if self.always.lock().is_ok_and(|a| a.contains(&key)) {
            return true;
        }
        let question = Question::Tool {
            skill: skill.to_string(),
            tool: tool.to_string(),
            preview: preview(&self.root, skill, tool, input_json),
        };
        match ask(&self.tx, question) {
            Answer::Once => true,
            Answer::Always => {
                if let Ok(mut a) = self.always.lock() {
                    a.insert(key);
                }
                true
            }
            Answer::Deny => false,
        }
    }

    fn refusal(&self) -> String {
        "you declined it in the approval dialog".into()
    }
}

//! The model's part of `agent wiki`: one headless session (the same
//! assembly as `agent run`, the `wiki-base` skill active, the only tool
//! `write_wiki_section`), a fresh conversation per section, answers cached
//! by the hash of what was asked (the state file), within the budget of
//! model requests.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use agent_core::Session;
use agent_manifest::Mode;
use agent_protocol::{ApprovalAnswer, Client, Event, Op, TurnFailure};
use agent_providers::Provider;
use agent_wiki::answer::{Answer, Known};
use anyhow::Result;

use super::tasks::Task;
use super::tool::{self, Slot};
use crate::app::App;
use crate::assembly::{Approval, Frontend, assemble};
use crate::cli::ProviderArgs;

/// Model requests one section may take: the answer, a correction after a
/// rejection, the closing reply.
pub const TURNS_PER_SECTION: usize = 4;

/// What was spent and saved.
#[derive(Debug, Default, Clone)]
pub struct Spent {
    /// Model requests made.
    pub model_calls: usize,
    /// Sections answered from the cache (no request).
    pub cached: usize,
    /// Sections asked.
    pub asked: usize,
    /// Sections not asked: the budget ran out.
    pub over_budget: usize,
    /// Sections the model gave no valid answer for.
    pub unanswered: usize,
    /// Answers rejected (invented names), corrected or not.
    pub rejected: usize,
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

/// The model, its budget and the cache.
pub struct Asker<'a> {
    /// The app (sessions are assembled from it).
    pub app: &'a mut App,
    /// `--provider`, `--model`, ...
    pub provider_args: ProviderArgs,
    /// The provider.
    pub provider: (Arc<dyn Provider>, String, String),
    /// The most model requests.
    pub budget: usize,
    /// The project's names.
    pub known: Arc<Known>,
    /// Last run's answers (input hash → answer).
    pub cache: BTreeMap<String, serde_json::Value>,
    /// This run's answers, to save.
    pub answers: BTreeMap<String, serde_json::Value>,
    /// Counts.
    pub spent: Spent,
    /// Per-stage progress on a terminal.
    pub progress: bool,
    slot: Arc<Mutex<Slot>>,
    client: Option<Client>,
}

fn to_json(a: &Answer) -> serde_json::Value {
    serde_json::json!({"text": a.text, "relations": a.relations, "groups": a.groups})
}

fn from_json(v: &serde_json::Value) -> Option<Answer> {
    Some(Answer {
        text: v.get("text")?.as_str()?.to_string(),
        relations: serde_json::from_value(v.get("relations")?.clone()).ok()?,
        groups: serde_json::from_value(v.get("groups")?.clone()).ok()?,
    })
}

impl<'a> Asker<'a> {
    /// A new asker.
    pub fn new(
        app: &'a mut App,
        provider_args: ProviderArgs,
        provider: (Arc<dyn Provider>, String, String),
        budget: usize,
        known: Arc<Known>,
        cache: BTreeMap<String, serde_json::Value>,
    ) -> Asker<'a> {
        Asker {
            app,
            provider_args,
            provider,
            budget,
            known,
            cache,
            answers: BTreeMap::new(),
            spent: Spent::default(),
            progress: false,
            slot: Arc::new(Mutex::new(Slot::default())),
            client: None,
        }
    }

    fn key(&self, task: &Task) -> String {
        agent_wiki::state::hash(&format!(
            "{}\n{}\n{}",
            self.provider.2, task.section, task.text
        ))
    }

    fn open(&mut self) -> Result<()> {
        if let Some(c) = &self.client {
            c.send(Op::NewConversation);
            return Ok(());
        }
        let mut parts = assemble(
            self.app,
            Frontend {
                mode: Mode::Headless,
                provider_args: self.provider_args.clone(),
                provider: self.provider.clone(),
                approval: Approval::Headless {
                    yes: false,
                    approved: Vec::new(),
                },
                format: "text".to_string(),
                max_turns: Some(u32::try_from(TURNS_PER_SECTION).unwrap_or(u32::MAX)),
                timeout: None,
                tools: Some(vec![agent_wiki::answer::TOOL.to_string()]),
                report_setup: self.app.global.verbose,
                host_tools: vec![tool::source(self.known.clone(), self.slot.clone())],
            },
        )?;
        if !parts.explicit.iter().any(|s| s == tool::OWNER) {
            parts.explicit.push(tool::OWNER.to_string());
        }
        self.client = Some(Session::spawn(parts, tokio::runtime::Handle::current()));
        Ok(())
    }

    /// Closes the session.
    pub fn close(&mut self) {
        if let Some(c) = self.client.take() {
            c.send(Op::Shutdown);
            while c.recv().is_some_and(|e| e != Event::ShutdownComplete) {}
        }
    }

    /// The answer for `task`: from the cache, else from the model when the
    /// budget allows. `Ok(Err(message))`: the provider failed (exit 3).
    ///
    /// # Errors
    /// The session cannot be assembled or ends.
    pub fn ask(&mut self, task: &Task) -> Result<std::result::Result<Option<Answer>, String>> {
        let key = self.key(task);
        if let Some(a) = self.cache.get(&key).and_then(from_json) {
            self.spent.cached += 1;
            self.answers.insert(key, to_json(&a));
            return Ok(Ok(Some(a)));
        }
        if self.spent.model_calls >= self.budget {
            self.spent.over_budget += 1;
            return Ok(Ok(None));
        }
        if self.progress {
            eprintln!("wiki: asking the model for `{}`", task.section);
        }
        if let Ok(mut s) = self.slot.lock() {
            *s = Slot {
                section: task.section.clone(),
                answer: None,
                rejected: 0,
            };
        }
        self.open()?;
        let Some(client) = self.client.as_ref() else {
            anyhow::bail!("the wiki's model session is not open");
        };
        client.send(Op::UserTurn {
            text: task.text.clone(),
            attachments: Vec::new(),
        });
        let done = loop {
            match client.recv() {
                Some(Event::TurnComplete(done)) => break done,
                Some(Event::ApprovalRequested(req)) => {
                    client.send(Op::Approve {
                        id: req.id,
                        answer: ApprovalAnswer::Deny,
                    });
                }
                Some(Event::Notice { text, .. }) if self.app.global.verbose => eprintln!("{text}"),
                Some(Event::Error { message, .. }) => anyhow::bail!("{message}"),
                Some(_) => {}
                None => anyhow::bail!(
                    "the wiki's model session ended during section `{}`",
                    task.section
                ),
            }
        };
        self.spent.asked += 1;
        if let Some(sum) = &done.summary {
            self.spent.model_calls += sum.turns as usize;
            self.spent.input_tokens += sum.input_tokens;
            self.spent.output_tokens += sum.output_tokens;
        }
        let (answer, rejected) = match self.slot.lock() {
            Ok(mut s) => (s.answer.take(), s.rejected),
            Err(_) => (None, 0),
        };
        self.spent.rejected += rejected;
        match done.failure {
            None => {}
            Some(TurnFailure::Model) => {
                return Ok(Err(format!(
                    "the model failed during the wiki's section `{}`: {}",
                    task.section,
                    done.error.unwrap_or_default()
                )));
            }
            Some(_) if answer.is_some() => {}
            Some(_) => anyhow::bail!(
                "section `{}`: {}",
                task.section,
                done.error.unwrap_or_default()
            ),
        }
        match answer {
            Some(a) => {
                self.answers.insert(key, to_json(&a));
                Ok(Ok(Some(a)))
            }
            None => {
                self.spent.unanswered += 1;
                Ok(Ok(None))
            }
        }
    }
}

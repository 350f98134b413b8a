//! `write_wiki_section`, the host tool through which the model answers in
//! `agent wiki`. It belongs to the built-in `wiki-base` skill; each input is
//! checked ([`agent_wiki::answer::check`]) against the section being asked
//! and the project's real names: a rejected answer is the tool's error,
//! naming what does not exist, so the model can correct it.

use std::sync::{Arc, Mutex};

use agent_core::{FixedTools, HostFuture, HostTool, HostToolSource};
use agent_runtime::{SkillError, ToolOutput, ToolSpec};
use agent_wiki::answer::{self, Answer, Known};

/// The skill the tool belongs to.
pub const OWNER: &str = "wiki-base";

/// The section being asked, and what the model answered for it.
#[derive(Debug, Default)]
pub struct Slot {
    /// The section id asked (`summary:core`, `architecture`, ...).
    pub section: String,
    /// The accepted answer.
    pub answer: Option<Answer>,
    /// Answers rejected in this run.
    pub rejected: usize,
}

struct WriteSection {
    spec: ToolSpec,
    known: Arc<Known>,
    slot: Arc<Mutex<Slot>>,
}

impl WriteSection {
    fn take(&self, input: &str) -> Result<ToolOutput, SkillError> {
        let value: serde_json::Value = serde_json::from_str(input)
            .map_err(|e| SkillError::InvalidInput(format!("the input is not JSON: {e}")))?;
        let mut slot = self
            .slot
            .lock()
            .map_err(|_| SkillError::Failed("the wiki's answers are unavailable".into()))?;
        match answer::check(&value, &slot.section, &self.known) {
            Ok(a) => {
                slot.answer = Some(a);
                Ok(ToolOutput {
                    text: format!("section `{}` recorded", slot.section),
                    truncated: false,
                })
            }
            Err(why) => {
                slot.rejected += 1;
                Err(SkillError::InvalidInput(why))
            }
        }
    }
}

impl HostTool for WriteSection {
    fn skill(&self) -> &str {
        OWNER
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, input: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move { self.take(input) })
    }
}

/// The source the wiki's sessions get.
pub fn source(known: Arc<Known>, slot: Arc<Mutex<Slot>>) -> Arc<dyn HostToolSource> {
    Arc::new(FixedTools {
        tools: vec![Arc::new(WriteSection {
            spec: ToolSpec {
                name: answer::TOOL.to_string(),
                description: answer::DESCRIPTION.to_string(),
                input_schema: answer::SCHEMA.to_string(),
                requires_approval: false,
            },
            known,
            slot,
        })],
        prompt: None,
    })
}

//! `report_finding` as the review's host tool: it belongs to the
//! `code-review` skill (its constraints, hooks and events name it), its
//! input schema is the Unified Finding Schema, and each call goes into the
//! review's [`Intake`]. A recorded finding answers with its id; a dropped
//! one is the tool's error, naming the reason, so the model can correct it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::{FixedTools, HostFuture, HostTool, HostToolSource};
use agent_findings::{
    Answer, Intake, REPORT_FINDING, REPORT_FINDING_DESCRIPTION, REPORT_FINDING_SCHEMA,
};
use agent_runtime::{SkillError, ToolOutput, ToolSpec};

/// The skill the tool belongs to.
pub const OWNER: &str = "code-review";

/// The tool, over the review's intake.
pub struct ReportFinding {
    spec: ToolSpec,
    intake: Arc<Mutex<Intake>>,
    /// Calls that reached the tool (the router refuses the others, e.g. at
    /// the schema check).
    reached: Arc<AtomicUsize>,
}

impl ReportFinding {
    /// The tool over `intake`; `reached` counts the calls it receives.
    pub fn new(intake: Arc<Mutex<Intake>>, reached: Arc<AtomicUsize>) -> ReportFinding {
        ReportFinding {
            spec: ToolSpec {
                name: REPORT_FINDING.to_string(),
                description: REPORT_FINDING_DESCRIPTION.to_string(),
                input_schema: REPORT_FINDING_SCHEMA.to_string(),
                requires_approval: false,
            },
            intake,
            reached,
        }
    }

    /// Takes in one input (JSON text).
    pub fn take(&self, input: &str) -> Result<ToolOutput, SkillError> {
        self.reached.fetch_add(1, Ordering::SeqCst);
        let value: serde_json::Value = serde_json::from_str(input)
            .map_err(|e| SkillError::InvalidInput(format!("the input is not JSON: {e}")))?;
        let answer = self
            .intake
            .lock()
            .map_err(|_| SkillError::Failed("the review's findings are unavailable".into()))?
            .submit(&value);
        match answer {
            Answer::Recorded { .. } => Ok(ToolOutput {
                text: answer.message(),
                truncated: false,
            }),
            Answer::Dropped { .. } => Err(SkillError::InvalidInput(answer.message())),
        }
    }
}

impl HostTool for ReportFinding {
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

/// The source the review's session gets: `report_finding` on every turn.
pub fn source(intake: Arc<Mutex<Intake>>, reached: Arc<AtomicUsize>) -> Arc<dyn HostToolSource> {
    Arc::new(FixedTools {
        tools: vec![Arc::new(ReportFinding::new(intake, reached))],
        prompt: None,
    })
}

//! `report_finding`, the host tool through which the model reports findings in
//! the modes that collect them (`agent review`, `security-audit --deep`). It
//! belongs to the mode's built-in skill (its constraints, hooks and events name
//! it), its input schema is the Unified Finding Schema, and each call goes into
//! the mode's [`Intake`] (validated, anchored to a real file and line,
//! deduplicated, counted). A recorded finding answers with its id; a dropped
//! one is the tool's error, naming the reason, so the model can correct it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::{FixedTools, HostFuture, HostTool, HostToolSource};
use agent_findings::{
    Answer, Intake, REPORT_FINDING, REPORT_FINDING_DESCRIPTION, REPORT_FINDING_SCHEMA,
};
use agent_runtime::{SkillError, ToolOutput, ToolSpec};

/// The tool of `owner`, over its mode's intake.
struct ReportFinding {
    owner: &'static str,
    spec: ToolSpec,
    intake: Arc<Mutex<Intake>>,
    /// Calls that reached the tool (the router refuses the others, e.g. at
    /// the schema check).
    reached: Arc<AtomicUsize>,
}

impl ReportFinding {
    /// Takes in one input (JSON text).
    fn take(&self, input: &str) -> Result<ToolOutput, SkillError> {
        self.reached.fetch_add(1, Ordering::SeqCst);
        let value: serde_json::Value = serde_json::from_str(input)
            .map_err(|e| SkillError::InvalidInput(format!("the input is not JSON: {e}")))?;
        let answer = self
            .intake
            .lock()
            .map_err(|_| SkillError::Failed("the findings are unavailable".into()))?
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
        self.owner
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, input: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move { self.take(input) })
    }
}

/// The source a mode's session gets: `report_finding`, owned by `owner`, on
/// every turn; `reached` counts the calls that got past the router.
pub fn source(
    owner: &'static str,
    intake: Arc<Mutex<Intake>>,
    reached: Arc<AtomicUsize>,
) -> Arc<dyn HostToolSource> {
    Arc::new(FixedTools {
        tools: vec![Arc::new(ReportFinding {
            owner,
            spec: ToolSpec {
                name: REPORT_FINDING.to_string(),
                description: REPORT_FINDING_DESCRIPTION.to_string(),
                input_schema: REPORT_FINDING_SCHEMA.to_string(),
                requires_approval: false,
            },
            intake,
            reached,
        })],
        prompt: None,
    })
}

//! `report_finding` in the deep analysis: it belongs to the built-in
//! `security-deep` skill (constraints, hooks and events name it), its input
//! is the Unified Finding Schema, and each call goes into the analysis'
//! [`Intake`] (validated, anchored to a real file and line, deduplicated
//! against the static findings, counted). A dropped finding is the tool's
//! error, naming the reason, so the model can correct it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::{FixedTools, HostFuture, HostTool, HostToolSource};
use agent_findings::{
    Answer, Intake, REPORT_FINDING, REPORT_FINDING_DESCRIPTION, REPORT_FINDING_SCHEMA,
};
use agent_runtime::{SkillError, ToolOutput, ToolSpec};

/// The skill the tool belongs to.
pub const OWNER: &str = "security-deep";

struct ReportFinding {
    spec: ToolSpec,
    intake: Arc<Mutex<Intake>>,
    reached: Arc<AtomicUsize>,
}

impl HostTool for ReportFinding {
    fn skill(&self) -> &str {
        OWNER
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, input: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move {
            self.reached.fetch_add(1, Ordering::SeqCst);
            let value: serde_json::Value = serde_json::from_str(input)
                .map_err(|e| SkillError::InvalidInput(format!("the input is not JSON: {e}")))?;
            let answer = self
                .intake
                .lock()
                .map_err(|_| SkillError::Failed("the analysis' findings are unavailable".into()))?
                .submit(&value);
            match answer {
                Answer::Recorded { .. } => Ok(ToolOutput {
                    text: answer.message(),
                    truncated: false,
                }),
                Answer::Dropped { .. } => Err(SkillError::InvalidInput(answer.message())),
            }
        })
    }
}

/// The source each deep session gets: `report_finding` on every turn;
/// `reached` counts the calls that got past the router.
pub fn source(intake: Arc<Mutex<Intake>>, reached: Arc<AtomicUsize>) -> Arc<dyn HostToolSource> {
    Arc::new(FixedTools {
        tools: vec![Arc::new(ReportFinding {
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

//! The model's part of a log analysis: the overview attached to one turn of
//! a headless session that offers only the `report_incident` host tool and
//! activates the built-in `log-analysis` prompt skill; the checked report
//! printed at the end.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_core::{FixedTools, HostFuture, HostTool, Session};
use agent_logs::Input;
use agent_logs::incident::{self, Checked, Report};
use agent_manifest::Mode;
use agent_protocol::{
    ApprovalAnswer, Attachment, Client, Event, NoticeKind, Op, StopKind, TurnComplete, TurnFailure,
};
use agent_runtime::{SkillError, ToolOutput, ToolSpec};
use anyhow::Result;
use serde_json::json;

use super::{Job, Output, mine, sources};
use crate::app::App;
use crate::assembly::{Approval, Frontend, assemble, provider_for};
use crate::cli::{UsageError, exit};

/// The built-in skill that holds the instructions and owns the tool.
pub(crate) const SKILL: &str = "log-analysis";

/// The question when `--prompt` is not given.
const DEFAULT_PROMPT: &str = "Find the incident in these logs and its root cause, then report \
it with report_incident.";

/// `report_incident`: checks the cited lines against the inputs and keeps
/// the last report.
pub(crate) struct ReportTool {
    spec: ToolSpec,
    inputs: Vec<Input>,
    report: Mutex<Option<Checked>>,
}

impl ReportTool {
    pub(crate) fn new(inputs: Vec<Input>) -> ReportTool {
        ReportTool {
            spec: ToolSpec {
                name: incident::TOOL.to_string(),
                description: incident::DESCRIPTION.to_string(),
                input_schema: incident::input_schema().to_string(),
                requires_approval: false,
            },
            inputs,
            report: Mutex::new(None),
        }
    }

    fn take(&self) -> Option<Checked> {
        self.report.lock().map_or(None, |mut r| r.take())
    }
}

impl HostTool for ReportTool {
    fn skill(&self) -> &str {
        SKILL
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, input: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move {
            let report: Report = serde_json::from_str(input)
                .map_err(|e| SkillError::InvalidInput(format!("report_incident: {e}")))?;
            let checked = incident::check_report(report, &self.inputs);
            let text = checked.tool_answer();
            if let Ok(mut slot) = self.report.lock() {
                *slot = Some(checked);
            }
            Ok(ToolOutput {
                text,
                truncated: false,
            })
        })
    }
}

/// Waits for the turn's end: warnings on stderr, approvals refused (the
/// tool needs none), the first error returned.
fn wait(client: &Client, verbose: bool) -> Result<TurnComplete> {
    while let Some(event) = client.recv() {
        match event {
            Event::Notice {
                kind: NoticeKind::Warning,
                text,
            } => eprintln!("warning: {text}"),
            Event::SetupReport { lines } if verbose => {
                for line in lines {
                    eprintln!("{line}");
                }
            }
            Event::ApprovalRequested(req) => {
                client.send(Op::Approve {
                    id: req.id,
                    answer: ApprovalAnswer::Deny,
                });
            }
            Event::Error { message, .. } => return Err(anyhow::Error::msg(message)),
            Event::TurnComplete(done) => return Ok(done),
            _ => {}
        }
    }
    anyhow::bail!("the agent's session ended before the turn completed")
}

/// `agent logs` with a model (and `agent run --mode log-analysis`).
pub(crate) fn analyse(app: &mut App, job: Job) -> Result<u8> {
    app.interactive = false;
    let config = app.config()?;
    let max_turns = job.model.max_turns_or(config.agent.max_turns)?;
    let timeout = job.model.timeout()?.unwrap_or(config.agent.timeout);
    if job.output == Output::Jsonl {
        return Err(UsageError(
            "--output jsonl is for --templates (one line per log line); the report is text, \
             json or markdown"
                .into(),
        )
        .into());
    }
    let budget = job.budget.unwrap_or(agent_logs::view::DEFAULT_BUDGET);
    if budget < 1024 {
        return Err(UsageError(format!("--budget {budget}: give at least 1024 bytes")).into());
    }
    let sources = sources(&job)?;
    let analysis = mine(&job, &sources, &mut |_| {})?;
    if analysis.totals.records == 0 {
        eprintln!(
            "error: no log records to analyse ({} lines read, {} outside --since/--until)",
            analysis.totals.lines, analysis.totals.filtered
        );
        return Ok(exit::FAILURE);
    }
    let overview = agent_logs::view::render(&analysis, budget);
    let provider = match provider_for(&job.model.provider_args, &config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: provider: {e}");
            return Ok(exit::PROVIDER);
        }
    };
    let tool = Arc::new(ReportTool::new(analysis.inputs.clone()));
    // The built-in skill's instructions apply whatever its triggers.
    if !app.global.skills.iter().any(|s| s.as_os_str() == SKILL) {
        app.global.skills.push(PathBuf::from(SKILL));
    }
    let format = match job.output {
        Output::Json => "json",
        Output::Markdown => "markdown",
        _ => "text",
    };
    let parts = assemble(
        app,
        Frontend {
            mode: Mode::Headless,
            provider_args: job.model.provider_args.clone(),
            provider,
            approval: Approval::Headless {
                yes: false,
                approved: Vec::new(),
            },
            format: format.to_string(),
            max_turns: Some(max_turns),
            timeout: Some(timeout),
            tools: Some(vec![incident::TOOL.to_string()]),
            report_setup: app.global.verbose,
            host_tools: vec![Arc::new(FixedTools {
                tools: vec![tool.clone() as Arc<dyn HostTool>],
                prompt: None,
            })],
        },
    )?;
    let client = Session::spawn(parts, tokio::runtime::Handle::current());
    client.send(Op::UserTurn {
        text: job
            .prompt
            .clone()
            .unwrap_or_else(|| DEFAULT_PROMPT.to_string()),
        attachments: vec![Attachment {
            name: "log-overview".into(),
            content: overview,
        }],
    });
    let done = wait(&client, app.global.verbose);
    client.send(Op::Shutdown);
    while client.recv().is_some_and(|e| e != Event::ShutdownComplete) {}
    let done = done?;
    let session = done.session_id.clone();
    let (stop, summary) = match (done.failure, done.summary, done.stop) {
        (None, Some(summary), Some(stop)) => (stop, summary),
        (Some(TurnFailure::ToolFilter), ..) => {
            return Err(UsageError(done.error.unwrap_or_default()).into());
        }
        (Some(TurnFailure::Model), ..) => {
            eprintln!("error: {}", done.error.unwrap_or_default());
            eprintln!("session: {session}");
            return Ok(exit::PROVIDER);
        }
        _ => return Err(anyhow::Error::msg(done.error.unwrap_or_default())),
    };
    for w in &summary.warnings {
        eprintln!("warning: {w}");
    }
    let Some(checked) = tool.take() else {
        if stop != StopKind::EndTurn {
            eprintln!(
                "stopped: the {} limit was reached before the model reported (session {session})",
                if stop == StopKind::MaxTurns {
                    "turn"
                } else {
                    "time"
                }
            );
            return Ok(exit::LIMIT);
        }
        eprintln!(
            "error: the model finished without calling report_incident (session {session}); \
             its answer was:\n{}",
            summary.text
        );
        return Ok(exit::FAILURE);
    };
    if let Some(line) = checked.drop_summary() {
        eprintln!("{line}");
    }
    let text = match job.output {
        Output::Json => {
            serde_json::to_string_pretty(&json!({
                "report": checked.report,
                "dropped": checked.dropped,
                "demoted": checked.demoted,
                "inputs": analysis.inputs,
                "records": analysis.totals.records,
                "templates": analysis.templates.len(),
                "session": session,
                "turns": summary.turns,
                "usage": {"input_tokens": summary.input_tokens, "output_tokens": summary.output_tokens},
            }))? + "\n"
        }
        _ => checked.markdown(&analysis.inputs),
    };
    print!("{text}");
    Ok(exit::OK)
}

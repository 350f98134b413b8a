//! `agent logs`: log analysis. The logs are mined into templates by
//! `agent-logs` (streaming, any size); `--templates` prints them without a
//! model, otherwise the model reads the compact overview and reports the
//! incident through `report_incident` (`crate::log_analysis`).

use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;

use crate::app::App;
use crate::cli::HeadlessModelArgs;
use crate::log_analysis::{self, Job, Output};

/// Output of `agent logs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogsOutput {
    /// The report (or, with --templates, the templates) as text.
    #[default]
    Text,
    /// One JSON object.
    Json,
    /// Markdown.
    Markdown,
    /// With --templates: one JSON object per input line (input, line,
    /// template_id, template).
    Jsonl,
}

pub const LOGS_AFTER_HELP: &str = concat!(
    "The logs are read as a stream (files of any size, or standard input with `-` or when piped) ",
    "and mined into templates: each record — a line, or a stack trace joined to its first line — ",
    "gets a template with its variables masked (<*>). Timestamps of syslog, ISO 8601, ",
    "Apache/nginx, JSON lines and glog are recognised, as are severities.\n\n",
    "Without --templates the model gets a compact overview within --budget (templates ranked by ",
    "anomaly: errors, rare and newly seen templates, bursts per minute, with samples and their ",
    "line numbers) and reports the incident through the `report_incident` tool: summary, ",
    "timeline, root-cause hypotheses with evidence lines, suggested actions. Every cited line is ",
    "checked against the input; a line that does not exist is dropped and counted on stderr.\n\n",
    "--templates prints the templates without any model: with --output jsonl one line per input ",
    "line (`{\"input\",\"line\",\"template_id\",\"template\"}`, the template as it was when the ",
    "line was read), otherwise the templates found, most anomalous first.\n\n",
    "--since/--until take an ISO 8601 date-time, a date, or a duration before now (2h, 1d).\n\n",
    "Exit codes: 0 done · 1 the model finished without calling report_incident (or no record ",
    "was read) · 2 usage error · 3 provider error · 5 the model stopped at its turn or time limit ",
    "without reporting."
);

/// `agent logs`.
#[derive(Debug, clap::Args)]
pub struct LogsArgs {
    /// Log files; `-` is standard input (the default when input is piped
    /// and no file is given).
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// What to ask about the logs (default: find the incident and its root cause).
    #[arg(long, short = 'p', value_name = "TEXT")]
    pub prompt: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub output: LogsOutput,
    /// Skip records before this time.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Skip records after this time.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// Print the templates without any model.
    #[arg(long)]
    pub templates: bool,
    /// The most bytes of the log overview the model gets (default 48 KiB).
    #[arg(long, value_name = "BYTES")]
    pub budget: Option<usize>,
    /// Turns, time and which model.
    #[command(flatten)]
    pub model: HeadlessModelArgs,
}

pub fn run(app: &mut App, args: LogsArgs) -> Result<u8> {
    let output = match args.output {
        LogsOutput::Text => Output::Text,
        LogsOutput::Json => Output::Json,
        LogsOutput::Markdown => Output::Markdown,
        LogsOutput::Jsonl => Output::Jsonl,
    };
    let job = Job {
        files: args.files,
        prompt: args.prompt,
        output,
        since: args.since,
        until: args.until,
        budget: args.budget,
        model: args.model,
    };
    if args.templates {
        log_analysis::templates(&job)
    } else {
        log_analysis::analyse(app, job)
    }
}

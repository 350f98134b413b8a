//! `agent run --mode MODE`: the spec's spelling of the headless modes, each
//! the same work as its own command (`code-review` is `agent review`,
//! `log-analysis` is `agent logs -`). `main` dispatches on the mode.

use anyhow::Result;
use clap::ValueEnum;

use crate::app::App;
use crate::cli::{RunArgs, RunOutput, UsageError};
use crate::log_analysis::{self, Job, Output};

/// A mode of `agent run` besides a free prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunMode {
    /// Review a change, as `agent review` does (`--diff A..B`, `--staged`, `--base BRANCH`).
    CodeReview,
    /// Log analysis of piped standard input (as `agent logs -`; `--prompt`
    /// is the question, default: find the incident and its root cause).
    LogAnalysis,
}

/// Refuses the review flags (`--diff`, `--staged`…) and formats (`--output
/// sarif`…) in an `agent run` that is not `--mode code-review`, where they
/// would be silently ignored.
pub fn refuse_review_flags(args: &RunArgs) -> Result<(), UsageError> {
    if let Some(format) = args.output.review_only() {
        return Err(UsageError(format!(
            "--output {format} is a review's report: add `--mode code-review` (or use `agent \
             review --output {format}`)"
        )));
    }
    match args.review.first_given() {
        Some(flag) => Err(UsageError(format!(
            "{flag} applies to a review: add `--mode code-review` (or use `agent review {flag} …`)"
        ))),
        None => Ok(()),
    }
}

/// Refuses `--since`/`--until` in an `agent run` that is not `--mode
/// log-analysis`, where they would be silently ignored.
pub fn refuse_log_flags(args: &RunArgs) -> Result<(), UsageError> {
    let given = [
        (args.since.is_some(), "--since"),
        (args.until.is_some(), "--until"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag));
    match given {
        Some(flag) => Err(UsageError(format!(
            "{flag} applies to log analysis: add `--mode log-analysis` (or use `agent logs {flag} …`)"
        ))),
        None => Ok(()),
    }
}

/// `agent run --mode log-analysis`: the logs on standard input.
pub fn log_analysis(app: &mut App, args: RunArgs) -> Result<u8> {
    let output = match args.output {
        RunOutput::Text => Output::Text,
        RunOutput::Json => Output::Json,
        RunOutput::Markdown => Output::Markdown,
        RunOutput::Jsonl | RunOutput::Sarif | RunOutput::Github | RunOutput::GithubReview => {
            return Err(UsageError(
                "--mode log-analysis writes text, json or markdown (for one line per \
                 log line use `agent logs --templates --output jsonl`)"
                    .into(),
            )
            .into());
        }
    };
    if args.file.is_some() || args.resume.is_some() || args.last {
        return Err(UsageError(
            "--mode log-analysis reads the logs on standard input: --file, --resume \
             and --last do not apply (use `agent logs FILE...` for files)"
                .into(),
        )
        .into());
    }
    log_analysis::analyse(
        app,
        Job {
            files: Vec::new(),
            prompt: args.prompt,
            output,
            since: args.since,
            until: args.until,
            budget: None,
            model: crate::cli::HeadlessModelArgs {
                max_turns: args.max_turns,
                timeout: args.timeout,
                provider_args: args.provider_args,
            },
        },
    )
}

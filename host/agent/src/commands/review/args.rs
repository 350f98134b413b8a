//! The flags of `agent review`, and the same review spelled `agent run
//! --mode code-review`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::cli::{HeadlessModelArgs, RunArgs, RunOutput, UsageError};

/// What to review and when to fail: shared by `agent review` and `agent
/// run --mode code-review`.
#[derive(Debug, Clone, Default, Args)]
pub struct ReviewFlags {
    /// Review the commits between two revisions: `A..B`.
    #[arg(long, value_name = "A..B", conflicts_with_all = ["staged", "base"])]
    pub diff: Option<String>,
    /// Review the staged changes (HEAD to the index).
    #[arg(long, conflicts_with = "base")]
    pub staged: bool,
    /// Review the branch's changes since it left BRANCH (`BRANCH...HEAD`).
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Fail (exit 1) when a finding at or above this severity remains:
    /// critical, high, medium, low, info, or `none` (default: config
    /// `security.fail_on`, else high).
    #[arg(long, value_name = "SEVERITY")]
    pub fail_on: Option<String>,
    /// Fail (exit 1) when more findings than N remain.
    #[arg(long, value_name = "N")]
    pub max_findings: Option<usize>,
    /// Keep the model's findings on lines the change did not add (marked
    /// `context`) instead of dropping them.
    #[arg(long)]
    pub context_findings: bool,
    /// Review up to N chunks of the diff at once, each in its own
    /// conversation (default 4); the report's order does not depend on it.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

impl ReviewFlags {
    /// The first review flag given, spelled as on the command line (for
    /// `agent run` without `--mode code-review`, where they do not apply).
    pub fn first_given(&self) -> Option<&'static str> {
        [
            (self.diff.is_some(), "--diff"),
            (self.staged, "--staged"),
            (self.base.is_some(), "--base"),
            (self.fail_on.is_some(), "--fail-on"),
            (self.max_findings.is_some(), "--max-findings"),
            (self.context_findings, "--context-findings"),
            (self.jobs.is_some(), "--jobs"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// Output of `agent review`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ReviewOutput {
    /// A readable summary and the findings.
    #[default]
    Text,
    /// The report as JSON (the security audit's JSON, with the review's counts).
    Json,
    /// A Markdown report.
    Markdown,
    /// SARIF 2.1.0.
    Sarif,
    /// GitHub workflow commands (annotations).
    Github,
    /// The JSON body of a GitHub pull-request review (`gh api … --input`).
    GithubReview,
}

/// `agent review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// What to review and when to fail.
    #[command(flatten)]
    pub flags: ReviewFlags,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub output: ReviewOutput,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Turns, time and which model.
    #[command(flatten)]
    pub model: HeadlessModelArgs,
}

impl ReviewArgs {
    /// `agent run --mode code-review …` as the review it is.
    ///
    /// # Errors
    /// A flag `agent run` has that a review does not use, or an output a
    /// review does not write.
    pub fn from_run(run: RunArgs) -> Result<ReviewArgs, UsageError> {
        let refuse = |flag: &str| {
            Err(UsageError(format!(
                "{flag} is not used by --mode code-review (the task is the diff); see `agent review --help`"
            )))
        };
        if run.prompt.is_some() {
            return refuse("--prompt");
        }
        if run.file.is_some() {
            return refuse("--file");
        }
        if run.resume.is_some() || run.last {
            return refuse("--resume/--last");
        }
        if run.tools.is_some() {
            return refuse("--tools (a review gets read-only tools)");
        }
        crate::commands::run::mode::refuse_log_flags(&run)?;
        let output = match run.output {
            RunOutput::Text => ReviewOutput::Text,
            RunOutput::Json => ReviewOutput::Json,
            RunOutput::Markdown => ReviewOutput::Markdown,
            RunOutput::Sarif => ReviewOutput::Sarif,
            RunOutput::Github => ReviewOutput::Github,
            RunOutput::GithubReview => ReviewOutput::GithubReview,
            RunOutput::Jsonl => {
                return Err(UsageError(
                    "--output jsonl: a review writes text, json, markdown, sarif, github or \
                     github-review"
                        .into(),
                ));
            }
        };
        Ok(ReviewArgs {
            flags: run.review,
            output,
            out: None,
            model: HeadlessModelArgs {
                max_turns: run.max_turns,
                timeout: run.timeout,
                provider_args: run.provider_args,
            },
        })
    }
}

//! `agent-testreport`: the testing page of a generated wiki.
//!
//! - [`detect`]: the test runners a project has (`cargo`, `go`, `pytest`,
//!   `npm`; several per project), each with the program, arguments and the
//!   `shell:exec:<program>` grant running it needs.
//! - [`parse`]: a runner's machine output read into [`TestCase`]s — libtest's
//!   human lines for cargo (stable has no JSON), `go test -json`, JUnit XML
//!   (pytest's `--junitxml`, node's `--test-reporter=junit`), and TAP lines
//!   for an npm script that writes no JUnit file.
//! - [`gaps`]: modules with no test case attributed to them.
//! - [`render_markdown`]: the page — a table per runner, the failures with
//!   their message, the gaps.
//!
//! Nothing here runs a program: the caller runs [`Runner::program`] with
//! [`Runner::args`] through the exec import under the user's grants and
//! hands the output to [`parse`].
#![deny(missing_docs)]

mod detect;
mod gojson;
mod junit;
mod libtest;
mod render;
mod tap;

use std::path::PathBuf;

pub use detect::{PYTEST_JUNIT_FILE, Runner, detect};
pub use render::{gaps, render_markdown};

/// Which test runner produced a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunnerKind {
    /// `cargo test` (libtest's human output).
    Cargo,
    /// `go test -json ./...`.
    Go,
    /// `pytest --junitxml=<file>`.
    Pytest,
    /// `npm test` (JUnit XML when the script writes it, else TAP lines).
    Npm,
}

impl RunnerKind {
    /// The name used in the page and in errors.
    pub fn name(self) -> &'static str {
        match self {
            RunnerKind::Cargo => "cargo",
            RunnerKind::Go => "go",
            RunnerKind::Pytest => "pytest",
            RunnerKind::Npm => "npm",
        }
    }
}

/// How one test case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The test passed.
    Passed,
    /// The test failed (or errored).
    Failed,
    /// The test was skipped or ignored.
    Skipped,
}

/// One test case of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestCase {
    /// Full name: `module::test` (cargo), `package/TestName` (go),
    /// `classname::name` (JUnit), the TAP description (TAP).
    pub name: String,
    /// The source file, when the output names it.
    pub file: Option<PathBuf>,
    /// How it ended.
    pub outcome: Outcome,
    /// Duration, when the output reports one.
    pub duration_ms: Option<u64>,
    /// The failure (or skip) message, when there is one.
    pub message: Option<String>,
}

/// Counts of a run's cases by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Passed cases.
    pub passed: usize,
    /// Failed cases.
    pub failed: usize,
    /// Skipped or ignored cases.
    pub skipped: usize,
}

impl Totals {
    /// Counts `cases` by outcome.
    pub fn of(cases: &[TestCase]) -> Totals {
        let mut totals = Totals::default();
        for case in cases {
            match case.outcome {
                Outcome::Passed => totals.passed += 1,
                Outcome::Failed => totals.failed += 1,
                Outcome::Skipped => totals.skipped += 1,
            }
        }
        totals
    }
}

/// One runner's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRun {
    /// The runner that produced it.
    pub runner: RunnerKind,
    /// Every case, in output order.
    pub cases: Vec<TestCase>,
    /// Counts by outcome (always [`Totals::of`] `cases`).
    pub totals: Totals,
}

/// Every runner's results for one project.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestReport {
    /// One run per runner.
    pub runs: Vec<TestRun>,
}

/// Output that could not be read as the runner's format.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{source_name}:{line}: {message}")]
pub struct ParseError {
    /// What was parsed: `cargo test output`, `go test -json output`, the
    /// JUnit file's name, `npm test output`.
    pub source_name: String,
    /// 1-based line of the problem (0 when the problem is the whole input).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    fn new(source_name: &str, line: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            source_name: source_name.to_string(),
            line,
            message: message.into(),
        }
    }
}

/// Parses one runner's output.
///
/// - cargo: `stdout` is `cargo test`'s output; append (or merge) its stderr
///   to attribute cases to files (the `Running tests/x.rs` lines are there).
/// - go: `stdout` is `go test -json`'s output.
/// - pytest: `junit` is the `--junitxml` file's text (required).
/// - npm: `junit` when the script writes JUnit XML, else `stdout`'s TAP lines.
pub fn parse(kind: RunnerKind, stdout: &str, junit: Option<&str>) -> Result<TestRun, ParseError> {
    let cases = match (kind, junit) {
        (RunnerKind::Cargo, _) => libtest::parse(stdout)?,
        (RunnerKind::Go, _) => gojson::parse(stdout)?,
        (RunnerKind::Pytest, Some(xml)) | (RunnerKind::Npm, Some(xml)) => {
            junit::parse(xml, &format!("{} JUnit XML", kind.name()))?
        }
        (RunnerKind::Pytest, None) => {
            return Err(ParseError::new(
                "pytest output",
                0,
                "pytest's results are read from its --junitxml file, and none was given",
            ));
        }
        (RunnerKind::Npm, None) => tap::parse(stdout)?,
    };
    Ok(TestRun {
        runner: kind,
        totals: Totals::of(&cases),
        cases,
    })
}

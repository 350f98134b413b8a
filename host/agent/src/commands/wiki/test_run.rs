//! `agent wiki --test-report`: the project's test runners
//! ([`agent_testreport::detect`]: cargo, go, pytest, npm) run through the
//! built-in core-tools `exec` tool — the same capability check as any
//! skill's program, so each needs its grant (`--allow
//! core-tools/shell:exec:cargo`, ...) — their output parsed into the
//! testing page (`testing/test-execution.md`).

use std::path::{Path, PathBuf};

use agent_testreport::{RunnerKind, TestReport};
use agent_wiki::pages::Page;
use anyhow::{Context, Result};

use crate::app::App;

/// The most a test run may take (the host caps `exec` at its own maximum).
const TIMEOUT_MS: u64 = 600_000;

/// What `--test-report` found.
pub struct Ran {
    /// The runs that were read.
    pub report: TestReport,
    /// One line per runner that could not be run or read.
    pub problems: Vec<String>,
    /// The runners found.
    pub runners: usize,
}

/// `exec`'s answer split into stdout and stderr (`core-tools`'
/// `format_output`: the status line, `stdout:` then `stderr:`).
fn split(text: &str) -> (String, String) {
    let body = text.split_once('\n').map_or("", |(_, rest)| rest);
    let (out, err) = match body.rsplit_once("\nstderr:") {
        Some((o, e)) => (o.to_string(), e.to_string()),
        None => match body.strip_prefix("stderr:") {
            Some(e) => (String::new(), e.to_string()),
            None => (body.to_string(), String::new()),
        },
    };
    let clean = |s: &str, name: &str| -> String {
        let s = s.strip_prefix(&format!("{name}:")).unwrap_or(s);
        if s.trim() == "(empty)" {
            String::new()
        } else {
            s.trim_start_matches('\n').to_string()
        }
    };
    (clean(&out, "stdout"), clean(&err, ""))
}

/// Runs every runner of `root`.
///
/// # Errors
/// The skills cannot be loaded, or core-tools is missing.
pub async fn run(app: &mut App, root: &Path) -> Result<Ran> {
    let runners = agent_testreport::detect(root);
    let skills = app.load_all()?;
    let core = skills
        .iter()
        .find(|s| s.name() == "core-tools")
        .context("the built-in core-tools skill is not available")?;
    let ctx = app.call_context("wiki")?;
    let runtime = app.runtime()?.clone();
    let mut ran = Ran {
        report: TestReport::default(),
        problems: Vec::new(),
        runners: runners.len(),
    };
    for r in &runners {
        let input =
            serde_json::json!({"program": r.program(), "args": r.args(), "timeout_ms": TIMEOUT_MS});
        let what = format!("{} {}", r.program(), r.args().join(" "));
        let (result, _logs) = match runtime
            .call_tool(core, &ctx, "exec", &input.to_string())
            .await
        {
            Ok(x) => x,
            Err(e) => {
                ran.problems.push(format!("`{what}`: not run: {e}"));
                continue;
            }
        };
        let output = match result {
            Ok(o) => o,
            Err(e) => {
                ran.problems.push(format!(
                    "`{what}`: not run: {e} (grant it with `--allow core-tools/{}`)",
                    r.permission()
                ));
                continue;
            }
        };
        if output.truncated {
            ran.problems.push(format!(
                "`{what}`: its output was cut at the host's size cap; the counts may be incomplete"
            ));
        }
        let (stdout, stderr) = split(&output.text);
        let stdout = if r.kind() == RunnerKind::Cargo {
            format!("{stdout}\n{stderr}")
        } else {
            stdout
        };
        let junit = match r.junit_file() {
            Some(f) => match std::fs::read_to_string(root.join(f)) {
                Ok(t) => Some(t),
                Err(e) => {
                    ran.problems.push(format!("`{what}`: {}: {e}", f.display()));
                    continue;
                }
            },
            None => None,
        };
        match agent_testreport::parse(r.kind(), &stdout, junit.as_deref()) {
            Ok(run) => ran.report.runs.push(run),
            Err(e) => ran.problems.push(format!("`{what}`: {e}")),
        }
    }
    Ok(ran)
}

/// The test-execution page.
pub fn page(ran: &Ran, modules: &[(String, PathBuf)]) -> Page {
    let gaps = agent_testreport::gaps(&ran.report, modules);
    let mut body = agent_testreport::render_markdown(&ran.report, &gaps);
    if ran.runners == 0 {
        body.push_str(
            "\nNo test runner was found at the project's root: a `Cargo.toml`, a `go.mod`, a pytest \
             configuration or `tests/test_*.py`, or a `package.json` with a `test` script.\n",
        );
    }
    if !ran.problems.is_empty() {
        body.push_str("\n## Not run or not read\n\n");
        for p in &ran.problems {
            body.push_str(&format!("- {p}\n"));
        }
    }
    Page {
        path: "testing/test-execution.md".into(),
        title: "Test execution".into(),
        body,
    }
}

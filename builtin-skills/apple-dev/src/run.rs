//! Running a program through the host's exec import, and turning a build or
//! test run's output into the parsed answer the model reads.

use agent_skill_sdk::exec::{Command, Output};
use agent_skill_sdk::{ErrorKind, ToolError};
use serde_json::{Value, json};

/// Build and test runs may take long; the host caps this at its maximum.
const BUILD_TIMEOUT_MS: u32 = 30 * 60 * 1000;
/// Text kept from a program's raw output in an answer.
const MAX_TEXT: usize = 12_000;
/// Findings listed in an answer (the summary counts them all).
const MAX_FINDINGS: usize = 50;
/// Failed tests listed in an answer.
const MAX_FAILED_TESTS: usize = 50;

/// What to tell the user when `swift` is not on the PATH.
pub const INSTALL_SWIFT: &str = "swift is not installed (or not on PATH): install a Swift \
     toolchain from https://www.swift.org/install/ (on Linux: `swiftly`, or the tarball for your \
     distribution; on macOS: Xcode or the Xcode Command Line Tools), then try again";

/// The command line as shown to the model: `program arg arg`.
pub fn shown(program: &str, args: &[String]) -> String {
    let mut out = program.to_string();
    for a in args {
        out.push(' ');
        if a.contains(' ') || a.is_empty() {
            out.push_str(&format!("'{a}'"));
        } else {
            out.push_str(a);
        }
    }
    out
}

/// Runs `program args` from `cwd` (project-relative). The program not
/// starting is a failure naming it (for `swift`: how to install it).
pub fn run(program: &str, args: &[String], cwd: Option<&str>) -> Result<Output, ToolError> {
    let mut cmd = Command::new(program)
        .args(args.iter())
        .timeout_ms(BUILD_TIMEOUT_MS);
    if let Some(dir) = cwd.filter(|d| *d != ".") {
        cmd = cmd.cwd(dir);
    }
    match cmd.run() {
        Ok(out) => Ok(out),
        Err(e) => match e.kind() {
            ErrorKind::Failed(_) if program == "swift" => Err(ToolError::failed(INSTALL_SWIFT)),
            ErrorKind::Failed(m) => Err(ToolError::failed(format!(
                "`{program}` could not run ({m}); is Xcode installed and selected (`xcode-select -p`)?"
            ))),
            _ => Err(e.into()),
        },
    }
}

/// Cuts `text` to its last [`MAX_TEXT`] bytes (the end of a log says most).
pub fn tail(text: &str) -> String {
    if text.len() <= MAX_TEXT {
        return text.to_string();
    }
    let mut start = text.len() - MAX_TEXT;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    format!("[… {} bytes cut …]\n{}", start, &text[start..])
}

/// Parser options: paths under the project's host directory (when the host
/// tells it, `AGENT_PROJECT_HOST_ROOT`) become project-relative.
pub fn options() -> xcode_log::Options {
    xcode_log::Options {
        project_root: std::env::var(agent_skill_sdk::fs::HOST_ROOT_ENV).ok(),
        ..xcode_log::Options::default()
    }
}

/// The parsed form of a build or test log: summary, findings (Appendix C),
/// failed tests, and counts.
pub fn parsed(report: &xcode_log::Report) -> Value {
    let failed: Vec<&xcode_log::TestResult> = report
        .tests
        .iter()
        .filter(|t| t.status == xcode_log::TestStatus::Failed)
        .take(MAX_FAILED_TESTS)
        .collect();
    json!({
        "summary": report.summary,
        "findings": report.findings.iter().take(MAX_FINDINGS).collect::<Vec<_>>(),
        "findings_listed": report.findings.len().min(MAX_FINDINGS),
        "failed_tests": failed,
        "tests_seen": report.tests.len(),
    })
}

/// Runs a build or test command and answers the parsed log: a failed
/// build is an answer (the model needs its errors), not a tool error.
pub fn build(program: &str, args: Vec<String>, cwd: Option<&str>) -> Result<String, ToolError> {
    let out = run(program, &args, cwd)?;
    let mut log = out.stdout.clone();
    if !out.stderr.is_empty() {
        log.push('\n');
        log.push_str(&out.stderr);
    }
    let report = xcode_log::parse_str(&log, options());
    let mut answer = json!({
        "command": shown(program, &args),
        "exit_code": out.exit_code,
        "succeeded": out.success(),
    });
    if out.timed_out {
        answer["timed_out"] = json!(true);
    }
    if out.truncated {
        answer["output_truncated"] = json!(true);
    }
    if let (Some(a), Value::Object(p)) = (answer.as_object_mut(), parsed(&report)) {
        a.extend(p);
    }
    if !out.success() && report.findings.is_empty() {
        // Nothing parsed: the raw end of the output says what went wrong.
        answer["output_tail"] = json!(tail(&log));
    }
    serde_json::to_string_pretty(&answer).map_err(|e| ToolError::failed(e.to_string()))
}

/// Runs a command whose output is the answer (listing, status); a non-zero
/// exit is a tool error with the program's message.
pub fn plain(program: &str, args: Vec<String>, cwd: Option<&str>) -> Result<String, ToolError> {
    let out = run(program, &args, cwd)?;
    if out.timed_out {
        return Err(ToolError::failed(format!(
            "`{}` timed out",
            shown(program, &args)
        )));
    }
    if !out.success() {
        let code = out
            .exit_code
            .map_or_else(|| "a signal".to_string(), |c| format!("exit code {c}"));
        let msg = if out.stderr.trim().is_empty() {
            out.stdout.trim()
        } else {
            out.stderr.trim()
        };
        return Err(ToolError::failed(format!(
            "`{}` failed ({code}): {}",
            shown(program, &args),
            tail(msg)
        )));
    }
    Ok(tail(&out.stdout))
}

//! `exec`: run a program through the host's `exec` capability (no shell).

use std::path::Path;

use agent_skill_sdk::ToolError;
use agent_skill_sdk::exec::{Command, Output};
use agent_skill_sdk::fs::{self, PROJECT_ROOT};
use serde::Deserialize;

/// Input of `exec` (schema: `schemas/exec.json`).
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The program: a name looked up on `PATH`, or a path.
    pub program: String,
    /// Its arguments, passed as they are.
    #[serde(default)]
    pub args: Vec<String>,
    /// Working directory, relative to the project root (default: the root).
    pub cwd: Option<String>,
    /// Time limit in milliseconds (the host caps it).
    pub timeout_ms: Option<u32>,
}

/// Builds the host request for `input`.
pub fn command(input: &Input) -> Result<Command, ToolError> {
    if input.program.trim().is_empty() {
        return Err(ToolError::invalid_input("`program` is empty"));
    }
    if input.program.contains(char::is_whitespace)
        && !input.program.contains('/')
        && input.args.is_empty()
    {
        return Err(ToolError::invalid_input(format!(
            "`program` is `{}`: there is no shell, so give the program alone and its \
             arguments in `args` (e.g. program \"cargo\", args [\"test\"])",
            input.program
        )));
    }
    let mut command = Command::new(&input.program).args(&input.args);
    if let Some(cwd) = &input.cwd {
        let relative = fs::relative(Path::new(PROJECT_ROOT), cwd)?;
        if relative != "." {
            command = command.cwd(relative);
        }
    }
    if let Some(ms) = input.timeout_ms {
        command = command.timeout_ms(ms);
    }
    Ok(command)
}

/// Runs `exec`. A program that exited (with any code) is an answer; one
/// killed (at the time limit, or by a signal) is a failed call, whose
/// message says how it ended and what it printed.
pub fn run(input: &Input) -> Result<String, ToolError> {
    let output = command(input)?.run()?;
    match output.exit_code {
        Some(_) => Ok(format_output(&output)),
        None => Err(ToolError::failed(format_output(&output))),
    }
}

/// The answer for the model: how the program ended, then its output.
pub fn format_output(output: &Output) -> String {
    let status = match output.exit_code {
        Some(code) => format!("exit code: {code}"),
        None if output.timed_out => "killed at the time limit (no exit code)".to_string(),
        None => "killed by a signal (no exit code)".to_string(),
    };
    let mut out = status;
    out.push('\n');
    for (name, text) in [("stdout", &output.stdout), ("stderr", &output.stderr)] {
        if text.is_empty() {
            out.push_str(&format!("{name}: (empty)\n"));
        } else {
            out.push_str(&format!("{name}:\n{text}"));
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    if output.truncated {
        out.push_str("[output cut at the host's size cap]\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(code: Option<i32>, stdout: &str, stderr: &str) -> Output {
        Output {
            exit_code: code,
            stdout: stdout.into(),
            stderr: stderr.into(),
            truncated: false,
            timed_out: false,
        }
    }

    #[test]
    fn formats_code_and_both_streams() {
        assert_eq!(
            format_output(&output(Some(1), "out", "")),
            "exit code: 1\nstdout:\nout\nstderr: (empty)\n"
        );
        let mut killed = output(None, "", "partial\n");
        killed.timed_out = true;
        killed.truncated = true;
        assert_eq!(
            format_output(&killed),
            "killed at the time limit (no exit code)\nstdout: (empty)\nstderr:\npartial\n\
             [output cut at the host's size cap]\n"
        );
    }

    fn input(program: &str, args: &[&str], cwd: Option<&str>) -> Input {
        Input {
            program: program.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: cwd.map(Into::into),
            timeout_ms: Some(5000),
        }
    }

    #[test]
    fn builds_requests_without_a_shell() {
        let cmd = command(&input("cargo", &["test"], Some("/project/crates/a/")))
            .map_err(|e| e.to_string());
        let expected = Command::new("cargo")
            .arg("test")
            .cwd("crates/a")
            .timeout_ms(5000);
        assert_eq!(cmd, Ok(expected));
        assert_eq!(
            command(&input("ls", &[], Some("."))),
            Ok(Command::new("ls").timeout_ms(5000))
        );
        assert!(
            matches!(command(&input("cargo test", &[], None)), Err(ToolError::InvalidInput(m)) if m.contains("no shell"))
        );
        assert!(matches!(
            command(&input("ls", &[], Some("../.."))),
            Err(ToolError::InvalidInput(_))
        ));
        assert!(matches!(
            command(&input(" ", &[], None)),
            Err(ToolError::InvalidInput(_))
        ));
    }
}

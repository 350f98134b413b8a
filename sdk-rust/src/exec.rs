//! Running programs through the host (permission `shell:exec`).
//!
//! There is no shell: the host runs `program` with `args` as they are, with
//! the working directory inside the project root, a time limit and an
//! output cap. When the manifest lists `exec:` programs, only those may run.
//! The child's environment is empty except `PATH`, `HOME`, `LANG` and the
//! variables passed with [`Command::env`], which need `env:write` and must be
//! named in the manifest's `env:` list.

use std::time::Duration;

use crate::Error;
use crate::host::exec as imp;

/// Runs `program` with `args` from the project root, with the host's default
/// time limit.
///
/// # Errors
///
/// [`Error`] when `shell:exec` is not granted, the program is not in the
/// manifest's allowlist, it could not start, or the request is invalid. A
/// program that runs and exits non-zero is not an error: check
/// [`Output::success`].
///
/// # Example
///
/// ```no_run
/// # fn main() -> Result<(), agent_skill_sdk::Error> {
/// let out = agent_skill_sdk::exec::run("cargo", ["--version"])?;
/// agent_skill_sdk::log::info(&out.stdout);
/// # Ok(()) }
/// ```
pub fn run<I, S>(program: &str, args: I) -> Result<Output, Error>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    Command::new(program).args(args).run()
}

/// A program to run, with its options; [`Command::run`] runs it.
///
/// Defaults: no arguments, the project root as working directory, no extra
/// environment, no standard input, the host's time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    program: String,
    args: Vec<String>,
    cwd: Option<String>,
    env: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    timeout_ms: Option<u32>,
}

impl Command {
    /// A command for `program` (a name looked up on `PATH`, or a path).
    pub fn new(program: impl Into<String>) -> Self {
        Command {
            program: program.into(),
            args: Vec::new(),
            cwd: None,
            env: Vec::new(),
            stdin: None,
            timeout_ms: None,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Adds arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Runs in `dir`, relative to the project root (`/`-separated). Use
    /// [`fs::relative`](crate::fs::relative) to turn a user-given path into
    /// this form.
    pub fn cwd(mut self, dir: impl Into<String>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Sets a variable for the child (needs `env:write`, and the name must be
    /// in the manifest's `env:` list).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Bytes written to the child's standard input.
    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    /// A time limit (the host caps it at its own maximum). Sub-millisecond
    /// parts are dropped; limits above `u32::MAX` milliseconds saturate.
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout_ms = Some(u32::try_from(limit.as_millis()).unwrap_or(u32::MAX));
        self
    }

    /// A time limit in milliseconds (the host caps it at its own maximum).
    pub fn timeout_ms(mut self, ms: u32) -> Self {
        self.timeout_ms = Some(ms);
        self
    }

    /// Runs the program to completion.
    ///
    /// # Errors
    ///
    /// As [`run`].
    pub fn run(&self) -> Result<Output, Error> {
        let request = imp::ExecRequest {
            program: self.program.clone(),
            args: self.args.clone(),
            cwd: self.cwd.clone(),
            env: self.env.clone(),
            stdin: self.stdin.clone(),
            timeout_ms: self.timeout_ms,
        };
        imp::run(&request)
            .map(Output::from)
            .map_err(|e| Error::from_wit("exec", e))
    }
}

/// What a program did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Exit code, or `None` when killed by a signal or at the time limit.
    pub exit_code: Option<i32>,
    /// Standard output as UTF-8 (invalid bytes replaced).
    pub stdout: String,
    /// Standard error as UTF-8 (invalid bytes replaced).
    pub stderr: String,
    /// Whether stdout or stderr was cut at the host's output cap.
    pub truncated: bool,
    /// Whether the program was killed at the time limit.
    pub timed_out: bool,
}

impl Output {
    /// Whether the program exited with code 0.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0)
    }
}

impl From<imp::ExecOutput> for Output {
    fn from(o: imp::ExecOutput) -> Self {
        Output {
            exit_code: o.exit_code,
            stdout: o.stdout,
            stderr: o.stderr,
            truncated: o.truncated,
            timed_out: o.timed_out,
        }
    }
}

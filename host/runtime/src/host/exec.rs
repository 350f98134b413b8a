//! The `exec` import: programs with arguments, no shell, inside the project.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use agent_manifest::{MAX_EXEC_TIMEOUT, Permission, env_write_refusal};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::exec_guard;
use super::exec_path::{self, Unresolved};
use super::{denied, truncate_utf8};
use crate::bindings::agent::skill::exec::{self, ExecOutput, ExecRequest};
use crate::bindings::types::CapabilityError;
use crate::state::HostState;

/// Variables every child gets from the host environment, when set (and
/// `PATH`, without the project's entries: [`exec_path::child_path`]).
const BASE_ENV: [&str; 2] = ["HOME", "LANG"];

impl exec::Host for HostState {
    async fn run(
        &mut self,
        request: ExecRequest,
    ) -> wasmtime::Result<Result<ExecOutput, CapabilityError>> {
        Ok(self.exec(request).await)
    }
}

fn command_line(program: &str, args: &[String]) -> String {
    let mut line = program.to_string();
    for a in args {
        line.push(' ');
        if a.is_empty() || a.contains(char::is_whitespace) {
            line.push_str(&format!("{a:?}"));
        } else {
            line.push_str(a);
        }
    }
    line
}

/// Resolves `cwd` (relative to the root) and checks it stays inside.
pub(crate) fn resolve_inside(root: &Path, rel: Option<&str>) -> Result<PathBuf, CapabilityError> {
    let Some(rel) = rel.filter(|r| !r.is_empty() && *r != ".") else {
        return Ok(root.to_path_buf());
    };
    let rel_path = Path::new(rel.strip_prefix("/project/").unwrap_or(rel));
    if rel_path.is_absolute() {
        return Err(CapabilityError::Invalid(format!(
            "working directory `{rel}` must be relative to the project root"
        )));
    }
    let joined = root.join(rel_path);
    let canonical = joined
        .canonicalize()
        .map_err(|e| CapabilityError::Invalid(format!("working directory `{rel}`: {e}")))?;
    if !canonical.starts_with(root) {
        return Err(CapabilityError::Denied(format!(
            "working directory `{rel}` is outside the project root"
        )));
    }
    Ok(canonical)
}

async fn read_capped<R: AsyncRead + Unpin>(mut reader: R, cap: usize) -> (Vec<u8>, bool) {
    let mut kept = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len());
                if n > room {
                    truncated = true;
                }
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, truncated)
}

/// The time limit of one program: the manifest's `exec_timeout`, else the
/// host's (config `skills.skill_shell_timeout`), never above
/// [`MAX_EXEC_TIMEOUT`], and shorter when the request asks for less.
pub(crate) fn program_limit(
    manifest: Option<Duration>,
    host: Duration,
    requested_ms: Option<u32>,
) -> Duration {
    let limit = manifest.unwrap_or(host).min(MAX_EXEC_TIMEOUT);
    requested_ms
        .map(|ms| Duration::from_millis(u64::from(ms)))
        .map_or(limit, |asked| asked.min(limit))
}

impl HostState {
    /// The checks that need nobody's answer, in order: the program's name,
    /// the manifest's allowlist, variables no program may get, the argument
    /// guard and the program's path. Returns the absolute path to run.
    fn exec_refusal(&self, req: &ExecRequest, line: &str) -> Result<PathBuf, CapabilityError> {
        if req.program.is_empty() || req.program.contains('\0') {
            return Err(CapabilityError::Invalid(
                "program name is empty or contains NUL".into(),
            ));
        }
        if req.program.contains('/') && !Path::new(&req.program).is_absolute() {
            return Err(CapabilityError::Invalid(format!(
                "program `{}` must be a name on PATH or an absolute path",
                req.program
            )));
        }
        // The manifest's allowlist first: a program it does not list is
        // refused without asking anyone.
        if !self
            .skill
            .within_manifest(Permission::ShellExec, &req.program)
        {
            let reason = format!(
                "program `{}` is not in {}'s `exec` allowlist ({})",
                req.program,
                self.skill.name,
                self.skill.exec.join(", ")
            );
            self.record_use("shell:exec", line, "denied: not in exec allowlist");
            return Err(CapabilityError::Denied(reason));
        }
        for (name, _) in &req.env {
            if let Some(why) = env_write_refusal(name) {
                self.record_use("env:write", name, &format!("denied: {why}"));
                return Err(CapabilityError::Denied(format!(
                    "variable `{name}` cannot be passed to programs: {why} (the host refuses it whatever the grants)"
                )));
            }
        }
        if let Some(why) = exec_guard::refusal(&req.program, &req.args) {
            self.record_use("shell:exec", line, &format!("denied: {why}"));
            return Err(CapabilityError::Denied(format!(
                "{why} (refused by the host's argument guard, see docs/permissions.md)"
            )));
        }
        match exec_path::resolve(
            &req.program,
            std::env::var_os("PATH"),
            &self.ctx.project_root,
        ) {
            Ok(path) => Ok(path),
            Err(Unresolved::Refused(why)) => {
                self.record_use("shell:exec", line, &format!("denied: {why}"));
                Err(CapabilityError::Denied(why))
            }
            Err(Unresolved::NotFound(why)) => {
                self.record_use("shell:exec", line, &format!("failed to start: {why}"));
                Err(CapabilityError::Failed(format!(
                    "could not start `{}`: {why}",
                    req.program
                )))
            }
        }
    }

    pub(crate) async fn exec(&mut self, req: ExecRequest) -> Result<ExecOutput, CapabilityError> {
        let path = self.exec_refusal(&req, &command_line(&req.program, &req.args))?;
        // From here on the question, the audit and the run name the file.
        let line = command_line(&path.to_string_lossy(), &req.args);
        if let Some(err) = denied(self.authorize(
            Permission::ShellExec,
            Some(&req.program),
            &format!("run `{line}`"),
        )) {
            return Err(err);
        }
        for (name, _) in &req.env {
            if !self.skill.within_manifest(Permission::EnvWrite, name) {
                let reason = format!(
                    "variable `{name}` is not named in {}'s `env` list",
                    self.skill.name
                );
                self.record_use("env:write", name, "denied: not in env list");
                return Err(CapabilityError::Denied(reason));
            }
            if let Some(err) = denied(self.authorize(
                Permission::EnvWrite,
                Some(name),
                &format!("pass {name} to `{}`", path.display()),
            )) {
                return Err(err);
            }
        }
        self.exec_count += 1;
        if self.exec_count > self.policy.max_exec_per_call {
            return Err(CapabilityError::LimitExceeded(format!(
                "at most {} programs per call",
                self.policy.max_exec_per_call
            )));
        }
        self.spend(crate::Use::Exec, &line)?;
        let cwd = resolve_inside(&self.ctx.project_root, req.cwd.as_deref())?;
        let timeout = self.clamp_to_deadline(program_limit(
            self.skill.exec_timeout,
            self.policy.exec_timeout,
            req.timeout_ms,
        ));

        let mut cmd = tokio::process::Command::new(&path);
        if exec_guard::file_name(&req.program) == "git" {
            cmd.args(exec_guard::GIT_SAFE_CONFIG);
        }
        cmd.args(&req.args)
            .current_dir(&cwd)
            .env_clear()
            .stdin(if req.stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(path) = exec_path::child_path(std::env::var_os("PATH"), &self.ctx.project_root)
        {
            cmd.env("PATH", path);
        }
        for name in BASE_ENV {
            if let Some(v) = std::env::var_os(name) {
                cmd.env(name, v);
            }
        }
        for (k, v) in &req.env {
            cmd.env(k, v);
        }
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => {
                self.record_use("shell:exec", &line, &format!("failed to start: {e}"));
                return Err(CapabilityError::Failed(format!(
                    "could not start `{}`: {e}",
                    path.display()
                )));
            }
        };
        if let (Some(input), Some(mut stdin)) = (req.stdin, child.stdin.take()) {
            tokio::spawn(async move {
                let _ = stdin.write_all(&input).await;
            });
        }
        let cap = self.policy.exec_output_cap;
        let out = child
            .stdout
            .take()
            .map(|s| tokio::spawn(read_capped(s, cap)));
        let err = child
            .stderr
            .take()
            .map(|s| tokio::spawn(read_capped(s, cap)));

        let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
            Ok(status) => (status.ok(), false),
            Err(_) => {
                let _ = child.kill().await;
                (None, true)
            }
        };
        let collect = |h: Option<tokio::task::JoinHandle<(Vec<u8>, bool)>>| async move {
            match h {
                Some(h) => h.await.unwrap_or_default(),
                None => (Vec::new(), false),
            }
        };
        let (stdout, t1) = collect(out).await;
        let (stderr, t2) = collect(err).await;
        let mut stdout = String::from_utf8_lossy(&stdout).into_owned();
        let mut stderr = String::from_utf8_lossy(&stderr).into_owned();
        let t3 = truncate_utf8(&mut stdout, cap) | truncate_utf8(&mut stderr, cap);
        let exit_code = status.and_then(|s| s.code());
        let outcome = match (timed_out, exit_code) {
            (true, _) => format!("timed out after {} ms", timeout.as_millis()),
            (false, Some(c)) => format!("exit {c}"),
            (false, None) => "killed by a signal".to_string(),
        };
        self.record_use("shell:exec", &line, &outcome);
        Ok(ExecOutput {
            exit_code,
            stdout,
            stderr,
            truncated: t1 || t2 || t3,
            timed_out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_sets_the_program_limit_within_the_host_maximum() {
        let s = Duration::from_secs;
        assert_eq!(program_limit(None, s(30), None), s(30));
        assert_eq!(program_limit(Some(s(5)), s(30), None), s(5));
        assert_eq!(program_limit(Some(s(60)), s(30), None), s(60));
        assert_eq!(program_limit(None, s(600), None), MAX_EXEC_TIMEOUT);
        assert_eq!(program_limit(Some(s(5)), s(30), Some(1000)), s(1));
        assert_eq!(program_limit(Some(s(5)), s(30), Some(60_000)), s(5));
    }
}

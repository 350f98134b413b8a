//! The typed `git` and `git-write` imports, run by the host with fixed
//! argument lists (no shell, no arbitrary git commands).

use std::time::Duration;

use agent_manifest::Permission;

use super::denied;
use crate::bindings::agent::skill::git::{self, Commit, FileStatus};
use crate::bindings::agent::skill::git_write;
use crate::bindings::types::CapabilityError;
use crate::state::HostState;

const GIT_TIMEOUT: Duration = Duration::from_secs(60);
const FIELD: char = '\u{1f}';
const RECORD: char = '\u{1e}';

/// Refuses revisions and paths that git would read as options.
fn check_arg(kind: &str, value: &str) -> Result<(), CapabilityError> {
    if value.starts_with('-') || value.contains('\0') || value.is_empty() {
        return Err(CapabilityError::Invalid(format!(
            "{kind} `{value}` is not valid (empty, NUL, or starts with `-`)"
        )));
    }
    Ok(())
}

impl HostState {
    async fn git(
        &mut self,
        perm: Permission,
        args: &[&str],
        detail: &str,
    ) -> Result<String, CapabilityError> {
        if let Some(err) = denied(self.authorize(perm, None, detail)) {
            return Err(err);
        }
        let mut cmd = tokio::process::Command::new("git");
        cmd.args(["-c", "core.quotepath=off", "--no-pager"])
            .args(args)
            .current_dir(&self.ctx.project_root)
            .env("GIT_TERMINAL_PROMPT", "0")
            .kill_on_drop(true);
        let output = match tokio::time::timeout(GIT_TIMEOUT, cmd.output()).await {
            Ok(Ok(o)) => o,
            Ok(Err(e)) => {
                self.record_use(perm.as_str(), detail, "failed to start git");
                return Err(CapabilityError::Failed(format!("could not run git: {e}")));
            }
            Err(_) => {
                self.record_use(perm.as_str(), detail, "timed out");
                return Err(CapabilityError::TimedOut);
            }
        };
        if !output.status.success() {
            self.record_use(perm.as_str(), detail, "git failed");
            return Err(CapabilityError::Failed(format!(
                "git {}: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        self.record_use(perm.as_str(), detail, "ok");
        let mut out = String::from_utf8_lossy(&output.stdout).into_owned();
        if super::truncate_utf8(&mut out, self.policy.exec_output_cap) {
            out.push_str("\n[output cut at the host's cap]");
        }
        Ok(out)
    }
}

impl git::Host for HostState {
    async fn status(&mut self) -> wasmtime::Result<Result<Vec<FileStatus>, CapabilityError>> {
        let out = match self
            .git(
                Permission::GitRead,
                &["status", "--porcelain=v1", "-z"],
                "git status",
            )
            .await
        {
            Ok(o) => o,
            Err(e) => return Ok(Err(e)),
        };
        let mut files = Vec::new();
        let mut entries = out.split('\0').filter(|e| !e.is_empty());
        while let Some(entry) = entries.next() {
            if entry.len() < 4 {
                continue;
            }
            let status = entry[..2].to_string();
            // Renames and copies are followed by their source path.
            if status.starts_with('R') || status.starts_with('C') {
                entries.next();
            }
            files.push(FileStatus {
                path: entry[3..].to_string(),
                status,
            });
        }
        Ok(Ok(files))
    }

    async fn diff(
        &mut self,
        base: Option<String>,
        head: Option<String>,
        paths: Vec<String>,
    ) -> wasmtime::Result<Result<String, CapabilityError>> {
        let mut args: Vec<&str> = vec!["diff", "--no-color", "--no-ext-diff"];
        for rev in [&base, &head].into_iter().flatten() {
            if let Err(e) = check_arg("revision", rev) {
                return Ok(Err(e));
            }
        }
        match (&base, &head) {
            (Some(b), Some(h)) => {
                args.push(b);
                args.push(h);
            }
            (Some(b), None) => args.push(b),
            (None, Some(h)) => {
                args.push("--cached");
                args.push(h);
            }
            (None, None) => {}
        }
        args.push("--");
        args.extend(paths.iter().map(String::as_str));
        Ok(self.git(Permission::GitRead, &args, "git diff").await)
    }

    async fn log(
        &mut self,
        max: u32,
        rev: Option<String>,
    ) -> wasmtime::Result<Result<Vec<Commit>, CapabilityError>> {
        let count = format!("-n{}", max.clamp(1, 1000));
        let format = format!("--format=%H{FIELD}%an{FIELD}%ae{FIELD}%aI{FIELD}%s{FIELD}%B{RECORD}");
        let mut args = vec!["log", count.as_str(), format.as_str()];
        if let Some(r) = &rev {
            if let Err(e) = check_arg("revision", r) {
                return Ok(Err(e));
            }
            args.push(r);
        }
        args.push("--");
        let out = match self.git(Permission::GitRead, &args, "git log").await {
            Ok(o) => o,
            Err(e) => return Ok(Err(e)),
        };
        let commits = out
            .split(RECORD)
            .map(|r| r.trim_start_matches('\n'))
            .filter(|r| !r.is_empty())
            .filter_map(|r| {
                let f: Vec<&str> = r.splitn(6, FIELD).collect();
                (f.len() == 6).then(|| Commit {
                    id: f[0].to_string(),
                    author: f[1].to_string(),
                    email: f[2].to_string(),
                    time: f[3].to_string(),
                    summary: f[4].to_string(),
                    message: f[5].trim_end().to_string(),
                })
            })
            .collect();
        Ok(Ok(commits))
    }

    async fn show(&mut self, rev: String) -> wasmtime::Result<Result<String, CapabilityError>> {
        if let Err(e) = check_arg("revision", &rev) {
            return Ok(Err(e));
        }
        Ok(self
            .git(
                Permission::GitRead,
                &["show", "--no-color", &rev, "--"],
                "git show",
            )
            .await)
    }
}

impl git_write::Host for HostState {
    async fn commit(
        &mut self,
        message: String,
        paths: Vec<String>,
    ) -> wasmtime::Result<Result<String, CapabilityError>> {
        if message.trim().is_empty() {
            return Ok(Err(CapabilityError::Invalid(
                "commit message is empty".into(),
            )));
        }
        let mut args = vec!["commit", "-m", message.as_str()];
        if !paths.is_empty() {
            args.push("--");
            args.extend(paths.iter().map(String::as_str));
        }
        if let Err(e) = self.git(Permission::GitWrite, &args, "git commit").await {
            return Ok(Err(e));
        }
        let id = self
            .git(
                Permission::GitWrite,
                &["rev-parse", "HEAD"],
                "git rev-parse HEAD",
            )
            .await;
        Ok(id.map(|s| s.trim().to_string()))
    }

    async fn branch(
        &mut self,
        name: String,
        start: Option<String>,
    ) -> wasmtime::Result<Result<(), CapabilityError>> {
        if let Err(e) = check_arg("branch name", &name) {
            return Ok(Err(e));
        }
        let mut args = vec!["branch", name.as_str()];
        if let Some(s) = &start {
            if let Err(e) = check_arg("revision", s) {
                return Ok(Err(e));
            }
            args.push(s);
        }
        let detail = format!("git branch {name}");
        Ok(self
            .git(Permission::GitWrite, &args, &detail)
            .await
            .map(|_| ()))
    }
}

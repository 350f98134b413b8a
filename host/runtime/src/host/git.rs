//! The typed `git` and `git-write` imports, run by the host with fixed
//! argument lists (no shell, no arbitrary git commands), in the environment
//! [`git_env`](super::git_env) makes: nothing the repository's or the
//! user's git configuration names is executed.

use std::path::Path;
use std::time::Duration;

use agent_manifest::Permission;

use super::denied;
use super::git_env::{self, Private, Repo};
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

/// Why a git run did not produce output: the audit outcome and the error.
type RunError = (String, CapabilityError);

/// Runs `cmd` within [`GIT_TIMEOUT`]; its stdout when it succeeds.
async fn run(mut cmd: tokio::process::Command, what: &str) -> Result<Vec<u8>, RunError> {
    let output = match tokio::time::timeout(GIT_TIMEOUT, cmd.output()).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            return Err((
                "failed to start git".into(),
                CapabilityError::Failed(format!("could not run git: {e}")),
            ));
        }
        Err(_) => return Err(("timed out".into(), CapabilityError::TimedOut)),
    };
    if !output.status.success() {
        return Err((
            "git failed".into(),
            CapabilityError::Failed(format!(
                "git {what}: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            )),
        ));
    }
    Ok(output.stdout)
}

/// Runs git `args` for a read (`write` false) or a write, as
/// [`git_env`](super::git_env) describes; its stdout and the repository's
/// command-running keys that were ignored.
async fn run_git(
    project_root: &Path,
    write: bool,
    args: &[&str],
) -> Result<(Vec<u8>, Vec<String>), RunError> {
    let what = args.first().copied().unwrap_or("");
    let repo = Repo::discover(project_root).map_err(|e| {
        (
            "not a git repository".to_string(),
            CapabilityError::Failed(format!("git {what}: {e}")),
        )
    })?;
    let private = Private::new().map_err(|e| {
        (
            "failed to start git".to_string(),
            CapabilityError::Failed(format!("could not make git's private directory: {e}")),
        )
    })?;
    let (mut cmd, ignored) = if write {
        let mut list = private.write_command(&repo, project_root, &[], &[]);
        list.args(["config", "--null", "--list", "--includes", "--show-scope"]);
        let entries = git_env::parse_scoped_list(&run(list, "config").await?);
        let ignored = git_env::program_keys(&entries);
        // Includes were followed by the listing; emptying them would only
        // break git, so every other key is overridden.
        let neutralised: Vec<String> = ignored
            .iter()
            .filter(|k| !git_env::is_include(k))
            .cloned()
            .collect();
        // Without the user's global configuration the identity comes from it
        // explicitly; no identity is git's own error at commit time.
        let global = run(git_env::identity_command(&private), "config")
            .await
            .map(|out| git_env::parse_list(&out))
            .unwrap_or_default();
        let identity = git_env::missing_identity(&entries, global);
        let cmd = private.write_command(&repo, project_root, &neutralised, &identity);
        (cmd, ignored)
    } else {
        let config = repo.common_dir.join("config");
        let entries = if config.exists() {
            git_env::parse_list(&run(private.list_file_command(&config), "config").await?)
        } else {
            Vec::new()
        };
        private
            .build_view(&repo, &git_env::data_entries(&entries))
            .map_err(|e| {
                (
                    "failed to start git".to_string(),
                    CapabilityError::Failed(format!("could not prepare the git view: {e}")),
                )
            })?;
        let ignored = git_env::program_keys(&entries);
        (private.read_command(&repo, project_root), ignored)
    };
    cmd.args(args);
    match run(cmd, what).await {
        Ok(out) => Ok((out, ignored)),
        Err((outcome, CapabilityError::Failed(msg))) if !ignored.is_empty() => Err((
            outcome,
            CapabilityError::Failed(format!(
                "{msg} (the host ran git without the repository's configured commands: {}; \
                 if the repository needs them, run this git command yourself)",
                ignored.join(", ")
            )),
        )),
        Err(e) => Err(e),
    }
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
        let write = perm == Permission::GitWrite;
        let (stdout, ignored) = match run_git(&self.ctx.project_root, write, args).await {
            Ok(done) => done,
            Err((outcome, err)) => {
                self.record_use(perm.as_str(), detail, &outcome);
                return Err(err);
            }
        };
        self.record_use(perm.as_str(), detail, &git_env::outcome(&ignored));
        let mut out = String::from_utf8_lossy(&stdout).into_owned();
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
                &[
                    "status",
                    "--porcelain=v1",
                    "-z",
                    "--ignore-submodules=dirty",
                ],
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
        let mut args: Vec<&str> = vec![
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=dirty",
        ];
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
                &[
                    "show",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    &rev,
                    "--",
                ],
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
        let mut args = vec![
            "commit",
            "--quiet",
            "--no-verify",
            "--no-gpg-sign",
            "-m",
            message.as_str(),
        ];
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

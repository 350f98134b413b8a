//! Programs run for a skill that is not a component — a SKILL.md's `!command` lines and
//! bundled scripts — through the very path of the `exec` import: the same checks (program
//! name, allowlist, argument guard, PATH resolution outside the project), the same grant
//! question (`shell:exec:<program>` for that skill), the same budget, time limit, output cap
//! and audit records. Only the caller differs: no component, no WASI context.

use std::sync::Arc;

use agent_manifest::Permission;
use wasmtime::component::ResourceTable;

use crate::bindings::agent::skill::exec::ExecRequest;
use crate::bindings::types::CapabilityError;
use crate::state::{CallContext, HostState, SkillScope};
use crate::{Limits, Runtime};

/// Who a host-run program is for: a skill without a component.
#[derive(Debug, Clone)]
pub struct ProgramSkill {
    /// The skill's name (grants and audit records name it).
    pub name: String,
    /// Hex SHA-256 of the file it was read from (stored grants are bound to it).
    pub digest: String,
    /// The programs it may ask for at all (its `!` lines); empty: none.
    pub programs: Vec<String>,
}

/// A program's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramOutput {
    /// Exit code (`None`: killed by a signal or the timeout).
    pub exit_code: Option<i32>,
    /// Standard output (capped).
    pub stdout: String,
    /// Standard error (capped).
    pub stderr: String,
    /// Whether it ran out of time.
    pub timed_out: bool,
}

/// Why a program did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// Refused by the grants or the host's checks (audited).
    #[error("{0}")]
    Denied(String),
    /// It could not be run (not found, a budget spent, …).
    #[error("{0}")]
    Failed(String),
}

impl Runtime {
    /// Runs `program args` for `skill` in the project root, as the `exec` import would for
    /// a component declaring `shell:exec` with `skill.programs` as its allowlist.
    ///
    /// # Errors
    /// [`ProgramError::Denied`] without the grant (the refusal is audited, and the user
    /// asked when the grants are interactive), [`ProgramError::Failed`] otherwise.
    pub async fn run_program(
        &self,
        ctx: &Arc<CallContext>,
        skill: &ProgramSkill,
        program: &str,
        args: &[String],
    ) -> Result<ProgramOutput, ProgramError> {
        if skill.programs.is_empty() {
            return Err(ProgramError::Denied(format!(
                "{} names no program it may run",
                skill.name
            )));
        }
        let mut state = host_state(ctx, skill, self.limits());
        let req = ExecRequest {
            program: program.to_string(),
            args: args.to_vec(),
            cwd: None,
            env: Vec::new(),
            stdin: None,
            timeout_ms: None,
        };
        match state.exec(req).await {
            Ok(out) => Ok(ProgramOutput {
                exit_code: out.exit_code,
                stdout: out.stdout,
                stderr: out.stderr,
                timed_out: out.timed_out,
            }),
            Err(CapabilityError::Denied(m)) => Err(ProgramError::Denied(m)),
            Err(CapabilityError::Invalid(m))
            | Err(CapabilityError::Failed(m))
            | Err(CapabilityError::LimitExceeded(m)) => Err(ProgramError::Failed(m)),
            #[allow(unreachable_patterns)]
            Err(e) => Err(ProgramError::Failed(format!("{e:?}"))),
        }
    }
}

fn host_state(ctx: &Arc<CallContext>, skill: &ProgramSkill, limits: &Limits) -> HostState {
    let scope = Arc::new(SkillScope {
        name: skill.name.clone(),
        permissions: vec![Permission::ShellExec],
        exec: skill.programs.clone(),
        hosts: Vec::new(),
        env: Vec::new(),
        exec_timeout: None,
        manifest_digest: skill.digest.clone(),
    });
    HostState {
        wasi: wasmtime_wasi::WasiCtxBuilder::new().build(),
        table: ResourceTable::new(),
        limits: wasmtime::StoreLimitsBuilder::new().build(),
        skill: scope.clone(),
        ctx: ctx.clone(),
        policy: limits.clone(),
        file_access: None,
        logs: Vec::new(),
        logs_dropped: 0,
        exec_count: 0,
        http_count: 0,
        llm_count: 0,
        deadline: None,
        stdout: crate::output::CappedOutput::new(limits.output_cap),
        fs_guard: crate::fs_guard::FsGuard {
            policy: ctx.fs.clone(),
            skill: scope.name.clone(),
            authorizer: ctx.authorizer.clone(),
        },
    }
}

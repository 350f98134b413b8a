//! Instantiating a skill in a fresh Store and calling its exports.

use std::sync::Arc;
use std::time::Duration;

use agent_manifest::{Permission, ToolFiles};
use wasmtime::component::{Instance, ResourceTable};
use wasmtime::{Store, StoreLimitsBuilder, Trap};
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

use crate::bindings::prompt::{PromptContext, PromptFragment};
use crate::bindings::scanner::{ScanTarget, ScannerSpec};
use crate::bindings::transform::TransformContext;
use crate::bindings::types::{
    Finding, HookEvent, HookResult, HookSubscription, SkillError, ToolSpec,
};
use crate::bindings::workflow::WorkflowSpec;
use crate::engine::EPOCH_TICK;
use crate::host::truncate_utf8;
use crate::inspect::ExportKind;
use crate::skill::Skill;
use crate::state::{
    CallContext, FileAccess, GUEST_PROJECT_ROOT, HOST_ROOT_ENV, HostState, LogLine,
};
use crate::{Access, Runtime};

/// Why a call into a skill did not produce a result.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The call ran past its time limit and was stopped.
    #[error("skill `{skill}` was stopped: it ran longer than its {limit:?} time limit")]
    Timeout {
        /// Skill name.
        skill: String,
        /// The limit.
        limit: Duration,
    },
    /// The guest tried to grow its memory past the limit.
    #[error(
        "skill `{skill}` was stopped: it tried to use more than its {limit_mib} MiB memory limit"
    )]
    OutOfMemory {
        /// Skill name.
        skill: String,
        /// The limit in MiB.
        limit_mib: usize,
    },
    /// The guest trapped (a panic, `unreachable`, a bad memory access...).
    #[error("skill `{skill}` crashed (trap): {message}")]
    Trap {
        /// Skill name.
        skill: String,
        /// The trap and its guest backtrace.
        message: String,
    },
    /// The component does not export what was called.
    #[error("skill `{skill}` does not export `{export}`")]
    NotExported {
        /// Skill name.
        skill: String,
        /// The missing export.
        export: String,
    },
    /// The instance trapped earlier and cannot be entered again.
    #[error("skill `{skill}`: this instance trapped earlier; a new one is needed")]
    Poisoned {
        /// Skill name.
        skill: String,
    },
    /// Instantiation or host setup failed.
    #[error("skill `{skill}`: {message}")]
    Host {
        /// Skill name.
        skill: String,
        /// What failed.
        message: String,
    },
}

/// How much file access a call may ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileIntent {
    /// No mount: the call asks for no file permission.
    None,
    /// At most a read-only mount (`file:read`).
    Read,
    /// A read-write mount when `file:write` is granted, else read-only.
    Write,
}

/// A tool's output as the host passes it on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The output text (cut at the output cap, with a note).
    pub text: String,
    /// Whether it was cut.
    pub truncated: bool,
}

/// A live instance of one skill in its own Store. Dropping it frees
/// everything; after a trap it refuses further calls.
pub struct SkillInstance<'s> {
    skill: &'s Skill,
    store: Store<HostState>,
    instance: Instance,
    timeout: Duration,
    memory_limit: usize,
    output_cap: usize,
    poisoned: bool,
}

impl Runtime {
    /// Creates a fresh Store for `skill` with a WASI context built from its
    /// grants, and instantiates it.
    ///
    /// File permissions decide the mount of the project root at `/project`
    /// (read-write with `file:write` granted, read-only with `file:read`);
    /// `env:read` decides which of the manifest's `env` variables are set.
    ///
    /// # Errors
    /// [`CallError::Host`] when the skill has no component or instantiation fails.
    pub async fn instantiate<'s>(
        &self,
        skill: &'s Skill,
        ctx: &Arc<CallContext>,
    ) -> Result<SkillInstance<'s>, CallError> {
        self.instantiate_with(skill, ctx, Some(FileIntent::Write))
            .await
    }

    /// Like [`Runtime::instantiate`], asking at most for `intent` file access:
    /// [`FileIntent::Read`] never asks for (nor mounts with) `file:write`.
    ///
    /// # Errors
    /// [`CallError::Host`] when the skill has no component or instantiation fails.
    pub async fn instantiate_for<'s>(
        &self,
        skill: &'s Skill,
        ctx: &Arc<CallContext>,
        intent: FileIntent,
    ) -> Result<SkillInstance<'s>, CallError> {
        self.instantiate_with(skill, ctx, Some(intent)).await
    }

    /// Like [`Runtime::instantiate`] but consults no grants: no files, no
    /// environment. For calls that must not use capabilities (`list-tools`).
    ///
    /// # Errors
    /// [`CallError::Host`] when the skill has no component or instantiation fails.
    pub async fn instantiate_bare<'s>(
        &self,
        skill: &'s Skill,
        ctx: &Arc<CallContext>,
    ) -> Result<SkillInstance<'s>, CallError> {
        self.instantiate_with(skill, ctx, None).await
    }

    async fn instantiate_with<'s>(
        &self,
        skill: &'s Skill,
        ctx: &Arc<CallContext>,
        intent: Option<FileIntent>,
    ) -> Result<SkillInstance<'s>, CallError> {
        let consult_grants = intent.is_some();
        let host_err = |message: String| CallError::Host {
            skill: skill.name().to_string(),
            message,
        };
        let pre = skill
            .pre
            .as_ref()
            .ok_or_else(|| host_err("it has no component to run".into()))?;
        let scope = &skill.scope;
        // Whether `perm` is granted; a decision that could not be recorded (a damaged audit
        // log) fails the call with its reason, rather than running the guest without the
        // mount, where it would only see "file access was not granted".
        let check = |perm: Permission, detail: &str| -> Result<bool, CallError> {
            if !scope.declares(perm) {
                return Ok(false);
            }
            let access = ctx.authorizer.check(&crate::AccessRequest {
                skill: &scope.name,
                manifest: &scope.manifest_digest,
                permission: perm,
                declared: true,
                scope: None,
                detail,
            });
            match access {
                Access::Granted => Ok(true),
                Access::Denied(_) => Ok(false),
                Access::Unrecorded(reason) => Err(host_err(reason)),
            }
        };

        let uses_fs = skill.info.as_ref().is_some_and(|i| i.uses_filesystem());
        let root_display = ctx.project_root.display().to_string();
        let file_access = if !uses_fs || !consult_grants || intent == Some(FileIntent::None) {
            None
        } else if intent == Some(FileIntent::Write)
            && check(
                Permission::FileWrite,
                &format!("read and write files in {root_display}"),
            )?
        {
            Some(FileAccess::ReadWrite)
        } else if check(
            Permission::FileRead,
            &format!("read files in {root_display}"),
        )? {
            Some(FileAccess::ReadOnly)
        } else {
            None
        };

        let stdout = crate::output::CappedOutput::new(self.limits.output_cap);
        let mut wasi = WasiCtxBuilder::new();
        wasi.stdout(stdout.clone()).stderr(stdout.clone());
        // File operations run on the calling thread (see
        // `fs_guard::wasi::BLOCKING_ON_CALLER`: nothing that can block
        // indefinitely is opened).
        wasi.allow_blocking_current_thread(crate::fs_guard::wasi::BLOCKING_ON_CALLER);
        if let Some(platform) = agent_manifest::tool_platform::host_platform() {
            wasi.env(
                agent_manifest::tool_platform::GUEST_PLATFORM_ENV,
                platform.as_str(),
            );
        }
        if let Some(access) = file_access {
            let perms = match access {
                FileAccess::ReadOnly => FsPerms::ReadOnly,
                FileAccess::ReadWrite => FsPerms::ReadWrite,
            };
            wasi.preopened_dir(&ctx.project_root, GUEST_PROJECT_ROOT, perms)
                .map_err(|e| host_err(format!("mounting the project root: {e}")))?;
            wasi.env("PWD", GUEST_PROJECT_ROOT);
            // The project's path on the host, so that the host path a model
            // passes maps onto the mount (agent_skill_sdk::fs::HOST_ROOT_ENV).
            if let Some(host_root) = ctx.project_root.to_str() {
                wasi.env(HOST_ROOT_ENV, host_root);
            }
        }
        // A skill that runs programs in the project without a mount (a
        // tool declared `files: none`) is told the project's host path as
        // well: the programs' output names host paths, which the skill
        // makes project-relative (apple-dev's build logs).
        if file_access.is_none()
            && scope.declares(Permission::ShellExec)
            && let Some(host_root) = ctx.project_root.to_str()
        {
            wasi.env(HOST_ROOT_ENV, host_root);
        }
        if consult_grants && scope.declares(Permission::EnvRead) && !scope.env.is_empty() {
            for name in &scope.env {
                if name == HOST_ROOT_ENV
                    || name == agent_manifest::tool_platform::GUEST_PLATFORM_ENV
                {
                    continue;
                }
                let Ok(value) = std::env::var(name) else {
                    continue;
                };
                let access = ctx.authorizer.check(&crate::AccessRequest {
                    skill: &scope.name,
                    manifest: &scope.manifest_digest,
                    permission: Permission::EnvRead,
                    declared: true,
                    scope: Some(name),
                    detail: &format!("read environment variable {name}"),
                });
                match access {
                    Access::Granted => {
                        wasi.env(name, value);
                    }
                    Access::Denied(_) => {}
                    Access::Unrecorded(reason) => return Err(host_err(reason)),
                }
            }
        }

        let limits = StoreLimitsBuilder::new()
            .memory_size(self.limits.memory)
            .instances(64)
            .tables(64)
            .memories(16)
            .trap_on_grow_failure(true)
            .build();
        let state = HostState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limits,
            skill: scope.clone(),
            ctx: ctx.clone(),
            policy: self.limits.clone(),
            file_access,
            logs: Vec::new(),
            logs_dropped: 0,
            exec_count: 0,
            http_count: 0,
            llm_count: 0,
            deadline: None,
            stdout,
            fs_guard: crate::fs_guard::FsGuard {
                policy: ctx.fs.clone(),
                skill: scope.name.clone(),
                authorizer: ctx.authorizer.clone(),
            },
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        store.epoch_deadline_trap();
        store.set_epoch_deadline(ticks(self.limits.call_timeout));
        let instance = pre.instantiate_async(&mut store).await.map_err(|e| {
            classify(
                skill.name(),
                e,
                self.limits.call_timeout,
                self.limits.memory,
            )
        })?;
        Ok(SkillInstance {
            skill,
            store,
            instance,
            timeout: self.limits.call_timeout,
            memory_limit: self.limits.memory,
            output_cap: self.limits.output_cap,
            poisoned: false,
        })
    }

    /// Instantiates `skill`, calls one tool, and drops the instance.
    ///
    /// Least privilege for files: the manifest's `files` for the tool
    /// decides the mount — `none` (no mount, no file question), `read` (at
    /// most read-only: the default of a tool without `requires_approval`,
    /// which never triggers a `file:write` request) or `write`. A tool the
    /// manifest does not list may write.
    ///
    /// # Errors
    /// See [`SkillInstance::call_tool`].
    pub async fn call_tool(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
        tool: &str,
        input: &str,
    ) -> Result<(Result<ToolOutput, SkillError>, Vec<LogLine>), CallError> {
        // A tool the manifest gates to other platforms (`tools[].platforms`)
        // answers one sentence; its component is not even instantiated.
        let host = agent_manifest::tool_platform::host_platform();
        if let Some(refusal) = agent_manifest::tool_platform::refusal(&skill.manifest, tool, host) {
            return Ok((Err(SkillError::Failed(refusal)), Vec::new()));
        }
        let intent = match skill.manifest.tool(tool).map(|d| d.files) {
            Some(ToolFiles::None) => FileIntent::None,
            Some(ToolFiles::Read) => FileIntent::Read,
            Some(ToolFiles::Write) | None => FileIntent::Write,
        };
        let mut instance = self.instantiate_for(skill, ctx, intent).await?;
        let result = instance.call_tool(tool, input).await?;
        Ok((result, instance.take_logs()))
    }

    /// Instantiates `skill` and lists its tools.
    ///
    /// # Errors
    /// See [`SkillInstance::list_tools`].
    pub async fn list_tools(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
    ) -> Result<Vec<ToolSpec>, CallError> {
        self.instantiate_bare(skill, ctx).await?.list_tools().await
    }
}

impl Runtime {
    /// Instantiates a prompt skill (without capabilities) and asks for its
    /// fragments.
    ///
    /// # Errors
    /// See [`SkillInstance::prompt_fragments`].
    pub async fn prompt_fragments(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
        context: &PromptContext,
    ) -> Result<Vec<PromptFragment>, CallError> {
        self.instantiate_bare(skill, ctx)
            .await?
            .prompt_fragments(context)
            .await
    }

    /// Instantiates `skill` and lists its workflows.
    ///
    /// # Errors
    /// See [`SkillInstance::list_workflows`].
    pub async fn list_workflows(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
    ) -> Result<Vec<WorkflowSpec>, CallError> {
        self.instantiate_bare(skill, ctx)
            .await?
            .list_workflows()
            .await
    }

    /// Instantiates `skill` with its grants and runs one workflow.
    ///
    /// # Errors
    /// See [`SkillInstance::run_workflow`].
    pub async fn run_workflow(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
        name: &str,
        input: &str,
    ) -> Result<(Result<ToolOutput, SkillError>, Vec<LogLine>), CallError> {
        let mut instance = self.instantiate(skill, ctx).await?;
        let result = instance.run_workflow(name, input).await?;
        Ok((result, instance.take_logs()))
    }

    /// Instantiates a transform skill (read-only files at most) and applies
    /// it to `output`.
    ///
    /// # Errors
    /// See [`SkillInstance::transform`].
    pub async fn transform(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
        output: &str,
        context: &TransformContext,
    ) -> Result<Result<String, SkillError>, CallError> {
        self.instantiate_for(skill, ctx, FileIntent::Read)
            .await?
            .transform(output, context)
            .await
    }

    /// Instantiates a hook skill without capabilities and asks for its
    /// subscriptions.
    ///
    /// # Errors
    /// See [`SkillInstance::hook_subscriptions`].
    pub async fn hook_subscriptions(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
    ) -> Result<Vec<HookSubscription>, CallError> {
        self.instantiate_bare(skill, ctx)
            .await?
            .hook_subscriptions()
            .await
    }

    /// Instantiates a hook skill (read-only files at most) and hands it one
    /// event.
    ///
    /// # Errors
    /// See [`SkillInstance::on_event`].
    pub async fn on_event(
        &self,
        skill: &Skill,
        ctx: &Arc<CallContext>,
        event: &HookEvent,
    ) -> Result<Result<HookResult, SkillError>, CallError> {
        self.instantiate_for(skill, ctx, FileIntent::Read)
            .await?
            .on_event(event)
            .await
    }
}

/// How long past the epoch deadline the host waits before cancelling a call
/// stuck in a host import.
const GRACE: Duration = Duration::from_millis(100);

fn ticks(timeout: Duration) -> u64 {
    (timeout.as_millis() / EPOCH_TICK.as_millis()).max(1) as u64 + 1
}

/// The text of a host error as a guest or a model may see it: the error and its causes,
/// one per line. Never `{e:?}`: with `RUST_BACKTRACE` or `RUST_LIB_BACKTRACE` set, that
/// appends the host's stack trace.
pub(crate) fn error_text(e: &wasmtime::Error) -> String {
    let mut text = e.to_string();
    let causes: Vec<String> = e.chain().skip(1).map(ToString::to_string).collect();
    if !causes.is_empty() {
        text.push_str("\n\nCaused by:\n");
        for cause in causes {
            text.push_str("    ");
            text.push_str(&cause);
            text.push('\n');
        }
    }
    text
}

fn classify(skill: &str, e: wasmtime::Error, timeout: Duration, memory: usize) -> CallError {
    if let Some(Trap::Interrupt) = e.downcast_ref::<Trap>() {
        return CallError::Timeout {
            skill: skill.to_string(),
            limit: timeout,
        };
    }
    let message = error_text(&e);
    if message.contains("maximum concurrent") {
        return CallError::Host {
            skill: skill.to_string(),
            message: format!(
                "too many skill instances at once (at most {}); try again when calls finish",
                crate::engine::MAX_INSTANCES
            ),
        };
    }
    if message.contains("forcing trap when growing memory") {
        return CallError::OutOfMemory {
            skill: skill.to_string(),
            limit_mib: memory / (1024 * 1024),
        };
    }
    CallError::Trap {
        skill: skill.to_string(),
        message,
    }
}

/// Enters `$self` for export `$kind` (deadline set, poisoning checked) and
/// loads the typed handle of its `$field` export.
macro_rules! enter_guest {
    ($self:ident, $field:ident, $kind:ident) => {{
        $self.enter(ExportKind::$kind)?;
        let idx = $self
            .skill
            .exports
            .$field
            .as_ref()
            .ok_or_else(|| $self.index_err(ExportKind::$kind))?;
        idx.load(&mut $self.store, &$self.instance)
            .map_err(|e| $self.load_err(e))?
    }};
}

impl SkillInstance<'_> {
    fn enter(&mut self, kind: ExportKind) -> Result<(), CallError> {
        if self.poisoned {
            return Err(CallError::Poisoned {
                skill: self.skill.name().to_string(),
            });
        }
        if !self.skill.exports(kind) {
            return Err(CallError::NotExported {
                skill: self.skill.name().to_string(),
                export: kind.export_name(),
            });
        }
        self.store.set_epoch_deadline(ticks(self.timeout));
        self.store.data_mut().deadline = Some(std::time::Instant::now() + self.timeout);
        Ok(())
    }

    fn fail(&mut self, what: &str, e: wasmtime::Error) -> CallError {
        self.poisoned = true;
        let err = match classify(self.skill.name(), e, self.timeout, self.memory_limit) {
            // A panic's message goes to the guest's stderr: add its tail.
            CallError::Trap { skill, mut message } => {
                let printed = self.printed();
                let tail = printed.trim_end();
                if !tail.is_empty() {
                    let mut start = tail.len().saturating_sub(4096);
                    while !tail.is_char_boundary(start) {
                        start += 1;
                    }
                    message = format!("{}\nguest output:\n{}", message.trim_end(), &tail[start..]);
                }
                CallError::Trap { skill, message }
            }
            other => other,
        };
        self.audit(what, &err);
        err
    }

    fn timed_out(&mut self, what: &str) -> CallError {
        self.poisoned = true;
        let err = CallError::Timeout {
            skill: self.skill.name().to_string(),
            limit: self.timeout,
        };
        self.audit(what, &err);
        err
    }

    /// Records a call the host had to stop (or cut) in the audit log, as a
    /// use of capability `runtime`.
    fn audit(&self, what: &str, err: &CallError) {
        let outcome = match err {
            CallError::Timeout { limit, .. } => format!("stopped: time limit {limit:?}"),
            CallError::OutOfMemory { limit_mib, .. } => {
                format!("stopped: memory limit {limit_mib} MiB")
            }
            CallError::Trap { message, .. } => {
                let first = message.lines().next().unwrap_or_default();
                format!("stopped: trap: {first}")
            }
            other => format!("failed: {other}"),
        };
        self.store
            .data()
            .ctx
            .authorizer
            .record_use(self.skill.name(), "runtime", what, &outcome);
    }

    /// The tools the skill offers.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn list_tools(&mut self) -> Result<Vec<ToolSpec>, CallError> {
        let guest = enter_guest!(self, tool, Tool);
        // The epoch deadline stops wasm code; this also bounds time spent in
        // host imports (a program or request that outlives the call).
        let limit = self.timeout + GRACE;
        let r = tokio::time::timeout(limit, guest.call_list_tools(&mut self.store)).await;
        self.settle("list-tools", r)
    }

    /// Calls tool `name` with JSON `input`. The outer `Result` is the host's
    /// (trap, timeout, memory); the inner one is the tool's own error.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn call_tool(
        &mut self,
        name: &str,
        input: &str,
    ) -> Result<Result<ToolOutput, SkillError>, CallError> {
        let guest = enter_guest!(self, tool, Tool);
        let limit = self.timeout + GRACE;
        let r =
            tokio::time::timeout(limit, guest.call_call_tool(&mut self.store, name, input)).await;
        Ok(match self.settle(name, r)? {
            Ok(text) => Ok(self.cap_output(name, text)),
            Err(e) => Err(self.cap_error(e)),
        })
    }

    /// Turns the outcome of a guarded guest call into the host's answer:
    /// a timeout or a trap poisons the instance and is audited.
    fn settle<T>(
        &mut self,
        what: &str,
        r: Result<wasmtime::Result<T>, tokio::time::error::Elapsed>,
    ) -> Result<T, CallError> {
        match r {
            Err(_) => Err(self.timed_out(what)),
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.fail(what, e)),
        }
    }

    fn index_err(&self, kind: ExportKind) -> CallError {
        CallError::NotExported {
            skill: self.skill.name().to_string(),
            export: kind.export_name(),
        }
    }

    fn load_err(&self, e: wasmtime::Error) -> CallError {
        CallError::Host {
            skill: self.skill.name().to_string(),
            message: format!("{e}"),
        }
    }

    /// The prompt fragments of a prompt skill for `context`.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn prompt_fragments(
        &mut self,
        context: &PromptContext,
    ) -> Result<Vec<PromptFragment>, CallError> {
        let guest = enter_guest!(self, prompt, Prompt);
        let limit = self.timeout + GRACE;
        let r = tokio::time::timeout(limit, guest.call_fragments(&mut self.store, context)).await;
        self.settle("fragments", r)
    }

    /// The workflows of a workflow skill.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn list_workflows(&mut self) -> Result<Vec<WorkflowSpec>, CallError> {
        let guest = enter_guest!(self, workflow, Workflow);
        let limit = self.timeout + GRACE;
        let r = tokio::time::timeout(limit, guest.call_list_workflows(&mut self.store)).await;
        self.settle("list-workflows", r)
    }

    /// Runs workflow `name` with JSON `input`; the inner `Result` is the
    /// workflow's own answer (its output capped like a tool's).
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn run_workflow(
        &mut self,
        name: &str,
        input: &str,
    ) -> Result<Result<ToolOutput, SkillError>, CallError> {
        let guest = enter_guest!(self, workflow, Workflow);
        let limit = self.timeout + GRACE;
        let r = tokio::time::timeout(limit, guest.call_run_workflow(&mut self.store, name, input))
            .await;
        Ok(match self.settle(name, r)? {
            Ok(text) => Ok(self.cap_output(name, text)),
            Err(e) => Err(self.cap_error(e)),
        })
    }

    /// Applies a transform skill to `output`.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn transform(
        &mut self,
        output: &str,
        context: &TransformContext,
    ) -> Result<Result<String, SkillError>, CallError> {
        let guest = enter_guest!(self, transform, Transform);
        let limit = self.timeout + GRACE;
        let r =
            tokio::time::timeout(limit, guest.call_apply(&mut self.store, output, context)).await;
        Ok(match self.settle("apply", r)? {
            Ok(text) => Ok(self.cap_output("apply", text).text),
            Err(e) => Err(self.cap_error(e)),
        })
    }

    /// The scanners of a security-rule skill.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn list_scanners(&mut self) -> Result<Vec<ScannerSpec>, CallError> {
        let guest = enter_guest!(self, scanner, Scanner);
        let limit = self.timeout + GRACE;
        let r = tokio::time::timeout(limit, guest.call_list_scanners(&mut self.store)).await;
        self.settle("list-scanners", r)
    }

    /// Scans one file with scanner `name`.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn scan(
        &mut self,
        name: &str,
        target: &ScanTarget,
    ) -> Result<Result<Vec<Finding>, SkillError>, CallError> {
        let guest = enter_guest!(self, scanner, Scanner);
        let limit = self.timeout + GRACE;
        let r = tokio::time::timeout(limit, guest.call_scan(&mut self.store, name, target)).await;
        Ok(self.settle(name, r)?.map_err(|e| self.cap_error(e)))
    }

    /// The hook phases the skill listens to.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn hook_subscriptions(&mut self) -> Result<Vec<HookSubscription>, CallError> {
        let guest = enter_guest!(self, hooks, Hooks);
        let limit = self.timeout + GRACE;
        let r = tokio::time::timeout(limit, guest.call_subscriptions(&mut self.store)).await;
        self.settle("subscriptions", r)
    }

    /// Hands one hook event to the skill.
    ///
    /// # Errors
    /// A [`CallError`] when the guest traps or runs out of time or memory.
    pub async fn on_event(
        &mut self,
        event: &HookEvent,
    ) -> Result<Result<HookResult, SkillError>, CallError> {
        let guest = enter_guest!(self, hooks, Hooks);
        let limit = self.timeout + GRACE;
        let r = tokio::time::timeout(limit, guest.call_on_event(&mut self.store, event)).await;
        Ok(self.settle("on-event", r)?.map_err(|e| self.cap_error(e)))
    }

    fn cap_output(&self, tool: &str, mut text: String) -> ToolOutput {
        let original = text.len();
        let truncated = truncate_utf8(&mut text, self.output_cap);
        if truncated {
            self.store.data().ctx.authorizer.record_use(
                self.skill.name(),
                "runtime",
                tool,
                &format!("output cut at {} bytes (was {original})", self.output_cap),
            );
            text.push_str(&format!(
                "\n[output truncated: {original} bytes, the cap is {} bytes]",
                self.output_cap
            ));
        }
        ToolOutput { text, truncated }
    }

    fn cap_error(&self, err: SkillError) -> SkillError {
        let cap = |mut s: String| {
            if truncate_utf8(&mut s, self.output_cap) {
                s.push_str(" [truncated]");
            }
            s
        };
        match err {
            SkillError::InvalidInput(s) => SkillError::InvalidInput(cap(s)),
            SkillError::NotFound(s) => SkillError::NotFound(cap(s)),
            SkillError::Denied(s) => SkillError::Denied(cap(s)),
            SkillError::Failed(s) => SkillError::Failed(cap(s)),
        }
    }

    /// The log lines the guest wrote so far (and how many were dropped).
    pub fn take_logs(&mut self) -> Vec<LogLine> {
        let data = self.store.data_mut();
        let mut logs = std::mem::take(&mut data.logs);
        if data.logs_dropped > 0 {
            logs.push(LogLine {
                level: "warn".into(),
                message: format!("{} more log lines were dropped", data.logs_dropped),
            });
        }
        logs
    }

    /// What the guest printed to stdout/stderr (capped).
    pub fn printed(&self) -> String {
        self.store.data().stdout.text()
    }

    /// The file access this instance was given.
    pub fn file_access(&self) -> Option<FileAccess> {
        self.store.data().file_access
    }
}

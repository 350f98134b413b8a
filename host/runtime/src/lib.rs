//! `agent-runtime`: runs skills — signed WebAssembly components — on
//! wasmtime, letting each do exactly what its manifest declares and the user
//! granted.
//!
//! The pipeline: [`SkillPackage`] (manifest + bytes) → [`Runtime::load`]
//! (signature, compile or cached artifact, imports vs permissions, exports
//! vs types, `InstancePre`) → [`Runtime::instantiate`] (a fresh Store per
//! call with a WASI context built from the skill's grants, memory limits and
//! an epoch deadline) → calls to its exports.
//!
//! Grants are decided by an [`Authorizer`] the embedder provides (the
//! binary wires it to the grant store and audit log).
#![deny(missing_docs)]

mod authorizer;
mod bindings;
mod budget;
mod cache;
mod call;
mod component_bytes;
pub mod contract;
mod engine;
mod engine_config;
mod fs_guard;
mod host;
mod host_exec;
pub mod inspect;
mod memo;
mod output;
mod project;
pub mod schema;
mod seal;
mod services;
mod skill;
mod state;

use std::sync::OnceLock;
use std::time::Duration;

use agent_manifest::Permission;
use anyhow::Context;
use wasmtime::Engine;
use wasmtime::component::{HasData, Linker, ResourceTable};

pub use authorizer::GrantsAuthorizer;
pub use bindings::prompt::{PromptContext, PromptFragment};
pub use bindings::scanner::{ScanTarget, ScannerSpec};
pub use bindings::transform::TransformContext;
pub use bindings::types::{
    Confidence as WitConfidence, Finding, HookEvent, HookPhase, HookResult, HookSubscription,
    Location as WitLocation, Message as WitMessage, Role as WitRole, Severity as WitSeverity,
    SkillError, ToolCall as WitToolCall, ToolResult as WitToolResult, ToolSpec,
};
pub use bindings::workflow::WorkflowSpec;
pub use budget::{Budget, BudgetLimits, SkillUses, Use, UseLimit};
pub use cache::{CacheConfig, CacheOutcome, ComponentCache, Rejection};
pub use call::{CallError, FileIntent, SkillInstance, ToolOutput};
pub use component_bytes::{ComponentBytes, inflate};
pub use fs_guard::open_regular;
pub use host::MAX_INVOKE_DEPTH;
pub use host_exec::{ProgramError, ProgramOutput, ProgramSkill};
pub use inspect::{ComponentInfo, ExportKind, ImportInfo, ImportNeed, Mismatch};
pub use services::{BoxFuture, InvokeError, LlmBackend, LlmRequest, LlmRole, SkillInvoker};
pub use skill::{LoadError, Origin, Prebuilt, Signer, Skill, SkillPackage, TrustPolicy, verify};
pub use state::{CallContext, FileAccess, GUEST_PROJECT_ROOT, LogLine, ProjectInfo};

/// A request to use a permission, as the runtime asks it.
#[derive(Debug, Clone, Copy)]
pub struct AccessRequest<'a> {
    /// The skill asking.
    pub skill: &'a str,
    /// Hex SHA-256 of the `SKILL.yaml` it was loaded from: stored grants
    /// apply only to the manifest they were given for.
    pub manifest: &'a str,
    /// The permission.
    pub permission: Permission,
    /// Whether the manifest declares it.
    pub declared: bool,
    /// The precise target: a program, an origin, a variable name.
    pub scope: Option<&'a str>,
    /// What the skill is about to do, for prompts and the audit log.
    pub detail: &'a str,
}

/// The answer to an [`AccessRequest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// Go ahead.
    Granted,
    /// Refused; the text says why and how to grant it.
    Denied(String),
    /// Nothing could be decided because the decision could not be recorded (the audit
    /// log is damaged or cannot be written); the text says what is wrong and what to do.
    /// The call fails with it instead of running on without the permission.
    Unrecorded(String),
}

/// Decides grants and records capability use. Implemented by the binary over
/// the grant store and the audit log.
pub trait Authorizer: Send + Sync {
    /// Decides one request (and audits the decision).
    fn check(&self, request: &AccessRequest<'_>) -> Access;
    /// Records one capability use in the audit log.
    fn record_use(&self, skill: &str, capability: &str, target: &str, outcome: &str);
}

/// Limits applied to every call.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Linear memory per instance, bytes (default 256 MiB).
    pub memory: usize,
    /// Wall time per call into the guest (default 30 s).
    pub call_timeout: Duration,
    /// Largest tool output passed on, bytes (default 1 MiB).
    pub output_cap: usize,
    /// Longest a program may run unless the manifest's `exec_timeout` says
    /// otherwise (the binary sets it from `skills.skill_shell_timeout`;
    /// default 120 s); never above `agent_manifest::MAX_EXEC_TIMEOUT`.
    pub exec_timeout: Duration,
    /// Most bytes kept of a program's stdout and of its stderr (default 1 MiB).
    pub exec_output_cap: usize,
    /// Longest an HTTP request may take (default 30 s).
    pub http_timeout: Duration,
    /// Largest HTTP body kept (default 8 MiB).
    pub http_body_cap: usize,
    /// Programs per call (default 32).
    pub max_exec_per_call: u32,
    /// HTTP requests per call (default 32).
    pub max_http_per_call: u32,
    /// Longest a model request of a skill may take (default 120 s).
    pub llm_timeout: Duration,
    /// Model requests per call (default 8).
    pub max_llm_per_call: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory: engine_config::DEFAULT_MEMORY_LIMIT,
            call_timeout: Duration::from_secs(30),
            output_cap: 1024 * 1024,
            exec_timeout: Duration::from_secs(120),
            exec_output_cap: 1024 * 1024,
            http_timeout: Duration::from_secs(30),
            http_body_cap: 8 * 1024 * 1024,
            max_exec_per_call: 32,
            max_http_per_call: 32,
            llm_timeout: Duration::from_secs(120),
            max_llm_per_call: 8,
        }
    }
}

/// The skill runtime: one engine, one linker, the artifact cache.
pub struct Runtime {
    engine: Engine,
    linker: Linker<state::HostState>,
    cache: ComponentCache,
    limits: Limits,
}

struct HasIo;
impl HasData for HasIo {
    type Data<'a> = &'a mut ResourceTable;
}

fn link(linker: &mut Linker<state::HostState>) -> wasmtime::Result<()> {
    use wasmtime_wasi::cli::WasiCli;
    use wasmtime_wasi::clocks::WasiClocks;
    use wasmtime_wasi::filesystem::WasiFilesystem;
    use wasmtime_wasi::p2::bindings::{cli, clocks, filesystem, random};
    use wasmtime_wasi::random::WasiRandom;
    use wasmtime_wasi::{
        WasiView, cli::WasiCliView, clocks::WasiClocksView, filesystem::WasiFilesystemView,
    };
    type T = state::HostState;

    // WASI 0.2 without sockets (and without wasi:http, which lives elsewhere):
    // skills reach the network only through the `http` import.
    let l = linker;
    wasmtime_wasi_io::bindings::wasi::io::error::add_to_linker::<T, HasIo>(l, |t| t.ctx().table)?;
    wasmtime_wasi_io::bindings::wasi::io::poll::add_to_linker::<T, HasIo>(l, |t| t.ctx().table)?;
    wasmtime_wasi_io::bindings::wasi::io::streams::add_to_linker::<T, HasIo>(l, |t| t.ctx().table)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    filesystem::preopens::add_to_linker::<T, WasiFilesystem>(l, T::filesystem)?;
    // Every `wasi:filesystem/types` call passes the filesystem guard.
    filesystem::types::add_to_linker::<T, fs_guard::wasi::GuardedFs>(l, T::guarded_fs)?;
    random::random::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    random::insecure::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;

    bindings::FullSkill::add_to_linker::<T, wasmtime::component::HasSelf<T>>(l, |s| s)?;
    bindings::v0_1_0::add_to_linker(l)?;
    Ok(())
}

impl Runtime {
    /// Creates the engine (with its epoch ticker), the linker with every
    /// host import, and the artifact cache `cache` says (`None`: no cache).
    ///
    /// # Errors
    /// When the engine cannot be created.
    pub fn new(cache: Option<CacheConfig>, limits: Limits) -> anyhow::Result<Runtime> {
        let engine = engine::build_engine(limits.memory)?;
        let mut linker = Linker::new(&engine);
        link(&mut linker)
            .map_err(anyhow::Error::from)
            .context("linking host imports")?;
        let cache = ComponentCache::new(&engine, cache);
        Ok(Runtime {
            engine,
            linker,
            cache,
            limits,
        })
    }

    /// The limits applied to calls.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The engine (for benchmarks and tooling).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The artifact cache (where an artifact is, for messages and the audit log).
    pub fn cache(&self) -> &ComponentCache {
        &self.cache
    }
}

static HTTP_CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();

impl CallContext {
    /// The shared HTTP client (redirects are handled by the `http` import).
    pub(crate) fn http_client(&self) -> Result<reqwest::Client, String> {
        HTTP_CLIENT
            .get_or_init(|| {
                agent_tls::client_builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .user_agent(concat!("agent/", env!("CARGO_PKG_VERSION")))
                    .build()
                    .map_err(|e| format!("could not create the HTTP client: {e}"))
            })
            .clone()
    }
}

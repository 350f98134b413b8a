//! Shared setup: a sandboxed home and project, the real runtime and the
//! real non-interactive grants over the sandbox's audit log.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use agent_policy::{AllowList, AuditEntry, AuditLog, Grants};
use agent_runtime::{
    CacheConfig, CallContext, CallError, GrantsAuthorizer, Limits, LoadError, Origin, Runtime,
    Skill, SkillError, SkillPackage, ToolOutput, TrustPolicy,
};
use agent_tests::{Sandbox, guest_bytes, tool_manifest, write_skill};
use agent_trust::{SecretKey, TrustStore};

/// Guest packages built so far in this process, with their bytes.
type Built = Vec<(&'static str, Arc<[u8]>)>;

/// The bytes of a guest package, built once per test process.
pub fn guest(package: &'static str) -> Arc<[u8]> {
    static BUILT: Mutex<Built> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, bytes)) = built.iter().find(|(p, _)| *p == package) {
        return Arc::clone(bytes);
    }
    let bytes: Arc<[u8]> = Arc::from(guest_bytes(package));
    built.push((package, Arc::clone(&bytes)));
    bytes
}

/// The hostile test component (unsigned).
pub fn hostile() -> Arc<[u8]> {
    guest("guest-hostile")
}

/// An artifact cache shared by the tests that do not inspect the cache
/// (artifacts are keyed by digest and engine, so sharing is safe), sealed by
/// the key `component-cache.key` next to it.
pub fn shared_cache() -> CacheConfig {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = agent_tests::workspace()
            .join("target")
            .join("agent-tests")
            .join("component-cache");
        std::fs::create_dir_all(&dir).expect("creating the shared component cache");
        dir
    });
    agent_tests::component_cache(dir.clone())
}

/// Serialises loads through the shared cache, so that one test compiles a
/// component and the others find its artifact instead of compiling it again.
static LOAD_LOCK: Mutex<()> = Mutex::new(());

/// One test's world: a sandboxed home and project, a trusted key, the
/// runtime, the grants of a non-interactive run and the call context.
pub struct Harness {
    pub sandbox: Sandbox,
    pub runtime: Runtime,
    pub grants: Arc<Grants>,
    pub ctx: Arc<CallContext>,
    pub key: SecretKey,
    pub trust: TrustPolicy,
}

impl Harness {
    /// A harness with default limits granting `allow` (`--allow` values).
    pub fn new(allow: &[&str]) -> Harness {
        Harness::with_limits(Limits::default(), allow)
    }

    /// A harness with `limits`, granting `allow` (`--allow` values).
    pub fn with_limits(limits: Limits, allow: &[&str]) -> Harness {
        let sandbox = Sandbox::new();
        sandbox
            .paths()
            .ensure_dirs()
            .expect("creating the agent dirs");
        let key = sandbox.trusted_key();
        let store = TrustStore::load(&sandbox.paths().trusted_keys_dir()).expect("trust store");
        let runtime = Runtime::new(Some(shared_cache()), limits).expect("runtime");
        let audit =
            Arc::new(AuditLog::open(sandbox.paths().audit_log_path()).expect("opening audit log"));
        let allow = AllowList::from_flags(allow.iter().copied()).expect("--allow values");
        let grants = Arc::new(Grants::non_interactive(allow, audit));
        let authorizer = Arc::new(GrantsAuthorizer::new(Arc::clone(&grants)));
        let ctx = Arc::new(
            CallContext::new(sandbox.project.path(), "cli", authorizer).expect("call context"),
        );
        Harness {
            sandbox,
            runtime,
            grants,
            ctx,
            key,
            trust: TrustPolicy {
                store,
                builtin_key: None,
                allow_unsigned: false,
            },
        }
    }

    /// The project root on the host (canonical).
    pub fn project(&self) -> &Path {
        &self.ctx.project_root
    }

    /// Writes skill `name` (the hostile component signed by the trusted
    /// key, manifest [`tool_manifest`] + `extra`) and loads it.
    pub fn load_hostile(&self, name: &str, extra: &str) -> Result<Skill, LoadError> {
        self.load_guest(&hostile(), name, extra)
    }

    /// Writes skill `name` with `component` signed by the trusted key and
    /// loads it from its directory as a path skill.
    pub fn load_guest(
        &self,
        component: &[u8],
        name: &str,
        extra: &str,
    ) -> Result<Skill, LoadError> {
        let dir = self.sandbox.home.path().join("skill-src").join(name);
        write_skill(
            &dir,
            &tool_manifest(name, extra),
            component,
            Some(&self.key),
        );
        let pkg = SkillPackage::from_dir(&dir, Origin::Path)?;
        let _guard = LOAD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        self.runtime.load(pkg, &self.trust)
    }

    /// Calls `tool` of `skill` on a fresh instance.
    pub async fn call(
        &self,
        skill: &Skill,
        tool: &str,
        input: serde_json::Value,
    ) -> Result<Result<ToolOutput, SkillError>, CallError> {
        self.runtime
            .call_tool(skill, &self.ctx, tool, &input.to_string())
            .await
            .map(|(result, _logs)| result)
    }

    /// Calls `tool` and expects it to succeed; returns its text.
    pub async fn call_ok(&self, skill: &Skill, tool: &str, input: serde_json::Value) -> String {
        match self.call(skill, tool, input).await {
            Ok(Ok(out)) => {
                assert!(!out.truncated, "unexpected truncation");
                out.text
            }
            other => panic!("`{tool}` should succeed, got {other:?}"),
        }
    }

    /// Calls `tool` and expects the tool itself to fail (no host error).
    pub async fn call_tool_err(
        &self,
        skill: &Skill,
        tool: &str,
        input: serde_json::Value,
    ) -> SkillError {
        match self.call(skill, tool, input).await {
            Ok(Err(e)) => e,
            other => panic!("`{tool}` should fail inside the guest, got {other:?}"),
        }
    }

    /// Every audit entry so far (and the chain verifies).
    pub fn audit(&self) -> Vec<AuditEntry> {
        let path = self.sandbox.paths().audit_log_path();
        AuditLog::verify(&path).expect("the audit log verifies");
        AuditLog::entries(&path).expect("reading the audit log")
    }

    /// The audit entries of `skill` as `(capability, target, decision)`.
    pub fn audit_of(&self, skill: &str) -> Vec<(String, String, String)> {
        self.audit()
            .into_iter()
            .filter(|e| e.skill == skill)
            .map(|e| (e.capability, e.target, e.decision))
            .collect()
    }
}

/// The text of a tool error, whatever its kind.
pub fn skill_error_text(e: &SkillError) -> &str {
    match e {
        SkillError::InvalidInput(s)
        | SkillError::NotFound(s)
        | SkillError::Denied(s)
        | SkillError::Failed(s) => s,
    }
}

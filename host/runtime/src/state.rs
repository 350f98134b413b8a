//! Per-call host state: the WASI context built from the skill's grants,
//! limits, and what the capability imports need to decide.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_manifest::{ManifestList, Permission};
use wasmtime::StoreLimits;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use crate::{Access, AccessRequest, Authorizer, Limits};

/// Where the project is mounted in the guest when file access is granted.
pub const GUEST_PROJECT_ROOT: &str = "/project";

/// The environment variable holding, with the project mount, the project
/// root's canonical path on the host (the Rust SDK's `fs::HOST_ROOT_ENV`):
/// a model passes host paths, the guest maps them onto the mount.
pub const HOST_ROOT_ENV: &str = "AGENT_PROJECT_HOST_ROOT";

/// Facts about the project, computed once per session.
#[derive(Debug, Clone, Default)]
pub struct ProjectInfo {
    /// Directory name.
    pub name: String,
    /// Detected languages, most used first.
    pub languages: Vec<String>,
    /// Detected build system.
    pub build_system: Option<String>,
}

/// Everything calls in one session share: the project, the mode, who decides
/// grants, and each skill's configuration section.
pub struct CallContext {
    /// The project root on the host (canonical).
    pub project_root: PathBuf,
    /// Project facts for the `project` import.
    pub project: ProjectInfo,
    /// `interactive`, `headless`, `wiki`, `security-audit` or `cli`.
    pub mode: String,
    /// Grants and audit.
    pub authorizer: Arc<dyn Authorizer>,
    /// `[skills.config.<name>]` sections, as JSON objects.
    pub skill_config: HashMap<String, serde_json::Value>,
    /// Answers `llm` imports (`None`: no model in this context).
    pub llm: Option<Arc<dyn crate::LlmBackend>>,
    /// Answers `skills.invoke` (`None`: no other skills in this context).
    pub invoker: Option<Arc<dyn crate::SkillInvoker>>,
    /// How many `skills.invoke` calls deep this context is (0 at the top).
    pub depth: u32,
    /// What the filesystem guard protects (see [`CallContext::mask_dirs`]).
    pub(crate) fs: Arc<crate::fs_guard::FsPolicy>,
    /// The per-skill and per-turn budgets of `llm`, `exec` and `http` uses,
    /// shared with nested contexts.
    pub budget: Arc<crate::Budget>,
}

impl CallContext {
    /// A context for `project_root` (canonicalised; project facts detected).
    ///
    /// # Errors
    /// When the root does not exist.
    pub fn new(
        project_root: &std::path::Path,
        mode: &str,
        authorizer: Arc<dyn Authorizer>,
    ) -> anyhow::Result<CallContext> {
        let root = project_root
            .canonicalize()
            .map_err(|e| anyhow::anyhow!("project root {}: {e}", project_root.display()))?;
        let project = crate::project::detect(&root);
        let fs = Arc::new(crate::fs_guard::FsPolicy::new(&root));
        Ok(CallContext {
            fs,
            project_root: root,
            project,
            mode: mode.to_string(),
            authorizer,
            skill_config: HashMap::new(),
            llm: None,
            invoker: None,
            depth: 0,
            budget: Arc::default(),
        })
    }

    /// The context of a skill invoked from this one: everything shared,
    /// one level deeper.
    pub fn nested(&self) -> CallContext {
        CallContext {
            project_root: self.project_root.clone(),
            project: self.project.clone(),
            mode: self.mode.clone(),
            authorizer: self.authorizer.clone(),
            skill_config: self.skill_config.clone(),
            llm: self.llm.clone(),
            invoker: self.invoker.clone(),
            depth: self.depth + 1,
            fs: self.fs.clone(),
            budget: self.budget.clone(),
        }
    }

    /// Masks `dirs` from skills: nothing inside them is opened, read,
    /// stat'ed or changed through the project mount, even when the project
    /// contains them. The binary passes the agent's config, data and cache
    /// directories.
    pub fn mask_dirs(&mut self, dirs: impl IntoIterator<Item = PathBuf>) {
        Arc::make_mut(&mut self.fs).mask(dirs);
    }

    /// The directories masked from skills (made canonical).
    pub fn masked_dirs(&self) -> &[PathBuf] {
        self.fs.masked()
    }
}

/// The slice of a manifest the host imports consult on every use.
#[derive(Debug, Clone)]
pub struct SkillScope {
    /// Skill name.
    pub name: String,
    /// Declared permissions.
    pub permissions: Vec<Permission>,
    /// `exec:` program allowlist (empty: any program).
    pub exec: Vec<String>,
    /// `hosts:` allowlist for net:fetch.
    pub hosts: Vec<agent_manifest::HostPattern>,
    /// `env:` variable names.
    pub env: Vec<String>,
    /// `exec_timeout`: each program's time limit, when the manifest sets it.
    pub exec_timeout: Option<std::time::Duration>,
    /// Hex SHA-256 of the `SKILL.yaml` it was loaded from.
    pub manifest_digest: String,
}

impl SkillScope {
    /// Whether the manifest declares `p`.
    pub fn declares(&self, p: Permission) -> bool {
        self.permissions.contains(&p)
    }

    /// Whether a use of `permission` naming `scope` is within the manifest list the
    /// capability table names for it: `exec` (empty: any program), `hosts` (an origin one
    /// pattern matches), `env`. A permission without a list is not bounded here.
    pub fn within_manifest(&self, permission: Permission, scope: &str) -> bool {
        match permission.capability().manifest_list {
            Some(ManifestList::Exec) => {
                self.exec.is_empty() || self.exec.iter().any(|p| p == scope)
            }
            Some(ManifestList::Hosts) => agent_manifest::Origin::of(scope).is_some_and(|o| {
                self.hosts
                    .iter()
                    .any(|h| h.matches(o.scheme(), o.host(), o.port()))
            }),
            Some(ManifestList::Env) => self.env.iter().any(|n| n == scope),
            None => true,
        }
    }
}

/// One log line a guest wrote.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogLine {
    /// `trace` … `error`.
    pub level: String,
    /// The message.
    pub message: String,
}

/// The data of one Store: one call (or one batch of calls) of one skill.
pub struct HostState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limits: StoreLimits,
    pub(crate) skill: Arc<SkillScope>,
    pub(crate) ctx: Arc<CallContext>,
    pub(crate) policy: Limits,
    pub(crate) file_access: Option<FileAccess>,
    pub(crate) logs: Vec<LogLine>,
    pub(crate) logs_dropped: usize,
    pub(crate) exec_count: u32,
    pub(crate) http_count: u32,
    pub(crate) llm_count: u32,
    /// When the current call must end; host imports clamp their own time
    /// limits to it.
    pub(crate) deadline: Option<std::time::Instant>,
    pub(crate) stdout: crate::output::CappedOutput,
    /// Checks every `wasi:filesystem` call (see [`crate::fs_guard`]).
    pub(crate) fs_guard: crate::fs_guard::FsGuard,
}

impl HostState {
    /// `limit`, shortened to the time left in the current call.
    pub(crate) fn clamp_to_deadline(&self, limit: std::time::Duration) -> std::time::Duration {
        match self.deadline {
            Some(d) => limit.min(d.saturating_duration_since(std::time::Instant::now())),
            None => limit,
        }
    }
}

/// What the WASI filesystem was given for this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAccess {
    /// Project root mounted read-only.
    ReadOnly,
    /// Project root mounted read-write.
    ReadWrite,
}

impl HostState {
    /// The guarded view of the WASI filesystem the linker hands to
    /// `wasi:filesystem/types`.
    pub(crate) fn guarded_fs(&mut self) -> crate::fs_guard::wasi::GuardedFsView<'_> {
        crate::fs_guard::wasi::GuardedFsView {
            inner: wasmtime_wasi::filesystem::WasiFilesystemCtxView {
                ctx: self.wasi.filesystem(),
                table: &mut self.table,
            },
            guard: &self.fs_guard,
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl HostState {
    /// Asks the authorizer whether this skill may use `perm` now.
    pub(crate) fn authorize(&self, perm: Permission, scope: Option<&str>, detail: &str) -> Access {
        self.ctx.authorizer.check(&AccessRequest {
            skill: &self.skill.name,
            manifest: &self.skill.manifest_digest,
            permission: perm,
            declared: self.skill.declares(perm),
            scope,
            detail,
        })
    }

    /// Records a capability use in the audit log.
    pub(crate) fn record_use(&self, capability: &str, target: &str, outcome: &str) {
        self.ctx
            .authorizer
            .record_use(&self.skill.name, capability, target, outcome);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The manifest's lists bound each use as the capability table says: `exec` (empty: any
    /// program), `hosts` (origins compared normalised), `env`; other permissions have no list.
    #[test]
    fn uses_are_bounded_by_the_list_the_table_names() {
        let scope = |exec: &[&str]| SkillScope {
            name: "s".into(),
            permissions: Vec::new(),
            exec: exec.iter().map(|s| s.to_string()).collect(),
            hosts: vec![agent_manifest::HostPattern::parse("https://api.example.com").unwrap()],
            env: vec!["KUBECONFIG".into()],
            exec_timeout: None,
            manifest_digest: String::new(),
        };
        let s = scope(&["git"]);
        assert!(s.within_manifest(Permission::ShellExec, "git"));
        assert!(!s.within_manifest(Permission::ShellExec, "rm"));
        assert!(scope(&[]).within_manifest(Permission::ShellExec, "rm"));
        assert!(s.within_manifest(Permission::NetFetch, "https://API.example.com.:443/v1"));
        assert!(!s.within_manifest(Permission::NetFetch, "https://api.example.com@evil.test/"));
        assert!(!s.within_manifest(Permission::NetFetch, "http://api.example.com/"));
        assert!(s.within_manifest(Permission::EnvWrite, "KUBECONFIG"));
        assert!(!s.within_manifest(Permission::EnvRead, "HOME"));
        assert!(s.within_manifest(Permission::SkillInvoke, "git"));
    }
}

//! The filesystem guard: the one place that decides which host paths a
//! skill's `wasi:filesystem` calls may touch, on top of wasmtime-wasi's
//! mount (read-only or read-write at `/project`).
//!
//! Every `wasi:filesystem/types` call goes through [`wasi::GuardedFs`],
//! which resolves the *real* host path of what the call names (the
//! descriptor's directory through `/proc/self/fd`, the path beneath it with
//! `openat2(RESOLVE_BENEATH)`, so `..`, symlinks and descriptors opened on a
//! subdirectory cannot get around it) and then applies these rules:
//!
//! - **Agent state is masked.** The agent's config, data and cache
//!   directories (and so its keys and user skills) are never opened, read,
//!   stat'ed or changed through the mount, even when the project contains
//!   them (project = home directory). Directory listings still name them.
//! - **`.git` and `.agent/skills` are read-only.** Nothing under a `.git`
//!   component or a `.agent/skills` pair is created, written, truncated,
//!   renamed, removed, linked or re-timed, even with `file:write`: a changed
//!   `.git/config` or hook would run code in the user's next `git` command,
//!   and `.agent/skills/` decides which skills load. A `.agent` entry itself
//!   is never moved, removed or replaced (that would swap the skills
//!   directory).
//! - **Only regular files and directories open.** FIFOs, sockets and devices
//!   are refused, checked on an `O_PATH` handle before anything that could
//!   block, and files are then opened through that same handle with
//!   `O_NONBLOCK` (no check-then-open race): an open never blocks the
//!   runtime thread past the call's deadline.
//! - **Symlinks stay inside.** A new symlink's target must not be absolute,
//!   must stay inside the mount lexically and, when it exists, physically,
//!   and must not lead into agent state.
//!
//! Every refusal is audited (`file:read` or `file:write`, the guest path,
//! `denied: …`) and reaches the guest as an error code: `EACCES` for masked
//! paths and non-regular files, `EROFS` for read-only areas, `EPERM` for
//! symlinks leading outside.

mod sys;
pub(crate) mod wasi;

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::Authorizer;
use crate::state::GUEST_PROJECT_ROOT;

pub use sys::open_regular;

/// What the guard protects in one session: the project root and the agent's
/// own directories. Built once per [`crate::CallContext`].
#[derive(Debug, Clone, Default)]
pub struct FsPolicy {
    root: PathBuf,
    private: Vec<PathBuf>,
}

/// What a call wants to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// Open for reading, stat, read a link.
    Read,
    /// Create or change contents or metadata.
    Write,
    /// Remove, rename (either side) or replace the entry itself.
    Replace,
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Inside the agent's own directories.
    AgentState(PathBuf),
    /// Under a `.git` component.
    GitMetadata,
    /// Under `.agent/skills`.
    SkillsDir,
    /// A `.agent` entry moved, removed or replaced.
    AgentDir,
    /// A FIFO, socket or device.
    NotRegular(&'static str),
    /// A symlink whose target leaves the mount.
    SymlinkOutside(String),
    /// A symlink into the agent's own directories.
    SymlinkIntoAgentState(String),
}

impl Refusal {
    /// The audit text for `path` (a guest path).
    pub(crate) fn describe(&self, path: &str) -> String {
        match self {
            Refusal::AgentState(dir) => format!(
                "denied: {path} is inside agent's own state ({}); skills never see it",
                dir.display()
            ),
            Refusal::GitMetadata => format!(
                "denied: {path} is git metadata, read-only to skills (a changed .git/config or hook would run code in the user's next git command)"
            ),
            Refusal::SkillsDir => format!(
                "denied: {path} is in the project's .agent/skills, read-only to skills (it decides which skills load)"
            ),
            Refusal::AgentDir => format!(
                "denied: {path} holds the project's skills; skills cannot move, remove or replace it"
            ),
            Refusal::NotRegular(kind) => format!(
                "denied: {path} is a {kind}; skills may open only regular files and directories"
            ),
            Refusal::SymlinkOutside(target) => format!(
                "denied: symlink {path} -> {target} would point outside {GUEST_PROJECT_ROOT}"
            ),
            Refusal::SymlinkIntoAgentState(target) => {
                format!("denied: symlink {path} -> {target} would point into agent's own state")
            }
        }
    }
}

impl FsPolicy {
    /// A policy for the (canonical) project `root`, masking nothing yet.
    pub(crate) fn new(root: &Path) -> FsPolicy {
        FsPolicy {
            root: root.to_path_buf(),
            private: Vec::new(),
        }
    }

    /// Adds directories that skills must never reach (the agent's config,
    /// data and cache directories). Each is made canonical as far as it
    /// exists, so a symlinked home still matches.
    pub(crate) fn mask(&mut self, dirs: impl IntoIterator<Item = PathBuf>) {
        for dir in dirs {
            let dir = canonical_prefix(&dir);
            if !self.private.contains(&dir) {
                self.private.push(dir);
            }
        }
    }

    /// The masked directories.
    pub fn masked(&self) -> &[PathBuf] {
        &self.private
    }

    /// The project root on the host.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `intent` on the host path `real` is allowed.
    pub(crate) fn check(&self, real: &Path, intent: Intent) -> Result<(), Refusal> {
        if let Some(dir) = self.private.iter().find(|p| real.starts_with(p)) {
            return Err(Refusal::AgentState(dir.clone()));
        }
        if intent == Intent::Read {
            return Ok(());
        }
        let Ok(rel) = real.strip_prefix(&self.root) else {
            return Ok(());
        };
        let names: Vec<&OsStr> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        if names.iter().any(|n| *n == ".git") {
            return Err(Refusal::GitMetadata);
        }
        if names
            .windows(2)
            .any(|w| w[0] == ".agent" && w[1] == "skills")
        {
            return Err(Refusal::SkillsDir);
        }
        if intent == Intent::Replace && names.last().is_some_and(|n| *n == ".agent") {
            return Err(Refusal::AgentDir);
        }
        Ok(())
    }

    /// Checks a new symlink at host path `link` (whose parent is real)
    /// pointing at `target`; `resolved` is the target's physical resolution
    /// beneath the root when it exists (`None`: dangling).
    pub(crate) fn check_symlink(
        &self,
        link: &Path,
        target: &str,
        resolved: Option<&Path>,
    ) -> Result<(), Refusal> {
        let outside = || Refusal::SymlinkOutside(target.to_string());
        if Path::new(target).is_absolute() {
            return Err(outside());
        }
        let mut lexical = link.parent().ok_or_else(outside)?.to_path_buf();
        for c in Path::new(target).components() {
            match c {
                Component::Normal(n) => lexical.push(n),
                Component::ParentDir => {
                    if !lexical.pop() {
                        return Err(outside());
                    }
                }
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => return Err(outside()),
            }
        }
        if !lexical.starts_with(&self.root) {
            return Err(outside());
        }
        for path in std::iter::once(lexical.as_path()).chain(resolved) {
            if !path.starts_with(&self.root) {
                return Err(outside());
            }
            if self.private.iter().any(|p| path.starts_with(p)) {
                return Err(Refusal::SymlinkIntoAgentState(target.to_string()));
            }
        }
        Ok(())
    }

    /// The guest's name for host path `real` (`/project/...`).
    pub(crate) fn guest_path(&self, real: &Path) -> String {
        match real.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => GUEST_PROJECT_ROOT.to_string(),
            Ok(rel) => format!("{GUEST_PROJECT_ROOT}/{}", rel.display()),
            Err(_) => real.display().to_string(),
        }
    }
}

/// `path` with its longest existing ancestor made canonical.
fn canonical_prefix(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = path.to_path_buf();
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut out = c;
            out.extend(rest.iter().rev());
            return out;
        }
        match (cur.file_name().map(|n| n.to_os_string()), cur.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                cur = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The per-instance guard: the session's policy and who to audit.
pub(crate) struct FsGuard {
    pub(crate) policy: Arc<FsPolicy>,
    pub(crate) skill: String,
    pub(crate) authorizer: Arc<dyn Authorizer>,
}

impl FsGuard {
    /// Audits a refusal of `intent` on host path `real`.
    pub(crate) fn audit(&self, real: &Path, intent: Intent, refusal: &Refusal) {
        let path = self.policy.guest_path(real);
        let capability = match intent {
            Intent::Read => "file:read",
            Intent::Write | Intent::Replace => "file:write",
        };
        tracing::warn!(skill = %self.skill, "{}", refusal.describe(&path));
        self.authorizer
            .record_use(&self.skill, capability, &path, &refusal.describe(&path));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> FsPolicy {
        let mut p = FsPolicy::new(Path::new("/home/u"));
        p.private.push(PathBuf::from("/home/u/.config/agent"));
        p
    }

    #[test]
    fn agent_state_is_refused_for_every_intent() {
        let p = policy();
        for intent in [Intent::Read, Intent::Write, Intent::Replace] {
            assert!(matches!(
                p.check(Path::new("/home/u/.config/agent/config.toml"), intent),
                Err(Refusal::AgentState(_))
            ));
        }
        assert_eq!(
            p.check(Path::new("/home/u/.config/agentx"), Intent::Read),
            Ok(())
        );
    }

    #[test]
    fn git_and_skills_are_read_only_but_readable() {
        let p = policy();
        assert_eq!(
            p.check(Path::new("/home/u/.git/config"), Intent::Read),
            Ok(())
        );
        assert_eq!(
            p.check(Path::new("/home/u/sub/.git/hooks/x"), Intent::Write),
            Err(Refusal::GitMetadata)
        );
        assert_eq!(
            p.check(Path::new("/home/u/.agent/skills"), Intent::Write),
            Err(Refusal::SkillsDir)
        );
        assert_eq!(
            p.check(Path::new("/home/u/.gitignore"), Intent::Write),
            Ok(())
        );
        assert_eq!(p.check(Path::new("/home/u/.agent"), Intent::Write), Ok(()));
        assert_eq!(
            p.check(Path::new("/home/u/.agent"), Intent::Replace),
            Err(Refusal::AgentDir)
        );
    }

    #[test]
    fn symlink_targets_must_stay_inside() {
        let p = policy();
        let link = Path::new("/home/u/sub/l");
        assert_eq!(p.check_symlink(link, "../x", None), Ok(()));
        assert_eq!(p.check_symlink(link, "a/../b", None), Ok(()));
        assert!(matches!(
            p.check_symlink(link, "../../etc/passwd", None),
            Err(Refusal::SymlinkOutside(_))
        ));
        assert!(matches!(
            p.check_symlink(link, "/etc/passwd", None),
            Err(Refusal::SymlinkOutside(_))
        ));
        assert!(matches!(
            p.check_symlink(link, "../.config/agent/keys", None),
            Err(Refusal::SymlinkIntoAgentState(_))
        ));
        assert!(matches!(
            p.check_symlink(link, "x", Some(Path::new("/etc"))),
            Err(Refusal::SymlinkOutside(_))
        ));
    }
}

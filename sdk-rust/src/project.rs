//! Facts about the project the agent runs in. Always available, no
//! permission needed, and infallible (the host always answers).

use std::path::PathBuf;

use crate::host::project as imp;

/// The project directory's name (the last component of its path).
pub fn name() -> String {
    imp::name()
}

/// Where the project root is mounted in the guest (`/project`) when the skill
/// has file access in this call (`file:read` or `file:write` granted), or
/// `None` without it. See [`fs`](crate::fs).
pub fn guest_root() -> Option<PathBuf> {
    imp::guest_root().map(PathBuf::from)
}

/// Languages detected in the project, most used first, lower-case (`rust`,
/// `python`, `typescript`, ...).
pub fn languages() -> Vec<String> {
    imp::languages()
}

/// The build system detected from marker files (`cargo`, `npm`, `go`,
/// `xcode`, `swiftpm`, `maven`, ...), if any.
pub fn build_system() -> Option<String> {
    imp::build_system()
}

/// The mode the agent runs in: `interactive`, `headless`, `wiki`,
/// `security-audit` or `cli`.
pub fn mode() -> String {
    imp::mode()
}

/// How the project root is mounted for this call (contract 0.2.0).
pub use crate::wit::tool_skill::agent::skill::project::MountMode;

/// How the project root is mounted at [`guest_root`] for this call:
/// [`MountMode::None`] (no file access), [`MountMode::ReadOnly`] (`file:read`,
/// or a call that may only read: a tool declared `requires_approval: false`,
/// a transform, a hook event, a scanner) or [`MountMode::ReadWrite`]
/// (`file:write` granted for a call that may write). Ask before writing
/// instead of failing on the first write.
pub fn mount() -> MountMode {
    imp::mount()
}

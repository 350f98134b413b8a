//! The ten permissions a skill can declare.

use std::fmt;
use std::str::FromStr;

/// A permission a skill declares in its manifest and a user grants.
///
/// Each maps onto a real capability in the runtime (see `docs/permissions.md`):
/// a WASI preopen, an environment allowlist, or a WIT host import that is
/// usable only when the permission is declared and granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Permission {
    /// Project root preopened read-only.
    FileRead,
    /// Project root preopened read-write.
    FileWrite,
    /// The `exec` import (programs from the manifest's `exec` allowlist).
    ShellExec,
    /// The `http` import (hosts from the manifest's `hosts` allowlist).
    NetFetch,
    /// The `llm` import.
    LlmCall,
    /// The `git` import (status, diff, log, show).
    GitRead,
    /// The `git-write` import (commit, branch).
    GitWrite,
    /// The variables named in the manifest's `env` list, in the WASI environment.
    EnvRead,
    /// Passing the variables named in the manifest's `env` list to `exec` children.
    EnvWrite,
    /// The `skills` import (calling other skills).
    SkillInvoke,
}

impl Permission {
    /// Every permission, in documentation order.
    pub const ALL: [Permission; 10] = [
        Permission::FileRead,
        Permission::FileWrite,
        Permission::ShellExec,
        Permission::NetFetch,
        Permission::LlmCall,
        Permission::GitRead,
        Permission::GitWrite,
        Permission::EnvRead,
        Permission::EnvWrite,
        Permission::SkillInvoke,
    ];

    /// The manifest spelling, e.g. `file:read`.
    pub fn as_str(self) -> &'static str {
        match self {
            Permission::FileRead => "file:read",
            Permission::FileWrite => "file:write",
            Permission::ShellExec => "shell:exec",
            Permission::NetFetch => "net:fetch",
            Permission::LlmCall => "llm:call",
            Permission::GitRead => "git:read",
            Permission::GitWrite => "git:write",
            Permission::EnvRead => "env:read",
            Permission::EnvWrite => "env:write",
            Permission::SkillInvoke => "skill:invoke",
        }
    }

    /// One line on what the permission lets a skill do, for prompts and `inspect`.
    pub fn describe(self) -> &'static str {
        match self {
            Permission::FileRead => "read files inside the project (read-only mount)",
            Permission::FileWrite => "create, change and delete files inside the project",
            Permission::ShellExec => "run programs (no shell) inside the project",
            Permission::NetFetch => "make HTTP requests to the hosts it lists",
            Permission::LlmCall => "call the configured model (uses tokens)",
            Permission::GitRead => "read git status, diffs and history",
            Permission::GitWrite => "create git commits and branches",
            Permission::EnvRead => "read the environment variables it names",
            Permission::EnvWrite => "pass the environment variables it names to programs it runs",
            Permission::SkillInvoke => "call other skills (which run with their own grants)",
        }
    }
}

impl fmt::Display for Permission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The error for a string that names no permission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPermission(pub String);

impl fmt::Display for UnknownPermission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown permission `{}` (expected one of: {})",
            self.0,
            Permission::ALL.map(Permission::as_str).join(", ")
        )
    }
}

impl std::error::Error for UnknownPermission {}

impl FromStr for Permission {
    type Err = UnknownPermission;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Permission::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownPermission(s.to_string()))
    }
}

impl serde::Serialize for Permission {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Permission {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_permission_round_trips_through_its_spelling() {
        for p in Permission::ALL {
            assert_eq!(p.as_str().parse::<Permission>(), Ok(p));
        }
    }

    #[test]
    fn unknown_permission_lists_the_valid_ones() {
        let err = "shell:execute".parse::<Permission>().unwrap_err();
        assert!(err.to_string().contains("`shell:execute`"));
        assert!(err.to_string().contains("shell:exec"));
    }
}

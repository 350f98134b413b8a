//! The versions of the `agent:skill` WIT contract this host links.
//!
//! `wit/` holds the latest contract; every older one is frozen as published
//! under `wit/<version>/` and served through an adapter into the latest
//! types (`bindings::v0_1_0`). A component is bound to exactly one version,
//! read from the names of its `agent:skill/…` imports and exports. Nothing
//! else in the workspace spells a version: ask this module.

use serde::Serialize;

/// The WIT package name, without version.
pub const PACKAGE: &str = "agent:skill";

/// One version of the contract.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Version {
    /// `agent:skill@0.1.0`, the first published contract (frozen in
    /// `wit/0.1.0/`).
    #[serde(rename = "0.1.0")]
    V0_1_0,
    /// `agent:skill@0.2.0`: adds `project.mount` and the `hook` skill
    /// type.
    #[serde(rename = "0.2.0")]
    V0_2_0,
}

/// `agent:skill@0.1.0`.
pub const V0_1_0: Version = Version::V0_1_0;
/// `agent:skill@0.2.0`.
pub const V0_2_0: Version = Version::V0_2_0;
/// The contract in `wit/`, which the host implements natively.
pub const LATEST: Version = V0_2_0;
/// Every version this host links, oldest first.
pub const SUPPORTED: [Version; 2] = [V0_1_0, V0_2_0];

impl Version {
    /// The version number, e.g. `0.2.0`.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V0_1_0 => "0.1.0",
            Version::V0_2_0 => "0.2.0",
        }
    }

    /// The supported version spelled `number`, if any.
    pub fn parse(number: &str) -> Option<Version> {
        SUPPORTED.into_iter().find(|v| v.as_str() == number)
    }

    /// The full name of interface `iface` in this version, e.g.
    /// `agent:skill/exec@0.2.0`.
    pub fn interface(self, iface: &str) -> String {
        format!("{PACKAGE}/{iface}@{}", self.as_str())
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{PACKAGE}@{}", self.as_str())
    }
}

/// The supported versions for a message: `agent:skill@0.1.0, agent:skill@0.2.0`.
pub fn supported_list() -> String {
    SUPPORTED
        .iter()
        .map(Version::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Splits an `agent:skill/…` name into interface and version number
/// (`""` when the name has none). `None` for names outside the package.
pub fn split_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(PACKAGE)?.strip_prefix('/')?;
    Some(rest.split_once('@').unwrap_or((rest, "")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_built_from_one_constant_per_version() {
        assert_eq!(V0_1_0.interface("exec"), "agent:skill/exec@0.1.0");
        assert_eq!(LATEST.interface("tool"), "agent:skill/tool@0.2.0");
        assert_eq!(Version::parse("0.1.0"), Some(V0_1_0));
        assert_eq!(Version::parse("0.3.0"), None);
        assert_eq!(split_name("agent:skill/log@0.1.0"), Some(("log", "0.1.0")));
        assert_eq!(split_name("wasi:cli/stdout@0.2.0"), None);
        assert_eq!(supported_list(), "agent:skill@0.1.0, agent:skill@0.2.0");
    }
}

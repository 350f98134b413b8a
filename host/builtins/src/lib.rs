//! `agent-builtins`: the built-in skills, compiled to components and signed
//! by `build.rs` with a key generated for that build (its private half is
//! discarded), embedded in the binary, and verified on every load like any
//! other skill.
#![deny(missing_docs)]

use agent_trust::PublicKey;

/// One built-in skill.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// The skill's name.
    pub name: &'static str,
    /// Its SKILL.yaml text.
    pub manifest: &'static str,
    /// The signed component.
    pub component: &'static [u8],
}

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "core-tools",
        manifest: include_str!("../../../builtin-skills/core-tools/SKILL.yaml"),
        component: include_bytes!(concat!(env!("OUT_DIR"), "/core_tools.wasm")),
    },
    Builtin {
        name: "git",
        manifest: include_str!("../../../builtin-skills/git/SKILL.yaml"),
        component: include_bytes!(concat!(env!("OUT_DIR"), "/git_skill.wasm")),
    },
    Builtin {
        name: "security-base",
        manifest: include_str!("../../../builtin-skills/security-base/SKILL.yaml"),
        component: include_bytes!(concat!(env!("OUT_DIR"), "/security_base.wasm")),
    },
];

/// Every built-in skill.
pub fn all() -> &'static [Builtin] {
    BUILTINS
}

/// The public key that signed the built-ins of this binary.
///
/// # Errors
/// When the key embedded at build time does not parse (a corrupted build):
/// nothing else is trusted in its place.
pub fn public_key() -> Result<PublicKey, agent_trust::TrustError> {
    let text = include_str!(concat!(env!("OUT_DIR"), "/builtin.pub"));
    PublicKey::parse(text).map(|(key, _)| key)
}

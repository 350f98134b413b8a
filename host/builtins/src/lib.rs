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
    /// The files its SKILL.yaml names (path relative to the skill, bytes),
    /// `SKILL.yaml` included, as they were signed.
    pub files: &'static [(&'static str, &'static [u8])],
    /// The signed component, zlib-compressed (`agent_runtime::ComponentBytes::Deflated`).
    pub component: &'static [u8],
    /// SHA-256 of the component's unsigned bytes, checked against the
    /// signature when the binary was built.
    pub digest: [u8; 32],
    /// The component compiled to native code when the binary was built,
    /// with the runtime's engine configuration, zlib-compressed: core-tools only (the first
    /// tool call of a fresh home); `None` for the others, which are compiled
    /// at first use into the sealed cache, and for all when the binary was
    /// cross-compiled.
    pub precompiled: Option<&'static [u8]>,
}

include!(concat!(env!("OUT_DIR"), "/builtin_files.rs"));

const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "core-tools",
        manifest: include_str!(concat!(env!("OUT_DIR"), "/core_tools/SKILL.yaml")),
        files: CORE_TOOLS_FILES,
        component: CORE_TOOLS_COMPONENT,
        digest: CORE_TOOLS_DIGEST,
        precompiled: CORE_TOOLS_PRECOMPILED,
    },
    Builtin {
        name: "git",
        manifest: include_str!(concat!(env!("OUT_DIR"), "/git_skill/SKILL.yaml")),
        files: GIT_SKILL_FILES,
        component: GIT_SKILL_COMPONENT,
        digest: GIT_SKILL_DIGEST,
        precompiled: GIT_SKILL_PRECOMPILED,
    },
    Builtin {
        name: "security-base",
        manifest: include_str!(concat!(env!("OUT_DIR"), "/security_base/SKILL.yaml")),
        files: SECURITY_BASE_FILES,
        component: SECURITY_BASE_COMPONENT,
        digest: SECURITY_BASE_DIGEST,
        precompiled: SECURITY_BASE_PRECOMPILED,
    },
    Builtin {
        name: "log-analysis",
        manifest: include_str!(concat!(env!("OUT_DIR"), "/log_analysis_skill/SKILL.yaml")),
        files: LOG_ANALYSIS_SKILL_FILES,
        component: LOG_ANALYSIS_SKILL_COMPONENT,
        digest: LOG_ANALYSIS_SKILL_DIGEST,
        precompiled: LOG_ANALYSIS_SKILL_PRECOMPILED,
    },
    Builtin {
        name: "code-review",
        manifest: include_str!(concat!(env!("OUT_DIR"), "/code_review/SKILL.yaml")),
        files: CODE_REVIEW_FILES,
        component: CODE_REVIEW_COMPONENT,
        digest: CODE_REVIEW_DIGEST,
        precompiled: CODE_REVIEW_PRECOMPILED,
    },
    Builtin {
        name: "security-deep",
        manifest: include_str!(concat!(env!("OUT_DIR"), "/security_deep_skill/SKILL.yaml")),
        files: SECURITY_DEEP_SKILL_FILES,
        component: SECURITY_DEEP_SKILL_COMPONENT,
        digest: SECURITY_DEEP_SKILL_DIGEST,
        precompiled: SECURITY_DEEP_SKILL_PRECOMPILED,
    },
    Builtin {
        name: "apple-dev",
        manifest: include_str!(concat!(env!("OUT_DIR"), "/apple_dev/SKILL.yaml")),
        files: APPLE_DEV_FILES,
        component: APPLE_DEV_COMPONENT,
        digest: APPLE_DEV_DIGEST,
        precompiled: APPLE_DEV_PRECOMPILED,
    },
    Builtin {
        name: "wiki-base",
        manifest: include_str!(concat!(env!("OUT_DIR"), "/wiki_base_skill/SKILL.yaml")),
        files: WIKI_BASE_SKILL_FILES,
        component: WIKI_BASE_SKILL_COMPONENT,
        digest: WIKI_BASE_SKILL_DIGEST,
        precompiled: WIKI_BASE_SKILL_PRECOMPILED,
    },
];

/// Every built-in skill.
pub fn all() -> &'static [Builtin] {
    BUILTINS
}

impl Builtin {
    /// The files its manifest names besides `SKILL.yaml` (path, bytes).
    pub fn named_files(&self) -> impl Iterator<Item = (&'static str, &'static [u8])> {
        self.files
            .iter()
            .copied()
            .filter(|(path, _)| *path != "SKILL.yaml")
    }
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

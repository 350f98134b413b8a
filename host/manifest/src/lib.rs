//! `agent-manifest`: the `SKILL.yaml` manifest — parsing, validation with
//! errors that name the file, field and line, and the permission vocabulary.
//!
//! A skill is a directory holding a `SKILL.yaml` and a signed WebAssembly
//! component. [`Manifest::load_dir`] reads and validates the manifest;
//! every problem comes back as one [`ManifestError`] naming the file, the
//! field path (`tools[2].name`) and the line.
//!
//! Beyond the fields of the product specification, three top-level lists
//! scope permissions precisely: `exec` (the programs `shell:exec` may run;
//! empty means any), `hosts` (the origins `net:fetch` may reach, required
//! with it) and `env` (the variables `env:read` / `env:write` cover,
//! required with them), plus `exec_timeout` (each program's time limit).
//! Implementations are WebAssembly components only:
//! `implementation.component` names the `.wasm` file.

#![deny(missing_docs)]

pub mod capability;
mod error;
mod exec_rules;
mod host;
mod manifest;
mod origin;
mod parse;
mod permission;
mod rules;
pub mod tool_platform;
mod yaml;

#[cfg(test)]
mod tests;

pub use capability::{Capability, InterfaceNeed, ManifestList, ScopeKind, covers};
pub use error::{ErrorKind, ManifestError};
pub use exec_rules::{MAX_EXEC_TIMEOUT, env_write_refusal};
pub use host::HostPattern;
pub use manifest::{
    Compatibility, ConstraintsDecl, DEFAULT_MAX_CONTEXT_TOKENS, Dependency, Implementation,
    MANIFEST_FILE, MAX_MANIFEST_BYTES, Manifest, Mode, Platform, PromptConfig, ScannerDecl,
    SecurityRules, SkillType, ToolDecl, ToolFiles, Triggers, Wiki, WikiClassifier, WikiDiagram,
    WikiFileClass, WikiSection,
};
pub use origin::{Origin, origin};
pub use permission::{Permission, UnknownPermission};
pub use rules::{
    MAX_NAME_LEN, MAX_TOOL_NAME_LEN, is_env_name, is_program_name, is_skill_name, is_tool_name,
};

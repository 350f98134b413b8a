//! `agent-registry`: skill indexes — fetching (git, directory, HTTPS),
//! verifying (a signed, expiring, monotonic snapshot over every index
//! file, in the spirit of TUF), searching, resolving with rollback checks,
//! installing atomically, publishing, and the update plan (what a newer version
//! asks for that the installed one did not). The format and the checks are
//! described in `docs/registry.md`.
#![deny(missing_docs)]

mod error;
mod fault;
mod format;
mod index;
mod index_instructions;
mod install;
mod instructions;
mod publish;
mod publish_steps;
mod resign;
mod skills_dir;
mod source;
mod update_plan;

pub use error::RegistryError;
pub use format::{
    ArtifactRef, ComponentRef, INDEX_FORMAT, IndexEntry, PermissionRef, SNAPSHOT_CONTEXT,
    VersionRecord,
};
pub use index::{Index, Resolved, Seen};
pub use index_instructions::{
    InstructionPublish, InstructionRecord, KIND_COMPONENT, KIND_INSTRUCTIONS, publish_instructions,
};
pub use install::{
    Installed, MAX_UNPACKED_BYTES, install_from_dir, install_from_git, manifest_permissions, remove,
};
pub use instructions::{checkout_git, install_instruction_dir};
pub use publish::{PublishRequest, VerifyReport, init, publish, verify_index};
pub use resign::{ResignReport, Resigned, resign_index};
pub use skills_dir::{LOCK_FILE, Recovered, tidy};
pub use source::{GitSource, IndexSource, MAX_FILE_BYTES, NoProgress, Progress, fetch};
pub use update_plan::UpdatePlan;

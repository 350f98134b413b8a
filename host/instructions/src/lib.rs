//! `agent-instructions`: SKILL.md instruction skills (the Agent Skills format: a directory
//! with `SKILL.md` — YAML frontmatter and a Markdown body — plus optional scripts and
//! reference files).
//!
//! - [`parse`]: the frontmatter (seed 004 §2.1), unknown keys kept and reported, errors
//!   naming file and line;
//! - [`discover`]: the skills of a directory (hidden directories skipped), parsed cheaply
//!   (frontmatter only; the body is read when the skill triggers);
//! - [`eligible`]: `requires.bins/anyBins/env/config` and `os`, with the reasons;
//! - [`render`]: `$ARGUMENTS`/`$1…` substitution and `!command` dynamic context, run through
//!   a caller-provided runner (the host's `exec` path: grants and audit), never a shell;
//! - [`scan`]: the content scan before loading and before install;
//! - [`store`]: the writable skill store (`skill save`, the `save_skill` tool).
//!
//! A SKILL.md skill is not signed: it is trusted through the content scan and the grants
//! (docs/signatures.md).
#![deny(missing_docs)]

pub mod discover;
pub mod eligible;
pub mod parse;
pub mod render;
pub mod scan;
pub mod store;

pub use discover::{Found, discover_dir, load_dir};
pub use eligible::{Environment, HostEnvironment, ineligibility};
pub use parse::{Context, Frontmatter, InstructionSkill, ParseError, Requires, UnknownKey};
pub use render::{CommandLine, DynamicLine, Rendered, RunOutcome, render, split_command};
pub use scan::{Finding, Severity, scan_dir, scan_text};
pub use store::{SaveError, SaveRequest, save};

/// The file that makes a directory an instruction skill.
pub const SKILL_FILE: &str = "SKILL.md";

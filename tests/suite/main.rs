//! Integration tests: real components built from source (`tests/guests/*`,
//! `builtin-skills/*`), loaded into the real runtime, with the real policy
//! (non-interactive grants and the hash-chained audit log).
//!
//! - `sandbox`: what a hostile skill tries, and that the host refuses or
//!   contains it with the right message and audit entry.
//! - `http`: the `http` import against loopback servers: hosts, grants,
//!   redirects, methods, caps.
//! - `exec_guards`: the `exec` import's guards: argument tables, refused
//!   variables, programs resolved on the host's PATH, time limits.
//! - `git_config`: a repository (and the user's) git configuration naming
//!   programs; the git imports run none of them.
//! - `fs_guard`: the host's filesystem guard against a hostile skill: FIFOs
//!   and sockets, `.git` and `.agent/skills`, symlinks out, agent state.
//! - `budgets`: per-skill and per-turn budgets of model requests, programs
//!   and HTTP requests, shared by concurrent calls.
//! - `signatures`: every way a component's signature can be wrong, and the
//!   ways it can be right.
//! - `syntax_bounds`: hostile queries through the `syntax` import, each refused
//!   within the call's time and memory, audited.
//! - `manifest_signing`: the signature covers SKILL.yaml and the files it
//!   names; stored grants are bound to the manifest; 0.1.0 signatures.
//! - `contract`: the versioned `agent:skill` contract: a published 0.1.0
//!   component next to a 0.2.0 hook-only one, `project.mount`, unknown versions.
//! - `router`: the one tool router under the agent loop: a refusal is an
//!   event when it happens, while the refused call goes on; whether a tool
//!   asks first is decided in one place.
//! - `session`: a session driven over the protocol: turns, approvals as
//!   events answered by operations, interrupt, lists, resume.
//! - `cache`: an altered or foreign compiled artifact in the component cache
//!   is rejected by its seal, recompiled and replaced, never run.

mod budgets;
mod cache;
mod common;
mod contract;
mod exec_guards;
mod fs_guard;
mod git_config;
mod hooks;
mod host_tools;
mod http;
mod manifest_signing;
mod prebuilt;
mod prompts;
mod providers;
mod router;
mod sandbox;
mod session;
mod signatures;
mod syntax;
mod syntax_bounds;
mod workflows;

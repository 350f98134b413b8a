//! Integration tests: real components built from source (`tests/guests/*`,
//! `builtin-skills/*`), loaded into the real runtime, with the real policy
//! (non-interactive grants and the hash-chained audit log).
//!
//! - `sandbox`: what a hostile skill tries, and that the host refuses or
//!   contains it with the right message and audit entry.
//! - `http`: the `http` import against loopback servers: hosts, grants,
//!   redirects, methods, caps.
//! - `signatures`: every way a component's signature can be wrong, and the
//!   ways it can be right.
//! - `manifest_signing`: the signature covers SKILL.yaml and the files it
//!   names; stored grants are bound to the manifest; 0.1.0 signatures.

mod common;
mod hooks;
mod http;
mod manifest_signing;
mod prompts;
mod providers;
mod sandbox;
mod signatures;
mod syntax;
mod workflows;

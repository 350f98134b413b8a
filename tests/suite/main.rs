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
//! - `syntax_bounds`: hostile queries through the `syntax` import, each refused
//!   within the call's time and memory, audited.

mod common;
mod hooks;
mod http;
mod prompts;
mod providers;
mod sandbox;
mod signatures;
mod syntax;
mod syntax_bounds;
mod workflows;

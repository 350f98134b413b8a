//! Integration tests: real components built from source (`tests/guests/*`,
//! `builtin-skills/*`), loaded into the real runtime, with the real policy
//! (non-interactive grants and the hash-chained audit log).
//!
//! - `sandbox`: what a hostile skill tries, and that the host refuses or
//!   contains it with the right message and audit entry.
//! - `http`: the `http` import against loopback servers: hosts, grants,
//!   redirects, methods, caps.
//! - `budgets`: per-skill and per-turn budgets of model requests, programs
//!   and HTTP requests, shared by concurrent calls.
//! - `signatures`: every way a component's signature can be wrong, and the
//!   ways it can be right.

mod budgets;
mod common;
mod hooks;
mod http;
mod prompts;
mod providers;
mod sandbox;
mod signatures;
mod syntax;
mod workflows;

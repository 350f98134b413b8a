//! The WebAssembly target the skills are built for, checked at build time.
//!
//! This crate has no code to call: its build script runs within seconds of
//! any build of the agent and makes sure the toolchain has [`TARGET`]
//! (adding it with rustup when missing, or failing with the command to run),
//! so a fresh machine never spends minutes compiling before finding out.
//! `agent-builtins` build-depends on it, so the check runs before the
//! built-in skills are compiled.

mod check;

pub use check::{Outcome, TARGET, ensure_target, find_rustup};

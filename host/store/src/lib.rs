//! `agent-store`: where `agent` keeps its state on disk.
//!
//! - [`AgentPaths`] resolves the config, data and cache directories (`AGENT_HOME` or the XDG
//!   base directories) and the files inside them.
//! - [`Store`] is the redb database (`agent.redb`) holding the permission grants a user gave
//!   with "always" or "deny", and a small `meta` key/value table. Each feature keeps its records
//!   in its own table, defined in its own module of this crate (see [`Store`] for how to add one).

#![deny(missing_docs)]

mod error;
mod grants;
mod meta;
pub mod paths;
mod store;

pub use error::StoreError;
pub use grants::{GrantRecord, StoredDecision};
pub use paths::{AgentPaths, PathsError};
pub use store::Store;

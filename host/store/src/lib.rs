//! `agent-store`: where `agent` keeps its state on disk.
//!
//! - [`AgentPaths`] resolves the config, data and cache directories (`AGENT_HOME` or the XDG
//!   base directories) and the files inside them.
//! - [`Store`] is the redb database (`agent.redb`) holding the permission grants a user gave
//!   with "always" or "deny", and a small `meta` key/value table. Each feature keeps its records
//!   in its own table, defined in its own module of this crate (see [`Store`] for how to add one).
//! - The registry tables record the highest snapshot and skill versions seen from each skill
//!   index (to refuse rollbacks) and the skills `agent` installed ([`InstalledRecord`]).
//! - Sessions ([`SessionMeta`] and their event logs) are persisted one event per durable write
//!   transaction, so a crash loses at most the event being written.

#![deny(missing_docs)]

mod error;
mod grants;
mod guard;
mod meta;
pub mod paths;
mod recover;
mod registry;
mod sessions;
mod store;

pub use error::StoreError;
pub use grants::{GrantRecord, StoredDecision};
pub use paths::{AgentPaths, PathsError};
pub use recover::{Recovery, ScanReport, TableScan};
pub use registry::{InstallPlace, InstalledPermission, InstalledRecord, RegistrySeen};
pub use sessions::{NewSession, SessionMeta, SessionStatus, SessionUsage, session_title};
pub use store::Store;

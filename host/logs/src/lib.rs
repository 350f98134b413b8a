//! Log analysis (docs/logs.md): a streaming Drain-style template miner
//! ([`Miner`]), timestamps and severities of common formats, stack traces
//! joined to their first line, anomaly signals ranking templates into a
//! compact view within a budget ([`view`]), and the incident report the
//! model returns through the `report_incident` tool ([`incident`]).

pub mod drain;
pub mod incident;
pub mod miner;
pub mod reader;
pub mod record;
pub mod severity;
pub mod signals;
pub mod time;
pub mod token;
pub mod view;

pub use drain::{DrainConfig, Template};
pub use miner::{Analysis, Assignment, Input, Miner, MinerConfig};
pub use severity::Severity;

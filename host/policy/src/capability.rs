//! The capability table, as the rest of the host asks it: for each permission, the WIT
//! interfaces it unlocks, what else the component gets, its scope kind, how a scope is
//! checked and normalised, and when a grant covers a use ([`covers`]).
//!
//! The table itself lives in `agent_manifest::capability`, at the bottom of the crate graph,
//! because the manifest's own checks need it and `agent-manifest` cannot depend on this
//! crate; this module is its public face next to the decisions that use it ([`crate::Grants`],
//! [`crate::AllowList`], [`crate::standing`]).

pub use agent_manifest::capability::{
    Capability, FREE_INTERFACES, InterfaceNeed, ScopeKind, TABLE, covers, interface_need,
};
pub use agent_manifest::{Origin, origin};

#[cfg(test)]
mod rows;
#[cfg(test)]
mod tests;

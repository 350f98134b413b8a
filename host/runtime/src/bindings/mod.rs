//! Host-side bindings for the `agent:skill` contract: the latest version
//! (`wit/`, implemented natively by `crate::host`) and every older one
//! (`wit/<version>/`, served by an adapter into the latest types).
//!
//! Generated for the `full-skill` world so that every import can be linked
//! once; exports are looked up per interface, so a component needs to export
//! only the interfaces of its own types.

pub(crate) mod v0_1_0;
mod versioned;

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "full-skill",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub use agent::skill::types;
pub use exports::agent::skill::{hooks, prompt, scanner, tool, transform, workflow};
pub(crate) use versioned::{
    HooksIndices, PromptIndices, ScannerIndices, ToolIndices, TransformIndices, WorkflowIndices,
};

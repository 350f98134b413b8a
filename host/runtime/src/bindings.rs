//! Host-side bindings for the `agent:skill@0.1.0` WIT package.
//!
//! Generated for the `full-skill` world so that every import can be linked
//! once; exports are looked up per interface, so a component needs to export
//! only the interfaces of its own types.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "full-skill",
    imports: { default: async | trappable },
    exports: { default: async },
});

pub use agent::skill::types;
pub use exports::agent::skill::{hooks, prompt, scanner, tool, transform, workflow};

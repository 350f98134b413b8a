//! Raw bindings to the `agent:skill` WIT package (the latest version, in `wit/`), one module per world.
//!
//! Every world has its own module so that a component exports only the
//! interfaces of its skill type: the host compares a component's exports
//! with the manifest's `types`, and a component that exported, say, both
//! `tool` and `prompt` while declaring only `tool` would be refused.
//!
//! The capability imports (`log`, `project`, `exec`, `http`, ...) and the
//! shared `types` are generated once, in [`tool_skill`] (the world that
//! imports everything); the other worlds reuse them through wit-bindgen's
//! `with` option, so there is one Rust type per WIT type.
//!
//! Each world module has a public `export!` macro. Most skills do not call
//! it directly: tool skills use [`export_tools!`](crate::export_tools), the
//! other types implement the world's `Guest` trait and call, for example,
//! `agent_skill_sdk::wit::prompt_skill::export!(MyPrompt);`.
//!
//! The `with` keys below spell the contract version (`@0.2.0`): wit-bindgen
//! matches them exactly and takes only literals. They are the only version
//! literals in Rust; change them with `wit/` when the contract moves on.
//!
//! Imports a component does not call are dropped when the component is
//! built (by `wit-component`, run by the `wasm32-wasip2` linker), so linking
//! these bindings costs no permission: a skill that never calls
//! [`http`](crate::http) does not import `agent:skill/http`.

/// The `tool-skill` world: every capability import, and the `tool` export.
// Generated code: WIT items without doc comments (some record fields,
// the generated namespace modules) have none in Rust either.
#[allow(missing_docs)]
pub mod tool_skill {
    wit_bindgen::generate!({
        world: "tool-skill",
        path: "../wit",
        pub_export_macro: true,
        default_bindings_module: "agent_skill_sdk::wit::tool_skill",
    });
}

/// The `prompt-skill` world: the base imports, and the `prompt` export.
// Generated code: WIT items without doc comments (some record fields,
// the generated namespace modules) have none in Rust either.
#[allow(missing_docs)]
pub mod prompt_skill {
    wit_bindgen::generate!({
        world: "prompt-skill",
        path: "../wit",
        pub_export_macro: true,
        default_bindings_module: "agent_skill_sdk::wit::prompt_skill",
        with: {
            "agent:skill/types@0.2.0": crate::wit::tool_skill::agent::skill::types,
            "agent:skill/log@0.2.0": crate::wit::tool_skill::agent::skill::log,
            "agent:skill/project@0.2.0": crate::wit::tool_skill::agent::skill::project,
            "agent:skill/config@0.2.0": crate::wit::tool_skill::agent::skill::config,
            "agent:skill/syntax@0.2.0": crate::wit::tool_skill::agent::skill::syntax,
        },
    });
}

/// The `workflow-skill` world: every capability import, and the `workflow`
/// export.
// Generated code: WIT items without doc comments (some record fields,
// the generated namespace modules) have none in Rust either.
#[allow(missing_docs)]
pub mod workflow_skill {
    wit_bindgen::generate!({
        world: "workflow-skill",
        path: "../wit",
        pub_export_macro: true,
        default_bindings_module: "agent_skill_sdk::wit::workflow_skill",
        with: {
            "agent:skill/types@0.2.0": crate::wit::tool_skill::agent::skill::types,
            "agent:skill/log@0.2.0": crate::wit::tool_skill::agent::skill::log,
            "agent:skill/project@0.2.0": crate::wit::tool_skill::agent::skill::project,
            "agent:skill/config@0.2.0": crate::wit::tool_skill::agent::skill::config,
            "agent:skill/syntax@0.2.0": crate::wit::tool_skill::agent::skill::syntax,
            "agent:skill/exec@0.2.0": crate::wit::tool_skill::agent::skill::exec,
            "agent:skill/http@0.2.0": crate::wit::tool_skill::agent::skill::http,
            "agent:skill/llm@0.2.0": crate::wit::tool_skill::agent::skill::llm,
            "agent:skill/git@0.2.0": crate::wit::tool_skill::agent::skill::git,
            "agent:skill/git-write@0.2.0": crate::wit::tool_skill::agent::skill::git_write,
            "agent:skill/skills@0.2.0": crate::wit::tool_skill::agent::skill::skills,
        },
    });
}

/// The `scanner-skill` world (manifest type `security-rule`): the base
/// imports plus `http` and `llm`, and the `scanner` export.
// Generated code: WIT items without doc comments (some record fields,
// the generated namespace modules) have none in Rust either.
#[allow(missing_docs)]
pub mod scanner_skill {
    wit_bindgen::generate!({
        world: "scanner-skill",
        path: "../wit",
        pub_export_macro: true,
        default_bindings_module: "agent_skill_sdk::wit::scanner_skill",
        with: {
            "agent:skill/types@0.2.0": crate::wit::tool_skill::agent::skill::types,
            "agent:skill/log@0.2.0": crate::wit::tool_skill::agent::skill::log,
            "agent:skill/project@0.2.0": crate::wit::tool_skill::agent::skill::project,
            "agent:skill/config@0.2.0": crate::wit::tool_skill::agent::skill::config,
            "agent:skill/syntax@0.2.0": crate::wit::tool_skill::agent::skill::syntax,
            "agent:skill/http@0.2.0": crate::wit::tool_skill::agent::skill::http,
            "agent:skill/llm@0.2.0": crate::wit::tool_skill::agent::skill::llm,
        },
    });
}

/// The `transform-skill` world: the base imports plus `llm`, and the
/// `transform` export.
// Generated code: WIT items without doc comments (some record fields,
// the generated namespace modules) have none in Rust either.
#[allow(missing_docs)]
pub mod transform_skill {
    wit_bindgen::generate!({
        world: "transform-skill",
        path: "../wit",
        pub_export_macro: true,
        default_bindings_module: "agent_skill_sdk::wit::transform_skill",
        with: {
            "agent:skill/types@0.2.0": crate::wit::tool_skill::agent::skill::types,
            "agent:skill/log@0.2.0": crate::wit::tool_skill::agent::skill::log,
            "agent:skill/project@0.2.0": crate::wit::tool_skill::agent::skill::project,
            "agent:skill/config@0.2.0": crate::wit::tool_skill::agent::skill::config,
            "agent:skill/syntax@0.2.0": crate::wit::tool_skill::agent::skill::syntax,
            "agent:skill/llm@0.2.0": crate::wit::tool_skill::agent::skill::llm,
        },
    });
}

/// The `hook-skill` world: the base imports, and the `hooks` export.
// Generated code: WIT items without doc comments (some record fields,
// the generated namespace modules) have none in Rust either.
#[allow(missing_docs)]
pub mod hook_skill {
    wit_bindgen::generate!({
        world: "hook-skill",
        path: "../wit",
        pub_export_macro: true,
        default_bindings_module: "agent_skill_sdk::wit::hook_skill",
        with: {
            "agent:skill/types@0.2.0": crate::wit::tool_skill::agent::skill::types,
            "agent:skill/log@0.2.0": crate::wit::tool_skill::agent::skill::log,
            "agent:skill/project@0.2.0": crate::wit::tool_skill::agent::skill::project,
            "agent:skill/config@0.2.0": crate::wit::tool_skill::agent::skill::config,
            "agent:skill/syntax@0.2.0": crate::wit::tool_skill::agent::skill::syntax,
        },
    });
}

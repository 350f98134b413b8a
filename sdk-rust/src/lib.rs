//! The Rust SDK for `agent` skills: WebAssembly components (target
//! `wasm32-wasip2`) built against the latest `agent:skill` WIT package (0.2.0, in `wit/`).
//!
//! A tool skill is a `cdylib` crate with a function that builds a
//! [`Toolbox`] and one [`export_tools!`] call:
//!
//! ```
//! use agent_skill_sdk::{Toolbox, ToolError, project};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize)]
//! struct Greet {
//!     name: String,
//! }
//!
//! const GREET: &str = r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#;
//!
//! fn tools() -> Toolbox {
//!     Toolbox::new()
//!         .tool("greet", "Greet someone by name", GREET, |input: Greet| {
//!             if input.name.trim().is_empty() {
//!                 return Err(ToolError::invalid_input("`name` is empty"));
//!             }
//!             Ok(format!("Hello, {}! Welcome to {}.", input.name, project::name()))
//!         })
//! }
//!
//! agent_skill_sdk::export_tools!(tools);
//! # fn main() { assert_eq!(tools().check(), Ok(())); }
//! ```
//!
//! Build it with `cargo build --target wasm32-wasip2 --release`: Rust
//! `wasm32-wasip2` builds come out as components directly. The crate's
//! `README.md` covers the manifest, signing and testing.
//!
//! # What is here
//!
//! - [`tool`]: [`Toolbox`] and [`Tool`], typed tools with JSON-Schema inputs
//!   decoded with serde; [`export_tools!`] implements the `tool` export
//!   (`list-tools`, `call-tool`).
//! - Host capabilities, each a thin, typed wrapper over a WIT import that
//!   returns `Result<_, `[`Error`]`>` when the host can refuse:
//!   [`exec`] (`shell:exec`), [`http`] (`net:fetch`), [`llm`] (`llm:call`),
//!   [`git`] (`git:read`, `git:write`), [`skills`] (`skill:invoke`), and the
//!   ones every skill has: [`log`], [`project`], [`config`], [`syntax`].
//! - [`fs`]: project paths for `std::fs` (the host mounts the project at
//!   `/project` when `file:read` or `file:write` is granted) and I/O errors
//!   that name the missing permission.
//! - [`ToolError`]: what an export answers on failure; `?` converts
//!   capability [`Error`]s, I/O errors and JSON errors into it.
//! - [`wit`]: the raw bindings, one module per world, for the other skill
//!   types (`prompt`, `workflow`, `scanner`, `transform`, `hooks`).
//!
//! # Imports follow use
//!
//! The host refuses a component whose imports need a permission its manifest
//! does not declare. A component built with this SDK imports only the
//! interfaces its code calls: the linker drops the unused import functions
//! and `wit-component` drops the interfaces left without one. A skill that
//! never calls [`http`] does not import `agent:skill/http` and needs no
//! `net:fetch`. Check with `wasm-tools component wit skill.wasm`.
//!
//! # Exports follow type
//!
//! The host also checks a component's exports against the manifest's
//! `types`. The SDK links no export by itself: [`export_tools!`] adds the
//! `tool` export, and each `wit::<world>::export!` macro its own interface,
//! so a component exports exactly the types it implements. A multi-type
//! skill calls several of them (e.g. [`export_tools!`] and
//! `wit::hook_skill::export!`).
//!
//! # Other skill types
//!
//! Implement the world's `Guest` trait and call its export macro:
//!
//! ```
//! use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
//!     Guest, PromptContext, PromptFragment,
//! };
//!
//! struct Style;
//!
//! impl Guest for Style {
//!     fn fragments(context: PromptContext) -> Vec<PromptFragment> {
//!         let content = if context.languages.iter().any(|l| l == "rust") {
//!             "Prefer `?` over `unwrap()` in library code.".to_string()
//!         } else {
//!             return Vec::new();
//!         };
//!         vec![PromptFragment { title: "Rust style".into(), content, priority: 10 }]
//!     }
//! }
//!
//! agent_skill_sdk::wit::prompt_skill::export!(Style);
//! # fn main() {}
//! ```

#![deny(missing_docs)]

pub mod config;
mod error;
pub mod exec;
pub mod fs;
pub mod git;
pub mod http;
pub mod llm;
pub mod log;
pub mod project;
pub mod skills;
pub mod syntax;
pub mod tool;
pub mod types;
pub mod wit;

pub use error::{Error, ErrorKind, ToolError};
pub use tool::{NoInput, Tool, Toolbox};

/// The capability imports, as generated once in the `tool-skill` world.
pub(crate) use wit::tool_skill::agent::skill as host;

/// Exports the `tool` interface of a tool skill from a function that builds
/// its [`Toolbox`].
///
/// The function runs once per component instance, on the first
/// `list-tools` or `call-tool`; `call-tool` finds the tool by name
/// (`skill-error::not-found` if there is none), decodes the input and calls
/// the handler. Use it once per component, at the crate root or in any
/// module.
///
/// ```
/// use agent_skill_sdk::{NoInput, Toolbox, tool::NO_INPUT_SCHEMA};
///
/// fn tools() -> Toolbox {
///     Toolbox::new().tool("ping", "Answer pong", NO_INPUT_SCHEMA, |_: NoInput| Ok("pong".into()))
/// }
///
/// agent_skill_sdk::export_tools!(tools);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export_tools {
    ($toolbox:expr) => {
        const _: () = {
            ::std::thread_local! {
                static TOOLBOX: $crate::Toolbox = ($toolbox)();
            }

            struct AgentSkillTools;

            impl $crate::wit::tool_skill::exports::agent::skill::tool::Guest for AgentSkillTools {
                fn list_tools() -> ::std::vec::Vec<$crate::types::ToolSpec> {
                    TOOLBOX.with(|toolbox| $crate::tool::__export::list(toolbox))
                }

                fn call_tool(
                    name: ::std::string::String,
                    input: ::std::string::String,
                ) -> ::std::result::Result<::std::string::String, $crate::types::SkillError>
                {
                    TOOLBOX.with(|toolbox| $crate::tool::__export::call(toolbox, &name, &input))
                }
            }

    $crate::wit::tool_skill::export!(AgentSkillTools with_types_in $crate::wit::tool_skill);
        };
    };
}

/// Exports the `prompt` interface of a prompt skill whose fragments are
/// fixed text, the same for every context: `(title, content, priority)`
/// each, in the order given (a lower `priority` is more important: kept
/// first when the host trims the fragments to the skill's token budget).
///
/// ```
/// agent_skill_sdk::export_fragments![
///     ("style", "Answer briefly.", 0),
///     ("checklist", include_str!("../README.md"), 40),
/// ];
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! export_fragments {
    ($(($title:expr, $content:expr, $priority:expr)),* $(,)?) => {
        const _: () = {
            use $crate::wit::prompt_skill::exports::agent::skill::prompt as __prompt;

            struct AgentSkillFragments;

            impl __prompt::Guest for AgentSkillFragments {
                fn fragments(
                    _context: __prompt::PromptContext,
                ) -> ::std::vec::Vec<__prompt::PromptFragment> {
                    ::std::vec![$(
                        __prompt::PromptFragment {
                            title: ::std::string::ToString::to_string($title),
                            content: ::std::string::ToString::to_string($content),
                            priority: $priority,
                        }
                    ),*]
                }
            }

            $crate::wit::prompt_skill::export!(AgentSkillFragments with_types_in $crate::wit::prompt_skill);
        };
    };
}

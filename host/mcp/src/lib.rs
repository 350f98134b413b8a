//! `agent-mcp`: the agent as an MCP client (docs/mcp.md).
//!
//! Servers come from `[mcp.servers.NAME]` in config.toml and from a project's `.mcp.json`
//! ([`spec`]). Each is a skill of its own kind, `mcp:NAME`: starting a stdio server needs
//! `shell:exec:<program>` granted to it, an HTTP server `net:fetch:<origin>`; discovered
//! servers are listed and never started without that grant. A stdio server runs with exactly
//! the variables its configuration names, in its own process group, killed when the session
//! ends ([`client`]). [`McpHub`] starts servers lazily, audits every start and call, and turns
//! timeouts, crashes, oversized answers and malformed messages into [`McpError`]s.
//!
//! An MCP server is a process outside the wasm sandbox: the grant decides whether it runs,
//! not what it does once running.

pub mod client;
mod error;
mod hub;
pub mod spec;
mod stdio;

pub use client::{CallOutput, Connection, EnvLookup, Limits, PromptInfo, ToolInfo};
pub use error::McpError;
pub use hub::McpHub;
pub use spec::{EnvValue, ServerSpec, Source, Transport, servers, skill_name};

/// The name the model sees for `tool` of `server`: the tool's own name, or `server__tool`
/// when another server (or an existing tool) already uses it.
pub fn exposed_name(server: &str, tool: &str, clashes: bool) -> String {
    if clashes {
        format!("{server}__{tool}")
    } else {
        tool.to_string()
    }
}

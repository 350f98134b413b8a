//! The MCP servers of this process (agent-mcp): configured in config.toml, discovered in the
//! project's `.mcp.json`, started only through the hub (grant first, lazily, stopped with it).

use std::sync::Arc;

use agent_mcp::{Limits, McpHub, ServerSpec};
use agent_policy::Prospect;
use anyhow::Result;

use crate::app::App;

/// The servers: config.toml's, then `.mcp.json`'s.
pub fn specs(app: &mut App) -> Result<Vec<ServerSpec>> {
    let config = app.config()?;
    Ok(agent_mcp::servers(&config.mcp, &app.project_root)?)
}

/// A hub over every server, deciding starts with this process's grants.
pub fn hub(app: &mut App) -> Result<Arc<McpHub>> {
    let specs = specs(app)?;
    let config = app.config()?;
    let grants = app.grants()?.grants().clone();
    Ok(Arc::new(McpHub::new(
        specs,
        grants,
        app.project_root.clone(),
        Arc::new(|k: &str| std::env::var(k).ok()),
        Limits::from_config(&config.mcp),
    )))
}

/// Whether starting `spec` would be granted now, in words: `granted (allowlist)`, `ask`,
/// or `not granted (--allow mcp:NAME/...)`. Nothing is asked, stored or audited.
pub fn grant_status(app: &mut App, spec: &ServerSpec) -> Result<String> {
    let grants = app.grants()?.grants().clone();
    let (permission, scope) = spec.permission();
    Ok(
        match grants.would_grant(&spec.skill_name(), None, true, permission, Some(&scope)) {
            Prospect::Granted { source } => format!("granted ({source})"),
            Prospect::Ask => "asked at first use".into(),
            Prospect::Denied { .. } => format!("not granted (--allow {})", spec.allow_flag()),
        },
    )
}

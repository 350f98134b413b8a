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

/// Every hub this process made, stopped by [`stop_all`] when the command ends (a session's
/// parts may still be dropping on the session's thread when `main` returns).
static HUBS: std::sync::Mutex<Vec<Arc<McpHub>>> = std::sync::Mutex::new(Vec::new());

/// The source of MCP tools for a session's turns (`None` without servers): the hub is made
/// with the session's grants, so its starts ask the session's approver.
pub fn source(app: &mut App) -> Result<Option<Arc<dyn agent_core::HostToolSource>>> {
    let hub = hub(app)?;
    if hub.specs().is_empty() {
        return Ok(None);
    }
    HUBS.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(hub.clone());
    let grants = app.grants()?.grants().clone();
    Ok(Some(Arc::new(crate::mcp_tools::McpSource::new(
        hub, grants,
    ))))
}

/// Stops every server still running (their process groups killed).
pub fn stop_all() {
    let hubs = std::mem::take(
        &mut *HUBS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    for hub in hubs {
        hub.kill_all();
    }
}

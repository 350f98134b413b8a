//! `agent skill list`'s rows for MCP servers: each server is a skill of its own kind,
//! `mcp:NAME`, with its source and the one permission starting it needs. Listing starts
//! nothing.

use agent_policy::AllowList;
use agent_store::Store;
use anyhow::Result;
use serde_json::{Value, json};

use crate::app::App;

/// One server as a listing row.
pub(super) struct McpRow {
    pub name: String,
    pub kind: String,
    pub source: String,
    pub permission: String,
    pub status: String,
}

impl McpRow {
    /// The row in the table's columns: NAME, VERSION, TYPES, SOURCE, PERMISSIONS.
    pub(super) fn cells(&self) -> [String; 5] {
        [
            self.name.clone(),
            "-".into(),
            self.kind.clone(),
            self.source.clone(),
            format!("{} [{}]", self.permission, self.status),
        ]
    }

    /// The row as `--format json` lists it.
    pub(super) fn json(&self) -> Value {
        json!({
            "name": self.name,
            "types": [self.kind],
            "source": self.source,
            "permissions": [{"permission": self.permission, "status": self.status}],
        })
    }
}

/// The configured and discovered MCP servers as rows.
pub(super) fn mcp_rows(app: &mut App, store: &Store, allow: &AllowList) -> Result<Vec<McpRow>> {
    let specs = crate::mcp_servers::specs(app)?;
    specs
        .iter()
        .map(|s| {
            let (permission, scope) = s.permission();
            let standing = agent_policy::standing(
                &s.skill_name(),
                permission,
                Some(store),
                allow,
                app.interactive,
            )?;
            Ok(McpRow {
                name: s.skill_name(),
                kind: format!("mcp-{}", s.kind()),
                source: s.source.as_str().to_string(),
                permission: format!("{permission}:{scope}"),
                status: standing.to_string(),
            })
        })
        .collect()
}

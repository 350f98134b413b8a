//! MCP servers' tools offered to the model as host tools (`agent_core::HostTool`): through
//! the one router — constraints, `--tools`, hooks, schema check, approval, events — under the
//! skill `mcp:NAME` (renamed `NAME__tool` on a clash by the router's offer). A server is started
//! at the first turn that needs its tools, and only when its start would be granted (a server
//! whose start is refused without asking is left out with a warning naming the flag).

use std::collections::HashMap;
use std::sync::Arc;

use agent_core::{HostFuture, HostOffer, HostTool, HostToolSource};
use agent_mcp::{McpError, McpHub, ToolInfo};
use agent_policy::{Grants, Prospect};
use agent_runtime::{SkillError, ToolOutput, ToolSpec};
use serde_json::Value;

/// One tool of one server.
struct McpTool {
    skill: String,
    server: String,
    tool: String,
    spec: ToolSpec,
    hub: Arc<McpHub>,
}

impl HostTool for McpTool {
    fn skill(&self) -> &str {
        &self.skill
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, input: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move {
            let args: Value =
                agent_bounded::parse_json(input, "the tool input", agent_bounded::Limits::MESSAGE)
                    .map_err(|e| SkillError::InvalidInput(e.to_string()))?;
            match self.hub.call(&self.server, &self.tool, args).await {
                Ok(out) if out.is_error => Err(SkillError::Failed(out.text)),
                Ok(out) => Ok(ToolOutput {
                    text: out.text,
                    truncated: false,
                }),
                Err(e @ McpError::Denied { .. }) => Err(SkillError::Denied(e.to_string())),
                Err(e) => Err(SkillError::Failed(e.to_string())),
            }
        })
    }
}

/// Offers the tools of every server whose start is (or may be, after asking) granted.
pub struct McpSource {
    hub: Arc<McpHub>,
    grants: Arc<Grants>,
    /// Each server's tools once listed (the server keeps running for the session).
    listed: tokio::sync::Mutex<HashMap<String, Vec<Arc<dyn HostTool>>>>,
    /// Servers already warned about (a warning once per session).
    warned: std::sync::Mutex<Vec<String>>,
}

impl McpSource {
    pub fn new(hub: Arc<McpHub>, grants: Arc<Grants>) -> McpSource {
        McpSource {
            hub,
            grants,
            listed: tokio::sync::Mutex::new(HashMap::new()),
            warned: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn warn_once(&self, server: &str, text: String, out: &mut Vec<String>) {
        let mut warned = self
            .warned
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !warned.iter().any(|s| s == server) {
            warned.push(server.to_string());
            out.push(text);
        }
    }

    fn tools_of(&self, server: &str, tools: Vec<ToolInfo>) -> Vec<Arc<dyn HostTool>> {
        tools
            .into_iter()
            .map(|t| {
                Arc::new(McpTool {
                    skill: agent_mcp::skill_name(server),
                    server: server.to_string(),
                    spec: ToolSpec {
                        name: t.name.clone(),
                        description: if t.description.is_empty() {
                            format!("{} (MCP server {server})", t.name)
                        } else {
                            t.description.clone()
                        },
                        input_schema: t.input_schema.to_string(),
                        requires_approval: true,
                    },
                    tool: t.name,
                    hub: self.hub.clone(),
                }) as Arc<dyn HostTool>
            })
            .collect()
    }
}

impl HostToolSource for McpSource {
    fn offer<'a>(&'a self, _message: &'a str) -> HostFuture<'a, HostOffer> {
        Box::pin(async move {
            let mut offer = HostOffer::default();
            let mut listed = self.listed.lock().await;
            for spec in self.hub.specs() {
                if let Some(tools) = listed.get(&spec.name) {
                    offer.tools.extend(tools.iter().cloned());
                    continue;
                }
                let (permission, scope) = spec.permission();
                let prospect = self.grants.would_grant(
                    &spec.skill_name(),
                    None,
                    true,
                    permission,
                    Some(&scope),
                );
                if let Prospect::Denied { .. } = prospect {
                    self.warn_once(
                        &spec.name,
                        format!(
                            "MCP server `{}` ({}) is not started: its tools are not offered; \
                             grant it with --allow {}",
                            spec.name,
                            spec.source.as_str(),
                            spec.allow_flag()
                        ),
                        &mut offer.warnings,
                    );
                    continue;
                }
                match self.hub.tools(&spec.name).await {
                    Ok(tools) => {
                        let tools = self.tools_of(&spec.name, tools);
                        offer.tools.extend(tools.iter().cloned());
                        listed.insert(spec.name.clone(), tools);
                    }
                    Err(e) => self.warn_once(&spec.name, e.to_string(), &mut offer.warnings),
                }
            }
            offer
        })
    }
}

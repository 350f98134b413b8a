//! The servers of one session: started lazily when first needed and only when granted,
//! every start and call audited, all stopped with the session.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_policy::{Grants, Verdict};
use serde_json::Value;

use crate::McpError;
use crate::client::{CallOutput, Connection, EnvLookup, Limits, PromptInfo, ToolInfo};
use crate::spec::ServerSpec;

/// The MCP servers a session may use.
pub struct McpHub {
    specs: Vec<ServerSpec>,
    grants: Arc<Grants>,
    project_root: PathBuf,
    env: EnvLookup,
    limits: Limits,
    running: tokio::sync::Mutex<HashMap<String, Arc<Connection>>>,
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.specs.len())
            .finish_non_exhaustive()
    }
}

impl McpHub {
    /// A hub over `specs`; nothing is started until a server is needed.
    pub fn new(
        specs: Vec<ServerSpec>,
        grants: Arc<Grants>,
        project_root: PathBuf,
        env: EnvLookup,
        limits: Limits,
    ) -> McpHub {
        McpHub {
            specs,
            grants,
            project_root,
            env,
            limits,
            running: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The servers (configured and discovered).
    pub fn specs(&self) -> &[ServerSpec] {
        &self.specs
    }

    /// The server named `name`.
    ///
    /// # Errors
    /// [`McpError::Unknown`] naming the servers there are.
    pub fn spec(&self, name: &str) -> Result<&ServerSpec, McpError> {
        self.specs
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| McpError::Unknown {
                name: name.to_string(),
                known: if self.specs.is_empty() {
                    "none".into()
                } else {
                    self.specs
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })
    }

    /// Names of the servers running now.
    pub async fn running(&self) -> Vec<String> {
        let mut v: Vec<String> = self.running.lock().await.keys().cloned().collect();
        v.sort();
        v
    }

    /// The running connection to `name`, started now if it is not running (after the grant
    /// check: `shell:exec:<program>` or `net:fetch:<origin>` for the skill `mcp:NAME`).
    ///
    /// # Errors
    /// Unknown server, refused grant, a failed start.
    pub async fn connection(&self, name: &str) -> Result<Arc<Connection>, McpError> {
        let spec = self.spec(name)?;
        let mut running = self.running.lock().await;
        if let Some(c) = running.get(name) {
            if !c.is_closed() {
                return Ok(c.clone());
            }
            running.remove(name);
        }
        let skill = spec.skill_name();
        let (permission, scope) = spec.permission();
        let detail = format!("start MCP server: {}", spec.target());
        match self
            .grants
            .check(&skill, true, permission, Some(&scope), &detail)
        {
            Verdict::Granted { .. } => {}
            Verdict::Denied { reason } | Verdict::Unrecorded { reason } => {
                return Err(McpError::Denied {
                    server: name.to_string(),
                    reason,
                });
            }
        }
        let started = Connection::start(spec, &self.project_root, &self.env, self.limits).await;
        match started {
            Ok(c) => {
                self.audit(&skill, "mcp:start", &spec.target(), "started");
                let c = Arc::new(c);
                running.insert(name.to_string(), c.clone());
                Ok(c)
            }
            Err(e) => {
                self.audit(&skill, "mcp:start", &spec.target(), &format!("failed: {e}"));
                Err(e)
            }
        }
    }

    /// The tools of `name` (starting it if needed).
    ///
    /// # Errors
    /// As [`McpHub::connection`] and the request.
    pub async fn tools(&self, name: &str) -> Result<Vec<ToolInfo>, McpError> {
        let c = self.connection(name).await?;
        let r = c.tools().await;
        self.after(name, &c, "tools/list", &r).await;
        r
    }

    /// Calls `tool` of `server`; the call and its outcome are audited.
    ///
    /// # Errors
    /// As [`McpHub::connection`] and the request; the server is stopped after a timeout.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: Value,
    ) -> Result<CallOutput, McpError> {
        let c = self.connection(server).await?;
        let r = c.call(tool, arguments).await;
        self.after(server, &c, &format!("tools/call {tool}"), &r)
            .await;
        r
    }

    /// The resources of `name`.
    ///
    /// # Errors
    /// As [`McpHub::connection`] and the request.
    pub async fn resources(&self, name: &str) -> Result<Vec<(String, String, String)>, McpError> {
        let c = self.connection(name).await?;
        let r = c.resources().await;
        self.after(name, &c, "resources/list", &r).await;
        r
    }

    /// One resource of `name` as text.
    ///
    /// # Errors
    /// As [`McpHub::connection`] and the request.
    pub async fn read_resource(&self, name: &str, uri: &str) -> Result<String, McpError> {
        let c = self.connection(name).await?;
        let r = c.read_resource(uri).await;
        self.after(name, &c, &format!("resources/read {uri}"), &r)
            .await;
        r
    }

    /// The prompts of `name`.
    ///
    /// # Errors
    /// As [`McpHub::connection`] and the request.
    pub async fn prompts(&self, name: &str) -> Result<Vec<PromptInfo>, McpError> {
        let c = self.connection(name).await?;
        let r = c.prompts().await;
        self.after(name, &c, "prompts/list", &r).await;
        r
    }

    /// Prompt `prompt` of `name`, filled in with `arguments`, as text.
    ///
    /// # Errors
    /// As [`McpHub::connection`] and the request.
    pub async fn get_prompt(
        &self,
        name: &str,
        prompt: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<String, McpError> {
        let c = self.connection(name).await?;
        let r = c.get_prompt(prompt, arguments).await;
        self.after(name, &c, &format!("prompts/get {prompt}"), &r)
            .await;
        r
    }

    /// Audits a request's outcome; a server that failed by timing out or going away is
    /// forgotten (the next use starts it again, after the grant check).
    async fn after<T>(&self, name: &str, c: &Arc<Connection>, what: &str, r: &Result<T, McpError>) {
        let skill = crate::spec::skill_name(name);
        let outcome = match r {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("error: {e}"),
        };
        self.audit(&skill, "mcp:call", what, &outcome);
        if matches!(r, Err(McpError::Timeout { .. } | McpError::Closed { .. })) || c.is_closed() {
            c.kill();
            let mut running = self.running.lock().await;
            if running.get(name).is_some_and(|r| Arc::ptr_eq(r, c)) {
                running.remove(name);
            }
        }
    }

    fn audit(&self, skill: &str, capability: &str, target: &str, outcome: &str) {
        if let Err(e) = self.grants.record_use(skill, capability, target, outcome) {
            tracing::warn!("audit entry for {skill} {capability} {target}: {e}");
        }
    }

    /// Stops every running server now, without waiting (for the end of a process).
    pub fn kill_all(&self) {
        if let Ok(mut running) = self.running.try_lock() {
            for (_, c) in running.drain() {
                c.kill();
            }
        }
    }

    /// Stops every running server (also done when the hub is dropped).
    pub async fn shutdown(&self) {
        let mut running = self.running.lock().await;
        for (_, c) in running.drain() {
            c.kill();
        }
    }
}

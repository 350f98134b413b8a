//! One running server: started (a child process in its own process group, or an HTTP
//! session), asked with a deadline and a size cap, stopped on drop.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;

use crate::McpError;
use crate::spec::{EnvValue, ServerSpec, Transport, expand};
use crate::stdio::{checked_lines, stderr_note};

/// How long a server may take and how much it may send.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// One request (a tool call, a listing).
    pub call_timeout: Duration,
    /// Start and `initialize`.
    pub start_timeout: Duration,
    /// The most bytes one answer may have.
    pub max_result_bytes: u64,
}

impl Limits {
    /// The limits of `[mcp]`.
    pub fn from_config(c: &agent_config::McpConfig) -> Limits {
        Limits {
            call_timeout: c.call_timeout,
            start_timeout: c.start_timeout,
            max_result_bytes: c.max_result_bytes,
        }
    }
}

/// What the agent's environment looks like to a server's configuration.
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The most of a server's stderr kept for error messages.
const STDERR_TAIL: usize = 2048;

/// A prompt a server offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptInfo {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Its arguments: name and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

/// A tool a server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    /// Its name on the server.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Its input's JSON Schema.
    pub input_schema: Value,
}

/// The answer of a tool call, as text for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct CallOutput {
    /// The text content (other content described as JSON).
    pub text: String,
    /// Whether the server reported the call as failed (`isError`).
    pub is_error: bool,
}

/// A started server.
pub struct Connection {
    name: String,
    service: RunningService<RoleClient, ()>,
    /// The child process (stdio servers); killed with its process group on drop.
    child: Mutex<Option<tokio::process::Child>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    /// Why the server's output was cut off, when it broke the protocol (see [`checked_lines`]).
    broken: Arc<Mutex<Option<String>>>,
    limits: Limits,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Finds `program` on the agent's `PATH` (a name without `/`), or takes it as a path
/// (relative to `cwd`).
fn resolve_program(program: &str, path: Option<String>, cwd: &Path) -> Result<PathBuf, String> {
    if program.contains('/') {
        let p = cwd.join(program);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!("program `{}` does not exist", p.display()))
        };
    }
    let path = path.unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let candidate = dir.join(program);
        if let Ok(meta) = std::fs::metadata(&candidate) {
            use std::os::unix::fs::PermissionsExt;
            if meta.is_file() && meta.permissions().mode() & 0o111 != 0 {
                return Ok(candidate);
            }
        }
    }
    Err(format!(
        "program `{program}` was not found on PATH; install it or give its full path in the \
         server's `command`"
    ))
}

impl Connection {
    /// Starts `spec` (the caller has checked the grant) and completes the handshake.
    ///
    /// # Errors
    /// [`McpError::Start`] (program missing, variable unset, handshake failed) or
    /// [`McpError::Timeout`].
    pub async fn start(
        spec: &ServerSpec,
        project_root: &Path,
        env: &EnvLookup,
        limits: Limits,
    ) -> Result<Connection, McpError> {
        let name = spec.name.clone();
        let fail = |message: String| McpError::Start {
            server: name.clone(),
            message,
        };
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let broken = Arc::new(Mutex::new(None));
        let max = usize::try_from(limits.max_result_bytes).unwrap_or(usize::MAX);
        let (service, child) = match &spec.transport {
            Transport::Stdio {
                command,
                args,
                env: vars,
                cwd,
            } => {
                let dir = match cwd {
                    Some(c) => project_root.join(c),
                    None => project_root.to_path_buf(),
                };
                let program = resolve_program(command, env("PATH"), &dir).map_err(&fail)?;
                let mut values = Vec::new();
                for (k, value) in vars {
                    match value {
                        EnvValue::Inherit => {
                            if let Some(v) = env(k) {
                                values.push((k.clone(), v));
                            }
                        }
                        EnvValue::Template(template) => {
                            let v = expand(template, &|n| env(n))
                                .map_err(|m| fail(format!("env {k}: {m}")))?;
                            values.push((k.clone(), v));
                        }
                    }
                }
                let mut cmd = tokio::process::Command::new(&program);
                cmd.args(args)
                    .env_clear()
                    .envs(values)
                    .current_dir(&dir)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .kill_on_drop(true)
                    .process_group(0);
                let mut child = cmd
                    .spawn()
                    .map_err(|e| fail(format!("running {}: {e}", program.display())))?;
                let (Some(stdout), Some(stdin), Some(mut err)) =
                    (child.stdout.take(), child.stdin.take(), child.stderr.take())
                else {
                    return Err(fail("its standard streams could not be opened".into()));
                };
                let tail = stderr.clone();
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = err.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        let mut t = lock(&tail);
                        t.extend_from_slice(&buf[..n]);
                        let over = t.len().saturating_sub(STDERR_TAIL);
                        t.drain(..over);
                    }
                });
                // Every line the server writes is checked before rmcp reads it: a line that
                // is not JSON, or longer than the answer limit plus framing, ends the
                // connection at once with that reason (rmcp would drop it, and the request it
                // answered would wait for its deadline).
                let line_max = max.saturating_add(64 * 1024);
                let stdout = checked_lines(stdout, line_max, broken.clone());
                let transport = AsyncRwTransport::<RoleClient, _, _>::new(stdout, stdin)
                    .with_max_line_length(line_max);
                let started = tokio::time::timeout(limits.start_timeout, ().serve(transport)).await;
                let service = match started {
                    Err(_) => {
                        return Err(McpError::Timeout {
                            server: name.clone(),
                            what: "the initialize handshake".into(),
                            secs: limits.start_timeout.as_secs(),
                            key: "start_timeout",
                        });
                    }
                    Ok(Err(e)) => {
                        let said = stderr_note(&stderr);
                        return Err(fail(format!("{e}{said}")));
                    }
                    Ok(Ok(s)) => s,
                };
                (service, Some(child))
            }
            Transport::Http { url, headers } => {
                let mut map = HashMap::new();
                for (k, template) in headers {
                    let v = expand(template, &|n| env(n))
                        .map_err(|m| fail(format!("header {k}: {m}")))?;
                    let name = http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| fail(format!("header name `{k}`: {e}")))?;
                    let value = http::HeaderValue::from_str(&v)
                        .map_err(|e| fail(format!("header {k}: {e}")))?;
                    map.insert(name, value);
                }
                let client = agent_tls::client_builder()
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                    .map_err(|e| fail(format!("HTTP client: {e}")))?;
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(map)
                    .max_json_response_size(max)
                    .max_sse_event_size(max);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                let started = tokio::time::timeout(limits.start_timeout, ().serve(transport)).await;
                let service = match started {
                    Err(_) => {
                        return Err(McpError::Timeout {
                            server: name.clone(),
                            what: "the initialize handshake".into(),
                            secs: limits.start_timeout.as_secs(),
                            key: "start_timeout",
                        });
                    }
                    Ok(Err(e)) => return Err(fail(e.to_string())),
                    Ok(Ok(s)) => s,
                };
                (service, None)
            }
        };
        Ok(Connection {
            name,
            service,
            child: Mutex::new(child),
            stderr,
            broken,
            limits,
        })
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the connection has ended (the server exited or closed it).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// Runs one request within the call deadline, its answer within the size cap.
    async fn ask<T: serde::Serialize>(
        &self,
        what: &str,
        fut: impl Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpError> {
        let answer = match tokio::time::timeout(self.limits.call_timeout, fut).await {
            Err(_) => {
                self.kill();
                return Err(McpError::Timeout {
                    server: self.name.clone(),
                    what: what.to_string(),
                    secs: self.limits.call_timeout.as_secs(),
                    key: "call_timeout",
                });
            }
            Ok(Ok(v)) => v,
            Ok(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                if let Some(why) = lock(&self.broken).clone() {
                    self.kill();
                    return Err(McpError::Protocol {
                        server: self.name.clone(),
                        what: what.to_string(),
                        message: why,
                    });
                }
                // Give the stderr reader a moment to collect the server's last words.
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(McpError::Closed {
                    server: self.name.clone(),
                    what: what.to_string(),
                    stderr: stderr_note(&self.stderr),
                });
            }
            Ok(Err(ServiceError::McpError(e))) => {
                return Err(McpError::Protocol {
                    server: self.name.clone(),
                    what: what.to_string(),
                    message: e.message.to_string(),
                });
            }
            Ok(Err(e)) => {
                return Err(McpError::Protocol {
                    server: self.name.clone(),
                    what: what.to_string(),
                    message: e.to_string(),
                });
            }
        };
        let bytes = serde_json::to_vec(&answer).map_or(0, |v| v.len());
        if bytes as u64 > self.limits.max_result_bytes {
            return Err(McpError::TooLarge {
                server: self.name.clone(),
                what: what.to_string(),
                bytes,
                limit: self.limits.max_result_bytes,
            });
        }
        Ok(answer)
    }

    /// The tools the server offers (every page).
    ///
    /// # Errors
    /// As any request: timeout, closed, too large, protocol.
    pub async fn tools(&self) -> Result<Vec<ToolInfo>, McpError> {
        let tools = self
            .ask("tools/list", self.service.peer().list_all_tools())
            .await?;
        Ok(tools
            .into_iter()
            .map(|t| ToolInfo {
                name: t.name.to_string(),
                description: t.description.map(|d| d.to_string()).unwrap_or_default(),
                input_schema: Value::Object((*t.input_schema).clone()),
            })
            .collect())
    }

    /// Calls `tool` with `arguments` (a JSON object).
    ///
    /// # Errors
    /// As any request; arguments that are not an object are a protocol error.
    pub async fn call(&self, tool: &str, arguments: Value) -> Result<CallOutput, McpError> {
        let what = format!("tools/call {tool}");
        let params = self.params(
            &what,
            "the arguments are not a JSON object: ",
            serde_json::json!({
                "name": tool,
                "arguments": arguments,
            }),
        )?;
        let result = self
            .ask(&what, self.service.peer().call_tool(params))
            .await?;
        let value = serde_json::to_value(&result).unwrap_or(Value::Null);
        Ok(render_result(&value))
    }

    /// The resources the server offers: `(uri, name, description)`.
    ///
    /// # Errors
    /// As any request.
    pub async fn resources(&self) -> Result<Vec<(String, String, String)>, McpError> {
        let list = self
            .ask("resources/list", self.service.peer().list_resources(None))
            .await?;
        Ok(items(&list, "resources")
            .iter()
            .map(|r| (text(r, "uri"), text(r, "name"), text(r, "description")))
            .collect())
    }

    /// Reads one resource as text (binary contents described, not decoded).
    ///
    /// # Errors
    /// As any request.
    pub async fn read_resource(&self, uri: &str) -> Result<String, McpError> {
        let what = format!("resources/read {uri}");
        let params = self.params(&what, "", serde_json::json!({ "uri": uri }))?;
        let read = self
            .ask(&what, self.service.peer().read_resource(params))
            .await?;
        let mut out = String::new();
        for c in items(&read, "contents") {
            if let Some(t) = c["text"].as_str() {
                out.push_str(t);
            } else if c.get("blob").is_some() {
                out.push_str(&format!(
                    "[binary content, {}]",
                    c["mimeType"].as_str().unwrap_or("unknown type")
                ));
            }
        }
        Ok(out)
    }

    /// The prompts the server offers, each with its arguments.
    ///
    /// # Errors
    /// As any request.
    pub async fn prompts(&self) -> Result<Vec<PromptInfo>, McpError> {
        let list = self
            .ask("prompts/list", self.service.peer().list_prompts(None))
            .await?;
        Ok(items(&list, "prompts")
            .iter()
            .map(|p| PromptInfo {
                name: text(p, "name"),
                description: text(p, "description"),
                arguments: p["arguments"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|a| (text(a, "name"), a["required"].as_bool().unwrap_or(false)))
                    .collect(),
            })
            .collect())
    }

    /// One prompt filled in with `arguments`, as text: each message on its own, after its
    /// role (`user:`, `assistant:`); resources embedded in it by their text.
    ///
    /// # Errors
    /// As any request.
    pub async fn get_prompt(
        &self,
        prompt: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<String, McpError> {
        let what = format!("prompts/get {prompt}");
        let params = self.params(
            &what,
            "",
            serde_json::json!({
                "name": prompt,
                "arguments": arguments,
            }),
        )?;
        let got = self
            .ask(&what, self.service.peer().get_prompt(params))
            .await?;
        let mut out = Vec::new();
        for m in items(&got, "messages") {
            let role = m["role"].as_str().unwrap_or("user");
            let c = &m["content"];
            let text = c["text"]
                .as_str()
                .or_else(|| c["resource"]["text"].as_str())
                .map(str::to_string)
                .unwrap_or_else(|| {
                    format!("[{} content]", c["type"].as_str().unwrap_or("unknown"))
                });
            out.push(format!("{role}: {text}"));
        }
        Ok(out.join("\n\n"))
    }

    /// The parameters of request `what`, from JSON; a protocol error (after `context`)
    /// when they do not fit the request.
    fn params<P: serde::de::DeserializeOwned>(
        &self,
        what: &str,
        context: &str,
        value: Value,
    ) -> Result<P, McpError> {
        serde_json::from_value(value).map_err(|e| McpError::Protocol {
            server: self.name.clone(),
            what: what.to_string(),
            message: format!("{context}{e}"),
        })
    }

    /// Stops the server: ends the session, kills the process group.
    pub fn kill(&self) {
        self.service.cancellation_token().cancel();
        if let Some(mut child) = lock(&self.child).take() {
            if let Some(pid) = child.id() {
                kill_group(pid);
            }
            let _ = child.start_kill();
            // Reaped by tokio in the background (kill_on_drop).
            drop(child);
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.kill();
    }
}

/// SIGKILL to the process group the server leads (it and whatever it started).
/// The array `key` of an answer (`resources`, `prompts`, `contents`, `messages`), as JSON;
/// empty when absent.
fn items<T: serde::Serialize>(answer: &T, key: &str) -> Vec<Value> {
    match serde_json::to_value(answer) {
        Ok(Value::Object(mut m)) => match m.remove(key) {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The string field `key` of `v` (empty when absent).
fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_string()
}

fn kill_group(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else { return };
    if let Some(pid) = rustix::process::Pid::from_raw(pid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// A `tools/call` result as text: the text items, other items as JSON, `structuredContent`
/// when there is nothing else.
pub fn render_result(value: &Value) -> CallOutput {
    let mut parts = Vec::new();
    for item in value["content"].as_array().into_iter().flatten() {
        match item["type"].as_str() {
            Some("text") => parts.push(item["text"].as_str().unwrap_or_default().to_string()),
            Some("image" | "audio") => parts.push(format!(
                "[{} content, {}]",
                item["type"].as_str().unwrap_or_default(),
                item["mimeType"].as_str().unwrap_or("unknown type")
            )),
            _ => parts.push(item.to_string()),
        }
    }
    if parts.is_empty()
        && let Some(s) = value.get("structuredContent")
    {
        parts.push(s.to_string());
    }
    CallOutput {
        text: parts.join("\n"),
        is_error: value["isError"].as_bool().unwrap_or(false),
    }
}

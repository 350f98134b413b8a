//! MCP resources and prompts attached to a task as context (`agent run --mcp-resource
//! SERVER:URI`, `--mcp-prompt SERVER:PROMPT` with `--mcp-arg NAME=VALUE`): each server is
//! started through its own hub — so its grant is checked and its requests audited like any
//! use — read, and stopped before the session starts.

use agent_mcp::{McpError, McpHub};
use agent_protocol::Attachment;
use anyhow::{Context, Result};

use crate::app::App;
use crate::cli::{UsageError, exit};
use crate::mcp_servers;

/// What to attach, as given on the command line.
#[derive(Debug, Default, Clone)]
pub struct Wanted {
    /// `SERVER:URI` of each resource.
    pub resources: Vec<String>,
    /// `SERVER:PROMPT` of each prompt.
    pub prompts: Vec<String>,
    /// `NAME=VALUE` arguments of the prompts.
    pub args: Vec<String>,
}

impl Wanted {
    fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.prompts.is_empty()
    }
}

/// The `NAME=VALUE` arguments of a prompt, given with `flag`.
///
/// # Errors
/// A value without `=` or without a name.
pub fn prompt_arguments(
    flag: &str,
    given: &[String],
) -> Result<serde_json::Map<String, serde_json::Value>, UsageError> {
    let mut arguments = serde_json::Map::new();
    for a in given {
        let Some((k, v)) = a.split_once('=').filter(|(k, _)| !k.is_empty()) else {
            return Err(UsageError(format!("{flag} {a}: expected NAME=VALUE")));
        };
        arguments.insert(k.to_string(), serde_json::Value::String(v.to_string()));
    }
    Ok(arguments)
}

/// `SERVER:REST` split at the first `:`, for flag `flag`.
fn split<'a>(flag: &str, value: &'a str, what: &str) -> Result<(&'a str, &'a str), UsageError> {
    match value.split_once(':') {
        Some((server, rest)) if !server.is_empty() && !rest.is_empty() => Ok((server, rest)),
        _ => Err(UsageError(format!(
            "{flag} {value}: expected SERVER:{what} (see `agent mcp list`)"
        ))),
    }
}

/// The attachments `wanted` names, read from their servers; `Err(code)` when a server
/// refused or failed (the error already printed: exit 4 for a refused grant, naming the flag).
///
/// # Errors
/// A malformed flag (a usage error), or the runtime not starting.
pub fn read(app: &mut App, wanted: &Wanted) -> Result<Result<Vec<Attachment>, u8>> {
    if wanted.is_empty() {
        if !wanted.args.is_empty() {
            return Err(UsageError("--mcp-arg applies to an --mcp-prompt".into()).into());
        }
        return Ok(Ok(Vec::new()));
    }
    let arguments = prompt_arguments("--mcp-arg", &wanted.args)?;
    let mut asks = Vec::new();
    for r in &wanted.resources {
        let (server, uri) = split("--mcp-resource", r, "URI")?;
        asks.push((server.to_string(), Ask::Resource(uri.to_string())));
    }
    for p in &wanted.prompts {
        let (server, prompt) = split("--mcp-prompt", p, "PROMPT")?;
        asks.push((server.to_string(), Ask::Prompt(prompt.to_string())));
    }
    let hub = mcp_servers::hub(app)?;
    // Servers are tokio processes: run them on a runtime of their own, on a thread of its
    // own, so that no worker of the main runtime blocks.
    let got = std::thread::scope(|s| {
        s.spawn(|| -> Result<Result<Vec<Attachment>, McpError>> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("starting a runtime for the MCP servers")?;
            Ok(rt.block_on(fetch(&hub, &asks, &arguments)))
        })
        .join()
        .unwrap_or_else(|_| Err(anyhow::anyhow!("reading MCP context panicked")))
    })?;
    Ok(got.map_err(|e| {
        eprintln!("error: {e}");
        if e.is_denied() {
            exit::DENIED
        } else {
            exit::FAILURE
        }
    }))
}

enum Ask {
    Resource(String),
    Prompt(String),
}

async fn fetch(
    hub: &McpHub,
    asks: &[(String, Ask)],
    arguments: &serde_json::Map<String, serde_json::Value>,
) -> Result<Vec<Attachment>, McpError> {
    let mut out = Vec::new();
    let mut failed = None;
    for (server, ask) in asks {
        let got = match ask {
            Ask::Resource(uri) => hub
                .read_resource(server, uri)
                .await
                .map(|content| Attachment {
                    name: format!("mcp:{server}/{uri}"),
                    content,
                }),
            Ask::Prompt(prompt) => hub
                .get_prompt(server, prompt, arguments)
                .await
                .map(|content| Attachment {
                    name: format!("mcp:{server}/prompt:{prompt}"),
                    content,
                }),
        };
        match got {
            Ok(a) => out.push(a),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    hub.shutdown().await;
    match failed {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

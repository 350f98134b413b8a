//! What a server is: from `[mcp.servers.NAME]` in config.toml or a project's `.mcp.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_config::{McpConfig, McpServerConfig, check_server_name, is_var_name};
use agent_manifest::Permission;
use serde::Deserialize;

use crate::McpError;

/// Where a server was configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `[mcp.servers.NAME]` in the user's config.toml.
    Config,
    /// A project's `.mcp.json`: listed, started only when granted.
    ProjectFile(PathBuf),
}

impl Source {
    /// `config.toml` or `.mcp.json`, for listings.
    pub fn as_str(&self) -> &'static str {
        match self {
            Source::Config => "config.toml",
            Source::ProjectFile(_) => ".mcp.json",
        }
    }
}

/// How the server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// A program speaking MCP on its stdin and stdout.
    Stdio {
        /// The program as configured (the grant's scope).
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its whole environment: each variable and where its value comes from.
        env: Vec<(String, EnvValue)>,
        /// Its working directory (relative to the project).
        cwd: Option<PathBuf>,
    },
    /// A streamable-HTTP server.
    Http {
        /// Its URL.
        url: String,
        /// Headers: name → value template.
        headers: Vec<(String, String)>,
    },
}

/// Where a stdio server's variable comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvValue {
    /// The agent's variable of the same name, when set (config.toml's `env = [NAME]`).
    Inherit,
    /// A value with `${VAR}` read from the agent's environment (`.mcp.json`'s `env` map);
    /// a variable it names that is not set is an error.
    Template(String),
}

/// One MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    /// Its name (`[mcp.servers.NAME]`, a key of `mcpServers`).
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// Where it was configured.
    pub source: Source,
}

impl ServerSpec {
    /// The skill it is, for grants, listings and the audit log: `mcp:NAME`.
    pub fn skill_name(&self) -> String {
        skill_name(&self.name)
    }

    /// What starting it needs: `shell:exec:<program>` or `net:fetch:<origin>`.
    pub fn permission(&self) -> (Permission, String) {
        match &self.transport {
            Transport::Stdio { command, .. } => (Permission::ShellExec, command.clone()),
            Transport::Http { url, .. } => (
                Permission::NetFetch,
                agent_manifest::origin(url).unwrap_or_else(|| url.clone()),
            ),
        }
    }

    /// The `--allow` value that grants it.
    pub fn allow_flag(&self) -> String {
        let (p, scope) = self.permission();
        format!("{}/{p}:{scope}", self.skill_name())
    }

    /// `node server.js` or the URL, for listings.
    pub fn target(&self) -> String {
        match &self.transport {
            Transport::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Transport::Http { url, .. } => url.clone(),
        }
    }

    /// `stdio` or `http`.
    pub fn kind(&self) -> &'static str {
        match self.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        }
    }
}

/// `mcp:NAME`.
pub fn skill_name(server: &str) -> String {
    format!("mcp:{server}")
}

/// The servers of config.toml, then those of `<project>/.mcp.json` whose names config.toml
/// does not use (config.toml wins a clash).
///
/// # Errors
/// A `.mcp.json` that cannot be read or parsed, naming the file and what is wrong.
pub fn servers(config: &McpConfig, project_root: &Path) -> Result<Vec<ServerSpec>, McpError> {
    let mut out: Vec<ServerSpec> = config
        .servers
        .iter()
        .map(|(name, s)| from_config(name, s))
        .collect();
    let file = project_root.join(".mcp.json");
    for spec in dot_mcp_json(&file)? {
        if !out.iter().any(|s| s.name == spec.name) {
            out.push(spec);
        }
    }
    Ok(out)
}

fn from_config(name: &str, s: &McpServerConfig) -> ServerSpec {
    let transport = match (&s.command, &s.url) {
        (Some(command), _) => Transport::Stdio {
            command: command.clone(),
            args: s.args.clone(),
            env: s
                .env
                .iter()
                .map(|n| (n.clone(), EnvValue::Inherit))
                .collect(),
            cwd: s.cwd.clone(),
        },
        (None, url) => Transport::Http {
            url: url.clone().unwrap_or_default(),
            headers: s
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        },
    };
    ServerSpec {
        name: name.to_string(),
        transport,
        source: Source::Config,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DotMcp {
    #[serde(default)]
    mcp_servers: BTreeMap<String, DotServer>,
}

#[derive(Deserialize)]
struct DotServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// The servers of a `.mcp.json` (`{"mcpServers": {NAME: {command, args, env} | {type: "http",
/// url, headers}}}`); none when the file does not exist.
///
/// # Errors
/// An unreadable or malformed file, naming it (and the line, for JSON errors).
pub fn dot_mcp_json(file: &Path) -> Result<Vec<ServerSpec>, McpError> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(McpError::Config(format!(
                "cannot read {}: {e}",
                file.display()
            )));
        }
    };
    let bad = |m: String| McpError::Config(format!("{}: {m}", file.display()));
    let parsed: DotMcp =
        agent_bounded::parse_json(&text, file.display(), agent_bounded::Limits::CONFIG).map_err(
            |e| match e {
                agent_bounded::Error::Limit(l) => McpError::Config(l.to_string()),
                agent_bounded::Error::Parse(p) => bad(format!("line {}: {p}", p.line())),
            },
        )?;
    let mut out = Vec::new();
    for (name, s) in parsed.mcp_servers {
        let at = |m: &str| bad(format!("mcpServers.{name}: {m}"));
        check_server_name(&name).map_err(|m| at(&m))?;
        let http = matches!(s.kind.as_deref(), Some("http" | "streamable-http" | "sse"));
        if s.kind.as_deref() == Some("sse") {
            return Err(at(
                "the legacy SSE transport is not supported; use a streamable-HTTP URL (`type: \"http\"`)",
            ));
        }
        if let Some(k) = s
            .kind
            .as_deref()
            .filter(|k| !matches!(*k, "http" | "streamable-http" | "stdio"))
        {
            return Err(at(&format!(
                "unknown type `{k}`; expected `stdio` or `http`"
            )));
        }
        for k in s.env.keys() {
            if !is_var_name(k) {
                return Err(at(&format!("env: `{k}` is not a variable name")));
            }
        }
        let transport = match (s.command, s.url) {
            (Some(command), None) if !http => Transport::Stdio {
                command,
                args: s.args,
                env: s
                    .env
                    .into_iter()
                    .map(|(k, v)| (k, EnvValue::Template(v)))
                    .collect(),
                cwd: s.cwd,
            },
            (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                Transport::Http {
                    url,
                    headers: s.headers.into_iter().collect(),
                }
            }
            (None, Some(url)) => return Err(at(&format!("url `{url}` is not http(s)://"))),
            _ => return Err(at("give `command` (stdio) or `type: \"http\"` with `url`")),
        };
        out.push(ServerSpec {
            name,
            transport,
            source: Source::ProjectFile(file.to_path_buf()),
        });
    }
    Ok(out)
}

/// Replaces each `${VAR}` in `template` with the variable from `env`.
///
/// # Errors
/// A variable that is not set, or a `${` without its `}`, naming the variable.
pub fn expand(template: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`${{` without a closing `}}` in `{template}`"))?;
        let var = &after[..end];
        if !is_var_name(var) {
            return Err(format!("`${{{var}}}` is not a variable name"));
        }
        let value = env(var).ok_or_else(|| format!("the variable {var} is not set"))?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;

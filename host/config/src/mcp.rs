//! `[mcp]`: MCP servers (`[mcp.servers.NAME]`) and the limits of every call to one.
//!
//! | key | values | default |
//! |---|---|---|
//! | `mcp.call_timeout` | duration > 0: one request to a server (a tool call, a listing) | `60s` |
//! | `mcp.start_timeout` | duration > 0: starting a server and its `initialize` handshake | `30s` |
//! | `mcp.max_result_bytes` | the most bytes one answer may have, integer > 0 | `1048576` (1 MiB) |
//! | `mcp.servers.NAME.command` | the program of a stdio server (a name looked up on `PATH`, or a path) | — |
//! | `mcp.servers.NAME.args` | its arguments, an array of strings | `[]` |
//! | `mcp.servers.NAME.env` | names of the variables passed from the agent's environment (nothing else is) | `[]` |
//! | `mcp.servers.NAME.cwd` | its working directory (relative to the project) | the project |
//! | `mcp.servers.NAME.url` | a streamable-HTTP server's `http(s)://` URL (instead of `command`) | — |
//! | `mcp.servers.NAME.headers` | HTTP headers, values with `${VAR}` replaced from the agent's environment | `{}` |

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use toml::de::DeTable;

use crate::{ConfigError, Ctx, Key, Val};

/// `[mcp]`.
#[derive(Debug, Clone, PartialEq)]
pub struct McpConfig {
    /// `[mcp.servers.NAME]`, by name.
    pub servers: BTreeMap<String, McpServerConfig>,
    /// One request to a server.
    pub call_timeout: Duration,
    /// Starting a server, handshake included.
    pub start_timeout: Duration,
    /// The most bytes one answer may have.
    pub max_result_bytes: u64,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            servers: BTreeMap::new(),
            call_timeout: Duration::from_secs(60),
            start_timeout: Duration::from_secs(30),
            max_result_bytes: 1 << 20,
        }
    }
}

/// One `[mcp.servers.NAME]`: a stdio server (`command`) or an HTTP one (`url`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct McpServerConfig {
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables passed from the agent's environment.
    pub env: Vec<String>,
    /// Its working directory.
    pub cwd: Option<PathBuf>,
    /// A streamable-HTTP server's URL.
    pub url: Option<String>,
    /// Headers: name → value template (`${VAR}` from the environment).
    pub headers: BTreeMap<String, String>,
    /// The 1-based line of the server's table, for messages.
    pub line: usize,
}

/// A server name: letters, digits, `-` and `_` (it becomes part of tool names and of the
/// skill name `mcp:NAME`).
pub fn check_server_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid MCP server name `{name}`: use 1 to 64 letters, digits, `-` or `_`"
        ))
    }
}

impl Ctx<'_> {
    pub(crate) fn mcp(
        &self,
        out: &mut McpConfig,
        key: &Key<'_>,
        value: &Val<'_>,
    ) -> Result<(), ConfigError> {
        const KEYS: &[&str] = &[
            "servers",
            "call_timeout",
            "start_timeout",
            "max_result_bytes",
        ];
        for (k, v) in self.table("mcp", key, value)? {
            let name: &str = k.get_ref();
            let path = format!("mcp.{name}");
            match name {
                "call_timeout" => out.call_timeout = self.positive_duration(&path, v)?,
                "start_timeout" => out.start_timeout = self.positive_duration(&path, v)?,
                "max_result_bytes" => out.max_result_bytes = self.integer(&path, v, 1, 1 << 30)?,
                "servers" => {
                    for (sk, sv) in self.table(&path, k, v)? {
                        let server: &str = sk.get_ref();
                        let spath = format!("mcp.servers.{server}");
                        check_server_name(server).map_err(|m| self.err(&spath, sk.span(), m))?;
                        let table = self.table(&spath, sk, sv)?;
                        let parsed = self.mcp_server(&spath, sk, table)?;
                        out.servers.insert(server.to_string(), parsed);
                    }
                }
                _ => return Err(self.unknown(&path, k, KEYS)),
            }
        }
        Ok(())
    }

    fn positive_duration(&self, path: &str, value: &Val<'_>) -> Result<Duration, ConfigError> {
        let d = self.duration(path, value)?;
        if d.is_zero() {
            return Err(self.err(path, value.span(), "expected a duration > 0"));
        }
        Ok(d)
    }

    fn strings(&self, path: &str, value: &Val<'_>) -> Result<Vec<String>, ConfigError> {
        let items = value
            .get_ref()
            .as_array()
            .ok_or_else(|| self.err(path, value.span(), "expected an array of strings"))?;
        items
            .iter()
            .map(|item| {
                item.get_ref()
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| self.err(path, item.span(), "expected an array of strings"))
            })
            .collect()
    }

    fn mcp_server(
        &self,
        spath: &str,
        key: &Key<'_>,
        table: &DeTable<'_>,
    ) -> Result<McpServerConfig, ConfigError> {
        const KEYS: &[&str] = &["command", "args", "env", "cwd", "url", "headers"];
        let mut out = McpServerConfig {
            line: self.line(key.span().start),
            ..McpServerConfig::default()
        };
        for (k, v) in table {
            let name: &str = k.get_ref();
            let path = format!("{spath}.{name}");
            match name {
                "command" => out.command = Some(self.string(&path, v)?),
                "args" => out.args = self.strings(&path, v)?,
                "env" => {
                    out.env = self.strings(&path, v)?;
                    if let Some(bad) = out.env.iter().find(|n| !is_var_name(n)) {
                        return Err(self.err(
                            &path,
                            v.span(),
                            format!(
                                "`{bad}` is not a variable name (letters, digits and `_`, not \
                                 starting with a digit)"
                            ),
                        ));
                    }
                }
                "cwd" => out.cwd = Some(PathBuf::from(self.string(&path, v)?)),
                "url" => out.url = Some(self.url(&path, v)?),
                "headers" => {
                    for (hk, hv) in self.table(&path, k, v)? {
                        let h: &str = hk.get_ref();
                        let hpath = format!("{path}.{h}");
                        out.headers.insert(h.to_string(), self.string(&hpath, hv)?);
                    }
                }
                _ => return Err(self.unknown(&path, k, KEYS)),
            }
        }
        match (&out.command, &out.url) {
            (Some(_), None) | (None, Some(_)) => Ok(out),
            (Some(_), Some(_)) => Err(self.err(
                spath,
                key.span(),
                "give either `command` (a stdio server) or `url` (an HTTP server), not both",
            )),
            (None, None) => Err(self.err(
                spath,
                key.span(),
                "give `command` (a stdio server) or `url` (an HTTP server)",
            )),
        }
    }
}

/// Letters, digits and `_`, not starting with a digit.
pub fn is_var_name(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with(|c: char| c.is_ascii_digit())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl McpConfig {
    /// `[mcp]` as JSON (for `agent config show`); header values are shown as written
    /// (templates, never the variables' values).
    pub fn to_json(&self) -> serde_json::Value {
        let servers: serde_json::Map<String, serde_json::Value> = self
            .servers
            .iter()
            .map(|(name, s)| {
                let mut v = serde_json::Map::new();
                if let Some(c) = &s.command {
                    v.insert("command".into(), c.as_str().into());
                    v.insert("args".into(), s.args.clone().into());
                    v.insert("env".into(), s.env.clone().into());
                    if let Some(cwd) = &s.cwd {
                        v.insert("cwd".into(), cwd.display().to_string().into());
                    }
                }
                if let Some(u) = &s.url {
                    v.insert("url".into(), u.as_str().into());
                    let h: serde_json::Map<String, serde_json::Value> = s
                        .headers
                        .iter()
                        .map(|(k, t)| (k.clone(), t.as_str().into()))
                        .collect();
                    v.insert("headers".into(), h.into());
                }
                (name.clone(), v.into())
            })
            .collect();
        serde_json::json!({
            "call_timeout": crate::format_duration(self.call_timeout),
            "start_timeout": crate::format_duration(self.start_timeout),
            "max_result_bytes": self.max_result_bytes,
            "servers": servers,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::{Config, ConfigError};

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("/c/config.toml"), |_| None)
    }

    #[test]
    fn servers_parse_with_their_limits() {
        let c = parse(
            "[mcp]\ncall_timeout = \"5s\"\nmax_result_bytes = 2048\n\
             [mcp.servers.files]\ncommand = \"node\"\nargs = [\"s.js\", \".\"]\nenv = [\"HOME\"]\n\
             [mcp.servers.web]\nurl = \"https://mcp.example.com/mcp\"\n\
             headers = { Authorization = \"Bearer ${T}\" }\n",
        )
        .expect("parsed");
        assert_eq!(c.mcp.call_timeout.as_secs(), 5);
        assert_eq!(c.mcp.max_result_bytes, 2048);
        let files = &c.mcp.servers["files"];
        assert_eq!(files.command.as_deref(), Some("node"));
        assert_eq!(files.args, ["s.js", "."]);
        assert_eq!(files.env, ["HOME"]);
        assert_eq!(files.line, 4);
        assert_eq!(c.mcp.servers["web"].headers["Authorization"], "Bearer ${T}");
        // `agent config show` reads back as the same configuration.
        let text = toml::to_string(&c.to_json()).expect("toml");
        let mut back = parse(&text).expect("round trip").mcp;
        let mut want = c.mcp.clone();
        for s in back.servers.values_mut().chain(want.servers.values_mut()) {
            s.line = 0;
        }
        assert_eq!(back, want);
    }

    #[test]
    fn errors_name_the_line_and_key() {
        let e = parse("[mcp.servers.x]\nargs = []\n")
            .expect_err("no command")
            .to_string();
        assert_eq!(
            e,
            "/c/config.toml:1: mcp.servers.x: give `command` (a stdio server) or `url` (an HTTP server)"
        );
        let e = parse("[mcp.servers.x]\ncommand = \"a\"\nurl = \"http://h\"\n")
            .expect_err("both")
            .to_string();
        assert!(e.contains("not both"), "{e}");
        let e = parse("[mcp.servers.x]\ncommand = \"a\"\nenv = [\"A=B\"]\n")
            .expect_err("env")
            .to_string();
        assert!(
            e.starts_with("/c/config.toml:3: mcp.servers.x.env: `A=B` is not a variable name"),
            "{e}"
        );
        let e = parse("[mcp.servers.x]\ncommand = \"a\"\nport = 3\n")
            .expect_err("unknown")
            .to_string();
        assert!(e.contains("mcp.servers.x.port: unknown key"), "{e}");
        let e = parse("[mcp]\ncall_timeout = \"0s\"\n")
            .expect_err("zero")
            .to_string();
        assert!(e.contains("mcp.call_timeout"), "{e}");
    }
}

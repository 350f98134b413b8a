//! What can go wrong with a server, each in words that say what to do next.

/// An MCP server failure. Every variant ends a tool call with a clear error; none hangs.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// A `.mcp.json` or a server's configuration is wrong.
    #[error("{0}")]
    Config(String),
    /// No server of that name is configured or discovered.
    #[error("no MCP server named `{name}` (configured: {known}); see `agent mcp list`")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The names there are.
        known: String,
    },
    /// Starting it was not granted.
    #[error("MCP server `{server}` was not started: {reason}")]
    Denied {
        /// The server.
        server: String,
        /// The grant decision's reason (it names the `--allow` value that would grant it).
        reason: String,
    },
    /// The program could not be started, or the handshake failed.
    #[error("MCP server `{server}` could not be started: {message}")]
    Start {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// No answer in time; the server was stopped.
    #[error(
        "MCP server `{server}` did not answer {what} within {secs} s; it was stopped (raise \
         mcp.{key} in config.toml if it needs longer)"
    )]
    Timeout {
        /// The server.
        server: String,
        /// What was asked.
        what: String,
        /// The limit.
        secs: u64,
        /// The config key that sets the limit.
        key: &'static str,
    },
    /// The server went away (exited, crashed, closed the connection).
    #[error("MCP server `{server}` closed the connection during {what}{stderr}")]
    Closed {
        /// The server.
        server: String,
        /// What was asked.
        what: String,
        /// The end of its stderr, if any (prefixed with "; it said: ").
        stderr: String,
    },
    /// An answer larger than `mcp.max_result_bytes`.
    #[error(
        "MCP server `{server}` answered {what} with {bytes} bytes, more than mcp.max_result_bytes \
         ({limit}); the answer was dropped"
    )]
    TooLarge {
        /// The server.
        server: String,
        /// What was asked.
        what: String,
        /// The answer's size.
        bytes: usize,
        /// The limit.
        limit: u64,
    },
    /// The server answered with an error or with something that is not MCP.
    #[error("MCP server `{server}` failed {what}: {message}")]
    Protocol {
        /// The server.
        server: String,
        /// What was asked.
        what: String,
        /// Its error or what was malformed.
        message: String,
    },
}

impl McpError {
    /// Whether the grant was refused (exit code 4 in the CLI).
    pub fn is_denied(&self) -> bool {
        matches!(self, McpError::Denied { .. })
    }
}

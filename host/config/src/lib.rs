//! `agent`'s user configuration: `config.toml`, its defaults, and environment overrides.
//!
//! [`Config::load`] reads the file (a missing file means all defaults), rejects unknown keys
//! and bad values with an error that names the file, the line, the key path (such as
//! `agent.max_turns`) and what is expected, then applies the environment overrides.
//!
//! # Sections, keys and defaults
//!
//! | key | values | default |
//! |---|---|---|
//! | `provider.default` | `anthropic`, `openai`, `ollama` | `anthropic` |
//! | `provider.model` | a model name | per provider: `claude-sonnet-4-5`, `gpt-4o`, `llama3.1` |
//! | `provider.anthropic.api_key_source` | `env` (`ANTHROPIC_API_KEY`) | `env` |
//! | `provider.anthropic.api_key_file` | path of a file holding the key, readable by its owner only (`~/` expands) | unset |
//! | `provider.anthropic.api_key_command` | a command (run with `sh -c`) whose output is the key | unset |
//! | `provider.anthropic.base_url` | an `http(s)://` URL | `https://api.anthropic.com` |
//! | `provider.openai.api_key_source` | `env` (`OPENAI_API_KEY`) | `env` |
//! | `provider.openai.api_key_file`, `provider.openai.api_key_command` | as for anthropic | unset |
//! | `provider.openai.base_url` | an `http(s)://` URL | `https://api.openai.com/v1` |
//! | `provider.ollama.base_url` | an `http(s)://` URL | `http://localhost:11434` |
//! | `provider.max_response_bytes` | the most bytes one model response may have, integer > 0; a larger one is cut there with an error naming this key (it also bounds the stream parsers' buffers) | `8388608` (8 MiB) |
//! | `agent.max_turns` | integer > 0 | `50` |
//! | `agent.approval_mode` | `prompt`, `auto`, `deny` | `prompt` |
//! | `agent.context_budget` | tokens, integer > 0 | `100000` |
//! | `agent.timeout` | duration (`500ms`, `120s`, `5m`, `1h`) > 0: bounds the whole run, model responses included (each read of a stream is cancelled at the deadline) | `10m` |
//! | `agent.max_tool_calls_per_turn` | tool calls run for one model answer, integer > 0; the rest are answered "not run" so the model can ask again | `32` |
//! | `agent.max_invalid_tool_calls` | tool calls in a row whose arguments are not JSON (each answered with the parse error) before the run stops, integer > 0 | `5` |
//! | `security.fail_on` | `critical`, `high`, `medium`, `low`, `info` | `high` |
//! | `security.custom_rules` | path (relative to the project) | `.security.yaml` |
//! | `security.max_findings_per_file_rule` | findings of one rule in one file an audit lists, integer > 0 | `100` |
//! | `security.max_findings_per_rule` | findings of one rule an audit lists, integer > 0 | `10000` |
//! | `security.max_findings_total` | findings an audit lists in all, integer > 0 (the rest are counted, not listed) | `100000` |
//! | `security.enable_llm_analysis` | boolean: `agent security-audit` runs the deep analysis (as `--deep`) | `false` |
//! | `security.max_llm_calls` | model requests one deep analysis may make, integer > 0 | `20` |
//! | `skills.auto_approve` | array of skill names | `[]` |
//! | `skills.user_skills_dir` | path (`~/` expands to `$HOME`) | unset: the config directory's `skills/` |
//! | `skills.registry_url` | a skill index: `git+URL[#rev]`, `git://…`, `https://…`, `http://127.0.0.1…` (loopback only), `file://…` or a path | `https://github.com/aiagent-skills/registry` |
//! | `skills.allow_shadow` | array of skill names that may replace a built-in (or, from the project, a user skill) | `[]` |
//! | `skills.max_llm_calls_per_skill` | model requests one skill may make in one turn, integer ≥ 0 | `5` |
//! | `skills.max_llm_calls_per_turn` | model requests all skills may make in one turn, integer ≥ 0 | `20` |
//! | `skills.max_shell_exec_per_skill` | programs one skill may run in one turn, integer ≥ 0 | `10` |
//! | `skills.max_shell_exec_per_turn` | programs all skills may run in one turn, integer ≥ 0 | `40` |
//! | `skills.max_http_requests_per_skill` | HTTP requests one skill may make in one turn, integer ≥ 0 | `20` |
//! | `skills.max_http_requests_per_turn` | HTTP requests all skills may make in one turn, integer ≥ 0 | `60` |
//! | `skills.skill_shell_timeout` | duration > 0: each program a skill runs (`exec`), unless its manifest sets `exec_timeout`; above 120 s it is clamped to 120 s | `30s` |
//! | `skills.config.<name>` | any table, handed to skill `<name>` as JSON | none |
//!
//! | `wiki.format` | `raw-md`, `mkdocs`, `hugo` or `docusaurus`: `agent wiki`'s layout | `raw-md` |
//! | `wiki.diagrams` | `mermaid`, `d2` or `dot` | `mermaid` |
//! | `wiki.depth` | `quick`, `standard` or `deep` (docs/wiki.md) | `standard` |
//! | `wiki.output` | the wiki's directory, relative to the project | `docs/wiki` |
//! | `wiki.max_llm_calls` | model requests one `agent wiki` may make, integer > 0 | `60` |
//!
//! Every key takes effect.
//!
//! `agent.approval_mode` decides tools that require approval (`edit`, `write_file`, `exec`, ...):
//! `prompt` — the interface decides (the TUI asks; `agent run` and `agent workflow run` approve
//! with `--yes` or an `--allow` of a permission the skill declares beyond `file:read`); `auto` —
//! approved without asking, as with `--yes`; `deny` — refused without asking (`--yes` still
//! approves). The capabilities an approved tool uses are still checked against the grants.
//!
//! An API key comes from the provider's environment variable, else `api_key_file`, else
//! `api_key_command` ([`Config::api_key`]); a plaintext `api_key` is refused, naming these three.
//! `api_key_source = "keyring"` is rejected: no keyring is available to this build.
//!
//! # Environment overrides
//!
//! Applied after the file; an empty variable is ignored; a bad value is an error naming the
//! variable.
//!
//! | variable | overrides |
//! |---|---|
//! | `AGENT_PROVIDER` | `provider.default` |
//! | `AGENT_MODEL` | `provider.model` |
//! | `AGENT_MAX_TURNS` | `agent.max_turns` |
//! | `AGENT_APPROVAL_MODE` | `agent.approval_mode` |
//! | `AGENT_CONTEXT_BUDGET` | `agent.context_budget` |
//! | `ANTHROPIC_BASE_URL` | `provider.anthropic.base_url` |
//! | `OPENAI_BASE_URL` | `provider.openai.base_url` |
//! | `OLLAMA_BASE_URL`, else `OLLAMA_HOST` | `provider.ollama.base_url` (`http://` is added to a bare `host:port`) |

#![deny(missing_docs)]

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_manifest::is_skill_name;
use serde_json::{Map as JsonMap, Value as Json};

mod api_key;
pub use api_key::KEY_COMMAND_TIMEOUT;
mod mcp;
pub use mcp::{McpConfig, McpServerConfig, check_server_name, is_var_name};
mod wiki;
use toml::Spanned;
use toml::de::{DeTable, DeValue};
pub use wiki::{DiagramFormat, WikiConfig, WikiDepth, WikiFormat};

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error (in the message, so not also a `source`: printed once).
        error: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{}:{line}: invalid TOML: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The parser's message.
        message: String,
    },
    /// A key is unknown or its value is wrong.
    #[error("{}:{line}: {key}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// The dotted key path, e.g. `agent.max_turns`.
        key: String,
        /// What is wrong and what is expected.
        message: String,
    },
    /// An environment override has a bad value.
    #[error("environment variable {var}={value:?}: {message}")]
    Env {
        /// The variable.
        var: String,
        /// Its value.
        value: String,
        /// What is expected.
        message: String,
    },
}

/// The LLM provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProviderKind {
    /// Anthropic's Messages API.
    #[default]
    Anthropic,
    /// OpenAI's (or a compatible) Chat Completions API.
    OpenAi,
    /// A local Ollama server.
    Ollama,
}

impl ProviderKind {
    const NAMES: &[&str] = &["anthropic", "openai", "ollama"];

    fn parse(s: &str) -> Option<ProviderKind> {
        match s {
            "anthropic" => Some(ProviderKind::Anthropic),
            "openai" => Some(ProviderKind::OpenAi),
            "ollama" => Some(ProviderKind::Ollama),
            _ => None,
        }
    }

    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Ollama => "ollama",
        }
    }

    /// The model used when `provider.model` is not set.
    pub fn default_model(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "claude-sonnet-4-5",
            ProviderKind::OpenAi => "gpt-4o",
            ProviderKind::Ollama => "llama3.1",
        }
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an API key comes from. Only the environment is supported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApiKeySource {
    /// The provider's environment variable (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`).
    #[default]
    Env,
}

impl ApiKeySource {
    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        "env"
    }
}

/// `[provider]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderConfig {
    /// `default`: which provider to use.
    pub default: ProviderKind,
    /// `model`: the model; `None` means the provider's [default](ProviderKind::default_model).
    pub model: Option<String>,
    /// `[provider.anthropic]`.
    pub anthropic: AnthropicConfig,
    /// `[provider.openai]`.
    pub openai: OpenAiConfig,
    /// `[provider.ollama]`.
    pub ollama: OllamaConfig,
    /// `max_response_bytes`: the most bytes one model response may have
    /// (> 0); a larger one is cut there with an error.
    pub max_response_bytes: u64,
}

/// The default `provider.max_response_bytes`: 8 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 8 * 1024 * 1024;

impl Default for ProviderConfig {
    fn default() -> Self {
        ProviderConfig {
            default: ProviderKind::default(),
            model: None,
            anthropic: AnthropicConfig::default(),
            openai: OpenAiConfig::default(),
            ollama: OllamaConfig::default(),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }
}

impl ProviderConfig {
    /// The model to use: `model`, or the default provider's default model.
    pub fn effective_model(&self) -> &str {
        self.model
            .as_deref()
            .unwrap_or_else(|| self.default.default_model())
    }
}

/// `[provider.anthropic]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AnthropicConfig {
    /// `api_key_source`.
    pub api_key_source: ApiKeySource,
    /// `api_key_file`: a file holding the key (used when the variable is unset).
    pub api_key_file: Option<PathBuf>,
    /// `api_key_command`: prints the key (used when the variable and file are unset).
    pub api_key_command: Option<String>,
    /// `base_url`.
    pub base_url: String,
}

impl AnthropicConfig {
    /// The environment variable holding the API key.
    pub const API_KEY_ENV: &str = "ANTHROPIC_API_KEY";
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        AnthropicConfig {
            api_key_source: ApiKeySource::Env,
            api_key_file: None,
            api_key_command: None,
            base_url: "https://api.anthropic.com".into(),
        }
    }
}

/// `[provider.openai]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// `api_key_source`.
    pub api_key_source: ApiKeySource,
    /// `api_key_file`: a file holding the key (used when the variable is unset).
    pub api_key_file: Option<PathBuf>,
    /// `api_key_command`: prints the key (used when the variable and file are unset).
    pub api_key_command: Option<String>,
    /// `base_url`.
    pub base_url: String,
}

impl OpenAiConfig {
    /// The environment variable holding the API key.
    pub const API_KEY_ENV: &str = "OPENAI_API_KEY";
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            api_key_source: ApiKeySource::Env,
            api_key_file: None,
            api_key_command: None,
            base_url: "https://api.openai.com/v1".into(),
        }
    }
}

/// `[provider.ollama]`.
#[derive(Debug, Clone, PartialEq)]
pub struct OllamaConfig {
    /// `base_url`.
    pub base_url: String,
}

impl Default for OllamaConfig {
    fn default() -> Self {
        OllamaConfig {
            base_url: "http://localhost:11434".into(),
        }
    }
}

/// How tool calls that need approval are handled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApprovalMode {
    /// Ask the user.
    #[default]
    Prompt,
    /// Approve without asking.
    Auto,
    /// Refuse without asking.
    Deny,
}

impl ApprovalMode {
    const NAMES: &[&str] = &["prompt", "auto", "deny"];

    fn parse(s: &str) -> Option<ApprovalMode> {
        match s {
            "prompt" => Some(ApprovalMode::Prompt),
            "auto" => Some(ApprovalMode::Auto),
            "deny" => Some(ApprovalMode::Deny),
            _ => None,
        }
    }

    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalMode::Prompt => "prompt",
            ApprovalMode::Auto => "auto",
            ApprovalMode::Deny => "deny",
        }
    }
}

/// `[agent]`.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// `max_turns`: the most model turns in one task (> 0).
    pub max_turns: u32,
    /// `approval_mode`.
    pub approval_mode: ApprovalMode,
    /// `context_budget`: tokens of context to fill (> 0).
    pub context_budget: u64,
    /// `timeout`: wall time for one task (> 0).
    pub timeout: Duration,
    /// `max_tool_calls_per_turn`: the most tool calls run for one model
    /// answer (> 0); the rest are answered "not run".
    pub max_tool_calls_per_turn: u32,
    /// `max_invalid_tool_calls`: tool calls in a row whose arguments are not
    /// JSON before the run stops (> 0).
    pub max_invalid_tool_calls: u32,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_turns: 50,
            approval_mode: ApprovalMode::Prompt,
            context_budget: 100_000,
            timeout: Duration::from_secs(600),
            max_tool_calls_per_turn: 32,
            max_invalid_tool_calls: 5,
        }
    }
}

/// A finding severity, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Severity {
    /// `critical`.
    Critical,
    /// `high`.
    #[default]
    High,
    /// `medium`.
    Medium,
    /// `low`.
    Low,
    /// `info`.
    Info,
}

impl Severity {
    const NAMES: &[&str] = &["critical", "high", "medium", "low", "info"];

    fn parse(s: &str) -> Option<Severity> {
        match s {
            "critical" => Some(Severity::Critical),
            "high" => Some(Severity::High),
            "medium" => Some(Severity::Medium),
            "low" => Some(Severity::Low),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }

    /// The name used in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }
}

/// `[security]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SecurityConfig {
    /// `fail_on`: the lowest severity that fails an audit.
    pub fail_on: Severity,
    /// `custom_rules`: the project's rules file.
    pub custom_rules: PathBuf,
    /// `max_findings_per_file_rule`: findings of one rule in one file an
    /// audit lists.
    pub max_findings_per_file_rule: u32,
    /// `max_findings_per_rule`: findings of one rule an audit lists.
    pub max_findings_per_rule: u32,
    /// `max_findings_total`: findings an audit lists in all.
    pub max_findings_total: u32,
    /// `enable_llm_analysis`: `agent security-audit` runs the deep,
    /// model-backed analysis as with `--deep`.
    pub enable_llm_analysis: bool,
    /// `max_llm_calls`: the model requests one deep analysis may make.
    pub max_llm_calls: u32,
}

impl Default for SecurityConfig {
    fn default() -> Self {
        SecurityConfig {
            fail_on: Severity::High,
            custom_rules: PathBuf::from(".security.yaml"),
            max_findings_per_file_rule: 100,
            max_findings_per_rule: 10_000,
            max_findings_total: 100_000,
            enable_llm_analysis: false,
            max_llm_calls: 20,
        }
    }
}

/// `[skills]`.
#[derive(Debug, Clone, PartialEq)]
pub struct SkillsConfig {
    /// `auto_approve`: skills whose permissions are granted without asking.
    pub auto_approve: Vec<String>,
    /// `user_skills_dir`; `None` means the config directory's `skills/`.
    pub user_skills_dir: Option<PathBuf>,
    /// `registry_url`.
    pub registry_url: String,
    /// `allow_shadow`: skills that may take the name of a built-in (or, from
    /// the project, of a user skill).
    pub allow_shadow: Vec<String>,
    /// `max_llm_calls_per_skill`: model requests per skill per turn.
    pub max_llm_calls_per_skill: u32,
    /// `max_llm_calls_per_turn`: model requests of all skills per turn.
    pub max_llm_calls_per_turn: u32,
    /// `max_shell_exec_per_skill`: programs per skill per turn.
    pub max_shell_exec_per_skill: u32,
    /// `max_shell_exec_per_turn`: programs of all skills per turn.
    pub max_shell_exec_per_turn: u32,
    /// `max_http_requests_per_skill`: HTTP requests per skill per turn.
    pub max_http_requests_per_skill: u32,
    /// `max_http_requests_per_turn`: HTTP requests of all skills per turn.
    pub max_http_requests_per_turn: u32,
    /// `skill_shell_timeout` (> 0).
    pub skill_shell_timeout: Duration,
    /// `[skills.config.<name>]`: each skill's table, as a JSON object.
    pub config: BTreeMap<String, Json>,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        SkillsConfig {
            auto_approve: Vec::new(),
            user_skills_dir: None,
            registry_url: "https://github.com/aiagent-skills/registry".into(),
            allow_shadow: Vec::new(),
            max_llm_calls_per_skill: 5,
            max_llm_calls_per_turn: 20,
            max_shell_exec_per_skill: 10,
            max_shell_exec_per_turn: 40,
            max_http_requests_per_skill: 20,
            max_http_requests_per_turn: 60,
            skill_shell_timeout: Duration::from_secs(30),
            config: BTreeMap::new(),
        }
    }
}

/// The whole configuration. [`Default`] is what a missing file gives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// `[provider]`.
    pub provider: ProviderConfig,
    /// `[agent]`.
    pub agent: AgentConfig,
    /// `[security]`.
    pub security: SecurityConfig,
    /// `[skills]`.
    pub skills: SkillsConfig,
    /// `[mcp]` (MCP servers; `mcp.rs`).
    pub mcp: McpConfig,
    /// `[wiki]` (`agent wiki`'s defaults; `wiki.rs`).
    pub wiki: WikiConfig,
}

impl Config {
    /// Reads `path` (missing: defaults), then applies the environment overrides read through
    /// `env` (pass `|k| std::env::var(k).ok()` for the process environment). `env("HOME")` is
    /// also used to expand a leading `~/` in `skills.user_skills_dir`.
    ///
    /// # Errors
    /// An unreadable file, invalid TOML, an unknown key or a bad value (naming the file, line
    /// and key), or a bad override (naming the variable).
    pub fn load(path: &Path, env: impl Fn(&str) -> Option<String>) -> Result<Config, ConfigError> {
        let mut config = match std::fs::read_to_string(path) {
            Ok(text) => Config::parse(&text, path, &env)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Config::default(),
            Err(error) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    error,
                });
            }
        };
        config.apply_env(&env)?;
        Ok(config)
    }

    /// Parses the text of a `config.toml` (no environment overrides); `path` is used in
    /// errors, and `env("HOME")` to expand `~/`.
    ///
    /// # Errors
    /// As [`Config::load`], but never [`ConfigError::Env`] or [`ConfigError::Read`].
    pub fn parse(
        text: &str,
        path: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let ctx = Ctx { path, text };
        let doc = DeTable::parse(text).map_err(|e| ConfigError::Syntax {
            path: path.to_path_buf(),
            line: ctx.line(e.span().map_or(0, |s| s.start)),
            message: e.message().trim().to_string(),
        })?;
        let mut config = Config::default();
        for (key, value) in doc.get_ref() {
            let name = key.get_ref().as_ref();
            match name {
                "provider" => ctx.provider(&mut config.provider, key, value, &env)?,
                "agent" => ctx.agent(&mut config.agent, key, value)?,
                "security" => ctx.security(&mut config.security, key, value)?,
                "wiki" => ctx.wiki(&mut config.wiki, key, value)?,
                "skills" => ctx.skills(&mut config.skills, key, value, &env)?,
                "mcp" => ctx.mcp(&mut config.mcp, key, value)?,
                _ => {
                    return Err(ctx.unknown(
                        name,
                        key,
                        &["provider", "agent", "security", "skills", "mcp", "wiki"],
                    ));
                }
            }
        }
        Ok(config)
    }

    fn apply_env(&mut self, env: &impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        let get = |var: &str| env(var).filter(|v| !v.trim().is_empty());
        let bad = |var: &str, value: &str, message: String| ConfigError::Env {
            var: var.into(),
            value: value.into(),
            message,
        };
        if let Some(v) = get("AGENT_PROVIDER") {
            self.provider.default = ProviderKind::parse(v.trim())
                .ok_or_else(|| bad("AGENT_PROVIDER", &v, one_of(ProviderKind::NAMES)))?;
        }
        if let Some(v) = get("AGENT_MODEL") {
            self.provider.model = Some(v.trim().to_string());
        }
        if let Some(v) = get("AGENT_MAX_TURNS") {
            self.agent.max_turns = v
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad("AGENT_MAX_TURNS", &v, POSITIVE.into()))?;
        }
        if let Some(v) = get("AGENT_APPROVAL_MODE") {
            self.agent.approval_mode = ApprovalMode::parse(v.trim())
                .ok_or_else(|| bad("AGENT_APPROVAL_MODE", &v, one_of(ApprovalMode::NAMES)))?;
        }
        if let Some(v) = get("AGENT_CONTEXT_BUDGET") {
            self.agent.context_budget = v
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| bad("AGENT_CONTEXT_BUDGET", &v, POSITIVE.into()))?;
        }
        if let Some(v) = get("ANTHROPIC_BASE_URL") {
            self.provider.anthropic.base_url =
                check_url(v.trim()).map_err(|m| bad("ANTHROPIC_BASE_URL", &v, m))?;
        }
        if let Some(v) = get("OPENAI_BASE_URL") {
            self.provider.openai.base_url =
                check_url(v.trim()).map_err(|m| bad("OPENAI_BASE_URL", &v, m))?;
        }
        let ollama = get("OLLAMA_BASE_URL")
            .map(|v| ("OLLAMA_BASE_URL", v))
            .or_else(|| get("OLLAMA_HOST").map(|v| ("OLLAMA_HOST", v)));
        if let Some((var, v)) = ollama {
            let t = v.trim();
            let url = if t.contains("://") {
                t.to_string()
            } else {
                format!("http://{t}")
            };
            self.provider.ollama.base_url = check_url(&url).map_err(|m| bad(var, &v, m))?;
        }
        Ok(())
    }

    /// The configuration in `config.toml` syntax (the [JSON view](Config::to_json) as TOML).
    ///
    /// # Errors
    /// If TOML cannot represent a value (not expected: the view holds no nulls).
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        toml::to_string(&self.to_json())
    }

    /// Whether each provider's API key variable is set (per `env`), never the key itself.
    pub fn api_keys(&self, env: impl Fn(&str) -> Option<String>) -> Vec<ApiKeyStatus> {
        [
            (ProviderKind::Anthropic, AnthropicConfig::API_KEY_ENV),
            (ProviderKind::OpenAi, OpenAiConfig::API_KEY_ENV),
        ]
        .into_iter()
        .map(|(provider, var)| ApiKeyStatus {
            provider,
            var,
            set: env(var).is_some_and(|v| !v.trim().is_empty()),
        })
        .collect()
    }

    /// The configuration as JSON (durations as strings such as `"30s"`, unset options
    /// omitted). It holds no secrets: API keys are never part of the configuration.
    pub fn to_json(&self) -> Json {
        let p = &self.provider;
        let mut provider = serde_json::json!({
            "default": p.default.as_str(),
            "model": p.effective_model(),
            "anthropic": {
                "api_key_source": p.anthropic.api_key_source.as_str(),
                "base_url": p.anthropic.base_url,
            },
            "openai": {
                "api_key_source": p.openai.api_key_source.as_str(),
                "base_url": p.openai.base_url,
            },
            "ollama": { "base_url": p.ollama.base_url },
            "max_response_bytes": p.max_response_bytes,
        });
        for (name, file, command) in [
            (
                "anthropic",
                &p.anthropic.api_key_file,
                &p.anthropic.api_key_command,
            ),
            ("openai", &p.openai.api_key_file, &p.openai.api_key_command),
        ] {
            if let Some(section) = provider.get_mut(name).and_then(Json::as_object_mut) {
                if let Some(f) = file {
                    section.insert("api_key_file".into(), Json::from(f.display().to_string()));
                }
                if let Some(c) = command {
                    section.insert("api_key_command".into(), Json::from(c.as_str()));
                }
            }
        }
        let s = &self.skills;
        let mut skills = serde_json::json!({
            "auto_approve": s.auto_approve,
            "registry_url": s.registry_url,
            "allow_shadow": s.allow_shadow,
            "max_llm_calls_per_skill": s.max_llm_calls_per_skill,
            "max_llm_calls_per_turn": s.max_llm_calls_per_turn,
            "max_shell_exec_per_skill": s.max_shell_exec_per_skill,
            "max_shell_exec_per_turn": s.max_shell_exec_per_turn,
            "max_http_requests_per_skill": s.max_http_requests_per_skill,
            "max_http_requests_per_turn": s.max_http_requests_per_turn,
            "skill_shell_timeout": format_duration(s.skill_shell_timeout),
            "config": s.config.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<JsonMap<_, _>>(),
        });
        if let (Some(dir), Some(obj)) = (&s.user_skills_dir, skills.as_object_mut()) {
            obj.insert(
                "user_skills_dir".into(),
                Json::from(dir.display().to_string()),
            );
        }
        let mut all = serde_json::json!({
            "provider": provider,
            "agent": {
                "max_turns": self.agent.max_turns,
                "approval_mode": self.agent.approval_mode.as_str(),
                "context_budget": self.agent.context_budget,
                "timeout": format_duration(self.agent.timeout),
                "max_tool_calls_per_turn": self.agent.max_tool_calls_per_turn,
                "max_invalid_tool_calls": self.agent.max_invalid_tool_calls,
            },
            "security": {
                "fail_on": self.security.fail_on.as_str(),
                "custom_rules": self.security.custom_rules.display().to_string(),
                "max_findings_per_file_rule": self.security.max_findings_per_file_rule,
                "max_findings_per_rule": self.security.max_findings_per_rule,
                "max_findings_total": self.security.max_findings_total,
                "enable_llm_analysis": self.security.enable_llm_analysis,
                "max_llm_calls": self.security.max_llm_calls,
            },
            "skills": skills,
        });
        if let Some(obj) = all.as_object_mut() {
            obj.insert("mcp".into(), self.mcp.to_json());
        }
        all
    }
}

/// Whether a provider's API key is available; see [`Config::api_keys`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiKeyStatus {
    /// The provider.
    pub provider: ProviderKind,
    /// The environment variable it reads (`api_key_source = "env"`).
    pub var: &'static str,
    /// Whether the variable is set and not empty.
    pub set: bool,
}

/// The keys of `[provider.anthropic]` and `[provider.openai]`.
/// The settings of a provider reached with an API key, borrowed from its
/// section of [`ProviderConfig`] while it is parsed.
struct KeyedFields<'a> {
    provider: &'a str,
    env_var: &'a str,
    api_key_source: &'a mut ApiKeySource,
    api_key_file: &'a mut Option<PathBuf>,
    api_key_command: &'a mut Option<String>,
    base_url: &'a mut String,
}

const KEY_FIELDS: &[&str] = &[
    "api_key_source",
    "api_key_file",
    "api_key_command",
    "base_url",
];

const POSITIVE: &str = "expected a whole number greater than 0";

fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    format!("expected one of {}", quoted.join(", "))
}

fn check_url(s: &str) -> Result<String, String> {
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.starts_with('/') => {
            Ok(s.trim_end_matches('/').to_string())
        }
        _ => Err("expected an http:// or https:// URL with a host".into()),
    }
}

/// Checks a skill index location (`skills.registry_url`, `--index`): `git+URL[#rev]`,
/// `git://…`, `https://…`, `http://` to a loopback host (`127.0.0.1`, `[::1]`, `localhost`),
/// `file://…`, or a plain (absolute or relative) path. Returns the value unchanged.
///
/// # Errors
/// A message saying which forms are accepted.
pub fn check_registry_source(s: &str) -> Result<String, String> {
    const EXPECTED: &str = "expected a skill index: `git+URL[#rev]`, a `git://` or `https://` URL, \
         `http://127.0.0.1…` (plain http only to this machine), a `file://` URL or a directory path";
    let s = s.trim();
    if s.is_empty() {
        return Err(EXPECTED.into());
    }
    if let Some(url) = s.strip_prefix("git+") {
        let base = url.split('#').next().unwrap_or_default();
        return if base.contains("://") && !base.ends_with("://") || base.starts_with('/') {
            Ok(s.to_string())
        } else {
            Err(format!("`git+` must be followed by a URL; {EXPECTED}"))
        };
    }
    for scheme in ["git://", "https://", "file://", "ssh://"] {
        if let Some(rest) = s.strip_prefix(scheme) {
            return if rest.is_empty() || (scheme != "file://" && rest.starts_with('/')) {
                Err(EXPECTED.into())
            } else {
                Ok(s.to_string())
            };
        }
    }
    if let Some(rest) = s.strip_prefix("http://") {
        let host = rest.split('/').next().unwrap_or_default();
        let host = host.rsplit_once(':').map_or(host, |(h, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                h
            } else {
                host
            }
        });
        return if matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
            Ok(s.to_string())
        } else {
            Err(format!(
                "plain http:// is accepted only for this machine (127.0.0.1); use https://. {EXPECTED}"
            ))
        };
    }
    if s.contains("://") {
        return Err(EXPECTED.into());
    }
    Ok(s.to_string())
}

/// Parses a duration: a whole number followed by `ms`, `s`, `m`, `h` or `d`
/// (e.g. `120s`, `5m`) — the workspace's one duration syntax
/// ([`agent_bounded::parse_duration`]); a bare number is refused here.
///
/// # Errors
/// A message saying what is expected.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    use agent_bounded::{BareNumber, DurationError};
    agent_bounded::parse_duration(s, BareNumber::Refused).map_err(|e| match e {
        DurationError::Zero => "expected a duration greater than 0".into(),
        DurationError::Malformed | DurationError::TooLarge => {
            "expected a duration such as \"500ms\", \"120s\", \"5m\" or \"1h\"".into()
        }
    })
}

pub use agent_bounded::format_duration;

type Key<'i> = Spanned<std::borrow::Cow<'i, str>>;
type Val<'i> = Spanned<DeValue<'i>>;

/// The file being read, for error positions.
struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    fn err(&self, key: &str, span: Range<usize>, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            path: self.path.to_path_buf(),
            line: self.line(span.start),
            key: key.to_string(),
            message: message.into(),
        }
    }

    fn unknown(&self, full: &str, key: &Key<'_>, allowed: &[&str]) -> ConfigError {
        self.err(
            full,
            key.span(),
            format!("unknown key; expected one of: {}", allowed.join(", ")),
        )
    }

    /// The entries of a table value, with their dotted key paths.
    fn table<'v, 'i>(
        &self,
        path: &str,
        key: &Key<'_>,
        value: &'v Val<'i>,
    ) -> Result<&'v DeTable<'i>, ConfigError> {
        value
            .get_ref()
            .as_table()
            .ok_or_else(|| self.err(path, key.span(), "expected a table"))
    }

    fn string(&self, path: &str, value: &Val<'_>) -> Result<String, ConfigError> {
        match value.get_ref().as_str() {
            Some(s) if !s.trim().is_empty() => Ok(s.to_string()),
            Some(_) => Err(self.err(path, value.span(), "expected a non-empty string")),
            None => Err(self.err(
                path,
                value.span(),
                format!("expected a string, found {}", value.get_ref().type_str()),
            )),
        }
    }

    fn choice<T>(
        &self,
        path: &str,
        value: &Val<'_>,
        names: &[&str],
        parse: fn(&str) -> Option<T>,
    ) -> Result<T, ConfigError> {
        let s = self
            .string(path, value)
            .map_err(|_| self.err(path, value.span(), one_of(names)))?;
        parse(&s).ok_or_else(|| {
            self.err(
                path,
                value.span(),
                format!("{}, found \"{s}\"", one_of(names)),
            )
        })
    }

    fn integer(&self, path: &str, value: &Val<'_>, min: u64, max: u64) -> Result<u64, ConfigError> {
        let expected = if min > 0 {
            POSITIVE.to_string()
        } else {
            "expected a whole number, 0 or more".to_string()
        };
        let Some(i) = value.get_ref().as_integer() else {
            return Err(self.err(
                path,
                value.span(),
                format!("{expected}, found {}", value.get_ref().type_str()),
            ));
        };
        let n = i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
            .ok()
            .and_then(|n| u64::try_from(n).ok())
            .filter(|n| (min..=max).contains(n));
        n.ok_or_else(|| {
            self.err(
                path,
                value.span(),
                format!("{expected} (at most {max}), found {}", i.as_str()),
            )
        })
    }

    fn boolean(&self, path: &str, value: &Val<'_>) -> Result<bool, ConfigError> {
        value.get_ref().as_bool().ok_or_else(|| {
            self.err(
                path,
                value.span(),
                format!(
                    "expected true or false, found {}",
                    value.get_ref().type_str()
                ),
            )
        })
    }

    fn u32(&self, path: &str, value: &Val<'_>, min: u64) -> Result<u32, ConfigError> {
        let n = self.integer(path, value, min, u64::from(u32::MAX))?;
        u32::try_from(n).map_err(|_| self.err(path, value.span(), POSITIVE))
    }

    fn duration(&self, path: &str, value: &Val<'_>) -> Result<Duration, ConfigError> {
        let s = value.get_ref().as_str().ok_or_else(|| {
            self.err(
                path,
                value.span(),
                "expected a duration string such as \"120s\" or \"5m\"",
            )
        })?;
        parse_duration(s).map_err(|m| self.err(path, value.span(), format!("{m}, found \"{s}\"")))
    }

    fn url(&self, path: &str, value: &Val<'_>) -> Result<String, ConfigError> {
        let s = self.string(path, value)?;
        check_url(&s).map_err(|m| self.err(path, value.span(), format!("{m}, found \"{s}\"")))
    }

    fn api_key_source(&self, path: &str, value: &Val<'_>) -> Result<ApiKeySource, ConfigError> {
        let s = self.string(path, value)?;
        match s.as_str() {
            "env" => Ok(ApiKeySource::Env),
            "keyring" => Err(self.err(
                path,
                value.span(),
                "\"keyring\" is not available in this build; use \"env\" and set the provider's \
                 API key variable (ANTHROPIC_API_KEY or OPENAI_API_KEY)",
            )),
            other => Err(self.err(
                path,
                value.span(),
                format!("expected \"env\", found \"{other}\""),
            )),
        }
    }

    /// `[provider.anthropic]` or `[provider.openai]`: a provider reached with an API key.
    fn keyed_provider(
        &self,
        path: &str,
        key: &Key<'_>,
        value: &Val<'_>,
        f: KeyedFields<'_>,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        for (k2, v2) in self.table(path, key, value)? {
            let n2: &str = k2.get_ref();
            let p2 = format!("{path}.{n2}");
            match n2 {
                "api_key_source" => *f.api_key_source = self.api_key_source(&p2, v2)?,
                "base_url" => *f.base_url = self.url(&p2, v2)?,
                "api_key_file" => {
                    let s = self.string(&p2, v2)?;
                    *f.api_key_file = Some(api_key::expand_home(&s, env("HOME")));
                }
                "api_key_command" => *f.api_key_command = Some(self.string(&p2, v2)?),
                "api_key" => {
                    return Err(self.err(
                        &p2,
                        k2.span(),
                        format!(
                            "a key in plain text is not accepted in config.toml; {}",
                            api_key::ways(f.provider, f.env_var)
                        ),
                    ));
                }
                _ => return Err(self.unknown(&p2, k2, KEY_FIELDS)),
            }
        }
        Ok(())
    }

    fn provider(
        &self,
        out: &mut ProviderConfig,
        key: &Key<'_>,
        value: &Val<'_>,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        const KEYS: &[&str] = &[
            "default",
            "model",
            "anthropic",
            "openai",
            "ollama",
            "max_response_bytes",
        ];
        for (k, v) in self.table("provider", key, value)? {
            let name: &str = k.get_ref();
            let path = format!("provider.{name}");
            match name {
                "default" => {
                    out.default =
                        self.choice(&path, v, ProviderKind::NAMES, ProviderKind::parse)?;
                }
                "model" => out.model = Some(self.string(&path, v)?),
                "max_response_bytes" => {
                    out.max_response_bytes = self.integer(&path, v, 1, i64::MAX as u64)?;
                }
                "anthropic" => {
                    let o = &mut out.anthropic;
                    let fields = KeyedFields {
                        provider: "anthropic",
                        env_var: AnthropicConfig::API_KEY_ENV,
                        api_key_source: &mut o.api_key_source,
                        api_key_file: &mut o.api_key_file,
                        api_key_command: &mut o.api_key_command,
                        base_url: &mut o.base_url,
                    };
                    self.keyed_provider(&path, k, v, fields, env)?;
                }
                "openai" => {
                    let o = &mut out.openai;
                    let fields = KeyedFields {
                        provider: "openai",
                        env_var: OpenAiConfig::API_KEY_ENV,
                        api_key_source: &mut o.api_key_source,
                        api_key_file: &mut o.api_key_file,
                        api_key_command: &mut o.api_key_command,
                        base_url: &mut o.base_url,
                    };
                    self.keyed_provider(&path, k, v, fields, env)?;
                }
                "ollama" => {
                    for (k2, v2) in self.table(&path, k, v)? {
                        let n2: &str = k2.get_ref();
                        let p2 = format!("{path}.{n2}");
                        match n2 {
                            "base_url" => out.ollama.base_url = self.url(&p2, v2)?,
                            _ => return Err(self.unknown(&p2, k2, &["base_url"])),
                        }
                    }
                }
                _ => return Err(self.unknown(&path, k, KEYS)),
            }
        }
        Ok(())
    }

    fn agent(
        &self,
        out: &mut AgentConfig,
        key: &Key<'_>,
        value: &Val<'_>,
    ) -> Result<(), ConfigError> {
        const KEYS: &[&str] = &[
            "max_turns",
            "approval_mode",
            "context_budget",
            "timeout",
            "max_tool_calls_per_turn",
            "max_invalid_tool_calls",
        ];
        for (k, v) in self.table("agent", key, value)? {
            let name: &str = k.get_ref();
            let path = format!("agent.{name}");
            match name {
                "max_turns" => out.max_turns = self.u32(&path, v, 1)?,
                "approval_mode" => {
                    out.approval_mode =
                        self.choice(&path, v, ApprovalMode::NAMES, ApprovalMode::parse)?;
                }
                "context_budget" => {
                    out.context_budget = self.integer(&path, v, 1, i64::MAX as u64)?;
                }
                "timeout" => out.timeout = self.duration(&path, v)?,
                "max_tool_calls_per_turn" => out.max_tool_calls_per_turn = self.u32(&path, v, 1)?,
                "max_invalid_tool_calls" => out.max_invalid_tool_calls = self.u32(&path, v, 1)?,
                _ => return Err(self.unknown(&path, k, KEYS)),
            }
        }
        Ok(())
    }

    fn security(
        &self,
        out: &mut SecurityConfig,
        key: &Key<'_>,
        value: &Val<'_>,
    ) -> Result<(), ConfigError> {
        const KEYS: &[&str] = &[
            "fail_on",
            "custom_rules",
            "max_findings_per_file_rule",
            "max_findings_per_rule",
            "max_findings_total",
            "enable_llm_analysis",
            "max_llm_calls",
        ];
        for (k, v) in self.table("security", key, value)? {
            let name: &str = k.get_ref();
            let path = format!("security.{name}");
            match name {
                "fail_on" => {
                    out.fail_on = self.choice(&path, v, Severity::NAMES, Severity::parse)?
                }
                "custom_rules" => out.custom_rules = PathBuf::from(self.string(&path, v)?),
                "enable_llm_analysis" => out.enable_llm_analysis = self.boolean(&path, v)?,
                "max_llm_calls" => out.max_llm_calls = self.u32(&path, v, 1)?,
                "max_findings_per_file_rule" => {
                    out.max_findings_per_file_rule = self.u32(&path, v, 1)?
                }
                "max_findings_per_rule" => out.max_findings_per_rule = self.u32(&path, v, 1)?,
                "max_findings_total" => out.max_findings_total = self.u32(&path, v, 1)?,
                _ => return Err(self.unknown(&path, k, KEYS)),
            }
        }
        Ok(())
    }

    fn skills(
        &self,
        out: &mut SkillsConfig,
        key: &Key<'_>,
        value: &Val<'_>,
        env: &impl Fn(&str) -> Option<String>,
    ) -> Result<(), ConfigError> {
        const KEYS: &[&str] = &[
            "auto_approve",
            "user_skills_dir",
            "registry_url",
            "allow_shadow",
            "max_llm_calls_per_skill",
            "max_llm_calls_per_turn",
            "max_shell_exec_per_skill",
            "max_shell_exec_per_turn",
            "max_http_requests_per_skill",
            "max_http_requests_per_turn",
            "skill_shell_timeout",
            "config",
        ];
        for (k, v) in self.table("skills", key, value)? {
            let name: &str = k.get_ref();
            let path = format!("skills.{name}");
            match name {
                "auto_approve" => {
                    let items = v.get_ref().as_array().ok_or_else(|| {
                        self.err(&path, v.span(), "expected an array of skill names")
                    })?;
                    out.auto_approve = items
                        .iter()
                        .map(|item| {
                            self.string(&path, item).map_err(|_| {
                                self.err(
                                    &path,
                                    item.span(),
                                    "expected an array of skill names (strings)",
                                )
                            })
                        })
                        .collect::<Result<_, _>>()?;
                }
                "user_skills_dir" => {
                    let s = self.string(&path, v)?;
                    let dir = match (s.strip_prefix("~/"), env("HOME")) {
                        (Some(rest), Some(home)) if !home.is_empty() => Path::new(&home).join(rest),
                        _ => PathBuf::from(s),
                    };
                    out.user_skills_dir = Some(dir);
                }
                "registry_url" => {
                    let s = self.string(&path, v)?;
                    out.registry_url = check_registry_source(&s)
                        .map_err(|m| self.err(&path, v.span(), format!("{m}, found \"{s}\"")))?;
                }
                "allow_shadow" => out.allow_shadow = self.skill_names(&path, v)?,
                "max_llm_calls_per_skill" => out.max_llm_calls_per_skill = self.u32(&path, v, 0)?,
                "max_llm_calls_per_turn" => out.max_llm_calls_per_turn = self.u32(&path, v, 0)?,
                "max_shell_exec_per_skill" => {
                    out.max_shell_exec_per_skill = self.u32(&path, v, 0)?;
                }
                "max_shell_exec_per_turn" => out.max_shell_exec_per_turn = self.u32(&path, v, 0)?,
                "max_http_requests_per_skill" => {
                    out.max_http_requests_per_skill = self.u32(&path, v, 0)?;
                }
                "max_http_requests_per_turn" => {
                    out.max_http_requests_per_turn = self.u32(&path, v, 0)?;
                }
                "skill_shell_timeout" => out.skill_shell_timeout = self.duration(&path, v)?,
                "config" => {
                    for (k2, v2) in self.table(&path, k, v)? {
                        let skill: &str = k2.get_ref();
                        let p2 = format!("{path}.{skill}");
                        if v2.get_ref().as_table().is_none() {
                            return Err(self.err(
                                &p2,
                                k2.span(),
                                "expected a table of settings for the skill",
                            ));
                        }
                        out.config.insert(skill.to_string(), self.json(&p2, v2)?);
                    }
                }
                _ => return Err(self.unknown(&path, k, KEYS)),
            }
        }
        Ok(())
    }

    /// An array of skill names (lower-case letters, digits and `-`).
    fn skill_names(&self, path: &str, value: &Val<'_>) -> Result<Vec<String>, ConfigError> {
        const EXPECTED: &str = "expected an array of skill names";
        let items = value
            .get_ref()
            .as_array()
            .ok_or_else(|| self.err(path, value.span(), EXPECTED))?;
        items
            .iter()
            .map(|item| {
                let name = self
                    .string(path, item)
                    .map_err(|_| self.err(path, item.span(), EXPECTED))?;
                if is_skill_name(&name) {
                    Ok(name)
                } else {
                    Err(self.err(
                        path,
                        item.span(),
                        format!(
                            "{EXPECTED} (lower-case letters, digits and `-`), found \"{name}\""
                        ),
                    ))
                }
            })
            .collect()
    }

    fn json(&self, path: &str, value: &Val<'_>) -> Result<Json, ConfigError> {
        Ok(match value.get_ref() {
            DeValue::String(s) => Json::from(s.as_ref()),
            DeValue::Integer(i) => {
                let n = i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
                    .map_err(|_| self.err(path, value.span(), "integer out of range"))?;
                Json::from(n)
            }
            DeValue::Float(f) => {
                let x: f64 = f
                    .as_str()
                    .replace('_', "")
                    .parse()
                    .map_err(|_| self.err(path, value.span(), "invalid float"))?;
                serde_json::Number::from_f64(x)
                    .map(Json::Number)
                    .ok_or_else(|| {
                        self.err(
                            path,
                            value.span(),
                            "expected a finite number (no inf or nan)",
                        )
                    })?
            }
            DeValue::Boolean(b) => Json::Bool(*b),
            DeValue::Datetime(d) => Json::from(d.to_string()),
            DeValue::Array(items) => Json::Array(
                items
                    .iter()
                    .map(|item| self.json(path, item))
                    .collect::<Result<_, _>>()?,
            ),
            DeValue::Table(t) => {
                let mut obj = JsonMap::new();
                for (k, v) in t {
                    let name: &str = k.get_ref();
                    obj.insert(name.to_string(), self.json(&format!("{path}.{name}"), v)?);
                }
                Json::Object(obj)
            }
        })
    }
}

#[cfg(test)]
mod tests;

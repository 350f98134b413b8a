//! The typed, validated `SKILL.yaml` manifest.

use std::fmt;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use semver::{Version, VersionReq};
use serde::Serialize;

use crate::capability::ManifestList;
use crate::error::ManifestError;
use crate::host::HostPattern;
use crate::permission::Permission;

/// The manifest's file name inside a skill directory.
pub const MANIFEST_FILE: &str = "SKILL.yaml";

/// Largest manifest file [`Manifest::from_file`] reads: the limit for
/// configuration YAML.
pub const MAX_MANIFEST_BYTES: u64 = agent_bounded::Limits::CONFIG.max_bytes as u64;

/// Default `prompt.max_context_tokens` when a `prompt` section leaves it out.
pub const DEFAULT_MAX_CONTEXT_TOKENS: u32 = 4000;

fn unknown(kind: &str, value: &str, expected: &[&str]) -> String {
    format!(
        "unknown {kind} `{value}` (expected one of: {})",
        expected.join(", ")
    )
}

/// How a skill extends the agent (manifest `types`). Each type but `prompt`
/// is served by one exported interface of the skill's component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkillType {
    /// Tools the model can call (`tool` interface).
    Tool,
    /// System-prompt content: a fixed `prompt.system_prompt_file`, or
    /// fragments computed by the `prompt` interface.
    Prompt,
    /// Named multi-step procedures (`workflow` interface).
    Workflow,
    /// Security rules: a SAST rules file and/or scanners (`scanner` interface).
    SecurityRule,
    /// Rewrites the agent's output (`transform` interface).
    Transform,
    /// Only listens to lifecycle hooks (`hooks` interface). Any other type
    /// may export `hooks` too; this type is for a skill that does nothing
    /// else.
    Hook,
}

impl SkillType {
    /// Every type, in documentation order.
    pub const ALL: [SkillType; 6] = [
        SkillType::Tool,
        SkillType::Prompt,
        SkillType::Workflow,
        SkillType::SecurityRule,
        SkillType::Transform,
        SkillType::Hook,
    ];

    /// The manifest spelling, e.g. `security-rule`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillType::Tool => "tool",
            SkillType::Prompt => "prompt",
            SkillType::Workflow => "workflow",
            SkillType::SecurityRule => "security-rule",
            SkillType::Transform => "transform",
            SkillType::Hook => "hook",
        }
    }

    /// The `agent:skill` interface a component exports for this type
    /// (`scanner` for `security-rule`). For `prompt` the export is optional.
    pub fn interface(self) -> &'static str {
        match self {
            SkillType::Tool => "tool",
            SkillType::Prompt => "prompt",
            SkillType::Workflow => "workflow",
            SkillType::SecurityRule => "scanner",
            SkillType::Transform => "transform",
            SkillType::Hook => "hooks",
        }
    }
}

impl fmt::Display for SkillType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SkillType {
    type Err = String;

    /// Parses the manifest spelling; the error lists the valid ones.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SkillType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| unknown("skill type", s, &SkillType::ALL.map(SkillType::as_str)))
    }
}

/// A mode the agent runs in, for `triggers.modes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The interactive TUI.
    Interactive,
    /// Headless runs (CI, scripts).
    Headless,
    /// The wiki generator.
    Wiki,
    /// The security audit.
    SecurityAudit,
}

impl Mode {
    /// Every mode a trigger can name.
    pub const ALL: [Mode; 4] = [
        Mode::Interactive,
        Mode::Headless,
        Mode::Wiki,
        Mode::SecurityAudit,
    ];

    /// The manifest spelling, e.g. `security-audit`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Interactive => "interactive",
            Mode::Headless => "headless",
            Mode::Wiki => "wiki",
            Mode::SecurityAudit => "security-audit",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;

    /// Parses the manifest spelling; the error lists the valid ones.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| unknown("mode", s, &Mode::ALL.map(Mode::as_str)))
    }
}

/// An operating system a skill supports, for `compatibility.platforms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// Linux.
    Linux,
    /// macOS.
    Darwin,
    /// Windows.
    Windows,
}

impl Platform {
    /// Every platform a manifest can name.
    pub const ALL: [Platform; 3] = [Platform::Linux, Platform::Darwin, Platform::Windows];

    /// The manifest spelling: `linux`, `darwin` or `windows`.
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::Linux => "linux",
            Platform::Darwin => "darwin",
            Platform::Windows => "windows",
        }
    }

    /// The platform named by a manifest spelling or by a value of
    /// `std::env::consts::OS` (`macos` is `darwin`).
    pub fn from_os(os: &str) -> Option<Platform> {
        match os {
            "linux" => Some(Platform::Linux),
            "darwin" | "macos" => Some(Platform::Darwin),
            "windows" => Some(Platform::Windows),
            _ => None,
        }
    }

    /// The platform this binary runs on, if it is one a manifest can name.
    pub fn current() -> Option<Platform> {
        Platform::from_os(std::env::consts::OS)
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Platform {
    type Err = String;

    /// Parses the manifest spelling; the error lists the valid ones.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Platform::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| unknown("platform", s, &Platform::ALL.map(Platform::as_str)))
    }
}

/// When a skill activates on its own (`triggers`). All lists may be empty.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Triggers {
    /// Glob patterns of project files (validated with `globset`); a pattern
    /// ending in `/` names a directory.
    pub files: Vec<String>,
    /// Words in the conversation that activate the skill.
    pub keywords: Vec<String>,
    /// Modes the skill activates in.
    pub modes: Vec<Mode>,
    /// Detected project languages that activate the skill.
    pub languages: Vec<String>,
}

impl Triggers {
    /// Whether no trigger is declared (the skill activates only when asked for).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.keywords.is_empty()
            && self.modes.is_empty()
            && self.languages.is_empty()
    }
}

/// Another skill this one needs (`dependencies[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dependency {
    /// The other skill's name.
    pub name: String,
    /// Versions accepted (Cargo-style requirement; `*` when left out).
    pub version: VersionReq,
    /// Whether the skill still works without it (default `false`).
    pub optional: bool,
}

/// Where the skill's code is (`implementation`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Implementation {
    /// The WebAssembly component (`.wasm`), relative to the skill directory.
    pub component: PathBuf,
}

/// Prompt content (`prompt`), for skills of type `prompt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptConfig {
    /// Markdown added to the system prompt while the skill is active.
    pub system_prompt_file: Option<PathBuf>,
    /// Further markdown files loaded on demand.
    pub context_files: Vec<PathBuf>,
    /// Token budget for this skill's prompt content (default 4000, > 0).
    pub max_context_tokens: u32,
}

/// A tool declared in the manifest (`tools[]`), known before the component
/// is loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolDecl {
    /// `^[a-z][a-z0-9_]*$`, unique within the skill.
    pub name: String,
    /// What the tool does, for the model and the user.
    pub description: String,
    /// JSON Schema of the input, relative to the skill directory.
    pub input_schema_file: Option<PathBuf>,
    /// Whether every call asks the user first (default `false`).
    pub requires_approval: bool,
    /// `files`: the project files a call needs (default: `read` for a tool
    /// without `requires_approval`, `write` for one with it).
    pub files: ToolFiles,
    /// `platforms`: where the tool runs (empty: everywhere). Elsewhere the
    /// host does not offer it and refuses a call (see
    /// [`crate::tool_platform`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub platforms: Vec<Platform>,
}

/// The project files a tool's call needs (`tools[].files`): decides the
/// mount of `/project` and so which file permission a call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolFiles {
    /// No mount, no file question (e.g. `exec`, which runs a program on the
    /// host through the `exec` import).
    None,
    /// At most a read-only mount (`file:read`).
    Read,
    /// A read-write mount (`file:write`; only with `requires_approval: true`).
    Write,
}

impl ToolFiles {
    /// The names in `SKILL.yaml`.
    pub const NAMES: &[&str] = &["none", "read", "write"];

    /// Parses a name of [`ToolFiles::NAMES`].
    pub fn parse(s: &str) -> Option<ToolFiles> {
        match s {
            "none" => Some(ToolFiles::None),
            "read" => Some(ToolFiles::Read),
            "write" => Some(ToolFiles::Write),
            _ => None,
        }
    }
}

/// A scanner the skill's component exports (`security_rules.scanners[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScannerDecl {
    /// Name, unique within the skill, as the component's `list-scanners`
    /// reports it.
    pub name: String,
    /// What it looks for.
    pub description: Option<String>,
}

/// Security rules (`security_rules`), for skills of type `security-rule`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SecurityRules {
    /// Declarative SAST rules (YAML), relative to the skill directory.
    pub sast_rules_file: Option<PathBuf>,
    /// Scanners exported by the component.
    pub scanners: Vec<ScannerDecl>,
    /// Rule overrides (YAML), relative to the skill directory.
    pub overrides_file: Option<PathBuf>,
}

/// A section the skill adds to generated wikis (`wiki.sections[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WikiSection {
    /// The section title.
    pub title: String,
    /// Markdown template, relative to the skill directory.
    pub template: Option<PathBuf>,
    /// Name of a workflow of this skill's component that produces the
    /// section's data.
    pub analyzer: Option<String>,
}

/// A diagram the skill adds to generated wikis (`wiki.diagrams[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WikiDiagram {
    /// The diagram kind (manifest key `type`), e.g. `deployment-topology`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Diagram template (Mermaid), relative to the skill directory.
    pub template: PathBuf,
}

/// The class a skill's classifier gives a project file
/// (`wiki.classifiers[].class`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WikiFileClass {
    /// Program source.
    Source,
    /// Tests.
    Test,
    /// Build and tool configuration.
    Config,
    /// Documentation.
    Docs,
    /// Generated code.
    Generated,
}

impl WikiFileClass {
    /// Every class, by name.
    pub const ALL: [(&'static str, WikiFileClass); 5] = [
        ("source", WikiFileClass::Source),
        ("test", WikiFileClass::Test),
        ("config", WikiFileClass::Config),
        ("docs", WikiFileClass::Docs),
        ("generated", WikiFileClass::Generated),
    ];

    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            WikiFileClass::Source => "source",
            WikiFileClass::Test => "test",
            WikiFileClass::Config => "config",
            WikiFileClass::Docs => "docs",
            WikiFileClass::Generated => "generated",
        }
    }
}

/// A file classifier the skill adds to generated wikis
/// (`wiki.classifiers[]`): project files matching `pattern` are of `class`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WikiClassifier {
    /// A glob over the file's path relative to the project root, `/`-separated
    /// (validated with `globset`), e.g. `gen/**` or `**/*_spec.rb`.
    pub pattern: String,
    /// The class those files get.
    pub class: WikiFileClass,
}

/// Wiki contributions (`wiki`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Wiki {
    /// Extra sections.
    pub sections: Vec<WikiSection>,
    /// Extra diagrams.
    pub diagrams: Vec<WikiDiagram>,
    /// File classifiers, tried before the generator's own rules (first
    /// match wins).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub classifiers: Vec<WikiClassifier>,
}

/// Where the skill runs (`compatibility`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Compatibility {
    /// Agent versions the skill works with (any when `None`).
    pub agent_version: Option<VersionReq>,
    /// Platforms the skill works on (any when empty).
    pub platforms: Vec<Platform>,
}

/// What a skill demands of the agent while it is active (`constraints:`):
/// merged across active skills by the policy's deterministic rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ConstraintsDecl {
    /// Order of precedence: higher first (default 0).
    pub priority: i32,
    /// Only these tools may run (`None`: no whitelist).
    pub allowed_tools: Option<Vec<String>>,
    /// These tools may not run.
    pub forbidden_tools: Vec<String>,
    /// The most model turns.
    pub max_steps: Option<u32>,
    /// The longest the run may take.
    pub max_duration: Option<std::time::Duration>,
    /// Key/value pairs added to the system prompt.
    pub context: Vec<(String, String)>,
}

/// A validated `SKILL.yaml`.
///
/// Every file path in it is relative to the skill directory and has no `..`
/// component; use [`Manifest::resolve_path`] to read them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Manifest {
    /// Unique identifier: lowercase letters, digits and single hyphens, at
    /// most 64 characters.
    pub name: String,
    /// The skill's version.
    pub version: Version,
    /// One line saying what the skill does.
    pub description: String,
    /// Author name or organisation.
    pub author: Option<String>,
    /// SPDX license identifier.
    pub license: Option<String>,
    /// URL of the skill's home page or repository.
    pub homepage: Option<String>,
    /// The skill's types, at least one, no duplicates.
    pub types: Vec<SkillType>,
    /// When the skill activates on its own.
    pub triggers: Triggers,
    /// Permissions the skill needs, no duplicates.
    pub permissions: Vec<Permission>,
    /// Programs the `exec` import may run (`shell:exec`); empty means any.
    pub exec: Vec<String>,
    /// `exec_timeout`: the time limit of each program it runs (`shell:exec`),
    /// at most [`MAX_EXEC_TIMEOUT`](crate::MAX_EXEC_TIMEOUT); `None`: the
    /// config's `skills.skill_shell_timeout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exec_timeout: Option<std::time::Duration>,
    /// Origins the `http` import may reach (`net:fetch`).
    pub hosts: Vec<HostPattern>,
    /// Environment variables the skill may read (`env:read`) or pass to
    /// programs (`env:write`).
    pub env: Vec<String>,
    /// Other skills this one needs.
    pub dependencies: Vec<Dependency>,
    /// The skill's WebAssembly component, if it has code.
    pub implementation: Option<Implementation>,
    /// Prompt content.
    pub prompt: Option<PromptConfig>,
    /// Tools declared up front.
    pub tools: Vec<ToolDecl>,
    /// Security rules.
    pub security_rules: Option<SecurityRules>,
    /// Wiki contributions.
    pub wiki: Option<Wiki>,
    /// Where the skill runs.
    pub compatibility: Compatibility,
    /// What the skill demands of the agent while active.
    pub constraints: Option<ConstraintsDecl>,
}

impl Manifest {
    /// Parse and validate manifest text. `file` is only used to name the
    /// file in errors.
    pub fn parse(text: &str, file: &Path) -> Result<Manifest, ManifestError> {
        crate::parse::parse_manifest(text, file)
    }

    /// Read, parse and validate the manifest at `path` (at most
    /// [`MAX_MANIFEST_BYTES`], UTF-8).
    pub fn from_file(path: &Path) -> Result<Manifest, ManifestError> {
        Manifest::from_file_with_bytes(path).map(|(m, _)| m)
    }

    /// Like [`Manifest::from_file`], also returning the exact bytes that
    /// were parsed (what a signature must cover).
    pub fn from_file_with_bytes(path: &Path) -> Result<(Manifest, Vec<u8>), ManifestError> {
        let file = std::fs::File::open(path)
            .map_err(|e| ManifestError::io(path, format!("cannot read the manifest: {e}")))?;
        let mut bytes = Vec::new();
        file.take(MAX_MANIFEST_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ManifestError::io(path, format!("cannot read the manifest: {e}")))?;
        if bytes.len() as u64 > MAX_MANIFEST_BYTES {
            return Err(ManifestError::io(
                path,
                format!("the manifest is larger than {MAX_MANIFEST_BYTES} bytes"),
            ));
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            let valid = &bytes[..e.valid_up_to()];
            let line = 1 + valid.iter().filter(|b| **b == b'\n').count();
            ManifestError::syntax(path, Some(line), "the manifest is not valid UTF-8")
        })?;
        let manifest = Manifest::parse(text, path)?;
        Ok((manifest, bytes))
    }

    /// Read, parse and validate `dir/SKILL.yaml`.
    pub fn load_dir(dir: &Path) -> Result<Manifest, ManifestError> {
        Manifest::from_file(&dir.join(MANIFEST_FILE))
    }

    /// Whether the manifest declares `permission`.
    pub fn declares(&self, permission: Permission) -> bool {
        self.permissions.contains(&permission)
    }

    /// Whether the manifest lists `skill_type` in `types`.
    pub fn has_type(&self, skill_type: SkillType) -> bool {
        self.types.contains(&skill_type)
    }

    /// Whether the skill can run on this agent version and platform
    /// (`platform` as in the manifest, or a `std::env::consts::OS` value).
    /// The error says what the skill requires.
    pub fn check_compatibility(
        &self,
        agent_version: &Version,
        platform: &str,
    ) -> Result<(), String> {
        if let Some(req) = &self.compatibility.agent_version
            && !req.matches(agent_version)
        {
            return Err(format!(
                "skill `{}` {} requires agent version {req}, but this is agent {agent_version}",
                self.name, self.version
            ));
        }
        let platforms = &self.compatibility.platforms;
        if !platforms.is_empty()
            && !Platform::from_os(platform).is_some_and(|p| platforms.contains(&p))
        {
            let list: Vec<&str> = platforms.iter().map(|p| p.as_str()).collect();
            return Err(format!(
                "skill `{}` {} supports only {}, not {platform}",
                self.name,
                self.version,
                list.join(", ")
            ));
        }
        Ok(())
    }

    /// `rel` (a path from this manifest) joined to `skill_dir`. Only normal
    /// components of `rel` are kept, so the result never leaves `skill_dir`
    /// lexically even for a path that did not come from a validated manifest.
    pub fn resolve_path(&self, skill_dir: &Path, rel: &Path) -> PathBuf {
        let mut path = skill_dir.to_path_buf();
        for component in rel.components() {
            if let Component::Normal(part) = component {
                path.push(part);
            }
        }
        path
    }

    /// The component's full path, when the skill has one.
    pub fn component_path(&self, skill_dir: &Path) -> Option<PathBuf> {
        self.implementation
            .as_ref()
            .map(|i| self.resolve_path(skill_dir, &i.component))
    }

    /// Every file this manifest names, relative to the skill directory,
    /// `/`-separated, sorted and unique: the component, prompt and context
    /// files, tool schemas, security rule files and wiki templates (not
    /// `SKILL.yaml` itself).
    pub fn named_files(&self) -> Vec<String> {
        let mut v: Vec<PathBuf> = Vec::new();
        if let Some(i) = &self.implementation {
            v.push(i.component.clone());
        }
        if let Some(p) = &self.prompt {
            v.extend(p.system_prompt_file.clone());
            v.extend(p.context_files.iter().cloned());
        }
        v.extend(
            self.tools
                .iter()
                .filter_map(|t| t.input_schema_file.clone()),
        );
        if let Some(s) = &self.security_rules {
            v.extend(s.sast_rules_file.clone());
            v.extend(s.overrides_file.clone());
        }
        if let Some(w) = &self.wiki {
            v.extend(w.sections.iter().filter_map(|s| s.template.clone()));
            v.extend(w.diagrams.iter().map(|d| d.template.clone()));
        }
        let mut out: Vec<String> = v
            .iter()
            .map(|p| {
                p.components()
                    .filter_map(|c| match c {
                        Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("/")
            })
            .filter(|p| !p.is_empty())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The files a skill's signature covers besides its component:
    /// `SKILL.yaml` and every other file in [`Manifest::named_files`].
    pub fn signed_files(&self) -> Vec<String> {
        let component = self.implementation.as_ref().map(|i| {
            i.component
                .components()
                .filter_map(|c| match c {
                    Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("/")
        });
        let mut out: Vec<String> = self
            .named_files()
            .into_iter()
            .filter(|p| Some(p) != component.as_ref())
            .collect();
        out.push(MANIFEST_FILE.to_string());
        out.sort();
        out.dedup();
        out
    }

    /// Whether the skill declares `shell:exec` without an `exec` list, and so
    /// may run any program. A UI should warn about it.
    pub fn exec_unrestricted(&self) -> bool {
        self.declares(Permission::ShellExec) && self.exec.is_empty()
    }

    /// Whether the manifest lets the skill run `program` (exactly as the
    /// skill names it): it declares `shell:exec` and either lists no
    /// programs or lists this one.
    pub fn allows_program(&self, program: &str) -> bool {
        self.declares(Permission::ShellExec)
            && (self.exec.is_empty() || self.exec.iter().any(|p| p == program))
    }

    /// Whether the manifest lets the skill fetch from `scheme://host[:port]`
    /// (`port` `None` meaning the scheme's default): it declares `net:fetch`
    /// and one of its `hosts` matches.
    pub fn allows_host(&self, scheme: &str, host: &str, port: Option<u16>) -> bool {
        self.declares(Permission::NetFetch)
            && self.hosts.iter().any(|h| h.matches(scheme, host, port))
    }

    /// The scopes the manifest bounds `permission` to: the entries of the list the
    /// capability table names for it (`exec`, `hosts`, `env`). Empty when it has none, which
    /// means the permission as a whole.
    pub fn scopes_of(&self, permission: Permission) -> Vec<String> {
        match permission.capability().manifest_list {
            Some(ManifestList::Exec) => self.exec.clone(),
            Some(ManifestList::Hosts) => self.hosts.iter().map(ToString::to_string).collect(),
            Some(ManifestList::Env) => self.env.clone(),
            None => Vec::new(),
        }
    }

    /// Whether `name` is one of the environment variables the manifest lists.
    pub fn allows_env(&self, name: &str) -> bool {
        self.env.iter().any(|e| e == name)
    }

    /// The declared tool called `name`.
    pub fn tool(&self, name: &str) -> Option<&ToolDecl> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Things that are valid but deserve the user's attention before
    /// granting, one sentence each.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.exec_unrestricted() {
            warnings.push(format!(
                "skill `{}` declares shell:exec without an `exec` list, so it may run any program",
                self.name
            ));
        }
        if self.declares(Permission::FileWrite) && self.declares(Permission::ShellExec) {
            warnings.push(format!(
                "skill `{}` may both change files and run programs in the project",
                self.name
            ));
        }
        warnings
    }
}

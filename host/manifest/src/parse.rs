//! From the YAML tree to a validated [`Manifest`], with an error naming the
//! file, the field path and the line for every problem.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use semver::{Version, VersionReq};

use crate::capability::ManifestList;
use crate::error::{ErrorKind, ManifestError};
use crate::exec_rules;
use crate::host::HostPattern;
use crate::manifest::{
    Compatibility, ConstraintsDecl, DEFAULT_MAX_CONTEXT_TOKENS, Dependency, Implementation,
    Manifest, Mode, Platform, PromptConfig, ScannerDecl, SecurityRules, SkillType, ToolDecl,
    ToolFiles, Triggers, Wiki, WikiClassifier, WikiDiagram, WikiFileClass, WikiSection,
};
use crate::permission::Permission;
use crate::rules;
use crate::yaml::{self, Entry, Kind, Node};

type Result<T> = std::result::Result<T, ManifestError>;

const TOP_KEYS: &[&str] = &[
    "name",
    "version",
    "description",
    "author",
    "license",
    "homepage",
    "types",
    "triggers",
    "permissions",
    "exec",
    "exec_timeout",
    "hosts",
    "env",
    "dependencies",
    "implementation",
    "prompt",
    "tools",
    "security_rules",
    "wiki",
    "compatibility",
    "constraints",
];

/// A value in the document: its node, the line to report and its field path.
struct At<'a> {
    node: &'a Node,
    line: usize,
    field: String,
}

/// The entries of a mapping whose keys were checked.
struct Fields<'a> {
    path: String,
    line: Option<usize>,
    entries: &'a [Entry],
}

struct Cx<'a> {
    file: &'a Path,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `security_rules.scanners[3]` → `security_rules.scanners[]`.
fn generic(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push(c);
            }
            ']' => {
                in_index = false;
                out.push(c);
            }
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

/// An explanation for keys that the spec's other backends used.
fn unknown_key_hint(path: &str, key: &str) -> Option<String> {
    match (generic(path).as_str(), key) {
        ("implementation", "backend" | "entrypoint" | "command" | "path") => Some(format!(
            "`{key}` is not supported: skills are WebAssembly components, there is no starlark, process or plugin backend; set `implementation.component` to the skill's `.wasm` file, relative to the skill directory"
        )),
        ("security_rules.scanners[]", "entrypoint") => Some(
            "`entrypoint` is not supported: scanners are exported by the skill's WebAssembly component (the `scanner` interface); give each scanner a `name` and `description` and set `implementation.component`".to_string(),
        ),
        _ => None,
    }
}

impl<'a> Fields<'a> {
    fn entry(&self, key: &str) -> Option<&'a Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// The value under `key`, unless it is absent or null.
    fn get(&self, key: &str) -> Option<At<'a>> {
        self.entry(key)
            .filter(|e| e.value.kind != Kind::Null)
            .map(|e| At {
                node: &e.value,
                line: e.line,
                field: join(&self.path, key),
            })
    }

    fn required(&self, cx: &Cx<'_>, key: &str, expected: &str) -> Result<At<'a>> {
        if let Some(at) = self.get(key) {
            return Ok(at);
        }
        let field = join(&self.path, key);
        match self.entry(key) {
            Some(e) => Err(cx.err(
                Some(e.line),
                &field,
                format!("has no value (expected {expected})"),
            )),
            None => Err(cx.err(
                self.line,
                &field,
                format!("is missing (expected {expected})"),
            )),
        }
    }
}

impl Cx<'_> {
    fn err(&self, line: Option<usize>, field: &str, message: impl Into<String>) -> ManifestError {
        ManifestError::invalid(self.file, line, field, message)
    }

    fn at_err(&self, at: &At<'_>, message: impl Into<String>) -> ManifestError {
        self.err(Some(at.line), &at.field, message)
    }

    fn string(&self, at: &At<'_>) -> Result<String> {
        match &at.node.kind {
            Kind::Scalar { text, .. } => Ok(text.clone()),
            other => Err(self.at_err(at, format!("expected a string, found {}", other.describe()))),
        }
    }

    /// A string that is not blank, trimmed.
    fn text(&self, at: &At<'_>, expected: &str) -> Result<String> {
        let s = self.string(at)?;
        let trimmed = s.trim();
        if trimmed.is_empty() {
            return Err(self.at_err(at, format!("must not be empty (expected {expected})")));
        }
        Ok(trimmed.to_string())
    }

    /// A non-blank string on one line, trimmed.
    fn line_text(&self, at: &At<'_>, expected: &str) -> Result<String> {
        let s = self.text(at, expected)?;
        if s.contains(['\n', '\r']) {
            return Err(self.at_err(at, format!("must be a single line (expected {expected})")));
        }
        Ok(s)
    }

    fn boolean(&self, at: &At<'_>) -> Result<bool> {
        match &at.node.kind {
            Kind::Scalar { text, plain: true }
                if matches!(text.as_str(), "true" | "True" | "TRUE") =>
            {
                Ok(true)
            }
            Kind::Scalar { text, plain: true }
                if matches!(text.as_str(), "false" | "False" | "FALSE") =>
            {
                Ok(false)
            }
            other => Err(self.at_err(
                at,
                format!("expected true or false, found {}", other.describe()),
            )),
        }
    }

    fn count(&self, at: &At<'_>) -> Result<u32> {
        match &at.node.kind {
            Kind::Scalar { text, plain: true } if text.bytes().all(|b| b.is_ascii_digit()) => {
                text.parse::<u32>().map_err(|_| {
                    self.at_err(
                        at,
                        format!(
                            "`{text}` is too large (expected a whole number up to {})",
                            u32::MAX
                        ),
                    )
                })
            }
            other => Err(self.at_err(
                at,
                format!("expected a whole number, found {}", other.describe()),
            )),
        }
    }

    fn path(&self, at: &At<'_>) -> Result<PathBuf> {
        let s = self.string(at)?;
        rules::check_relative_path(&s).map_err(|m| self.at_err(at, m))
    }

    fn list<'a>(&self, at: &At<'a>) -> Result<Vec<At<'a>>> {
        match &at.node.kind {
            Kind::Seq(items) => Ok(items
                .iter()
                .enumerate()
                .map(|(i, node)| At {
                    node,
                    line: node.line,
                    field: format!("{}[{i}]", at.field),
                })
                .collect()),
            other => Err(self.at_err(at, format!("expected a list, found {}", other.describe()))),
        }
    }

    /// An optional list: absent or null is empty.
    fn opt_list<'a>(&self, fields: &Fields<'a>, key: &str) -> Result<Vec<At<'a>>> {
        match fields.get(key) {
            Some(at) => self.list(&at),
            None => Ok(Vec::new()),
        }
    }

    fn map<'a>(&self, at: &At<'a>, allowed: &[&str]) -> Result<Fields<'a>> {
        match &at.node.kind {
            Kind::Map(entries) => self
                .check_keys(&at.field, entries, allowed)
                .map(|()| Fields {
                    path: at.field.clone(),
                    line: Some(at.line),
                    entries,
                }),
            other => Err(self.at_err(
                at,
                format!(
                    "expected a mapping with keys {}, found {}",
                    allowed.join(", "),
                    other.describe()
                ),
            )),
        }
    }

    fn check_keys(&self, path: &str, entries: &[Entry], allowed: &[&str]) -> Result<()> {
        for (i, e) in entries.iter().enumerate() {
            let field = join(path, &e.key);
            if !allowed.contains(&e.key.as_str()) {
                let message = unknown_key_hint(path, &e.key).unwrap_or_else(|| {
                    format!(
                        "unknown field `{}` (expected one of: {})",
                        e.key,
                        allowed.join(", ")
                    )
                });
                return Err(self.err(Some(e.line), &field, message));
            }
            if let Some(first) = entries[..i].iter().find(|p| p.key == e.key) {
                return Err(self.err(
                    Some(e.line),
                    &field,
                    format!(
                        "duplicate key `{}` (first given at line {})",
                        e.key, first.line
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Fails on the second occurrence of `value` in a list.
    fn no_duplicate(
        &self,
        seen: &mut HashMap<String, usize>,
        value: &str,
        at: &At<'_>,
        what: &str,
    ) -> Result<()> {
        self.no_duplicate_key(seen, value, value, at, what)
    }

    /// Fails on the second occurrence of `key` in a list; `value` is how the
    /// entry reads in the message.
    fn no_duplicate_key(
        &self,
        seen: &mut HashMap<String, usize>,
        key: &str,
        value: &str,
        at: &At<'_>,
        what: &str,
    ) -> Result<()> {
        if let Some(line) = seen.get(key) {
            return Err(self.at_err(
                at,
                format!("duplicate {what} `{value}` (first listed at line {line})"),
            ));
        }
        seen.insert(key.to_string(), at.line);
        Ok(())
    }
}

/// What the parser keeps about sections for the checks that span several.
struct Spots {
    types: Vec<(SkillType, usize, String)>,
    permissions: Vec<(Permission, usize, String)>,
}

pub(crate) fn parse_manifest(text: &str, file: &Path) -> Result<Manifest> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let root = match yaml::parse_document(text) {
        Ok(Some(node)) => node,
        Ok(None) => {
            return Err(ManifestError::syntax(
                file,
                None,
                "the manifest is empty (expected a mapping with at least name, version, description and types)",
            ));
        }
        Err(e) => return Err(ManifestError::syntax(file, e.line, e.message)),
    };
    let cx = Cx { file };
    let Kind::Map(entries) = &root.kind else {
        return Err(ManifestError {
            kind: ErrorKind::Invalid,
            file: file.to_path_buf(),
            line: Some(root.line),
            field: None,
            message: format!(
                "expected a mapping of manifest fields (name, version, description, types, ...), found {}",
                root.kind.describe()
            ),
        });
    };
    cx.check_keys("", entries, TOP_KEYS)?;
    let top = Fields {
        path: String::new(),
        line: None,
        entries,
    };

    let name_at = top.required(&cx, "name", "the skill's name, e.g. `kubernetes`")?;
    let name = cx.string(&name_at)?;
    rules::check_skill_name(&name).map_err(|m| cx.at_err(&name_at, m))?;

    let version_at = top.required(&cx, "version", "a semantic version such as `1.2.0`")?;
    let version_text = cx.string(&version_at)?;
    let version = Version::parse(version_text.trim()).map_err(|e| {
        cx.at_err(
            &version_at,
            format!("`{version_text}` is not a semantic version (expected MAJOR.MINOR.PATCH such as `1.2.0`): {e}"),
        )
    })?;

    let description_at = top.required(&cx, "description", "one line saying what the skill does")?;
    let description = cx.line_text(&description_at, "one line saying what the skill does")?;

    let author = top
        .get("author")
        .map(|at| cx.line_text(&at, "the author's name or organisation"))
        .transpose()?;
    let license = top
        .get("license")
        .map(|at| cx.line_text(&at, "an SPDX license identifier such as `MIT`"))
        .transpose()?;
    let homepage = top
        .get("homepage")
        .map(|at| homepage(&cx, &at))
        .transpose()?;

    let types_at = top.required(
        &cx,
        "types",
        "a list of skill types: tool, prompt, workflow, security-rule, transform",
    )?;
    let mut spots = Spots {
        types: Vec::new(),
        permissions: Vec::new(),
    };
    let type_items = cx.list(&types_at)?;
    if type_items.is_empty() {
        return Err(cx.at_err(
            &types_at,
            format!(
                "must list at least one skill type (expected one or more of: {})",
                SkillType::ALL.map(SkillType::as_str).join(", ")
            ),
        ));
    }
    let mut seen = HashMap::new();
    for at in &type_items {
        let s = cx.string(at)?;
        let t = SkillType::from_str(&s).map_err(|m| cx.at_err(at, m))?;
        cx.no_duplicate(&mut seen, &s, at, "skill type")?;
        spots.types.push((t, at.line, at.field.clone()));
    }

    let mut seen = HashMap::new();
    for at in cx.opt_list(&top, "permissions")? {
        let s = cx.string(&at)?;
        let p = Permission::from_str(&s).map_err(|e| cx.at_err(&at, e.to_string()))?;
        cx.no_duplicate(&mut seen, &s, &at, "permission")?;
        spots.permissions.push((p, at.line, at.field.clone()));
    }
    let permissions: Vec<Permission> = spots.permissions.iter().map(|(p, _, _)| *p).collect();
    let declares = |p: Permission| permissions.contains(&p);

    let (exec, hosts, env) = scopes(&cx, &top, &spots, &declares)?;
    let exec_timeout = exec_timeout(&cx, &top, &declares)?;

    let triggers = match top.get("triggers") {
        Some(at) => triggers(&cx, &at)?,
        None => Triggers::default(),
    };

    let mut dependencies = Vec::new();
    let mut seen = HashMap::new();
    for at in cx.opt_list(&top, "dependencies")? {
        let (dep, name_at) = dependency(&cx, &at)?;
        if dep.name == name {
            return Err(cx.at_err(
                &name_at,
                format!("a skill cannot depend on itself (`{name}`)"),
            ));
        }
        cx.no_duplicate(&mut seen, &dep.name, &name_at, "dependency")?;
        dependencies.push(dep);
    }

    let implementation_at = top.get("implementation");
    let implementation = implementation_at
        .as_ref()
        .map(|at| implementation(&cx, at))
        .transpose()?;

    let prompt_at = top.get("prompt");
    let prompt = prompt_at.as_ref().map(|at| prompt(&cx, at)).transpose()?;

    let tools_at = top.get("tools");
    let tools = match &tools_at {
        Some(at) => tools(&cx, at)?,
        None => Vec::new(),
    };

    let security_at = top.get("security_rules");
    let security_rules = security_at
        .as_ref()
        .map(|at| security_rules(&cx, at))
        .transpose()?;

    let wiki = top.get("wiki").map(|at| wiki(&cx, &at)).transpose()?;

    let compatibility = match top.get("compatibility") {
        Some(at) => compatibility(&cx, &at)?,
        None => Compatibility::default(),
    };

    let constraints = top
        .get("constraints")
        .map(|at| constraints(&cx, &at))
        .transpose()?;

    let types: Vec<SkillType> = spots.types.iter().map(|(t, _, _)| *t).collect();
    let has = |t: SkillType| types.contains(&t);

    // Sections need the matching type.
    for (at, t, section) in [
        (&tools_at, SkillType::Tool, "tools"),
        (&prompt_at, SkillType::Prompt, "prompt"),
        (&security_at, SkillType::SecurityRule, "security_rules"),
    ] {
        if let Some(at) = at
            && !has(t)
        {
            return Err(cx.at_err(
                at,
                format!("a `{section}` section needs type `{t}` in `types`; add it or remove the section"),
            ));
        }
    }

    // Types need what serves them.
    for (t, line, field) in &spots.types {
        let missing = match t {
            SkillType::Tool | SkillType::Workflow | SkillType::Transform | SkillType::Hook => implementation.is_none().then(|| {
                format!(
                    "type `{t}` needs `implementation.component`: the WebAssembly component that exports the `{}` interface",
                    t.interface()
                )
            }),
            SkillType::Prompt => (implementation.is_none()
                && prompt.as_ref().is_none_or(|p| p.system_prompt_file.is_none()))
            .then(|| {
                "type `prompt` needs `prompt.system_prompt_file`, or an `implementation.component` that exports the `prompt` interface".to_string()
            }),
            SkillType::SecurityRule => security_rules
                .as_ref()
                .is_none_or(|s| s.sast_rules_file.is_none() && s.scanners.is_empty())
                .then(|| {
                    "type `security-rule` needs a `security_rules` section with a `sast_rules_file` or `scanners`".to_string()
                }),
        };
        if let Some(message) = missing {
            return Err(cx.err(Some(*line), field, message));
        }
    }

    // Scanners and analyzers live in the component.
    if let (Some(at), Some(rules)) = (&security_at, &security_rules)
        && !rules.scanners.is_empty()
        && implementation.is_none()
    {
        let scanners_at = child(at, "scanners").unwrap_or(At {
            node: at.node,
            line: at.line,
            field: at.field.clone(),
        });
        return Err(cx.at_err(
            &scanners_at,
            "scanners are exported by the skill's WebAssembly component (the `scanner` interface); set `implementation.component`",
        ));
    }
    if let Some(w) = &wiki
        && w.sections.iter().any(|s| s.analyzer.is_some())
        && !has(SkillType::Workflow)
    {
        let (line, field) = analyzer_spot(&top);
        return Err(cx.err(
            Some(line),
            &field,
            "an analyzer names a workflow exported by this skill's component; add type `workflow` to `types`",
        ));
    }

    Ok(Manifest {
        name,
        version,
        description,
        author,
        license,
        homepage,
        types,
        triggers,
        permissions,
        exec,
        exec_timeout,
        hosts,
        env,
        dependencies,
        implementation,
        prompt,
        tools,
        security_rules,
        wiki,
        compatibility,
        constraints,
    })
}

fn homepage(cx: &Cx<'_>, at: &At<'_>) -> Result<String> {
    let s = cx.line_text(at, "an http or https URL")?;
    let rest = s
        .strip_prefix("https://")
        .or_else(|| s.strip_prefix("http://"));
    match rest {
        Some(rest) if !rest.is_empty() && !rest.contains(char::is_whitespace) => Ok(s),
        _ => Err(cx.at_err(
            at,
            format!("`{s}` is not a URL (expected an http or https URL)"),
        )),
    }
}

type Scopes = (Vec<String>, Vec<HostPattern>, Vec<String>);

/// `exec`, `hosts` and `env`, and their ties to permissions.
fn scopes(
    cx: &Cx<'_>,
    top: &Fields<'_>,
    spots: &Spots,
    declares: &dyn Fn(Permission) -> bool,
) -> Result<Scopes> {
    let mut exec = Vec::new();
    let mut seen = HashMap::new();
    for at in cx.opt_list(top, "exec")? {
        let s = cx.string(&at)?;
        rules::check_program(&s).map_err(|m| cx.at_err(&at, m))?;
        cx.no_duplicate(&mut seen, &s, &at, "program")?;
        exec.push(s);
    }
    if let Some(at) = top.get("exec")
        && !exec.is_empty()
        && !ManifestList::Exec.is_declared(declares)
    {
        return Err(cx.at_err(&at, "listing programs needs the `shell:exec` permission; add it to `permissions` or remove `exec`"));
    }

    let mut hosts = Vec::new();
    let mut seen = HashMap::new();
    for at in cx.opt_list(top, "hosts")? {
        let s = cx.string(&at)?;
        let h = HostPattern::parse(s.trim()).map_err(|m| cx.at_err(&at, m))?;
        let key = format!(
            "{}://{}{}:{}",
            h.scheme(),
            if h.is_wildcard() { "*." } else { "" },
            h.host(),
            h.effective_port()
        );
        cx.no_duplicate_key(&mut seen, &key, s.trim(), &at, "host")?;
        hosts.push(h);
    }
    if let Some(at) = top.get("hosts")
        && !hosts.is_empty()
        && !ManifestList::Hosts.is_declared(declares)
    {
        return Err(cx.at_err(&at, "listing hosts needs the `net:fetch` permission; add it to `permissions` or remove `hosts`"));
    }

    let mut env = Vec::new();
    let mut seen = HashMap::new();
    for at in cx.opt_list(top, "env")? {
        let s = cx.string(&at)?;
        rules::check_env_name(&s).map_err(|m| cx.at_err(&at, m))?;
        if declares(Permission::EnvWrite)
            && let Some(why) = exec_rules::env_write_refusal(&s)
        {
            return Err(cx.at_err(&at, exec_rules::env_write_message(&s, why)));
        }
        cx.no_duplicate(&mut seen, &s, &at, "variable")?;
        env.push(s);
    }
    if let Some(at) = top.get("env")
        && !env.is_empty()
        && !ManifestList::Env.is_declared(declares)
    {
        return Err(cx.at_err(
            &at,
            "listing environment variables needs the `env:read` or `env:write` permission; add one to `permissions` or remove `env`",
        ));
    }

    for (p, line, field) in &spots.permissions {
        let message = match p {
            Permission::NetFetch if hosts.is_empty() => Some(format!(
                "`{p}` needs a `hosts` list: the origins the skill may call, e.g. `hosts: [\"https://api.example.com\"]`"
            )),
            Permission::EnvRead | Permission::EnvWrite if env.is_empty() => Some(format!(
                "`{p}` needs an `env` list: the variables it covers, e.g. `env: [KUBECONFIG]`"
            )),
            _ => None,
        };
        if let Some(message) = message {
            return Err(cx.err(Some(*line), field, message));
        }
    }
    Ok((exec, hosts, env))
}

/// `exec_timeout`: the time limit of each program the skill runs.
fn exec_timeout(
    cx: &Cx<'_>,
    top: &Fields<'_>,
    declares: &dyn Fn(Permission) -> bool,
) -> Result<Option<Duration>> {
    let Some(at) = top.get("exec_timeout") else {
        return Ok(None);
    };
    if !declares(Permission::ShellExec) {
        return Err(cx.at_err(
            &at,
            "a program time limit needs the `shell:exec` permission; add it to `permissions` or remove `exec_timeout`",
        ));
    }
    let s = cx.string(&at)?;
    exec_rules::parse_exec_timeout(s.trim())
        .map(Some)
        .map_err(|m| cx.at_err(&at, m))
}

fn string_items(cx: &Cx<'_>, fields: &Fields<'_>, key: &str, what: &str) -> Result<Vec<String>> {
    cx.opt_list(fields, key)?
        .iter()
        .map(|at| cx.line_text(at, what))
        .collect()
}

fn triggers(cx: &Cx<'_>, at: &At<'_>) -> Result<Triggers> {
    let fields = cx.map(at, &["files", "keywords", "modes", "languages"])?;
    let mut files = Vec::new();
    for at in cx.opt_list(&fields, "files")? {
        let s = cx.line_text(
            &at,
            "a glob pattern of project files, e.g. `*.yaml` or `k8s/`",
        )?;
        globset::Glob::new(&s)
            .map_err(|e| cx.at_err(&at, format!("`{s}` is not a valid glob: {}", e.kind())))?;
        files.push(s);
    }
    let keywords = string_items(cx, &fields, "keywords", "a word that activates the skill")?;
    let mut modes = Vec::new();
    let mut seen = HashMap::new();
    for at in cx.opt_list(&fields, "modes")? {
        let s = cx.string(&at)?;
        modes.push(Mode::from_str(&s).map_err(|m| cx.at_err(&at, m))?);
        cx.no_duplicate(&mut seen, &s, &at, "mode")?;
    }
    let languages = string_items(cx, &fields, "languages", "a language name such as `yaml`")?;
    Ok(Triggers {
        files,
        keywords,
        modes,
        languages,
    })
}

fn dependency<'a>(cx: &Cx<'_>, at: &At<'a>) -> Result<(Dependency, At<'a>)> {
    let fields = cx.map(at, &["name", "version", "optional"])?;
    let name_at = fields.required(cx, "name", "the name of the skill depended on")?;
    let name = cx.string(&name_at)?;
    rules::check_skill_name(&name).map_err(|m| cx.at_err(&name_at, m))?;
    let version = match fields.get("version") {
        Some(at) => {
            let s = cx.string(&at)?;
            VersionReq::parse(s.trim()).map_err(|e| {
                cx.at_err(
                    &at,
                    format!("`{s}` is not a version requirement (expected e.g. `>=1.0.0` or `^2.1`): {e}"),
                )
            })?
        }
        None => VersionReq::STAR,
    };
    let optional = fields
        .get("optional")
        .map(|at| cx.boolean(&at))
        .transpose()?
        .unwrap_or(false);
    Ok((
        Dependency {
            name,
            version,
            optional,
        },
        name_at,
    ))
}

fn implementation(cx: &Cx<'_>, at: &At<'_>) -> Result<Implementation> {
    let fields = cx.map(at, &["component"])?;
    let component_at = fields.required(
        cx,
        "component",
        "the path of the skill's WebAssembly component, relative to the skill directory, e.g. `skill.wasm`",
    )?;
    let component = cx.path(&component_at)?;
    if component.extension().is_none_or(|e| e != "wasm") {
        return Err(cx.at_err(
            &component_at,
            format!(
                "`{}` is not a `.wasm` file (expected the path of the skill's WebAssembly component, e.g. `skill.wasm`)",
                component.display()
            ),
        ));
    }
    Ok(Implementation { component })
}

fn prompt(cx: &Cx<'_>, at: &At<'_>) -> Result<PromptConfig> {
    let fields = cx.map(
        at,
        &["system_prompt_file", "context_files", "max_context_tokens"],
    )?;
    let system_prompt_file = fields
        .get("system_prompt_file")
        .map(|at| cx.path(&at))
        .transpose()?;
    let context_files = cx
        .opt_list(&fields, "context_files")?
        .iter()
        .map(|at| cx.path(at))
        .collect::<Result<Vec<_>>>()?;
    let max_context_tokens = match fields.get("max_context_tokens") {
        Some(at) => {
            let n = cx.count(&at)?;
            if n == 0 {
                return Err(cx.at_err(
                    &at,
                    "must be greater than 0 (expected the token budget of this skill's prompt content, e.g. 4000)",
                ));
            }
            n
        }
        None => DEFAULT_MAX_CONTEXT_TOKENS,
    };
    Ok(PromptConfig {
        system_prompt_file,
        context_files,
        max_context_tokens,
    })
}

fn tools(cx: &Cx<'_>, at: &At<'_>) -> Result<Vec<ToolDecl>> {
    let mut tools = Vec::new();
    let mut seen = HashMap::new();
    for at in cx.list(at)? {
        let fields = cx.map(
            &at,
            &[
                "name",
                "description",
                "input_schema_file",
                "requires_approval",
                "files",
                "platforms",
            ],
        )?;
        let name_at = fields.required(cx, "name", "the tool's name, e.g. `kubectl_get`")?;
        let name = cx.string(&name_at)?;
        rules::check_tool_name(&name).map_err(|m| cx.at_err(&name_at, m))?;
        cx.no_duplicate(&mut seen, &name, &name_at, "tool")?;
        let description_at = fields.required(cx, "description", "what the tool does")?;
        let description = cx.text(&description_at, "what the tool does")?;
        let input_schema_file = fields
            .get("input_schema_file")
            .map(|at| cx.path(&at))
            .transpose()?;
        let requires_approval = fields
            .get("requires_approval")
            .map(|at| cx.boolean(&at))
            .transpose()?
            .unwrap_or(false);
        let files = match fields.get("files") {
            None if requires_approval => ToolFiles::Write,
            None => ToolFiles::Read,
            Some(at) => {
                let text = cx.string(&at)?;
                let files = ToolFiles::parse(&text).ok_or_else(|| {
                    cx.at_err(
                        &at,
                        format!(
                            "expected one of {}, found `{text}`",
                            ToolFiles::NAMES.join(", ")
                        ),
                    )
                })?;
                if files == ToolFiles::Write && !requires_approval {
                    return Err(cx.at_err(
                        &at,
                        "`files: write` needs `requires_approval: true` (a tool that may \
                         change files asks first)",
                    ));
                }
                files
            }
        };
        let mut platforms = Vec::new();
        let mut seen_platforms = HashMap::new();
        for at in cx.opt_list(&fields, "platforms")? {
            let s = cx.string(&at)?;
            platforms.push(Platform::from_str(&s).map_err(|m| cx.at_err(&at, m))?);
            cx.no_duplicate(&mut seen_platforms, &s, &at, "platform")?;
        }
        tools.push(ToolDecl {
            name,
            description,
            input_schema_file,
            requires_approval,
            files,
            platforms,
        });
    }
    Ok(tools)
}

const SECURITY_KEYS: &[&str] = &["sast_rules_file", "scanners", "overrides_file"];

fn security_rules(cx: &Cx<'_>, at: &At<'_>) -> Result<SecurityRules> {
    let fields = cx.map(at, SECURITY_KEYS)?;
    let sast_rules_file = fields
        .get("sast_rules_file")
        .map(|at| cx.path(&at))
        .transpose()?;
    let overrides_file = fields
        .get("overrides_file")
        .map(|at| cx.path(&at))
        .transpose()?;
    let mut scanners = Vec::new();
    let mut seen = HashMap::new();
    for at in cx.opt_list(&fields, "scanners")? {
        let item = cx.map(&at, &["name", "description"])?;
        let name_at = item.required(
            cx,
            "name",
            "the scanner's name, e.g. `k8s-manifest-scanner`",
        )?;
        let name = cx.string(&name_at)?;
        rules::check_identifier(&name, "scanner name", "k8s-manifest-scanner")
            .map_err(|m| cx.at_err(&name_at, m))?;
        cx.no_duplicate(&mut seen, &name, &name_at, "scanner")?;
        let description = item
            .get("description")
            .map(|at| cx.text(&at, "what the scanner looks for"))
            .transpose()?;
        scanners.push(ScannerDecl { name, description });
    }
    Ok(SecurityRules {
        sast_rules_file,
        scanners,
        overrides_file,
    })
}

fn wiki(cx: &Cx<'_>, at: &At<'_>) -> Result<Wiki> {
    let fields = cx.map(at, &["sections", "diagrams", "classifiers"])?;
    let mut sections = Vec::new();
    for at in cx.opt_list(&fields, "sections")? {
        let item = cx.map(&at, &["title", "template", "analyzer"])?;
        let title_at = item.required(cx, "title", "the section's title")?;
        let title = cx.line_text(&title_at, "the section's title")?;
        let template = item.get("template").map(|at| cx.path(&at)).transpose()?;
        let analyzer = match item.get("analyzer") {
            Some(at) => {
                let s = cx.string(&at)?;
                rules::check_identifier(
                    &s,
                    "analyzer (the name of a workflow of this skill)",
                    "k8s-wiki",
                )
                .map_err(|m| cx.at_err(&at, m))?;
                Some(s)
            }
            None => None,
        };
        if template.is_none() && analyzer.is_none() {
            return Err(cx.at_err(
                &at,
                "a wiki section needs a `template`, an `analyzer` or both",
            ));
        }
        sections.push(WikiSection {
            title,
            template,
            analyzer,
        });
    }
    let mut diagrams = Vec::new();
    for at in cx.opt_list(&fields, "diagrams")? {
        let item = cx.map(&at, &["type", "template"])?;
        let kind_at =
            item.required(cx, "type", "the diagram's kind, e.g. `deployment-topology`")?;
        let kind = cx.string(&kind_at)?;
        rules::check_identifier(&kind, "diagram type", "deployment-topology")
            .map_err(|m| cx.at_err(&kind_at, m))?;
        let template_at = item.required(
            cx,
            "template",
            "the diagram's template, relative to the skill directory",
        )?;
        let template = cx.path(&template_at)?;
        diagrams.push(WikiDiagram { kind, template });
    }
    let mut classifiers = Vec::new();
    for at in cx.opt_list(&fields, "classifiers")? {
        let item = cx.map(&at, &["pattern", "class"])?;
        let pattern_at = item.required(
            cx,
            "pattern",
            "a glob of project files, relative to the project root, e.g. `gen/**`",
        )?;
        let pattern = cx.line_text(&pattern_at, "a glob of project files, e.g. `gen/**`")?;
        globset::Glob::new(&pattern).map_err(|e| {
            cx.at_err(
                &pattern_at,
                format!("`{pattern}` is not a valid glob: {}", e.kind()),
            )
        })?;
        let class_at = item.required(
            cx,
            "class",
            "the files' class: source, test, config, docs or generated",
        )?;
        let name = cx.string(&class_at)?;
        let class = WikiFileClass::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, c)| *c)
            .ok_or_else(|| {
                cx.at_err(
                    &class_at,
                    format!(
                        "`{name}` is not a file class (expected one of: source, test, config, docs, generated)"
                    ),
                )
            })?;
        classifiers.push(WikiClassifier { pattern, class });
    }
    Ok(Wiki {
        sections,
        diagrams,
        classifiers,
    })
}

/// The value under `key` of the mapping at `at`, without checking keys.
fn child<'a>(at: &At<'a>, key: &str) -> Option<At<'a>> {
    match &at.node.kind {
        Kind::Map(entries) => entries.iter().find(|e| e.key == key).map(|e| At {
            node: &e.value,
            line: e.line,
            field: join(&at.field, key),
        }),
        _ => None,
    }
}

/// Where the first `wiki.sections[].analyzer` is, for the error about it.
fn analyzer_spot(top: &Fields<'_>) -> (usize, String) {
    let wiki = top.get("wiki");
    let sections = wiki.as_ref().and_then(|w| child(w, "sections"));
    if let Some(sections) = &sections
        && let Kind::Seq(items) = &sections.node.kind
    {
        for (i, node) in items.iter().enumerate() {
            let item = At {
                node,
                line: node.line,
                field: format!("{}[{i}]", sections.field),
            };
            if let Some(analyzer) = child(&item, "analyzer") {
                return (analyzer.line, analyzer.field);
            }
        }
    }
    match (sections, wiki) {
        (Some(at), _) | (None, Some(at)) => (at.line, at.field),
        (None, None) => (1, "wiki".to_string()),
    }
}

fn compatibility(cx: &Cx<'_>, at: &At<'_>) -> Result<Compatibility> {
    let fields = cx.map(at, &["agent_version", "platforms"])?;
    let agent_version = match fields.get("agent_version") {
        Some(at) => {
            let s = cx.string(&at)?;
            Some(VersionReq::parse(s.trim()).map_err(|e| {
                cx.at_err(
                    &at,
                    format!("`{s}` is not a version requirement (expected e.g. `>=1.0.0`): {e}"),
                )
            })?)
        }
        None => None,
    };
    let mut platforms = Vec::new();
    let mut seen = HashMap::new();
    for at in cx.opt_list(&fields, "platforms")? {
        let s = cx.string(&at)?;
        platforms.push(Platform::from_str(&s).map_err(|m| cx.at_err(&at, m))?);
        cx.no_duplicate(&mut seen, &s, &at, "platform")?;
    }
    Ok(Compatibility {
        agent_version,
        platforms,
    })
}

/// `120s`, `5m`, `500ms`, `1h` or a whole number of seconds
/// ([`agent_bounded::parse_duration`]).
fn duration(cx: &Cx<'_>, at: &At<'_>) -> Result<std::time::Duration> {
    use agent_bounded::{BareNumber, DurationError};
    let s = cx.string(at)?;
    agent_bounded::parse_duration(&s, BareNumber::Seconds).map_err(|e| match e {
        DurationError::Zero => cx.at_err(at, "must be greater than zero"),
        DurationError::Malformed | DurationError::TooLarge => cx.at_err(
            at,
            format!("`{s}` is not a duration (expected e.g. `30s`, `5m`, `1h` or `500ms`)"),
        ),
    })
}

fn tool_names(cx: &Cx<'_>, items: &[At<'_>], what: &str) -> Result<Vec<String>> {
    let mut seen = HashMap::new();
    let mut out = Vec::new();
    for at in items {
        let name = cx.line_text(at, "a tool name")?;
        cx.no_duplicate(&mut seen, &name, at, what)?;
        out.push(name);
    }
    Ok(out)
}

fn constraints(cx: &Cx<'_>, at: &At<'_>) -> Result<ConstraintsDecl> {
    let fields = cx.map(
        at,
        &[
            "priority",
            "allowed_tools",
            "forbidden_tools",
            "max_steps",
            "max_duration",
            "context",
        ],
    )?;
    let priority = match fields.get("priority") {
        Some(at) => {
            let s = cx.string(&at)?;
            s.trim().parse::<i32>().map_err(|_| {
                cx.at_err(
                    &at,
                    format!("`{s}` is not a whole number (expected e.g. 10 or -5)"),
                )
            })?
        }
        None => 0,
    };
    let allowed_tools = match fields.get("allowed_tools") {
        Some(at) => Some(tool_names(cx, &cx.list(&at)?, "allowed tool")?),
        None => None,
    };
    let forbidden_tools = tool_names(
        cx,
        &cx.opt_list(&fields, "forbidden_tools")?,
        "forbidden tool",
    )?;
    let max_steps = match fields.get("max_steps") {
        Some(at) => {
            let n = cx.count(&at)?;
            if n == 0 {
                return Err(cx.at_err(&at, "must be at least 1"));
            }
            Some(n)
        }
        None => None,
    };
    let max_duration = fields
        .get("max_duration")
        .map(|at| duration(cx, &at))
        .transpose()?;
    let mut context = Vec::new();
    if let Some(at) = fields.get("context") {
        match &at.node.kind {
            Kind::Map(entries) => {
                cx.check_keys(
                    &at.field,
                    entries,
                    &entries.iter().map(|e| e.key.as_str()).collect::<Vec<_>>(),
                )?;
                for e in entries {
                    let value_at = At {
                        node: &e.value,
                        line: e.line,
                        field: join(&at.field, &e.key),
                    };
                    context.push((e.key.clone(), cx.string(&value_at)?));
                }
            }
            other => {
                return Err(cx.at_err(
                    &at,
                    format!(
                        "expected a mapping of names to text, found {}",
                        other.describe()
                    ),
                ));
            }
        }
    }
    Ok(ConstraintsDecl {
        priority,
        allowed_tools,
        forbidden_tools,
        max_steps,
        max_duration,
        context,
    })
}

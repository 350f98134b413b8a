//! The SKILL.md file: `---` YAML frontmatter `---`, then the Markdown body. Frontmatter keys
//! per seed 004 §2.1; every error names the file and the line.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_yaml::{Mapping, Value};
use sha2::{Digest, Sha256};

/// Largest SKILL.md accepted (the body included).
pub const MAX_SKILL_FILE: usize = 1 << 20;
/// Longest description (the Agent Skills format's limit).
pub const MAX_DESCRIPTION: usize = 1024;

/// A SKILL.md that cannot be used: the file, the line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {message}", file.display())]
pub struct ParseError {
    /// The SKILL.md.
    pub file: PathBuf,
    /// 1-based line in the file.
    pub line: usize,
    /// What is wrong and, where it helps, what to write instead.
    pub message: String,
}

/// Where the skill's instructions run (`context:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Context {
    /// In the current conversation (the default).
    #[default]
    Inline,
    /// In a sub-agent with its own context window.
    Fork,
}

/// `metadata.requires` (or `metadata.<namespace>.requires`): what must be present for the
/// skill to be offered.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Requires {
    /// Programs that must all be on PATH.
    pub bins: Vec<String>,
    /// Programs of which at least one must be on PATH.
    pub any_bins: Vec<String>,
    /// Environment variables that must be set.
    pub env: Vec<String>,
    /// Configuration keys (dotted paths in config.toml) that must be true or non-empty.
    pub config: Vec<String>,
}

/// A frontmatter key this version does not know: kept, and reported by `skill info`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UnknownKey {
    /// The key.
    pub key: String,
    /// 1-based line in the SKILL.md.
    pub line: usize,
    /// Its value, as YAML.
    pub value: String,
}

/// The frontmatter, typed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Frontmatter {
    /// Lowercase letters, digits and hyphens; the directory's name.
    pub name: String,
    /// When to use the skill: the only text the model sees before it triggers.
    pub description: String,
    /// `inline` (default) or `fork`.
    pub context: Context,
    /// A model to use while the skill runs.
    pub model: Option<String>,
    /// Tools the skill needs (informational: shown by `skill info`).
    pub tools: Vec<String>,
    /// `allowed_tools` (or `allowed-tools`): the only tools the model may call while the
    /// skill is active — a constraint of the skill. `None`: no restriction.
    pub allowed_tools: Option<Vec<String>>,
    /// Whether the user may invoke it as `/name` (default true).
    pub user_invocable: bool,
    /// Whether the model is kept from triggering it (default false).
    pub disable_model_invocation: bool,
    /// `requires` from `metadata`.
    pub requires: Requires,
    /// `os` from `metadata`: `linux`, `darwin`/`macos`, `windows` (empty: any).
    pub os: Vec<String>,
    /// `metadata` as written.
    #[serde(skip)]
    pub metadata: Option<Value>,
    /// Keys this version does not know, kept.
    pub unknown: Vec<UnknownKey>,
}

/// A parsed SKILL.md skill.
#[derive(Debug, Clone)]
pub struct InstructionSkill {
    /// The skill's directory.
    pub dir: PathBuf,
    /// Its SKILL.md.
    pub file: PathBuf,
    /// The frontmatter.
    pub front: Frontmatter,
    /// The Markdown body, as written (not yet substituted).
    pub body: String,
    /// 1-based line of the body's first line in the file.
    pub body_line: usize,
    /// Hex SHA-256 of the SKILL.md bytes (grants are bound to it).
    pub digest: String,
}

impl InstructionSkill {
    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.front.name
    }

    /// Reads and parses `dir/SKILL.md`.
    ///
    /// # Errors
    /// [`ParseError`] naming the file and line.
    pub fn load(dir: &Path) -> Result<InstructionSkill, ParseError> {
        let file = dir.join(crate::SKILL_FILE);
        let err = |line, message: String| ParseError {
            file: file.clone(),
            line,
            message,
        };
        let bytes = std::fs::read(&file).map_err(|e| err(1, format!("cannot read it: {e}")))?;
        if bytes.len() > MAX_SKILL_FILE {
            return Err(err(
                1,
                format!(
                    "{} bytes: larger than the {MAX_SKILL_FILE} bytes a SKILL.md may have; move reference material into files beside it",
                    bytes.len()
                ),
            ));
        }
        let text = String::from_utf8(bytes).map_err(|e| {
            err(
                line_of_offset(e.as_bytes(), e.utf8_error().valid_up_to()),
                "not UTF-8 text".into(),
            )
        })?;
        let mut skill = parse(&file, &text)?;
        skill.dir = dir.to_path_buf();
        if let Some(dir_name) = dir.file_name().and_then(|n| n.to_str())
            && dir_name != skill.front.name
        {
            return Err(err(
                skill.key_line("name", &text),
                format!(
                    "name `{}` differs from its directory `{dir_name}`; rename one of them",
                    skill.front.name
                ),
            ));
        }
        Ok(skill)
    }

    fn key_line(&self, key: &str, text: &str) -> usize {
        key_line(text, key).unwrap_or(2)
    }
}

fn line_of_offset(bytes: &[u8], offset: usize) -> usize {
    1 + bytes[..offset.min(bytes.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
}

/// The 1-based line of a top-level `key:` in the file (frontmatter only), if written.
fn key_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .enumerate()
        .skip(1)
        .take_while(|(_, l)| l.trim_end() != "---")
        .find(|(_, l)| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
                || l.strip_prefix(&format!("\"{key}\"")).is_some()
        })
        .map(|(i, _)| i + 1)
}

/// Parses SKILL.md `text` read from `file`.
///
/// # Errors
/// [`ParseError`] naming `file` and the line.
pub fn parse(file: &Path, text: &str) -> Result<InstructionSkill, ParseError> {
    let err = |line, message: String| ParseError {
        file: file.to_path_buf(),
        line,
        message,
    };
    let text_nobom = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text_nobom.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(err(
            1,
            "a SKILL.md starts with a `---` line, then YAML frontmatter (name, description), then `---`".into(),
        ));
    }
    let mut yaml = String::new();
    let mut close_line = None;
    let mut consumed = first.len();
    for (i, l) in lines.enumerate() {
        consumed += l.len();
        if l.trim_end() == "---" {
            close_line = Some(i + 2);
            break;
        }
        yaml.push_str(l);
    }
    let Some(close_line) = close_line else {
        return Err(err(
            1,
            "the frontmatter opened on line 1 is never closed with a `---` line".into(),
        ));
    };
    let body = text_nobom[consumed..].to_string();
    let origin = format!("{}", file.display());
    // The bounds (alias expansion, depth, size) take a second pass over the events; a
    // frontmatter without a `*` has no alias to expand and, under 64 KiB, stays within
    // serde_yaml's own recursion limit, so the common case is parsed once.
    if yaml.contains('*') || yaml.len() > 64 * 1024 {
        agent_bounded::check_yaml(&yaml, &origin, agent_bounded::Limits::CONFIG)
            .map_err(|e| err(e.line + 1, e.to_string()))?;
    }
    let value: Value = serde_yaml::from_str(&yaml).map_err(|e| {
        let line = e.location().map_or(2, |l| l.line() + 1);
        err(
            line,
            format!("frontmatter is not valid YAML: {}", strip_location(&e)),
        )
    })?;
    let map = match value {
        Value::Mapping(m) => m,
        Value::Null => Mapping::new(),
        _ => {
            return Err(err(
                2,
                "the frontmatter must be a mapping of keys to values".into(),
            ));
        }
    };
    let front = Fields {
        map: &map,
        text,
        file,
    }
    .frontmatter(close_line)?;
    Ok(InstructionSkill {
        dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
        file: file.to_path_buf(),
        front,
        body,
        body_line: close_line + 1,
        digest: hex::encode(Sha256::digest(text.as_bytes())),
    })
}

fn strip_location(e: &serde_yaml::Error) -> String {
    let s = e.to_string();
    match s.find(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The keys this version reads (both spellings where the format has two).
const KNOWN: &[&str] = &[
    "name",
    "description",
    "context",
    "model",
    "tools",
    "allowed_tools",
    "allowed-tools",
    "user-invocable",
    "user_invocable",
    "disable-model-invocation",
    "disable_model_invocation",
    "metadata",
];

struct Fields<'a> {
    map: &'a Mapping,
    text: &'a str,
    file: &'a Path,
}

impl Fields<'_> {
    fn line(&self, key: &str) -> usize {
        key_line(self.text, key).unwrap_or(2)
    }

    fn err(&self, key: &str, message: String) -> ParseError {
        ParseError {
            file: self.file.to_path_buf(),
            line: self.line(key),
            message: format!("`{key}`: {message}"),
        }
    }

    fn get<T: DeserializeOwned>(&self, key: &str, expected: &str) -> Result<Option<T>, ParseError> {
        match self.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => serde_yaml::from_value(v.clone())
                .map(Some)
                .map_err(|_| self.err(key, format!("expected {expected}"))),
        }
    }

    /// The first of `keys` written (two spellings of one field).
    fn get_any<T: DeserializeOwned>(
        &self,
        keys: &[&str],
        expected: &str,
    ) -> Result<Option<T>, ParseError> {
        for k in keys {
            if self.map.contains_key(*k) {
                return self.get(k, expected);
            }
        }
        Ok(None)
    }

    fn tool_list(&self, keys: &[&str]) -> Result<Option<Vec<String>>, ParseError> {
        for k in keys {
            match self.map.get(*k) {
                None | Some(Value::Null) => continue,
                // `allowed-tools: Read, Grep` (Claude Code's spelling) or a list.
                Some(Value::String(s)) => {
                    return Ok(Some(
                        s.split(|c: char| c == ',' || c.is_whitespace())
                            .filter(|t| !t.is_empty())
                            .map(str::to_string)
                            .collect(),
                    ));
                }
                Some(_) => return self.get(k, "a list of tool names"),
            }
        }
        Ok(None)
    }

    fn frontmatter(&self, close_line: usize) -> Result<Frontmatter, ParseError> {
        let missing = |key: &str, what: &str| ParseError {
            file: self.file.to_path_buf(),
            line: close_line,
            message: format!("`{key}` is missing: {what}"),
        };
        let name: String = self.get("name", "a string")?.ok_or_else(|| {
            missing(
                "name",
                "add `name: my-skill` (lowercase letters, digits, hyphens)",
            )
        })?;
        if !is_name(&name) {
            return Err(self.err(
                "name",
                format!("`{name}` is not a skill name: 1 to 64 lowercase letters, digits and hyphens, not starting or ending with a hyphen"),
            ));
        }
        let description: String = self
            .get("description", "a string")?
            .ok_or_else(|| missing("description", "say what the skill does and when to use it"))?;
        if description.trim().is_empty() {
            return Err(self.err(
                "description",
                "is empty: say what the skill does and when to use it".into(),
            ));
        }
        if description.chars().count() > MAX_DESCRIPTION {
            return Err(self.err(
                "description",
                format!("longer than {MAX_DESCRIPTION} characters"),
            ));
        }
        let context = match self
            .get::<String>("context", "`inline` or `fork`")?
            .as_deref()
        {
            None | Some("inline") => Context::Inline,
            Some("fork") => Context::Fork,
            Some(other) => {
                return Err(self.err("context", format!("`{other}`: expected `inline` or `fork`")));
            }
        };
        let (requires, os) = self.metadata()?;
        let unknown = self
            .map
            .iter()
            .filter_map(|(k, v)| {
                let key = match k {
                    Value::String(s) => s.clone(),
                    other => serde_yaml::to_string(other)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                };
                (!KNOWN.contains(&key.as_str())).then(|| UnknownKey {
                    line: self.line(&key),
                    value: serde_yaml::to_string(v)
                        .unwrap_or_default()
                        .trim()
                        .to_string(),
                    key,
                })
            })
            .collect();
        Ok(Frontmatter {
            name,
            description,
            context,
            model: self.get("model", "a model name")?,
            tools: self.tool_list(&["tools"])?.unwrap_or_default(),
            allowed_tools: self.tool_list(&["allowed_tools", "allowed-tools"])?,
            user_invocable: self
                .get_any(&["user-invocable", "user_invocable"], "true or false")?
                .unwrap_or(true),
            disable_model_invocation: self
                .get_any(
                    &["disable-model-invocation", "disable_model_invocation"],
                    "true or false",
                )?
                .unwrap_or(false),
            requires,
            os,
            metadata: self.map.get("metadata").cloned(),
            unknown,
        })
    }

    /// `requires` and `os` from `metadata`, or from one namespace inside it
    /// (`metadata.openclaw.requires`, as skills written for other agents nest them).
    fn metadata(&self) -> Result<(Requires, Vec<String>), ParseError> {
        let Some(meta) = self.map.get("metadata") else {
            return Ok((Requires::default(), Vec::new()));
        };
        let Value::Mapping(meta) = meta else {
            return Err(self.err("metadata", "expected a mapping".into()));
        };
        let mut holder = meta;
        if !meta.contains_key("requires") && !meta.contains_key("os") {
            for v in meta.values() {
                if let Value::Mapping(inner) = v
                    && (inner.contains_key("requires") || inner.contains_key("os"))
                {
                    holder = inner;
                    break;
                }
            }
        }
        let list = |v: Option<&Value>, what: &str| -> Result<Vec<String>, ParseError> {
            match v {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::String(s)) => Ok(vec![s.clone()]),
                Some(v) => serde_yaml::from_value(v.clone()).map_err(|_| {
                    self.err("metadata", format!("`{what}`: expected a list of strings"))
                }),
            }
        };
        let mut requires = Requires::default();
        match holder.get("requires") {
            None | Some(Value::Null) => {}
            Some(Value::Mapping(r)) => {
                requires.bins = list(r.get("bins"), "requires.bins")?;
                requires.any_bins =
                    list(r.get("anyBins").or(r.get("any_bins")), "requires.anyBins")?;
                requires.env = list(r.get("env"), "requires.env")?;
                requires.config = list(r.get("config"), "requires.config")?;
            }
            Some(_) => {
                return Err(self.err(
                    "metadata",
                    "`requires`: expected a mapping (bins, anyBins, env, config)".into(),
                ));
            }
        }
        let os = list(holder.get("os"), "os")?;
        Ok((requires, os))
    }
}

/// Whether `s` is a skill name: 1 to 64 of `[a-z0-9-]`, no leading or trailing hyphen.
pub fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && !s.starts_with('-')
        && !s.ends_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Context::Inline => "inline",
            Context::Fork => "fork",
        })
    }
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;

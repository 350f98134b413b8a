//! Grants for non-interactive runs: `--allow` flags and capability files.
//!
//! Flag syntax: `[SKILL/]PERM[:SCOPE]`. `PERM` is a permission's manifest spelling (`file:read`);
//! everything after it and one more `:` is the scope, so `net:fetch:https://api.example.com` has
//! the scope `https://api.example.com`. A skill prefix is recognised only when its `/` comes
//! before the first `:`.
//!
//! Capability file (YAML):
//!
//! ```yaml
//! # grants for every skill
//! allow: [file:read]
//! # grants per skill
//! skills:
//!   core-tools: [file:write, "shell:exec:git"]
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use agent_manifest::{Origin, Permission, ScopeKind, UnknownPermission};

use crate::yaml::{self, Kind, Node};

/// The flag syntax, for messages.
const EXPECTED: &str = "expected [SKILL/]PERM[:SCOPE], e.g. `file:read`, `core-tools/file:write`, `shell:exec:git`, `net:fetch:https://api.example.com`";

/// What is wrong with one allow entry.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllowProblem {
    /// Nothing was given.
    #[error("it is empty")]
    Empty,
    /// `/file:read`: a `/` with no skill name before it.
    #[error("the skill name before `/` is empty")]
    EmptySkill,
    /// The skill name contains whitespace.
    #[error("`{0}` is not a valid skill name")]
    InvalidSkill(String),
    /// The permission is not one of the known ten.
    #[error("{0}")]
    UnknownPermission(UnknownPermission),
    /// `file:read:`: a `:` with no scope after it.
    #[error("the scope after the permission is empty")]
    EmptyScope,
    /// A scope on a permission whose uses carry none (`file:read:src`): it could never match.
    #[error("{0} takes no scope (it is granted as a whole); write `{0}` without `:SCOPE`")]
    Unscoped(Permission),
    /// A `net:fetch` scope that is not an origin.
    #[error(
        "`{0}` is not an origin; the scope of net:fetch is {form}",
        form = ScopeKind::Origin.syntax().unwrap_or_default()
    )]
    NotAnOrigin(String),
    /// A scope of a form the host never names when it asks for the permission
    /// (`env:read:A=B`, `skill:invoke:../../etc`, `net:fetch:ftp://x`): it could never match.
    #[error(
        "`{scope}` can never match a use of {permission}: {reason}; the scope of {permission} is {}",
        permission.capability().scope.syntax().unwrap_or_default()
    )]
    BadScope {
        /// The permission.
        permission: Permission,
        /// The scope as written.
        scope: String,
        /// Why no use can carry it.
        reason: String,
    },
}

/// A `--allow` value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --allow value `{value}`: {problem}; {EXPECTED}")]
pub struct AllowParseError {
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub problem: AllowProblem,
}

/// A capability file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AllowFileError {
    /// The file could not be read.
    #[error("cannot read capability file {}: {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error (in the message, so not also a `source`: printed once).
        error: std::io::Error,
    },
    /// The file is not valid YAML.
    #[error("{}:{line}:{column}: invalid YAML: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// The column (1-based).
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The file is larger or nested deeper than configuration may be; it
    /// was not parsed.
    #[error("capability file {0}")]
    Limit(agent_bounded::LimitError),
    /// The YAML does not have the expected structure.
    #[error("{}:{line}: {message}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// What was expected.
        message: String,
    },
    /// An entry does not parse.
    #[error("{}:{line}: invalid entry `{entry}`: {problem}; expected PERM[:SCOPE], e.g. `file:read` or `shell:exec:git`", path.display())]
    Entry {
        /// The file.
        path: PathBuf,
        /// The line (1-based).
        line: usize,
        /// The entry as written.
        entry: String,
        /// What is wrong with it.
        problem: AllowProblem,
    },
}

/// One grant of a non-interactive run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllowEntry {
    /// The skill it is for; `None` for every skill.
    pub skill: Option<String>,
    /// The permission granted.
    pub permission: Permission,
    /// The scope it is limited to; `None` for any scope.
    pub scope: Option<String>,
}

impl AllowEntry {
    /// Parses the `--allow` syntax `[SKILL/]PERM[:SCOPE]`.
    pub fn parse(value: &str) -> Result<AllowEntry, AllowParseError> {
        parse_entry(value).map_err(|problem| AllowParseError {
            value: value.to_string(),
            problem,
        })
    }

    /// Whether this entry grants `permission` to `skill` for `scope`.
    pub fn matches(&self, skill: &str, permission: Permission, scope: Option<&str>) -> bool {
        self.permission == permission
            && self.skill.as_deref().is_none_or(|s| s == skill)
            && agent_manifest::covers(permission, self.scope.as_deref(), scope)
    }
}

impl fmt::Display for AllowEntry {
    /// The `--allow` spelling, which [`AllowEntry::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(skill) = &self.skill {
            write!(f, "{skill}/")?;
        }
        f.write_str(self.permission.as_str())?;
        if let Some(scope) = &self.scope {
            write!(f, ":{scope}")?;
        }
        Ok(())
    }
}

fn parse_entry(value: &str) -> Result<AllowEntry, AllowProblem> {
    let s = value.trim();
    if s.is_empty() {
        return Err(AllowProblem::Empty);
    }
    let (skill, rest) = match (s.find('/'), s.find(':')) {
        (Some(slash), colon) if colon.is_none_or(|c| slash < c) => {
            (Some(&s[..slash]), &s[slash + 1..])
        }
        // An MCP server's skill, `mcp:NAME/PERM[:SCOPE]` (agent-mcp).
        (Some(slash), _) if is_mcp_skill(&s[..slash]) => (Some(&s[..slash]), &s[slash + 1..]),
        _ => (None, s),
    };
    if let Some(skill) = skill {
        if skill.is_empty() {
            return Err(AllowProblem::EmptySkill);
        }
        if skill.chars().any(char::is_whitespace) {
            return Err(AllowProblem::InvalidSkill(skill.to_string()));
        }
    }
    let mut parts = rest.splitn(3, ':');
    let first = parts.next().unwrap_or_default();
    let perm_str = match parts.next() {
        Some(second) => &rest[..first.len() + 1 + second.len()],
        None => first,
    };
    let permission: Permission = perm_str.parse().map_err(AllowProblem::UnknownPermission)?;
    let scope = match parts.next() {
        None => None,
        Some("") => return Err(AllowProblem::EmptyScope),
        Some(scope) => Some(scope),
    };
    let capability = permission.capability();
    if let Some(scope) = scope {
        if capability.scope == ScopeKind::Whole {
            return Err(AllowProblem::Unscoped(permission));
        }
        if capability.scope == ScopeKind::Origin
            && !Origin::split(scope).is_some_and(|(_, rest)| rest.is_empty() || rest == "/")
        {
            return Err(AllowProblem::NotAnOrigin(scope.to_string()));
        }
        capability
            .check_scope(scope)
            .map_err(|reason| AllowProblem::BadScope {
                permission,
                scope: scope.to_string(),
                reason,
            })?;
    }
    Ok(AllowEntry {
        skill: skill.map(str::to_string),
        permission,
        scope: scope.map(str::to_string),
    })
}

/// `mcp:NAME`: the skill an MCP server is (a name of letters, digits, `-` and `_`).
fn is_mcp_skill(s: &str) -> bool {
    s.strip_prefix("mcp:").is_some_and(|name| {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

/// The grants of a non-interactive run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<AllowEntry>,
}

impl AllowList {
    /// An empty list: nothing is granted.
    pub fn new() -> AllowList {
        AllowList::default()
    }

    /// Parses `--allow` values.
    pub fn from_flags<I, S>(values: I) -> Result<AllowList, AllowParseError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let entries = values
            .into_iter()
            .map(|v| AllowEntry::parse(v.as_ref()))
            .collect::<Result<_, _>>()?;
        Ok(AllowList { entries })
    }

    /// Reads a capability file (see the module documentation for the format).
    pub fn from_file(path: impl AsRef<Path>) -> Result<AllowList, AllowFileError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|error| AllowFileError::Read {
            path: path.to_path_buf(),
            error,
        })?;
        Self::from_yaml(&text, path)
    }

    /// Parses the text of a capability file; `path` is used in error messages.
    pub fn from_yaml(text: &str, path: &Path) -> Result<AllowList, AllowFileError> {
        let shape = |line: usize, message: String| AllowFileError::Shape {
            path: path.to_path_buf(),
            line,
            message,
        };
        agent_bounded::check_yaml(text, path.display(), agent_bounded::Limits::CONFIG)
            .map_err(AllowFileError::Limit)?;
        let root = yaml::parse(text).map_err(|e| AllowFileError::Syntax {
            path: path.to_path_buf(),
            line: e.line,
            column: e.column,
            message: e.message,
        })?;
        let Some(root) = root.filter(|r| !r.is_null()) else {
            return Ok(AllowList::new());
        };
        let Kind::Map(top) = &root.kind else {
            return Err(shape(
                root.line,
                "expected a mapping with `allow` and/or `skills`".into(),
            ));
        };
        let mut list = AllowList::new();
        let mut seen: Vec<&str> = Vec::new();
        for (key, value) in top {
            let name = scalar(key)
                .ok_or_else(|| shape(key.line, "expected `allow` or `skills` as a key".into()))?;
            if seen.contains(&name) {
                return Err(shape(key.line, format!("`{name}` appears twice")));
            }
            seen.push(name);
            match name {
                "allow" => {
                    for (line, entry) in entries_of(value, "allow", &shape)? {
                        let parsed =
                            parse_entry(entry).map_err(|problem| AllowFileError::Entry {
                                path: path.to_path_buf(),
                                line,
                                entry: entry.to_string(),
                                problem,
                            })?;
                        list.entries.push(parsed);
                    }
                }
                "skills" => {
                    if value.is_null() {
                        continue;
                    }
                    let Kind::Map(skills) = &value.kind else {
                        return Err(shape(
                            value.line,
                            "`skills` must map skill names to lists of permissions".into(),
                        ));
                    };
                    let mut seen_skills: Vec<&str> = Vec::new();
                    for (skill_key, perms) in skills {
                        let skill = scalar(skill_key)
                            .filter(|s| !s.is_empty() && !s.chars().any(char::is_whitespace))
                            .ok_or_else(|| {
                                shape(skill_key.line, "expected a skill name as a key".into())
                            })?;
                        if seen_skills.contains(&skill) {
                            return Err(shape(
                                skill_key.line,
                                format!("skill `{skill}` appears twice under `skills`"),
                            ));
                        }
                        seen_skills.push(skill);
                        let section = format!("skills.{skill}");
                        for (line, entry) in entries_of(perms, &section, &shape)? {
                            let mut parsed =
                                parse_entry(entry).map_err(|problem| AllowFileError::Entry {
                                    path: path.to_path_buf(),
                                    line,
                                    entry: entry.to_string(),
                                    problem,
                                })?;
                            if parsed.skill.is_some() {
                                return Err(shape(
                                    line,
                                    format!(
                                        "entry `{entry}` under `{section}` must not name a skill; write it as PERM[:SCOPE]"
                                    ),
                                ));
                            }
                            parsed.skill = Some(skill.to_string());
                            list.entries.push(parsed);
                        }
                    }
                }
                other => {
                    return Err(shape(
                        key.line,
                        format!("unknown key `{other}` (expected `allow` or `skills`)"),
                    ));
                }
            }
        }
        Ok(list)
    }

    /// Adds one entry.
    pub fn push(&mut self, entry: AllowEntry) {
        self.entries.push(entry);
    }

    /// Adds every entry of `other` (e.g. a capability file's and the flags').
    pub fn extend(&mut self, other: AllowList) {
        self.entries.extend(other.entries);
    }

    /// The entries, in the order given.
    pub fn entries(&self) -> &[AllowEntry] {
        &self.entries
    }

    /// Whether nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether some entry grants `permission` to `skill` for `scope`. An entry without a scope
    /// matches any scope; one with a scope matches only that scope (for `net:fetch`, the same
    /// origin as the requested URL).
    pub fn matches(&self, skill: &str, permission: Permission, scope: Option<&str>) -> bool {
        self.entries
            .iter()
            .any(|e| e.matches(skill, permission, scope))
    }

    /// Whether some entry grants `permission` to `skill`, as a whole or for some scope (what
    /// a listing calls "allowed by flag").
    pub fn names(&self, skill: &str, permission: Permission) -> bool {
        self.entries
            .iter()
            .any(|e| e.permission == permission && e.skill.as_deref().is_none_or(|s| s == skill))
    }
}

fn scalar(node: &Node) -> Option<&str> {
    match &node.kind {
        Kind::Scalar { value, .. } => Some(value.as_str()),
        _ => None,
    }
}

/// The string items, with their lines, of a list under `section`. Null is an empty list.
fn entries_of<'n>(
    node: &'n Node,
    section: &str,
    shape: &dyn Fn(usize, String) -> AllowFileError,
) -> Result<Vec<(usize, &'n str)>, AllowFileError> {
    if node.is_null() {
        return Ok(Vec::new());
    }
    let Kind::Seq(items) = &node.kind else {
        return Err(shape(
            node.line,
            format!(
                "`{section}` must be a list of permissions, e.g. [file:read, \"shell:exec:git\"]"
            ),
        ));
    };
    items
        .iter()
        .map(|item| {
            scalar(item).map(|s| (item.line, s)).ok_or_else(|| {
                shape(
                    item.line,
                    format!(
                        "entries of `{section}` must be strings like file:read (quote entries that contain `: `)"
                    ),
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(skill: Option<&str>, p: Permission, scope: Option<&str>) -> AllowEntry {
        AllowEntry {
            skill: skill.map(Into::into),
            permission: p,
            scope: scope.map(Into::into),
        }
    }

    /// An MCP server's skill name holds a `:` (`mcp:NAME`); its grants are spelled
    /// `mcp:NAME/PERM[:SCOPE]` and read back as written.
    #[test]
    fn parses_an_mcp_server_skill_prefix() {
        let e = AllowEntry::parse("mcp:everything/shell:exec:node").unwrap();
        assert_eq!(
            e,
            entry(Some("mcp:everything"), Permission::ShellExec, Some("node"))
        );
        assert_eq!(e.to_string(), "mcp:everything/shell:exec:node");
        assert!(e.matches("mcp:everything", Permission::ShellExec, Some("node")));
        assert!(!e.matches("mcp:other", Permission::ShellExec, Some("node")));
        let h = AllowEntry::parse("mcp:web/net:fetch:http://127.0.0.1:8080").unwrap();
        assert_eq!(h.skill.as_deref(), Some("mcp:web"));
        // Without the `mcp:` prefix a `:` before the `/` is still a permission's.
        assert!(
            AllowEntry::parse("shell:exec:/usr/bin/git")
                .unwrap()
                .skill
                .is_none()
        );
    }

    #[test]
    fn parses_the_four_documented_forms() {
        assert_eq!(
            AllowEntry::parse("file:read").unwrap(),
            entry(None, Permission::FileRead, None)
        );
        assert_eq!(
            AllowEntry::parse("core-tools/file:write").unwrap(),
            entry(Some("core-tools"), Permission::FileWrite, None)
        );
        assert_eq!(
            AllowEntry::parse("shell:exec:git").unwrap(),
            entry(None, Permission::ShellExec, Some("git"))
        );
        assert_eq!(
            AllowEntry::parse("kubernetes/net:fetch:https://api.example.com").unwrap(),
            entry(
                Some("kubernetes"),
                Permission::NetFetch,
                Some("https://api.example.com")
            )
        );
    }

    #[test]
    fn scope_is_everything_after_the_permission_and_one_colon() {
        // (A program scope with a colon: only an absolute path can have one.)
        assert_eq!(
            AllowEntry::parse("shell:exec:/opt/a:b/c").unwrap(),
            entry(None, Permission::ShellExec, Some("/opt/a:b/c"))
        );
        assert_eq!(
            AllowEntry::parse("net:fetch:http://localhost:8080/").unwrap(),
            entry(None, Permission::NetFetch, Some("http://localhost:8080/"))
        );
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "file:read",
            "core-tools/file:write",
            "shell:exec:git",
            "kubernetes/net:fetch:https://api.example.com",
        ] {
            assert_eq!(AllowEntry::parse(s).unwrap().to_string(), s);
        }
    }

    fn problem(s: &str) -> AllowProblem {
        let err = AllowEntry::parse(s).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&format!("`{s}`")), "{msg}");
        assert!(msg.contains("[SKILL/]PERM[:SCOPE]"), "{msg}");
        err.problem
    }

    #[test]
    fn each_error_names_the_value_and_the_expected_syntax() {
        assert_eq!(problem(""), AllowProblem::Empty);
        assert_eq!(problem("   "), AllowProblem::Empty);
        assert_eq!(problem("/file:read"), AllowProblem::EmptySkill);
        assert_eq!(
            problem("my skill/file:read"),
            AllowProblem::InvalidSkill("my skill".into())
        );
        assert_eq!(problem("file:read:"), AllowProblem::EmptyScope);
        for (value, permission) in [
            ("file:read:src", Permission::FileRead),
            ("core-tools/file:write:docs/**", Permission::FileWrite),
            ("llm:call:claude", Permission::LlmCall),
            ("git:read:HEAD", Permission::GitRead),
            ("git:write:main", Permission::GitWrite),
        ] {
            assert_eq!(problem(value), AllowProblem::Unscoped(permission));
            let msg = AllowEntry::parse(value).unwrap_err().to_string();
            assert!(
                msg.contains(&format!("{permission} takes no scope")),
                "{msg}"
            );
        }
        for value in [
            "shell:exec:git",
            "env:read:KUBECONFIG",
            "env:write:PGPASSWORD",
            "skill:invoke:git",
        ] {
            assert!(AllowEntry::parse(value).is_ok(), "{value}");
        }
        assert_eq!(
            problem("net:fetch:api.example.com"),
            AllowProblem::NotAnOrigin("api.example.com".into())
        );
        assert_eq!(
            problem("net:fetch:https://api.example.com/v1"),
            AllowProblem::NotAnOrigin("https://api.example.com/v1".into())
        );
        assert!(matches!(
            problem("file"),
            AllowProblem::UnknownPermission(_)
        ));
        assert!(matches!(
            problem("core-tools/"),
            AllowProblem::UnknownPermission(_)
        ));
        let p = problem("shell:execute:git");
        assert_eq!(
            p,
            AllowProblem::UnknownPermission(UnknownPermission("shell:execute".into()))
        );
        // The unknown-permission message lists the valid ones.
        assert!(p.to_string().contains("shell:exec"), "{p}");
    }

    #[test]
    fn matches_with_and_without_scopes() {
        let list = AllowList::from_flags([
            "file:read",
            "core-tools/file:write",
            "shell:exec:git",
            "kubernetes/net:fetch:https://api.example.com",
        ])
        .unwrap();
        // Unscoped entries match any scope, for every skill or the named one.
        assert!(list.matches("anyone", Permission::FileRead, None));
        assert!(list.matches("anyone", Permission::FileRead, Some("src/x")));
        assert!(list.matches("core-tools", Permission::FileWrite, None));
        assert!(!list.matches("other", Permission::FileWrite, None));
        // Scoped entries need that scope.
        assert!(list.matches("s", Permission::ShellExec, Some("git")));
        assert!(!list.matches("s", Permission::ShellExec, Some("rm")));
        assert!(!list.matches("s", Permission::ShellExec, None));
        // net:fetch compares origins.
        let k = "kubernetes";
        assert!(list.matches(
            k,
            Permission::NetFetch,
            Some("https://api.example.com/v1/pods")
        ));
        assert!(list.matches(
            k,
            Permission::NetFetch,
            Some("https://API.example.com:443/")
        ));
        assert!(list.matches(k, Permission::NetFetch, Some("https://api.example.com?q=1")));
        assert!(!list.matches(k, Permission::NetFetch, Some("http://api.example.com/")));
        assert!(!list.matches(
            k,
            Permission::NetFetch,
            Some("https://api.example.com:8443/")
        ));
        assert!(!list.matches(
            k,
            Permission::NetFetch,
            Some("https://api.example.com.evil.test/")
        ));
        assert!(!list.matches(
            k,
            Permission::NetFetch,
            Some("https://evil.test/@api.example.com")
        ));
        assert!(!list.matches(k, Permission::NetFetch, Some("not a url")));
        assert!(!list.matches(
            "other",
            Permission::NetFetch,
            Some("https://api.example.com/")
        ));
        // Nothing else.
        assert!(!list.matches("core-tools", Permission::LlmCall, None));
        assert!(!AllowList::new().matches("s", Permission::FileRead, None));
    }

    #[test]
    fn origins_are_normalised() {
        use agent_manifest::origin;
        assert_eq!(
            origin("HTTPS://Example.COM:443/x").as_deref(),
            Some("https://example.com")
        );
        assert_eq!(
            origin("http://u:p@h:8080/").as_deref(),
            Some("http://h:8080")
        );
        assert_eq!(origin("http://[::1]:80/").as_deref(), Some("http://[::1]"));
        assert_eq!(
            origin("http://[::1]:81").as_deref(),
            Some("http://[::1]:81")
        );
        assert_eq!(origin("https://h:99999/"), None);
        assert_eq!(origin("https:///path"), None);
        assert_eq!(origin("1ttp://h"), None);
    }

    fn from_yaml(text: &str) -> Result<AllowList, AllowFileError> {
        AllowList::from_yaml(text, Path::new("caps.yaml"))
    }

    #[test]
    fn capability_file_in_the_documented_format() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("caps.yaml");
        std::fs::write(
            &path,
            "# grants for every skill\nallow: [file:read]\n# grants per skill\nskills:\n  core-tools: [file:write, \"shell:exec:git\"]\n  kubernetes:\n    - net:fetch:https://api.example.com\n",
        )
        .unwrap();
        let list = AllowList::from_file(&path).unwrap();
        assert_eq!(
            list.entries(),
            &[
                entry(None, Permission::FileRead, None),
                entry(Some("core-tools"), Permission::FileWrite, None),
                entry(Some("core-tools"), Permission::ShellExec, Some("git")),
                entry(
                    Some("kubernetes"),
                    Permission::NetFetch,
                    Some("https://api.example.com")
                ),
            ]
        );
        assert!(list.matches("core-tools", Permission::ShellExec, Some("git")));
        assert!(!list.matches("other", Permission::ShellExec, Some("git")));
    }

    #[test]
    fn empty_and_null_capability_files_grant_nothing() {
        assert!(from_yaml("").unwrap().is_empty());
        assert!(from_yaml("# nothing\n").unwrap().is_empty());
        assert!(from_yaml("allow:\nskills:\n  a:\n").unwrap().is_empty());
    }

    #[test]
    fn a_capability_file_of_100000_nested_lists_is_refused_before_parsing() {
        // 200 KB of `- - - …`: parsed into a tree, this overflowed the stack
        // (exit 134). It is refused at the 65th level, in milliseconds.
        let text = format!("allow:\n  {}file:read\n", "- ".repeat(100_000));
        let started = std::time::Instant::now();
        let err = from_yaml(&text).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert!(matches!(err, AllowFileError::Limit(_)), "{err:?}");
        assert_eq!(
            err.to_string(),
            "capability file caps.yaml: line 2, column 129: YAML nested deeper than the limit \
             of 64 levels; flatten the document"
        );
    }

    fn file_err(text: &str) -> (usize, String, AllowFileError) {
        let err = from_yaml(text).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("caps.yaml:"), "{msg}");
        let line = match &err {
            AllowFileError::Syntax { line, .. }
            | AllowFileError::Shape { line, .. }
            | AllowFileError::Entry { line, .. } => *line,
            AllowFileError::Limit(e) => e.line,
            AllowFileError::Read { .. } => panic!("{err:?}"),
        };
        (line, msg, err)
    }

    #[test]
    fn a_bad_entry_is_reported_with_its_line_and_text() {
        let (line, msg, err) = file_err(
            "allow: [file:read]\nskills:\n  core-tools:\n    - file:write\n    - shell:execute\n",
        );
        assert_eq!(line, 5);
        assert!(msg.contains("`shell:execute`"), "{msg}");
        assert!(
            matches!(err, AllowFileError::Entry { ref entry, problem: AllowProblem::UnknownPermission(_), .. } if entry == "shell:execute"),
            "{err:?}"
        );
        assert!(msg.starts_with("caps.yaml:5: "), "{msg}");

        let (line, msg, _) = file_err("\n\nallow: [file:read, \"file:read:\"]\n");
        assert_eq!(line, 3);
        assert!(
            msg.contains("`file:read:`") && msg.contains("scope"),
            "{msg}"
        );
    }

    #[test]
    fn structural_errors_are_reported_with_their_line() {
        let (line, msg, _) = file_err("allow: [file:read]\nallows: [file:write]\n");
        assert_eq!(line, 2);
        assert!(msg.contains("unknown key `allows`"), "{msg}");

        let (line, msg, _) = file_err("allow: file:read\n");
        assert_eq!(line, 1);
        assert!(msg.contains("must be a list"), "{msg}");

        let (line, msg, _) = file_err("skills:\n  a: [file:read]\n  a: [file:write]\n");
        assert_eq!(line, 3);
        assert!(msg.contains("appears twice"), "{msg}");

        let (line, msg, _) = file_err("skills:\n  a:\n    - b/file:read\n");
        assert_eq!(line, 3);
        assert!(msg.contains("must not name a skill"), "{msg}");

        let (line, msg, _) = file_err("allow:\n  - [file:read]\n");
        assert_eq!(line, 2);
        assert!(msg.contains("must be strings"), "{msg}");

        let (_, msg, _) = file_err("- file:read\n");
        assert!(msg.contains("expected a mapping"), "{msg}");

        let (line, msg, _) = file_err("skills: [file:read]\n");
        assert_eq!(line, 1);
        assert!(msg.contains("`skills` must map"), "{msg}");
    }

    #[test]
    fn yaml_syntax_errors_name_file_and_line() {
        let (line, msg, err) = file_err("allow: [file:read\nskills: {\n");
        assert!(matches!(err, AllowFileError::Syntax { .. }), "{err:?}");
        assert!(line >= 1, "{msg}");
        assert!(msg.contains("invalid YAML"), "{msg}");
    }

    #[test]
    fn a_missing_file_names_the_file() {
        let err = AllowList::from_file("/nonexistent/caps.yaml").unwrap_err();
        assert!(matches!(err, AllowFileError::Read { .. }));
        assert!(err.to_string().contains("/nonexistent/caps.yaml"));
    }
}

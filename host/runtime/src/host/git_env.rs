//! How the host runs the `git` program so that nothing the repository's or
//! the user's git configuration names is ever executed.
//!
//! - **Reads** (`status`, `diff`, `log`, `show`) never read the repository's
//!   configuration: git runs against a private *view* of the repository, a
//!   temporary git directory whose `config` the host writes (the repository
//!   format, its object format and ref storage, and a few plain data keys
//!   such as `core.filemode`), whose `HEAD` is a copy, and which points at the
//!   real objects, refs and index. Drivers named in `.gitattributes` then name
//!   nothing, `core.fsmonitor` is unset, there are no hooks and no includes.
//! - **Writes** (`commit`, `branch`, `rev-parse`) run in the real repository
//!   (the index and `HEAD` must change), reading its configuration, but every
//!   key of it that names a program is overridden (found by listing the
//!   configuration with its includes), and the fixed overrides below turn off
//!   the rest.
//! - Both: no system, global or XDG configuration (`HOME` and
//!   `XDG_CONFIG_HOME` are an empty private directory), hooks point at an
//!   empty directory, and an environment of the host's making (`PATH`,
//!   `LANG=C` and git's own variables; nothing else of the host's).

use std::path::{Path, PathBuf};

use tokio::process::Command;

/// Configuration given to every git run as command-line configuration
/// (`GIT_CONFIG_COUNT`), which wins over the repository's.
const FIXED: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.pager", ""),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("core.quotepath", "off"),
    ("diff.external", ""),
    ("credential.helper", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gpg.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("protocol.allow", "never"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("diff.ignoreSubmodules", "dirty"),
    ("status.submoduleSummary", "false"),
];

/// Keys outside the sections below that name a program or a shell command.
const COMMAND_KEYS: &[&str] = &[
    "core.fsmonitor",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "core.hookspath",
    "sequence.editor",
    "diff.external",
    "diff.tool",
    "merge.tool",
    "gpg.program",
    "gpg.ssh.defaultkeycommand",
    "uploadpack.packobjectshook",
    "credential.helper",
];

/// Sections whose `<section>.<name>.<key>` entries run programs when `key`
/// is one of [`DRIVER_KEYS`] (filter, diff and merge drivers, credential
/// helpers, trailer commands, tools, signing programs).
const DRIVER_SECTIONS: &[&str] = &[
    "filter",
    "diff",
    "merge",
    "credential",
    "trailer",
    "difftool",
    "mergetool",
    "gpg",
    "remote",
];
const DRIVER_KEYS: &[&str] = &[
    "clean",
    "smudge",
    "process",
    "textconv",
    "command",
    "cmd",
    "driver",
    "helper",
    "program",
    "uploadpack",
    "receivepack",
    "proxy",
];

/// Plain data keys of the repository's configuration the read view keeps
/// (they change what counts as modified, never run anything).
const DATA_KEYS: &[&str] = &[
    "core.repositoryformatversion",
    "core.filemode",
    "core.symlinks",
    "core.ignorecase",
    "core.precomposeunicode",
    "core.autocrlf",
    "core.eol",
    "core.safecrlf",
    "core.checkstat",
    "core.trustctime",
    "extensions.objectformat",
    "extensions.refstorage",
    "extensions.compatobjectformat",
];

/// Whether configuration key `key` (as git lists it) names something git
/// would execute, or pulls in more configuration (`include.*`).
pub(super) fn runs_a_program(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if COMMAND_KEYS.contains(&key.as_str()) || key.starts_with("pager.") || is_include(&key) {
        return true;
    }
    let (Some((section, _)), Some((_, last))) = (key.split_once('.'), key.rsplit_once('.')) else {
        return false;
    };
    DRIVER_SECTIONS.contains(&section) && DRIVER_KEYS.contains(&last)
}

/// Whether `key` is an `include.path` or `includeIf.<condition>.path`.
pub(super) fn is_include(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    key.starts_with("include.") || key.starts_with("includeif.")
}

/// The repository the project is in: where git's files are.
pub(super) struct Repo {
    /// The directory holding `.git`.
    pub work_tree: PathBuf,
    /// `.git`, or the directory a `.git` file names (linked worktrees).
    pub git_dir: PathBuf,
    /// Where objects, refs and the configuration live (`commondir`).
    pub common_dir: PathBuf,
}

impl Repo {
    /// The repository `start` is in, found as git finds it: the nearest
    /// `.git` directory or `gitdir:` file in `start` or a parent.
    pub fn discover(start: &Path) -> Result<Repo, String> {
        for dir in start.ancestors() {
            let dot_git = dir.join(".git");
            let git_dir = if dot_git.is_dir() {
                dot_git
            } else if dot_git.is_file() {
                let text = std::fs::read_to_string(&dot_git)
                    .map_err(|e| format!("reading {}: {e}", dot_git.display()))?;
                let target = text.trim().strip_prefix("gitdir:").ok_or_else(|| {
                    format!("{} is not a `gitdir: <path>` file", dot_git.display())
                })?;
                dir.join(target.trim())
            } else {
                continue;
            };
            let common_dir = match std::fs::read_to_string(git_dir.join("commondir")) {
                Ok(rel) => git_dir.join(rel.trim()),
                Err(_) => git_dir.clone(),
            };
            return Ok(Repo {
                work_tree: dir.to_path_buf(),
                git_dir,
                common_dir,
            });
        }
        Err(format!(
            "the project is not in a git repository (no .git in {} or a parent)",
            start.display()
        ))
    }
}

/// A private directory for one git run: an empty `home` (HOME and
/// XDG_CONFIG_HOME), an empty `hooks`, and for reads the `view` git dir.
/// Removed when dropped.
pub(super) struct Private {
    dir: tempfile::TempDir,
}

impl Private {
    pub fn new() -> std::io::Result<Private> {
        let dir = tempfile::Builder::new().prefix("agent-git-").tempdir()?;
        for sub in [
            "home",
            "hooks",
            "view",
            "view/info",
            "empty",
            "empty/objects",
            "empty/refs",
        ] {
            std::fs::create_dir(dir.path().join(sub))?;
        }
        std::fs::write(dir.path().join("empty/config"), view_config(&[]))?;
        std::fs::write(dir.path().join("empty/HEAD"), "ref: refs/heads/main\n")?;
        Ok(Private { dir })
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// `git` with no configuration but the fixed overrides and `extra`, an
    /// environment of its own and `cwd` as working directory.
    pub fn command(&self, cwd: &Path, extra: &[(String, String)]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("--no-pager")
            .current_dir(cwd)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("LANG", "C")
            .env("LC_ALL", "C")
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("home"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_LAZY_FETCH", "1")
            .env("GIT_PROTOCOL_FROM_USER", "0")
            .kill_on_drop(true);
        let hooks = self.path("hooks").to_string_lossy().into_owned();
        // `extra` first: for a key given twice the last wins, so the fixed
        // overrides and the empty hooks directory always do.
        let all = extra
            .iter()
            .cloned()
            .chain(FIXED.iter().map(|(k, v)| (k.to_string(), v.to_string())))
            .chain([("core.hooksPath".to_string(), hooks)]);
        let mut count = 0;
        for (i, (key, value)) in all.enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{i}"), key)
                .env(format!("GIT_CONFIG_VALUE_{i}"), value);
            count = i + 1;
        }
        cmd.env("GIT_CONFIG_COUNT", count.to_string());
        cmd
    }

    /// A git command for a read: the private view of `repo` as git dir,
    /// the repository's work tree, index and objects.
    pub fn read_command(&self, repo: &Repo, cwd: &Path) -> Command {
        let mut cmd = self.command(cwd, &[]);
        cmd.env("GIT_DIR", self.path("view"))
            .env("GIT_WORK_TREE", &repo.work_tree)
            .env("GIT_INDEX_FILE", repo.git_dir.join("index"))
            .env("GIT_OBJECT_DIRECTORY", repo.common_dir.join("objects"))
            .env("GIT_OPTIONAL_LOCKS", "0");
        cmd
    }

    /// A git command for a write in the real repository: the repository's
    /// configuration is read, with every key in `neutralised` turned off and
    /// `identity` (the user's name and e-mail) added.
    pub fn write_command(
        &self,
        repo: &Repo,
        cwd: &Path,
        neutralised: &[String],
        identity: &[(String, String)],
    ) -> Command {
        let extra: Vec<(String, String)> = neutralised
            .iter()
            .map(|key| (key.clone(), neutral_value(key).to_string()))
            .chain(identity.iter().cloned())
            .collect();
        let mut cmd = self.command(cwd, &extra);
        cmd.env("GIT_DIR", &repo.git_dir)
            .env("GIT_WORK_TREE", &repo.work_tree);
        cmd
    }

    /// Builds the read view of `repo`: its `config` holds only `data`
    /// (validated [`DATA_KEYS`] entries), `HEAD` is a copy, refs, logs and
    /// the other files git reads are links to the repository's.
    pub fn build_view(&self, repo: &Repo, data: &[(String, String)]) -> std::io::Result<()> {
        let view = self.path("view");
        std::fs::write(view.join("config"), view_config(data))?;
        let head = std::fs::read(repo.git_dir.join("HEAD"))?;
        std::fs::write(view.join("HEAD"), head)?;
        for name in [
            "refs",
            "packed-refs",
            "reftable",
            "logs",
            "shallow",
            "info/exclude",
        ] {
            let real = repo.common_dir.join(name);
            if real.exists() {
                std::os::unix::fs::symlink(&real, view.join(name))?;
            }
        }
        // A split index keeps its shared part next to the index.
        for entry in std::fs::read_dir(&repo.git_dir)? {
            let entry = entry?;
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("sharedindex.")
            {
                std::os::unix::fs::symlink(entry.path(), view.join(entry.file_name()))?;
            }
        }
        Ok(())
    }

    /// A command that lists the configuration file `file` only (no
    /// includes), `key\nvalue\0` per entry; run against an empty git dir
    /// of the host's, never in the repository.
    pub fn list_file_command(&self, file: &Path) -> Command {
        let mut cmd = self.command(self.dir.path(), &[]);
        cmd.env("GIT_DIR", self.path("empty"))
            .args(["config", "--null", "--list", "--file"])
            .arg(file);
        cmd
    }
}

/// A command that reads the user's name and e-mail from the user's own
/// global git configuration (a read: `git config` runs nothing), since
/// writes run without it. Prints `key\nvalue\0` entries.
pub(super) fn identity_command(private: &Private) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(private.dir.path())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_DIR", private.path("empty"))
        .args(["--no-pager", "config", "--global", "--null", "--get-regexp"])
        .arg(r"^(user|author|committer)\.(name|email)$")
        .kill_on_drop(true);
    for var in ["HOME", "XDG_CONFIG_HOME"] {
        if let Some(value) = std::env::var_os(var) {
            cmd.env(var, value);
        }
    }
    cmd
}

/// The identity entries of `global` the repository's `entries` do not set.
pub(super) fn missing_identity(
    entries: &[(String, String)],
    global: Vec<(String, String)>,
) -> Vec<(String, String)> {
    global
        .into_iter()
        .filter(|(k, _)| !entries.iter().any(|(e, _)| e.eq_ignore_ascii_case(k)))
        .collect()
}

/// The value that turns key `key` (one [`runs_a_program`] accepts) off.
fn neutral_value(key: &str) -> &'static str {
    let key = key.to_ascii_lowercase();
    match key.as_str() {
        "core.fsmonitor" => "false",
        "core.editor" | "sequence.editor" => ":",
        _ if key.starts_with("pager.") => "false",
        _ => "",
    }
}

/// The read view's `config`: a non-bare repository with `data`.
fn view_config(data: &[(String, String)]) -> String {
    let mut core = String::from("[core]\n\tbare = false\n");
    let mut extensions = String::new();
    let mut version = "0".to_string();
    for (key, value) in data {
        match key.split_once('.') {
            Some(("core", "repositoryformatversion")) => version = value.clone(),
            Some(("core", name)) => core.push_str(&format!("\t{name} = {value}\n")),
            Some(("extensions", name)) => extensions.push_str(&format!("\t{name} = {value}\n")),
            _ => {}
        }
    }
    core.push_str(&format!("\trepositoryformatversion = {version}\n"));
    if extensions.is_empty() {
        core
    } else {
        format!("{core}[extensions]\n{extensions}")
    }
}

/// Splits `git config --null --list` output into (key, value) pairs.
pub(super) fn parse_list(out: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(out)
        .split('\0')
        .filter(|e| !e.is_empty())
        .map(|e| match e.split_once('\n') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (e.to_string(), String::new()),
        })
        .collect()
}

/// Splits `git config --null --list --show-scope` output into (key, value)
/// pairs, leaving out the `command` scope (the host's own overrides).
pub(super) fn parse_scoped_list(out: &[u8]) -> Vec<(String, String)> {
    let text = String::from_utf8_lossy(out);
    let mut fields = text.split('\0');
    let mut entries = Vec::new();
    while let (Some(scope), Some(entry)) = (fields.next(), fields.next()) {
        if scope == "command" {
            continue;
        }
        entries.extend(parse_list(entry.as_bytes()));
    }
    entries
}

/// The entries of a repository configuration the read view keeps: the
/// [`DATA_KEYS`] whose values are plain words.
pub(super) fn data_entries(entries: &[(String, String)]) -> Vec<(String, String)> {
    entries
        .iter()
        .filter(|(k, v)| {
            DATA_KEYS.contains(&k.to_ascii_lowercase().as_str())
                && !v.is_empty()
                && v.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
        .map(|(k, v)| (k.to_ascii_lowercase(), v.clone()))
        .collect()
}

/// The distinct keys of `entries` that [`runs_a_program`].
pub(super) fn program_keys(entries: &[(String, String)]) -> Vec<String> {
    let mut keys: Vec<String> = entries
        .iter()
        .map(|(k, _)| k.clone())
        .filter(|k| runs_a_program(k))
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// The audit outcome of a successful run that ignored `ignored`.
pub(super) fn outcome(ignored: &[String]) -> String {
    const SHOWN: usize = 32;
    if ignored.is_empty() {
        return "ok".into();
    }
    let mut list = ignored[..ignored.len().min(SHOWN)].join(", ");
    if ignored.len() > SHOWN {
        list.push_str(&format!(" and {} more", ignored.len() - SHOWN));
    }
    format!("ok; ignored the repository's command settings: {list}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_running_keys_are_recognised() {
        for key in [
            "core.fsmonitor",
            "core.sshCommand",
            "diff.x.textconv",
            "diff.x.command",
            "filter.lfs.process",
            "filter.y.clean",
            "merge.z.driver",
            "credential.https://example.com.helper",
            "pager.log",
            "include.path",
            "includeIf.gitdir:/x/.path",
            "gpg.ssh.program",
        ] {
            assert!(runs_a_program(key), "{key}");
        }
        for key in [
            "core.filemode",
            "user.name",
            "diff.renames",
            "filter.y.required",
        ] {
            assert!(!runs_a_program(key), "{key}");
        }
    }

    #[test]
    fn the_view_keeps_plain_data_keys_only() {
        let entries = parse_list(
            b"core.repositoryformatversion\n1\0core.fsmonitor\ntouch x\0extensions.objectformat\nsha256\0core.filemode\nfalse\0core.autocrlf\ninput; rm\0",
        );
        let data = data_entries(&entries);
        assert_eq!(
            data,
            [
                ("core.repositoryformatversion".into(), "1".into()),
                ("extensions.objectformat".into(), "sha256".into()),
                ("core.filemode".into(), "false".into()),
            ]
        );
        let config = view_config(&data);
        assert_eq!(
            config,
            "[core]\n\tbare = false\n\tfilemode = false\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n"
        );
        assert_eq!(program_keys(&entries), ["core.fsmonitor"]);
    }

    #[test]
    fn scoped_lists_leave_out_the_command_scope() {
        let entries = parse_scoped_list(
            b"local\0filter.y.clean\ntouch x\0command\0core.fsmonitor\nfalse\0global\0user.name\nA\0",
        );
        assert_eq!(
            entries,
            [
                ("filter.y.clean".to_string(), "touch x".to_string()),
                ("user.name".to_string(), "A".to_string()),
            ]
        );
    }
}

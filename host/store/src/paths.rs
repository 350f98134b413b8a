//! Where `agent` keeps its files.
//!
//! With `AGENT_HOME` set, everything lives under it (`$AGENT_HOME/config`, `$AGENT_HOME/data`,
//! `$AGENT_HOME/cache`); tests use this to stay hermetic. Otherwise the platform's directories
//! for the application `agent` are used; on Linux these are the XDG base directories
//! (`$XDG_CONFIG_HOME/agent` or `~/.config/agent`, `$XDG_DATA_HOME/agent` or
//! `~/.local/share/agent`, `$XDG_CACHE_HOME/agent` or `~/.cache/agent`).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use directories::ProjectDirs;

/// The environment variable that puts every `agent` directory under one root.
pub const AGENT_HOME_ENV: &str = "AGENT_HOME";

/// Why the directories could not be resolved or created.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathsError {
    /// Neither `AGENT_HOME` nor a home directory is available.
    #[error("cannot find a home directory for agent's files; set {AGENT_HOME_ENV} to a directory")]
    NoHome,
    /// `AGENT_HOME` is relative and the current directory is unknown.
    #[error("{AGENT_HOME_ENV}={} cannot be made absolute: {error}", value.display())]
    AgentHome {
        /// The value of `AGENT_HOME`.
        value: PathBuf,
        /// The underlying error (in the message, so not also a `source`: printed once).
        error: io::Error,
    },
    /// A directory could not be created or its permissions set.
    #[error("cannot create directory {}: {error}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// The underlying error (in the message, so not also a `source`: printed once).
        error: io::Error,
    },
}

/// The three roots `agent` writes to, and the well-known files inside them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentPaths {
    /// User configuration: `config.toml`, user skills, trusted keys, the user's own keys.
    pub config_dir: PathBuf,
    /// Durable state: the database and the audit log.
    pub data_dir: PathBuf,
    /// Disposable state: precompiled components.
    pub cache_dir: PathBuf,
}

impl AgentPaths {
    /// Resolves the directories from the process environment: `AGENT_HOME` if set and not
    /// empty, otherwise the platform directories for `agent` (XDG on Linux).
    pub fn from_env() -> Result<AgentPaths, PathsError> {
        Self::resolve(std::env::var_os(AGENT_HOME_ENV))
    }

    fn resolve(agent_home: Option<OsString>) -> Result<AgentPaths, PathsError> {
        match agent_home {
            Some(value) if !value.is_empty() => {
                let value = PathBuf::from(value);
                let root = std::path::absolute(&value)
                    .map_err(|error| PathsError::AgentHome { value, error })?;
                Ok(Self::at(root))
            }
            _ => {
                let dirs = ProjectDirs::from("", "", "agent").ok_or(PathsError::NoHome)?;
                Ok(AgentPaths {
                    config_dir: dirs.config_dir().to_path_buf(),
                    data_dir: dirs.data_dir().to_path_buf(),
                    cache_dir: dirs.cache_dir().to_path_buf(),
                })
            }
        }
    }

    /// All directories under one root, laid out as with `AGENT_HOME=root`.
    pub fn at(root: impl AsRef<Path>) -> AgentPaths {
        let root = root.as_ref();
        AgentPaths {
            config_dir: root.join("config"),
            data_dir: root.join("data"),
            cache_dir: root.join("cache"),
        }
    }

    /// `config.toml` in the config directory.
    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }

    /// The user's skills: `skills/` in the config directory.
    pub fn user_skills_dir(&self) -> PathBuf {
        self.config_dir.join("skills")
    }

    /// Public keys of trusted publishers: `trusted-keys/` in the config directory.
    pub fn trusted_keys_dir(&self) -> PathBuf {
        self.config_dir.join("trusted-keys")
    }

    /// The user's own secret signing keys: `keys/` in the config directory (mode 0700 on unix).
    pub fn keys_dir(&self) -> PathBuf {
        self.config_dir.join("keys")
    }

    /// The redb database: `agent.redb` in the data directory.
    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("agent.redb")
    }

    /// The hash-chained audit log: `audit.log` in the data directory.
    pub fn audit_log_path(&self) -> PathBuf {
        self.data_dir.join("audit.log")
    }

    /// Precompiled components: `components/` in the cache directory.
    pub fn component_cache_dir(&self) -> PathBuf {
        self.cache_dir.join("components")
    }

    /// The key that seals compiled components: `component-cache.key` in the data directory,
    /// outside the cache (someone who can write the cache must not be able to forge artifacts).
    pub fn component_cache_key(&self) -> PathBuf {
        self.data_dir.join("component-cache.key")
    }

    /// Fetched skill indexes (git clones): `registry/` in the cache directory.
    pub fn registry_cache_dir(&self) -> PathBuf {
        self.cache_dir.join("registry")
    }

    /// Creates every directory above that does not exist yet. The keys directory and the data
    /// directory are made private to the user (mode 0700 on unix), also when they already exist.
    pub fn ensure_dirs(&self) -> Result<(), PathsError> {
        for dir in [
            self.config_dir.clone(),
            self.user_skills_dir(),
            self.trusted_keys_dir(),
            self.cache_dir.clone(),
            self.component_cache_dir(),
        ] {
            create_dir(&dir, false)?;
        }
        create_dir(&self.keys_dir(), true)?;
        create_dir(&self.data_dir, true)?;
        Ok(())
    }
}

fn create_dir(path: &Path, private: bool) -> Result<(), PathsError> {
    let err = |error| PathsError::CreateDir {
        path: path.to_path_buf(),
        error,
    };
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path).map_err(err)?;
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).map_err(err)?;
    }
    #[cfg(not(unix))]
    let _ = private;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_home_puts_everything_under_one_root() {
        let paths = AgentPaths::resolve(Some("/tmp/agent-home".into())).unwrap();
        assert_eq!(paths, AgentPaths::at("/tmp/agent-home"));
        assert_eq!(paths.config_dir, Path::new("/tmp/agent-home/config"));
        assert_eq!(paths.data_dir, Path::new("/tmp/agent-home/data"));
        assert_eq!(paths.cache_dir, Path::new("/tmp/agent-home/cache"));
    }

    #[test]
    fn relative_agent_home_is_made_absolute() {
        let paths = AgentPaths::resolve(Some("rel-home".into())).unwrap();
        assert!(paths.config_dir.is_absolute());
        assert!(paths.config_dir.ends_with("rel-home/config"));
    }

    #[test]
    fn file_layout() {
        let p = AgentPaths::at("/r");
        assert_eq!(p.config_file(), Path::new("/r/config/config.toml"));
        assert_eq!(p.user_skills_dir(), Path::new("/r/config/skills"));
        assert_eq!(p.trusted_keys_dir(), Path::new("/r/config/trusted-keys"));
        assert_eq!(p.keys_dir(), Path::new("/r/config/keys"));
        assert_eq!(p.db_path(), Path::new("/r/data/agent.redb"));
        assert_eq!(p.audit_log_path(), Path::new("/r/data/audit.log"));
        assert_eq!(p.component_cache_dir(), Path::new("/r/cache/components"));
        assert_eq!(
            p.component_cache_key(),
            Path::new("/r/data/component-cache.key")
        );
    }

    #[test]
    fn ensure_dirs_creates_all_with_private_modes() {
        let tmp = tempfile::tempdir().unwrap();
        let p = AgentPaths::at(tmp.path().join("home"));
        p.ensure_dirs().unwrap();
        for d in [
            p.config_dir.clone(),
            p.user_skills_dir(),
            p.trusted_keys_dir(),
            p.keys_dir(),
            p.data_dir.clone(),
            p.cache_dir.clone(),
            p.component_cache_dir(),
        ] {
            assert!(d.is_dir(), "{} missing", d.display());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |d: PathBuf| std::fs::metadata(d).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(p.keys_dir()), 0o700);
            assert_eq!(mode(p.data_dir.clone()), 0o700);
            // An existing directory with a lax mode is tightened.
            std::fs::set_permissions(p.keys_dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
            p.ensure_dirs().unwrap();
            assert_eq!(mode(p.keys_dir()), 0o700);
        }
    }

    /// Runs in a child process (see `xdg_variables_are_honoured`), where the environment can
    /// be set without racing other tests.
    #[test]
    fn xdg_probe_child() {
        if std::env::var_os("AGENT_STORE_XDG_PROBE").is_none() {
            return;
        }
        let p = AgentPaths::from_env().unwrap();
        println!("config={}", p.config_dir.display());
        println!("data={}", p.data_dir.display());
        println!("cache={}", p.cache_dir.display());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn xdg_variables_are_honoured() {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--exact", "paths::tests::xdg_probe_child", "--nocapture"])
            .env("AGENT_STORE_XDG_PROBE", "1")
            .env_remove(AGENT_HOME_ENV)
            .env("HOME", "/home/probe")
            .env("XDG_CONFIG_HOME", "/x/config")
            .env("XDG_DATA_HOME", "/x/data")
            .env("XDG_CACHE_HOME", "/x/cache")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{stdout}");
        assert!(stdout.contains("config=/x/config/agent\n"), "{stdout}");
        assert!(stdout.contains("data=/x/data/agent\n"), "{stdout}");
        assert!(stdout.contains("cache=/x/cache/agent\n"), "{stdout}");

        // Without XDG variables, the defaults under HOME.
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--exact", "paths::tests::xdg_probe_child", "--nocapture"])
            .env("AGENT_STORE_XDG_PROBE", "1")
            .env_remove(AGENT_HOME_ENV)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .env_remove("XDG_CACHE_HOME")
            .env("HOME", "/home/probe")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("config=/home/probe/.config/agent\n"),
            "{stdout}"
        );
        assert!(
            stdout.contains("data=/home/probe/.local/share/agent\n"),
            "{stdout}"
        );
        assert!(
            stdout.contains("cache=/home/probe/.cache/agent\n"),
            "{stdout}"
        );

        // AGENT_HOME wins over XDG.
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--exact", "paths::tests::xdg_probe_child", "--nocapture"])
            .env("AGENT_STORE_XDG_PROBE", "1")
            .env(AGENT_HOME_ENV, "/ah")
            .env("XDG_CONFIG_HOME", "/x/config")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("config=/ah/config\n"), "{stdout}");
    }
}

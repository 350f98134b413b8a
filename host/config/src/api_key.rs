//! Where a provider's API key comes from: the provider's environment
//! variable, else `provider.<name>.api_key_file` (a file only its owner can
//! read), else `provider.<name>.api_key_command` (run once; its trimmed
//! output is the key). A key in plain text in `config.toml` is refused.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::{Config, ProviderKind};

/// How long `api_key_command` may take.
pub const KEY_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// The ways to give `provider`'s key, for messages.
pub(crate) fn ways(provider: &str, var: &str) -> String {
    format!(
        "set the {var} environment variable, or in config.toml under [provider.{provider}] set \
         api_key_file = \"PATH\" (a file only you can read: chmod 600) or api_key_command = \
         \"COMMAND\" (prints the key)"
    )
}

impl Config {
    /// `kind`'s API key: the environment variable (read through `env`), else
    /// the key file, else the key command; `None` for Ollama, which needs none.
    ///
    /// # Errors
    /// No key anywhere (the message lists the ways to give one), a key file
    /// that cannot be read, is empty or (on unix) can be read by group or
    /// others (naming the `chmod 600` to run), or a key command that fails,
    /// times out or prints nothing.
    pub fn api_key(
        &self,
        kind: ProviderKind,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<String>, String> {
        let (var, file, command) = match kind {
            ProviderKind::Anthropic => (
                crate::AnthropicConfig::API_KEY_ENV,
                &self.provider.anthropic.api_key_file,
                &self.provider.anthropic.api_key_command,
            ),
            ProviderKind::OpenAi => (
                crate::OpenAiConfig::API_KEY_ENV,
                &self.provider.openai.api_key_file,
                &self.provider.openai.api_key_command,
            ),
            ProviderKind::Ollama => return Ok(None),
        };
        if let Some(key) = env(var).map(|k| k.trim().to_string())
            && !key.is_empty()
        {
            return Ok(Some(key));
        }
        let name = kind.as_str();
        if let Some(path) = file {
            return key_file(name, path).map(Some);
        }
        if let Some(command) = command {
            return key_command(name, command).map(Some);
        }
        Err(format!("no API key for {name}: {}", ways(name, var)))
    }
}

fn key_file(provider: &str, path: &Path) -> Result<String, String> {
    let key = format!("provider.{provider}.api_key_file");
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("{key} {shown}: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(format!(
                "{key} {shown} can be read by other users (mode {mode:o}); run `chmod 600 {shown}`"
            ));
        }
    }
    if !meta.is_file() {
        return Err(format!("{key} {shown}: not a file"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{key} {shown}: {e}"))?;
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(format!("{key} {shown} is empty; put the API key in it"));
    }
    Ok(trimmed.to_string())
}

fn shell(command: &str) -> Command {
    if cfg!(windows) {
        let mut c = Command::new("cmd");
        c.args(["/C", command]);
        c
    } else {
        let mut c = Command::new("sh");
        c.args(["-c", command]);
        c
    }
}

fn key_command(provider: &str, command: &str) -> Result<String, String> {
    let key = format!("provider.{provider}.api_key_command");
    let mut child = shell(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{key} `{command}` could not be started: {e}"))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(p) = pipe {
                let _ = p.take(64 * 1024).read_to_end(&mut buf);
            }
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + KEY_COMMAND_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{key} `{command}` did not finish within {} s",
                    KEY_COMMAND_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("{key} `{command}`: {e}")),
        }
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    if !status.success() {
        let why = stderr.trim();
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(": {}", why.lines().next().unwrap_or_default())
        };
        return Err(format!("{key} `{command}` failed ({status}){why}"));
    }
    let trimmed = stdout.trim();
    if trimmed.is_empty() {
        return Err(format!(
            "{key} `{command}` printed nothing; it must print the API key"
        ));
    }
    Ok(trimmed.to_string())
}

/// Expands a leading `~/` with `home`.
pub(crate) fn expand_home(s: &str, home: Option<String>) -> PathBuf {
    match (s.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) if !home.is_empty() => Path::new(&home).join(rest),
        _ => PathBuf::from(s),
    }
}

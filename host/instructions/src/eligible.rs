//! Whether a skill is offered: `requires` and `os`, each failure with its reason.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

use crate::parse::Frontmatter;

/// What the host looks at to decide eligibility (a trait so tests can set it).
pub trait Environment {
    /// Whether `program` is an executable file on PATH.
    fn has_bin(&self, program: &str) -> bool;
    /// Whether the variable is set (non-empty).
    fn has_env(&self, name: &str) -> bool;
    /// Whether the dotted configuration key is true or non-empty.
    fn config_truthy(&self, key: &str) -> bool;
    /// The operating system (`linux`, `macos`, `windows`, …, as `std::env::consts::OS`).
    fn os(&self) -> &str;
}

/// The process's environment, with a caller-provided configuration lookup. Program
/// lookups are remembered (many skills ask for the same programs).
pub struct HostEnvironment<F: Fn(&str) -> bool> {
    config: F,
    bins: RefCell<HashMap<String, bool>>,
}

impl<F: Fn(&str) -> bool> HostEnvironment<F> {
    /// `config` answers [`Environment::config_truthy`].
    pub fn new(config: F) -> Self {
        HostEnvironment {
            config,
            bins: RefCell::default(),
        }
    }
}

impl<F: Fn(&str) -> bool> Environment for HostEnvironment<F> {
    fn has_bin(&self, program: &str) -> bool {
        if let Some(&known) = self.bins.borrow().get(program) {
            return known;
        }
        let found = if program.contains('/') {
            is_executable(Path::new(program))
        } else {
            std::env::var_os("PATH").is_some_and(|path| {
                std::env::split_paths(&path).any(|d| is_executable(&d.join(program)))
            })
        };
        self.bins.borrow_mut().insert(program.to_string(), found);
        found
    }

    fn has_env(&self, name: &str) -> bool {
        std::env::var_os(name).is_some_and(|v| !v.is_empty())
    }

    fn config_truthy(&self, key: &str) -> bool {
        (self.config)(key)
    }

    fn os(&self) -> &str {
        std::env::consts::OS
    }
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// `darwin` is macOS.
fn same_os(written: &str, actual: &str) -> bool {
    let norm = |s: &str| match s.to_ascii_lowercase().as_str() {
        "darwin" | "macos" | "osx" => "macos".to_string(),
        "win32" | "windows" => "windows".to_string(),
        other => other.to_string(),
    };
    norm(written) == norm(actual)
}

/// Why the skill is not offered here; empty when it is.
pub fn ineligibility(front: &Frontmatter, env: &dyn Environment) -> Vec<String> {
    let mut why = Vec::new();
    if !front.os.is_empty() && !front.os.iter().any(|o| same_os(o, env.os())) {
        why.push(format!(
            "runs only on {} (this is {})",
            front.os.join(", "),
            env.os()
        ));
    }
    let r = &front.requires;
    for b in &r.bins {
        if !env.has_bin(b) {
            why.push(format!("needs the program `{b}` on PATH"));
        }
    }
    if !r.any_bins.is_empty() && !r.any_bins.iter().any(|b| env.has_bin(b)) {
        why.push(format!(
            "needs one of the programs {} on PATH",
            r.any_bins.join(", ")
        ));
    }
    for v in &r.env {
        if !env.has_env(v) {
            why.push(format!("needs the environment variable {v}"));
        }
    }
    for k in &r.config {
        if !env.config_truthy(k) {
            why.push(format!("needs `{k}` set in config.toml"));
        }
    }
    why
}

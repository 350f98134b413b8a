//! Which test runners a project has, and how each is run.
//!
//! Only the project's root is looked at:
//! - `Cargo.toml` → `cargo test --no-fail-fast` (libtest's lines; its
//!   stderr, appended, gives the file of each test binary);
//! - `go.mod` → `go test -json ./...`;
//! - `pytest.ini`, a `pyproject.toml` or `tox.ini` that mentions pytest, a
//!   `setup.cfg` with `[tool:pytest]`, or a `tests/` directory with
//!   `test_*.py`, `*_test.py` or `conftest.py` → `pytest -q
//!   --junitxml=<file>`;
//! - `package.json` with a `test` script other than npm's placeholder →
//!   `npm test`; its JUnit file is known when the script runs node's test
//!   runner with `--test-reporter=junit --test-reporter-destination=FILE`,
//!   otherwise the TAP lines of stdout are read.

use std::path::{Path, PathBuf};

use crate::RunnerKind;

/// Where pytest is told to write its JUnit XML, relative to the project.
pub const PYTEST_JUNIT_FILE: &str = ".agent/test-report/pytest.xml";

/// One way to run a project's tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runner {
    kind: RunnerKind,
    args: Vec<String>,
    junit: Option<PathBuf>,
}

impl Runner {
    fn new(kind: RunnerKind, args: &[&str], junit: Option<PathBuf>) -> Runner {
        Runner {
            kind,
            args: args.iter().map(|arg| arg.to_string()).collect(),
            junit,
        }
    }

    /// Which runner this is (what [`crate::parse`] is told).
    pub fn kind(&self) -> RunnerKind {
        self.kind
    }

    /// The program to run, in the project's root.
    pub fn program(&self) -> &'static str {
        self.kind.name()
    }

    /// Its arguments.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// The grant running it needs: `shell:exec:<program>`.
    pub fn permission(&self) -> String {
        format!("shell:exec:{}", self.program())
    }

    /// The JUnit XML file the run writes, relative to the project's root
    /// (read it after the run and pass it to [`crate::parse`]).
    pub fn junit_file(&self) -> Option<&Path> {
        self.junit.as_deref()
    }

    /// pytest only: write the JUnit XML to `file` (relative to the project's
    /// root) instead of [`PYTEST_JUNIT_FILE`].
    pub fn with_junit_file(mut self, file: &Path) -> Runner {
        if self.kind == RunnerKind::Pytest {
            self.args = vec!["-q".to_string(), format!("--junitxml={}", file.display())];
            self.junit = Some(file.to_path_buf());
        }
        self
    }
}

/// The test runners of the project at `root`, in the order cargo, go,
/// pytest, npm.
pub fn detect(root: &Path) -> Vec<Runner> {
    let mut runners = Vec::new();
    if root.join("Cargo.toml").is_file() {
        runners.push(Runner::new(
            RunnerKind::Cargo,
            &["test", "--no-fail-fast"],
            None,
        ));
    }
    if root.join("go.mod").is_file() {
        runners.push(Runner::new(
            RunnerKind::Go,
            &["test", "-json", "./..."],
            None,
        ));
    }
    if has_pytest(root) {
        runners.push(
            Runner::new(RunnerKind::Pytest, &[], None)
                .with_junit_file(Path::new(PYTEST_JUNIT_FILE)),
        );
    }
    if let Some(script) = npm_test_script(root) {
        runners.push(Runner::new(
            RunnerKind::Npm,
            &["test"],
            node_junit_destination(&script),
        ));
    }
    runners
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn has_pytest(root: &Path) -> bool {
    if root.join("pytest.ini").is_file()
        || read(&root.join("pyproject.toml")).contains("pytest")
        || read(&root.join("tox.ini")).contains("pytest")
        || read(&root.join("setup.cfg")).contains("[tool:pytest]")
    {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(root.join("tests")) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        name == "conftest.py"
            || (name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py")))
    })
}

/// The `test` script of `package.json`, unless it is npm's placeholder.
fn npm_test_script(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(root.join("package.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let script = json
        .get("scripts")?
        .get("test")?
        .as_str()?
        .trim()
        .to_string();
    let placeholder = script.contains("no test specified") && script.contains("exit 1");
    (!script.is_empty() && !placeholder).then_some(script)
}

/// `FILE` of `--test-reporter-destination=FILE` when the script runs node's
/// test runner with the junit reporter.
fn node_junit_destination(script: &str) -> Option<PathBuf> {
    let words: Vec<&str> = script.split_whitespace().collect();
    let junit = words.iter().enumerate().any(|(at, word)| {
        *word == "--test-reporter=junit"
            || (*word == "--test-reporter" && words.get(at + 1) == Some(&"junit"))
    });
    if !junit {
        return None;
    }
    words.iter().enumerate().find_map(|(at, word)| {
        if let Some(file) = word.strip_prefix("--test-reporter-destination=") {
            Some(PathBuf::from(file.trim_matches(['"', '\''])))
        } else if *word == "--test-reporter-destination" {
            words
                .get(at + 1)
                .map(|file| PathBuf::from(file.trim_matches(['"', '\''])))
        } else {
            None
        }
    })
}

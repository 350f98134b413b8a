//! Everything a log said, gathered from the events: findings (Appendix C),
//! test results and a summary. Bounded: past the limits only counts grow.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::event::{
    Diagnostic, Event, Framework, Kind, Level, Outcome, RunCount, TestResult, TestStatus,
};
use crate::finding::{Confidence, Finding, Location, Severity, fingerprint};
use crate::scan::shorten;

/// The `scanner` of every finding.
pub const SCANNER: &str = "apple-dev/xcode-log";

/// What to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Paths under this directory are made relative to it (Appendix C's
    /// `location.file` is relative to the project root).
    pub project_root: Option<String>,
    /// Findings kept (distinct by id); later ones are only counted.
    pub max_findings: usize,
    /// Test results kept; later ones are only counted.
    pub max_tests: usize,
}

impl Default for Options {
    /// No project root, 2 000 findings, 20 000 test results.
    fn default() -> Options {
        Options {
            project_root: None,
            max_findings: 2_000,
            max_tests: 20_000,
        }
    }
}

/// Counts and outcomes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Errors (each counted once, duplicates not).
    pub errors: u64,
    /// Warnings.
    pub warnings: u64,
    /// Notes.
    pub notes: u64,
    /// Diagnostics printed again (same file, line, message): Xcode repeats them.
    pub duplicates: u64,
    /// Distinct findings past `max_findings`.
    pub findings_dropped: u64,
    /// Test cases that passed.
    pub tests_passed: u64,
    /// Test cases that failed.
    pub tests_failed: u64,
    /// Test cases skipped.
    pub tests_skipped: u64,
    /// Test results past `max_tests`.
    pub tests_dropped: u64,
    /// Crashes and unexpected exits.
    pub crashes: u64,
    /// `succeeded`, `failed` or `interrupted`: the last build, archive or
    /// clean outcome (xcodebuild's `** BUILD … **`, SwiftPM's `Build complete!`).
    pub build: Option<String>,
    /// The last `** TEST … **` outcome, or the test runner's own verdict.
    pub test: Option<String>,
    /// Every `** … **` line, in order (at most 32).
    pub outcomes: Vec<Outcome>,
    /// "The following build commands failed:" (at most 64).
    pub failed_commands: Vec<String>,
    /// XCTest's count for the whole run (`All tests`, else the largest).
    pub xctest: Option<RunCount>,
    /// Swift Testing's `Test run with N tests …`.
    pub swift_testing: Option<RunCount>,
    /// Lines read.
    pub lines: u64,
    /// Lines longer than the reader's limit (their tail was not parsed).
    pub truncated_lines: u64,
}

/// The parsed log.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Report {
    /// Counts and outcomes.
    pub summary: Summary,
    /// Errors, warnings and notes (Appendix C), distinct, in log order.
    pub findings: Vec<Finding>,
    /// Test results, in log order.
    pub tests: Vec<TestResult>,
    #[serde(skip)]
    options: Options,
    #[serde(skip)]
    seen: HashSet<String>,
}

fn is_top_level(suite: &str) -> bool {
    matches!(suite, "All tests" | "Selected tests")
}

impl Report {
    /// An empty report.
    pub fn new(options: Options) -> Report {
        Report {
            options,
            ..Report::default()
        }
    }

    /// Adds one event.
    pub fn add(&mut self, event: Event) {
        match event {
            Event::Diagnostic(d) => self.add_diagnostic(&d),
            Event::Test(mut t) => {
                // Failure locations inside the project are project-relative
                // too, like the findings' files.
                for f in &mut t.failures {
                    f.file = relative(&f.file, self.options.project_root.as_deref()).to_string();
                }
                match t.status {
                    TestStatus::Passed => self.summary.tests_passed += 1,
                    TestStatus::Failed => self.summary.tests_failed += 1,
                    TestStatus::Skipped => self.summary.tests_skipped += 1,
                }
                if self.tests.len() < self.options.max_tests {
                    self.tests.push(t);
                } else {
                    self.summary.tests_dropped += 1;
                }
            }
            Event::Outcome(o) => {
                let status = Some(o.status.to_ascii_lowercase());
                if o.action == "TEST" {
                    self.summary.test = status;
                } else if o.action.contains("BUILD") || o.action == "ARCHIVE" || o.action == "CLEAN"
                {
                    self.summary.build = status;
                }
                if self.summary.outcomes.len() < 32 {
                    self.summary.outcomes.push(o);
                }
            }
            Event::RunCount(c) => match c.framework {
                Framework::SwiftTesting => {
                    if self.summary.test.is_none() || !c.passed {
                        self.summary.test =
                            Some(if c.passed { "succeeded" } else { "failed" }.into());
                    }
                    self.summary.swift_testing = Some(c);
                }
                Framework::Xctest => {
                    let replace = match &self.summary.xctest {
                        None => true,
                        Some(old) => {
                            is_top_level(&c.suite)
                                || (!is_top_level(&old.suite) && c.tests >= old.tests)
                        }
                    };
                    // `swift test` prints no `** TEST … **`: the run's own count decides.
                    if is_top_level(&c.suite) && (self.summary.test.is_none() || !c.passed) {
                        self.summary.test =
                            Some(if c.passed { "succeeded" } else { "failed" }.into());
                    }
                    if replace {
                        self.summary.xctest = Some(c);
                    }
                }
            },
            Event::FailedCommand { command } => {
                if self.summary.failed_commands.len() < 64 {
                    self.summary.failed_commands.push(command);
                }
            }
        }
    }

    /// Adds one line's worth of accounting (the reader calls it).
    pub fn count_line(&mut self, truncated: bool) {
        self.summary.lines += 1;
        if truncated {
            self.summary.truncated_lines += 1;
        }
    }

    fn add_diagnostic(&mut self, d: &Diagnostic) {
        let finding = to_finding(d, self.options.project_root.as_deref());
        if !self.seen.insert(finding.id.clone()) {
            self.summary.duplicates += 1;
            return;
        }
        match d.level() {
            Level::Error => self.summary.errors += 1,
            Level::Warning => self.summary.warnings += 1,
            Level::Note => self.summary.notes += 1,
        }
        if d.kind() == Kind::Crash {
            self.summary.crashes += 1;
        }
        if self.findings.len() < self.options.max_findings {
            self.findings.push(finding);
        } else {
            self.summary.findings_dropped += 1;
            // Past the limit only the count grows: forget ids to stay bounded.
            if self.seen.len() > self.options.max_findings * 4 {
                self.seen.clear();
            }
        }
    }
}

fn remediation(kind: Kind) -> &'static str {
    match kind {
        Kind::Compiler => {
            "Fix the code at this location; the compiler's notes and fix-its follow the message."
        }
        Kind::Linker => {
            "Link the library or framework that defines the symbol (or add the file that defines it to the target), and check that every dependency is built for this architecture."
        }
        Kind::CodeSigning => {
            "Check the team, bundle identifier, certificate and provisioning profile in the target's Signing & Capabilities settings (or pass -allowProvisioningUpdates for automatic signing)."
        }
        Kind::ScriptPhase => {
            "Run the Run Script phase's command by hand to see why it failed: a missing tool, a wrong path, or an error the script itself reported."
        }
        Kind::TestFailure => {
            "Fix the code under test or the expectation at this location, then run the test again."
        }
        Kind::Crash => {
            "Reproduce the crash in the named test; the frames and the fatal error's location point at the cause."
        }
        Kind::Build => {
            "Read the message: it names the setting, file or command the build system could not use."
        }
    }
}

fn category(kind: Kind) -> &'static str {
    match kind {
        Kind::CodeSigning | Kind::ScriptPhase => "misconfiguration",
        Kind::TestFailure => "testing",
        _ => "correctness",
    }
}

fn relative<'a>(file: &'a str, root: Option<&str>) -> &'a str {
    let Some(root) = root
        .map(|r| r.trim_end_matches('/'))
        .filter(|r| !r.is_empty())
    else {
        return file;
    };
    file.strip_prefix(root)
        .and_then(|rest| rest.strip_prefix('/'))
        .unwrap_or(file)
}

/// One diagnostic as a finding (Appendix C).
pub fn to_finding(d: &Diagnostic, project_root: Option<&str>) -> Finding {
    let kind = d.kind();
    let level = d.level();
    let file = relative(&d.file, project_root).to_string();
    let rule_id = format!(
        "XCODE-{}-{}",
        kind.code(),
        level.as_str().to_ascii_uppercase()
    );
    let line = d.line.to_string();
    let id = fingerprint(&[
        &rule_id,
        &file,
        &line,
        d.symbol.as_deref().unwrap_or(""),
        &d.message,
    ]);
    let mut description = d.message.clone();
    match (&d.target, &d.project) {
        (Some(t), Some(p)) => description.push_str(&format!(" (target '{t}', project '{p}')")),
        (Some(t), None) => description.push_str(&format!(" (target '{t}')")),
        (None, Some(p)) => description.push_str(&format!(" (project '{p}')")),
        (None, None) => {}
    }
    // Swift's runtime prints `File.swift:12: Fatal error: …`.
    let label = if kind == Kind::Crash {
        "Fatal error"
    } else {
        level.as_str()
    };
    let mut evidence = if d.file.is_empty() {
        d.message.clone()
    } else if d.line == 0 {
        format!("{}: {label}: {}", d.file, d.message)
    } else if d.column == 0 {
        format!("{}:{}: {label}: {}", d.file, d.line, d.message)
    } else {
        format!("{}:{}:{}: {label}: {}", d.file, d.line, d.column, d.message)
    };
    for c in &d.context {
        evidence.push('\n');
        evidence.push_str(c);
    }
    let mut metadata = BTreeMap::new();
    metadata.insert("kind".to_string(), kind.as_str().to_string());
    metadata.insert("level".to_string(), level.as_str().to_string());
    for (key, value) in [
        ("target", &d.target),
        ("project", &d.project),
        ("symbol", &d.symbol),
        ("arch", &d.arch),
        ("test", &d.test),
    ] {
        if let Some(v) = value {
            metadata.insert(key.to_string(), v.clone());
        }
    }
    let title_source = d.message.lines().next().unwrap_or("");
    Finding {
        id,
        rule_id,
        scanner: SCANNER.to_string(),
        skill_source: None,
        severity: match level {
            Level::Error => Severity::High,
            Level::Warning => Severity::Medium,
            Level::Note => Severity::Info,
        },
        category: category(kind).to_string(),
        title: shorten(title_source, 120),
        description,
        location: Location {
            file,
            start_line: d.line,
            end_line: d.line,
            start_column: d.column,
            end_column: 0,
            function: d.test.clone().or_else(|| d.symbol.clone()),
        },
        cwe: None,
        owasp: None,
        evidence,
        remediation: remediation(kind).to_string(),
        confidence: Confidence::High,
        references: Vec::new(),
        metadata,
    }
}

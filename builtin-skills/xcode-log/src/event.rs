//! What the parser reports, one event at a time.

use serde::{Deserialize, Serialize};

/// How serious a diagnostic is, as the tool printed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// `error:`, `fatal error:`, a failed command, a crash.
    Error,
    /// `warning:`.
    Warning,
    /// `note:` (and `remark:`).
    Note,
}

impl Level {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// Which part of the build a diagnostic comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// swiftc or clang, with a file location.
    Compiler,
    /// ld: undefined or duplicate symbols, missing libraries.
    Linker,
    /// Code signing and provisioning profiles.
    CodeSigning,
    /// A Run Script build phase.
    ScriptPhase,
    /// An XCTest or Swift Testing failure.
    TestFailure,
    /// A crash, fatal error or unexpected exit while running.
    Crash,
    /// Anything else the build system, xcodebuild or SwiftPM reports.
    Build,
}

impl Kind {
    /// The upper-case part of a rule id (`XCODE-<KIND>-<LEVEL>`).
    pub fn code(self) -> &'static str {
        match self {
            Kind::Compiler => "COMPILER",
            Kind::Linker => "LINKER",
            Kind::CodeSigning => "SIGNING",
            Kind::ScriptPhase => "SCRIPT-PHASE",
            Kind::TestFailure => "TEST",
            Kind::Crash => "CRASH",
            Kind::Build => "BUILD",
        }
    }

    /// The kebab-case name (the finding's `metadata.kind`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Compiler => "compiler",
            Kind::Linker => "linker",
            Kind::CodeSigning => "code-signing",
            Kind::ScriptPhase => "script-phase",
            Kind::TestFailure => "test-failure",
            Kind::Crash => "crash",
            Kind::Build => "build",
        }
    }
}

/// One error, warning or note.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// Where it comes from.
    pub kind: Option<Kind>,
    /// How serious.
    pub level: Option<Level>,
    /// The file, as printed; empty when none.
    pub file: String,
    /// 1-based, 0 when unknown.
    pub line: u32,
    /// 1-based, 0 when unknown.
    pub column: u32,
    /// The message, without the `(in target … from project …)` suffix.
    pub message: String,
    /// Lines that belong to it: the source line and caret, Swift's numbered
    /// excerpt, the linker's "referenced from" list, crash frames (bounded).
    pub context: Vec<String>,
    /// `in target 'X'`.
    pub target: Option<String>,
    /// `from project 'Y'`.
    pub project: Option<String>,
    /// The linker's symbol.
    pub symbol: Option<String>,
    /// The architecture the linker names.
    pub arch: Option<String>,
    /// The test a failure or crash belongs to.
    pub test: Option<String>,
}

impl Diagnostic {
    /// The kind, `Build` when unset.
    pub fn kind(&self) -> Kind {
        self.kind.unwrap_or(Kind::Build)
    }
    /// The level, `Error` when unset.
    pub fn level(&self) -> Level {
        self.level.unwrap_or(Level::Error)
    }
}

/// How a test ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TestStatus {
    /// Passed (including Swift Testing's "with N known issues").
    Passed,
    /// Failed.
    Failed,
    /// Skipped.
    Skipped,
}

/// Which framework ran a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Framework {
    /// XCTest (Xcode, `swift test`, parallel clones).
    Xctest,
    /// Swift Testing (`@Test`).
    SwiftTesting,
}

/// Where and why a test failed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestFailure {
    /// The file, as printed.
    pub file: String,
    /// 1-based, 0 when unknown.
    pub line: u32,
    /// 1-based, 0 when unknown.
    pub column: u32,
    /// The assertion's message.
    pub message: String,
}

/// One test case's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The class (XCTest, with its module when printed) or, for Swift
    /// Testing, empty (its output does not say which suite a test is in).
    pub suite: String,
    /// The test (`testExample`, `addition()`, a display name).
    pub name: String,
    /// How it ended.
    pub status: TestStatus,
    /// Seconds, when printed.
    pub duration: Option<f64>,
    /// Its recorded failures (bounded).
    pub failures: Vec<TestFailure>,
    /// The parallel-testing clone or device (`Clone 1 of iPhone 15 - App (123)`).
    pub device: Option<String>,
    /// Which framework.
    pub framework: Framework,
}

/// A `** BUILD FAILED **`-style line, or SwiftPM's equivalent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// `BUILD`, `TEST`, `ARCHIVE`, `CLEAN`, `TEST BUILD`, … (SwiftPM's are `BUILD`).
    pub action: String,
    /// `SUCCEEDED`, `FAILED` or `INTERRUPTED`.
    pub status: String,
}

impl Outcome {
    /// Whether it failed (or was interrupted).
    pub fn failed(&self) -> bool {
        self.status != "SUCCEEDED"
    }
}

/// A test run's own count: XCTest's "Executed N tests, with M failures (K
/// unexpected)" or Swift Testing's "Test run with N tests … with M issues".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunCount {
    /// Which framework printed it.
    pub framework: Framework,
    /// The XCTest suite it closes (`All tests`, `AppTests.xctest`, …); empty for Swift Testing.
    pub suite: String,
    /// Tests executed.
    pub tests: u64,
    /// Failures (XCTest) or issues (Swift Testing).
    pub failures: u64,
    /// XCTest's "unexpected" count.
    pub unexpected: u64,
    /// Whether the run passed (Swift Testing) / had no failures (XCTest).
    pub passed: bool,
    /// Seconds, when printed.
    pub duration: Option<f64>,
}

/// One thing the parser recognised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Event {
    /// An error, warning or note.
    Diagnostic(Diagnostic),
    /// A finished test case.
    Test(TestResult),
    /// A `** … **` summary line or SwiftPM's `Build complete!` / `error: fatalError`.
    Outcome(Outcome),
    /// A test run's own count.
    RunCount(RunCount),
    /// One entry of "The following build commands failed:".
    FailedCommand {
        /// The command line as printed (`CompileSwift normal arm64 …`).
        command: String,
    },
}

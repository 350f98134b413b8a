//! The streaming parser: one line in, zero or more [`Event`]s out. It keeps
//! only a bounded amount of state (one diagnostic waiting for its excerpt,
//! one linker block, the failures of tests still running), so a log of any
//! size is parsed in constant memory.

use std::vec::Drain;

use crate::event::{
    Diagnostic, Event, Framework, Kind, Level, Outcome, RunCount, TestFailure, TestResult,
    TestStatus,
};
use crate::linker::{LinkerBlock, Step};
use crate::scan::{diagnostic, is_excerpt, shorten, split_target, strip_ansi};
use crate::testlines::{SwiftTesting, Xctest, swift_testing, xctest, xctest_failure};
use crate::words::{COMMANDS, crash, is_signing, located, phase_name};

/// Lines of context kept with one diagnostic.
pub const MAX_CONTEXT: usize = 12;
/// Characters kept of one context line.
pub(crate) const MAX_CONTEXT_CHARS: usize = 512;
/// Failures remembered for tests that have not finished yet.
const MAX_OPEN_FAILURES: usize = 256;

#[derive(Debug, PartialEq, Eq)]
enum Mode {
    /// A compiler diagnostic: caret lines, Swift excerpts, and up to two
    /// source lines before a caret.
    Source,
    /// A test issue or crash: indented lines, `↳` details, crash frames.
    Continuation,
}

#[derive(Debug)]
struct Pending {
    diag: Diagnostic,
    mode: Mode,
    tentative: Vec<String>,
}

/// The streaming parser.
#[derive(Debug, Default)]
pub struct Parser {
    out: Vec<Event>,
    pending: Option<Pending>,
    linker: Option<LinkerBlock>,
    failed_list: bool,
    phase: Option<(String, Option<String>, Option<String>)>,
    in_phase: bool,
    open_failures: Vec<(Framework, String, String, TestFailure)>,
    last_suite: String,
    /// The XCTest case started last and not finished: a crash is its.
    running: Option<String>,
    buf: Vec<u8>,
}

impl Parser {
    /// A parser with nothing seen.
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Feeds one line (without its newline; a trailing `\r` is dropped,
    /// colour codes are stripped, invalid UTF-8 is replaced) and returns the
    /// events it completed. An event may complete only with a later line
    /// (a diagnostic waits for its caret line): call [`Parser::finish`] at the end.
    pub fn push(&mut self, raw: &[u8]) -> Drain<'_, Event> {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let mut buf = std::mem::take(&mut self.buf);
        strip_ansi(raw, &mut buf);
        match std::str::from_utf8(&buf) {
            Ok(line) => self.line(line),
            Err(_) => {
                let line = String::from_utf8_lossy(&buf).into_owned();
                self.line(&line);
            }
        }
        self.buf = buf;
        self.out.drain(..)
    }

    /// [`Parser::push`] for a `&str`.
    pub fn push_str(&mut self, line: &str) -> Drain<'_, Event> {
        self.push(line.as_bytes())
    }

    /// Ends the log: returns what was still waiting (a diagnostic, a linker block).
    pub fn finish(&mut self) -> Drain<'_, Event> {
        self.close_pending();
        self.flush_linker();
        self.out.drain(..)
    }

    fn line(&mut self, line: &str) {
        if let Some(p) = &mut self.pending {
            let attach = match p.mode {
                Mode::Source => is_excerpt(line),
                // A crash's report has blank lines between its parts.
                Mode::Continuation if line.trim().is_empty() => p.diag.kind == Some(Kind::Crash),
                Mode::Continuation => {
                    (line.starts_with(char::is_whitespace) && xctest(line).is_none())
                        || line.starts_with('↳')
                        || (p.diag.kind == Some(Kind::Crash)
                            && (line.starts_with("Thread ")
                                || line.starts_with("💣 Program crashed")))
                        || (p.diag.kind == Some(Kind::Crash)
                            && line.starts_with(|c: char| c.is_ascii_digit()))
                }
            };
            if attach {
                if line.trim().is_empty() {
                    return;
                }
                if p.diag.context.len() < MAX_CONTEXT {
                    let tentative = std::mem::take(&mut p.tentative);
                    p.diag.context.extend(tentative);
                    if p.mode == Mode::Continuation && p.diag.message.is_empty() {
                        p.diag.message = line.trim_start_matches(['↳', ' ', '\t']).to_string();
                        // A Swift Testing issue whose message follows its location.
                        if let Some(test) = &p.diag.test
                            && let Some(open) =
                                self.open_failures.iter_mut().rev().find(|f| &f.2 == test)
                            && open.3.message.is_empty()
                        {
                            open.3.message = p.diag.message.clone();
                        }
                    } else {
                        p.diag.context.push(shorten(line, MAX_CONTEXT_CHARS));
                    }
                }
                return;
            }
        }
        let waiting = self.pending.take();
        let before = self.out.len();
        let recognised = self.dispatch(line);
        if let Some(mut p) = waiting {
            if recognised || self.pending.is_some() || !may_be_source(&p, line) {
                self.out.insert(before, Event::Diagnostic(p.diag));
            } else {
                p.tentative.push(shorten(line, MAX_CONTEXT_CHARS));
                self.pending = Some(p);
            }
        }
    }

    fn close_pending(&mut self) {
        if let Some(p) = self.pending.take() {
            self.out.push(Event::Diagnostic(p.diag));
        }
    }

    /// A crash belongs to the XCTest case running when it happened.
    fn attribute(&self, mut diag: Diagnostic) -> Diagnostic {
        if diag.kind == Some(Kind::Crash) && diag.test.is_none() {
            diag.test.clone_from(&self.running);
        }
        diag
    }

    fn emit(&mut self, diag: Diagnostic) {
        let diag = self.attribute(diag);
        self.out.push(Event::Diagnostic(diag));
    }

    fn hold(&mut self, diag: Diagnostic, mode: Mode) {
        let diag = self.attribute(diag);
        self.close_pending();
        self.pending = Some(Pending {
            diag,
            mode,
            tentative: Vec::new(),
        });
    }

    /// Handles a line that is not context; returns whether it was recognised.
    fn dispatch(&mut self, line: &str) -> bool {
        if let Some(block) = &mut self.linker {
            match block.line(line) {
                Step::Taken => return true,
                Step::Closed { empty_summary } => {
                    self.flush_linker();
                    if let Some(summary) = empty_summary {
                        self.emit(located(Kind::Linker, Level::Error, "ld", 0, 0, &summary));
                    }
                    return true;
                }
                Step::NotMine => self.flush_linker(),
            }
        }
        if self.failed_list {
            let t = line.trim();
            if line.starts_with(char::is_whitespace) && !t.is_empty() {
                self.out.push(Event::FailedCommand {
                    command: t.to_string(),
                });
                return true;
            }
            self.failed_list = false;
            if t.starts_with('(') && (t.ends_with("failures)") || t.ends_with("failure)")) {
                return true;
            }
        }
        let Some(first) = line.bytes().next() else {
            return false;
        };
        if first == b' ' || first == b'\t' {
            return self.indented(line);
        }
        if !first.is_ascii() {
            if let Some(message) = line.strip_prefix("💣 Program crashed: ") {
                let message = message.to_string();
                self.hold(crash(message), Mode::Continuation);
                return true;
            }
            return self.swift_testing_line(line);
        }
        if let Some(rest) = line.strip_prefix("** ") {
            return self.outcome(rest);
        }
        if line.starts_with("Test ") {
            return self.xctest_line(line);
        }
        if let Some(block) = LinkerBlock::start(line) {
            self.flush_linker();
            self.linker = Some(block);
            return true;
        }
        if line.starts_with("The following build commands failed:") {
            self.failed_list = true;
            return true;
        }
        if let Some(rest) = line.strip_prefix("PhaseScriptExecution ") {
            let (rest, target, project) = split_target(rest);
            self.phase = Some((
                phase_name(rest),
                target.map(str::to_string),
                project.map(str::to_string),
            ));
            self.in_phase = true;
            return true;
        }
        if COMMANDS.iter().any(|c| line.starts_with(c)) {
            self.in_phase = false;
            return true;
        }
        if let Some(rest) = line.strip_prefix("Command ")
            && let Some(command) = rest.strip_suffix(" failed with a nonzero exit code")
        {
            return self.command_failed(command, line);
        }
        if let Some(rest) = line.strip_prefix("Code Signing Error: ") {
            let d = located(Kind::CodeSigning, Level::Error, "", 0, 0, rest);
            self.emit(d);
            return true;
        }
        if let Some(rest) =
            line.strip_prefix("Restarting after unexpected exit, crash, or test timeout in ")
        {
            let test = rest.split(';').next().unwrap_or(rest).trim_end_matches('.');
            let mut d = crash(line.to_string());
            d.test = Some(test.to_string());
            self.emit(d);
            return true;
        }
        if line.starts_with("Thread ") && (line.contains(" Crashed") || line.ends_with(" crashed:"))
        {
            self.hold(
                crash(line.trim_end_matches(':').to_string()),
                Mode::Continuation,
            );
            return true;
        }
        if line.ends_with(": errSecInternalComponent") || line == "errSecInternalComponent" {
            let (file, _) = line.split_at(line.len() - "errSecInternalComponent".len());
            let file = file.trim_end_matches(": ");
            let message = "errSecInternalComponent: codesign could not use the signing identity's private key (the keychain is locked or denies codesign access)";
            self.emit(located(
                Kind::CodeSigning,
                Level::Error,
                file,
                0,
                0,
                message,
            ));
            return true;
        }
        if let Some(rest) = line.strip_prefix("Warning: unable to build chain to self-signed root")
        {
            let message = format!("unable to build chain to self-signed root{rest}");
            self.emit(located(
                Kind::CodeSigning,
                Level::Warning,
                "",
                0,
                0,
                &message,
            ));
            return true;
        }
        if line.contains(" encountered an error (") {
            let lower = line.to_ascii_lowercase();
            let kind = if ["crash", "signal", "exit"]
                .iter()
                .any(|w| lower.contains(w))
            {
                Kind::Crash
            } else {
                Kind::Build
            };
            self.emit(located(kind, Level::Error, "", 0, 0, line));
            return true;
        }
        if line.starts_with("Build complete!")
            || (line.starts_with("Build of ") && line.contains(" complete!"))
        {
            self.out.push(Event::Outcome(Outcome {
                action: "BUILD".into(),
                status: "SUCCEEDED".into(),
            }));
            return true;
        }
        // ld writes its errors without a level: `ld: library 'X' not found`.
        if let Some(rest) = line.strip_prefix("ld: ") {
            let (level, message) = match rest.strip_prefix("warning: ") {
                Some(m) => (Level::Warning, m),
                None => (Level::Error, rest.strip_prefix("error: ").unwrap_or(rest)),
            };
            self.emit(located(Kind::Linker, level, "", 0, 0, message));
            return true;
        }
        if let Some(rest) = line.strip_prefix("--- xcodebuild: WARNING: ") {
            self.emit(located(Kind::Build, Level::Warning, "", 0, 0, rest));
            return true;
        }
        self.generic(line)
    }

    fn indented(&mut self, line: &str) -> bool {
        if let Some(Xctest::Executed {
            tests,
            failures,
            unexpected,
            duration,
        }) = xctest(line)
        {
            self.out.push(Event::RunCount(RunCount {
                framework: Framework::Xctest,
                suite: std::mem::take(&mut self.last_suite),
                tests,
                failures,
                unexpected,
                passed: failures == 0,
                duration,
            }));
            return true;
        }
        false
    }

    fn outcome(&mut self, rest: &str) -> bool {
        let Some(end) = rest.find(" **") else {
            return false;
        };
        let inner = &rest[..end];
        let Some((action, status)) = inner.rsplit_once(' ') else {
            return false;
        };
        if !matches!(status, "SUCCEEDED" | "FAILED" | "INTERRUPTED") {
            return false;
        }
        self.in_phase = false;
        self.out.push(Event::Outcome(Outcome {
            action: action.to_string(),
            status: status.to_string(),
        }));
        true
    }

    fn command_failed(&mut self, command: &str, line: &str) -> bool {
        let verb = command.split(' ').next().unwrap_or(command);
        let kind = match verb {
            "PhaseScriptExecution" => Kind::ScriptPhase,
            "CodeSign" => Kind::CodeSigning,
            "Ld" => Kind::Linker,
            "CompileSwift"
            | "SwiftCompile"
            | "CompileC"
            | "SwiftEmitModule"
            | "EmitSwiftModule"
            | "SwiftDriver"
            | "CompileSwiftSources" => Kind::Compiler,
            _ => Kind::Build,
        };
        let mut d = located(kind, Level::Error, "", 0, 0, line);
        if kind == Kind::ScriptPhase
            && let Some((name, target, project)) = &self.phase
        {
            d.message = format!("{line} (Run Script phase '{name}')");
            d.target = d.target.take().or_else(|| target.clone());
            d.project = d.project.take().or_else(|| project.clone());
        }
        self.in_phase = false;
        self.emit(d);
        true
    }

    fn generic(&mut self, line: &str) -> bool {
        let Some(raw) = diagnostic(line) else {
            return false;
        };
        if raw.left.is_empty() && raw.message == "fatalError" {
            self.out.push(Event::Outcome(Outcome {
                action: "BUILD".into(),
                status: "FAILED".into(),
            }));
            return true;
        }
        // The build system's file-less notes ("note: Building targets in
        // dependency order", "note: Run script build phase …") are chatter.
        if raw.level == Level::Note && !raw.is_path {
            return true;
        }
        let message = raw.message;
        let kind = if raw.runtime_fatal
            || message.contains("signal code")
            || message.starts_with("Exited with")
        {
            Kind::Crash
        } else if raw.left == "ld" || message.starts_with("linker command failed") {
            Kind::Linker
        } else if is_signing(message) {
            Kind::CodeSigning
        } else if raw.is_path && raw.line > 0 {
            if let Some((suite, name, msg)) = xctest_failure(message) {
                let failure = TestFailure {
                    file: raw.left.into(),
                    line: raw.line,
                    column: raw.column,
                    message: msg.into(),
                };
                self.remember(Framework::Xctest, suite, name, failure);
                let mut d = located(
                    Kind::TestFailure,
                    raw.level,
                    raw.left,
                    raw.line,
                    raw.column,
                    msg,
                );
                d.test = Some(format!("{suite}.{name}"));
                self.hold(d, Mode::Continuation);
                return true;
            }
            Kind::Compiler
        } else if matches!(
            raw.left,
            "clang" | "clang++" | "swiftc" | "swift-frontend" | "swift-driver"
        ) {
            Kind::Compiler
        } else if self.in_phase && !raw.is_path {
            Kind::ScriptPhase
        } else {
            Kind::Build
        };
        let mut d = located(kind, raw.level, raw.left, raw.line, raw.column, message);
        if kind == Kind::ScriptPhase
            && let Some((name, target, project)) = &self.phase
        {
            d.message = format!("{} (Run Script phase '{name}')", d.message);
            d.target = d.target.take().or_else(|| target.clone());
            d.project = d.project.take().or_else(|| project.clone());
        }
        if kind == Kind::Crash {
            self.hold(d, Mode::Continuation);
        } else if raw.line > 0 {
            self.hold(d, Mode::Source);
        } else {
            self.emit(d);
        }
        true
    }

    fn flush_linker(&mut self) {
        if let Some(block) = self.linker.take() {
            for d in block.diagnostics() {
                self.emit(d);
            }
        }
    }

    fn remember(&mut self, framework: Framework, suite: &str, name: &str, failure: TestFailure) {
        if self.open_failures.len() >= MAX_OPEN_FAILURES {
            self.open_failures.remove(0);
        }
        self.open_failures
            .push((framework, suite.to_string(), name.to_string(), failure));
    }

    fn take_failures(&mut self, framework: Framework, suite: &str, name: &str) -> Vec<TestFailure> {
        let same_suite = |a: &str| {
            a == suite || a.ends_with(&format!(".{suite}")) || suite.ends_with(&format!(".{a}"))
        };
        let mut taken = Vec::new();
        self.open_failures.retain(|(f, s, n, failure)| {
            if *f == framework && n == name && same_suite(s) {
                taken.push(failure.clone());
                false
            } else {
                true
            }
        });
        taken
    }

    fn xctest_line(&mut self, line: &str) -> bool {
        match xctest(line) {
            Some(Xctest::CaseStarted { suite, name }) => {
                self.running = Some(format!("{suite}.{name}"));
                true
            }
            Some(Xctest::CaseDone {
                suite,
                name,
                status,
                duration,
                device,
            }) => {
                self.running = None;
                let failures = if status == TestStatus::Failed {
                    self.take_failures(Framework::Xctest, suite, name)
                } else {
                    Vec::new()
                };
                self.out.push(Event::Test(TestResult {
                    suite: suite.to_string(),
                    name: name.to_string(),
                    status,
                    duration,
                    failures,
                    device: device.map(str::to_string),
                    framework: Framework::Xctest,
                }));
                true
            }
            Some(Xctest::SuiteDone { name }) => {
                self.last_suite = name.to_string();
                true
            }
            Some(_) => true,
            None => false,
        }
    }

    fn swift_testing_line(&mut self, line: &str) -> bool {
        match swift_testing(line) {
            Some(SwiftTesting::Issue {
                name,
                file,
                line: l,
                column,
                message,
                known,
                warning,
            }) => {
                if known {
                    return true;
                }
                let level = if warning {
                    Level::Warning
                } else {
                    Level::Error
                };
                let mut d = located(Kind::TestFailure, level, file, l, column, message);
                d.test = Some(name.to_string());
                if !warning {
                    let failure = TestFailure {
                        file: file.into(),
                        line: l,
                        column,
                        message: message.into(),
                    };
                    self.remember(Framework::SwiftTesting, "", name, failure);
                }
                self.hold(d, Mode::Continuation);
                true
            }
            Some(SwiftTesting::Done {
                name,
                status,
                duration,
            }) => {
                let failures = if status == TestStatus::Failed {
                    self.take_failures(Framework::SwiftTesting, "", name)
                } else {
                    Vec::new()
                };
                self.out.push(Event::Test(TestResult {
                    suite: String::new(),
                    name: name.to_string(),
                    status,
                    duration,
                    failures,
                    device: None,
                    framework: Framework::SwiftTesting,
                }));
                true
            }
            Some(SwiftTesting::Run {
                tests,
                issues,
                passed,
                duration,
            }) => {
                self.out.push(Event::RunCount(RunCount {
                    framework: Framework::SwiftTesting,
                    suite: String::new(),
                    tests,
                    failures: issues,
                    unexpected: 0,
                    passed,
                    duration,
                }));
                true
            }
            Some(SwiftTesting::Other) => true,
            None => false,
        }
    }
}

/// Whether an unrecognised `line` may be the source line before a caret.
fn may_be_source(p: &Pending, line: &str) -> bool {
    p.mode == Mode::Source && p.tentative.len() < 2 && !line.trim().is_empty()
}

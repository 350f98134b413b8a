//! `xcresulttool` JSON into a [`Report`]. Four shapes are recognised:
//!
//! - the legacy `xcrun xcresulttool get --format json --path X.xcresult`
//!   (an `ActionsInvocationRecord`: `issues.errorSummaries`,
//!   `warningSummaries`, `analyzerWarningSummaries`, `testFailureSummaries`,
//!   `metrics`, `actions[].actionResult.status`; every value wrapped in
//!   `{"_type": …, "_value": …}` / `"_values": […]`);
//! - Xcode 16's `xcresulttool get test-results summary` (`testFailures`,
//!   `result`, `passedTests`, `failedTests`, `skippedTests`, `totalTestCount`);
//! - `xcresulttool get test-results tests` (the `testNodes` tree: `Test
//!   Case` nodes with `result`, `durationInSeconds` and `Failure Message` children);
//! - `xcresulttool get build-results` (`errors`, `warnings`,
//!   `analyzerWarnings`, `status`).
//!
//! Locations come from the document URL's fragment
//! (`…#StartingLineNumber=10&StartingColumnNumber=8…`), whose numbers are
//! 0-based: one is added.

use std::fmt;

use serde_json::Value;

use crate::event::{
    Diagnostic, Event, Framework, Kind, Level, Outcome, RunCount, TestFailure, TestResult,
    TestStatus,
};
use crate::report::{Options, Report};
use crate::scan::split_location;
use crate::testlines::split_test_id;

/// Why a JSON document could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum XcresultError {
    /// Not JSON: the parser's message (with line and column).
    Json(String),
    /// JSON, but none of the four shapes.
    Shape(String),
}

impl fmt::Display for XcresultError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XcresultError::Json(e) => write!(f, "xcresulttool output is not JSON: {e}"),
            XcresultError::Shape(keys) => write!(
                f,
                "xcresulttool output has none of the known shapes (top-level keys: {keys}); expected \
                 `xcresulttool get --format json`, `get test-results summary`, `get test-results tests` \
                 or `get build-results` output"
            ),
        }
    }
}

impl std::error::Error for XcresultError {}

/// Parses `xcresulttool` JSON.
///
/// # Errors
/// [`XcresultError::Json`] for invalid JSON, [`XcresultError::Shape`] for
/// JSON that is none of the recognised outputs.
pub fn parse_xcresult(json: &str, options: Options) -> Result<Report, XcresultError> {
    let v: Value = serde_json::from_str(json).map_err(|e| XcresultError::Json(e.to_string()))?;
    let mut events = Vec::new();
    if v.get("issues").is_some()
        || v.pointer("/_type/_name").and_then(Value::as_str) == Some("ActionsInvocationRecord")
    {
        legacy(&v, &mut events);
    } else if v.get("testNodes").is_some() {
        for node in v["testNodes"].as_array().into_iter().flatten() {
            test_nodes(node, "", &mut events);
        }
    } else if v.get("testFailures").is_some() || v.get("totalTestCount").is_some() {
        summary(&v, &mut events);
    } else if v.get("errors").is_some() || v.get("warnings").is_some() {
        build_results(&v, &mut events);
    } else {
        let keys = v
            .as_object()
            .map(|o| o.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        return Err(XcresultError::Shape(if keys.is_empty() {
            "none".into()
        } else {
            keys
        }));
    }
    let mut report = Report::new(options);
    for e in events {
        report.add(e);
    }
    Ok(report)
}

/// `{"_value": "x"}` → "x" (legacy wrapping), or a plain string.
fn text(v: &Value) -> Option<&str> {
    v.get("_value")
        .and_then(Value::as_str)
        .or_else(|| v.as_str())
}

fn values(v: &Value) -> &[Value] {
    v.get("_values")
        .and_then(Value::as_array)
        .or_else(|| v.as_array())
        .map_or(&[], Vec::as_slice)
}

fn number(v: &Value) -> u64 {
    text(v)
        .and_then(|s| s.parse().ok())
        .or_else(|| v.as_u64())
        .unwrap_or(0)
}

/// `file:///a/b.swift#StartingLineNumber=9&StartingColumnNumber=4` → (`/a/b.swift`, 10, 5).
pub fn location_of(url: &str) -> (String, u32, u32) {
    let (path, fragment) = url.split_once('#').unwrap_or((url, ""));
    let path = path.strip_prefix("file://").unwrap_or(path);
    let field = |name: &str| {
        fragment
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
            .and_then(|n| n.parse::<u32>().ok())
            .map_or(0, |n| n + 1)
    };
    (
        percent_decode(path),
        field("StartingLineNumber"),
        field("StartingColumnNumber"),
    )
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn issue(
    kind: Kind,
    level: Level,
    message: &str,
    url: Option<&str>,
    target: Option<&str>,
) -> Diagnostic {
    let (file, line, column) = url.map(location_of).unwrap_or_default();
    Diagnostic {
        kind: Some(kind),
        level: Some(level),
        file,
        line,
        column,
        message: message.to_string(),
        target: target.map(str::to_string),
        ..Diagnostic::default()
    }
}

fn kind_of(issue_type: &str, message: &str) -> Kind {
    let t = issue_type.to_ascii_lowercase();
    if t.contains("signing") || t.contains("provisioning") {
        Kind::CodeSigning
    } else if t.contains("link") || message.starts_with("Undefined symbol") {
        Kind::Linker
    } else if t.contains("compiler")
        || t.contains("swift")
        || t.contains("clang")
        || t.contains("semantic")
    {
        Kind::Compiler
    } else if t.contains("script") {
        Kind::ScriptPhase
    } else {
        Kind::Build
    }
}

fn legacy(v: &Value, events: &mut Vec<Event>) {
    let issues = &v["issues"];
    for (key, level) in [
        ("errorSummaries", Level::Error),
        ("warningSummaries", Level::Warning),
        ("analyzerWarningSummaries", Level::Warning),
    ] {
        for s in values(&issues[key]) {
            let message = text(&s["message"]).unwrap_or("");
            let kind = kind_of(text(&s["issueType"]).unwrap_or(""), message);
            let url = text(&s["documentLocationInCreatingWorkspace"]["url"]);
            events.push(Event::Diagnostic(issue(
                kind,
                level,
                message,
                url,
                text(&s["producingTarget"]),
            )));
        }
    }
    for s in values(&issues["testFailureSummaries"]) {
        let message = text(&s["message"]).unwrap_or("");
        let url = text(&s["documentLocationInCreatingWorkspace"]["url"]);
        let mut d = issue(
            Kind::TestFailure,
            Level::Error,
            message,
            url,
            text(&s["producingTarget"]),
        );
        d.test = text(&s["testCaseName"]).map(str::to_string);
        events.push(Event::Diagnostic(d));
    }
    let m = &v["metrics"];
    if m.get("testsCount").is_some() {
        let failures = number(&m["testsFailedCount"]);
        events.push(Event::RunCount(RunCount {
            framework: Framework::Xctest,
            suite: "All tests".into(),
            tests: number(&m["testsCount"]),
            failures,
            unexpected: 0,
            passed: failures == 0,
            duration: None,
        }));
    }
    for a in values(&v["actions"]) {
        let status =
            text(&a["actionResult"]["status"]).or_else(|| text(&a["buildResult"]["status"]));
        let test = a["actionResult"].get("testsRef").is_some();
        if let Some(status) = status {
            events.push(outcome(if test { "TEST" } else { "BUILD" }, status));
        }
    }
}

fn outcome(action: &str, status: &str) -> Event {
    let status = match status.to_ascii_lowercase().as_str() {
        "succeeded" | "passed" => "SUCCEEDED",
        "interrupted" | "cancelled" => "INTERRUPTED",
        _ => "FAILED",
    };
    Event::Outcome(Outcome {
        action: action.into(),
        status: status.into(),
    })
}

fn summary(v: &Value, events: &mut Vec<Event>) {
    for f in v["testFailures"].as_array().into_iter().flatten() {
        let message = f["failureText"].as_str().unwrap_or("");
        let mut d = issue(
            Kind::TestFailure,
            Level::Error,
            message,
            None,
            f["targetName"].as_str(),
        );
        d.test = f["testIdentifierString"]
            .as_str()
            .or_else(|| f["testName"].as_str())
            .map(str::to_string);
        events.push(Event::Diagnostic(d));
    }
    let failures = v["failedTests"].as_u64().unwrap_or(0);
    events.push(Event::RunCount(RunCount {
        framework: Framework::Xctest,
        suite: "All tests".into(),
        tests: v["totalTestCount"].as_u64().unwrap_or(0),
        failures,
        unexpected: 0,
        passed: failures == 0,
        duration: match (v["startTime"].as_f64(), v["finishTime"].as_f64()) {
            (Some(s), Some(e)) if e >= s => Some(e - s),
            _ => None,
        },
    }));
    if let Some(result) = v["result"].as_str() {
        events.push(outcome("TEST", result));
    }
}

fn build_results(v: &Value, events: &mut Vec<Event>) {
    for (key, level) in [
        ("errors", Level::Error),
        ("warnings", Level::Warning),
        ("analyzerWarnings", Level::Warning),
    ] {
        for s in v[key].as_array().into_iter().flatten() {
            let message = s["message"].as_str().unwrap_or("");
            let kind = kind_of(s["issueType"].as_str().unwrap_or(""), message);
            events.push(Event::Diagnostic(issue(
                kind,
                level,
                message,
                s["sourceURL"].as_str(),
                s["targetName"].as_str(),
            )));
        }
    }
    if let Some(status) = v["status"].as_str() {
        events.push(outcome("BUILD", status));
    }
}

/// Walks the `testNodes` tree; `suite` is the nearest `Test Suite` above.
fn test_nodes(node: &Value, suite: &str, events: &mut Vec<Event>) {
    let kind = node["nodeType"].as_str().unwrap_or("");
    let name = node["name"].as_str().unwrap_or("");
    let children = node["children"].as_array().map_or(&[][..], Vec::as_slice);
    if kind == "Test Case" {
        let status = match node["result"].as_str().unwrap_or("") {
            "Passed" | "Expected Failure" => TestStatus::Passed,
            "Skipped" => TestStatus::Skipped,
            _ => TestStatus::Failed,
        };
        let failures: Vec<TestFailure> = children
            .iter()
            .filter(|c| c["nodeType"].as_str() == Some("Failure Message"))
            .map(|c| failure_message(c["name"].as_str().unwrap_or("")))
            .collect();
        let (id_suite, _) = split_test_id(
            node["nodeIdentifier"]
                .as_str()
                .unwrap_or("")
                .replace('/', ".")
                .as_str(),
        )
        .to_owned_pair();
        let suite = if suite.is_empty() {
            id_suite
        } else {
            suite.to_string()
        };
        for f in &failures {
            let mut d = issue(Kind::TestFailure, Level::Error, &f.message, None, None);
            d.file = f.file.clone();
            d.line = f.line;
            d.test = Some(format!("{suite}.{name}"));
            events.push(Event::Diagnostic(d));
        }
        events.push(Event::Test(TestResult {
            suite,
            name: name.strip_suffix("()").unwrap_or(name).to_string(),
            status,
            duration: node["durationInSeconds"].as_f64(),
            failures,
            device: None,
            framework: Framework::Xctest,
        }));
        return;
    }
    let suite = if kind == "Test Suite" { name } else { suite };
    for c in children {
        test_nodes(c, suite, events);
    }
}

/// `AppTests.swift:20: XCTAssertEqual failed: …` → its location and message.
fn failure_message(text: &str) -> TestFailure {
    if let Some((loc, message)) = text.split_once(": ") {
        let (file, line, column) = split_location(loc);
        if line > 0 {
            return TestFailure {
                file: file.into(),
                line,
                column,
                message: message.into(),
            };
        }
    }
    TestFailure {
        message: text.into(),
        ..TestFailure::default()
    }
}

trait OwnedPair {
    fn to_owned_pair(self) -> (String, String);
}

impl OwnedPair for (&str, &str) {
    fn to_owned_pair(self) -> (String, String) {
        (self.0.to_string(), self.1.to_string())
    }
}

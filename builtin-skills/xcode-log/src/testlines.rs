//! XCTest and Swift Testing lines.

use crate::event::TestStatus;
use crate::scan::{seconds, split_location};

/// An XCTest line.
#[derive(Debug, Clone, PartialEq)]
pub enum Xctest<'a> {
    /// `Test Case '…' started.`
    CaseStarted {
        /// The class.
        suite: &'a str,
        /// The method.
        name: &'a str,
    },
    /// `Test Case '-[Mod.Class test]' passed (0.001 seconds).`, Linux's
    /// `Test Case 'Class.test' failed (0.001 seconds)` or parallel testing's
    /// `Test case 'Class.test()' passed on 'Clone 1 of …' (0.002 seconds)`.
    CaseDone {
        /// The class.
        suite: &'a str,
        /// The method.
        name: &'a str,
        /// How it ended.
        status: TestStatus,
        /// Seconds.
        duration: Option<f64>,
        /// The parallel clone.
        device: Option<&'a str>,
    },
    /// `Test Suite 'X' started at …` / `… started on 'Clone …'`.
    SuiteStarted,
    /// `Test Suite 'X' passed at …` / `failed at …`.
    SuiteDone {
        /// The suite.
        name: &'a str,
    },
    /// `Executed N tests, with M failures (K unexpected) in T (U) seconds`.
    Executed {
        /// N.
        tests: u64,
        /// M.
        failures: u64,
        /// K.
        unexpected: u64,
        /// T.
        duration: Option<f64>,
    },
}

/// `-[Mod.Class test]` → (`Mod.Class`, `test`); `Class.test()` → (`Class`, `test`).
pub fn split_test_id(id: &str) -> (&str, &str) {
    if let Some(inner) = id.strip_prefix("-[").and_then(|s| s.strip_suffix(']'))
        && let Some((class, method)) = inner.split_once(' ')
    {
        return (class, method);
    }
    let id = id.strip_suffix("()").unwrap_or(id);
    match id.rsplit_once('.') {
        Some((class, method)) => (class, method),
        None => ("", id),
    }
}

/// Recognises an XCTest line (leading whitespace allowed).
pub fn xctest(line: &str) -> Option<Xctest<'_>> {
    let t = line.trim_start();
    if let Some(rest) = t
        .strip_prefix("Test Case '")
        .or_else(|| t.strip_prefix("Test case '"))
    {
        let (id, rest) = rest.split_once("' ")?;
        if rest.starts_with("started") {
            let (suite, name) = split_test_id(id);
            return Some(Xctest::CaseStarted { suite, name });
        }
        let (word, rest) = rest.split_once(' ').unwrap_or((rest, ""));
        let status = match word {
            "passed" => TestStatus::Passed,
            "failed" => TestStatus::Failed,
            "skipped" => TestStatus::Skipped,
            _ => return None,
        };
        let device = rest
            .strip_prefix("on '")
            .and_then(|r| r.rfind("' (").map(|end| &r[..end]));
        let (suite, name) = split_test_id(id);
        return Some(Xctest::CaseDone {
            suite,
            name,
            status,
            duration: seconds(rest),
            device,
        });
    }
    if let Some(rest) = t
        .strip_prefix("Test Suite '")
        .or_else(|| t.strip_prefix("Test suite '"))
    {
        let (name, rest) = rest.split_once("' ")?;
        if rest.starts_with("started") {
            return Some(Xctest::SuiteStarted);
        }
        if rest.starts_with("passed") || rest.starts_with("failed") {
            return Some(Xctest::SuiteDone { name });
        }
        return None;
    }
    let rest = t.strip_prefix("Executed ")?;
    let (tests, rest) = rest.split_once(' ')?;
    let tests = tests.parse().ok()?;
    let rest = rest.split_once(", with ")?.1;
    // "with 1 test skipped and 2 failures (…)" when tests were skipped.
    let rest = rest.split_once(" skipped and ").map_or(rest, |(_, r)| r);
    let (failures, rest) = rest.split_once(' ')?;
    let failures = failures.parse().ok()?;
    let unexpected = rest
        .split_once('(')
        .and_then(|(_, r)| r.split_once(' '))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0);
    let duration = rest
        .split_once(") in ")
        .and_then(|(_, r)| r.split_once(' '))
        .and_then(|(n, _)| n.parse().ok());
    Some(Xctest::Executed {
        tests,
        failures,
        unexpected,
        duration,
    })
}

/// XCTest's failure message `-[Mod.Class test] : XCTAssert… failed: …` or
/// Linux's `Class.test : XCTAssert… failed: …` → (suite, name, message).
pub fn xctest_failure(message: &str) -> Option<(&str, &str, &str)> {
    let (id, msg) = message.split_once(" : ")?;
    if id.contains(' ') && !id.starts_with("-[") {
        return None;
    }
    if !id.starts_with("-[") && !id.contains('.') {
        return None;
    }
    let (suite, name) = split_test_id(id);
    Some((suite, name, msg))
}

/// A Swift Testing line.
#[derive(Debug, Clone, PartialEq)]
pub enum SwiftTesting<'a> {
    /// A test finished (`✔ Test x() passed after …`, `✘ … failed after …`, `➜ … skipped`).
    Done {
        /// The test's name (display names unquoted).
        name: &'a str,
        /// How it ended.
        status: TestStatus,
        /// Seconds.
        duration: Option<f64>,
    },
    /// `✘ Test x() recorded an issue at File.swift:12:5: message`.
    Issue {
        /// The test.
        name: &'a str,
        /// File as printed.
        file: &'a str,
        /// Line.
        line: u32,
        /// Column.
        column: u32,
        /// Message (may be empty: it then follows on the next lines).
        message: &'a str,
        /// `recorded a known issue` (not a failure).
        known: bool,
        /// `recorded a warning`.
        warning: bool,
    },
    /// `✘ Test run with N tests [in K suites] failed after T seconds with M issues.`
    Run {
        /// N.
        tests: u64,
        /// M.
        issues: u64,
        /// passed or failed.
        passed: bool,
        /// T.
        duration: Option<f64>,
    },
    /// Anything else with a Swift Testing symbol (`◇ Test run started.`, suites).
    Other,
}

fn unquote(name: &str) -> &str {
    name.strip_prefix('"')
        .and_then(|n| n.strip_suffix('"'))
        .unwrap_or(name)
}

fn number_after(text: &str, word: &str) -> Option<u64> {
    let i = text.find(word)?;
    let rest = &text[i + word.len()..];
    let n = rest.split(|c: char| !c.is_ascii_digit()).next()?;
    n.parse().ok()
}

/// Recognises a Swift Testing line: a non-ASCII symbol (`◇ ✔ ✘ ➜ ↳ ⚠`, or
/// the SF Symbols macOS terminals show), spaces, then `Test …` or `Suite …`.
pub fn swift_testing(line: &str) -> Option<SwiftTesting<'_>> {
    let mut chars = line.char_indices();
    let (_, symbol) = chars.next()?;
    if symbol.is_ascii() {
        return None;
    }
    let rest = line[symbol.len_utf8()..].trim_start();
    if rest.len() + symbol.len_utf8() == line.len() {
        return None;
    }
    if rest.starts_with("Suite ") {
        return Some(SwiftTesting::Other);
    }
    let rest = rest.strip_prefix("Test ")?;
    if let Some(run) = rest.strip_prefix("run with ") {
        let tests = run.split(' ').next()?.parse().ok()?;
        return Some(SwiftTesting::Run {
            tests,
            issues: number_after(run, " with ")
                .filter(|_| run.contains(" issue"))
                .unwrap_or(0),
            passed: run.contains(" passed after "),
            duration: seconds(run),
        });
    }
    if let Some(i) = rest.find(" recorded a") {
        let name = unquote(&rest[..i]);
        let tail = &rest[i..];
        let known = tail.starts_with(" recorded a known issue");
        let warning = tail.starts_with(" recorded a warning");
        let (file, line, column, message) = issue_location(tail);
        return Some(SwiftTesting::Issue {
            name,
            file,
            line,
            column,
            message,
            known,
            warning,
        });
    }
    for (word, status) in [
        (" passed after ", TestStatus::Passed),
        (" failed after ", TestStatus::Failed),
    ] {
        if let Some(i) = rest.rfind(word) {
            let duration = seconds(&rest[i..]);
            return Some(SwiftTesting::Done {
                name: unquote(&rest[..i]),
                status,
                duration,
            });
        }
    }
    if let Some(i) = rest.rfind(" skipped") {
        return Some(SwiftTesting::Done {
            name: unquote(&rest[..i]),
            status: TestStatus::Skipped,
            duration: None,
        });
    }
    Some(SwiftTesting::Other)
}

/// ` recorded an issue … at File.swift:12:5: message` → location and message;
/// ` recorded an issue: message` → no location.
fn issue_location(tail: &str) -> (&str, u32, u32, &str) {
    let mut from = 0;
    while let Some(i) = tail[from..].find(" at ") {
        let after = &tail[from + i + 4..];
        let (loc, message) = match after.find(": ") {
            Some(j) => (&after[..j], &after[j + 2..]),
            None => (after.strip_suffix(':').unwrap_or(after), ""),
        };
        let (file, line, column) = split_location(loc);
        if line > 0 && !file.contains(' ') {
            return (file, line, column, message);
        }
        from += i + 4;
    }
    let message = tail.split_once(": ").map_or("", |(_, m)| m);
    ("", 0, 0, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xctest_case_lines_in_their_three_spellings() {
        assert_eq!(
            xctest("Test Case '-[AppTests.AppTests testExample]' passed (0.001 seconds)."),
            Some(Xctest::CaseDone {
                suite: "AppTests.AppTests",
                name: "testExample",
                status: TestStatus::Passed,
                duration: Some(0.001),
                device: None
            })
        );
        assert_eq!(
            xctest("Test Case 'AppTests.testFailure' failed (0.004 seconds)"),
            Some(Xctest::CaseDone {
                suite: "AppTests",
                name: "testFailure",
                status: TestStatus::Failed,
                duration: Some(0.004),
                device: None
            })
        );
        assert_eq!(
            xctest(
                "Test case 'AppTests.testA()' passed on 'Clone 1 of iPhone 15 - App (4242)' (0.002 seconds)"
            ),
            Some(Xctest::CaseDone {
                suite: "AppTests",
                name: "testA",
                status: TestStatus::Passed,
                duration: Some(0.002),
                device: Some("Clone 1 of iPhone 15 - App (4242)")
            })
        );
        assert_eq!(
            xctest("\t Executed 12 tests, with 2 failures (1 unexpected) in 0.513 (0.520) seconds"),
            Some(Xctest::Executed {
                tests: 12,
                failures: 2,
                unexpected: 1,
                duration: Some(0.513)
            })
        );
        assert_eq!(
            xctest(
                "\t Executed 3 tests, with 1 test skipped and 1 failure (0 unexpected) in 0.014 (0.016) seconds"
            ),
            Some(Xctest::Executed {
                tests: 3,
                failures: 1,
                unexpected: 0,
                duration: Some(0.014)
            })
        );
    }

    #[test]
    fn swift_testing_lines() {
        assert_eq!(
            swift_testing(
                "✘ Test \"Two things\" recorded an issue at AlphaTests.swift:9:5: Expectation failed: 1 == 2"
            ),
            Some(SwiftTesting::Issue {
                name: "Two things",
                file: "AlphaTests.swift",
                line: 9,
                column: 5,
                message: "Expectation failed: 1 == 2",
                known: false,
                warning: false
            })
        );
        assert_eq!(
            swift_testing(
                "✘ Test run with 4 tests in 1 suite failed after 0.004 seconds with 3 issues."
            ),
            Some(SwiftTesting::Run {
                tests: 4,
                issues: 3,
                passed: false,
                duration: Some(0.004)
            })
        );
        assert_eq!(
            swift_testing("\u{101059}  Test add() passed after 0.001 seconds."),
            Some(SwiftTesting::Done {
                name: "add()",
                status: TestStatus::Passed,
                duration: Some(0.001)
            })
        );
        assert_eq!(swift_testing("✔Test x() passed after 1 seconds."), None);
        assert_eq!(swift_testing("Test x() passed after 1 seconds."), None);
    }
}

//! Test results as JUnit XML: one `<testsuite>` per XCTest class (Swift
//! Testing's tests under `Swift Testing`), `<failure>` with the location and
//! message, `<skipped/>`. Text is escaped, and characters XML 1.0 forbids
//! (control characters other than tab, newline and return) are dropped.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::event::{Framework, TestResult, TestStatus};

/// XML-escapes `text` for an attribute or element content.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => out.push(c),
        }
    }
    out
}

fn suite_of(t: &TestResult) -> &str {
    if t.framework == Framework::SwiftTesting || t.suite.is_empty() {
        "Swift Testing"
    } else {
        &t.suite
    }
}

/// The JUnit XML document for `tests` (`name` is the root's name).
pub fn junit(name: &str, tests: &[TestResult]) -> String {
    let mut suites: BTreeMap<&str, Vec<&TestResult>> = BTreeMap::new();
    for t in tests {
        suites.entry(suite_of(t)).or_default().push(t);
    }
    let count = |ts: &[&TestResult], s: TestStatus| ts.iter().filter(|t| t.status == s).count();
    let time = |ts: &[&TestResult]| ts.iter().filter_map(|t| t.duration).sum::<f64>();
    let all: Vec<&TestResult> = tests.iter().collect();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
        escape(name),
        all.len(),
        count(&all, TestStatus::Failed),
        count(&all, TestStatus::Skipped),
        time(&all)
    );
    for (suite, cases) in &suites {
        let _ = writeln!(
            xml,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3}\">",
            escape(suite),
            cases.len(),
            count(cases, TestStatus::Failed),
            count(cases, TestStatus::Skipped),
            time(cases)
        );
        for t in cases {
            let _ = write!(
                xml,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
                escape(suite),
                escape(&t.name),
                t.duration.unwrap_or(0.0)
            );
            match t.status {
                TestStatus::Passed => xml.push_str("/>\n"),
                TestStatus::Skipped => xml.push_str(">\n      <skipped/>\n    </testcase>\n"),
                TestStatus::Failed => {
                    xml.push_str(">\n");
                    if t.failures.is_empty() {
                        xml.push_str("      <failure message=\"failed\"/>\n");
                    }
                    for f in &t.failures {
                        let location = match (f.line, f.column) {
                            (0, _) => f.file.clone(),
                            (l, 0) => format!("{}:{l}", f.file),
                            (l, c) => format!("{}:{l}:{c}", f.file),
                        };
                        let _ = writeln!(
                            xml,
                            "      <failure message=\"{}\">{}: {}</failure>",
                            escape(&f.message),
                            escape(&location),
                            escape(&f.message)
                        );
                    }
                    xml.push_str("    </testcase>\n");
                }
            }
        }
        xml.push_str("  </testsuite>\n");
    }
    xml.push_str("</testsuites>\n");
    xml
}

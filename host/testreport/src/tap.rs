//! TAP lines, for an `npm test` whose script writes no JUnit file (node's
//! test runner prints TAP when its output is not a terminal).
//!
//! Only top-level test points are read (`ok N - name`, `not ok N - name`,
//! a `# SKIP` or `# TODO` directive makes it skipped); indented subtests
//! are part of their parent. No message or duration is read. Output with
//! no test point is an error: the script's reporter is not TAP, and the
//! project should write JUnit XML (docs/wiki-sections.md).

use crate::{Outcome, ParseError, TestCase};

const SOURCE: &str = "npm test output";

pub(crate) fn parse(output: &str) -> Result<Vec<TestCase>, ParseError> {
    let mut cases = Vec::new();
    for line in output.lines() {
        let (failed, rest) = if let Some(rest) = line.strip_prefix("not ok ") {
            (true, rest)
        } else if let Some(rest) = line.strip_prefix("ok ") {
            (false, rest)
        } else {
            continue;
        };
        let rest = rest
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start();
        let rest = rest.strip_prefix("- ").unwrap_or(rest);
        let (name, directive) = match rest.split_once(" # ") {
            Some((name, directive)) => (name, Some(directive.trim().to_ascii_uppercase())),
            None => (rest, None),
        };
        let skipped = directive
            .as_deref()
            .is_some_and(|d| d.starts_with("SKIP") || d.starts_with("TODO"));
        let outcome = if skipped {
            Outcome::Skipped
        } else if failed {
            Outcome::Failed
        } else {
            Outcome::Passed
        };
        cases.push(TestCase {
            name: name.trim().to_string(),
            file: None,
            outcome,
            duration_ms: None,
            message: None,
        });
    }
    if cases.is_empty() {
        return Err(ParseError::new(
            SOURCE,
            0,
            "no TAP test point (`ok N - name`): make the test script write JUnit XML \
             (node: --test-reporter=junit --test-reporter-destination=FILE)",
        ));
    }
    Ok(cases)
}

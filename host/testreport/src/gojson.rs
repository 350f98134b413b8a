//! `go test -json ./...`: one JSON event per line (`test2json`).
//!
//! A case is an event with a `Test` and an `Action` of `pass`, `fail` or
//! `skip`; its name is `Package/Test`, its duration `Elapsed`, and the
//! message of a failed or skipped case is the `output` events of that test.
//! Lines that are not JSON objects (a build failure's text when stderr is
//! merged in) are not events and are left out; a line that starts like a
//! JSON object but is not one is an error naming the line.

use std::collections::HashMap;

use serde_json::Value;

use crate::{Outcome, ParseError, TestCase};

const SOURCE: &str = "go test -json output";

pub(crate) fn parse(output: &str) -> Result<Vec<TestCase>, ParseError> {
    let mut cases = Vec::new();
    let mut outputs: HashMap<String, String> = HashMap::new();
    let mut events = 0;
    for (index, line) in output.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let event: Value = serde_json::from_str(line).map_err(|error| {
            ParseError::new(SOURCE, index + 1, format!("not a test2json event: {error}"))
        })?;
        events += 1;
        let field = |name: &str| event.get(name).and_then(Value::as_str);
        let (Some(action), Some(test)) = (field("Action"), field("Test")) else {
            continue;
        };
        let name = format!("{}/{}", field("Package").unwrap_or(""), test);
        let outcome = match action {
            "output" => {
                outputs
                    .entry(name)
                    .or_default()
                    .push_str(field("Output").unwrap_or(""));
                continue;
            }
            "pass" => Outcome::Passed,
            "fail" => Outcome::Failed,
            "skip" => Outcome::Skipped,
            _ => continue,
        };
        let message = match outcome {
            Outcome::Passed => None,
            _ => outputs.remove(&name).map(|text| clean(&text)),
        };
        cases.push(TestCase {
            name,
            file: None,
            outcome,
            duration_ms: event
                .get("Elapsed")
                .and_then(Value::as_f64)
                .map(|seconds| (seconds * 1000.0).round() as u64),
            message: message.filter(|text| !text.is_empty()),
        });
    }
    if events == 0 {
        return Err(ParseError::new(
            SOURCE,
            0,
            "no test2json events: was `go test` run with -json (and did the build succeed)?",
        ));
    }
    Ok(cases)
}

/// The test's output without go's own `=== RUN` / `--- FAIL` framing.
fn clean(text: &str) -> String {
    text.lines()
        .filter(|line| {
            let line = line.trim_start();
            !(line.starts_with("=== ") || line.starts_with("--- "))
        })
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string()
}

//! `cargo test`'s output: libtest's human lines (stable Rust has no JSON).
//!
//! Read per test binary: `running N tests` opens a block, `test NAME
//! ... ok|FAILED|ignored` is a case, `---- NAME stdout ----` opens a
//! failure's message, `test result: ...` closes the block — and its counts
//! must equal the cases read, or the output is not what this parser thinks
//! it is and an error says so.
//!
//! The file of each binary's cases comes from cargo's `Running unittests
//! src/lib.rs (...)`, `Running tests/it.rs (...)` and `Doc-tests` lines,
//! which cargo writes to stderr: the k-th of them belongs to the k-th block,
//! so stdout and stderr may be merged or simply concatenated. When their
//! number differs from the number of blocks (stderr not given), no file is
//! attributed.

use std::path::PathBuf;

use crate::{Outcome, ParseError, TestCase, Totals};

const SOURCE: &str = "cargo test output";

pub(crate) fn parse(output: &str) -> Result<Vec<TestCase>, ParseError> {
    let binaries = binaries(output);
    let mut blocks = 0;
    let mut cases: Vec<TestCase> = Vec::new();
    let mut file: Option<PathBuf> = None;
    let mut block_start: Option<usize> = None;
    let mut summaries = 0;
    let mut message: Option<(String, Vec<&str>)> = None;
    for (index, raw) in output.lines().enumerate() {
        let number = index + 1;
        let line = raw.trim_end();
        if let Some((name, lines)) = message.take() {
            if line.starts_with("---- ") || line == "failures:" || line.starts_with("test result:")
            {
                attach_message(&mut cases, block_start.unwrap_or(0), &name, &lines);
            } else {
                let mut lines = lines;
                lines.push(line);
                message = Some((name, lines));
                continue;
            }
        }
        if line.starts_with("running ") && (line.ends_with(" tests") || line.ends_with(" test")) {
            block_start = Some(cases.len());
            file = binaries
                .as_ref()
                .and_then(|files| files.get(blocks).cloned().flatten());
            blocks += 1;
        } else if let Some(rest) = line.strip_prefix("test result: ") {
            let start = block_start.take().ok_or_else(|| {
                ParseError::new(
                    SOURCE,
                    number,
                    "a `test result:` line with no `running N tests` before it",
                )
            })?;
            check_summary(rest, &cases[start..], number)?;
            summaries += 1;
        } else if let Some(rest) = line.strip_prefix("---- ") {
            if let Some(name) = rest.strip_suffix(" stdout ----") {
                message = Some((name.to_string(), Vec::new()));
            }
        } else if let Some(rest) = line.strip_prefix("test ") {
            if block_start.is_none() {
                continue;
            }
            let Some((name, result)) = rest.split_once(" ... ") else {
                continue; // a test's own output, not a result line
            };
            let outcome = match result {
                "ok" => Outcome::Passed,
                "FAILED" => Outcome::Failed,
                r if r == "ignored" || r.starts_with("ignored, ") => Outcome::Skipped,
                other => {
                    return Err(ParseError::new(
                        SOURCE,
                        number,
                        format!(
                            "test `{name}` ended with `{other}`, expected ok, FAILED or ignored"
                        ),
                    ));
                }
            };
            cases.push(TestCase {
                name: name.to_string(),
                file: file.clone(),
                outcome,
                duration_ms: None,
                message: result
                    .strip_prefix("ignored, ")
                    .map(|reason| reason.to_string()),
            });
        }
    }
    if let Some((name, lines)) = message.take() {
        attach_message(&mut cases, block_start.unwrap_or(0), &name, &lines);
    }
    if let Some(start) = block_start {
        let _ = start;
        return Err(ParseError::new(
            SOURCE,
            output.lines().count(),
            "the output ends inside a test binary's run (no `test result:` line): did the binary crash?",
        ));
    }
    if summaries == 0 {
        return Err(ParseError::new(
            SOURCE,
            0,
            "no `test result:` line: this is not libtest output (did the build fail?)",
        ));
    }
    Ok(cases)
}

/// The file of each test binary, in order (`None` for doc-tests), when
/// there are as many `Running`/`Doc-tests` lines as blocks.
fn binaries(output: &str) -> Option<Vec<Option<PathBuf>>> {
    let mut files = Vec::new();
    let mut blocks = 0;
    for line in output.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("Running ") {
            files.push(running_file(rest));
        } else if trimmed.starts_with("Doc-tests ") {
            files.push(None);
        } else if line.starts_with("running ")
            && (line.ends_with(" tests") || line.ends_with(" test"))
        {
            blocks += 1;
        }
    }
    (files.len() == blocks).then_some(files)
}

/// The file of `Running unittests src/lib.rs (target/...)` or
/// `Running tests/it.rs (target/...)`.
fn running_file(rest: &str) -> Option<PathBuf> {
    let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
    let path = rest.split(" (").next()?.trim();
    (!path.is_empty()).then(|| PathBuf::from(path))
}

fn attach_message(cases: &mut [TestCase], start: usize, name: &str, lines: &[&str]) {
    let text = lines.join("\n").trim().to_string();
    if text.is_empty() {
        return;
    }
    let start = start.min(cases.len());
    if let Some(case) = cases[start..]
        .iter_mut()
        .rev()
        .find(|case| case.name == name)
    {
        case.message = Some(text);
    }
}

/// `ok. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; ...`
fn check_summary(rest: &str, block: &[TestCase], number: usize) -> Result<(), ParseError> {
    let counts = rest
        .split_once(". ")
        .map(|(_, counts)| counts)
        .unwrap_or("");
    let mut summary = Totals::default();
    let mut seen = 0;
    for part in counts.split(';') {
        let mut words = part.split_whitespace();
        let (Some(count), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(count) = count.parse::<usize>() else {
            continue;
        };
        match what {
            "passed" => summary.passed = count,
            "failed" => summary.failed = count,
            "ignored" => summary.skipped = count,
            _ => continue,
        }
        seen += 1;
    }
    if seen != 3 {
        return Err(ParseError::new(
            SOURCE,
            number,
            format!("cannot read the counts of `test result: {rest}`"),
        ));
    }
    let read = Totals::of(block);
    if read != summary {
        return Err(ParseError::new(
            SOURCE,
            number,
            format!(
                "the summary counts {} passed, {} failed, {} ignored but {} passed, {} failed, {} ignored test lines were read",
                summary.passed,
                summary.failed,
                summary.skipped,
                read.passed,
                read.failed,
                read.skipped
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_that_disagrees_with_the_lines_is_an_error_naming_the_line() {
        let output = "running 2 tests\ntest a ... ok\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n";
        let error = parse(output).unwrap_err();
        assert_eq!(error.line, 3);
        assert!(error.message.contains("2 passed"), "{error}");
    }

    #[test]
    fn output_without_a_summary_is_not_libtest_output() {
        let error = parse("error[E0425]: cannot find value `x`\n").unwrap_err();
        assert!(
            error.to_string().contains("no `test result:` line"),
            "{error}"
        );
    }
}

//! Lines that look like diagnostics but are not, and input a parser must
//! survive: huge single lines, invalid UTF-8, CRLF, colour codes, and a log
//! far larger than what the parser may hold.

use std::io::{self, BufReader, Read};

use xcode_log::{Event, MAX_LINE, Options, Parser, parse_reader, parse_str};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn look_alikes_are_not_diagnostics() {
    // Decided (docs/apple-build-logs.md): a diagnostic starts its line.
    // Indented lines (command echoes, `set -x` output, source excerpts),
    // text before `error:` that is neither a path nor a tool name, and
    // anything quoted are not diagnostics; neither are near-misses of the
    // summary, test and linker lines.
    let r = parse_str(&fixture("lookalikes.log"), Options::default());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(r.tests.is_empty());
    assert!(r.summary.outcomes.is_empty());
    assert_eq!(r.summary.lines, 19);
}

#[test]
fn error_at_the_start_of_a_script_phase_line_is_an_error_as_xcode_shows_it() {
    let log = "PhaseScriptExecution Check /tmp/Script-1.sh (in target 'App' from project 'App')\n\
               error: Localizable.strings is missing 3 keys\n\
               CompileSwift normal arm64 /tmp/App/A.swift (in target 'App' from project 'App')\n\
               error: unable to load standard library\n";
    let r = parse_str(log, Options::default());
    let kinds: Vec<&str> = r
        .findings
        .iter()
        .map(|f| f.metadata["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["script-phase", "build"],
        "the phase ends at the next build command"
    );
    assert_eq!(r.findings[0].metadata["target"], "App");
}

#[test]
fn a_huge_single_line_is_cut_and_counted_and_the_next_line_still_parsed() {
    let mut log = Vec::new();
    log.extend_from_slice(b"/a/B.swift:1:1: error: ");
    log.extend(std::iter::repeat_n(b'x', 10 * MAX_LINE));
    log.extend_from_slice(b"\n/a/B.swift:2:1: warning: after the long line\n");
    let r = parse_reader(&log[..], Options::default()).unwrap();
    assert_eq!(r.summary.truncated_lines, 1);
    assert_eq!((r.summary.errors, r.summary.warnings), (1, 1));
    assert!(r.findings[0].description.len() <= MAX_LINE);
    assert_eq!(r.findings[1].title, "after the long line");
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let log = b"/a/Caf\xe9.swift:3:7: error: bad \xff\xfe bytes\n** BUILD FAILED **\n";
    let r = parse_reader(&log[..], Options::default()).unwrap();
    assert_eq!(r.findings[0].location.file, "/a/Caf\u{fffd}.swift");
    assert_eq!(r.findings[0].title, "bad \u{fffd}\u{fffd} bytes");
    assert_eq!(r.summary.build.as_deref(), Some("failed"));
}

#[test]
fn crlf_logs_parse_like_lf_logs() {
    let lf = fixture("xcodebuild-xctest.log");
    let crlf = lf.replace('\n', "\r\n");
    let a = parse_str(&lf, Options::default());
    let b = parse_str(&crlf, Options::default());
    assert_eq!(a.findings, b.findings);
    assert_eq!(a.tests, b.tests);
    assert_eq!(a.summary, b.summary);
}

#[test]
fn colour_codes_in_every_position_are_stripped() {
    let mut p = Parser::new();
    let mut events: Vec<Event> = p
        .push(b"\x1b[1m** \x1b[31mBUILD FAILED\x1b[0m **\x1b[0m")
        .collect();
    events.extend(p.push(b"\x1b[1;31m\xe2\x9c\x94\x1b[0m Test ok() passed after 0.001 seconds."));
    events.extend(p.finish());
    assert!(matches!(&events[0], Event::Outcome(o) if o.status == "FAILED"));
    assert!(matches!(&events[1], Event::Test(t) if t.name == "ok()"));
}

#[test]
fn events_stream_as_lines_arrive() {
    let mut p = Parser::new();
    // A diagnostic waits for its excerpt; the next unrelated line releases it.
    assert_eq!(p.push_str("/a/B.swift:1:5: error: boom").count(), 0);
    assert_eq!(p.push_str("    foo()").count(), 0);
    assert_eq!(p.push_str("        ^").count(), 0);
    let events: Vec<Event> = p
        .push_str("Test Case '-[M.C t]' passed (0.001 seconds).")
        .collect();
    assert_eq!(events.len(), 2);
    match &events[0] {
        Event::Diagnostic(d) => assert_eq!(d.context, ["    foo()", "        ^"]),
        other => panic!("{other:?}"),
    }
    assert!(p.finish().next().is_none());
}

#[test]
fn an_indented_xctest_count_after_a_swift_testing_issue_is_still_counted() {
    let log = "\u{2718} Test x() recorded an issue at A.swift:1:2: Expectation failed\n\t Executed 4 tests, with 0 failures (0 unexpected) in 0.010 (0.011) seconds\n";
    let r = parse_str(log, Options::default());
    assert_eq!(r.summary.xctest.as_ref().map(|c| c.tests), Some(4));
    assert_eq!(
        r.findings[0].evidence,
        "A.swift:1:2: error: Expectation failed"
    );
}

#[test]
fn events_iterate_over_a_reader() {
    let log = "/a/B.swift:1:5: error: boom\n** BUILD FAILED **\n/a/C.swift:2:1: warning: last";
    let events: Vec<Event> = xcode_log::Events::new(log.as_bytes())
        .map(Result::unwrap)
        .collect();
    assert_eq!(events.len(), 3);
    assert!(matches!(&events[0], Event::Diagnostic(d) if d.message == "boom"));
    assert!(matches!(&events[1], Event::Outcome(o) if o.action == "BUILD"));
    assert!(
        matches!(&events[2], Event::Diagnostic(d) if d.line == 2),
        "the last line, without newline, after finish"
    );
}

/// A reader that produces `total` bytes of a repeating build log without
/// ever holding more than one block: the parser must not hold it either.
struct Generated {
    block: Vec<u8>,
    at: usize,
    left: usize,
    n: u64,
}

impl Read for Generated {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        if self.at == self.block.len() {
            self.n += 1;
            // Every block has a new warning location: distinct findings.
            self.block = format!(
                "/src/App/File{}.swift:{}:3: warning: variable 'x' was never used\n    let x = 1\n        ^\nTest Case '-[AppTests.T test{}]' passed (0.001 seconds).\n",
                self.n % 100_000,
                self.n,
                self.n
            )
            .into_bytes();
            self.at = 0;
        }
        let n = buf.len().min(self.block.len() - self.at).min(self.left);
        buf[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        self.left -= n;
        Ok(n)
    }
}

#[test]
fn a_large_log_is_parsed_in_bounded_memory() {
    let total = 24 * 1024 * 1024;
    let reader = BufReader::new(Generated {
        block: Vec::new(),
        at: 0,
        left: total,
        n: 0,
    });
    let options = Options {
        max_findings: 1_000,
        max_tests: 1_000,
        ..Options::default()
    };
    let r = parse_reader(reader, options).unwrap();
    let blocks = r.summary.tests_passed;
    assert!(blocks > 150_000, "{blocks}");
    // Everything is counted, only the limits are kept.
    assert_eq!(r.findings.len(), 1_000);
    assert_eq!(r.tests.len(), 1_000);
    assert_eq!(r.summary.tests_dropped, blocks - 1_000);
    assert!(
        r.summary.warnings >= blocks - 1,
        "{} warnings for {blocks} blocks",
        r.summary.warnings
    );
    assert_eq!(r.summary.findings_dropped, r.summary.warnings - 1_000);
}

#[test]
fn a_reader_error_is_returned() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("disk on fire"))
        }
    }
    let err = parse_reader(BufReader::new(Failing), Options::default()).unwrap_err();
    assert_eq!(err.to_string(), "disk on fire");
}

//! `xcresulttool` JSON in its four shapes, from fixtures of their real form.

use xcode_log::xcresult::{XcresultError, location_of, parse_xcresult};
use xcode_log::{Options, Report, TestStatus};

fn parse(name: &str) -> Report {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_xcresult(&text, Options::default()).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_legacy_actions_invocation_record() {
    let r = parse("xcresult-legacy.json");
    let error = &r.findings[0];
    assert_eq!(error.rule_id, "XCODE-COMPILER-ERROR");
    assert_eq!(error.title, "Cannot find 'greting' in scope");
    assert_eq!(
        error.location.file,
        "/Users/dev/Demo/Demo/ContentView.swift"
    );
    assert_eq!(
        (error.location.start_line, error.location.start_column),
        (14, 13),
        "0-based in the URL"
    );
    let warning = &r.findings[1];
    assert_eq!(
        warning.location.file, "/Users/dev/My Demo/Demo/ContentView.swift",
        "percent-decoded"
    );
    assert_eq!(
        r.findings[2].location.file, "",
        "a warning without a document location"
    );
    let failure = &r.findings[3];
    assert_eq!(failure.rule_id, "XCODE-TEST-ERROR");
    assert_eq!(failure.metadata["test"], "DemoTests.testFormatter()");
    assert_eq!(failure.metadata["target"], "DemoTests");
    assert_eq!(failure.location.start_line, 27);
    let count = r.summary.xctest.as_ref().unwrap();
    assert_eq!((count.tests, count.failures), (3, 1));
    assert_eq!(r.summary.test.as_deref(), Some("failed"));
}

#[test]
fn xcode_16_test_results_summary() {
    let r = parse("xcresult-summary.json");
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].metadata["test"], "DemoTests/testFormatter()");
    assert!(r.findings[0].title.starts_with("XCTAssertEqual failed"));
    let count = r.summary.xctest.as_ref().unwrap();
    assert_eq!((count.tests, count.failures, count.passed), (3, 1, false));
    assert!((count.duration.unwrap() - 14.209).abs() < 1e-6);
    assert_eq!(r.summary.test.as_deref(), Some("failed"));
}

#[test]
fn xcode_16_test_results_tests_tree() {
    let r = parse("xcresult-tests.json");
    let cases: Vec<(&str, &str, TestStatus)> = r
        .tests
        .iter()
        .map(|t| (t.suite.as_str(), t.name.as_str(), t.status))
        .collect();
    assert_eq!(
        cases,
        [
            ("DemoTests", "testAddition", TestStatus::Passed),
            ("DemoTests", "testFormatter", TestStatus::Failed),
            ("DemoTests", "testSkipped", TestStatus::Skipped),
        ]
    );
    let f = &r.tests[1].failures[0];
    assert_eq!((f.file.as_str(), f.line), ("DemoTests.swift", 27));
    assert!(f.message.starts_with("XCTAssertEqual failed"));
    assert_eq!(r.tests[1].duration, Some(0.011));
    assert_eq!(r.findings[0].location.file, "DemoTests.swift");
}

#[test]
fn xcode_16_build_results() {
    let r = parse("xcresult-build.json");
    let rules: Vec<&str> = r.findings.iter().map(|f| f.rule_id.as_str()).collect();
    assert_eq!(rules, ["XCODE-COMPILER-ERROR", "XCODE-SIGNING-ERROR"]);
    assert_eq!(r.findings[0].location.start_line, 14);
    assert_eq!(r.findings[1].metadata["target"], "DemoWidget");
    assert_eq!(r.summary.build.as_deref(), Some("failed"));
}

#[test]
fn bad_json_and_unknown_shapes_say_what_was_expected() {
    let err = parse_xcresult("{\"issues\": [", Options::default()).unwrap_err();
    assert!(matches!(err, XcresultError::Json(_)));
    assert!(
        err.to_string()
            .starts_with("xcresulttool output is not JSON: "),
        "{err}"
    );
    assert!(err.to_string().contains("line 1"), "{err}");
    let err = parse_xcresult("{\"foo\": 1, \"bar\": 2}", Options::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "xcresulttool output has none of the known shapes (top-level keys: bar, foo); expected \
         `xcresulttool get --format json`, `get test-results summary`, `get test-results tests` \
         or `get build-results` output"
    );
}

#[test]
fn document_urls_give_one_based_positions() {
    assert_eq!(
        location_of(
            "file:///a/b%20c.swift#EndingLineNumber=9&StartingColumnNumber=4&StartingLineNumber=9"
        ),
        ("/a/b c.swift".to_string(), 10, 5)
    );
    assert_eq!(
        location_of("file:///a/b.swift"),
        ("/a/b.swift".to_string(), 0, 0)
    );
}

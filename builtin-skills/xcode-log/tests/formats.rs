//! Each log format, parsed from a fixture written to match what Xcode 15/16
//! and Swift 5.10/6 print (tests/data/).

use xcode_log::{Finding, Options, Report, Severity, TestStatus, parse_str};

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/data/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn parse(name: &str) -> Report {
    parse_str(&fixture(name), Options::default())
}

fn rule<'a>(r: &'a Report, rule_id: &str) -> Vec<&'a Finding> {
    r.findings.iter().filter(|f| f.rule_id == rule_id).collect()
}

#[test]
fn a_failed_xcodebuild_build_gives_compiler_linker_and_script_phase_errors_with_locations() {
    let r = parse("xcodebuild-build-failed.log");

    // Swift, in colour: the codes are gone, the location and the caret excerpt kept.
    let swift = &rule(&r, "XCODE-COMPILER-ERROR")[0];
    assert_eq!(
        swift.location.file,
        "/Users/dev/Demo/Demo/ContentView.swift"
    );
    assert_eq!(
        (swift.location.start_line, swift.location.start_column),
        (14, 13)
    );
    assert_eq!(swift.title, "cannot find 'greting' in scope");
    assert_eq!(
        swift.evidence,
        "/Users/dev/Demo/Demo/ContentView.swift:14:13: error: cannot find 'greting' in scope\n            greting\n            ^~~~~~~"
    );
    assert!(!swift.evidence.contains('\x1b'));
    assert_eq!(swift.severity, Severity::High);
    assert_eq!(swift.category, "correctness");
    assert_eq!(swift.scanner, "apple-dev/xcode-log");

    // Clang, with its source line and caret.
    let clang = &rule(&r, "XCODE-COMPILER-ERROR")[1];
    assert_eq!(clang.location.file, "/Users/dev/Demo/Demo/Legacy.m");
    assert_eq!(
        (clang.location.start_line, clang.location.start_column),
        (12, 5)
    );
    assert!(
        clang.evidence.ends_with("    undefinedThing = 3;\n    ^"),
        "{}",
        clang.evidence
    );

    let warnings = rule(&r, "XCODE-COMPILER-WARNING");
    assert_eq!(warnings.len(), 2);
    assert_eq!(warnings[0].severity, Severity::Medium);
    let notes = rule(&r, "XCODE-COMPILER-NOTE");
    assert_eq!(
        notes.len(),
        1,
        "the build system's file-less notes are not findings"
    );
    assert_eq!(notes[0].severity, Severity::Info);

    // The linker: one error per undefined symbol, its references as evidence.
    let linker = rule(&r, "XCODE-LINKER-ERROR");
    let symbols: Vec<&str> = linker
        .iter()
        .filter_map(|f| f.metadata.get("symbol").map(String::as_str))
        .collect();
    assert_eq!(
        symbols,
        [
            "_OBJC_CLASS_$_DMAnalytics",
            "Demo.Tracker.shared.unsafeMutableAddressor : Demo.Tracker"
        ]
    );
    assert_eq!(linker[0].metadata["arch"], "arm64");
    assert!(
        linker[1]
            .evidence
            .contains("Demo.ContentView.body.getter : some in ContentView.o")
    );
    assert!(linker.iter().any(|f| {
        f.title
            .starts_with("linker command failed with exit code 1")
    }));

    // The Run Script phase: the script's own `error:` and the failed command, named.
    let script = rule(&r, "XCODE-SCRIPT-PHASE-ERROR");
    assert_eq!(script.len(), 2);
    assert!(script[0].title.starts_with("SwiftLint is not installed"));
    assert!(
        script[1]
            .description
            .contains("Run Script phase 'Run SwiftLint'")
    );
    assert_eq!(script[1].metadata["target"], "Demo");
    assert_eq!(script[1].category, "misconfiguration");

    // The project-level warning keeps its file and its target.
    let project = &rule(&r, "XCODE-BUILD-WARNING")[0];
    assert_eq!(project.location.file, "/Users/dev/Demo/Demo.xcodeproj");
    assert_eq!(project.metadata["target"], "DemoKit");
    assert!(!project.title.contains("(in target"));

    assert_eq!(r.summary.build.as_deref(), Some("failed"));
    assert_eq!(r.summary.failed_commands.len(), 4);
    assert!(r.summary.failed_commands[1].starts_with("SwiftCompile normal arm64"));
    assert_eq!(
        (r.summary.errors, r.summary.warnings, r.summary.notes),
        (8, 4, 1)
    );
}

#[test]
fn code_signing_and_provisioning_errors_are_their_own_kind() {
    let r = parse("xcodebuild-signing.log");
    let signing = rule(&r, "XCODE-SIGNING-ERROR");
    let titles: Vec<&str> = signing.iter().map(|f| f.title.as_str()).collect();
    assert!(titles[0].starts_with("No profiles for 'com.example.demo' were found"));
    assert!(titles[1].starts_with("Signing for \"DemoWidget\" requires a development team"));
    assert!(titles[2].starts_with("No signing certificate \"iOS Distribution\" found"));
    assert!(titles[3].starts_with("errSecInternalComponent"));
    assert_eq!(
        titles[4],
        "Command CodeSign failed with a nonzero exit code"
    );
    assert_eq!(signing[1].metadata["target"], "DemoWidget");
    assert!(signing[0].remediation.contains("provisioning profile"));
    assert_eq!(rule(&r, "XCODE-SIGNING-WARNING").len(), 1);
    assert_eq!(r.summary.build.as_deref(), Some("failed"));
    assert_eq!(r.summary.outcomes[0].action, "ARCHIVE");
}

#[test]
fn xctest_cases_failures_skips_and_the_executed_count() {
    let r = parse("xcodebuild-xctest.log");
    let cases: Vec<(&str, &str, TestStatus)> = r
        .tests
        .iter()
        .map(|t| (t.suite.as_str(), t.name.as_str(), t.status))
        .collect();
    assert_eq!(
        cases,
        [
            ("DemoTests.DemoTests", "testAddition", TestStatus::Passed),
            ("DemoTests.DemoTests", "testFormatter", TestStatus::Failed),
            ("DemoTests.DemoTests", "testSkipped", TestStatus::Skipped),
        ]
    );
    let failed = &r.tests[1];
    assert_eq!(failed.duration, Some(0.011));
    assert_eq!(failed.failures.len(), 1);
    assert_eq!(
        failed.failures[0].file,
        "/Users/dev/Demo/DemoTests/DemoTests.swift"
    );
    assert_eq!(failed.failures[0].line, 27);
    assert!(
        failed.failures[0]
            .message
            .starts_with("XCTAssertEqual failed: (\"1,000\")")
    );

    let finding = &rule(&r, "XCODE-TEST-ERROR")[0];
    assert_eq!(finding.category, "testing");
    assert_eq!(
        finding.metadata["test"],
        "DemoTests.DemoTests.testFormatter"
    );
    assert_eq!(finding.location.start_line, 27);

    let count = r.summary.xctest.as_ref().unwrap();
    assert_eq!(
        (count.suite.as_str(), count.tests, count.failures),
        ("All tests", 3, 1)
    );
    assert_eq!(r.summary.test.as_deref(), Some("failed"));
    assert_eq!(
        (
            r.summary.tests_passed,
            r.summary.tests_failed,
            r.summary.tests_skipped
        ),
        (1, 1, 1)
    );
}

#[test]
fn parallel_testing_clones_and_a_crash_in_a_test() {
    let r = parse("xcodebuild-parallel.log");
    let formatter = r.tests.iter().find(|t| t.name == "testFormatter").unwrap();
    assert_eq!(formatter.status, TestStatus::Failed);
    assert_eq!(
        formatter.device.as_deref(),
        Some("Clone 1 of iPhone 15 - Demo (51234)")
    );
    assert_eq!(
        formatter.failures[0].line, 27,
        "the -[Class test] failure belongs to the Class.test() case"
    );
    let launch = r.tests.iter().find(|t| t.name == "testLaunch").unwrap();
    assert_eq!(
        (launch.suite.as_str(), launch.duration),
        ("DemoUITests", Some(4.213))
    );

    let crashes = rule(&r, "XCODE-CRASH-ERROR");
    assert_eq!(crashes[0].location.file, "Demo/Decoder.swift");
    assert_eq!(crashes[0].location.start_line, 44);
    assert_eq!(
        crashes[0].metadata["test"], "DemoTests.testDecode",
        "the crash is the running test's"
    );
    assert!(
        crashes[0]
            .evidence
            .contains("Fatal error: Unexpectedly found nil")
    );
    assert_eq!(crashes[1].metadata["test"], "DemoTests.testDecode()");
    assert_eq!(r.summary.crashes, 2);
    assert_eq!(
        (
            r.summary.tests_passed,
            r.summary.tests_failed,
            r.summary.tests_skipped
        ),
        (2, 2, 1)
    );
}

#[test]
fn swift_test_on_linux_with_xctest_then_swift_testing() {
    let r = parse("swift-test-linux.log");
    assert_eq!(
        r.summary.build.as_deref(),
        Some("succeeded"),
        "SwiftPM's `Build complete!`"
    );
    let grouping = &r.tests[0];
    assert_eq!(
        (grouping.suite.as_str(), grouping.name.as_str()),
        ("FormatterTests", "testGrouping")
    );
    assert_eq!(grouping.failures[0].line, 9);

    let quoted = r
        .tests
        .iter()
        .find(|t| t.name == "Parses a quoted field")
        .unwrap();
    assert_eq!(quoted.status, TestStatus::Failed);
    assert_eq!(quoted.duration, Some(0.003));
    assert_eq!(quoted.failures[0].file, "ParserTests.swift");
    assert_eq!(
        (quoted.failures[0].line, quoted.failures[0].column),
        (21, 9)
    );
    assert_eq!(
        quoted.failures[0].message,
        "Expectation failed: (fields.count → 1) == 2"
    );
    let skipped = r
        .tests
        .iter()
        .find(|t| t.name == "parsesNetwork()")
        .unwrap();
    assert_eq!(skipped.status, TestStatus::Skipped);

    let issue = rule(&r, "XCODE-TEST-ERROR")
        .into_iter()
        .find(|f| f.location.file == "ParserTests.swift")
        .unwrap();
    assert!(
        issue.evidence.contains("↳ The quote was not closed"),
        "{}",
        issue.evidence
    );

    let st = r.summary.swift_testing.as_ref().unwrap();
    assert_eq!((st.tests, st.failures, st.passed), (3, 1, false));
    assert_eq!(r.summary.xctest.as_ref().unwrap().tests, 2);
    assert_eq!(r.summary.test.as_deref(), Some("failed"));
}

#[test]
fn swift_test_with_only_xctest_is_judged_by_its_own_count() {
    let log = fixture("swift-test-linux.log");
    let xctest_only: String = log
        .lines()
        .take_while(|l| !l.starts_with('\u{25c7}'))
        .map(|l| format!("{l}\n"))
        .collect();
    let r = parse_str(&xctest_only, Options::default());
    assert!(r.summary.swift_testing.is_none());
    assert_eq!(r.summary.test.as_deref(), Some("failed"));
    let passing = xctest_only.replace("with 1 failure", "with 0 failures");
    assert_eq!(
        parse_str(&passing, Options::default())
            .summary
            .test
            .as_deref(),
        Some("succeeded")
    );
}

#[test]
fn swift_testing_with_the_sf_symbols_of_a_macos_terminal() {
    let r = parse("swift-testing-macos.log");
    let names: Vec<(&str, TestStatus)> = r
        .tests
        .iter()
        .map(|t| (t.name.as_str(), t.status))
        .collect();
    assert_eq!(
        names,
        [
            ("addition()", TestStatus::Passed),
            ("division()", TestStatus::Failed)
        ]
    );
    // The message follows the location on the next line.
    assert_eq!(
        r.tests[1].failures[0].message,
        "Expectation failed: (quotient → 3) == 4"
    );
    assert_eq!(
        r.findings[0].title,
        "Expectation failed: (quotient → 3) == 4"
    );
    assert_eq!(
        (
            r.findings[0].location.start_line,
            r.findings[0].location.start_column
        ),
        (30, 7)
    );
    assert_eq!(r.summary.swift_testing.as_ref().unwrap().tests, 2);
}

#[test]
fn swift_build_with_swift_6_numbered_excerpts_and_fatal_error() {
    let r = parse("swift-build-failed.log");
    let error = &rule(&r, "XCODE-COMPILER-ERROR")[0];
    assert_eq!(
        (error.location.start_line, error.location.start_column),
        (12, 16)
    );
    assert!(
        error
            .evidence
            .contains("12 |         return join(grouped, 3)")
    );
    assert!(error.evidence.contains("`- error: cannot convert value"));
    assert_eq!(error.evidence.lines().count(), 1 + 6, "{}", error.evidence);
    assert_eq!(rule(&r, "XCODE-COMPILER-WARNING").len(), 1);
    assert_eq!(
        rule(&r, "XCODE-BUILD-ERROR")[0].title,
        "emit-module command failed with exit code 1 (use -v to see invocation)"
    );
    assert_eq!(
        r.summary.build.as_deref(),
        Some("failed"),
        "`error: fatalError` is SwiftPM's BUILD FAILED"
    );
    assert_eq!(r.summary.errors, 2);
}

#[test]
fn a_crash_in_swift_test_keeps_its_backtrace_with_it() {
    let r = parse("swift-test-crash.log");
    let crash = &rule(&r, "XCODE-CRASH-ERROR")[0];
    assert_eq!(crash.location.file, "DemoKit/Decoder.swift");
    assert_eq!(crash.metadata["test"], "DecoderTests.testDecode");
    assert!(crash.evidence.contains("💣 Program crashed: System trap"));
    assert!(
        crash
            .evidence
            .contains("Thread 0 \"DemoKitPackageT\" crashed:")
    );
    assert!(crash.evidence.contains("closure #1 in Decoder.decode(_:)"));
    assert!(
        rule(&r, "XCODE-CRASH-ERROR")[1]
            .title
            .starts_with("Exited with unexpected signal code 4")
    );
}

#[test]
fn paths_under_the_project_root_are_made_relative() {
    let options = Options {
        project_root: Some("/Users/dev/Demo/".into()),
        ..Options::default()
    };
    let r = parse_str(&fixture("xcodebuild-build-failed.log"), options);
    assert_eq!(
        rule(&r, "XCODE-COMPILER-ERROR")[0].location.file,
        "Demo/ContentView.swift"
    );
}

#[test]
fn findings_round_trip_through_json_with_the_unified_schemas_field_names() {
    let r = parse("xcodebuild-build-failed.log");
    let json = serde_json::to_value(&r).unwrap();
    let f = &json["findings"][0];
    for key in [
        "id",
        "rule_id",
        "scanner",
        "severity",
        "category",
        "title",
        "description",
        "location",
        "evidence",
        "remediation",
        "confidence",
        "references",
        "metadata",
    ] {
        assert!(f.get(key).is_some(), "{key}");
    }
    let back: Vec<Finding> = serde_json::from_value(json["findings"].clone()).unwrap();
    assert_eq!(back, r.findings);
    assert_eq!(json["summary"]["build"], "failed");
}

#[test]
fn duplicate_symbols_missing_libraries_and_frameworks() {
    let log = "\
duplicate symbol '_kDMVersion' in:
    /Users/dev/Library/Developer/Xcode/DerivedData/Demo-abc/Build/Intermediates.noindex/Demo.build/Debug-iphoneos/Demo.build/Objects-normal/arm64/Config.o
    /Users/dev/Library/Developer/Xcode/DerivedData/Demo-abc/Build/Intermediates.noindex/Demo.build/Debug-iphoneos/Demo.build/Objects-normal/arm64/Legacy.o
ld: 1 duplicate symbols
ld: library 'Pods-Demo' not found
ld: warning: search path '/Users/dev/Demo/Frameworks' not found
ld: framework 'GoogleMaps' not found
clang: error: linker command failed with exit code 1 (use -v to see invocation)
";
    let r = parse_str(log, Options::default());
    let titles: Vec<(&str, &str)> = r
        .findings
        .iter()
        .map(|f| (f.rule_id.as_str(), f.title.as_str()))
        .collect();
    assert_eq!(
        titles,
        [
            ("XCODE-LINKER-ERROR", "Duplicate symbol '_kDMVersion'"),
            ("XCODE-LINKER-ERROR", "library 'Pods-Demo' not found"),
            (
                "XCODE-LINKER-WARNING",
                "search path '/Users/dev/Demo/Frameworks' not found"
            ),
            ("XCODE-LINKER-ERROR", "framework 'GoogleMaps' not found"),
            (
                "XCODE-LINKER-ERROR",
                "linker command failed with exit code 1 (use -v to see invocation)"
            ),
        ]
    );
    assert!(
        r.findings[0]
            .evidence
            .contains("Objects-normal/arm64/Legacy.o")
    );
    assert_eq!(r.findings[0].metadata["symbol"], "_kDMVersion");
}

#[test]
fn a_diagnostic_xcode_prints_twice_is_one_finding() {
    let line = "/src/A.swift:3:7: warning: 'foo()' is deprecated\n";
    let r = parse_str(
        &format!("{line}{line}** BUILD SUCCEEDED ** [4.210 sec]\n"),
        Options::default(),
    );
    assert_eq!(r.findings.len(), 1);
    assert_eq!((r.summary.warnings, r.summary.duplicates), (1, 1));
    assert_eq!(r.summary.build.as_deref(), Some("succeeded"));
}

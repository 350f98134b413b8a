//! Real runners on real projects: each test writes a small project with a
//! passing, a failing and a skipped test into a temporary directory, checks
//! that `detect` finds its runner, runs the runner's program with the
//! runner's arguments (as the wiki's test stage does through the exec
//! import), and parses the real output.
//!
//! The programs must be installed (test.sh installs pytest into
//! target/pyenv; cargo, go and node/npm come with the toolchain and
//! test.sh): a missing program fails the test, it never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_testreport::{
    Outcome, RunnerKind, TestReport, TestRun, detect, gaps, parse, render_markdown,
};

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The workspace's target/pyenv/bin, where test.sh installs pytest.
fn pyenv_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/pyenv/bin")
}

/// Runs the detected runner of `kind` in `root` (stderr appended to stdout:
/// the exec tool returns both) and parses its output and JUnit file.
fn run(root: &Path, kind: RunnerKind) -> TestRun {
    let runners = detect(root);
    let runner = runners
        .iter()
        .find(|runner| runner.kind() == kind)
        .unwrap_or_else(|| panic!("detect found no {} runner: {runners:?}", kind.name()));
    assert_eq!(
        runner.permission(),
        format!("shell:exec:{}", runner.program())
    );
    let path = format!(
        "{}:{}",
        pyenv_bin().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new(runner.program())
        .args(runner.args())
        .current_dir(root)
        .env("PATH", path)
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env("GOTOOLCHAIN", "local")
        .env("GOFLAGS", "-mod=mod")
        .output()
        .unwrap_or_else(|error| {
            panic!(
                "cannot run `{}` ({error}): install it (./test.sh installs pytest into target/pyenv)",
                runner.program()
            )
        });
    assert!(
        !output.status.success(),
        "each project has a failing test, so `{}` must fail",
        runner.program()
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let junit = runner.junit_file().map(|file| {
        std::fs::read_to_string(root.join(file)).unwrap_or_else(|error| {
            panic!(
                "{} wrote no {}: {error}\n{text}",
                runner.program(),
                file.display()
            )
        })
    });
    parse(kind, &text, junit.as_deref())
        .unwrap_or_else(|error| panic!("parsing {}'s output: {error}\n{text}", kind.name()))
}

fn outcome(run: &TestRun, suffix: &str) -> Outcome {
    run.cases
        .iter()
        .find(|case| case.name.ends_with(suffix))
        .unwrap_or_else(|| panic!("no case named *{suffix}: {:#?}", run.cases))
        .outcome
}

fn message(run: &TestRun, suffix: &str) -> String {
    run.cases
        .iter()
        .find(|case| case.name.ends_with(suffix))
        .and_then(|case| case.message.clone())
        .unwrap_or_else(|| panic!("no message for *{suffix}: {:#?}", run.cases))
}

#[test]
fn cargo_test_output_is_read_per_test_binary_with_the_failure_message() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    );
    write(
        root,
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 { a + b }\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() { assert_eq!(add(2, 2), 4); }\n    #[test]\n    fn adds_wrong() { assert_eq!(add(2, 2), 5, \"two and two\"); }\n    #[test]\n    #[ignore = \"slow\"]\n    fn slow() {}\n}\n",
    );
    write(
        root,
        "tests/api.rs",
        "#[test]\nfn public_api() { assert_eq!(calc::add(1, 1), 2); }\n",
    );

    let run = run(root, RunnerKind::Cargo);

    assert_eq!(
        (run.totals.passed, run.totals.failed, run.totals.skipped),
        (2, 1, 1),
        "{:#?}",
        run.cases
    );
    assert_eq!(outcome(&run, "tests::adds"), Outcome::Passed);
    assert_eq!(outcome(&run, "tests::adds_wrong"), Outcome::Failed);
    assert_eq!(outcome(&run, "tests::slow"), Outcome::Skipped);
    assert!(message(&run, "tests::adds_wrong").contains("two and two"));
    assert_eq!(message(&run, "tests::slow"), "slow");
    let file = |name: &str| {
        run.cases
            .iter()
            .find(|c| c.name == name)
            .unwrap()
            .file
            .clone()
    };
    assert_eq!(file("tests::adds"), Some(PathBuf::from("src/lib.rs")));
    assert_eq!(file("public_api"), Some(PathBuf::from("tests/api.rs")));

    let report = TestReport { runs: vec![run] };
    let modules = vec![
        ("calc".to_string(), PathBuf::from("src")),
        ("cli".to_string(), PathBuf::from("cli")),
    ];
    let missing = gaps(&report, &modules);
    assert_eq!(missing, vec!["cli".to_string()]);
    let page = render_markdown(&report, &missing);
    assert!(page.contains("| cargo | 2 | 1 | 1 |"), "{page}");
    assert!(
        page.contains("### `tests::adds_wrong` (src/lib.rs)"),
        "{page}"
    );
    assert!(page.contains("two and two"), "{page}");
    assert!(page.contains("- `cli`"), "{page}");
}

#[test]
fn go_test_json_is_read_with_durations_and_failure_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "go.mod", "module example.com/calc\n\ngo 1.19\n");
    write(
        root,
        "mathx/add.go",
        "package mathx\n\nfunc Add(a, b int) int { return a + b }\n",
    );
    write(
        root,
        "mathx/add_test.go",
        "package mathx\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 2) != 4 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n\nfunc TestAddWrong(t *testing.T) {\n\tif Add(2, 2) != 5 {\n\t\tt.Fatalf(\"two and two is %d\", Add(2, 2))\n\t}\n}\n\nfunc TestSlow(t *testing.T) {\n\tt.Skip(\"slow\")\n}\n",
    );
    write(
        root,
        "strs/strs.go",
        "package strs\n\nfunc Up(s string) string { return s }\n",
    );

    let run = run(root, RunnerKind::Go);

    assert_eq!(
        (run.totals.passed, run.totals.failed, run.totals.skipped),
        (1, 1, 1),
        "{:#?}",
        run.cases
    );
    assert_eq!(
        outcome(&run, "example.com/calc/mathx/TestAdd"),
        Outcome::Passed
    );
    assert_eq!(outcome(&run, "/TestAddWrong"), Outcome::Failed);
    assert_eq!(outcome(&run, "/TestSlow"), Outcome::Skipped);
    assert!(message(&run, "/TestAddWrong").contains("two and two is 4"));
    assert!(run.cases.iter().all(|case| case.duration_ms.is_some()));

    let report = TestReport { runs: vec![run] };
    let modules = vec![
        ("mathx".to_string(), PathBuf::from("mathx")),
        ("strs".to_string(), PathBuf::from("strs")),
    ];
    assert_eq!(gaps(&report, &modules), vec!["strs".to_string()]);
}

#[test]
fn pytest_junit_xml_is_read_with_the_assertion_message() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "calc/__init__.py",
        "def add(a, b):\n    return a + b\n",
    );
    write(
        root,
        "tests/test_calc.py",
        "import pytest\nfrom calc import add\n\ndef test_adds():\n    assert add(2, 2) == 4\n\ndef test_adds_wrong():\n    assert add(2, 2) == 5, 'two and two'\n\n@pytest.mark.skip(reason='slow')\ndef test_slow():\n    pass\n",
    );
    write(root, "pytest.ini", "[pytest]\npythonpath = .\n");

    let run = run(root, RunnerKind::Pytest);

    assert_eq!(
        (run.totals.passed, run.totals.failed, run.totals.skipped),
        (1, 1, 1),
        "{:#?}",
        run.cases
    );
    assert_eq!(outcome(&run, "tests.test_calc::test_adds"), Outcome::Passed);
    assert_eq!(outcome(&run, "::test_adds_wrong"), Outcome::Failed);
    assert_eq!(outcome(&run, "::test_slow"), Outcome::Skipped);
    assert!(message(&run, "::test_adds_wrong").contains("two and two"));
    assert!(message(&run, "::test_slow").contains("slow"));
}

const NODE_TESTS: &str = "const test = require('node:test');\nconst assert = require('node:assert');\n\ntest('adds', () => { assert.strictEqual(2 + 2, 4); });\ntest('adds wrong', () => { assert.strictEqual(2 + 2, 5, 'two and two'); });\ntest('slow', { skip: 'slow' }, () => {});\n";

#[test]
fn npm_test_with_node_junit_reporter_is_read_from_its_junit_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "package.json",
        r#"{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test --test-reporter=junit --test-reporter-destination=junit.xml"}}"#,
    );
    write(root, "test/calc.test.js", NODE_TESTS);

    let runner = detect(root)
        .into_iter()
        .find(|r| r.kind() == RunnerKind::Npm)
        .unwrap();
    assert_eq!(runner.junit_file(), Some(Path::new("junit.xml")));
    let run = run(root, RunnerKind::Npm);

    assert_eq!(
        (run.totals.passed, run.totals.failed, run.totals.skipped),
        (1, 1, 1),
        "{:#?}",
        run.cases
    );
    assert_eq!(outcome(&run, "adds"), Outcome::Passed);
    assert_eq!(outcome(&run, "adds wrong"), Outcome::Failed);
    assert_eq!(outcome(&run, "slow"), Outcome::Skipped);
    assert!(message(&run, "adds wrong").contains("two and two"));
}

#[test]
fn npm_test_without_junit_is_read_from_its_tap_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "package.json",
        r#"{"name": "calc", "version": "1.0.0", "scripts": {"test": "node --test --test-reporter=tap"}}"#,
    );
    write(root, "test/calc.test.js", NODE_TESTS);

    let runner = detect(root)
        .into_iter()
        .find(|r| r.kind() == RunnerKind::Npm)
        .unwrap();
    assert_eq!(runner.junit_file(), None);
    let run = run(root, RunnerKind::Npm);

    assert_eq!(
        (run.totals.passed, run.totals.failed, run.totals.skipped),
        (1, 1, 1),
        "{:#?}",
        run.cases
    );
    assert_eq!(outcome(&run, "adds wrong"), Outcome::Failed);
}

#[test]
fn detect_finds_every_runner_of_a_mixed_project_and_none_in_an_empty_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    assert!(detect(root).is_empty());
    write(root, "Cargo.toml", "[package]\nname = \"x\"\n");
    write(root, "go.mod", "module x\n");
    write(root, "tests/conftest.py", "");
    write(root, "package.json", r#"{"scripts": {"test": "jest"}}"#);
    let kinds: Vec<&str> = detect(root).iter().map(|r| r.program()).collect();
    assert_eq!(kinds, ["cargo", "go", "pytest", "npm"]);
    let pytest = detect(root)
        .into_iter()
        .find(|r| r.kind() == RunnerKind::Pytest)
        .unwrap();
    assert_eq!(
        pytest.args(),
        ["-q", "--junitxml=.agent/test-report/pytest.xml"]
    );

    // npm's placeholder script is not a test suite.
    write(
        root,
        "package.json",
        r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#,
    );
    assert!(detect(root).iter().all(|r| r.kind() != RunnerKind::Npm));
}

#[test]
fn broken_output_is_an_error_naming_the_source_and_line() {
    let error = parse(
        RunnerKind::Pytest,
        "",
        Some("<testsuites>\n<testcase name=\"a\">\n</testsuites>"),
    )
    .unwrap_err();
    assert_eq!(error.source_name, "pytest JUnit XML");
    assert!(error.line >= 2, "{error}");
    let error = parse(RunnerKind::Go, "{\"Action\":\"pass\"}\n{not json\n", None).unwrap_err();
    assert_eq!(error.line, 2, "{error}");
    assert!(
        error.to_string().starts_with("go test -json output:2: "),
        "{error}"
    );
    let error = parse(RunnerKind::Pytest, "", None).unwrap_err();
    assert!(error.message.contains("--junitxml"), "{error}");
}

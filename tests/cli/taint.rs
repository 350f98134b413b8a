//! The taint engine through the real binary: `agent security-audit` on a
//! small tree in five languages finds each flow once (the pattern rule's
//! finding on the same line is replaced), carries the flow to SARIF
//! `codeFlows` (valid against the official schema) and to JSON, and stays
//! quiet on constant `eval` and a pickle of a local file (issue 16, item 4).

use serde_json::Value;

use super::code;
use super::security::{audit, audit_json, copy_tree, fixtures, sandbox, triples, validate};

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    copy_tree(&fixtures().join("taint"), dir.path());
    dir
}

/// The results of a SARIF audit of `dir` (findings: exit 1), after the
/// report was validated against the SARIF 2.1.0 schema.
pub(super) fn sarif_results(sb: &agent_tests::Sandbox, dir: &std::path::Path) -> Vec<Value> {
    let out_dir = tempfile::tempdir().expect("tmp");
    let sarif = out_dir.path().join("report.sarif");
    let f = sarif.display().to_string();
    let out = audit(sb, dir, &["--output", "sarif", "--out", &f]);
    assert_eq!(code(&out), 1, "{:?}", agent_tests::text(&out));
    validate("sarif", &sarif);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    doc["runs"][0]["results"]
        .as_array()
        .expect("results")
        .clone()
}

/// The first result of `rule` and the locations of its code flow.
pub(super) fn thread_flow<'a>(results: &'a [Value], rule: &str) -> (&'a Value, &'a Vec<Value>) {
    let r = results
        .iter()
        .find(|r| r["ruleId"] == rule)
        .unwrap_or_else(|| panic!("no {rule} result"));
    let locations = r["codeFlows"][0]["threadFlows"][0]["locations"]
        .as_array()
        .expect("thread flow locations");
    (r, locations)
}

fn has(got: &[(String, String, u32)], rule: &str, file: &str, line: u32) -> bool {
    got.contains(&(rule.to_string(), file.to_string(), line))
}

#[test]
fn taint_flows_in_five_languages_reach_json_and_sarif_code_flows() {
    let sb = sandbox();
    let dir = tree();
    let (c, report, stderr) = audit_json(&sb, dir.path(), &[]);
    assert_eq!(c, 1, "{stderr}");
    let got = triples(&report);
    for (rule, file, line) in [
        ("PY-TAINT-SQLI", "app.py", 19),
        ("JAVA-TAINT-CMDI", "Web.java", 10),
        ("JS-TAINT-SQLI", "server.js", 6),
        ("GO-TAINT-CMDI", "main.go", 10),
        ("RUBY-TAINT-SQLI", "users_controller.rb", 3),
    ] {
        assert!(
            has(&got, rule, file, line),
            "{rule} {file}:{line} in {got:?}"
        );
    }
    // One finding per sink: the pattern rules' findings on those lines
    // were replaced, and the safe look-alikes are quiet.
    for (file, line) in [
        ("app.py", 19),
        ("server.js", 6),
        ("server.js", 7),
        ("Web.java", 12),
    ] {
        let on_line: Vec<_> = got
            .iter()
            .filter(|(_, f, l)| f == file && *l == line)
            .collect();
        assert!(on_line.len() <= 1, "{file}:{line}: {on_line:?}");
    }
    assert!(
        !got.iter().any(|(_, f, l)| f == "server.js" && *l == 7),
        "{got:?}"
    );
    assert!(
        !got.iter().any(|(_, f, l)| f == "Web.java" && *l == 12),
        "{got:?}"
    );
    // Item 4: eval of a constant and pickle.load of a local file are not findings.
    assert!(
        !got.iter()
            .any(|(_, f, l)| f == "app.py" && (*l == 25 || *l == 27)),
        "{got:?}"
    );

    // The JSON finding carries the flow: source, helper, sink.
    let sqli = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["rule_id"] == "PY-TAINT-SQLI")
        .expect("PY-TAINT-SQLI");
    assert_eq!(sqli["cwe"], "CWE-89");
    assert_eq!(sqli["scanner"], "taint");
    let lines: Vec<u64> = sqli["flow"]
        .as_array()
        .expect("flow")
        .iter()
        .map(|s| s["line"].as_u64().expect("line"))
        .collect();
    assert_eq!(lines.first(), Some(&16), "{sqli:#}");
    assert_eq!(lines.last(), Some(&19), "{sqli:#}");
    assert!(lines.contains(&11), "the helper's return: {sqli:#}");

    // SARIF: schema-valid, with codeFlows.
    let results = sarif_results(&sb, dir.path());
    let (r, locations) = thread_flow(&results, "PY-TAINT-SQLI");
    assert!(locations.len() >= 3, "{r:#}");
    let first = &locations[0];
    assert_eq!(first["kinds"][0], "source");
    assert_eq!(
        first["location"]["physicalLocation"]["region"]["startLine"],
        16
    );
    assert_eq!(
        first["location"]["physicalLocation"]["artifactLocation"]["uri"],
        "app.py"
    );
    let last = locations.last().expect("sink");
    assert_eq!(last["kinds"][0], "sink");
    assert_eq!(
        last["location"]["physicalLocation"]["region"]["snippet"]["text"],
        "cur.execute(query)"
    );
    // Every taint result has a flow.
    for r in results {
        if r["ruleId"]
            .as_str()
            .is_some_and(|id| id.contains("-TAINT-"))
        {
            assert!(r["codeFlows"].is_array(), "{r:#}");
        }
    }
}

#[test]
fn scanners_taint_runs_the_taint_engine_alone() {
    let sb = sandbox();
    let dir = tree();
    let (_, report, stderr) = audit_json(&sb, dir.path(), &["--scanners", "taint"]);
    let got = triples(&report);
    assert!(!got.is_empty(), "{stderr}");
    assert!(got.iter().all(|(r, _, _)| r.contains("-TAINT-")), "{got:?}");
}

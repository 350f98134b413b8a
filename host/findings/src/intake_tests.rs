use std::collections::BTreeMap;

use serde_json::json;

use super::*;

const APP: &str =
    "import os\n\ndef run(q):\n    cur = db.execute(\"SELECT \" + q)\n    return cur\n";

fn files() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("src/app.py".to_string(), APP.to_string());
    m.insert("README.md".to_string(), "# hi\n".to_string());
    m
}

fn intake(anchor: Anchor) -> Intake {
    let files = files();
    Intake::new(
        "code-review/model",
        anchor,
        Box::new(move |p: &str| files.get(p).cloned()),
    )
}

/// The diff added lines 3-4 of src/app.py.
fn review_anchor(context_findings: bool) -> Anchor {
    let mut diff = DiffScope::default();
    diff.files.insert("src/app.py".into());
    diff.lines.insert("src/app.py".into(), vec![(3, 4)]);
    Anchor {
        diff: Some(diff),
        context_findings,
    }
}

fn sqli(line: u32) -> Value {
    json!({
        "severity": "high",
        "category": "injection",
        "title": "SQL built by concatenation",
        "description": "q reaches the query unescaped",
        "location": {"file": "src/app.py", "start_line": line},
        "cwe": "CWE-89",
        "evidence": "db.execute(\"SELECT \" + q)",
    })
}

#[test]
fn a_good_finding_is_recorded_with_its_fields() {
    let mut i = intake(review_anchor(false));
    let a = i.submit(&sqli(4));
    assert!(a.recorded(), "{a:?}");
    assert!(a.message().starts_with("recorded as finding "));
    let f = &i.findings()[0];
    assert_eq!(f.severity, Severity::High);
    assert_eq!(f.rule_id, "injection");
    assert_eq!(f.scanner, "code-review/model");
    assert_eq!((f.location.start_line, f.location.end_line), (4, 4));
    assert_eq!(f.cwe.as_deref(), Some("CWE-89"));
    assert_eq!(f.confidence, Confidence::Medium);
    assert_eq!(f.id.len(), 16);
    assert_eq!(i.counts().accepted, 1);
}

#[test]
fn invalid_reports_are_dropped_and_counted_naming_the_field() {
    let mut i = intake(Anchor::default());
    let mut bad_sev = sqli(4);
    bad_sev["severity"] = json!("urgent");
    let a = i.submit(&bad_sev);
    assert_eq!(
        a.message(),
        "dropped: severity `urgent` is not one of critical, high, medium, low, info"
    );
    let mut no_title = sqli(4);
    no_title.as_object_mut().unwrap().remove("title");
    assert_eq!(i.submit(&no_title).message(), "dropped: `title` is missing");
    let mut no_line = sqli(4);
    no_line["location"] = json!({"file": "src/app.py"});
    assert_eq!(
        i.submit(&no_line).message(),
        "dropped: `location.start_line` is missing"
    );
    let mut cat = sqli(4);
    cat["category"] = json!("vibes");
    assert!(
        i.submit(&cat)
            .message()
            .starts_with("dropped: category `vibes` is not one of")
    );
    let mut extra = sqli(4);
    extra["colour"] = json!("red");
    assert!(
        i.submit(&extra)
            .message()
            .starts_with("dropped: unknown field `colour`")
    );
    assert!(!i.submit(&json!("a string")).recorded());
    let c = i.counts();
    assert_eq!((c.received, c.invalid, c.accepted), (6, 6, 0));
    assert!(i.findings().is_empty());
}

#[test]
fn a_finding_must_point_at_a_file_and_line_that_exist() {
    let mut i = intake(Anchor::default());
    let mut ghost = sqli(4);
    ghost["location"]["file"] = json!("src/ghost.py");
    assert_eq!(
        i.submit(&ghost).message(),
        "dropped: there is no file `src/ghost.py` in the project"
    );
    let mut outside = sqli(4);
    outside["location"]["file"] = json!("../etc/passwd");
    assert!(
        i.submit(&outside)
            .message()
            .contains("not a path inside the project")
    );
    let a = i.submit(&sqli(99));
    assert_eq!(
        a.message(),
        "dropped: `src/app.py` has 5 lines; there is no line 99"
    );
    let c = i.counts();
    assert_eq!((c.no_such_file, c.no_such_line, c.dropped()), (2, 1, 3));
}

#[test]
fn in_a_review_only_the_changed_lines_count_unless_context_is_asked_for() {
    let mut i = intake(review_anchor(false));
    let a = i.submit(&sqli(1));
    assert_eq!(
        a.message(),
        "dropped: lines 1-1 of `src/app.py` were not added or changed by this diff; report only \
         findings on the changed lines"
    );
    let mut readme = sqli(1);
    readme["location"]["file"] = json!("README.md");
    readme["evidence"] = json!("# hi");
    assert!(
        i.submit(&readme)
            .message()
            .contains("`README.md` is not changed by this diff")
    );
    assert_eq!(i.counts().off_diff, 2);

    let mut ctx = intake(review_anchor(true));
    let mut one = sqli(1);
    one["evidence"] = json!("import os");
    assert!(ctx.submit(&one).recorded());
    assert_eq!(ctx.findings()[0].metadata["context"], "true");
}

#[test]
fn a_range_overlapping_the_diff_counts_and_an_end_past_the_file_is_cut() {
    let mut i = intake(review_anchor(false));
    let mut long = sqli(4);
    long["location"]["end_line"] = json!(40);
    let a = i.submit(&long);
    assert_eq!(
        a.message().split_once(", demoted: ").unwrap().1,
        "end_line 40 is past the end of `src/app.py` (5 lines); cut to 5"
    );
    assert_eq!(i.findings()[0].location.end_line, 5);
    assert_eq!(i.counts().demoted, 1);
}

#[test]
fn evidence_not_on_the_lines_demotes_the_finding() {
    let mut i = intake(review_anchor(false));
    let mut f = sqli(3);
    f["evidence"] = json!("eval(user_input)");
    let a = i.submit(&f);
    assert!(
        a.message().contains("the evidence is not on lines 3-3"),
        "{a:?}"
    );
    assert_eq!(i.findings()[0].confidence, Confidence::Low);
    assert_eq!(i.counts().demoted, 1);
}

#[test]
fn duplicates_of_static_findings_and_earlier_reports_are_dropped() {
    let mut i = intake(review_anchor(false));
    let mut stat = Finding::new(
        "PY-SQLI-001",
        "security-base/sast",
        Severity::High,
        "injection",
        "SQL injection",
        Location {
            file: "src/app.py".into(),
            start_line: 4,
            end_line: 4,
            ..Location::default()
        },
    );
    stat.cwe = Some("CWE-89".into());
    i.known(&[stat]);
    let a = i.submit(&sqli(4));
    assert!(
        a.message()
            .starts_with("dropped: the same issue is already reported at src/app.py:4 (PY-SQLI-001 by security-base/sast"),
        "{a:?}"
    );
    let mut other = sqli(3);
    other["category"] = json!("correctness");
    other["evidence"] = json!("def run(q):");
    assert!(i.submit(&other).recorded());
    assert!(!i.submit(&other).recorded(), "reported twice");
    assert_eq!(i.counts().duplicate, 2);
    assert_eq!(
        i.counts().summary(),
        "3 reported by the model: 1 recorded, 0 demoted, 2 dropped (2 duplicate)"
    );
}

#[test]
fn reports_the_router_refused_count_as_received_and_invalid() {
    let mut i = intake(Anchor::default());
    assert!(i.submit(&sqli(4)).recorded());
    i.refused(2);
    let c = i.counts();
    assert_eq!(
        (c.received, c.invalid, c.accepted, c.dropped()),
        (3, 2, 1, 2)
    );
}

#[test]
fn related_findings_are_kept_for_the_attack_chains() {
    let mut i = intake(Anchor::default());
    let mut input = sqli(4);
    input["related"] = json!(["0123456789abcdef", "src/auth.py:12"]);
    assert!(i.submit(&input).recorded());
    assert_eq!(
        i.findings()[0].metadata["related"],
        "0123456789abcdef,src/auth.py:12"
    );
    let mut bad = sqli(3);
    bad["related"] = json!("src/auth.py:12");
    let a = i.submit(&bad);
    assert_eq!(a.message(), "dropped: `related` must be a list of strings");
}

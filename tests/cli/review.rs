//! `agent review` and `agent run --mode code-review` end to end: a real
//! two-commit git repository built here, the real binary, the built-in
//! code-review and git skills, and a scripted model server on 127.0.0.1
//! whose answers — `report_finding` calls, good and bad — arrive split into
//! small stream chunks.

use std::process::{Output, Stdio};
use std::time::Duration;

use agent_tests::model_server::{ModelServer, Recorded, Reply, Wire, tokio_rt};
use agent_tests::{Sandbox, text};
use serde_json::{Value, json};

use super::{code, git, sandbox, write};

const V1: &str = "import sqlite3


def connect(path):
    return sqlite3.connect(path)


def find_user(db, name):
    return db.execute(\"SELECT * FROM users WHERE name = ?\", (name,)).fetchone()
";

/// The second commit: lines 9-14 are new (a query built by concatenation,
/// an average that divides by zero on an empty list).
const V2: &str = "import sqlite3


def connect(path):
    return sqlite3.connect(path)


def find_user(db, name):
    query = \"SELECT * FROM users WHERE name = '\" + name + \"'\"
    return db.execute(query).fetchone()


def average(values):
    return sum(values) / len(values)
";

/// A repository with two commits: V1, then V2.
fn repository(sb: &Sandbox) {
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    write(p, "src/app.py", V1);
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "first"]);
    write(p, "src/app.py", V2);
    git(p, &["commit", "-q", "-am", "second"]);
}

fn finding(
    severity: &str,
    category: &str,
    title: &str,
    file: &str,
    line: u32,
    evidence: &str,
) -> Value {
    json!({
        "severity": severity,
        "category": category,
        "title": title,
        "description": format!("{title}: explained."),
        "location": {"file": file, "start_line": line},
        "evidence": evidence,
        "remediation": "fix it",
    })
}

/// The model's turns for the one chunk of the diff: two good findings and
/// four bad ones, each a `report_finding` call sent in 7-byte pieces.
fn script(wire: Wire) -> Vec<Reply> {
    let split = |r: Reply| r.split(7, Duration::from_millis(0));
    let mut missing = finding("low", "correctness", "no description", "src/app.py", 14, "");
    missing
        .as_object_mut()
        .expect("object")
        .remove("description");
    missing.as_object_mut().expect("object").remove("location");
    vec![
        split(wire.tool(
            "c1",
            "report_finding",
            &finding(
                "high",
                "correctness",
                "Division by zero on an empty list",
                "src/app.py",
                14,
                "return sum(values) / len(values)",
            ),
        )),
        split(wire.tool(
            "c2",
            "report_finding",
            &finding("high", "correctness", "Ghost", "src/ghost.py", 3, "x"),
        )),
        split(wire.tool(
            "c3",
            "report_finding",
            &finding(
                "medium",
                "correctness",
                "Old code",
                "src/app.py",
                4,
                "def connect(path):",
            ),
        )),
        split(wire.tool(
            "c4",
            "report_finding",
            &finding(
                "urgent",
                "correctness",
                "Bad severity",
                "src/app.py",
                14,
                "",
            ),
        )),
        split(wire.tool("c5", "report_finding", &missing)),
        split(wire.tool(
            "c6",
            "report_finding",
            &json!({
                "severity": "medium",
                "category": "error-handling",
                "title": "No row is not handled",
                "description": "fetchone() returns None for an unknown name.",
                "location": {"file": "src/app.py", "start_line": 10, "function": "find_user"},
                "evidence": "return db.execute(query).fetchone()",
            }),
        )),
        split(wire.answer("Reviewed: two problems.")),
    ]
}

fn review(sb: &Sandbox, server: &ModelServer, wire: Wire, args: &[&str]) -> Output {
    let mut all = vec![
        "review",
        "--provider",
        wire.name(),
        "--model",
        "test-model",
        "--base-url",
        server.url(),
        "--max-turns",
        "10",
    ];
    all.extend_from_slice(args);
    sb.agent_cmd(&all)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .expect("running agent")
}

fn served(wire: Wire) -> (tokio::runtime::Runtime, ModelServer) {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(script(wire)))
        .expect("server");
    (rt, server)
}

fn json_out(out: &Output) -> Value {
    let (stdout, stderr) = text(out);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}\n{stderr}"))
}

fn model_findings(report: &Value) -> Vec<(String, u64, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["scanner"] == "code-review/model")
        .map(|f| {
            (
                f["location"]["file"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                f["location"]["start_line"].as_u64().unwrap_or_default(),
                f["severity"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn first_request_text(r: &Recorded) -> String {
    r.body.to_string()
}

#[test]
fn a_two_commit_review_takes_findings_from_tool_calls_and_counts_the_bad_ones() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        let sb = sandbox();
        repository(&sb);
        let (_rt, server) = served(wire);
        let out = review(
            &sb,
            &server,
            wire,
            &[
                "--diff",
                "HEAD~1..HEAD",
                "--output",
                "json",
                "--fail-on",
                "high",
            ],
        );
        let (_, stderr) = text(&out);
        // The high finding passes the threshold: exit 1.
        assert_eq!(code(&out), 1, "{wire:?}: {stderr}");
        let report = json_out(&out);
        assert_eq!(
            model_findings(&report),
            vec![
                ("src/app.py".to_string(), 14, "high".to_string()),
                ("src/app.py".to_string(), 10, "medium".to_string()),
            ],
            "{wire:?}: {report:#}"
        );
        let r = &report["review"];
        assert_eq!(r["reported"]["received"], 6, "{r:#}");
        assert_eq!(r["reported"]["accepted"], 2, "{r:#}");
        assert_eq!(r["reported"]["no_such_file"], 1, "{r:#}");
        assert_eq!(r["reported"]["off_diff"], 1, "{r:#}");
        assert_eq!(
            r["reported"]["invalid"], 2,
            "bad severity, missing fields: {r:#}"
        );
        assert_eq!(r["added_lines"], 6, "{r:#}");
        assert_eq!(r["chunks"], 1, "{r:#}");
        assert_eq!(r["model_calls"], 7, "{r:#}");
        assert!(
            stderr.contains(
                "6 reported by the model: 2 recorded, 0 demoted, 4 dropped (2 invalid, 1 no such \
                 file, 1 off the diff)"
            ),
            "{stderr}"
        );
        assert_eq!(report["verdict"]["failed"], true);

        // What the model was sent: the review's instructions (the
        // code-review skill's prompt), the hunk with its function and the
        // imports, and read-only tools with report_finding.
        let requests = server.requests();
        assert_eq!(requests.len(), 7);
        let first = first_request_text(&requests[0]);
        assert!(
            first.contains("Report every problem with the `report_finding` tool"),
            "{first}"
        );
        assert!(first.contains("imports:"), "{first}");
        assert!(first.contains("def average(values):"), "{first}");
        assert!(first.contains("in `def find_user(db, name):`"), "{first}");
        for tool in ["report_finding", "read_file", "git_log"] {
            assert!(
                first.contains(&format!("\"{tool}\"")),
                "{tool} offered: {first}"
            );
        }
        for tool in ["write_file", "edit", "exec", "git_commit", "collect-diff"] {
            assert!(
                !first.contains(&format!("\"name\":\"{tool}\"")),
                "{tool} offered: {first}"
            );
        }
        // Each bad report's answer told the model why.
        let last = first_request_text(&requests[6]);
        assert!(
            last.contains("there is no file `src/ghost.py` in the project"),
            "{last}"
        );
        assert!(
            last.contains("were not added or changed by this diff"),
            "{last}"
        );
    }
}

#[test]
fn the_github_review_body_is_checked_field_by_field() {
    let sb = sandbox();
    repository(&sb);
    let (_rt, server) = served(Wire::Anthropic);
    let out = review(
        &sb,
        &server,
        Wire::Anthropic,
        &[
            "--diff",
            "HEAD~1..HEAD",
            "--output",
            "github-review",
            "--fail-on",
            "critical",
        ],
    );
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let v = json_out(&out);
    assert_eq!(v["event"], "COMMENT");
    let body = v["body"].as_str().expect("body");
    assert!(body.starts_with("## agent review\n"), "{body}");
    assert!(
        body.contains("6 reported by the model: 2 recorded"),
        "{body}"
    );
    let comments = v["comments"].as_array().expect("comments");
    let model: Vec<&Value> = comments
        .iter()
        .filter(|c| {
            c["body"]
                .as_str()
                .unwrap_or_default()
                .contains("code-review/model")
        })
        .collect();
    assert_eq!(model.len(), 2, "{v:#}");
    assert_eq!(model[0]["path"], "src/app.py");
    assert_eq!(model[0]["line"], 14);
    assert_eq!(model[0]["side"], "RIGHT");
    assert!(model[0].get("start_line").is_none());
    assert!(
        model[0]["body"]
            .as_str()
            .expect("body")
            .starts_with("**HIGH** (correctness, correctness): Division by zero on an empty list"),
        "{v:#}"
    );
    assert_eq!(model[1]["line"], 10);
    for c in comments {
        let keys: Vec<&str> = c
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert!(
            keys.iter()
                .all(|k| ["path", "line", "side", "body", "start_line", "start_side"].contains(k)),
            "{keys:?}"
        );
    }
}

#[test]
fn sarif_is_schema_valid_and_the_thresholds_set_the_exit_code() {
    let sb = sandbox();
    repository(&sb);
    let dir = tempfile::tempdir().expect("tmp");
    let sarif = dir.path().join("review.sarif");
    let (_rt, server) = served(Wire::Anthropic);
    let out = review(
        &sb,
        &server,
        Wire::Anthropic,
        &[
            "--diff",
            "HEAD~1..HEAD",
            "--output",
            "sarif",
            "--out",
            sarif.to_str().expect("path"),
            "--fail-on",
            "none",
        ],
    );
    assert_eq!(code(&out), 0, "--fail-on none: {:?}", text(&out));
    crate::security::validate("sarif", &sarif);
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    let results = doc["runs"][0]["results"].as_array().expect("results");
    assert!(
        results
            .iter()
            .any(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"] == 14),
        "{doc:#}"
    );

    // --max-findings 1 with two findings: exit 1, saying why.
    let (_rt2, server) = served(Wire::Anthropic);
    let out = review(
        &sb,
        &server,
        Wire::Anthropic,
        &[
            "--diff",
            "HEAD~1..HEAD",
            "--fail-on",
            "none",
            "--max-findings",
            "1",
        ],
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("more than max_findings (1)"),
        "{:?}",
        text(&out)
    );
}

#[test]
fn run_mode_code_review_is_the_same_review() {
    let sb = sandbox();
    repository(&sb);
    let (_rt, server) = served(Wire::Anthropic);
    let out = sb
        .agent_cmd(&[
            "run",
            "--mode",
            "code-review",
            "--diff",
            "HEAD~1..HEAD",
            "--output",
            "json",
            "--fail-on",
            "critical",
            "--max-turns",
            "10",
            "--provider",
            "anthropic",
            "--model",
            "test-model",
            "--base-url",
            server.url(),
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .expect("agent");
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let report = json_out(&out);
    assert_eq!(model_findings(&report).len(), 2, "{report:#}");
    assert_eq!(report["review"]["reported"]["received"], 6);

    // Without the mode (or in another mode) a review flag is refused, not ignored.
    for mode in [&[][..], &["--mode", "log-analysis"][..]] {
        let mut args = vec!["run", "--diff", "HEAD~1..HEAD", "-p", "hi"];
        args.extend_from_slice(mode);
        let out = sb.agent(&args);
        assert_eq!(code(&out), 2, "{:?}", text(&out));
        assert!(
            text(&out)
                .1
                .contains("--diff applies to a review: add `--mode code-review`"),
            "{:?}",
            text(&out)
        );
    }
}

#[test]
fn a_revision_git_does_not_know_is_a_usage_error_and_no_model_is_asked() {
    let sb = sandbox();
    repository(&sb);
    let (_rt, server) = served(Wire::Anthropic);
    let out = review(
        &sb,
        &server,
        Wire::Anthropic,
        &["--diff", "HEAD~1..nosuchrev"],
    );
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("nosuchrev"), "{:?}", text(&out));
    let out = review(&sb, &server, Wire::Anthropic, &["--diff", "HEAD"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("--diff HEAD: expected two revisions, A..B"),
        "{:?}",
        text(&out)
    );
    assert!(server.requests().is_empty());
}

#[test]
fn staged_changes_and_the_working_tree_are_reviewed_from_their_own_versions() {
    let sb = sandbox();
    repository(&sb);
    let p = sb.project.path();
    // Staged: a new function; then, unstaged on top, one more line.
    let staged = format!("{V2}\n\ndef ratio(a, b):\n    return a / b\n");
    write(p, "src/app.py", &staged);
    git(p, &["add", "src/app.py"]);
    write(p, "src/app.py", &format!("{staged}# unstaged\n"));
    for (flags, added, last_line) in [
        (vec!["--staged"], 4usize, "   18 +     return a / b"),
        (vec![], 5, "   19 + # unstaged"),
    ] {
        let rt = tokio_rt();
        let server = rt
            .block_on(ModelServer::start(vec![
                Wire::Anthropic.answer("No problems."),
            ]))
            .expect("server");
        let mut args = flags.clone();
        args.extend(["--output", "json"]);
        let out = review(&sb, &server, Wire::Anthropic, &args);
        assert_eq!(code(&out), 0, "{flags:?}: {:?}", text(&out));
        let report = json_out(&out);
        assert_eq!(
            report["review"]["added_lines"], added,
            "{flags:?}: {report:#}"
        );
        assert_eq!(report["review"]["model_calls"], 1, "{flags:?}");
        let sent = first_request_text(&server.requests()[0]);
        assert!(sent.contains(last_line), "{flags:?}: {sent}");
        assert!(
            sent.contains("in `def ratio(a, b):` (lines 17-18)"),
            "{flags:?}: {sent}"
        );
    }
}

#[test]
fn a_finding_the_static_scanners_made_is_not_reported_twice() {
    let sb = sandbox();
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    write(p, "settings.py", "REGION = \"eu-west-1\"\n");
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "first"]);
    write(
        p,
        "settings.py",
        "REGION = \"eu-west-1\"\nAWS_ACCESS_KEY_ID = \"AKIAZ7Q3V5X2B4N6M8P1\"\n",
    );
    git(p, &["commit", "-q", "-am", "second"]);
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic
                .tool(
                    "c1",
                    "report_finding",
                    &finding(
                        "high",
                        "secrets-exposure",
                        "AWS key in the source",
                        "settings.py",
                        2,
                        "AWS_ACCESS_KEY_ID = \"AKIAZ7Q3V5X2B4N6M8P1\"",
                    ),
                )
                .split(5, Duration::from_millis(0)),
            Wire::Anthropic.answer("One secret."),
        ]))
        .expect("server");
    let out = review(
        &sb,
        &server,
        Wire::Anthropic,
        &["--diff", "HEAD~1..HEAD", "--output", "json"],
    );
    assert_eq!(code(&out), 1, "a high secret: {:?}", text(&out));
    let report = json_out(&out);
    let findings = report["findings"].as_array().expect("findings");
    assert_eq!(findings.len(), 1, "{report:#}");
    assert_ne!(findings[0]["scanner"], "code-review/model", "{report:#}");
    assert_eq!(findings[0]["location"]["start_line"], 2);
    assert_eq!(report["review"]["reported"]["duplicate"], 1, "{report:#}");
    let answer = first_request_text(&server.requests()[1]);
    assert!(
        answer.contains("dropped: the same issue is already reported at settings.py:2"),
        "{answer}"
    );
}

#[test]
fn a_provider_that_refuses_is_exit_3_after_the_diff_was_read() {
    let sb = sandbox();
    repository(&sb);
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![Reply::error(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "model not found"}}),
        )]))
        .expect("server");
    let out = review(&sb, &server, Wire::Anthropic, &["--diff", "HEAD~1..HEAD"]);
    assert_eq!(code(&out), 3, "{:?}", text(&out));
    let (stdout, stderr) = text(&out);
    assert!(
        stdout.is_empty(),
        "no report without the model's review: {stdout}"
    );
    assert!(
        stderr.contains("the model failed on chunk 1 of 1"),
        "{stderr}"
    );
    assert!(stderr.contains("model not found"), "{stderr}");
}

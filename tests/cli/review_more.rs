//! More of `agent review` end to end (issue 17's smaller gaps): chunks
//! reviewed in parallel (`--jobs`), demoted findings counted, `--base
//! BRANCH`, the Ollama wire, every review format through `agent run --mode
//! code-review`, and `--since`/`--until` for `agent run --mode
//! log-analysis`. Real git repositories, the real binary, a scripted model
//! server on 127.0.0.1.

use std::process::{Output, Stdio};
use std::time::Duration;

use agent_tests::model_server::{ModelServer, Reply, Wire, tokio_rt};
use agent_tests::{Sandbox, text};
use serde_json::{Value, json};

use super::{code, git, sandbox, write};

const V1: &str = "def total(values):\n    return sum(values)\n";
/// Lines 5-6 are new.
const V2: &str = "def total(values):\n    return sum(values)\n\n\ndef average(values):\n    return total(values) / len(values)\n";

/// `main` with V1 of src/stats.py, then V2 committed on top.
fn repository(sb: &Sandbox) {
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    write(p, "src/stats.py", V1);
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "first"]);
    write(p, "src/stats.py", V2);
    git(p, &["commit", "-q", "-am", "second"]);
}

fn agent(sb: &Sandbox, server: &ModelServer, wire: Wire, args: &[&str]) -> Output {
    agent_env(sb, server, wire, args, &[])
}

fn agent_env(
    sb: &Sandbox,
    server: &ModelServer,
    wire: Wire,
    args: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let mut all = vec![
        args[0],
        "--provider",
        wire.name(),
        "--model",
        "test-model",
        "--base-url",
        server.url(),
        "--max-turns",
        "6",
    ];
    all.extend_from_slice(&args[1..]);
    sb.agent_cmd(&all)
        .envs(env.iter().copied())
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .expect("agent")
}

fn served(replies: Vec<Reply>) -> (tokio::runtime::Runtime, ModelServer) {
    let rt = tokio_rt();
    let server = rt.block_on(ModelServer::start(replies)).expect("server");
    (rt, server)
}

fn json_of(out: &Output) -> Value {
    let (stdout, stderr) = text(out);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}\n{stderr}"))
}

fn finding(line: u64, end: Option<u64>, evidence: &str) -> Value {
    let mut location = json!({"file": "src/stats.py", "start_line": line});
    if let Some(end) = end {
        location["end_line"] = json!(end);
    }
    json!({
        "severity": "medium",
        "category": "correctness",
        "title": "Division by zero on an empty list",
        "description": "average([]) raises ZeroDivisionError.",
        "location": location,
        "evidence": evidence,
    })
}

#[test]
fn chunks_are_reviewed_in_parallel_up_to_jobs_and_one_after_another_with_jobs_1() {
    // Three files: with the smallest chunk budget (4,000 characters) the
    // diff is at least three chunks.
    let sb = sandbox();
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    write(p, "README.md", "x\n");
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "first"]);
    for f in ["a", "b", "c"] {
        let body: String = (0..45)
            .map(|i| format!("def {f}_{i:03}(x):\n    return x + {i}\n"))
            .collect();
        write(p, &format!("src/{f}.py"), &body);
    }
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "three files"]);

    // Each answer trickles in over more than a second.
    let slow = || {
        Wire::Anthropic
            .answer("No problems.")
            .split(32, Duration::from_millis(60))
    };
    for (jobs, parallel) in [("3", true), ("1", false)] {
        let (_rt, server) = served((0..12).map(|_| slow()).collect());
        let out = agent_env(
            &sb,
            &server,
            Wire::Anthropic,
            &[
                "review",
                "--diff",
                "HEAD~1..HEAD",
                "--output",
                "json",
                "--jobs",
                jobs,
            ],
            &[("AGENT_CONTEXT_BUDGET", "1000")],
        );
        assert_eq!(code(&out), 0, "--jobs {jobs}: {:?}", text(&out));
        let report = json_of(&out);
        let chunks = report["review"]["chunks"].as_u64().expect("chunks");
        assert!(chunks >= 3, "{report:#}");
        assert_eq!(report["review"]["model_calls"], chunks, "{report:#}");
        let at: Vec<_> = server.requests().iter().map(|r| r.at).collect();
        assert_eq!(at.len() as u64, chunks);
        if parallel {
            // The first three asked before the first answer was complete.
            let spread = at[2].duration_since(at[0]);
            assert!(spread < Duration::from_millis(1000), "--jobs 3: {spread:?}");
        } else {
            // Each asked only after the answer before it had arrived.
            for w in at.windows(2).take(2) {
                let gap = w[1].duration_since(w[0]);
                assert!(gap > Duration::from_millis(1000), "--jobs 1: {gap:?}");
            }
        }
    }
    // --jobs 0 is a usage error, and --jobs belongs to a review.
    let out = sb.agent(&["review", "--jobs", "0"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--jobs must be at least 1"),
        "{:?}",
        text(&out)
    );
    let out = sb.agent(&["run", "-p", "hi", "--jobs", "2"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--jobs applies to a review"),
        "{:?}",
        text(&out)
    );
}

#[test]
fn demoted_findings_are_kept_weakened_and_counted_through_the_binary() {
    let sb = sandbox();
    repository(&sb);
    // One finding whose end_line runs past the file's 6 lines (cut to 6),
    // one whose evidence is not on its line (confidence lowered), one good.
    let (_rt, server) = served(vec![
        Wire::Anthropic
            .tool(
                "d1",
                "report_finding",
                &finding(6, Some(40), "return total(values) / len(values)"),
            )
            .split(7, Duration::ZERO),
        Wire::Anthropic
            .tool(
                "d2",
                "report_finding",
                &json!({
                    "severity": "low",
                    "category": "maintainability",
                    "title": "No docstring",
                    "description": "average has no docstring.",
                    "location": {"file": "src/stats.py", "start_line": 5},
                    "evidence": "this text is not on line 5",
                }),
            )
            .split(7, Duration::ZERO),
        Wire::Anthropic.answer("Reviewed."),
    ]);
    let out = agent(
        &sb,
        &server,
        Wire::Anthropic,
        &[
            "review",
            "--diff",
            "HEAD~1..HEAD",
            "--output",
            "json",
            "--fail-on",
            "none",
        ],
    );
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stderr}");
    let report = json_of(&out);
    let reported = &report["review"]["reported"];
    assert_eq!(reported["received"], 2, "{reported:#}");
    assert_eq!(reported["demoted"], 2, "{reported:#}");
    assert!(
        stderr.contains("2 reported by the model: 0 recorded, 2 demoted, 0 dropped"),
        "{stderr}"
    );
    let model: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["scanner"] == "code-review/model")
        .collect();
    assert_eq!(model.len(), 2, "{report:#}");
    let cut = model
        .iter()
        .find(|f| f["location"]["start_line"] == 6)
        .expect("the division finding");
    assert_eq!(cut["location"]["end_line"], 6, "{cut:#}");
    let weak = model
        .iter()
        .find(|f| f["location"]["start_line"] == 5)
        .expect("the docstring finding");
    assert_eq!(weak["confidence"], "low", "{weak:#}");
    // The model was told each was demoted, and why.
    let last = server.requests()[2].body.to_string();
    assert!(last.contains("demoted"), "{last}");
}

#[test]
fn base_branch_reviews_only_the_branch_own_changes_over_the_ollama_wire() {
    let sb = sandbox();
    let p = sb.project.path();
    repository(&sb);
    // `feature` leaves main at its second commit and changes another file;
    // main moves on with a change of its own that --base must not review.
    git(p, &["checkout", "-q", "-b", "feature"]);
    write(
        p,
        "src/flags.py",
        "DEBUG = True\n\n\ndef debug():\n    return DEBUG\n",
    );
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "feature"]);
    git(p, &["checkout", "-q", "main"]);
    write(p, "src/late.py", "LATE = 1\n");
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "main moves on"]);
    git(p, &["checkout", "-q", "feature"]);

    let report = |line: u64, file: &str| {
        json!({
            "severity": "high",
            "category": "misconfiguration",
            "title": "Debug left on",
            "description": "DEBUG is True in committed code.",
            "location": {"file": file, "start_line": line},
            "evidence": "DEBUG = True",
        })
    };
    let (_rt, server) = served(vec![
        Wire::Ollama
            .tool("o1", "report_finding", &report(1, "src/flags.py"))
            .split(5, Duration::ZERO),
        Wire::Ollama
            .tool("o2", "report_finding", &report(1, "src/late.py"))
            .split(5, Duration::ZERO),
        Wire::Ollama.answer("Reviewed.").split(5, Duration::ZERO),
    ]);
    let out = agent(
        &sb,
        &server,
        Wire::Ollama,
        &[
            "review",
            "--base",
            "main",
            "--output",
            "json",
            "--fail-on",
            "high",
        ],
    );
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "the high finding fails the review: {stderr}");
    let r = json_of(&out);
    assert_eq!(r["review"]["base"], "main...", "{r:#}");
    assert_eq!(r["review"]["files"], 1, "only the branch's file: {r:#}");
    assert_eq!(r["review"]["added_lines"], 5, "{r:#}");
    // The report on main's own later file is not on this change: dropped.
    assert_eq!(r["review"]["reported"]["accepted"], 1, "{r:#}");
    assert_eq!(r["review"]["reported"]["no_such_file"], 1, "{r:#}");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/api/chat", "the Ollama wire");
    let first = requests[0].body.to_string();
    assert!(first.contains("DEBUG = True"), "{first}");
    assert!(
        !first.contains("LATE = 1"),
        "main's own change is not reviewed: {first}"
    );
}

#[test]
fn run_mode_code_review_writes_every_review_format() {
    let sb = sandbox();
    repository(&sb);
    let one = || {
        vec![
            Wire::Anthropic
                .tool(
                    "r1",
                    "report_finding",
                    &finding(6, None, "return total(values) / len(values)"),
                )
                .split(7, Duration::ZERO),
            Wire::Anthropic.answer("Reviewed."),
        ]
    };
    let review = |server: &ModelServer, output: &str| {
        agent(
            &sb,
            server,
            Wire::Anthropic,
            &[
                "run",
                "--mode",
                "code-review",
                "--diff",
                "HEAD~1..HEAD",
                "--output",
                output,
                "--fail-on",
                "medium",
            ],
        )
    };
    let (_rt, server) = served(one());
    let out = review(&server, "github-review");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let body = json_of(&out);
    assert_eq!(body["event"], "REQUEST_CHANGES", "{body:#}");
    assert_eq!(body["comments"][0]["path"], "src/stats.py", "{body:#}");
    assert_eq!(body["comments"][0]["line"], 6, "{body:#}");
    assert_eq!(body["comments"][0]["side"], "RIGHT", "{body:#}");

    let (_rt, server) = served(one());
    let out = review(&server, "sarif");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let dir = tempfile::tempdir().expect("tmp");
    let sarif = dir.path().join("run.sarif");
    std::fs::write(&sarif, &out.stdout).expect("write");
    crate::security::validate("sarif", &sarif);

    let (_rt, server) = served(one());
    let out = review(&server, "github");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains("::warning file=src/stats.py,line=6")
            || stdout.contains("file=src/stats.py,line=6"),
        "{stdout}"
    );

    // A plain run refuses a review's format instead of ignoring it.
    let out = sb.agent(&["run", "-p", "hi", "--output", "sarif"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("--output sarif is a review's report: add `--mode code-review`"),
        "{:?}",
        text(&out)
    );
}

#[test]
fn run_mode_log_analysis_takes_since_and_until_as_agent_logs_does() {
    let log = "\
2026-01-01T10:00:00Z ERROR disk quota exceeded on volume data
2026-01-01T12:00:00Z ERROR connection refused by upstream payments
2026-01-01T12:00:01Z INFO retrying
2026-01-01T15:00:00Z ERROR certificate expired for mail relay
";
    let (_rt, server) = served(vec![
        Wire::Anthropic.tool(
            "i1",
            "report_incident",
            &json!({"summary": "upstream refused", "severity": "high", "timeline": [],
                    "root_causes": [{"hypothesis": "payments down", "confidence": "high",
                                     "evidence": [{"line": 2}]}],
                    "actions": ["check payments"]}),
        ),
        Wire::Anthropic.answer("Reported."),
    ]);
    let sb = sandbox();
    let mut child = sb
        .agent_cmd(&[
            "run",
            "--mode",
            "log-analysis",
            "--since",
            "2026-01-01T11:00:00Z",
            "--until",
            "2026-01-01T13:00:00Z",
            "--provider",
            "anthropic",
            "--model",
            "m",
            "--base-url",
            server.url(),
        ])
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agent");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(log.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("agent");
    assert_eq!(code(&out), 0, "{:?}", text(&out));
    let sent = server.requests()[0].body.to_string();
    assert!(sent.contains("connection refused by upstream"), "{sent}");
    assert!(
        !sent.contains("disk quota exceeded"),
        "before --since: {sent}"
    );
    assert!(
        !sent.contains("certificate expired"),
        "after --until: {sent}"
    );

    // Outside log analysis they are refused, not ignored.
    let out = sb.agent(&["run", "-p", "hi", "--since", "2h"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("--since applies to log analysis: add `--mode log-analysis`"),
        "{:?}",
        text(&out)
    );
    let out = sb.agent(&["run", "--mode", "code-review", "--until", "2h"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--until applies to log analysis"),
        "{:?}",
        text(&out)
    );
}

//! `agent logs` (issue 17, item 2): logs mined into templates by the real
//! binary — `--templates --output jsonl` (no model: one line per input
//! line, stack traces on their first line's template), from a file and from
//! standard input; the model's analysis through `report_incident` against
//! the loopback model server, cited lines checked; `agent run -p` with piped
//! standard input.

use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use agent_tests::text;
use serde_json::Value;

use super::sandbox;

const LOG: &str = "\
2024-01-15T10:00:00Z INFO worker 1 started in 15ms
2024-01-15T10:00:01Z INFO worker 2 started in 12ms
2024-01-15T10:00:02Z ERROR request 7f3a failed
java.lang.IllegalStateException: ledger 12 is locked
\tat com.example.Ledger.lock(Ledger.java:42)
\tat com.example.Service.pay(Service.java:7)
2024-01-15T10:00:03Z INFO worker 3 started in 9ms
2024-01-15T10:00:04Z WARN pool exhausted active=50 idle=0
";

/// Runs `agent ARGS` in `dir` with `stdin` piped in.
fn agent_in(dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let sb = sandbox();
    let mut child = sb
        .agent_cmd(args)
        .current_dir(dir)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("agent");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(bytes).expect("write stdin");
    }
    child.wait_with_output().expect("wait")
}

fn lines_of(out: &Output) -> Vec<Value> {
    let (stdout, stderr) = text(out);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn templates_jsonl_gives_every_line_its_template_without_a_model() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("app.log"), LOG).expect("write");
    let out = agent_in(dir.path(), &["logs", "--templates", "app.log", "--output", "jsonl"], None);
    let rows = lines_of(&out);
    assert_eq!(rows.len(), 8, "one row per input line: {rows:#?}");
    let ids: Vec<u64> = rows.iter().map(|r| r["template_id"].as_u64().expect("id")).collect();
    // The three "worker started" lines share a template; the stack trace's
    // four lines carry its first line's template.
    assert_eq!(ids, vec![1, 1, 2, 2, 2, 2, 1, 3]);
    assert_eq!(rows[0]["input"], "app.log");
    assert_eq!(rows[4]["line"], 5);
    assert_eq!(rows[6]["template"], "INFO worker <*> started in <*>");
    assert_eq!(rows[2]["template"], "ERROR request <*> failed");
    assert_eq!(rows[7]["template"], "WARN pool exhausted active=<*> idle=<*>");
}

#[test]
fn templates_from_standard_input_and_ranked_as_text() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = agent_in(
        dir.path(),
        &["logs", "--templates", "--output", "jsonl"],
        Some(LOG.as_bytes()),
    );
    let rows = lines_of(&out);
    assert_eq!(rows.len(), 8);
    assert_eq!(rows[0]["input"], "stdin");
    // Text: the templates, most anomalous first (the error, then the warning).
    let out = agent_in(dir.path(), &["logs", "--templates", "-"], Some(LOG.as_bytes()));
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let first: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        first,
        vec![
            "T2\terror\t1\tERROR request <*> failed",
            "T3\twarn\t1\tWARN pool exhausted active=<*> idle=<*>",
            "T1\tinfo\t3\tINFO worker <*> started in <*>",
        ]
    );
}

#[test]
fn bad_flags_and_missing_files_are_usage_errors_naming_them() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = agent_in(dir.path(), &["logs", "--templates", "missing.log"], None);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("missing.log: no such log file"), "{stderr}");
    std::fs::write(dir.path().join("app.log"), LOG).expect("write");
    let out = agent_in(dir.path(), &["logs", "--templates", "app.log", "--since", "yesterday"], None);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--since: `yesterday` is not a time"), "{stderr}");
    // --since keeps the records from 10:00:03 on.
    let out = agent_in(
        dir.path(),
        &["logs", "--templates", "app.log", "--output", "jsonl", "--since", "2024-01-15T10:00:03Z"],
        None,
    );
    let rows = lines_of(&out);
    let lines: Vec<u64> = rows.iter().map(|r| r["line"].as_u64().expect("line")).collect();
    assert_eq!(lines, vec![7, 8]);
}

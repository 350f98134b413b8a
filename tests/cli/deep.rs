//! `agent security-audit --deep` end to end: a real project (a git
//! repository with history), the real binary, the static pass, the built-in
//! security-deep, core-tools and git skills, and a scripted model server on
//! 127.0.0.1 whose `report_finding` calls — good and bad — arrive split into
//! 7-byte stream chunks.

use std::process::{Output, Stdio};
use std::time::Duration;

use agent_tests::model_server::{ModelServer, Recorded, Reply, Wire, tokio_rt};
use agent_tests::{Sandbox, text};
use serde_json::{Value, json};

use super::{code, git, sandbox, write};

/// The AWS key pair of config/settings.py, built here so that no scanner
/// flags this file.
fn key_id() -> String {
    format!("AKIA{}", "Z7Q3VXKJ4PLM2HRT")
}

fn secret_key() -> String {
    format!("q8Xr2LmN7vB4kT9wZ1yH{}", "6cF3gJ5pD0sQ2aE8uR4i")
}

/// Comment lines that make a file large enough for a batch of its own.
fn padding() -> String {
    (0..400)
        .map(|i| format!("# padding line {i:03} of a long module, no code here at all\n"))
        .collect()
}

/// The project: a route (app/proxy.py) hands a user's URL to a helper in
/// another file (app/fetcher.py) that fetches it — a server-side request
/// forgery the static rules do not see — and config/settings.py holds an
/// AWS key pair (the secrets scanner's). app/db.py is changed by both
/// commits (churn).
fn project(sb: &Sandbox) {
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    let pad = padding();
    write(
        p,
        "config/settings.py",
        &format!(
            "AWS_ACCESS_KEY_ID = \"{}\"\nAWS_SECRET_ACCESS_KEY = \"{}\"\n{pad}",
            key_id(),
            secret_key()
        ),
    );
    write(
        p,
        "app/proxy.py",
        &format!(
            "from flask import Flask, request\n\nfrom app import fetcher\n\napp = Flask(__name__)\n\n\n\
             @app.route(\"/fetch\")\ndef fetch():\n    return fetcher.download(request.args[\"url\"])\n{pad}"
        ),
    );
    write(
        p,
        "app/fetcher.py",
        &format!(
            "import httpx\n\n\ndef download(target):\n    client = httpx.Client(timeout=5)\n    \
             return client.get(target).text\n{pad}"
        ),
    );
    write(
        p,
        "app/db.py",
        &format!(
            "import sqlite3\n\n\ndef login(db, name, password):\n    row = db.execute(\"SELECT hash \
             FROM users WHERE name = ?\", (name,)).fetchone()\n    return row is not None\n{pad}"
        ),
    );
    write(p, "app/strings.py", "def pad(s):\n    return s.ljust(10)\n");
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "first"]);
    let db = std::fs::read_to_string(p.join("app/db.py")).expect("db");
    write(
        p,
        "app/db.py",
        &db.replace(
            "return row is not None",
            "return row is not None and row[0] == password",
        ),
    );
    git(p, &["commit", "-q", "-am", "second"]);
}

fn report(
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

fn ssrf() -> Value {
    let mut f = report(
        "high",
        "injection",
        "User-supplied URL fetched by the server",
        "app/fetcher.py",
        6,
        "return client.get(target).text",
    );
    f["cwe"] = json!("CWE-918");
    f["related"] = json!(["config/settings.py:1"]);
    f
}

fn split(r: Reply) -> Reply {
    r.split(7, Duration::from_millis(0))
}

/// The model's turns, conversation by conversation (budget 10):
/// 1. reads config/settings.py, reports the SSRF (related to the key), ends (3 calls);
/// 2. reports a file that does not exist and a line past the end, ends (3);
/// 3. ends (1);
/// 4. (a session of 3 turns: the budget left) reports a bad severity and a
///    report without its location, ends (3).
///
/// Two answers more than the budget allows, which must never be asked for.
fn script(wire: Wire) -> Vec<Reply> {
    let mut missing = report("low", "correctness", "no location", "app/db.py", 1, "");
    missing.as_object_mut().expect("object").remove("location");
    vec![
        split(wire.tool("r1", "read_file", &json!({"path": "config/settings.py"}))),
        split(wire.tool("c1", "report_finding", &ssrf())),
        split(wire.answer("One SSRF.")),
        split(wire.tool(
            "c2",
            "report_finding",
            &report("high", "injection", "Ghost", "app/ghost.py", 3, "x"),
        )),
        split(wire.tool(
            "c3",
            "report_finding",
            &report(
                "medium",
                "injection",
                "Past the end",
                "app/proxy.py",
                999,
                "",
            ),
        )),
        split(wire.answer("Nothing else.")),
        split(wire.answer("No logic flaw.")),
        split(wire.tool(
            "c4",
            "report_finding",
            &report(
                "urgent",
                "authentication",
                "Bad severity",
                "app/db.py",
                6,
                "",
            ),
        )),
        split(wire.tool("c5", "report_finding", &missing)),
        split(wire.answer("Done.")),
        split(wire.answer("Over the budget 1.")),
        split(wire.answer("Over the budget 2.")),
    ]
}

fn served(replies: Vec<Reply>) -> (tokio::runtime::Runtime, ModelServer) {
    let rt = tokio_rt();
    let server = rt.block_on(ModelServer::start(replies)).expect("server");
    (rt, server)
}

fn audit(sb: &Sandbox, server: &ModelServer, wire: Wire, args: &[&str]) -> Output {
    let mut all = vec![
        "security-audit",
        "--provider",
        wire.name(),
        "--model",
        "test-model",
        "--base-url",
        server.url(),
    ];
    all.extend_from_slice(args);
    sb.agent_cmd(&all)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .expect("running agent")
}

fn json_out(out: &Output) -> Value {
    let (stdout, stderr) = text(out);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}\n{stderr}"))
}

fn body(r: &Recorded) -> String {
    r.body.to_string()
}

/// No request carried the key pair; the redaction marks are there instead.
fn assert_no_secret_sent(requests: &[Recorded]) {
    for (i, r) in requests.iter().enumerate() {
        let b = body(r);
        assert!(!b.contains(&key_id()), "request {i} carried the key id");
        assert!(
            !b.contains(&secret_key()),
            "request {i} carried the secret key"
        );
    }
    let all: String = requests.iter().map(body).collect();
    assert!(all.contains("[REDACTED:"), "nothing was redacted");
}

#[test]
fn the_budget_is_spent_on_the_riskiest_files_first_and_bad_reports_are_counted() {
    let sb = sandbox();
    project(&sb);
    let (_rt, server) = served(script(Wire::Anthropic));
    let out = audit(
        &sb,
        &server,
        Wire::Anthropic,
        &["--deep", "--max-llm-calls", "10", "--output", "json"],
    );
    let (_, stderr) = text(&out);
    // The AWS key is critical: exit 1 at the default threshold (high).
    assert_eq!(code(&out), 1, "{stderr}");
    let report = json_out(&out);

    // The ranking: every file with a signal, highest first, with reasons.
    let ranking: Vec<&str> = report["deep"]["ranking"]
        .as_array()
        .expect("ranking")
        .iter()
        .map(|r| r["file"].as_str().expect("file"))
        .collect();
    assert_eq!(
        ranking,
        [
            "app/db.py",
            "config/settings.py",
            "app/proxy.py",
            "app/fetcher.py",
            "app/strings.py"
        ],
        "{:#}",
        report["deep"]
    );
    let db = &report["deep"]["ranking"][0];
    let signals: Vec<&str> = db["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| r["signal"].as_str().expect("signal"))
        .collect();
    assert_eq!(signals, ["authn-authz", "sql", "churn"], "{db:#}");
    assert_eq!(
        db["reasons"][2]["detail"],
        "changed by 2 of the last 2 commits"
    );

    // The budget: 10 model calls, not one more, though the script had more.
    let s = &report["deep"]["summary"];
    assert_eq!(s["budget"], 10, "{s:#}");
    assert_eq!(s["model_calls"], 10, "{s:#}");
    assert_eq!(s["conversations"], 4, "{s:#}");
    assert_eq!(s["files_ranked"], 5, "{s:#}");
    assert_eq!(s["files_analysed"], 2, "{s:#}");
    assert_eq!(s["files_skipped"], 3, "{s:#}");
    assert_eq!(s["batches"], 4, "{s:#}");
    let requests = server.requests();
    assert_eq!(requests.len(), 10);

    // Highest risk first: the first batch's three conversations (7 calls)
    // show app/db.py, the fourth config/settings.py.
    for (i, r) in requests.iter().enumerate() {
        let b = body(r);
        let (shown, not_shown) = if i < 7 {
            ("### app/db.py", "### config/settings.py")
        } else {
            ("### config/settings.py", "### app/db.py")
        };
        assert!(b.contains(shown), "request {i}: {shown} missing");
        assert!(!b.contains(not_shown), "request {i}: {not_shown} shown");
    }
    let first = body(&requests[0]);
    for (needle, what) in [
        ("analysis `auth-flow`", "the analysis"),
        (
            "You are doing a deep security analysis",
            "the security-deep skill's prompt",
        ),
        ("Analysis `taint`", "its checklists"),
    ] {
        assert!(first.contains(needle), "{what}: {first}");
    }
    assert!(body(&requests[3]).contains("analysis `taint`"));
    // The fourth conversation lists the static findings of its file.
    assert!(body(&requests[7]).contains("SECRET-AWS-ACCESS-KEY"));
    assert!(body(&requests[6]).contains("analysis `business-logic`"));
    // Read-only tools and report_finding; nothing that writes or runs.
    for tool in ["report_finding", "read_file", "search", "list_dir"] {
        assert!(
            first.contains(&format!("\"name\":\"{tool}\"")),
            "{tool} offered: {first}"
        );
    }
    for tool in ["write_file", "edit", "exec", "git_commit"] {
        assert!(
            !first.contains(&format!("\"name\":\"{tool}\"")),
            "{tool} offered"
        );
    }

    // Secrets: neither in the prompts nor in read_file's result.
    assert_no_secret_sent(&requests);
    assert!(
        body(&requests[1]).contains("AWS_ACCESS_KEY_ID = \\\"[REDACTED:"),
        "read_file's result, redacted: {}",
        body(&requests[1])
    );

    // The model's findings: one recorded, four dropped with their reasons.
    let model: Vec<(&str, u64)> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["scanner"] == "security-deep/model")
        .map(|f| {
            (
                f["location"]["file"].as_str().unwrap_or(""),
                f["location"]["start_line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(model, [("app/fetcher.py", 6)]);
    let r = &s["reported"];
    assert_eq!(r["received"], 5, "{r:#}");
    assert_eq!(r["accepted"], 1, "{r:#}");
    assert_eq!(r["no_such_file"], 1, "{r:#}");
    assert_eq!(r["no_such_line"], 1, "{r:#}");
    assert_eq!(r["invalid"], 2, "bad severity, missing location: {r:#}");
    assert!(
        stderr.contains(
            "deep analysis: 10/10 model calls · 2 of 5 ranked files analysed, 3 skipped · 4 \
             conversations · 5 reported by the model: 1 recorded, 0 demoted, 4 dropped (2 \
             invalid, 1 no such file, 1 no such line)"
        ),
        "{stderr}"
    );
    // The model was told why each bad report was dropped.
    let later = body(&requests[5]);
    assert!(
        later.contains("there is no file `app/ghost.py` in the project"),
        "{later}"
    );
    assert!(
        later.contains("has 410 lines; there is no line 999"),
        "{later}"
    );

    // The chain: the SSRF (the model's) and the AWS key (the static pass').
    let chains = report["chains"].as_array().expect("chains");
    assert_eq!(chains.len(), 1, "{chains:#?}");
    let c = &chains[0];
    let steps: Vec<(&str, &str, u64)> = c["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| {
            (
                s["role"].as_str().unwrap_or(""),
                s["file"].as_str().unwrap_or(""),
                s["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        steps,
        [
            ("exploit", "app/fetcher.py", 6),
            ("impact", "config/settings.py", 1)
        ],
        "{c:#}"
    );
    assert_eq!(
        c["rules"],
        json!(["ssrf-to-credentials", "stated-by-model"])
    );
    let id = c["id"].as_str().expect("id");
    let marked = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["metadata"]["chain"] == id)
        .count();
    assert_eq!(marked, 2);
    assert!(
        stderr.contains(&format!("attack chain {id} (high)")),
        "{stderr}"
    );
}

/// One conversation: the SSRF reported, then an answer.
fn short_script(wire: Wire) -> Vec<Reply> {
    vec![
        split(wire.tool("c1", "report_finding", &ssrf())),
        split(wire.answer("One SSRF.")),
    ]
}

#[test]
fn the_chain_is_a_markdown_section_and_sarif_code_flows() {
    let sb = sandbox();
    project(&sb);
    let dir = tempfile::tempdir().expect("tmp");
    let sarif = dir.path().join("deep.sarif");
    let (_rt, server) = served(short_script(Wire::Anthropic));
    let out = audit(
        &sb,
        &server,
        Wire::Anthropic,
        &[
            "--deep",
            "--max-llm-calls",
            "2",
            "--output",
            "sarif",
            "--out",
            sarif.to_str().expect("path"),
        ],
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert_eq!(server.requests().len(), 2);
    crate::security::validate("sarif", &sarif);
    let log: Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    let results = log["runs"][0]["results"].as_array().expect("results");
    let members: Vec<&Value> = results
        .iter()
        .filter(|r| r.get("codeFlows").is_some())
        .collect();
    assert_eq!(members.len(), 2, "{results:#?}");
    for r in &members {
        let flow = &r["codeFlows"][0]["threadFlows"][0]["locations"];
        let uris: Vec<&str> = flow
            .as_array()
            .expect("locations")
            .iter()
            .map(|l| {
                l["location"]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap_or("")
            })
            .collect();
        assert_eq!(uris, ["app/fetcher.py", "config/settings.py"]);
        let related = r["relatedLocations"].as_array().expect("relatedLocations");
        assert_eq!(related.len(), 1);
        let own = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str();
        let other = related[0]["physicalLocation"]["artifactLocation"]["uri"].as_str();
        assert_ne!(own, other);
    }
    let summary = &log["runs"][0]["properties"]["deep"]["summary"];
    assert_eq!(summary["model_calls"], 2, "{summary:#}");
    assert_eq!(summary["budget"], 2, "{summary:#}");

    // Markdown: the summary, the ranking, a section per chain with its steps.
    let (_rt2, server) = served(short_script(Wire::Anthropic));
    let out = audit(
        &sb,
        &server,
        Wire::Anthropic,
        &["--deep", "--max-llm-calls", "2", "--output", "markdown"],
    );
    let (md, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(
        md.contains("## Deep analysis\n\n- Model calls: 2 of a budget of 2\n"),
        "{md}"
    );
    assert!(md.contains("| 1 | `app/db.py` | 13 |"), "{md}");
    let at = md
        .find("## Attack chains\n\n### chain-")
        .expect("a chain section");
    let section = &md[at..];
    assert!(
        section.contains("(high): User-supplied URL fetched by the server → AWS access key id\n"),
        "{section}"
    );
    assert!(
        section.contains("Joined by: ssrf-to-credentials, stated-by-model\n"),
        "{section}"
    );
    assert!(
        section.contains(
            "1. **exploit** `app/fetcher.py:6` — User-supplied URL fetched by the server"
        ),
        "{section}"
    );
    assert!(
        section.contains("2. **impact** `config/settings.py:1` — "),
        "{section}"
    );
    assert_no_secret_sent(&server.requests());
}

#[test]
fn enable_llm_analysis_in_the_config_is_deep() {
    let sb = sandbox();
    project(&sb);
    let config = sb.paths().config_file();
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir");
    std::fs::write(
        &config,
        "[security]\nenable_llm_analysis = true\nmax_llm_calls = 2\n",
    )
    .expect("config");
    let (_rt, server) = served(short_script(Wire::OpenAi));
    let out = audit(
        &sb,
        &server,
        Wire::OpenAi,
        &["--output", "json", "--fail-on", "none"],
    );
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stderr}");
    let report = json_out(&out);
    assert_eq!(report["deep"]["summary"]["budget"], 2);
    assert_eq!(report["deep"]["summary"]["model_calls"], 2);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(report["chains"].as_array().map(Vec::len), Some(1));
    assert_no_secret_sent(&server.requests());
    // The spec's model-judged iOS rule (IOS-SEC-006, `type: llm-hint`) rides in the
    // business-logic checklist every deep request carries.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| body(r).contains("IOS-SEC-006")),
        "{}",
        body(&server.requests()[0])
    );
}

#[test]
fn without_a_key_deep_fails_like_run_before_scanning() {
    let sb = sandbox();
    project(&sb);
    let out = sb
        .agent_cmd(&[
            "security-audit",
            "--deep",
            "--provider",
            "anthropic",
            "--output",
            "json",
        ])
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .output()
        .expect("agent");
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 3, "{stderr}");
    assert!(
        stderr.contains("error: provider: no API key for anthropic: set the ANTHROPIC_API_KEY"),
        "{stderr}"
    );
    assert!(stdout.is_empty(), "no report: {stdout}");
    // --max-llm-calls 0 is a usage error.
    let out = sb
        .agent_cmd(&["security-audit", "--deep", "--max-llm-calls", "0"])
        .stdin(Stdio::null())
        .output()
        .expect("agent");
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("--max-llm-calls must be at least 1"));
}

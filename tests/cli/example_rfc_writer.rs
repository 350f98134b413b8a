//! The spec's `rfc-writer` example (sdk-guest-examples/rfc-writer), built
//! from source with `agent skill build` and run with `agent workflow run`
//! in a real git repository against the scripted model server: the RFC
//! file written (numbered 0001, then 0002), what the model was asked, and
//! the denials.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use agent_tests::Sandbox;
use agent_tests::model_server::Wire;
use serde_json::{Value, json};

use super::example_kubernetes::{Built, Model, build_example, model_args, trust};
use super::{code, ok, sandbox, write};

fn rfc_writer() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| build_example("rfc-writer"))
}

const CACHE_RS: &str =
    "//! Build cache.\n\npub fn key(inputs: &[&str]) -> String {\n    inputs.join(\"+\")\n}\n";

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.com")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.com")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// A sandbox whose project is a git repository with two commits.
fn project() -> Sandbox {
    let sb = sandbox();
    trust(&sb, &rfc_writer().key);
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    write(p, "README.md", "# builder\n");
    git(p, &["add", "."]);
    git(
        p,
        &["commit", "-q", "-m", "Measure cold builds of the workspace"],
    );
    write(p, "src/cache.rs", CACHE_RS);
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "Add build cache skeleton"]);
    sb
}

const GRANTS: [&str; 8] = [
    "--allow",
    "llm:call",
    "--allow",
    "file:read",
    "--allow",
    "file:write",
    "--allow",
    "git:read",
];

/// `agent workflow run rfc-writer/draft-rfc --input INPUT` with `grants`.
fn draft(sb: &Sandbox, model: &Model, input: &Value, grants: &[&str]) -> std::process::Output {
    let dir = rfc_writer().dir.to_str().expect("utf-8").to_string();
    let input = input.to_string();
    let mut args: Vec<String> = [
        "workflow",
        "run",
        "rfc-writer/draft-rfc",
        "--skills",
        &dir,
        "--input",
        &input,
    ]
    .map(str::to_string)
    .to_vec();
    args.extend(model_args(Wire::Anthropic, model));
    args.extend(grants.iter().map(|g| g.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    sb.agent_cmd(&args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent")
}

/// Every text the model was sent in one request (system and messages).
fn sent(body: &Value) -> String {
    fn strings(v: &Value, out: &mut String) {
        match v {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
            Value::Object(map) => map.values().for_each(|i| strings(i, out)),
            _ => {}
        }
    }
    let mut out = String::new();
    strings(&body["system"], &mut out);
    strings(&body["messages"], &mut out);
    out
}

const ANSWER: &str = "## Summary
Cache build artifacts by a key of their inputs.

## Motivation
Cold builds take minutes; most inputs do not change.

## Detailed design
`cache::key` joins the inputs; artifacts are stored under `target/cache/<key>`.

## Alternatives considered
A remote cache (later).

## Risks and drawbacks
Stale entries when an input is missed.

## Unresolved questions
- How large may the cache grow?
";

fn rfcs(sb: &Sandbox) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(sb.project.path().join("docs/rfcs"))
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn rfc_writer_drafts_numbered_rfcs_from_history_and_files() {
    let sb = project();
    let wire = Wire::Anthropic;

    // 0001: the model's sections under the template's title and header.
    let model = Model::start(vec![wire.answer(ANSWER)]);
    let input = json!({
        "topic": "Cache build artifacts",
        "problem": "Every CI run rebuilds everything.",
        "files": ["src/cache.rs"],
        "commits": 10
    });
    let out = draft(&sb, &model, &input, &GRANTS);
    let result: Value = serde_json::from_str(&ok(&out)).expect("json");
    assert_eq!(
        result,
        json!({
            "path": "docs/rfcs/0001-cache-build-artifacts.md",
            "number": 1,
            "title": "RFC 0001: Cache build artifacts",
            "missing_sections": []
        })
    );
    let written = std::fs::read_to_string(
        sb.project
            .path()
            .join("docs/rfcs/0001-cache-build-artifacts.md"),
    )
    .expect("the RFC");
    assert_eq!(
        written,
        format!(
            "# RFC 0001: Cache build artifacts\n\n- Status: Draft\n- Context: 2 recent commits; src/cache.rs\n\n{}\n",
            ANSWER.trim_end()
        )
    );
    // What the model was asked: the topic, problem, template, history and file.
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 1);
    let asked = sent(&bodies[0]);
    for expected in [
        "Write an RFC (a design document) proposing: Cache build artifacts",
        "Problem statement:\nEvery CI run rebuilds everything.",
        "## Summary\n## Motivation\n## Detailed design\n## Alternatives considered\n## Risks and drawbacks\n## Unresolved questions\n",
        " Add build cache skeleton\n",
        " Measure cold builds of the workspace\n",
        &format!("--- src/cache.rs ---\n{CACHE_RS}"),
    ] {
        assert!(
            asked.contains(expected),
            "missing {expected:?} in:\n{asked}"
        );
    }

    // 0002: the next number; a fenced answer with its own title is cleaned,
    // and the missing sections are reported.
    let model = Model::start(vec![wire.answer(
        "```markdown\n# Remote cache\n\n## Summary\nShare the cache.\n\n## Motivation\nCI machines are fresh.\n```",
    )]);
    let out = draft(
        &sb,
        &model,
        &json!({"topic": "Remote cache!", "commits": 0}),
        &GRANTS,
    );
    let result: Value = serde_json::from_str(&ok(&out)).expect("json");
    assert_eq!(result["path"], "docs/rfcs/0002-remote-cache.md");
    assert_eq!(result["number"], 2);
    assert_eq!(
        result["missing_sections"],
        json!([
            "Detailed design",
            "Alternatives considered",
            "Risks and drawbacks",
            "Unresolved questions"
        ])
    );
    assert_eq!(
        std::fs::read_to_string(sb.project.path().join("docs/rfcs/0002-remote-cache.md"))
            .expect("second RFC"),
        "# RFC 0002: Remote cache!\n\n- Status: Draft\n- Context: the problem statement only\n\n\
         ## Summary\nShare the cache.\n\n## Motivation\nCI machines are fresh.\n"
    );
    let asked = sent(&model.bodies()[0]);
    assert!(!asked.contains("Recent commits"), "{asked}");
    assert_eq!(
        rfcs(&sb),
        ["0001-cache-build-artifacts.md", "0002-remote-cache.md"]
    );
}

#[test]
fn rfc_writer_without_file_write_or_llm_call_is_denied_and_writes_nothing() {
    let sb = project();
    let wire = Wire::Anthropic;
    let input = json!({"topic": "Cache build artifacts", "files": ["src/cache.rs"]});

    // No file:write: denied (exit 4) before the model is asked; no file.
    // No llm:call: denied (exit 4); the reserved file is removed again.
    for missing in ["file:write", "llm:call"] {
        let model = Model::start(vec![wire.answer(ANSWER)]);
        let grants: Vec<&str> = ["llm:call", "file:read", "file:write", "git:read"]
            .into_iter()
            .filter(|p| *p != missing)
            .flat_map(|p| ["--allow", p])
            .collect();
        let out = draft(&sb, &model, &input, &grants);
        let (_, stderr) = agent_tests::text(&out);
        assert_eq!(code(&out), 4, "{missing}: {stderr}");
        assert!(stderr.contains(missing), "{stderr}");
        assert!(
            model.bodies().is_empty(),
            "the model was asked without {missing}"
        );
        assert!(rfcs(&sb).is_empty(), "{:?}", rfcs(&sb));
    }

    // A file the input names that does not exist: not found, nothing written.
    let model = Model::start(vec![wire.answer(ANSWER)]);
    let out = draft(
        &sb,
        &model,
        &json!({"topic": "Cache", "files": ["src/missing.rs"]}),
        &GRANTS,
    );
    let (_, stderr) = agent_tests::text(&out);
    assert_ne!(code(&out), 0, "{stderr}");
    assert!(stderr.contains("src/missing.rs"), "{stderr}");
    assert!(rfcs(&sb).is_empty(), "{:?}", rfcs(&sb));
}

//! The `syntax` import through the component boundary: the `guest-later` component's
//! `syntax` tool runs a query the test gives it and answers the matches as JSON.

use serde_json::{Value, json};

use crate::common::{Harness, guest};

/// Runs `query` on `source` inside the guest; the matches, or the guest's error text.
async fn run(h: &Harness, skill: &agent_runtime::Skill, input: Value) -> Result<Value, String> {
    let out = h.call_ok(skill, "syntax", input).await;
    match out.strip_prefix("ok: ") {
        Some(json) => Ok(serde_json::from_str(json).expect("the guest answers JSON")),
        None => Err(out),
    }
}

fn load(h: &Harness) -> agent_runtime::Skill {
    // The component also imports `llm` and `skills`, so the manifest declares them; nothing
    // is granted: `syntax` needs no permission.
    h.load_guest(
        &guest("guest-later"),
        "later",
        "permissions: [llm:call, skill:invoke]\n",
    )
    .expect("guest-later loads")
}

#[tokio::test]
async fn syntax_query_returns_captures_with_positions_through_the_component() {
    let h = Harness::new(&[]);
    let skill = load(&h);
    let source = "import os\n\ndef run(cmd):\n    os.system(cmd)\n    eval(cmd)\n";
    let query = r#"
        (call function: (attribute object: (identifier) @obj attribute: (identifier) @fn)
              (#eq? @obj "os") (#match? @fn "^(system|popen)$")) @call
        (call function: (identifier) @fn (#any-of? @fn "eval" "exec")) @call
    "#;
    let matches = run(
        &h,
        &skill,
        json!({"language": "python", "source": source, "query": query}),
    )
    .await
    .expect("the query runs");
    assert_eq!(
        matches,
        json!([
            {"pattern": 0, "captures": [
                {"name": "call", "text": "os.system(cmd)", "start_byte": 29, "end_byte": 43,
                 "start_line": 4, "start_column": 5, "end_line": 4, "end_column": 19},
                {"name": "obj", "text": "os", "start_byte": 29, "end_byte": 31,
                 "start_line": 4, "start_column": 5, "end_line": 4, "end_column": 7},
                {"name": "fn", "text": "system", "start_byte": 32, "end_byte": 38,
                 "start_line": 4, "start_column": 8, "end_line": 4, "end_column": 14},
            ]},
            {"pattern": 1, "captures": [
                {"name": "call", "text": "eval(cmd)", "start_byte": 48, "end_byte": 57,
                 "start_line": 5, "start_column": 5, "end_line": 5, "end_column": 14},
                {"name": "fn", "text": "eval", "start_byte": 48, "end_byte": 52,
                 "start_line": 5, "start_column": 5, "end_line": 5, "end_column": 9},
            ]},
        ])
    );
    // No permission is needed, and successful parses are not audited (only
    // refusals are: see the error test).
    let audited: Vec<(String, String)> = h
        .audit_of("later")
        .into_iter()
        .filter(|(c, _, _)| c == "syntax")
        .map(|(_, t, d)| (t, d))
        .collect();
    assert!(audited.is_empty(), "{audited:?}");
}

#[tokio::test]
async fn syntax_languages_lists_the_bundled_grammars() {
    let h = Harness::new(&[]);
    let skill = load(&h);
    let langs = run(&h, &skill, json!({"languages": true})).await.unwrap();
    assert_eq!(
        langs,
        json!([
            "python",
            "javascript",
            "typescript",
            "tsx",
            "go",
            "java",
            "rust",
            "swift",
            "ruby",
            "c",
            "cpp",
            "objective-c",
            "php",
        ])
    );
}

#[tokio::test]
async fn syntax_errors_reach_the_guest_as_capability_errors() {
    let h = Harness::new(&[]);
    let skill = load(&h);
    let err = run(
        &h,
        &skill,
        json!({"language": "cobol", "source": "", "query": "(x) @x"}),
    )
    .await
    .unwrap_err();
    assert!(err.starts_with("error: CapabilityError::Invalid("), "{err}");
    assert!(err.contains(r#"unknown language \"cobol\""#), "{err}");
    assert!(err.contains("python, javascript, typescript"), "{err}");

    let err = run(
        &h,
        &skill,
        json!({"language": "go", "source": "package a\n", "query": "(function_declaration\n  (nope) @n)"}),
    )
    .await
    .unwrap_err();
    assert!(err.starts_with("error: CapabilityError::Invalid("), "{err}");
    assert!(
        err.contains("line 2, column 4 (unknown node type)"),
        "{err}"
    );

    // Over the 8 MiB source cap: limit-exceeded (the guest's default 256 MiB memory holds it).
    let big = "x".repeat(agent_syntax_cap() + 1);
    let err = run(
        &h,
        &skill,
        json!({"language": "python", "source": big, "query": "(identifier) @i"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.starts_with("error: CapabilityError::LimitExceeded("),
        "{}",
        &err[..err.len().min(300)]
    );

    let decisions: Vec<String> = h
        .audit_of("later")
        .into_iter()
        .filter(|(c, _, _)| c == "syntax")
        .map(|(_, _, d)| d)
        .collect();
    assert_eq!(decisions, ["unknown-language", "bad-query", "too-large"]);
}

/// The source cap of the `syntax` import (agent-syntax's MAX_SOURCE_BYTES).
fn agent_syntax_cap() -> usize {
    8 * 1024 * 1024
}

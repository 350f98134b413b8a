//! The versioned `agent:skill` contract through the real binary
//! (docs/wit-reference.md, "Contract versions"): every component published
//! in `registry-index/` is a 0.1.0 component and still installs and runs;
//! a 0.2.0 hook-only skill (`types: [hook]`) runs in `agent run` next to a
//! published 0.1.0 tool, rewriting its result.

use std::path::Path;
use std::process::Command;

use agent_runtime::contract::{self, LATEST, V0_1_0};
use agent_tests::model_server::Wire;
use agent_tests::{build_guest, workspace, write_skill};
use serde_json::{Value, json};

use super::skills::{Server, run_agent};
use super::{ok, sandbox};

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The index key that signed every artifact of `registry-index/`.
const INDEX_KEY: &str = "90dbe1d66cd053ff";

/// Every component published in the repository's `registry-index/` was built
/// against `agent:skill@0.1.0`, frozen in `wit/0.1.0/` since the contract
/// became 0.2.0. Each still installs from the index with its real signature,
/// is reported as a 0.1.0 component running through the adapter, and runs:
/// the tools are called, every skill passes `skill test` (which loads it and
/// calls its exports' listing functions).
#[test]
fn every_published_0_1_0_component_installs_and_runs_through_the_adapter() {
    let sb = sandbox();
    let index = workspace().join("registry-index");
    let key = index.join("keys").join(format!("{INDEX_KEY}.pub"));
    ok(&sb.agent(&["keys", "trust", s(&key)]));
    let published = [
        "rust-hello",
        "js-hello",
        "kubernetes",
        "database",
        "ddd-expert",
        "rfc-writer",
        "hipaa-compliance",
        "i18n-output",
    ];
    let old = V0_1_0;
    let latest = LATEST;
    for name in published {
        ok(&sb.agent(&["skill", "install", name, "--index", s(&index)]));
        let dir = sb.paths().user_skills_dir().join(name);
        let report = ok(&sb.agent(&["skill", "inspect", s(&dir)]));
        println!("{name}:\n{report}");
        assert!(
            report.contains(&format!(
                "contract: {old} (runs through this agent's adapter to {latest})"
            )),
            "{name}: {report}"
        );
        assert!(
            report.contains(&format!("{}/", contract::PACKAGE))
                && report.contains(&format!("@{}", old.as_str())),
            "{name} names its 0.1.0 interfaces: {report}"
        );
        let tested = ok(&sb.agent(&["skill", "test", s(&dir)]));
        assert!(
            tested.contains(&format!("signed by key {INDEX_KEY}")) && tested.contains("PASS"),
            "{name}: {tested}"
        );
    }
    let greeting = ok(&sb.agent(&[
        "skill",
        "call",
        "rust-hello",
        "greet",
        "--input",
        r#"{"name":"adapter"}"#,
    ]));
    assert!(greeting.contains("Hello, adapter!"), "{greeting}");
    let summary = ok(&sb.agent(&["skill", "call", "rust-hello", "project_summary"]));
    assert!(
        summary.contains("mode: cli"),
        "the 0.1.0 project import answered: {summary}"
    );
    let slug = ok(&sb.agent(&[
        "skill",
        "call",
        "js-hello",
        "slugify",
        "--input",
        r#"{"text":"Old Contract, New Host"}"#,
    ]));
    assert!(slug.contains("old-contract-new-host"), "{slug}");
}

/// `agent run` with two project skills: the published `rust-hello` (0.1.0,
/// unpacked from its `registry-index/` artifact with its real signature)
/// and the 0.2.0 `guest-hook-only` component declared `types: [hook]` —
/// no prompt file, no other type to pose as. The model calls rust-hello's
/// `greet`; the hook-only skill's `on_after_tool_result` hook rewrites the
/// 0.1.0 tool's result, and the model and the user see the rewritten one.
#[test]
fn a_hook_only_skill_rewrites_a_published_0_1_0_tools_result_in_agent_run() {
    let wire = Wire::Ollama;
    let sb = sandbox();
    let index = workspace().join("registry-index");
    ok(&sb.agent(&[
        "keys",
        "trust",
        s(&index.join("keys").join(format!("{INDEX_KEY}.pub"))),
    ]));
    let skills = sb.project.path().join(".agent/skills");
    let hello = skills.join("rust-hello");
    std::fs::create_dir_all(&hello).expect("mkdir");
    let status = Command::new("tar")
        .arg("xzf")
        .arg(index.join("artifacts/rust-hello-0.1.0.tar.gz"))
        .arg("-C")
        .arg(&hello)
        .status()
        .expect("tar");
    assert!(status.success());
    let component = std::fs::read(build_guest("guest-hook-only")).expect("guest-hook-only");
    write_skill(
        &skills.join("watcher"),
        "name: watcher\nversion: 0.2.0\ndescription: hook-only skill\ntypes: [hook]\nimplementation:\n  component: skill.wasm\n",
        &component,
        None,
    );

    let server = Server::start(vec![
        wire.tool("call_g", "greet", &json!({"name": "world"})),
        wire.answer("Greeted."),
    ]);
    let out = run_agent(&sb, wire, &server, &["--prompt", "Greet the world."]);
    let stdout = ok(&out);
    let events: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let result = events
        .iter()
        .find(|e| e["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no tool_result event: {stdout}"));
    let output = result["output"].as_str().unwrap_or_default();
    println!("the 0.1.0 tool's result after the 0.2.0 hook: {output}");
    assert!(
        output.contains("Hello, world!")
            && output.ends_with("[seen by hook-only, project mount: none]"),
        "{result}"
    );
    let hooks: Vec<&Value> = events.iter().filter(|e| e["type"] == "hook").collect();
    assert!(
        hooks
            .iter()
            .any(|e| e["phase"] == "on_after_tool_result" && e["skill"] == "watcher"),
        "{hooks:?}"
    );
    // The model was handed the rewritten result.
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies[1]
            .to_string()
            .contains("[seen by hook-only, project mount: none]"),
        "{}",
        bodies[1]
    );
}

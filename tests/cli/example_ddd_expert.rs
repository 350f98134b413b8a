//! sdk-guest-examples/ddd-expert, end to end: a Python prompt skill built
//! from source with componentize-py by `agent skill build`, checked by
//! `agent skill test`, then used by `agent run` against the scripted model
//! server: the system prompt the server receives holds the fragments the
//! skill chose for the message and the project's languages, and only those.
//!
//! One Python build (~18 MB component; its first load compiles it, later
//! loads use the sandbox's cache), several runs.

use std::path::{Path, PathBuf};

use agent_tests::model_server::Wire;
use agent_tests::{Sandbox, copy_tree, text, workspace};

use super::skills::{Server, run_agent, system};
use super::{code, ok, sandbox, write};

const CORE: &str = "## Domain-Driven Design";
const AGGREGATES: &str = "### Aggregates and invariants";
const CONTEXTS: &str = "### Bounded contexts and context maps";
const ENTITIES: &str = "### Entities and value objects";
const EVENTS: &str = "### Domain events";
const REPOSITORIES: &str = "### Repositories";
const GO: &str = "### DDD in Go";
const RUST: &str = "### DDD in Rust";

/// PATH with the Python toolchain (componentize-py, wasm-tools) first.
fn toolchain_path() -> String {
    let pyenv = workspace().join("target/pyenv/bin");
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", pyenv.display())
}

/// A copy of the example's sources (no build output) in `parent`.
fn copy_example(parent: &Path) -> PathBuf {
    let dir = parent.join("ddd-expert");
    copy_tree(&workspace().join("sdk-guest-examples/ddd-expert"), &dir);
    for generated in ["build", "dist", "__pycache__"] {
        let _ = std::fs::remove_dir_all(dir.join(generated));
    }
    dir
}

/// The system prompt of the only request `server` received.
fn only_system_prompt(server: &Server) -> String {
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    system(&bodies[0])
}

fn assert_has(prompt: &str, wanted: &[&str], unwanted: &[&str]) {
    for w in wanted {
        assert!(prompt.contains(w), "missing {w:?} in:\n{prompt}");
    }
    for u in unwanted {
        assert!(!prompt.contains(u), "unexpected {u:?} in:\n{prompt}");
    }
}

#[test]
fn ddd_expert_builds_from_python_and_picks_fragments_by_topic_and_language() {
    let sb: Sandbox = sandbox();
    let scratch = tempfile::tempdir().expect("tempdir");
    let dir = copy_example(scratch.path());
    let dir_s = dir.to_str().expect("utf-8 path");
    let key = sb.trusted_key();
    let (key_file, _) = key.write_pair(scratch.path(), "ci").expect("key file");

    // Without componentize-py (an empty PATH) the build stops before doing
    // anything, naming the exact install command.
    let no_tools = scratch.path().join("no-tools");
    std::fs::create_dir_all(&no_tools).expect("mkdir");
    let out = sb
        .agent_cmd(&[
            "skill",
            "build",
            dir_s,
            "--key",
            key_file.to_str().expect("utf-8"),
        ])
        .env("PATH", &no_tools)
        .output()
        .expect("running agent");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("pip install componentize-py==0.25.1"),
        "{:?}",
        text(&out)
    );
    assert!(!dir.join("dist/ddd_expert.wasm").exists());

    // Built from source and signed with the trusted key.
    let out = sb
        .agent_cmd(&[
            "skill",
            "build",
            dir_s,
            "--key",
            key_file.to_str().expect("utf-8"),
        ])
        .env("PATH", toolchain_path())
        .output()
        .expect("running agent");
    let stdout = ok(&out);
    assert!(stdout.contains("signed with key"), "{stdout}");
    let wasm = std::fs::read(dir.join("dist/ddd_expert.wasm")).expect("component");
    assert_eq!(&wasm[..8], b"\0asm\x0d\0\x01\0", "a component");
    assert!(
        dir.join("build/bindings/wit_world/exports/prompt.py")
            .is_file(),
        "editor bindings refreshed by the build"
    );

    // The host accepts it: signature, imports (only agent:skill, no WASI
    // sockets), the `prompt` export.
    let stdout = ok(&sb.agent(&["skill", "test", dir_s]));
    assert!(
        stdout.contains("ok    imports match permissions, exports match types"),
        "{stdout}"
    );
    assert!(stdout.contains("PASS  ddd-expert"), "{stdout}");

    // A Go project.
    write(
        sb.project.path(),
        "go.mod",
        "module example.com/shop\n\ngo 1.22\n",
    );
    write(
        sb.project.path(),
        "order/order.go",
        "package order\n\ntype Order struct{ ID string }\n",
    );

    // 1. Named with --skills, a message about an aggregate: the core and the
    //    aggregate guidance, Go idioms, nothing about other topics.
    let wire = Wire::Anthropic;
    let server = Server::start(vec![wire.answer("Noted.")]);
    ok(&run_agent(
        &sb,
        wire,
        &server,
        &[
            "--skills",
            dir_s,
            "--prompt",
            "How big should the Order aggregate be?",
        ],
    ));
    let prompt = only_system_prompt(&server);
    assert_has(
        &prompt,
        &[CORE, AGGREGATES, GO],
        &[CONTEXTS, ENTITIES, EVENTS, REPOSITORIES, RUST],
    );

    // 2. Installed in the project (signed, so no --allow-unsigned needed),
    //    activated by its keyword trigger: other topics, and --verbose says
    //    why the skill is active.
    copy_tree(&dir, &sb.project.path().join(".agent/skills/ddd-expert"));
    let server = Server::start(vec![wire.answer("Noted.")]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--prompt",
            "Where should the bounded context end, and should billing publish a domain event?",
            "--verbose",
        ],
    );
    ok(&out);
    let stderr = text(&out).1;
    assert!(
        stderr.contains("ddd-expert: keyword `bounded context` in the message"),
        "{stderr}"
    );
    assert!(stderr.contains("prompt skill ddd-expert:"), "{stderr}");
    let prompt = only_system_prompt(&server);
    assert_has(
        &prompt,
        &[CORE, CONTEXTS, EVENTS, GO],
        &[AGGREGATES, ENTITIES, REPOSITORIES, RUST],
    );

    // 3. A message without any trigger: the skill stays out of the prompt.
    let server = Server::start(vec![wire.answer("Done.")]);
    ok(&run_agent(
        &sb,
        wire,
        &server,
        &["--prompt", "Rename the variable x to count", "--verbose"],
    ));
    let prompt = only_system_prompt(&server);
    assert_has(&prompt, &[], &[CORE, GO]);
}

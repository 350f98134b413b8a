//! The `i18n-output` example (sdk-guest-examples/i18n-output): a transform
//! skill written in JavaScript that translates `agent run`'s final answer
//! with the model (`llm:call`), keeping code blocks, inline code, URLs and
//! file paths byte-identical by sending placeholders in their stead.
//!
//! Built from source with the real binary (`agent skill build`, node and
//! npm's `componentize-qjs`), checked with `agent skill test`, then run in
//! `agent run` against the loopback model server: the main turn answers, the
//! transform's own model request is answered with a scripted translation.

use std::path::{Path, PathBuf};

use agent_tests::model_server::{Reply, Wire};
use agent_tests::{Sandbox, text, workspace};
use serde_json::Value;

use super::skills::{Server, run_agent, system};
use super::{code, ok, sandbox, write};

/// The agent's answer: prose around a code block, inline code, a URL and a path.
const ANSWER: &str = "Run the tests with `cargo test` before you push.\n\n\
```rust\nfn main() {\n    println!(\"Hello, $1 world!\");\n}\n```\n\n\
See https://example.com/docs/testing and src/main.rs.";

/// What the skill sends instead: the protected pieces numbered in the order
/// it protects them (code blocks, inline code, URLs, paths).
const PROTECTED: &str = "Run the tests with ⟦1⟧ before you push.\n\n⟦0⟧\n\nSee ⟦2⟧ and ⟦3⟧.";

/// The scripted model's translation of [`PROTECTED`].
const TRANSLATED: &str = "Lancez les tests avec ⟦1⟧ avant de pousser.\n\n⟦0⟧\n\nVoir ⟦2⟧ et ⟦3⟧.";

/// [`TRANSLATED`] with the pieces put back.
const EXPECTED: &str = "Lancez les tests avec `cargo test` avant de pousser.\n\n\
```rust\nfn main() {\n    println!(\"Hello, $1 world!\");\n}\n```\n\n\
Voir https://example.com/docs/testing et src/main.rs.";

const CODE_BLOCK: &str = "```rust\nfn main() {\n    println!(\"Hello, $1 world!\");\n}\n```";

/// The example's sources copied into `parent` (without what a local build
/// left there: node_modules, build, dist).
fn copy_example(parent: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
            let name = entry.file_name();
            if ["node_modules", "build", "dist"].contains(&name.to_str().unwrap_or_default()) {
                continue;
            }
            let (src, dst) = (entry.path(), to.join(&name));
            if entry.file_type().expect("file type").is_dir() {
                copy(&src, &dst);
            } else {
                std::fs::copy(&src, &dst).expect("copy");
            }
        }
    }
    let dir = parent.join("i18n-output");
    copy(&workspace().join("sdk-guest-examples/i18n-output"), &dir);
    dir
}

/// Builds and signs the example in a scratch directory, checks it with
/// `agent skill test`, and returns (scratch, skill directory).
fn built_example(sb: &Sandbox) -> (tempfile::TempDir, PathBuf) {
    let scratch = tempfile::tempdir().expect("tempdir");
    let dir = copy_example(scratch.path());
    let d = dir.to_str().expect("utf-8 path");
    let key = sb.trusted_key();
    let (key_file, _) = key.write_pair(scratch.path(), "ci").expect("key file");
    let key_file = key_file.to_str().expect("utf-8 path");

    // The example commits no copy of the contract: `agent skill build`
    // writes it from the one the agent was built with.
    assert!(!dir.join("wit/deps").exists());

    // Without node_modules the build stops, naming the command to run.
    let out = sb.agent(&["skill", "build", d, "--key", key_file]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!("npm install --prefix {d}")),
        "{stderr}"
    );
    assert!(!dir.join("dist/i18n_output.wasm").exists());

    let npm = std::process::Command::new("npm")
        .args(["install", "--prefer-offline", "--no-audit", "--no-fund"])
        .current_dir(&dir)
        .output()
        .expect("npm (Node.js) on PATH");
    assert!(npm.status.success(), "npm install: {:?}", text(&npm));

    let built = ok(&sb.agent(&["skill", "build", d, "--key", key_file]));
    assert!(built.contains("QuickJS (componentize-qjs)"), "{built}");
    assert!(
        built.contains(&format!("signed with key {}", key.public().id())),
        "{built}"
    );
    assert!(dir.join("dist/i18n_output.wasm").is_file());
    assert!(built.contains("wrote wit/deps/agent-skill/"), "{built}");
    // The build gave the example the repository's WIT package unchanged.
    for file in ["types.wit", "imports.wit", "exports.wit", "worlds.wit"] {
        let ours = std::fs::read_to_string(dir.join("wit/deps/agent-skill").join(file));
        let repo = std::fs::read_to_string(workspace().join("wit").join(file));
        assert_eq!(
            ours.expect("example wit"),
            repo.expect("repo wit"),
            "sdk-guest-examples/i18n-output/wit/deps/agent-skill/{file} differs from wit/{file}"
        );
    }

    let report = ok(&sb.agent(&["skill", "test", d]));
    assert!(report.contains("PASS  i18n-output"), "{report}");
    (scratch, dir)
}

fn configure(sb: &Sandbox, section: &str) {
    let path = sb.paths().config_file();
    write(
        path.parent().expect("config dir"),
        path.file_name().expect("file").to_str().expect("utf-8"),
        &format!("[skills.config.i18n-output]\n{section}"),
    );
}

/// The transform's model request: the only one after the main turn's.
fn transform_request(server: &Server) -> Value {
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2, "main turn + translation: {bodies:#?}");
    bodies[1].clone()
}

/// The text of a request's user messages, whatever the wire.
fn user_text(body: &Value) -> String {
    let mut out = Vec::new();
    for m in body["messages"].as_array().into_iter().flatten() {
        if m["role"] != "user" {
            continue;
        }
        match &m["content"] {
            Value::String(s) => out.push(s.clone()),
            Value::Array(blocks) => out.extend(
                blocks
                    .iter()
                    .filter_map(|b| b["text"].as_str().map(str::to_string)),
            ),
            _ => {}
        }
    }
    out.join("\n")
}

#[test]
fn i18n_output_translates_the_answer_and_keeps_code_byte_identical() {
    let wire = Wire::Anthropic;
    let sb = sandbox();
    let (_scratch, dir) = built_example(&sb);
    let d = dir.to_str().expect("utf-8 path");
    configure(&sb, "language = \"fr\"\n");

    // Granted: the answer comes out in French, the code exactly as written.
    let server = Server::start(vec![wire.answer(ANSWER), wire.answer(TRANSLATED)]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--skills",
            d,
            "--allow",
            "llm:call",
            "--output",
            "text",
            "--prompt",
            "How do I run the tests?",
        ],
    );
    let stdout = ok(&out);
    assert_eq!(stdout, format!("{EXPECTED}\n"), "{:?}", text(&out));
    assert!(stdout.contains(CODE_BLOCK));

    // What the transform asked the model: French, and placeholders only.
    let request = transform_request(&server);
    let sys = system(&request);
    assert!(sys.contains("into French (fr)"), "{sys}");
    assert!(sys.contains("placeholders"), "{sys}");
    assert_eq!(user_text(&request), PROTECTED);
    let sent = request.to_string();
    for secret in [
        "println!",
        "fn main",
        "cargo test",
        "example.com",
        "src/main.rs",
    ] {
        assert!(!sent.contains(secret), "{secret:?} was sent: {sent}");
    }

    // A model that drops a placeholder: the answer stays untranslated (never
    // half-restored), with the skill's warning in the verbose log.
    let server = Server::start(vec![
        wire.answer(ANSWER),
        wire.answer("Lancez les tests avant de pousser. Voir ⟦2⟧ et ⟦3⟧."),
    ]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--skills",
            d,
            "--allow",
            "llm:call",
            "--output",
            "text",
            "--verbose",
            "--prompt",
            "How do I run the tests?",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    assert_eq!(stdout, format!("{ANSWER}\n"), "{stderr}");
    assert!(
        stderr.contains("did not keep the protected code/URL/path placeholders"),
        "{stderr}"
    );
    assert!(!stderr.contains("characters into French"), "{stderr}");
    assert_eq!(server.bodies().len(), 2);
}

#[test]
fn i18n_output_without_llm_call_or_with_nothing_to_do_leaves_the_answer() {
    let wire = Wire::Anthropic;
    let sb = sandbox();
    let (_scratch, dir) = built_example(&sb);
    let d = dir.to_str().expect("utf-8 path");
    configure(&sb, "language = \"fr\"\n");
    let run = |server: &Server, extra: &[&str]| {
        let mut args = vec!["--skills", d, "--prompt", "How do I run the tests?"];
        args.extend_from_slice(extra);
        run_agent(&sb, wire, server, &args)
    };

    // llm:call not granted: the transform fails, the host skips it with a
    // warning, and the untranslated answer is printed. No translation request.
    let server = Server::start(vec![wire.answer(ANSWER), fail_if_asked()]);
    let out = run(&server, &["--output", "text"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    assert_eq!(stdout, format!("{ANSWER}\n"), "{stderr}");
    assert!(
        stderr.contains("warning: transform `i18n-output` failed"),
        "{stderr}"
    );
    assert!(stderr.contains("llm:call"), "{stderr}");
    assert_eq!(server.bodies().len(), 1, "no request without llm:call");

    // JSON output is never translated, even with the grant: no model request.
    let server = Server::start(vec![wire.answer(ANSWER), fail_if_asked()]);
    let out = run(&server, &["--allow", "llm:call", "--output", "json"]);
    let v: Value = serde_json::from_str(&ok(&out)).expect("json output");
    assert_eq!(v["text"], ANSWER, "{v}");
    assert_eq!(server.bodies().len(), 1, "no request for json output");

    // The configured language is the source one: nothing to translate.
    configure(&sb, "language = \"en-GB\"\n");
    let server = Server::start(vec![wire.answer(ANSWER), fail_if_asked()]);
    let out = run(&server, &["--allow", "llm:call", "--output", "text"]);
    assert_eq!(ok(&out), format!("{ANSWER}\n"));
    assert_eq!(server.bodies().len(), 1, "no request for the same language");
}

/// A reply that would show up in the output if the skill ever asked for it.
fn fail_if_asked() -> Reply {
    Wire::Anthropic.answer("UNEXPECTED TRANSLATION REQUEST")
}

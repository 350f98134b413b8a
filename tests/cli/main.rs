//! The real `agent` binary, end to end: built-in core-tools through the
//! CLI, discovery, keys and signing, permissions, audit, scaffolds.
//!
//! A test target of the `agent` package (declared in host/agent/Cargo.toml),
//! so cargo builds the current binary and names it in `CARGO_BIN_EXE_agent`.

use std::path::Path;
use std::process::Stdio;

use agent_tests::{Sandbox, build_guest, text, tool_manifest, write_skill};

fn sandbox() -> Sandbox {
    Sandbox::with_binary(env!("CARGO_BIN_EXE_agent"))
}

fn ok(out: &std::process::Output) -> String {
    let (stdout, stderr) = text(out);
    assert!(
        out.status.success(),
        "expected success, got {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status.code()
    );
    stdout
}

fn code(out: &std::process::Output) -> i32 {
    out.status.code().unwrap_or(-1)
}

/// Runs `git ARGS` in `dir` as a test author; fails the test when git fails.
/// Returns its standard output, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=Test",
            "-c",
            "user.email=test@example.invalid",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {:?}", text(&out));
    text(&out).0.trim().to_string()
}

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, content).expect("write");
}

#[test]
fn list_shows_core_tools_with_its_permissions() {
    let sb = sandbox();
    let out = sb.agent(&["skill", "list"]);
    let stdout = ok(&out);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("core-tools"))
        .unwrap_or_else(|| panic!("no core-tools row:\n{stdout}"));
    assert!(line.contains("builtin"), "{line}");
    assert!(line.contains("file:read [not granted]"), "{line}");
    assert!(line.contains("shell:exec [not granted]"), "{line}");

    let json = sb.agent(&["skill", "list", "--format", "json", "--allow", "file:read"]);
    let rows: serde_json::Value = serde_json::from_str(&ok(&json)).expect("json");
    let core = rows
        .as_array()
        .and_then(|r| r.iter().find(|s| s["name"] == "core-tools"))
        .expect("core-tools row");
    assert_eq!(core["source"], "builtin");
    assert_eq!(core["signature"]["status"], "builtin");
    assert_eq!(core["permissions"][0]["permission"], "file:read");
    assert_eq!(core["permissions"][0]["status"], "allowed by flag");
}

#[test]
fn core_tools_reads_edits_searches_and_runs_through_the_cli() {
    let sb = sandbox();
    let p = sb.project.path();
    write(p, "src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
    write(p, ".gitignore", "ignored/\n");
    write(p, "ignored/secret.rs", "println!(\"hidden\");\n");

    // No grant: denied, exit 4, and the denial says which flag would grant it.
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "read_file",
        "--input",
        r#"{"path":"src/main.rs"}"#,
    ]);
    assert_eq!(code(&out), 4, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--allow core-tools/file:read"),
        "{}",
        text(&out).1
    );

    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "read_file",
        "--input",
        r#"{"path":"src/main.rs"}"#,
        "--allow",
        "file:read",
    ]);
    assert!(ok(&out).contains("println!(\"hi\");"));

    // edit: exactly one match replaced on disk.
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "edit",
        "--allow",
        "file:write",
        "--input",
        r#"{"path":"src/main.rs","old":"\"hi\"","new":"\"hello\""}"#,
    ]);
    ok(&out);
    let content = std::fs::read_to_string(p.join("src/main.rs")).expect("read");
    assert!(content.contains("println!(\"hello\");"), "{content}");

    // edit with no match: a tool error, exit 1, file unchanged.
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "edit",
        "--allow",
        "file:write",
        "--input",
        r#"{"path":"src/main.rs","old":"nope","new":"x"}"#,
    ]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(text(&out).1.contains("not found"), "{}", text(&out).1);
    assert_eq!(
        std::fs::read_to_string(p.join("src/main.rs")).expect("read"),
        content
    );

    // search honours .gitignore.
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "search",
        "--allow",
        "file:read",
        "--input",
        r#"{"pattern":"println"}"#,
    ]);
    let found = ok(&out);
    assert!(found.contains("src/main.rs:2:"), "{found}");
    assert!(!found.contains("secret.rs"), "{found}");

    // exec through the exec import, scoped grant.
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "exec",
        "--allow",
        "core-tools/shell:exec:echo",
        "--input",
        r#"{"program":"echo","args":["from","exec"]}"#,
    ]);
    assert!(ok(&out).contains("from exec"));
    // ... and a program the grant does not cover is denied.
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "exec",
        "--allow",
        "core-tools/shell:exec:echo",
        "--input",
        r#"{"program":"ls","args":[]}"#,
    ]);
    assert_eq!(code(&out), 4, "{:?}", text(&out));

    // Bad input is a usage error naming the property.
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "read_file",
        "--input",
        r#"{"paht":"x"}"#,
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("missing required property `path`"),
        "{}",
        text(&out).1
    );

    // Every decision and use is in an intact audit chain.
    let out = sb.agent(&["audit", "verify"]);
    assert!(ok(&out).contains("hash chain intact"));
    let log = std::fs::read_to_string(sb.paths().audit_log_path()).expect("audit");
    assert!(log.contains("\"capability\":\"shell:exec\""), "{log}");
    assert!(log.contains("denied:not-allowed"), "{log}");
}

#[test]
fn audit_verify_detects_an_edited_line() {
    let sb = sandbox();
    write(sb.project.path(), "a.txt", "x");
    for _ in 0..2 {
        sb.agent(&[
            "skill",
            "call",
            "core-tools",
            "read_file",
            "--input",
            r#"{"path":"a.txt"}"#,
        ]);
    }
    let path = sb.paths().audit_log_path();
    let log = std::fs::read_to_string(&path).expect("audit");
    assert!(log.lines().count() >= 2, "{log}");
    std::fs::write(&path, log.replacen("denied", "granted", 1)).expect("tamper");
    let out = sb.agent(&["audit", "verify"]);
    assert_eq!(code(&out), 1);
    assert!(text(&out).1.contains("TAMPERED"), "{:?}", text(&out));
}

#[test]
fn discovery_layers_sources_and_skips_broken_skills() {
    let sb = sandbox();
    let key = sb.trusted_key();
    let hello = std::fs::read(build_guest("rust-hello")).expect("rust-hello");
    let hello_manifest = |version: &str| {
        format!(
            "name: hello\nversion: {version}\ndescription: hello\ntypes: [tool]\nimplementation:\n  component: skill.wasm\n"
        )
    };
    write_skill(
        &sb.paths().user_skills_dir().join("hello"),
        &hello_manifest("1.0.0"),
        &hello,
        Some(&key),
    );
    let project_skills = sb.project.path().join(".agent/skills");
    write_skill(
        &project_skills.join("hello"),
        &hello_manifest("2.0.0"),
        &hello,
        Some(&key),
    );
    write(&project_skills, "broken/SKILL.yaml", "name: Broken Name\n");

    // A project skill may take a user skill's name only when allowed.
    let out = sb.agent(&["skill", "list", "--allow-shadow", "hello"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("hello "))
        .expect("hello row");
    assert!(
        row.contains("2.0.0") && row.contains("project"),
        "project overrides user: {row}"
    );
    assert!(stdout.contains("core-tools"), "{stdout}");
    assert!(
        stderr.contains("skipping skill") && stderr.contains("broken"),
        "{stderr}"
    );

    let out = sb.agent(&[
        "skill",
        "call",
        "hello",
        "greet",
        "--input",
        r#"{"name":"Ada"}"#,
        "--allow-shadow",
        "hello",
    ]);
    assert!(ok(&out).contains("Hello, Ada!"));
}

#[test]
fn signing_and_trust_through_the_cli() {
    let sb = sandbox();
    let dir = sb.project.path().join("skill");
    let hello = std::fs::read(build_guest("rust-hello")).expect("rust-hello");
    write_skill(&dir, &tool_manifest("hello", ""), &hello, None);
    let dir_s = dir.to_str().expect("utf8");

    let out = sb.agent(&["skill", "test", dir_s]);
    assert_eq!(code(&out), 1);
    assert!(text(&out).0.contains("not signed"), "{:?}", text(&out));

    // --allow-unsigned: loads a local path, loudly.
    let out = sb.agent(&[
        "skill",
        "call",
        dir_s,
        "greet",
        "--allow-unsigned",
        "--input",
        r#"{"name":"x"}"#,
    ]);
    assert!(ok(&out).contains("Hello, x!"));
    assert!(text(&out).1.contains("UNSIGNED"), "{}", text(&out).1);

    let keys = sb.home.path().join("mykeys");
    let out = sb.agent(&[
        "keys",
        "generate",
        "--name",
        "me",
        "--out",
        keys.to_str().expect("utf8"),
    ]);
    ok(&out);
    let out = sb.agent(&[
        "skill",
        "sign",
        dir_s,
        "--key",
        keys.join("me.key").to_str().expect("utf8"),
    ]);
    ok(&out);
    let out = sb.agent(&["skill", "test", dir_s]);
    assert_eq!(code(&out), 1);
    assert!(
        text(&out).0.contains("agent keys trust"),
        "untrusted: {:?}",
        text(&out)
    );

    ok(&sb.agent(&["keys", "trust", keys.join("me.pub").to_str().expect("utf8")]));
    let out = sb.agent(&["skill", "test", dir_s]);
    let report = ok(&out);
    assert!(report.contains("PASS"), "{report}");
    assert!(ok(&sb.agent(&["keys", "list"])).contains("me"));

    // A flipped byte after signing is refused by every command.
    let wasm = dir.join("skill.wasm");
    let mut bytes = std::fs::read(&wasm).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&wasm, bytes).expect("write");
    let out = sb.agent(&[
        "skill",
        "call",
        dir_s,
        "greet",
        "--input",
        r#"{"name":"x"}"#,
    ]);
    assert_eq!(code(&out), 1);
    assert!(text(&out).1.contains("does not match"), "{}", text(&out).1);
}

#[test]
fn inspect_shows_what_a_skill_could_do() {
    let sb = sandbox();
    let key = sb.trusted_key();
    let hostile = std::fs::read(build_guest("guest-hostile")).expect("hostile");
    let dir = write_skill(
        &sb.project.path().join("h"),
        &tool_manifest(
            "hostile",
            "permissions: [file:read, shell:exec]\nexec: [echo]\n",
        ),
        &hostile,
        Some(&key),
    );
    let out = sb.agent(&["skill", "inspect", dir.to_str().expect("utf8")]);
    let report = ok(&out);
    assert!(
        report.contains(&agent_runtime::contract::LATEST.interface("exec"))
            && report.contains("needs shell:exec (declared)"),
        "{report}"
    );
    assert!(report.contains("signature: valid"), "{report}");
    assert!(
        report.contains("run programs (no shell) inside the project (shell:exec): echo"),
        "{report}"
    );

    let sockets = std::fs::read(build_guest("guest-sockets")).expect("sockets");
    let dir = write_skill(
        &sb.project.path().join("s"),
        &tool_manifest("sockets", ""),
        &sockets,
        Some(&key),
    );
    let out = sb.agent(&["skill", "inspect", dir.to_str().expect("utf8")]);
    assert_eq!(code(&out), 1);
    assert!(text(&out).0.contains("NEVER LINKED"), "{:?}", text(&out));

    let out = sb.agent(&["skill", "inspect", "core-tools"]);
    let report = ok(&out);
    assert!(
        report.contains("built-in") && report.contains("signature: valid"),
        "{report}"
    );
}

#[test]
fn interactive_grants_are_asked_stored_and_revocable() {
    let sb = sandbox();
    write(sb.project.path(), "a.txt", "interactive!");
    // `script` gives the binary a real terminal; the answer goes to its stdin.
    let run = |answer: &str| {
        let mut child = std::process::Command::new("script")
            .args(["-qec"])
            .arg(format!(
                "{} skill call core-tools read_file --input '{{\"path\":\"a.txt\"}}'",
                env!("CARGO_BIN_EXE_agent")
            ))
            .arg("/dev/null")
            .current_dir(sb.project.path())
            .env("AGENT_HOME", sb.home.path())
            .env_remove("CI")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("script");
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(answer.as_bytes()).expect("answer");
        drop(stdin);
        let out = child.wait_with_output().expect("wait");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let first = run("a\n");
    assert!(first.contains("asks for file:read"), "{first}");
    assert!(first.contains("interactive!"), "{first}");
    // Stored: the second run does not ask.
    let second = run("");
    assert!(!second.contains("asks for"), "{second}");
    assert!(second.contains("interactive!"), "{second}");

    let perms = ok(&sb.agent(&["skill", "permissions", "core-tools"]));
    assert!(perms.contains("always"), "{perms}");
    let revoked = ok(&sb.agent(&[
        "skill",
        "permissions",
        "core-tools",
        "--revoke",
        "file:read",
    ]));
    assert!(revoked.contains("revoked 1"), "{revoked}");
    let third = run("d\n");
    assert!(
        third.contains("asks for file:read"),
        "asked again after revoke: {third}"
    );
    assert!(!third.contains("interactive!"), "denied: {third}");
}

#[test]
fn bad_flags_are_usage_errors() {
    let sb = sandbox();
    let out = sb.agent(&["skill", "list", "--allow", "shell:execute"]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out).1.contains("unknown permission `shell:execute`"),
        "{}",
        text(&out).1
    );
    // A scope on a permission that is granted as a whole could never match:
    // refused before anything is set up, so no session is recorded.
    let out = sb.agent(&["run", "-p", "hi", "--allow", "file:read:src"]);
    assert_eq!(code(&out), 2, "{}", text(&out).1);
    assert!(
        text(&out)
            .1
            .contains("invalid --allow value `file:read:src`: file:read takes no scope"),
        "{}",
        text(&out).1
    );
    let sessions = sb.agent(&["sessions", "list"]);
    assert_eq!(code(&sessions), 0, "{}", text(&sessions).1);
    assert!(
        text(&sessions).0.to_lowercase().contains("no sessions"),
        "{}",
        text(&sessions).0
    );
    let caps = sb.project.path().join("caps.yaml");
    std::fs::write(
        &caps,
        "allow:\n  - file:read\n  - net:fetch:not-an-origin\n",
    )
    .expect("write");
    let out = sb.agent(&[
        "skill",
        "list",
        "--capabilities",
        caps.to_str().expect("utf8"),
    ]);
    assert_eq!(code(&out), 2);
    assert!(text(&out).1.contains("caps.yaml:3"), "{}", text(&out).1);
    let out = sb.agent(&["skill", "call", "nope", "x"]);
    assert_eq!(code(&out), 1);
    assert!(
        text(&out).1.contains("no skill named `nope`"),
        "{}",
        text(&out).1
    );
}

// Scaffolds of every type and language: authoring.rs.

#[test]
fn the_js_example_runs_in_the_host() {
    let sb = sandbox();
    let example = agent_tests::workspace().join("sdk-guest-examples/js-hello");
    let status = std::process::Command::new(example.join("ensure-built.sh"))
        .stdout(Stdio::null())
        .status()
        .expect("ensure-built.sh");
    assert!(status.success(), "building the JS example failed");
    // Sign a copy (the example's own dist/ stays as built).
    let key = sb.trusted_key();
    let dir = sb.project.path().join("js-hello");
    std::fs::create_dir_all(dir.join("dist")).expect("mkdir");
    std::fs::copy(example.join("SKILL.yaml"), dir.join("SKILL.yaml")).expect("copy");
    agent_tests::copy_tree(&example.join("schemas"), &dir.join("schemas"));
    let bytes = std::fs::read(example.join("dist/js_hello.wasm")).expect("wasm");
    std::fs::write(dir.join("dist/js_hello.wasm"), bytes).expect("write");
    agent_tests::sign_skill_dir(&dir, &key);
    let d = dir.to_str().expect("utf8");
    assert!(ok(&sb.agent(&["skill", "test", d])).contains("PASS"));
    let out = ok(&sb.agent(&[
        "skill",
        "call",
        d,
        "slugify",
        "--input",
        r#"{"text":"Hello, World!"}"#,
    ]));
    assert!(out.contains("hello-world"), "{out}");
}

#[test]
fn config_show_reflects_the_file_and_env_and_hides_keys() {
    let sb = sandbox();
    let path = ok(&sb.agent(&["config", "path"]));
    assert_eq!(
        Path::new(path.trim()),
        sb.paths().config_file(),
        "config path"
    );
    write(
        &sb.paths().config_dir,
        "config.toml",
        "[agent]\nmax_turns = 12\napproval_mode = \"deny\"\n\n[skills]\nauto_approve = [\"git\"]\n\n[skills.config.kubernetes]\ndefault_namespace = \"staging\"\n",
    );
    let secret = "sk-ant-test-SECRET-value-0123456789";
    let run = |format: &str| {
        sb.agent_cmd(&["config", "show", "--format", format])
            .env("AGENT_MODEL", "claude-opus-test")
            .env("ANTHROPIC_API_KEY", secret)
            .env_remove("OPENAI_API_KEY")
            .env_remove("AGENT_MAX_TURNS")
            .env_remove("AGENT_PROVIDER")
            .output()
            .expect("running agent")
    };
    let out = run("json");
    let stdout = ok(&out);
    assert!(!stdout.contains(secret), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(v["config"]["agent"]["max_turns"], 12);
    assert_eq!(v["config"]["agent"]["approval_mode"], "deny");
    assert_eq!(v["config"]["provider"]["model"], "claude-opus-test");
    assert_eq!(v["config"]["skills"]["auto_approve"][0], "git");
    assert_eq!(
        v["config"]["skills"]["config"]["kubernetes"]["default_namespace"],
        "staging"
    );
    assert_eq!(v["api_keys"]["anthropic"]["set"], true);
    assert_eq!(v["api_keys"]["openai"]["set"], false);

    let out = run("text");
    let stdout = ok(&out);
    let (_, stderr) = text(&out);
    assert!(
        !stdout.contains(secret) && !stderr.contains(secret),
        "{stdout}"
    );
    assert!(stdout.contains("max_turns = 12"), "{stdout}");
    assert!(stdout.contains("model = \"claude-opus-test\""), "{stdout}");
    assert!(stdout.contains("$ANTHROPIC_API_KEY is set"), "{stdout}");
}

#[test]
fn a_bad_config_value_fails_with_file_line_and_key() {
    let sb = sandbox();
    write(
        &sb.paths().config_dir,
        "config.toml",
        "[provider]\ndefault = \"anthropic\"\n\n[agent]\nmax_turns = 0\n",
    );
    let out = sb.agent(&["config", "show"]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(stderr.contains("config.toml:5"), "{stderr}");
    assert!(stderr.contains("agent.max_turns"), "{stderr}");
    // Commands that need the configuration fail the same way; `config path` still works.
    let out = sb.agent(&["skill", "call", "core-tools", "read_file", "--input", "{}"]);
    assert_eq!(code(&out), 1);
    assert!(text(&out).1.contains("agent.max_turns"), "{:?}", text(&out));
    ok(&sb.agent(&["config", "path"]));
}

// `agent run` and `agent sessions` against the scripted model server.
mod run;
// Resuming a session after `kill -9`.
mod resume;
// Piped standard input attached to a `--prompt` task.
mod stdin_task;
// `agent.approval_mode` and the keys refused because they would do nothing.
mod approval_mode;
// Where the provider API key comes from.
mod api_keys;
// One question per `exec` call.
mod exec_questions;
// A broken or hostile model server: bad tool arguments, huge responses, too many calls, cut streams.
mod model_faults;
// `agent workflow` and workflows as tools in `agent run`.
mod workflow;

// Skills in the agent loop: hooks, prompt skills, constraints, transforms.
mod skills;

// Skills taking a built-in's name: refused unless --allow-shadow / skills.allow_shadow.
mod shadow;

// Budgets of skills' model requests per turn, from config.toml, through `agent run`.
mod budgets;

// The skill registry: publish, git-served index, install/update/remove, refused attacks.
mod registry;

// The versioned agent:skill contract: published 0.1.0 components, a 0.2.0 hook-only skill.
mod contract;

// The built-in git skill with a hostile global git configuration.
mod git_config;
// Host stack traces (RUST_BACKTRACE=1) never reach a skill or the model.
mod backtraces;
// Crash-safe installs: killed at each rename, interrupted, never a ghost skill.
mod install_faults;
// The signature covers SKILL.yaml: edited installs and sources are refused; 0.1.0 signatures.
mod manifest_signing;

// `agent security-audit`: fixture repositories with exact findings, thresholds, schemas.
mod security;
// `agent review`: a two-commit repository, findings through report_finding.
mod review;
// `agent security-audit --deep`: risk ranking, budget, redaction, attack chains.
mod deep;
// Hostile trees: bounded findings, unreadable directories, Latin-1 (issue 13).
mod security_limits;
// `--scanners secrets`: only the named scanners run; unknown names list the valid ones.
mod security_scanners;

// Deeply nested YAML (.security.yaml, --capabilities) refused by its limits, not a stack overflow.
mod bounded_input;

// agent.redb shared by many processes at once, and damaged (zeroed pages): `agent doctor`.
mod store;

// The interactive interface in tmux: prompt, approval dialogs, answer, edited file.
mod tui;

// Skill authoring: `agent skill create` and `agent skill build` in every language and type.
mod authoring;

// The exec import through the binary: the host's PATH, the configured program time limit.
mod exec_limits;

// A tampered component cache and a full disk, through the binary.
mod cache;

// The spec's example skills, built from source and run through the real host.
mod example_database;
mod example_ddd_expert;
mod example_i18n_output;
mod example_kubernetes;
mod example_rfc_writer;

#[test]
fn git_skill_reads_and_commits_through_the_typed_imports() {
    let sb = sandbox();
    let p = sb.project.path();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(p)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .output()
            .expect("running git");
        ok(&out)
    };
    git(&["init", "-q"]);
    git(&["config", "user.name", "Test User"]);
    git(&["config", "user.email", "test@example.com"]);
    git(&["config", "commit.gpgsign", "false"]);
    write(p, "notes.txt", "first line\n");
    git(&["add", "notes.txt"]);
    git(&["commit", "-q", "-m", "initial notes"]);
    write(p, "notes.txt", "first line\nsecond line\n");

    // `agent skill list` shows the built-in.
    let stdout = ok(&sb.agent(&["skill", "list"]));
    let line = stdout
        .lines()
        .find(|l| l.starts_with("git "))
        .unwrap_or_else(|| panic!("no git row:\n{stdout}"));
    assert!(line.contains("builtin"), "{line}");

    let call = |tool: &str, input: &str, allow: &[&str]| {
        let mut args = vec!["skill", "call", "git", tool, "--input", input];
        for a in allow {
            args.extend(["--allow", a]);
        }
        sb.agent(&args)
    };

    let out = call("git_status", "{}", &["git:read"]);
    let stdout = ok(&out);
    assert!(stdout.contains(" M notes.txt"), "{stdout}");

    let out = call("git_diff", "{}", &["git:read"]);
    let stdout = ok(&out);
    assert!(stdout.contains("+second line"), "{stdout}");

    let out = call("git_log", r#"{"max":5}"#, &["git:read"]);
    let stdout = ok(&out);
    assert!(stdout.contains("initial notes"), "{stdout}");
    assert!(stdout.contains("Test User"), "{stdout}");

    // Without git:write the commit is denied, and nothing is committed.
    let input = r#"{"message":"add a second line","paths":["notes.txt"]}"#;
    let out = call("git_commit", input, &["git:read"]);
    assert_eq!(code(&out), 4, "{:?}", text(&out));
    assert!(!git(&["log", "--format=%s"]).contains("add a second line"));

    let out = call("git_commit", input, &["git:write"]);
    let stdout = ok(&out);
    assert!(stdout.contains("committed"), "{stdout}");
    let log = git(&["log", "--format=%s"]);
    assert_eq!(log.lines().next(), Some("add a second line"), "{log}");
    assert!(git(&["status", "--porcelain"]).trim().is_empty());
}
// A damaged audit log and `agent audit rotate`.
mod audit_log;
// `--allow` scopes that could never match, and error chains that repeat their cause.
mod input_errors;
// A newcomer's rough edges: log colours, commands named in the docs, global flags.
mod newcomer;
// Issue 15, item 8: shell completions and the man page.
mod completions;
// Issue 15, item 13: the spec's headless spellings (--headless, --approve-skills, --tools short names).
mod headless;
// `agent skill install` sources: forge shorthands as git, unsigned directories.
mod install_sources;
// core-tools accepts the host's absolute path of a project file; everything else stays refused.
mod project_paths;
// A fresh home: listing compiles nothing, built-ins come precompiled.
mod cold_start;
// A fresh checkout stays as committed: the JS example installs with `npm ci` only.
mod checkout;
mod logs;

/// `agent run` against a loopback model at `url` speaking the Anthropic
/// wire (`test-model`), printing JSON lines, with a 120 s limit; then `extra`.
pub(crate) fn run_jsonl<'a>(url: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--provider",
        "anthropic",
        "--model",
        "test-model",
        "--base-url",
        url,
        "--output",
        "jsonl",
        "--timeout",
        "120s",
    ];
    args.extend_from_slice(extra);
    args
}

// SKILL.md instruction skills, the content scan, the writable store (issue 20, items 2-4).
mod skillmd;
mod skillmd_fork;
mod skillmd_index_ops;
mod skillmd_registry;

// MCP servers (issue 20, item 1): config.toml and .mcp.json, grants, real npm servers, failures.
mod mcp;

// MCP tools in a model turn.
mod mcp_run;

// docs/ci/: the GitHub, GitLab and Jenkins examples checked and their `agent` commands run (issue 17, item 4).
mod ci_examples;

// `agent review`'s smaller gaps (issue 17): --jobs, demoted findings, --base, Ollama, run-mode formats, --since/--until.
mod review_more;
// The built-in apple-dev skill (issue 19, items 1, 2, 3, 6): fake Xcode programs on PATH, platform gating.
mod apple_dev;

// The README's `./run`: the toolchain check first, on its own (issue 15).
mod run_script;

// Issue 16, items 1-2: every dotfile walked, exclusions counted, the labelled secrets tree.
mod secrets;
// iOS security rules (Swift and Objective-C) and the plist/entitlements scanner (issue 19, item 5).
mod ios_security;

// Issue 16, items 3–4: the taint engine through the real binary.
mod taint;
mod taint_php;
// Issue 16, item 5: the labelled corpus scored per category and language (TPR, FPR, Youden) against a floor.
mod security_corpus;
// Issue 16, item 5: the development corpus (tests/fixtures/security/manifest.yaml) scored by its sink-line rule against a floor.
mod security_corpus_dev;
// Issue 18: the wiki generator (`agent wiki`).
mod wiki;

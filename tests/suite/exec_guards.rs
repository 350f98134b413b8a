//! A hostile skill against the `exec` import's guards (`guest-exec-hostile`:
//! any program, arguments, environment and time limit). Allowing one program
//! must not allow every program: each test asserts the exact refusal, that
//! nothing ran (no marker file), and what the audit log recorded.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_policy::{Answer, ApprovalRequest, Approver, AuditLog, Grants};
use agent_runtime::{CallContext, GrantsAuthorizer, LoadError, Skill, SkillError};
use serde_json::json;

use crate::common::{Harness, guest};

const MARKER: &str = "PWNED";

/// The first executable `name` on this process's PATH: the file the host
/// must run, whatever the skill or the project says.
pub(crate) fn host_program(name: &str) -> String {
    let path = std::env::var_os("PATH").expect("PATH is set");
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` is not on PATH"))
        .to_string_lossy()
        .into_owned()
}

fn load(h: &Harness, name: &str, extra: &str) -> Result<Skill, LoadError> {
    h.load_guest(&guest("guest-exec-hostile"), name, extra)
}

/// Runs `run` and expects the host to refuse it; returns the refusal text.
async fn refused(h: &Harness, skill: &Skill, input: serde_json::Value) -> String {
    match h.call_tool_err(skill, "run", input.clone()).await {
        SkillError::Denied(text) => {
            println!("{input} -> {text}");
            text
        }
        other => panic!("expected a denial for {input}, got {other:?}"),
    }
}

/// The audit entries of `skill` as `(capability, target, decision)`, by the
/// capability.
fn audited(h: &Harness, skill: &str, capability: &str) -> Vec<(String, String)> {
    h.audit_of(skill)
        .into_iter()
        .filter(|(c, _, _)| c == capability)
        .map(|(_, t, d)| (t, d))
        .collect()
}

// 1. `exec: [git]` must not mean "git, and whatever a git alias runs".
#[tokio::test]
async fn git_config_on_the_command_line_is_refused_and_nothing_runs() {
    let h = Harness::new(&["shell:exec"]);
    let skill = load(&h, "git-alias", "permissions: [shell:exec]\nexec: [git]\n").expect("load");

    // The attack: a shell alias given with -c, then called.
    let text = refused(
        &h,
        &skill,
        json!({"program": "git", "args": ["-c", format!("alias.x=!touch {MARKER}"), "x"]}),
    )
    .await;
    assert_eq!(
        text,
        "CapabilityError::Denied(\"`git -c` sets configuration or the program path, which can run commands (refused by the host's argument guard, see docs/permissions.md)\")"
    );
    // The same through the other spellings.
    for args in [
        json!([format!("-calias.x=!touch {MARKER}"), "x"]),
        json!(["--config-env=alias.x=HOME", "x"]),
        json!(["config", "alias.x", format!("!touch {MARKER}")]),
        json!(["clone", "-u", format!("touch {MARKER}"), "a", "b"]),
        json!(["fetch", format!("--upload-pack=touch {MARKER}"), "origin"]),
    ] {
        let text = refused(&h, &skill, json!({"program": "git", "args": args})).await;
        assert!(
            text.contains("refused by the host's argument guard"),
            "{text}"
        );
    }
    assert!(!h.project().join(MARKER).exists(), "the alias ran");

    // Plain git still runs, from the host's PATH.
    let out = h
        .call_ok(
            &skill,
            "run",
            json!({"program": "git", "args": ["--version"]}),
        )
        .await;
    assert!(out.contains("git version"), "{out}");

    let git = host_program("git");
    let entries = audited(&h, "git-alias", "shell:exec");
    assert_eq!(
        entries[0],
        (
            format!("git -c \"alias.x=!touch {MARKER}\" x"),
            "denied: `git -c` sets configuration or the program path, which can run commands"
                .to_string()
        )
    );
    assert_eq!(
        entries[entries.len() - 2..],
        [
            (
                format!("run `{git} --version`"),
                "granted:allowlist".to_string()
            ),
            (format!("{git} --version"), "exit 0".to_string()),
        ]
    );
    // Refusals are the host's, not grant decisions.
    assert!(h.grants.denials().is_empty(), "{:?}", h.grants.denials());
}

// 2. Programs whose options run other programs or code.
#[tokio::test]
async fn find_exec_xargs_env_and_interpreter_code_are_refused() {
    let h = Harness::new(&["shell:exec"]);
    // No `exec:` list: any program — but none of these spellings.
    let skill = load(&h, "runner", "permissions: [shell:exec]\n").expect("load");
    let cases = [
        (
            json!({"program": "find", "args": [".", "-maxdepth", "0", "-exec", "touch", MARKER, ";"]}),
            "`find -exec` runs another program or code given as an argument",
        ),
        (
            json!({"program": "xargs", "args": ["touch", MARKER]}),
            "`xargs` runs other programs; name the program it would run in `exec` and run it directly",
        ),
        (
            json!({"program": "env", "args": ["touch", MARKER]}),
            "`env` runs other programs; name the program it would run in `exec` and run it directly",
        ),
        (
            json!({"program": "sh", "args": ["-c", format!("touch {MARKER}")]}),
            "`sh -c` runs code given as an argument",
        ),
        (
            json!({"program": "/bin/sh", "args": ["-ec", format!("touch {MARKER}")]}),
            "`sh -ec` runs code given as an argument",
        ),
        (
            json!({"program": "python3", "args": ["-c", format!("open('{MARKER}', 'w')")]}),
            "`python3 -c` runs code given as an argument",
        ),
    ];
    for (input, why) in cases {
        let text = refused(&h, &skill, input).await;
        assert!(text.contains(why), "{text}");
        assert!(!h.project().join(MARKER).exists(), "{why}: it ran");
    }
    let denied: Vec<String> = audited(&h, "runner", "shell:exec")
        .into_iter()
        .map(|(_, d)| d)
        .collect();
    assert_eq!(denied.len(), 6, "{denied:?}");
    assert!(
        denied.iter().all(|d| d.starts_with("denied: `")),
        "{denied:?}"
    );
}

// 3a. Loader and search-path variables: refused when the manifest lists them.
#[tokio::test]
async fn env_write_of_loader_and_path_variables_is_refused_in_the_manifest() {
    let h = Harness::new(&["shell:exec", "env:write"]);
    for (name, why) in [
        (
            "LD_PRELOAD",
            "it makes the dynamic loader load or look up native code",
        ),
        ("PATH", "it changes which program a name runs"),
    ] {
        let err = load(
            &h,
            "env-loader",
            &format!("permissions: [shell:exec, env:write]\nexec: [echo]\nenv: [{name}]\n"),
        )
        .expect_err("the manifest must be refused");
        let text = err.to_string();
        println!("{text}");
        assert!(
            text.contains(&format!(
                "SKILL.yaml:9: field `env[0]`: `{name}` cannot be passed to programs with `env:write`: {why}; remove it from `env`"
            )),
            "{text}"
        );
    }
}

// 3b. ... and at call time, whatever the manifest lists: a skill's .so or a
// project `bin/` never reaches a program.
#[tokio::test]
async fn env_write_of_loader_and_path_variables_is_refused_at_call_time() {
    let h = Harness::new(&["shell:exec", "env:write"]);
    let bin = h.project().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::write(bin.join("evil.so"), "not really a library").expect("so");
    let skill = load(
        &h,
        "env-call",
        "permissions: [shell:exec, env:write]\nexec: [echo]\nenv: [KUBECONFIG]\n",
    )
    .expect("load");
    for (name, value, why) in [
        (
            "LD_PRELOAD",
            "/project/bin/evil.so",
            "it makes the dynamic loader load or look up native code",
        ),
        (
            "PATH",
            "/project/bin",
            "it changes which program a name runs",
        ),
    ] {
        let text = refused(
            &h,
            &skill,
            json!({"program": "echo", "args": ["hi"], "env": {name: value}}),
        )
        .await;
        assert!(
            text.contains(&format!(
                "variable `{name}` cannot be passed to programs: {why} (the host refuses it whatever the grants)"
            )),
            "{text}"
        );
    }
    assert_eq!(
        audited(&h, "env-call", "env:write"),
        vec![
            (
                "LD_PRELOAD".to_string(),
                "denied: it makes the dynamic loader load or look up native code".to_string()
            ),
            (
                "PATH".to_string(),
                "denied: it changes which program a name runs".to_string()
            ),
        ]
    );
    // Neither reached a program: nothing ran, nothing was granted.
    assert!(audited(&h, "env-call", "shell:exec").is_empty());
}

// 4. A program path inside the project, or relative, never runs.
#[tokio::test]
async fn a_program_inside_the_project_is_never_run() {
    let h = Harness::new(&["shell:exec"]);
    let echo = h.project().join("bin").join("echo");
    std::fs::create_dir_all(echo.parent().expect("bin")).expect("bin");
    agent_tests::write_executable(&echo, &format!("#!/bin/sh\ntouch {MARKER}\n"));
    let skill = load(&h, "project-bin", "permissions: [shell:exec]\n").expect("load");

    let text = refused(
        &h,
        &skill,
        json!({"program": echo.to_string_lossy(), "args": ["hi"]}),
    )
    .await;
    assert!(
        text.contains("is inside the project; programs a skill could have written are not run"),
        "{text}"
    );
    assert!(!h.project().join(MARKER).exists(), "the project's echo ran");

    // The bare name runs the host's echo.
    let out = h
        .call_ok(&skill, "run", json!({"program": "echo", "args": ["hi"]}))
        .await;
    let out: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(out["stdout"], "hi\n");
    assert!(!h.project().join(MARKER).exists(), "the project's echo ran");
    let echo_host = host_program("echo");
    assert!(
        audited(&h, "project-bin", "shell:exec")
            .contains(&(format!("{echo_host} hi"), "exit 0".to_string())),
        "{:?}",
        audited(&h, "project-bin", "shell:exec")
    );
}

/// Answers "once" and keeps every question it was asked.
#[derive(Default)]
struct Recorder(Mutex<Vec<ApprovalRequest>>);

impl Approver for Recorder {
    fn ask(&self, req: &ApprovalRequest) -> Answer {
        self.0.lock().expect("lock").push(req.clone());
        Answer::Once
    }
}

// 5. The question names the file that will run, and so does the audit.
#[tokio::test]
async fn the_question_and_the_audit_name_the_absolute_program() {
    let mut h = Harness::new(&[]);
    let store = Arc::new(agent_store::Store::open(h.sandbox.paths().db_path()).expect("store"));
    let audit = Arc::new(AuditLog::open(h.sandbox.paths().audit_log_path()).expect("audit"));
    let recorder = Arc::new(Recorder::default());
    let grants = Arc::new(Grants::interactive(store, recorder.clone(), audit));
    let authorizer = Arc::new(GrantsAuthorizer::new(Arc::clone(&grants)));
    h.ctx = Arc::new(CallContext::new(h.project(), "cli", authorizer).expect("ctx"));
    h.grants = grants;
    let skill = load(&h, "asker", "permissions: [shell:exec]\nexec: [echo]\n").expect("load");

    h.call_ok(&skill, "run", json!({"program": "echo", "args": ["hi"]}))
        .await;

    let echo = host_program("echo");
    let asked = recorder.0.lock().expect("lock").clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].scope.as_deref(), Some("echo"));
    assert_eq!(asked[0].detail, format!("run `{echo} hi`"));
    assert_eq!(
        audited(&h, "asker", "shell:exec"),
        vec![
            (format!("run `{echo} hi`"), "granted:user-once".to_string()),
            (format!("{echo} hi"), "exit 0".to_string()),
        ]
    );
}

// 6. The manifest's `exec_timeout` is each program's limit, within the
// host's maximum.
#[tokio::test]
async fn the_manifest_exec_timeout_kills_a_program_and_a_too_long_one_is_refused() {
    let h = Harness::new(&["shell:exec"]);
    let skill = load(
        &h,
        "sleeper",
        "permissions: [shell:exec]\nexec: [sleep]\nexec_timeout: 1s\n",
    )
    .expect("load");
    let started = Instant::now();
    let out = h
        .call_ok(&skill, "run", json!({"program": "sleep", "args": ["20"]}))
        .await;
    let elapsed = started.elapsed();
    println!("{out} after {elapsed:?}");
    let out: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(out["timed_out"], true, "{out}");
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    let sleep = host_program("sleep");
    assert!(
        audited(&h, "sleeper", "shell:exec")
            .contains(&(format!("{sleep} 20"), "timed out after 1000 ms".to_string())),
        "{:?}",
        audited(&h, "sleeper", "shell:exec")
    );

    let err = load(
        &h,
        "sleeper-long",
        "permissions: [shell:exec]\nexec: [sleep]\nexec_timeout: 10m\n",
    )
    .expect_err("above the host's maximum");
    assert!(
        err.to_string().contains(
            "SKILL.yaml:9: field `exec_timeout`: `10m` is longer than the host's maximum for a program (120 s)"
        ),
        "{err}"
    );
}

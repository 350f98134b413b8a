//! A hostile skill against the sandbox: each test asserts the exact refusal
//! (or containment) and what the audit log recorded.

use std::time::{Duration, Instant};

use agent_manifest::Permission;
use agent_runtime::{CallError, FileAccess, Limits, LoadError, Mismatch};
use serde_json::json;

use crate::common::{Harness, guest, skill_error_text};

const SECRET: &str = "TOP-SECRET-8f1d2c";

/// A directory outside the project holding `secret.txt`.
fn outside_secret() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("outside dir");
    std::fs::write(dir.path().join("secret.txt"), SECRET).expect("writing the secret");
    dir
}

/// Audit entries of `capability` for `skill`, as `(target, decision)`.
fn audited(h: &Harness, skill: &str, capability: &str) -> Vec<(String, String)> {
    h.audit_of(skill)
        .into_iter()
        .filter(|(c, _, _)| c == capability)
        .map(|(_, t, d)| (t, d))
        .collect()
}

// 1. A write with only file:read granted fails inside the guest.
#[tokio::test]
async fn write_with_only_file_read_is_refused_by_the_read_only_mount() {
    let h = Harness::new(&["file:read"]);
    let skill = h
        .load_hostile("ro-writer", "permissions: [file:read, shell:exec]\n")
        .expect("load");

    let mut inst = h
        .runtime
        .instantiate(&skill, &h.ctx)
        .await
        .expect("instance");
    assert_eq!(inst.file_access(), Some(FileAccess::ReadOnly));
    let result = inst
        .call_tool("write", &json!({"path": "/project/x.txt"}).to_string())
        .await
        .expect("a refused write is a tool error, not a host error");
    let err = result.expect_err("the write must fail");
    let text = skill_error_text(&err);
    println!("write refusal: {text}");
    assert!(text.starts_with("write failed: "), "{text}");
    assert!(
        text.contains("Operation not permitted") || text.contains("Read-only file system"),
        "expected a permission error, got: {text}"
    );
    assert!(
        !h.project().join("x.txt").exists(),
        "x.txt was written on the host"
    );

    let file_read = audited(&h, "ro-writer", "file:read");
    assert_eq!(file_read.len(), 1, "{file_read:?}");
    assert_eq!(file_read[0].1, "granted:allowlist");
    assert!(file_read[0].0.contains(&h.project().display().to_string()));
    assert!(
        audited(&h, "ro-writer", "file:write").is_empty(),
        "file:write was never declared, so never granted: {:?}",
        h.audit_of("ro-writer")
    );
}

// 1b. The control: with file:write declared and granted the same tool writes.
#[tokio::test]
async fn write_with_file_write_granted_writes() {
    let h = Harness::new(&["file:write"]);
    let skill = h
        .load_hostile("rw-writer", "permissions: [file:write, shell:exec]\n")
        .expect("load");
    let out = h
        .call_ok(&skill, "write", json!({"path": "/project/x.txt"}))
        .await;
    assert_eq!(out, "written");
    assert_eq!(
        std::fs::read_to_string(h.project().join("x.txt")).expect("x.txt"),
        "pwned"
    );
    assert_eq!(
        audited(&h, "rw-writer", "file:write")
            .into_iter()
            .map(|(_, d)| d)
            .collect::<Vec<_>>(),
        vec!["granted:allowlist"]
    );
}

// 2. `..` and symlinks out of the project are refused; a symlink inside works.
#[tokio::test]
async fn dotdot_and_symlink_escapes_are_refused_but_inner_symlinks_work() {
    let h = Harness::new(&["file:read"]);
    let outside = outside_secret();
    let skill = h
        .load_hostile("escaper", "permissions: [file:read, shell:exec]\n")
        .expect("load");

    // The secret exists, next to the project: `/project/../<dir>/secret.txt`
    // names it exactly on the host.
    let outside_dir = outside.path().canonicalize().expect("canonical outside");
    assert_eq!(
        outside_dir.parent(),
        h.project().parent(),
        "both temp dirs share a parent"
    );
    let name = outside_dir
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let dotdot = format!("/project/../{name}/secret.txt");
    let err = h
        .call_tool_err(&skill, "read", json!({"path": dotdot}))
        .await;
    let text = skill_error_text(&err);
    println!("`..` refusal: {text}");
    assert!(text.starts_with("read failed: "), "{text}");
    assert!(!text.contains(SECRET), "{text}");

    // The secret's absolute host path is not in the guest's filesystem.
    let absolute = outside_dir.join("secret.txt").display().to_string();
    let err = h
        .call_tool_err(&skill, "read", json!({ "path": absolute }))
        .await;
    let text = skill_error_text(&err);
    println!("absolute path refusal: {text}");
    assert!(text.starts_with("read failed: "), "{text}");
    assert!(!text.contains(SECRET), "{text}");

    // A symlink inside the project pointing at the secret outside.
    std::os::unix::fs::symlink(outside_dir.join("secret.txt"), h.project().join("leak.txt"))
        .expect("symlink");
    // And a relative one climbing out.
    std::os::unix::fs::symlink(
        format!("../{name}/secret.txt"),
        h.project().join("leak-rel.txt"),
    )
    .expect("symlink");
    for link in ["/project/leak.txt", "/project/leak-rel.txt"] {
        let err = h.call_tool_err(&skill, "read", json!({"path": link})).await;
        let text = skill_error_text(&err);
        println!("symlink refusal ({link}): {text}");
        assert!(text.starts_with("read failed: "), "{text}");
        assert!(!text.contains(SECRET), "{text}");
    }

    // A symlink that stays inside the project is followed.
    std::fs::create_dir(h.project().join("sub")).expect("mkdir");
    std::fs::write(h.project().join("sub/real.txt"), "inside content").expect("write");
    std::os::unix::fs::symlink("sub/real.txt", h.project().join("inner.txt")).expect("symlink");
    let out = h
        .call_ok(&skill, "read", json!({"path": "/project/inner.txt"}))
        .await;
    assert_eq!(out, "inside content");
    // The secret still exists on the host (nothing was moved to let it pass).
    assert_eq!(
        std::fs::read_to_string(outside_dir.join("secret.txt")).expect("secret"),
        SECRET
    );
}

// 3. Only the variables named in the manifest reach the guest.
#[tokio::test]
async fn env_vars_not_named_in_the_manifest_are_unset() {
    const ALLOWED: &str = "AGENT_SUITE_ENV_ALLOWED_VAR";
    const SECRET_VAR: &str = "AGENT_SUITE_ENV_SECRET_TOKEN";
    // SAFETY: these names are used by this test only; nothing else in the
    // process reads or writes them.
    unsafe {
        std::env::set_var(ALLOWED, "visible-value");
        std::env::set_var(SECRET_VAR, "secret-token-value");
    }
    let h = Harness::new(&["env:read"]);
    let skill = h
        .load_hostile(
            "env-reader",
            &format!("permissions: [env:read, shell:exec]\nenv: [{ALLOWED}]\n"),
        )
        .expect("load");
    let mut inst = h
        .runtime
        .instantiate(&skill, &h.ctx)
        .await
        .expect("instance");
    let call = |name: &str| json!({ "name": name }).to_string();
    let seen = inst.call_tool("env", &call(ALLOWED)).await.expect("call");
    assert_eq!(seen.expect("env").text, "visible-value");
    let hidden = inst
        .call_tool("env", &call(SECRET_VAR))
        .await
        .expect("call");
    assert_eq!(hidden.expect("env").text, "<unset>");
    // The guest gets no other host variable either.
    let path = inst.call_tool("env", &call("PATH")).await.expect("call");
    assert_eq!(path.expect("env").text, "<unset>");

    let env = audited(&h, "env-reader", "env:read");
    assert_eq!(
        env,
        vec![(
            format!("read environment variable {ALLOWED}"),
            "granted:allowlist".to_string()
        )]
    );
    assert!(
        !h.audit().iter().any(|e| e.target.contains(SECRET_VAR)),
        "the unnamed variable was never even asked about"
    );
}

// 3b. A named variable is not passed when env:read is declared but not granted.
#[tokio::test]
async fn env_vars_named_but_not_granted_are_unset() {
    const NAMED: &str = "AGENT_SUITE_ENV_NAMED_UNGRANTED";
    // SAFETY: used by this test only.
    unsafe { std::env::set_var(NAMED, "should-not-be-seen") };
    let h = Harness::new(&[]);
    let skill = h
        .load_hostile(
            "env-ungranted",
            &format!("permissions: [env:read, shell:exec]\nenv: [{NAMED}]\n"),
        )
        .expect("load");
    let out = h.call_ok(&skill, "env", json!({ "name": NAMED })).await;
    assert_eq!(out, "<unset>");
    assert_eq!(
        audited(&h, "env-ungranted", "env:read"),
        vec![(
            format!("read environment variable {NAMED}"),
            "denied:not-allowed".to_string()
        )]
    );
}

// 4. shell:exec declared but not granted: the import answers `denied`.
#[tokio::test]
async fn exec_declared_but_not_granted_is_denied_and_recorded() {
    let h = Harness::new(&["file:read"]);
    let skill = h
        .load_hostile("exec-ungranted", "permissions: [shell:exec]\n")
        .expect("load");
    let err = h
        .call_tool_err(&skill, "exec", json!({"program": "echo", "args": ["hi"]}))
        .await;
    let agent_runtime::SkillError::Denied(text) = &err else {
        panic!("expected a denial, got {err:?}")
    };
    println!("exec refusal: {text}");
    assert!(
        text.starts_with("CapabilityError::Denied("),
        "the capability error is `denied`: {text}"
    );
    assert!(
        text.contains(
            "exec-ungranted was not granted shell:exec (echo) in this non-interactive run; grant it with --allow exec-ungranted/shell:exec:echo"
        ),
        "{text}"
    );

    let denials = h.grants.denials();
    assert_eq!(denials.len(), 1, "{denials:?}");
    let d = &denials[0];
    assert_eq!(d.skill, "exec-ungranted");
    assert_eq!(d.permission, Permission::ShellExec);
    assert_eq!(d.scope.as_deref(), Some("echo"));
    assert_eq!(
        d.allow_flag.as_deref(),
        Some("exec-ungranted/shell:exec:echo")
    );

    // The question names the file that would run (the host's echo).
    let echo = crate::exec_guards::host_program("echo");
    assert_eq!(
        audited(&h, "exec-ungranted", "shell:exec"),
        vec![(format!("run `{echo} hi`"), "denied:not-allowed".to_string())],
        "one denial and no use"
    );
}

// 5. A program outside the manifest's `exec:` allowlist is refused; a listed one runs.
#[tokio::test]
async fn exec_outside_the_allowlist_is_refused_and_a_listed_program_runs() {
    let h = Harness::new(&["shell:exec"]);
    let secret = h.project().join("notes.txt");
    std::fs::write(&secret, SECRET).expect("write");
    let skill = h
        .load_hostile("exec-listed", "permissions: [shell:exec]\nexec: [echo]\n")
        .expect("load");
    let err = h
        .call_tool_err(
            &skill,
            "exec",
            json!({"program": "cat", "args": ["notes.txt"]}),
        )
        .await;
    let agent_runtime::SkillError::Denied(text) = &err else {
        panic!("expected a denial, got {err:?}")
    };
    println!("allowlist refusal: {text}");
    assert!(
        text.contains("program `cat` is not in exec-listed's `exec` allowlist (echo)"),
        "{text}"
    );
    assert!(!text.contains(SECRET));

    let out = h
        .call_ok(&skill, "exec", json!({"program": "echo", "args": ["hi"]}))
        .await;
    assert_eq!(out, "exit=Some(0) stdout=hi\n");
    let echo = crate::exec_guards::host_program("echo");

    assert_eq!(
        audited(&h, "exec-listed", "shell:exec"),
        vec![
            (
                "cat notes.txt".to_string(),
                "denied: not in exec allowlist".to_string()
            ),
            (format!("run `{echo} hi`"), "granted:allowlist".to_string()),
            (format!("{echo} hi"), "exit 0".to_string()),
        ]
    );
    // The allowlist refusal is the manifest's, not a grant decision.
    assert!(h.grants.denials().is_empty(), "{:?}", h.grants.denials());
}

// 6a. An import whose permission the manifest does not declare: refused at load.
#[tokio::test]
async fn an_import_without_its_permission_is_refused_at_load() {
    let h = Harness::new(&["shell:exec", "file:read"]);
    let err = h
        .load_hostile("no-exec-perm", "permissions: [file:read]\n")
        .expect_err("must be refused");
    let message = err.to_string();
    println!("load refusal: {message}");
    let LoadError::Mismatch { skill, problems } = &err else {
        panic!("expected a mismatch, got {err:?}")
    };
    assert_eq!(skill, "no-exec-perm");
    assert!(
        problems.contains(&Mismatch::UndeclaredImport {
            import: agent_runtime::contract::LATEST.interface("exec"),
            permission: Permission::ShellExec,
        }),
        "{problems:?}"
    );
    assert!(
        message.starts_with("skill `no-exec-perm` refused: "),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "`{}`",
            agent_runtime::contract::LATEST.interface("exec")
        )),
        "{message}"
    );
    assert!(message.contains("`shell:exec`"), "{message}");
    // Nothing ran, so nothing was asked or used.
    assert!(h.audit_of("no-exec-perm").is_empty());
}

// 6b. wasi:sockets is never linked, whatever the manifest declares.
#[tokio::test]
async fn a_sockets_import_is_refused_at_load() {
    let h = Harness::new(&["net:fetch"]);
    let err = h
        .load_guest(
            &guest("guest-sockets"),
            "raw-sockets",
            "permissions: [net:fetch]\nhosts: [\"https://example.com\"]\n",
        )
        .expect_err("must be refused");
    let message = err.to_string();
    println!("sockets refusal: {message}");
    let LoadError::Mismatch { problems, .. } = &err else {
        panic!("expected a mismatch, got {err:?}")
    };
    assert!(
        problems.iter().any(|p| matches!(
            p,
            Mismatch::ForbiddenImport { import, .. } if import.starts_with("wasi:sockets/")
        )),
        "{problems:?}"
    );
    assert!(message.contains("`wasi:sockets/"), "{message}");
    assert!(message.contains("never provides"), "{message}");
    assert!(
        message.contains("raw network access is never linked"),
        "{message}"
    );
}

// 7. An infinite loop is stopped at the call timeout; a fresh instance works.
#[tokio::test]
async fn an_infinite_loop_is_stopped_at_the_timeout() {
    let limit = Duration::from_millis(500);
    let h = Harness::with_limits(
        Limits {
            call_timeout: limit,
            ..Limits::default()
        },
        &[],
    );
    let skill = h
        .load_hostile("spinner", "permissions: [shell:exec]\n")
        .expect("load");
    let mut inst = h
        .runtime
        .instantiate(&skill, &h.ctx)
        .await
        .expect("instance");
    let start = Instant::now();
    let err = inst
        .call_tool("spin", "{}")
        .await
        .expect_err("the loop must be stopped");
    let took = start.elapsed();
    println!("spin stopped after {took:?} (limit {limit:?})");
    match &err {
        CallError::Timeout { skill, limit: l } => {
            assert_eq!(skill, "spinner");
            assert_eq!(*l, limit);
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "skill `spinner` was stopped: it ran longer than its 500ms time limit"
    );
    assert!(took >= limit, "stopped before the limit: {took:?}");
    assert!(took < Duration::from_millis(1500), "took {took:?}");
    assert!(
        h.audit_of("spinner").contains(&(
            "runtime".into(),
            "spin".into(),
            "stopped: time limit 500ms".into()
        )),
        "{:?}",
        h.audit_of("spinner")
    );

    // The trapped instance refuses further calls ...
    let again = inst.call_tool("echo", r#"{"text":"x"}"#).await;
    assert!(
        matches!(again, Err(CallError::Poisoned { .. })),
        "{again:?}"
    );
    drop(inst);
    // ... and a fresh one works.
    let out = h
        .call_ok(&skill, "echo", json!({"text": "still alive"}))
        .await;
    assert_eq!(out, "still alive");
}

// 8. A 1 GiB allocation against a 256 MiB limit: out of memory, host fine.
#[tokio::test]
async fn a_huge_allocation_hits_the_memory_limit() {
    let h = Harness::with_limits(
        Limits {
            memory: 256 * 1024 * 1024,
            ..Limits::default()
        },
        &[],
    );
    let skill = h
        .load_hostile("allocator", "permissions: [shell:exec]\n")
        .expect("load");
    let err = h
        .call(&skill, "alloc", json!({"bytes": 1_073_741_824u64}))
        .await
        .expect_err("the allocation must be stopped");
    match &err {
        CallError::OutOfMemory { skill, limit_mib } => {
            assert_eq!(skill, "allocator");
            assert_eq!(*limit_mib, 256);
        }
        other => panic!("expected out of memory, got {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "skill `allocator` was stopped: it tried to use more than its 256 MiB memory limit"
    );
    assert!(
        h.audit_of("allocator").contains(&(
            "runtime".into(),
            "alloc".into(),
            "stopped: memory limit 256 MiB".into()
        )),
        "{:?}",
        h.audit_of("allocator")
    );
    // A modest allocation in a fresh instance works.
    let out = h
        .call_ok(&skill, "alloc", json!({"bytes": 16 * 1024 * 1024}))
        .await;
    assert_eq!(out, format!("allocated {}", 16 * 1024 * 1024));
    let out = h.call_ok(&skill, "echo", json!({"text": "ok"})).await;
    assert_eq!(out, "ok");
}

// 9. Output beyond the cap is cut, with a note.
#[tokio::test]
async fn huge_output_is_truncated_at_the_cap() {
    let cap = 1024 * 1024;
    let h = Harness::with_limits(
        Limits {
            output_cap: cap,
            ..Limits::default()
        },
        &[],
    );
    let skill = h
        .load_hostile("flooder", "permissions: [shell:exec]\n")
        .expect("load");
    let bytes = 5 * 1024 * 1024;
    let out = h
        .call(&skill, "huge", json!({ "bytes": bytes }))
        .await
        .expect("no host error")
        .expect("no tool error");
    assert!(out.truncated);
    assert!(
        h.audit_of("flooder").contains(&(
            "runtime".into(),
            "huge".into(),
            format!("output cut at {cap} bytes (was {bytes})")
        )),
        "{:?}",
        h.audit_of("flooder")
    );
    let note = format!("\n[output truncated: {bytes} bytes, the cap is {cap} bytes]");
    assert!(
        out.text.ends_with(&note),
        "{}",
        &out.text[out.text.len() - 80..]
    );
    assert_eq!(out.text.len(), cap + note.len());
    assert!(out.text[..cap].bytes().all(|b| b == b'x'));

    // Under the cap: untouched.
    let small = h
        .call(&skill, "huge", json!({ "bytes": 1000 }))
        .await
        .expect("no host error")
        .expect("no tool error");
    assert!(!small.truncated);
    assert_eq!(small.text, "x".repeat(1000));
}

// 9b. Printing past the output cap does not kill the skill: the capture
// keeps the first bytes and counts the rest.
#[tokio::test]
async fn printing_past_the_cap_is_dropped_not_fatal() {
    let cap = 64 * 1024;
    let h = Harness::with_limits(
        Limits {
            output_cap: cap,
            ..Limits::default()
        },
        &[],
    );
    let skill = h
        .load_hostile("chatty", "permissions: [shell:exec]\n")
        .expect("load");
    let ctx = h.ctx.clone();
    let mut instance = h
        .runtime
        .instantiate(&skill, &ctx)
        .await
        .expect("instantiate");
    let out = instance
        .call_tool("print", &json!({ "bytes": 3 * 1024 * 1024 }).to_string())
        .await
        .expect("printing 3 MiB must not trap")
        .expect("no tool error");
    assert_eq!(out.text, "printed");
    let printed = instance.printed();
    assert!(
        printed.starts_with(&"y".repeat(1023)),
        "kept the first bytes"
    );
    assert!(
        printed.ends_with(&format!(
            "[{} more bytes of output dropped]",
            3 * 1024 * 1024 - cap
        )),
        "{}",
        &printed[printed.len().saturating_sub(80)..]
    );
}

// 10. A panic traps the instance; the runtime loads and calls again.
#[tokio::test]
async fn a_panic_is_a_trap_and_the_runtime_goes_on() {
    let h = Harness::new(&[]);
    let skill = h
        .load_hostile("panicker", "permissions: [shell:exec]\n")
        .expect("load");
    let mut inst = h
        .runtime
        .instantiate(&skill, &h.ctx)
        .await
        .expect("instance");
    let err = inst
        .call_tool("panic", "{}")
        .await
        .expect_err("the panic must trap");
    let printed = inst.printed();
    println!("trap: {err}\nguest printed: {printed}");
    let CallError::Trap {
        skill: name,
        message,
    } = &err
    else {
        panic!("expected a trap, got {err:?}")
    };
    assert_eq!(name, "panicker");
    let audit = h.audit_of("panicker");
    assert!(
        audit
            .iter()
            .any(|(c, t, d)| c == "runtime" && t == "panic" && d.starts_with("stopped: trap:")),
        "{audit:?}"
    );
    // The guest's panic message is what tells the user what went wrong.
    assert!(
        printed.contains("hostile skill panicked on purpose"),
        "{printed}"
    );
    assert!(
        message.contains("hostile skill panicked on purpose"),
        "the trap's message should carry the guest's panic message: {message}"
    );
    drop(inst);

    // The same runtime loads another skill and calls both.
    let other = h
        .load_hostile("after-panic", "permissions: [shell:exec]\n")
        .expect("load after a trap");
    assert_eq!(h.call_ok(&other, "echo", json!({"text": "a"})).await, "a");
    assert_eq!(h.call_ok(&skill, "echo", json!({"text": "b"})).await, "b");
}

// `list` with file:read lists the project; without a grant there is no mount.
#[tokio::test]
async fn list_needs_a_file_grant() {
    let granted = Harness::new(&["file:read"]);
    std::fs::write(granted.project().join("a.txt"), "a").expect("write");
    std::fs::write(granted.project().join("b.rs"), "b").expect("write");
    std::fs::create_dir(granted.project().join("dir")).expect("mkdir");
    let skill = granted
        .load_hostile("lister", "permissions: [file:read, shell:exec]\n")
        .expect("load");
    let out = granted
        .call_ok(&skill, "list", json!({"path": "/project"}))
        .await;
    assert_eq!(out, "a.txt\nb.rs\ndir");

    let denied = Harness::new(&[]);
    std::fs::write(denied.project().join("a.txt"), "a").expect("write");
    let skill = denied
        .load_hostile("lister", "permissions: [file:read, shell:exec]\n")
        .expect("load");
    let mut inst = denied
        .runtime
        .instantiate(&skill, &denied.ctx)
        .await
        .expect("instance");
    assert_eq!(inst.file_access(), None);
    let err = inst
        .call_tool("list", &json!({"path": "/project"}).to_string())
        .await
        .expect("no host error")
        .expect_err("no mount, no listing");
    let text = skill_error_text(&err);
    println!("list refusal: {text}");
    assert!(text.starts_with("list failed: "), "{text}");
    assert!(!text.contains("a.txt"));
    let file_read = audited(&denied, "lister", "file:read");
    assert_eq!(file_read.len(), 1, "{file_read:?}");
    assert_eq!(file_read[0].1, "denied:not-allowed");
    let denials = denied.grants.denials();
    assert_eq!(denials.len(), 1, "{denials:?}");
    assert_eq!(denials[0].permission, Permission::FileRead);
    assert_eq!(denials[0].allow_flag.as_deref(), Some("lister/file:read"));
}

// 7b. The call's wall-time limit also covers time spent in host imports: a
// skill cannot outlive its call timeout by waiting on a slow program.
#[tokio::test]
async fn the_call_timeout_covers_time_spent_in_exec() {
    let limit = Duration::from_millis(500);
    let h = Harness::with_limits(
        Limits {
            call_timeout: limit,
            exec_timeout: Duration::from_secs(10),
            ..Limits::default()
        },
        &["shell:exec"],
    );
    let skill = h
        .load_hostile("sleeper", "permissions: [shell:exec]\nexec: [sleep]\n")
        .expect("load");
    let start = Instant::now();
    let result = h
        .call(&skill, "exec", json!({"program": "sleep", "args": ["3"]}))
        .await;
    let took = start.elapsed();
    println!("call with a 3 s program stopped after {took:?} (limit {limit:?}): {result:?}");
    // Either the host stops the call, or the program is killed at the call's
    // deadline and the guest is told it timed out (`exit=None`): both keep the
    // call within its limit.
    let stopped = match &result {
        Err(CallError::Timeout { .. }) => true,
        Ok(Ok(out)) => out.text.starts_with("exit=None"),
        _ => false,
    };
    assert!(
        stopped,
        "expected the call or the program to be stopped, got {result:?}"
    );
    assert!(
        took < Duration::from_millis(1500),
        "the {limit:?} call limit was exceeded: the call took {took:?}"
    );
}

// Imports whose service is missing in a context (no model, no other skills)
// link and answer a clear error — after the permission check — and never
// trap; `syntax` is always there and answers.
#[tokio::test]
async fn later_imports_link_and_answer() {
    let h = Harness::new(&["llm:call", "skill:invoke"]);
    let skill = h
        .load_guest(
            &guest("guest-later"),
            "later",
            "permissions: [llm:call, skill:invoke]\n",
        )
        .expect("a component importing llm, skills and syntax loads");
    for (tool, expected) in [
        (
            "llm",
            "llm.complete: no model is configured in this context",
        ),
        (
            "invoke",
            "skills.invoke(other, tool): no other skills are loaded in this context",
        ),
    ] {
        let out = h.call_ok(&skill, tool, json!({})).await;
        assert!(
            out.starts_with("error: CapabilityError::Unavailable("),
            "{tool}: {out}"
        );
        assert!(out.contains(expected), "{tool}: {out}");
    }
    // `syntax` needs no permission and the host answers it (tests/suite/syntax.rs has more).
    assert_eq!(
        h.call_ok(&skill, "syntax", json!({})).await,
        "ok: 1 matches"
    );
    // Declared but not granted: the permission check comes first.
    let h = Harness::new(&[]);
    let skill = h
        .load_guest(
            &guest("guest-later"),
            "later",
            "permissions: [llm:call, skill:invoke]\n",
        )
        .expect("load");
    let out = h.call_ok(&skill, "llm", json!({})).await;
    assert!(out.starts_with("error: CapabilityError::Denied("), "{out}");
    assert!(out.contains("--allow later/llm:call"), "{out}");
}

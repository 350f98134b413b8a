//! `agent.redb` shared and damaged, through the real binary: many `agent` processes on one
//! home at once (runs, the TUI, installs), and a database with zeroed pages, which every
//! command reports as an error naming the file and `agent doctor --repair` (never a panic),
//! and which `agent doctor --repair` sets aside and recreates with what can still be read.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use agent_manifest::Permission;
use agent_policy::{AuditEntry, AuditLog};
use agent_store::{GrantRecord, NewSession, Store, StoredDecision};
use agent_tests::model_server::{ModelServer, Reply, Wire, tokio_rt};
use agent_tests::{Sandbox, build_guest, text, tool_manifest, write_skill};
use serde_json::json;

use super::tui::Tmux;
use super::{code, ok, sandbox};

/// A lived-in database: grants for core-tools and 30 other skills, 60 sessions of 15 events.
fn populate(path: &Path) {
    let store = Store::open(path).expect("store");
    for skill in
        std::iter::once("core-tools".to_string()).chain((0..30).map(|i| format!("skill-{i:02}")))
    {
        for p in [Permission::FileRead, Permission::ShellExec] {
            let record = GrantRecord::new(skill.clone(), p, StoredDecision::Always, None, None);
            store.put_grant(&record).expect("grant");
        }
    }
    for s in 0..60 {
        let meta = store
            .create_session(NewSession {
                project_root: "/p".into(),
                model: "m".into(),
                provider: "p".into(),
                first_message: Some(format!("task {s}")),
            })
            .expect("session");
        let events: Vec<_> = (0..15)
            .map(|e| json!({"kind": "message", "text": format!("{s}/{e} {}", "x".repeat(300))}))
            .collect();
        store.append_events(&meta.id, &events).expect("events");
    }
}

/// Writes zeros over every 4 KiB page holding a core-tools grant, the session "task 30" or
/// one of its events: damage in three tables, wherever the allocator put them (zeroing a fixed
/// offset hit redb's table directory on some runs, and then nothing at all was readable).
/// Returns how many pages were zeroed.
fn zero_pages(path: &Path) -> usize {
    let bytes = std::fs::read(path).expect("db");
    let markers: [&[u8]; 3] = [b"core-tools", b"task 30\"", b"\"30/7 "];
    let pages: Vec<usize> = bytes
        .chunks(4096)
        .enumerate()
        .filter(|(_, page)| {
            markers
                .iter()
                .any(|m| page.windows(m.len()).any(|w| w == *m))
        })
        .map(|(i, _)| i)
        .collect();
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open");
    for &i in &pages {
        f.seek(SeekFrom::Start(i as u64 * 4096)).expect("seek");
        f.write_all(&[0u8; 4096]).expect("zero");
    }
    f.sync_all().expect("sync");
    pages.len()
}

fn signed_skill(sb: &Sandbox, name: &str) -> String {
    let key = sb.trusted_key();
    let hello = std::fs::read(build_guest("rust-hello")).expect("rust-hello");
    let src = sb.home.path().join("src").join(name);
    write_skill(&src, &tool_manifest(name, ""), &hello, Some(&key));
    src.to_str().expect("utf8").to_string()
}

#[test]
fn a_damaged_database_is_an_error_naming_the_file_and_doctor_recovers_what_it_can() {
    let sb = sandbox();
    let db = sb.paths().db_path();
    populate(&db);
    let pages = zero_pages(&db);
    println!("zeroed {pages} pages of {}", db.display());
    let src = signed_skill(&sb, "hello");

    // Before: each of these panicked in redb (`entered unreachable code`, exit 101).
    for args in [
        vec!["skill", "list"],
        vec!["skill", "permissions", "core-tools"],
        vec!["sessions", "list"],
        vec!["skill", "install", src.as_str()],
    ] {
        let out = sb.agent(&args);
        let (stdout, stderr) = text(&out);
        println!("agent {args:?} → {:?}\n{stderr}", code(&out));
        assert_eq!(code(&out), 1, "agent {args:?}\n{stdout}\n{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(
            stderr.contains(&format!("the database {} is damaged", db.display())),
            "{stderr}"
        );
        assert!(stderr.contains("run `agent doctor --repair`"), "{stderr}");
    }

    // `agent doctor` says what is wrong, and changes nothing.
    let before = std::fs::read(&db).expect("db");
    let out = sb.agent(&["doctor"]);
    let (stdout, stderr) = text(&out);
    println!("agent doctor:\n{stdout}{stderr}");
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("database {}: DAMAGED", db.display())),
        "{stdout}"
    );
    assert!(stdout.contains("run `agent doctor --repair`"), "{stdout}");
    assert_eq!(
        std::fs::read(&db).expect("db"),
        before,
        "doctor changed the file"
    );

    // `agent doctor --repair`: the damaged file is kept aside byte for byte, a new one holds
    // every record that could be read.
    let out = sb.agent(&["doctor", "--repair"]);
    let (stdout, stderr) = text(&out);
    println!("agent doctor --repair:\n{stdout}{stderr}");
    assert_eq!(code(&out), 0, "{stdout}{stderr}");
    let aside: Vec<_> = std::fs::read_dir(db.parent().expect("dir"))
        .expect("dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains("agent.redb.damaged-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(std::fs::read(&aside[0]).expect("aside"), before);
    assert!(
        stdout.contains(&format!("set aside as {}", aside[0].display())),
        "{stdout}"
    );

    let scan = Store::scan_file(&aside[0]).expect("scan");
    let read = |table| {
        scan.tables
            .iter()
            .find(|t| t.table == table)
            .expect("table")
            .records
    };
    assert!(
        read("grants") + read("sessions") > 0,
        "nothing readable: {scan:?}"
    );
    let store = Store::open(&db).expect("new store");
    assert_eq!(store.all_grants().expect("grants").len(), read("grants"));
    assert_eq!(store.sessions().expect("sessions").len(), read("sessions"));

    // Every command works again; doctor passes.
    let listed = ok(&sb.agent(&["sessions", "list"]));
    assert_eq!(
        listed.lines().filter(|l| l.contains("task ")).count(),
        read("sessions"),
        "{listed}"
    );
    ok(&sb.agent(&["skill", "list"]));
    ok(&sb.agent(&["skill", "install", src.as_str()]));
    let out = ok(&sb.agent(&["doctor"]));
    assert!(
        out.contains(&format!("database {}: ok", db.display())),
        "{out}"
    );
}

/// A model that reads `file` with core-tools, then answers; each reply trickles in over about
/// two seconds, so that processes overlap.
fn slow_script(file: &str) -> Vec<Reply> {
    let slow = |r: Reply| r.split(24, Duration::from_millis(60));
    vec![
        slow(Wire::Anthropic.tool("call_r", "read_file", &json!({"path": file}))),
        slow(Wire::Anthropic.answer(&format!("Read {file}: done."))),
    ]
}

fn run_cmd(sb: &Sandbox, server: &ModelServer, file: &str) -> std::process::Command {
    let mut cmd = sb.agent_cmd(&[
        "run",
        "--provider",
        "anthropic",
        "--model",
        "test-model",
        "--base-url",
        server.url(),
        "--timeout",
        "120s",
        "--allow",
        "core-tools/file:read",
        "--prompt",
        &format!("Read {file}"),
    ]);
    cmd.env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn audit_entries(sb: &Sandbox) -> Vec<AuditEntry> {
    AuditLog::entries(sb.paths().audit_log_path()).expect("audit log")
}

/// How many events each session has (by title), leaving out which skills were activated (the
/// installed skills count when an install finished first).
fn events_by_file(sb: &Sandbox) -> Vec<(String, usize)> {
    let store = Store::open(sb.paths().db_path()).expect("store");
    let mut out: Vec<(String, usize)> = store
        .sessions()
        .expect("sessions")
        .iter()
        .map(|m| {
            let events = store.events(&m.id).expect("events");
            let n = events
                .iter()
                .filter(|(_, e)| e["type"] != "activated")
                .count();
            (m.title.clone(), n)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn four_runs_a_tui_and_two_installs_share_one_home_at_once() {
    if std::process::Command::new("tmux")
        .arg("-V")
        .output()
        .is_err()
    {
        panic!("tmux is required for this test (test.sh installs it)");
    }
    let rt = tokio_rt();
    let _guard = rt.enter();

    // What one run alone leaves: its audit entries and session events.
    let reference = sandbox();
    super::write(reference.project.path(), "notes-0.txt", "zero\n");
    let server = rt
        .block_on(ModelServer::start(slow_script("notes-0.txt")))
        .expect("server");
    let out = run_cmd(&reference, &server, "notes-0.txt")
        .output()
        .expect("run");
    ok(&out);
    let per_run_audit = audit_entries(&reference).len();
    let per_run_events = events_by_file(&reference)[0].1;
    assert!(per_run_audit > 0 && per_run_events > 0);

    let sb = sandbox();
    let files = ["notes-0.txt", "notes-1.txt", "notes-2.txt", "notes-3.txt"];
    for f in files.iter().chain(&["notes-tui.txt"]) {
        super::write(sb.project.path(), f, &format!("{f}\n"));
    }
    let servers: Vec<ModelServer> = files
        .iter()
        .map(|f| {
            rt.block_on(ModelServer::start(slow_script(f)))
                .expect("server")
        })
        .collect();
    let tui_server = rt
        .block_on(ModelServer::start(slow_script("notes-tui.txt")))
        .expect("server");
    let sources = [signed_skill(&sb, "hello-a"), signed_skill(&sb, "hello-b")];

    // The TUI first: it stays open (and, before, held agent.redb) for the whole test.
    let long = Duration::from_secs(90);
    let tmux = Tmux::agent("agent-store-test", &sb, tui_server.url(), long);
    tmux.keys(&["-l", "Read notes-tui.txt"]);
    tmux.keys(&["Enter"]);

    // Four runs and two installs at once, beside it.
    let runs: Vec<_> = files
        .iter()
        .zip(&servers)
        .map(|(f, server)| run_cmd(&sb, server, f).spawn().expect("spawn run"))
        .collect();
    let installs: Vec<_> = sources
        .iter()
        .map(|src| {
            sb.agent_cmd(&["skill", "install", src])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn install")
        })
        .collect();

    // The TUI asks for file:read: "always" (a grant written while the others run).
    let start = Instant::now();
    loop {
        let s = tmux.screen();
        if s.contains("Read notes-tui.txt: done.") {
            break;
        }
        if s.contains("Permission requested by") {
            tmux.keys(&["a"]);
            std::thread::sleep(Duration::from_millis(300));
        }
        assert!(start.elapsed() < long, "no answer in the TUI:\n{s}");
        std::thread::sleep(Duration::from_millis(100));
    }

    for (child, what) in runs
        .into_iter()
        .zip(files.iter().map(|f| format!("run {f}")))
        .chain(
            installs
                .into_iter()
                .zip(["install hello-a".into(), "install hello-b".into()]),
        )
    {
        let out = child.wait_with_output().expect("wait");
        let (stdout, stderr) = text(&out);
        assert!(
            out.status.success(),
            "{what}: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            out.status.code()
        );
        if what.starts_with("run") {
            assert!(stdout.contains("done."), "{what}: {stdout}");
        }
    }
    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(
        tmux.wait_dead(long),
        "/quit did not quit:\n{}",
        tmux.screen()
    );

    // Everything is recorded: both skills installed, the TUI's grant, every session with
    // every event, every audit entry, and the chain verifies.
    let listed = ok(&sb.agent(&["skill", "list"]));
    assert!(
        listed.contains("hello-a") && listed.contains("hello-b"),
        "{listed}"
    );
    let store = Store::open(sb.paths().db_path()).expect("store");
    assert!(
        store
            .grant("core-tools", Permission::FileRead)
            .expect("grant")
            .is_some(),
        "the TUI's \"always\" was not stored"
    );
    let sessions = ok(&sb.agent(&["sessions", "list"]));
    for f in files.iter().chain(&["notes-tui.txt"]) {
        assert!(
            sessions.contains(&format!("Read {f}")),
            "no session for {f}:\n{sessions}"
        );
    }
    let events = events_by_file(&sb);
    for (title, n) in &events {
        if title != "Read notes-tui.txt" {
            assert_eq!(*n, per_run_events, "{title}: events lost: {events:?}");
        }
    }
    let verified = ok(&sb.agent(&["audit", "verify"]));
    assert!(verified.contains("hash chain intact"), "{verified}");
    let entries = audit_entries(&sb);
    for f in files {
        let mine = entries.iter().filter(|e| e.target.contains(f)).count();
        let reference_mine = audit_entries(&reference)
            .iter()
            .filter(|e| e.target.contains("notes-0.txt"))
            .count();
        assert_eq!(mine, reference_mine, "audit entries of {f}: {entries:#?}");
    }
    assert!(
        entries.len() >= 4 * per_run_audit,
        "{} entries for 4 runs of {per_run_audit} and a TUI",
        entries.len()
    );
}

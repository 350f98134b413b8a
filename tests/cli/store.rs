//! `agent.redb` shared and damaged, through the real binary: many `agent` processes on one
//! home at once (runs, the TUI, installs), and a database with zeroed pages, which every
//! command reports as an error naming the file and `agent doctor --repair` (never a panic),
//! and which `agent doctor --repair` sets aside and recreates with what can still be read.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use agent_manifest::Permission;
use agent_store::{GrantRecord, NewSession, Store, StoredDecision};
use agent_tests::{Sandbox, build_guest, text, tool_manifest, write_skill};
use serde_json::json;

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

/// Writes zeros over four 4 KiB pages in the middle of the file.
fn zero_pages(path: &Path) -> u64 {
    let len = std::fs::metadata(path).expect("db").len();
    let start = (len / 2) & !4095;
    let end = start + 4 * 4096;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .expect("open");
    f.seek(SeekFrom::Start(start)).expect("seek");
    f.write_all(&vec![0u8; (end - start) as usize])
        .expect("zero");
    f.sync_all().expect("sync");
    (end - start) / 4096
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

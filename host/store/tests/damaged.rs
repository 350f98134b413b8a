//! A database with zeroed pages: every operation is an error naming the file and the way out
//! (never a panic), and recovery keeps what can still be read.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use agent_manifest::Permission;
use agent_store::{GrantRecord, NewSession, Store, StoreError, StoredDecision};
use serde_json::json;

/// A realistic store: grants for 40 skills, 60 sessions of 15 events each.
fn populate(path: &Path) {
    let store = Store::open(path).unwrap();
    for i in 0..40 {
        for p in [Permission::FileRead, Permission::ShellExec] {
            store
                .put_grant(&GrantRecord::new(
                    format!("skill-{i:02}"),
                    p,
                    StoredDecision::Always,
                    None,
                    Some("1.0.0".into()),
                ))
                .unwrap();
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
            .unwrap();
        let events: Vec<_> = (0..15)
            .map(|e| json!({"kind": "message", "text": format!("{s}/{e} {}", "x".repeat(300))}))
            .collect();
        store.append_events(&meta.id, &events).unwrap();
    }
}

/// Writes zeros over every 4 KiB page of the file that holds `marker`: the leaf pages of the
/// one table whose records contain it (and any stale copies), wherever the allocator put them.
/// Returns how many pages were zeroed.
fn zero_pages_holding(path: &Path, marker: &str) -> usize {
    let bytes = std::fs::read(path).unwrap();
    let pages: Vec<usize> = bytes
        .chunks(4096)
        .enumerate()
        .filter(|(_, page)| page.windows(marker.len()).any(|w| w == marker.as_bytes()))
        .map(|(i, _)| i)
        .collect();
    assert!(!pages.is_empty(), "no page holds {marker:?}");
    let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    for &i in &pages {
        f.seek(SeekFrom::Start(i as u64 * 4096)).unwrap();
        f.write_all(&[0u8; 4096]).unwrap();
    }
    f.sync_all().unwrap();
    pages.len()
}

fn assert_damaged(result: Result<impl std::fmt::Debug, StoreError>, path: &Path) {
    let err = result.unwrap_err();
    assert!(matches!(err, StoreError::Damaged { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("agent doctor --repair"), "{msg}");
}

#[test]
fn zeroed_pages_are_an_error_naming_the_file_and_recovery_keeps_what_can_be_read() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("agent.redb");
    populate(&path);
    let before = std::fs::metadata(&path).unwrap().len();
    eprintln!("agent.redb: {before} bytes");
    // One page of sessions and one of events: the grants table is untouched, so what recovery
    // keeps does not depend on where the allocator happened to put each table.
    let zeroed = zero_pages_holding(&path, "task 30\"") + zero_pages_holding(&path, "\"30/7 ");
    eprintln!("zeroed {zeroed} pages");

    // Before: redb panicked ("entered unreachable code") in the first read of the damaged tree.
    let store = Store::open(&path);
    if let Ok(store) = &store {
        let sessions = store.sessions();
        let events: Result<Vec<_>, StoreError> = sessions
            .as_ref()
            .map(|all| {
                all.iter()
                    .map(|m| store.events(&m.id).map(|e| e.len()))
                    .collect()
            })
            .unwrap_or_else(|_| Ok(Vec::new()));
        assert!(
            sessions.is_err() || events.is_err(),
            "the damage went unnoticed"
        );
        if let Err(e) = sessions {
            assert_damaged(Err::<(), _>(e), &path);
        }
        if let Err(e) = events {
            assert_damaged(Err::<(), _>(e), &path);
        }
    } else {
        assert_damaged(store, &path);
    }

    let scan = Store::scan_file(&path).unwrap();
    assert!(!scan.is_healthy(), "{scan:?}");

    let recovery = Store::recover(&path).unwrap();
    eprintln!("{recovery:#?}");
    assert!(recovery.damaged.exists());
    assert_eq!(std::fs::metadata(&recovery.damaged).unwrap().len(), before);
    let store = Store::open(&path).unwrap();
    assert!(Store::scan_file(&path).unwrap().is_healthy());
    let grants = store.all_grants().unwrap();
    let sessions = store.sessions().unwrap();
    let recovered: usize = recovery.scan.tables.iter().map(|t| t.records).sum();
    assert!(recovered > 0, "nothing recovered: {recovery:?}");
    let by_table = |name| {
        recovery
            .scan
            .tables
            .iter()
            .find(|t| t.table == name)
            .unwrap()
            .records
    };
    assert_eq!(grants.len(), by_table("grants"));
    assert_eq!(sessions.len(), by_table("sessions"));
    for s in &sessions {
        store.events(&s.id).unwrap();
    }
    assert_eq!(by_table("grants"), 80);
}

/// Everything after redb's header zeroed, its table directory included: nothing can be read, and
/// recovery says so table by table, keeps the old file, and still leaves a working database.
#[test]
fn a_file_with_nothing_readable_is_set_aside_and_replaced_by_an_empty_working_store() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("agent.redb");
    populate(&path);
    let before = std::fs::read(&path).unwrap();
    let mut wrecked = before.clone();
    wrecked[4096..].fill(0);
    std::fs::write(&path, &wrecked).unwrap();

    match Store::open(&path) {
        Err(e) => assert_damaged(Err::<(), _>(e), &path),
        Ok(store) => assert_damaged(store.sessions(), &path),
    }
    assert!(!Store::scan_file(&path).unwrap().is_healthy());

    let recovery = Store::recover(&path).unwrap();
    assert_eq!(std::fs::read(&recovery.damaged).unwrap(), wrecked);
    assert_eq!(recovery.scan.tables.len(), 6);
    for t in &recovery.scan.tables {
        assert_eq!(t.records, 0, "{t:?}");
        assert!(t.damage.is_some(), "{t:?}");
    }
    let store = Store::open(&path).unwrap();
    assert!(Store::scan_file(&path).unwrap().is_healthy());
    assert!(store.sessions().unwrap().is_empty());
    assert!(store.all_grants().unwrap().is_empty());
    store
        .create_session(NewSession {
            project_root: "/p".into(),
            model: "m".into(),
            provider: "p".into(),
            first_message: Some("after".into()),
        })
        .unwrap();
    assert_eq!(store.sessions().unwrap().len(), 1);
}

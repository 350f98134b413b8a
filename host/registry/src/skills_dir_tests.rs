//! The lock protocol, the move-aside replace, and recovery's rules, on a
//! real directory (the kills themselves are in tests/cli/install_faults.rs).

use super::*;

/// A skill directory `name` whose `SKILL.yaml` says `version`.
fn skill(dir: &Path, entry: &str, version: &str) -> PathBuf {
    let d = dir.join(entry);
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join("SKILL.yaml"), format!("version: {version}\n")).expect("write");
    d
}

fn version(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("SKILL.yaml")).expect("read")
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn the_lock_excludes_a_second_holder_and_leaves_no_file() {
    let tmp = tempfile::tempdir().expect("tmp");
    let lock = DirLock::acquire(tmp.path()).expect("lock");
    assert!(tmp.path().join(LOCK_FILE).is_file());
    // Another holder (a second open file description, as another process
    // has) cannot take it while it is held: recovery would skip the dir.
    assert!(DirLock::try_acquire(tmp.path()).expect("try").is_none());
    drop(lock);
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
    let again = DirLock::try_acquire(tmp.path()).expect("try");
    assert!(again.is_some(), "free once released");
}

#[test]
fn tidy_deletes_the_lock_file_a_killed_process_left() {
    let tmp = tempfile::tempdir().expect("tmp");
    skill(tmp.path(), "hello", "0.1.0");
    std::fs::write(tmp.path().join(LOCK_FILE), "").expect("write");
    assert_eq!(tidy(tmp.path()).expect("tidy"), Vec::new());
    assert_eq!(entries(tmp.path()), vec!["hello"]);
}

#[test]
fn a_waiter_whose_lock_file_was_deleted_locks_the_new_one() {
    let tmp = tempfile::tempdir().expect("tmp");
    let first = DirLock::acquire(tmp.path()).expect("lock");
    let dir = tmp.path().to_path_buf();
    let waiter = std::thread::spawn(move || {
        let lock = DirLock::acquire(&dir).expect("lock");
        // It holds the file the path names now, so a third cannot take it.
        assert!(DirLock::try_acquire(&dir).expect("try").is_none());
        drop(lock);
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    drop(first);
    waiter.join().expect("waiter");
}

#[test]
fn tidy_does_nothing_while_another_holds_the_lock() {
    let tmp = tempfile::tempdir().expect("tmp");
    let live = skill(tmp.path(), ".agent-staging-live", "0.2.0");
    let lock = DirLock::acquire(tmp.path()).expect("lock");
    assert_eq!(tidy(tmp.path()).expect("tidy"), Vec::new());
    assert!(live.is_dir(), "a live install's staging is kept");
    drop(lock);
    assert_eq!(
        tidy(tmp.path()).expect("tidy"),
        vec![Recovered::Staging(live.clone())]
    );
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

#[test]
fn tidy_leaves_an_untouched_directory_unwritten() {
    let tmp = tempfile::tempdir().expect("tmp");
    skill(tmp.path(), "hello", "0.1.0");
    skill(tmp.path(), ".git", "not ours");
    assert_eq!(tidy(tmp.path()).expect("tidy"), Vec::new());
    assert_eq!(entries(tmp.path()), vec![".git", "hello"]);
}

#[test]
fn recovery_rolls_an_interrupted_replace_back_or_forward() {
    let tmp = tempfile::tempdir().expect("tmp");
    let d = tmp.path();
    // Crashed between the two renames: only the aside exists -> restored.
    skill(d, ".agent-old-my-tool-2-41", "0.1.0");
    // Crashed after the new one was in place -> the aside is deleted.
    skill(d, "hello", "0.2.0");
    skill(d, ".agent-old-hello-42", "0.1.0");
    // A remove and an install that were cut short; a dot-dir not ours.
    skill(d, ".agent-removing-gone-43", "0.1.0");
    skill(d, ".agent-staging-abc", "0.3.0");
    skill(d, ".cache", "kept");
    let done = tidy(d).expect("tidy");
    assert_eq!(
        done,
        vec![
            Recovered::RolledForward("hello".into()),
            Recovered::RolledBack("my-tool-2".into()),
            Recovered::Removed("gone".into()),
            Recovered::Staging(d.join(".agent-staging-abc")),
        ]
    );
    assert_eq!(entries(d), vec![".cache", "hello", "my-tool-2"]);
    assert_eq!(version(&d.join("hello")), "version: 0.2.0\n");
    assert_eq!(version(&d.join("my-tool-2")), "version: 0.1.0\n");
    assert!(done[1].to_string().contains("previous version is back"));
}

#[test]
fn replace_by_move_aside_and_by_exchange_leave_only_the_new_version() {
    for exchange_first in [true, false] {
        let tmp = tempfile::tempdir().expect("tmp");
        let d = tmp.path();
        skill(d, "hello", "0.1.0");
        let staged = skill(d, ".agent-staging-new", "0.2.0");
        let lock = DirLock::acquire(d).expect("lock");
        if exchange_first {
            put_in_place(&staged, d, "hello", &lock).expect("exchange");
        } else {
            replace_by_move_aside(&staged, &d.join("hello"), d, "hello").expect("aside");
        }
        drop(lock);
        assert_eq!(entries(d), vec!["hello"], "exchange: {exchange_first}");
        assert_eq!(version(&d.join("hello")), "version: 0.2.0\n");
    }
}

#[test]
fn remove_renames_to_a_dot_entry_then_deletes_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    skill(tmp.path(), "hello", "0.1.0");
    let lock = DirLock::acquire(tmp.path()).expect("lock");
    remove_skill(tmp.path(), "hello", &lock).expect("remove");
    drop(lock);
    assert!(entries(tmp.path()).is_empty(), "{:?}", entries(tmp.path()));
}

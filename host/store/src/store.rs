//! The database handle.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use redb::{
    Builder, ConcurrencyMode, Database, DatabaseError, ReadTransaction, ReadableDatabase,
    ReadableTable, StorageError, TableDefinition, TableHandle, TransactionError, WriteTransaction,
};

use crate::StoreError;
use crate::guard;

/// The schema version this build writes. Bump it (and add a migration in [`Store::open`]) when
/// an existing table changes its key or value layout; adding a table needs no bump.
const SCHEMA_VERSION: u64 = 1;

/// Internal: the schema version of the file, under the key `version`.
const SCHEMA: TableDefinition<&str, u64> = TableDefinition::new("store_schema");

/// `agent`'s redb database (`agent.redb`).
///
/// Many `agent` processes use one database side by side (several `agent run`s, a TUI, an
/// install, `sessions list`): the file is opened in redb's multi-writer mode, where every
/// process may keep a handle open and only a write transaction excludes the others. A `Store`
/// opens its handle on first use and keeps it; each operation is one short transaction (a
/// write lasts one record, never a model call or a user's answer). A process that keeps the
/// file or its writer lock longer than [`Store::LOCK_WAIT`] (an older `agent` that opens it
/// exclusively, or one stopped inside a write) makes the operation fail with
/// [`StoreError::Locked`]. If the file is replaced (`agent doctor --repair`), the next
/// operation opens the new one.
///
/// A file damaged outside redb (zeroed pages) is reported as [`StoreError::Damaged`], naming
/// the file and `agent doctor --repair`, never as a panic.
///
/// Inside a process a `Store` is `Send + Sync`: share it behind an `Arc`.
///
/// Each feature keeps its records in its own table, in its own module of this crate: define a
/// `TableDefinition`, create it in `create_tables` (so read transactions always find it), and
/// add an `impl Store` block with typed methods. Values are JSON strings so that records can grow
/// optional fields without a migration.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    wait: Duration,
    handle: Mutex<Option<Handle>>,
}

/// The open database and the identity of the file it was opened on.
#[derive(Debug)]
struct Handle {
    db: Arc<Database>,
    file: Option<FileId>,
}

/// Device and inode: tells a replaced file from the one a handle has open.
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(path: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_path: &Path) -> Option<FileId> {
    None
}

impl Store {
    /// How long an operation waits for another process to release the database or its writer
    /// lock before failing with [`StoreError::Locked`].
    pub const LOCK_WAIT: Duration = Duration::from_secs(30);

    /// Opens (creating if needed, with its parent directories) the database at `path`, checks
    /// its schema and creates its tables, waiting up to [`Store::LOCK_WAIT`] for another
    /// process that holds it exclusively.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        Self::open_with_wait(path, Self::LOCK_WAIT)
    }

    /// [`Store::open`] with a chosen wait for the lock.
    pub fn open_with_wait(path: impl AsRef<Path>, wait: Duration) -> Result<Store, StoreError> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::CreateDir {
                path: path.clone(),
                source,
            })?;
        }
        let store = Store {
            path,
            wait,
            handle: Mutex::new(None),
        };
        store.init()?;
        Ok(store)
    }

    /// A handle on `path` that has not checked the schema (for the scan of a suspect file).
    pub(crate) fn unchecked(path: &Path) -> Store {
        Store {
            path: path.to_path_buf(),
            wait: Self::LOCK_WAIT,
            handle: Mutex::new(None),
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Checks the schema and creates missing tables; a file already up to date is only read
    /// (a write would wait for other processes' writes and cost a two-phase commit).
    fn init(&self) -> Result<(), StoreError> {
        if self.ready()? {
            return Ok(());
        }
        self.write(|txn| {
            let mut schema = txn.open_table(SCHEMA).map_err(|e| self.db_err(e))?;
            let found = schema
                .get("version")
                .map_err(|e| self.db_err(e))?
                .map(|v| v.value());
            match found {
                Some(found) if found > SCHEMA_VERSION => {
                    return Err(StoreError::NewerSchema {
                        path: self.path.clone(),
                        found,
                        supported: SCHEMA_VERSION,
                    });
                }
                Some(_) => {}
                None => {
                    schema
                        .insert("version", SCHEMA_VERSION)
                        .map_err(|e| self.db_err(e))?;
                }
            }
            drop(schema);
            create_tables(self, txn)
        })
    }

    /// The open handle, opened (again) when there is none or the file was replaced.
    fn handle(&self) -> Result<Arc<Database>, StoreError> {
        let mut slot = self.handle.lock().unwrap_or_else(PoisonError::into_inner);
        let current = file_id(&self.path);
        if let Some(h) = slot.as_ref().filter(|h| h.file == current) {
            return Ok(h.db.clone());
        }
        *slot = None;
        let db = Arc::new(self.database()?);
        *slot = Some(Handle {
            db: db.clone(),
            file: file_id(&self.path),
        });
        Ok(db)
    }

    /// Drops the kept handle, so that the next operation opens the file afresh.
    fn forget(&self) {
        *self.handle.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Opens the file in multi-writer mode, waiting for a process that holds it exclusively.
    pub(crate) fn database(&self) -> Result<Database, StoreError> {
        let mut builder = Builder::new();
        builder.set_concurrency_mode(ConcurrencyMode::MultiWriter);
        let mut wait = Backoff::new(self.wait);
        loop {
            match builder.create(&self.path) {
                Ok(db) => return Ok(db),
                Err(DatabaseError::DatabaseAlreadyOpen | DatabaseError::LockProtocolMismatch) => {
                    if !wait.sleep() {
                        return Err(self.locked());
                    }
                }
                Err(DatabaseError::Storage(StorageError::Corrupted(detail))) => {
                    return Err(self.damaged(detail));
                }
                Err(source) => {
                    return Err(StoreError::Open {
                        path: self.path.clone(),
                        source,
                    });
                }
            }
        }
    }

    /// Runs `f` in a write transaction of its own and commits it if `f` succeeds.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&WriteTransaction) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.guarded(|| {
            let db = self.handle()?;
            let mut wait = Backoff::new(self.wait);
            let txn = loop {
                match db.try_begin_write() {
                    Ok(txn) => break txn,
                    Err(TransactionError::WouldBlock) => {
                        if !wait.sleep() {
                            return Err(self.locked());
                        }
                    }
                    Err(e) => return Err(self.db_err(e)),
                }
            };
            let out = f(&txn)?;
            txn.commit().map_err(|e| self.db_err(e))?;
            Ok(out)
        })
    }

    /// Runs `f` in a read transaction of its own.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&ReadTransaction) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.guarded(|| {
            let db = self.handle()?;
            let txn = db.begin_read().map_err(|e| self.db_err(e))?;
            f(&txn)
        })
    }

    /// Runs `f`, turning a panic inside redb into [`StoreError::Damaged`]; after damage the
    /// kept handle is dropped.
    pub(crate) fn guarded<T>(
        &self,
        f: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let out = guard::catch(f).unwrap_or_else(|detail| Err(self.damaged(detail)));
        if matches!(out, Err(StoreError::Damaged { .. })) {
            self.forget();
        }
        out
    }

    /// Wraps any redb error with the database path; redb's "corrupted" is [`StoreError::Damaged`].
    pub(crate) fn db_err(&self, e: impl Into<redb::Error>) -> StoreError {
        match e.into() {
            redb::Error::Corrupted(detail) => self.damaged(detail),
            source => StoreError::Database {
                path: self.path.clone(),
                source,
            },
        }
    }

    fn damaged(&self, detail: String) -> StoreError {
        StoreError::Damaged {
            path: self.path.clone(),
            detail,
        }
    }

    fn locked(&self) -> StoreError {
        StoreError::Locked {
            path: self.path.clone(),
            waited: self.wait,
        }
    }

    /// A record that does not decode.
    pub(crate) fn corrupt(
        &self,
        table: &'static str,
        key: impl Into<String>,
        message: impl ToString,
    ) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            table,
            key: key.into(),
            message: message.to_string(),
        }
    }
}

/// Sleeps with a growing pause (10 ms doubling to 200 ms) until a deadline.
struct Backoff {
    deadline: Instant,
    pause: Duration,
}

impl Backoff {
    fn new(wait: Duration) -> Backoff {
        Backoff {
            deadline: Instant::now() + wait,
            pause: Duration::from_millis(10),
        }
    }

    /// Sleeps once; false when the deadline has passed.
    fn sleep(&mut self) -> bool {
        let now = Instant::now();
        if now >= self.deadline {
            return false;
        }
        thread::sleep(self.pause.min(self.deadline - now));
        self.pause = (self.pause * 2).min(Duration::from_millis(200));
        true
    }
}

impl Store {
    /// True when the file has this build's schema version and every table.
    fn ready(&self) -> Result<bool, StoreError> {
        self.read(|txn| {
            let names: Vec<String> = txn
                .list_tables()
                .map_err(|e| self.db_err(e))?
                .map(|t| t.name().to_string())
                .collect();
            let wanted = [
                SCHEMA.name(),
                crate::grants::GRANTS.name(),
                crate::meta::META.name(),
                crate::sessions::SESSIONS.name(),
                crate::sessions::SESSION_EVENTS.name(),
                crate::registry::REGISTRY_SEEN.name(),
                crate::registry::INSTALLED.name(),
            ];
            if !wanted.iter().all(|w| names.iter().any(|n| n == w)) {
                return Ok(false);
            }
            let schema = txn.open_table(SCHEMA).map_err(|e| self.db_err(e))?;
            let version = schema
                .get("version")
                .map_err(|e| self.db_err(e))?
                .map(|v| v.value());
            Ok(version == Some(SCHEMA_VERSION))
        })
    }
}

/// Creates every table, so that read transactions never meet a missing one.
fn create_tables(store: &Store, txn: &WriteTransaction) -> Result<(), StoreError> {
    txn.open_table(crate::grants::GRANTS)
        .map_err(|e| store.db_err(e))?;
    txn.open_table(crate::meta::META)
        .map_err(|e| store.db_err(e))?;
    txn.open_table(crate::sessions::SESSIONS)
        .map_err(|e| store.db_err(e))?;
    txn.open_table(crate::sessions::SESSION_EVENTS)
        .map_err(|e| store.db_err(e))?;
    txn.open_table(crate::registry::REGISTRY_SEEN)
        .map_err(|e| store.db_err(e))?;
    txn.open_table(crate::registry::INSTALLED)
        .map_err(|e| store.db_err(e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::ReadableTableMetadata;

    #[test]
    fn open_creates_parent_directories_and_reopens() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/agent.redb");
        let store = Store::open(&path).unwrap();
        assert_eq!(store.path(), path);
        store.set_meta("k", "v").unwrap();
        drop(store);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.get_meta("k").unwrap().as_deref(), Some("v"));
    }

    /// An old-style holder: a redb handle in the default (exclusive) mode, as `agent` before
    /// the multi-writer store kept it for a whole run.
    fn hold_exclusively(path: &Path) -> Database {
        Database::create(path).unwrap()
    }

    #[test]
    fn two_stores_on_one_file_work_side_by_side() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        let a = Store::open(&path).unwrap();
        let b = Store::open(&path).unwrap();
        a.set_meta("from", "a").unwrap();
        assert_eq!(b.get_meta("from").unwrap().as_deref(), Some("a"));
        b.set_meta("from", "b").unwrap();
        assert_eq!(a.get_meta("from").unwrap().as_deref(), Some("b"));
    }

    #[test]
    fn an_exclusive_holder_fails_with_a_message_naming_the_path_after_waiting() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        drop(Store::open(&path).unwrap());
        let _held = hold_exclusively(&path);
        let started = Instant::now();
        let err = Store::open_with_wait(&path, Duration::from_millis(300)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains("stayed locked by another process"), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
    }

    #[test]
    fn open_succeeds_when_the_holder_lets_go_within_the_wait() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        drop(Store::open(&path).unwrap());
        let held = hold_exclusively(&path);
        let releaser = thread::spawn(move || {
            thread::sleep(Duration::from_millis(150));
            drop(held);
        });
        let store = Store::open(&path).unwrap();
        releaser.join().unwrap();
        store.set_meta("after", "wait").unwrap();
        assert_eq!(store.get_meta("after").unwrap().as_deref(), Some("wait"));
    }

    #[test]
    fn a_replaced_file_is_opened_afresh() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        let kept = Store::open(&path).unwrap();
        kept.set_meta("which", "old").unwrap();
        std::fs::rename(&path, tmp.path().join("agent.redb.aside")).unwrap();
        Store::open(&path)
            .unwrap()
            .set_meta("which", "new")
            .unwrap();
        assert_eq!(kept.get_meta("which").unwrap().as_deref(), Some("new"));
    }

    /// Runs in child processes (see `processes_write_one_database_at_once`): each writes
    /// `AGENT_STORE_WRITES` meta keys under its own prefix, one transaction each.
    #[test]
    fn writer_child() {
        let Some(path) = std::env::var_os("AGENT_STORE_DB") else {
            return;
        };
        let prefix = std::env::var("AGENT_STORE_PREFIX").unwrap();
        let n: usize = std::env::var("AGENT_STORE_WRITES")
            .unwrap()
            .parse()
            .unwrap();
        let store = Store::open(&path).unwrap();
        for i in 0..n {
            store.set_meta(&format!("{prefix}{i}"), "x").unwrap();
            let _ = store.get_meta("peer").unwrap();
        }
    }

    #[test]
    fn processes_write_one_database_at_once() {
        // Before the multi-writer store, the second process failed after 3 s with "another
        // `agent` process is using": the first held the file for its whole life.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        let store = Store::open(&path).unwrap();
        let children: Vec<_> = (0..4)
            .map(|c| {
                std::process::Command::new(std::env::current_exe().unwrap())
                    .args(["--exact", "store::tests::writer_child", "--nocapture"])
                    .env("AGENT_STORE_DB", &path)
                    .env("AGENT_STORE_PREFIX", format!("c{c}-"))
                    .env("AGENT_STORE_WRITES", "25")
                    .spawn()
                    .unwrap()
            })
            .collect();
        for i in 0..25 {
            store.set_meta(&format!("parent-{i}"), "x").unwrap();
        }
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        drop(store);
        let db = hold_exclusively(&path);
        let txn = db.begin_read().unwrap();
        let table = txn.open_table(crate::meta::META).unwrap();
        assert_eq!(table.len().unwrap(), 5 * 25, "no write was lost");
    }

    #[test]
    fn a_newer_schema_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        {
            let db = Database::create(&path).unwrap();
            let txn = db.begin_write().unwrap();
            txn.open_table(SCHEMA)
                .unwrap()
                .insert("version", SCHEMA_VERSION + 1)
                .unwrap();
            txn.commit().unwrap();
        }
        let err = Store::open(&path).unwrap_err();
        assert!(
            matches!(err, StoreError::NewerSchema { found, .. } if found == SCHEMA_VERSION + 1),
            "{err:?}"
        );
    }

    #[test]
    fn a_file_that_is_not_a_database_is_an_open_error() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        std::fs::write(&path, vec![0x5a; 8192]).unwrap();
        let err = Store::open(&path).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    }
}

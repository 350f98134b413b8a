//! The database handle.

use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use redb::{
    Database, DatabaseError, ReadTransaction, ReadableDatabase, ReadableTable, TableDefinition,
    WriteTransaction,
};

use crate::StoreError;

/// The schema version this build writes. Bump it (and add a migration in [`Store::open`]) when
/// an existing table changes its key or value layout; adding a table needs no bump.
const SCHEMA_VERSION: u64 = 1;

/// Internal: the schema version of the file, under the key `version`.
const SCHEMA: TableDefinition<&str, u64> = TableDefinition::new("store_schema");

/// `agent`'s redb database (`agent.redb`).
///
/// One process at a time holds the database open (redb takes a file lock); [`Store::open`]
/// waits briefly for another `agent` process to let go. Inside a process a `Store` is
/// `Send + Sync`: share it behind an `Arc`, transactions are serialised by redb.
///
/// Each feature keeps its records in its own table, in its own module of this crate: define a
/// `TableDefinition`, create it in `create_tables` (so read transactions always find it), and
/// add an `impl Store` block with typed methods. Values are JSON strings so that records can grow
/// optional fields without a migration.
#[derive(Debug)]
pub struct Store {
    db: Database,
    path: PathBuf,
}

impl Store {
    /// How long [`Store::open`] waits for another process to release the database.
    pub const LOCK_WAIT: Duration = Duration::from_secs(3);

    /// Opens (creating if needed, with its parent directories) the database at `path`. If
    /// another process has it open, retries with a short backoff for up to [`Store::LOCK_WAIT`],
    /// then fails with [`StoreError::Locked`].
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
        let deadline = Instant::now() + wait;
        let mut backoff = Duration::from_millis(10);
        let db = loop {
            match Database::create(&path) {
                Ok(db) => break db,
                Err(DatabaseError::DatabaseAlreadyOpen | DatabaseError::LockProtocolMismatch) => {
                    let now = Instant::now();
                    if now >= deadline {
                        return Err(StoreError::Locked { path });
                    }
                    thread::sleep(backoff.min(deadline - now));
                    backoff = (backoff * 2).min(Duration::from_millis(200));
                }
                Err(source) => return Err(StoreError::Open { path, source }),
            }
        };
        let store = Store { db, path };
        store.init()?;
        Ok(store)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn init(&self) -> Result<(), StoreError> {
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

    /// Runs `f` in a write transaction and commits it if `f` succeeds.
    pub(crate) fn write<T>(
        &self,
        f: impl FnOnce(&WriteTransaction) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let txn = self.db.begin_write().map_err(|e| self.db_err(e))?;
        let out = f(&txn)?;
        txn.commit().map_err(|e| self.db_err(e))?;
        Ok(out)
    }

    /// Runs `f` in a read transaction.
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&ReadTransaction) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let txn = self.db.begin_read().map_err(|e| self.db_err(e))?;
        f(&txn)
    }

    /// Wraps any redb error with the database path.
    pub(crate) fn db_err(&self, e: impl Into<redb::Error>) -> StoreError {
        StoreError::Database {
            path: self.path.clone(),
            source: e.into(),
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

    #[test]
    fn a_held_database_fails_with_a_message_naming_the_path_after_waiting() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        let _held = Store::open(&path).unwrap();
        let started = Instant::now();
        let err = Store::open_with_wait(&path, Duration::from_millis(300)).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains("another `agent` process is using"), "{msg}");
        assert!(msg.contains(&path.display().to_string()), "{msg}");
    }

    #[test]
    fn open_succeeds_when_the_holder_lets_go_within_the_wait() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        let held = Store::open(&path).unwrap();
        let releaser = thread::spawn(move || {
            thread::sleep(Duration::from_millis(150));
            drop(held);
        });
        let store = Store::open(&path).unwrap();
        releaser.join().unwrap();
        store.set_meta("after", "wait").unwrap();
    }

    /// Runs in a child process (see `another_process_holding_the_database_is_waited_for`):
    /// holds the database for a while.
    #[test]
    fn lock_holder_child() {
        let Some(path) = std::env::var_os("AGENT_STORE_HOLD_DB") else {
            return;
        };
        let store = Store::open(&path).unwrap();
        println!("holding");
        thread::sleep(Duration::from_millis(1200));
        drop(store);
    }

    #[test]
    fn another_process_holding_the_database_is_waited_for() {
        use std::io::BufRead;
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "store::tests::lock_holder_child", "--nocapture"])
            .env("AGENT_STORE_HOLD_DB", &path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = std::io::BufReader::new(stdout).lines();
        assert!(lines.any(|l| l.unwrap().contains("holding")));
        // A short wait gives up with the message.
        let err = Store::open_with_wait(&path, Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
        // The default wait outlasts the holder.
        let store = Store::open(&path).unwrap();
        store.set_meta("k", "v").unwrap();
        assert!(child.wait().unwrap().success());
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

//! Checking the database and recovering what a damaged one still holds (`agent doctor`).
//!
//! A scan reads every record of every table, each table forwards and, if that stops at a
//! damaged page, backwards from its end, so records on both sides of the damage are found.
//! Recovery sets the damaged file aside (renamed, byte for byte as it was), creates a new
//! database at the same path and copies into it every record the scan could read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use redb::{
    Builder, ConcurrencyMode, Key, ReadTransaction, ReadableDatabase, ReadableTable,
    TableDefinition,
};
use time::OffsetDateTime;

use crate::grants::GRANTS;
use crate::meta::META;
use crate::registry::{INSTALLED, REGISTRY_SEEN};
use crate::sessions::{SESSION_EVENTS, SESSIONS};
use crate::{Store, StoreError, guard};

/// A record's key, owned, for every key layout the store uses.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum OwnedKey {
    One(String),
    Pair(String, String),
    Seq(String, u64),
}

/// What a scan read from one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableScan {
    /// The table's name.
    pub table: &'static str,
    /// How many records were read.
    pub records: usize,
    /// Why the table could not be read to the end, if it could not.
    pub damage: Option<String>,
}

/// The result of [`Store::scan`]: every table, in a fixed order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanReport {
    /// The database file.
    pub path: PathBuf,
    /// Why the file does not open for writing, if it does not (damage in redb's own pages
    /// stops every operation even when every table reads).
    pub open_error: Option<String>,
    /// One entry per table.
    pub tables: Vec<TableScan>,
}

impl ScanReport {
    /// True when every table was read to the end.
    pub fn is_healthy(&self) -> bool {
        self.open_error.is_none() && self.tables.iter().all(|t| t.damage.is_none())
    }
}

/// The result of [`Store::recover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    /// Where the damaged file now is.
    pub damaged: PathBuf,
    /// What was read from it (and copied into the new database).
    pub scan: ScanReport,
}

/// Every record read from one table.
struct Salvaged {
    records: BTreeMap<OwnedKey, String>,
    damage: Option<String>,
}

/// Every record read from every table, by table name.
struct Salvage {
    tables: Vec<(&'static str, Salvaged)>,
}

impl Salvage {
    fn report(&self, path: &Path) -> ScanReport {
        ScanReport {
            path: path.to_path_buf(),
            open_error: None,
            tables: self
                .tables
                .iter()
                .map(|(table, s)| TableScan {
                    table,
                    records: s.records.len(),
                    damage: s.damage.clone(),
                })
                .collect(),
        }
    }

    fn table(&self, name: &str) -> impl Iterator<Item = (&OwnedKey, &String)> {
        self.tables
            .iter()
            .filter(move |(t, _)| *t == name)
            .flat_map(|(_, s)| s.records.iter())
    }
}

fn one(k: &str) -> OwnedKey {
    OwnedKey::One(k.to_string())
}

fn pair(k: (&str, &str)) -> OwnedKey {
    OwnedKey::Pair(k.0.to_string(), k.1.to_string())
}

fn seq(k: (&str, u64)) -> OwnedKey {
    OwnedKey::Seq(k.0.to_string(), k.1)
}

/// Reads one table forwards, then, if that stopped early, backwards.
fn salvage_table<K: Key + 'static>(
    txn: &ReadTransaction,
    def: TableDefinition<K, &'static str>,
    owned: impl Fn(K::SelfType<'_>) -> OwnedKey,
) -> Salvaged {
    let mut records = BTreeMap::new();
    let read = |backwards: bool, records: &mut BTreeMap<OwnedKey, String>| {
        let outcome = guard::catch(|| -> Result<(), redb::Error> {
            let table = txn.open_table(def)?;
            let iter = table.iter()?;
            let mut step = |entry: Result<_, redb::StorageError>| -> Result<(), redb::Error> {
                let (k, v): (redb::AccessGuard<K>, redb::AccessGuard<&str>) = entry?;
                records.insert(owned(k.value()), v.value().to_string());
                Ok(())
            };
            if backwards {
                for entry in iter.rev() {
                    step(entry)?;
                }
            } else {
                for entry in iter {
                    step(entry)?;
                }
            }
            Ok(())
        });
        match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(panic) => Some(panic),
        }
    };
    let damage = read(false, &mut records).inspect(|_| {
        read(true, &mut records);
    });
    Salvaged { records, damage }
}

/// Opens `path` for a salvage: read-only first (it loads no allocator state, so damage there
/// does not stop it), else with a writable handle, which repairs a file left unclean.
fn salvage_file(path: &Path) -> Result<Salvage, String> {
    let mut builder = Builder::new();
    builder.set_concurrency_mode(ConcurrencyMode::MultiWriter);
    let read_only =
        guard::catch(|| builder.open_read_only(path)).and_then(|r| r.map_err(|e| e.to_string()));
    match read_only {
        Ok(db) => salvage(&db),
        Err(first) => {
            let db = guard::catch(|| builder.open(path))
                .and_then(|r| r.map_err(|e| e.to_string()))
                .map_err(|second| format!("{first}; {second}"))?;
            salvage(&db)
        }
    }
}

/// Reads every table of `db`.
fn salvage(db: &impl ReadableDatabase) -> Result<Salvage, String> {
    let txn = guard::catch(|| db.begin_read())?.map_err(|e| e.to_string())?;
    Ok(Salvage {
        tables: vec![
            ("grants", salvage_table(&txn, GRANTS, pair)),
            ("sessions", salvage_table(&txn, SESSIONS, one)),
            ("session_events", salvage_table(&txn, SESSION_EVENTS, seq)),
            ("registry_seen", salvage_table(&txn, REGISTRY_SEEN, pair)),
            ("installed", salvage_table(&txn, INSTALLED, pair)),
            ("meta", salvage_table(&txn, META, one)),
        ],
    })
}

/// A report in which no table could be read, for a file that does not open.
fn unreadable(path: &Path, why: &str) -> ScanReport {
    let tables = [
        "grants",
        "sessions",
        "session_events",
        "registry_seen",
        "installed",
        "meta",
    ];
    ScanReport {
        path: path.to_path_buf(),
        open_error: None,
        tables: tables
            .into_iter()
            .map(|table| TableScan {
                table,
                records: 0,
                damage: Some(why.to_string()),
            })
            .collect(),
    }
}

impl Store {
    /// Opens the file as every operation does, then reads every record of every table (with a
    /// read-only handle, changing nothing); reports what failed, table by table. Fails only
    /// when another process keeps the file locked.
    pub fn scan_file(path: impl AsRef<Path>) -> Result<ScanReport, StoreError> {
        let path = path.as_ref();
        let store = Store::unchecked(path);
        let open_error = match store.guarded(|| store.database().map(drop)) {
            Ok(()) => None,
            Err(e @ StoreError::Locked { .. }) => return Err(e),
            Err(StoreError::Damaged { detail, .. }) => Some(detail),
            Err(e) => Some(e.to_string()),
        };
        let mut report = match salvage_file(path) {
            Ok(s) => s.report(path),
            Err(why) => unreadable(path, &why),
        };
        report.open_error = open_error;
        Ok(report)
    }

    /// Sets the file at `path` aside as `<path>.damaged-<UTC time>`, creates a new database at
    /// `path` and copies into it every record that can still be read from the old one (a record
    /// already present in the new database, written meanwhile by another process, is kept).
    pub fn recover(path: impl AsRef<Path>) -> Result<Recovery, StoreError> {
        let path = path.as_ref().to_path_buf();
        let stamp = OffsetDateTime::now_utc().unix_timestamp();
        let mut name = path.clone().into_os_string();
        name.push(format!(".damaged-{stamp}"));
        let damaged = PathBuf::from(name);
        std::fs::rename(&path, &damaged).map_err(|source| StoreError::SetAside {
            path: path.clone(),
            to: damaged.clone(),
            source,
        })?;
        // Nobody opens the file under its new name: a read-only handle reads it undisturbed.
        let salvaged = salvage_file(&damaged).ok();
        let store = Store::open(&path)?;
        let Some(salvaged) = salvaged else {
            return Ok(Recovery {
                scan: unreadable(&damaged, "the file does not open"),
                damaged,
            });
        };
        store.copy_in(&salvaged)?;
        Ok(Recovery {
            scan: salvaged.report(&damaged),
            damaged,
        })
    }

    /// Writes every salvaged record whose key is not already present, in one transaction.
    fn copy_in(&self, salvaged: &Salvage) -> Result<(), StoreError> {
        self.write(|txn| {
            macro_rules! copy {
                ($def:expr, $name:literal, $key:pat => $k:expr) => {{
                    let mut table = txn.open_table($def).map_err(|e| self.db_err(e))?;
                    for (key, value) in salvaged.table($name) {
                        let $key = key else { continue };
                        if table.get($k).map_err(|e| self.db_err(e))?.is_none() {
                            table
                                .insert($k, value.as_str())
                                .map_err(|e| self.db_err(e))?;
                        }
                    }
                }};
            }
            copy!(GRANTS, "grants", OwnedKey::Pair(a, b) => (a.as_str(), b.as_str()));
            copy!(SESSIONS, "sessions", OwnedKey::One(a) => a.as_str());
            copy!(SESSION_EVENTS, "session_events", OwnedKey::Seq(a, n) => (a.as_str(), *n));
            copy!(REGISTRY_SEEN, "registry_seen", OwnedKey::Pair(a, b) => (a.as_str(), b.as_str()));
            copy!(INSTALLED, "installed", OwnedKey::Pair(a, b) => (a.as_str(), b.as_str()));
            copy!(META, "meta", OwnedKey::One(a) => a.as_str());
            Ok(())
        })
    }
}

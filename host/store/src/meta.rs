//! The `meta` table: small string settings and markers (`key → value`).

use redb::TableDefinition;

use crate::{Store, StoreError};

/// `key → value`, both strings.
pub(crate) const META: TableDefinition<&str, &str> = TableDefinition::new("meta");

impl Store {
    /// The value stored under `key` in the `meta` table.
    pub fn get_meta(&self, key: &str) -> Result<Option<String>, StoreError> {
        self.read(|txn| {
            let table = txn.open_table(META).map_err(|e| self.db_err(e))?;
            let value = table.get(key).map_err(|e| self.db_err(e))?;
            Ok(value.map(|v| v.value().to_string()))
        })
    }

    /// Stores `value` under `key` in the `meta` table, replacing any previous value.
    pub fn set_meta(&self, key: &str, value: &str) -> Result<(), StoreError> {
        self.write(|txn| {
            let mut table = txn.open_table(META).map_err(|e| self.db_err(e))?;
            table.insert(key, value).map_err(|e| self.db_err(e))?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[test]
    fn meta_round_trips_and_overwrites() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().join("agent.redb")).unwrap();
        assert_eq!(store.get_meta("registry.snapshot").unwrap(), None);
        store.set_meta("registry.snapshot", "7").unwrap();
        store.set_meta("registry.snapshot", "8").unwrap();
        assert_eq!(
            store.get_meta("registry.snapshot").unwrap().as_deref(),
            Some("8")
        );
    }
}

//! The registry tables: what `agent` has seen from each skill index, and which skills it
//! installed from where.
//!
//! - `registry_seen`: `(index id, skill) → highest value seen`. The row with an empty skill
//!   name holds the highest snapshot version (a decimal `u64`) of that index; every other row
//!   holds the highest version (semver) of that skill seen from that index. Values only ever
//!   go up ([`Store::raise_registry_seen`]): this is what lets the registry refuse a rollback to
//!   an older snapshot or an older version of a skill.
//! - `installed`: `(place, skill) → InstalledRecord JSON`, where the place is
//!   [`InstallPlace::User`] (the user skills directory) or a project root
//!   ([`InstallPlace::Project`]). One record per skill and place: a new install replaces it.

use std::collections::BTreeMap;

use redb::{ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::grants::now_rfc3339;
use crate::{Store, StoreError};

/// `(index id, skill or "") → highest snapshot version / skill version seen`.
pub(crate) const REGISTRY_SEEN: TableDefinition<(&str, &str), &str> =
    TableDefinition::new("registry_seen");

/// `(place, skill) → InstalledRecord JSON`.
pub(crate) const INSTALLED: TableDefinition<(&str, &str), &str> = TableDefinition::new("installed");

const SEEN_TABLE: &str = "registry_seen";
const INSTALLED_TABLE: &str = "installed";

/// The highest snapshot version and skill versions seen from one index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RegistrySeen {
    /// The highest snapshot version seen, if the index was ever opened.
    pub snapshot: Option<u64>,
    /// The highest version of each skill seen from this index.
    pub skills: BTreeMap<String, semver::Version>,
}

/// Where an installed skill lives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InstallPlace {
    /// The user skills directory.
    User,
    /// `<root>/.agent/skills` of the project at this (absolute) root.
    Project(String),
}

impl InstallPlace {
    /// The key spelling: `user` or `project:<root>`.
    pub fn key(&self) -> String {
        match self {
            InstallPlace::User => "user".to_string(),
            InstallPlace::Project(root) => format!("project:{root}"),
        }
    }

    fn from_key(key: &str) -> Option<InstallPlace> {
        if key == "user" {
            Some(InstallPlace::User)
        } else {
            key.strip_prefix("project:")
                .map(|root| InstallPlace::Project(root.to_string()))
        }
    }
}

/// One permission a skill declares, with its scope if the manifest names one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct InstalledPermission {
    /// The permission in its manifest spelling (`shell:exec`).
    pub permission: String,
    /// A program, host or variable the permission is limited to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

/// A skill `agent` installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledRecord {
    /// The skill's name.
    pub name: String,
    /// The installed version.
    pub version: String,
    /// Where it came from: an index id (`git:<url>`, `path:<dir>`, ...), a directory or a
    /// git URL.
    pub source: String,
    /// The digest of the installed (unsigned) component, `sha256:<hex>` or hex.
    pub digest: String,
    /// The skill's directory.
    pub dir: String,
    /// When it was installed, RFC 3339 in UTC.
    pub installed_at: String,
    /// The permissions the installed version declares.
    #[serde(default)]
    pub permissions: Vec<InstalledPermission>,
}

impl InstalledRecord {
    /// A record dated now.
    pub fn new(
        name: impl Into<String>,
        version: impl Into<String>,
        source: impl Into<String>,
        digest: impl Into<String>,
        dir: impl Into<String>,
        permissions: Vec<InstalledPermission>,
    ) -> InstalledRecord {
        InstalledRecord {
            name: name.into(),
            version: version.into(),
            source: source.into(),
            digest: digest.into(),
            dir: dir.into(),
            installed_at: now_rfc3339(),
            permissions,
        }
    }
}

impl Store {
    /// What was seen from the index `index` (its stable id); empty when never opened.
    pub fn registry_seen(&self, index: &str) -> Result<RegistrySeen, StoreError> {
        self.read(|txn| {
            let table = txn.open_table(REGISTRY_SEEN).map_err(|e| self.db_err(e))?;
            let mut seen = RegistrySeen::default();
            for entry in table.range((index, "")..).map_err(|e| self.db_err(e))? {
                let (key, value) = entry.map_err(|e| self.db_err(e))?;
                let (key_index, skill) = key.value();
                if key_index != index {
                    break;
                }
                let value = value.value();
                let shown = || format!("{key_index}/{skill}");
                if skill.is_empty() {
                    seen.snapshot = Some(
                        value
                            .parse()
                            .map_err(|e| self.corrupt(SEEN_TABLE, shown(), e))?,
                    );
                } else {
                    let version = semver::Version::parse(value)
                        .map_err(|e| self.corrupt(SEEN_TABLE, shown(), e))?;
                    seen.skills.insert(skill.to_string(), version);
                }
            }
            Ok(seen)
        })
    }

    /// Raises what is stored for `index` to `seen`: each stored value becomes the higher of
    /// the stored and the given one (never lower), in one transaction.
    pub fn raise_registry_seen(&self, index: &str, seen: &RegistrySeen) -> Result<(), StoreError> {
        self.write(|txn| {
            let mut table = txn.open_table(REGISTRY_SEEN).map_err(|e| self.db_err(e))?;
            if let Some(snapshot) = seen.snapshot {
                let stored = table
                    .get((index, ""))
                    .map_err(|e| self.db_err(e))?
                    .and_then(|v| v.value().parse::<u64>().ok());
                if stored.is_none_or(|s| snapshot > s) {
                    let text = snapshot.to_string();
                    table
                        .insert((index, ""), text.as_str())
                        .map_err(|e| self.db_err(e))?;
                }
            }
            for (skill, version) in &seen.skills {
                if skill.is_empty() {
                    continue;
                }
                let stored = table
                    .get((index, skill.as_str()))
                    .map_err(|e| self.db_err(e))?
                    .and_then(|v| semver::Version::parse(v.value()).ok());
                if stored.is_none_or(|s| *version > s) {
                    let text = version.to_string();
                    table
                        .insert((index, skill.as_str()), text.as_str())
                        .map_err(|e| self.db_err(e))?;
                }
            }
            Ok(())
        })
    }

    /// Stores `record` for `place`, replacing any record of the same skill there.
    pub fn put_installed(
        &self,
        place: &InstallPlace,
        record: &InstalledRecord,
    ) -> Result<(), StoreError> {
        let json = serde_json::to_string(record).map_err(|source| StoreError::Encode {
            table: INSTALLED_TABLE,
            source,
        })?;
        let place = place.key();
        self.write(|txn| {
            let mut table = txn.open_table(INSTALLED).map_err(|e| self.db_err(e))?;
            table
                .insert((place.as_str(), record.name.as_str()), json.as_str())
                .map_err(|e| self.db_err(e))?;
            Ok(())
        })
    }

    /// The record of `skill` installed in `place`, if any.
    pub fn installed(
        &self,
        place: &InstallPlace,
        skill: &str,
    ) -> Result<Option<InstalledRecord>, StoreError> {
        let place = place.key();
        self.read(|txn| {
            let table = txn.open_table(INSTALLED).map_err(|e| self.db_err(e))?;
            let value = table
                .get((place.as_str(), skill))
                .map_err(|e| self.db_err(e))?;
            value
                .map(|v| self.decode_installed(&place, skill, v.value()))
                .transpose()
        })
    }

    /// Every installed record with its place, ordered by place and name.
    pub fn all_installed(&self) -> Result<Vec<(InstallPlace, InstalledRecord)>, StoreError> {
        self.read(|txn| {
            let table = txn.open_table(INSTALLED).map_err(|e| self.db_err(e))?;
            let mut out = Vec::new();
            for entry in table.iter().map_err(|e| self.db_err(e))? {
                let (key, value) = entry.map_err(|e| self.db_err(e))?;
                let (place, skill) = key.value();
                let record = self.decode_installed(place, skill, value.value())?;
                let place = InstallPlace::from_key(place).ok_or_else(|| {
                    self.corrupt(INSTALLED_TABLE, format!("{place}/{skill}"), "unknown place")
                })?;
                out.push((place, record));
            }
            Ok(out)
        })
    }

    /// Removes the record of `skill` in `place`; returns whether there was one.
    pub fn remove_installed(&self, place: &InstallPlace, skill: &str) -> Result<bool, StoreError> {
        let place = place.key();
        self.write(|txn| {
            let mut table = txn.open_table(INSTALLED).map_err(|e| self.db_err(e))?;
            let removed = table
                .remove((place.as_str(), skill))
                .map_err(|e| self.db_err(e))?;
            Ok(removed.is_some())
        })
    }

    fn decode_installed(
        &self,
        place: &str,
        skill: &str,
        json: &str,
    ) -> Result<InstalledRecord, StoreError> {
        let key = || format!("{place}/{skill}");
        let record: InstalledRecord =
            serde_json::from_str(json).map_err(|e| self.corrupt(INSTALLED_TABLE, key(), e))?;
        if record.name != skill {
            return Err(self.corrupt(
                INSTALLED_TABLE,
                key(),
                format!("the record is for {}", record.name),
            ));
        }
        Ok(record)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().join("agent.redb")).unwrap();
        (tmp, store)
    }

    fn v(s: &str) -> semver::Version {
        semver::Version::parse(s).unwrap()
    }

    fn seen(snapshot: Option<u64>, skills: &[(&str, &str)]) -> RegistrySeen {
        RegistrySeen {
            snapshot,
            skills: skills.iter().map(|(n, s)| (n.to_string(), v(s))).collect(),
        }
    }

    #[test]
    fn an_unknown_index_has_seen_nothing() {
        let (_tmp, store) = store();
        assert_eq!(
            store.registry_seen("git:x").unwrap(),
            RegistrySeen::default()
        );
    }

    #[test]
    fn seen_values_only_go_up() {
        let (_tmp, store) = store();
        store
            .raise_registry_seen(
                "git:a",
                &seen(Some(5), &[("hello", "1.2.0"), ("b", "0.1.0")]),
            )
            .unwrap();
        // Lower values are ignored, higher ones replace, new skills are added.
        store
            .raise_registry_seen(
                "git:a",
                &seen(
                    Some(3),
                    &[("hello", "1.1.9"), ("b", "0.2.0"), ("c", "1.0.0")],
                ),
            )
            .unwrap();
        assert_eq!(
            store.registry_seen("git:a").unwrap(),
            seen(
                Some(5),
                &[("b", "0.2.0"), ("c", "1.0.0"), ("hello", "1.2.0")]
            )
        );
        store
            .raise_registry_seen("git:a", &seen(Some(6), &[]))
            .unwrap();
        assert_eq!(store.registry_seen("git:a").unwrap().snapshot, Some(6));
        // A None snapshot leaves the stored one alone.
        store
            .raise_registry_seen("git:a", &seen(None, &[("hello", "2.0.0")]))
            .unwrap();
        let got = store.registry_seen("git:a").unwrap();
        assert_eq!(got.snapshot, Some(6));
        assert_eq!(got.skills["hello"], v("2.0.0"));
    }

    #[test]
    fn indexes_are_kept_apart_even_with_prefix_ids() {
        let (_tmp, store) = store();
        store
            .raise_registry_seen("path:/a", &seen(Some(1), &[("x", "1.0.0")]))
            .unwrap();
        store
            .raise_registry_seen("path:/a/b", &seen(Some(9), &[("y", "9.0.0")]))
            .unwrap();
        assert_eq!(
            store.registry_seen("path:/a").unwrap(),
            seen(Some(1), &[("x", "1.0.0")])
        );
        assert_eq!(
            store.registry_seen("path:/a/b").unwrap(),
            seen(Some(9), &[("y", "9.0.0")])
        );
    }

    #[test]
    fn seen_survives_reopening() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        Store::open(&path)
            .unwrap()
            .raise_registry_seen("git:a", &seen(Some(2), &[("s", "1.0.0-rc.1")]))
            .unwrap();
        assert_eq!(
            Store::open(&path).unwrap().registry_seen("git:a").unwrap(),
            seen(Some(2), &[("s", "1.0.0-rc.1")])
        );
    }

    fn record(name: &str, version: &str) -> InstalledRecord {
        InstalledRecord::new(
            name,
            version,
            "git:git://127.0.0.1/index",
            "sha256:00",
            format!("/skills/{name}"),
            vec![InstalledPermission {
                permission: "shell:exec".into(),
                scope: Some("git".into()),
            }],
        )
    }

    #[test]
    fn installed_records_round_trip_replace_and_remove() {
        let (_tmp, store) = store();
        let project = InstallPlace::Project("/work/p".into());
        store
            .put_installed(&InstallPlace::User, &record("a", "1.0.0"))
            .unwrap();
        store
            .put_installed(&InstallPlace::User, &record("a", "1.1.0"))
            .unwrap();
        store
            .put_installed(&project, &record("a", "0.9.0"))
            .unwrap();
        store
            .put_installed(&InstallPlace::User, &record("ab", "1.0.0"))
            .unwrap();
        assert_eq!(
            store
                .installed(&InstallPlace::User, "a")
                .unwrap()
                .unwrap()
                .version,
            "1.1.0"
        );
        assert_eq!(
            store.installed(&project, "a").unwrap().unwrap().version,
            "0.9.0"
        );
        assert_eq!(store.installed(&project, "ab").unwrap(), None);
        let all = store.all_installed().unwrap();
        assert_eq!(all.len(), 3);
        assert_eq!(all[0].0, project);
        assert_eq!(all[1].0, InstallPlace::User);
        assert_eq!(all[1].1.name, "a");
        assert!(store.remove_installed(&InstallPlace::User, "a").unwrap());
        assert!(!store.remove_installed(&InstallPlace::User, "a").unwrap());
        assert_eq!(store.installed(&InstallPlace::User, "a").unwrap(), None);
        assert!(store.installed(&project, "a").unwrap().is_some());
    }

    #[test]
    fn installed_record_json_format() {
        let mut r = record("hello", "1.0.0");
        r.installed_at = "2026-01-02T03:04:05Z".into();
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"name":"hello","version":"1.0.0","source":"git:git://127.0.0.1/index","digest":"sha256:00","dir":"/skills/hello","installed_at":"2026-01-02T03:04:05Z","permissions":[{"permission":"shell:exec","scope":"git"}]}"#
        );
    }

    #[test]
    fn an_undecodable_installed_record_is_corrupt() {
        let (_tmp, store) = store();
        store
            .write(|txn| {
                let mut t = txn.open_table(INSTALLED).map_err(|e| store.db_err(e))?;
                t.insert(("user", "s"), "{").map_err(|e| store.db_err(e))?;
                Ok(())
            })
            .unwrap();
        let err = store.installed(&InstallPlace::User, "s").unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Corrupt {
                    table: "installed",
                    ..
                }
            ),
            "{err:?}"
        );
    }
}

//! The `grants` table: the user's lasting answers ("always" / "deny") to permission requests.
//!
//! Key: `(skill, permission)` with the permission in its manifest spelling (`file:write`).
//! Value: a [`GrantRecord`] as JSON. One record per skill and permission: a new answer replaces
//! the old one.

use agent_manifest::Permission;
use redb::{ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::{Store, StoreError};

/// `(skill, permission) → GrantRecord JSON`.
pub(crate) const GRANTS: TableDefinition<(&str, &str), &str> = TableDefinition::new("grants");

const TABLE: &str = "grants";

/// A lasting decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StoredDecision {
    /// Granted until revoked.
    Always,
    /// Refused until revoked.
    Deny,
}

/// A stored grant or refusal of one permission to one skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRecord {
    /// The skill's name.
    pub skill: String,
    /// The permission.
    pub permission: Permission,
    /// Granted or refused.
    pub decision: StoredDecision,
    /// When set, the record applies only to this scope (a program for `shell:exec`, an origin
    /// for `net:fetch`); `None` covers every scope the manifest allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// When the decision was made, RFC 3339 in UTC.
    pub at: String,
    /// The skill's version when the decision was made, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill_version: Option<String>,
    /// Hex SHA-256 of the `SKILL.yaml` the decision was made for. A record
    /// applies only to a skill loaded from that exact manifest; records from
    /// before this field existed (`None`) apply to no loaded skill.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest_sha256: Option<String>,
}

impl GrantRecord {
    /// A record dated now.
    pub fn new(
        skill: impl Into<String>,
        permission: Permission,
        decision: StoredDecision,
        scope: Option<String>,
        skill_version: Option<String>,
    ) -> GrantRecord {
        GrantRecord {
            skill: skill.into(),
            permission,
            decision,
            scope,
            at: now_rfc3339(),
            skill_version,
            manifest_sha256: None,
        }
    }

    /// The same record, bound to the manifest with this hex SHA-256.
    pub fn for_manifest(mut self, manifest_sha256: impl Into<String>) -> GrantRecord {
        self.manifest_sha256 = Some(manifest_sha256.into());
        self
    }
}

/// The current time, RFC 3339 in UTC (`2026-01-02T03:04:05.123456789Z`).
pub(crate) fn now_rfc3339() -> String {
    // Formatting a UTC timestamp with Rfc3339 only fails for years outside 0..=9999.
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| String::from("1970-01-01T00:00:00Z"))
}

impl Store {
    /// Stores `record`, replacing any record for the same skill and permission.
    pub fn put_grant(&self, record: &GrantRecord) -> Result<(), StoreError> {
        let json = serde_json::to_string(record).map_err(|source| StoreError::Encode {
            table: TABLE,
            source,
        })?;
        self.write(|txn| {
            let mut table = txn.open_table(GRANTS).map_err(|e| self.db_err(e))?;
            table
                .insert(
                    (record.skill.as_str(), record.permission.as_str()),
                    json.as_str(),
                )
                .map_err(|e| self.db_err(e))?;
            Ok(())
        })
    }

    /// The record for one skill and permission, if any.
    pub fn grant(
        &self,
        skill: &str,
        permission: Permission,
    ) -> Result<Option<GrantRecord>, StoreError> {
        self.read(|txn| {
            let table = txn.open_table(GRANTS).map_err(|e| self.db_err(e))?;
            let value = table
                .get((skill, permission.as_str()))
                .map_err(|e| self.db_err(e))?;
            value
                .map(|v| self.decode_grant(skill, permission.as_str(), v.value()))
                .transpose()
        })
    }

    /// Every record of one skill, ordered by permission spelling.
    pub fn grants_for(&self, skill: &str) -> Result<Vec<GrantRecord>, StoreError> {
        self.read(|txn| {
            let table = txn.open_table(GRANTS).map_err(|e| self.db_err(e))?;
            let mut out = Vec::new();
            for entry in table.range((skill, "")..).map_err(|e| self.db_err(e))? {
                let (key, value) = entry.map_err(|e| self.db_err(e))?;
                let (key_skill, key_perm) = key.value();
                if key_skill != skill {
                    break;
                }
                out.push(self.decode_grant(key_skill, key_perm, value.value())?);
            }
            Ok(out)
        })
    }

    /// Every record, ordered by skill and permission.
    pub fn all_grants(&self) -> Result<Vec<GrantRecord>, StoreError> {
        self.read(|txn| {
            let table = txn.open_table(GRANTS).map_err(|e| self.db_err(e))?;
            let mut out = Vec::new();
            for entry in table.iter().map_err(|e| self.db_err(e))? {
                let (key, value) = entry.map_err(|e| self.db_err(e))?;
                let (skill, perm) = key.value();
                out.push(self.decode_grant(skill, perm, value.value())?);
            }
            Ok(out)
        })
    }

    /// Removes the record of `permission` for `skill`, or every record of `skill` when
    /// `permission` is `None`. Returns how many records were removed.
    pub fn revoke(&self, skill: &str, permission: Option<Permission>) -> Result<usize, StoreError> {
        self.write(|txn| {
            let mut table = txn.open_table(GRANTS).map_err(|e| self.db_err(e))?;
            match permission {
                Some(p) => {
                    let removed = table
                        .remove((skill, p.as_str()))
                        .map_err(|e| self.db_err(e))?;
                    Ok(usize::from(removed.is_some()))
                }
                None => {
                    let mut perms = Vec::new();
                    for entry in table.range((skill, "")..).map_err(|e| self.db_err(e))? {
                        let (key, _) = entry.map_err(|e| self.db_err(e))?;
                        let (key_skill, key_perm) = key.value();
                        if key_skill != skill {
                            break;
                        }
                        perms.push(key_perm.to_string());
                    }
                    for perm in &perms {
                        table
                            .remove((skill, perm.as_str()))
                            .map_err(|e| self.db_err(e))?;
                    }
                    Ok(perms.len())
                }
            }
        })
    }

    fn decode_grant(&self, skill: &str, perm: &str, json: &str) -> Result<GrantRecord, StoreError> {
        let key = || format!("{skill}/{perm}");
        let record: GrantRecord =
            serde_json::from_str(json).map_err(|e| self.corrupt(TABLE, key(), e))?;
        if record.skill != skill || record.permission.as_str() != perm {
            return Err(self.corrupt(
                TABLE,
                key(),
                format!(
                    "the record is for {}/{}",
                    record.skill,
                    record.permission.as_str()
                ),
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

    fn rec(skill: &str, p: Permission, d: StoredDecision) -> GrantRecord {
        GrantRecord::new(skill, p, d, None, Some("1.0.0".into()))
    }

    #[test]
    fn put_and_get_round_trip() {
        let (_tmp, store) = store();
        let mut r = rec("core-tools", Permission::FileWrite, StoredDecision::Always);
        r.scope = Some("src".into());
        store.put_grant(&r).unwrap();
        assert_eq!(
            store.grant("core-tools", Permission::FileWrite).unwrap(),
            Some(r)
        );
        assert_eq!(
            store.grant("core-tools", Permission::FileRead).unwrap(),
            None
        );
        assert_eq!(store.grant("other", Permission::FileWrite).unwrap(), None);
    }

    #[test]
    fn a_new_answer_replaces_the_old_one() {
        let (_tmp, store) = store();
        store
            .put_grant(&rec("s", Permission::ShellExec, StoredDecision::Always))
            .unwrap();
        store
            .put_grant(&rec("s", Permission::ShellExec, StoredDecision::Deny))
            .unwrap();
        let all = store.all_grants().unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].decision, StoredDecision::Deny);
    }

    #[test]
    fn grants_for_returns_only_that_skill() {
        let (_tmp, store) = store();
        // Names chosen so that a prefix match would be wrong: "a" vs "a-b" vs "ab".
        for skill in ["a", "a-b", "ab", "b"] {
            store
                .put_grant(&rec(skill, Permission::FileRead, StoredDecision::Always))
                .unwrap();
        }
        store
            .put_grant(&rec("a", Permission::NetFetch, StoredDecision::Deny))
            .unwrap();
        let a = store.grants_for("a").unwrap();
        assert_eq!(
            a.iter().map(|r| r.permission).collect::<Vec<_>>(),
            vec![Permission::FileRead, Permission::NetFetch]
        );
        assert!(a.iter().all(|r| r.skill == "a"));
        assert_eq!(store.grants_for("zzz").unwrap(), vec![]);
        assert_eq!(store.all_grants().unwrap().len(), 5);
    }

    #[test]
    fn revoke_one_and_all() {
        let (_tmp, store) = store();
        for p in [
            Permission::FileRead,
            Permission::FileWrite,
            Permission::LlmCall,
        ] {
            store
                .put_grant(&rec("s", p, StoredDecision::Always))
                .unwrap();
        }
        store
            .put_grant(&rec("t", Permission::FileRead, StoredDecision::Always))
            .unwrap();
        assert_eq!(store.revoke("s", Some(Permission::FileWrite)).unwrap(), 1);
        assert_eq!(store.revoke("s", Some(Permission::FileWrite)).unwrap(), 0);
        assert_eq!(store.revoke("s", None).unwrap(), 2);
        assert_eq!(store.grants_for("s").unwrap(), vec![]);
        assert_eq!(store.grants_for("t").unwrap().len(), 1);
        assert_eq!(store.revoke("nobody", None).unwrap(), 0);
    }

    #[test]
    fn grants_survive_reopening() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        let r = rec("s", Permission::GitWrite, StoredDecision::Always);
        Store::open(&path).unwrap().put_grant(&r).unwrap();
        assert_eq!(
            Store::open(&path)
                .unwrap()
                .grant("s", Permission::GitWrite)
                .unwrap(),
            Some(r)
        );
    }

    #[test]
    fn record_json_format() {
        let r = GrantRecord {
            skill: "core-tools".into(),
            permission: Permission::ShellExec,
            decision: StoredDecision::Always,
            scope: Some("git".into()),
            at: "2026-01-02T03:04:05Z".into(),
            skill_version: None,
            manifest_sha256: None,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"skill":"core-tools","permission":"shell:exec","decision":"always","scope":"git","at":"2026-01-02T03:04:05Z"}"#
        );
        assert!(
            time::OffsetDateTime::parse(
                &GrantRecord::new("s", Permission::FileRead, StoredDecision::Deny, None, None).at,
                &Rfc3339
            )
            .is_ok()
        );
    }

    #[test]
    fn an_undecodable_record_is_reported_as_corrupt() {
        let (_tmp, store) = store();
        store
            .write(|txn| {
                let mut t = txn.open_table(GRANTS).map_err(|e| store.db_err(e))?;
                t.insert(("s", "file:read"), "{not json")
                    .map_err(|e| store.db_err(e))?;
                Ok(())
            })
            .unwrap();
        let err = store.grant("s", Permission::FileRead).unwrap_err();
        assert!(
            matches!(
                err,
                StoreError::Corrupt {
                    table: "grants",
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("s/file:read"), "{err}");
    }
}

//! The `sessions` and `session_events` tables: every conversation, persisted turn by turn.
//!
//! - `sessions`: `id → SessionMeta JSON`, one record per session.
//! - `session_events`: `(id, seq) → event JSON`, the session's log in order. The payload is an
//!   opaque [`serde_json::Value`] written by the agent core (a message appended, a tool call, a
//!   tool result, usage, the final answer), so this crate does not depend on the providers crate.
//!
//! Every [`Store::append_event`] is its own write transaction, committed with redb's default
//! (immediate, fsync'd) durability: once it returns, the event survives a `kill -9` or a crash.

use std::cmp::Reverse;
use std::path::{Path, PathBuf};

use redb::{ReadableTable, TableDefinition};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::grants::now_rfc3339;
use crate::{Store, StoreError};

/// `id → SessionMeta JSON`.
pub(crate) const SESSIONS: TableDefinition<&str, &str> = TableDefinition::new("sessions");

/// `(session id, seq) → event JSON`.
pub(crate) const SESSION_EVENTS: TableDefinition<(&str, u64), &str> =
    TableDefinition::new("session_events");

const SESSIONS_TABLE: &str = "sessions";
const EVENTS_TABLE: &str = "session_events";

/// The longest title, in characters (an ellipsis included).
const TITLE_MAX_CHARS: usize = 80;

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    /// Running, or stopped without recording an outcome (e.g. the process died).
    #[default]
    Active,
    /// Finished with a final answer.
    Completed,
    /// Stopped by an error.
    Failed,
    /// Stopped by the user (Ctrl-C) or a signal.
    Interrupted,
}

/// Token usage summed over a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionUsage {
    /// Input (prompt) tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output (completion) tokens.
    #[serde(default)]
    pub output_tokens: u64,
}

/// A session's summary record (the `sessions` table).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMeta {
    /// The id, `YYYYMMDD-HHMMSS-xxxx` (UTC time of creation and 4 random hex digits).
    pub id: String,
    /// When the session was created, RFC 3339 in UTC.
    pub created_at: String,
    /// When the session or its log last changed, RFC 3339 in UTC.
    pub updated_at: String,
    /// The project directory the session ran in.
    pub project_root: PathBuf,
    /// The model used.
    pub model: String,
    /// The provider used.
    pub provider: String,
    /// A short title: the first user message, see [`session_title`]. Empty until known.
    #[serde(default)]
    pub title: String,
    /// The number of turns taken.
    #[serde(default)]
    pub turns: u32,
    /// Where the session stands.
    #[serde(default)]
    pub status: SessionStatus,
    /// Token usage so far.
    #[serde(default)]
    pub usage: SessionUsage,
}

/// What [`Store::create_session`] needs to start a session.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NewSession {
    /// The project directory the session runs in.
    pub project_root: PathBuf,
    /// The model used.
    pub model: String,
    /// The provider used.
    pub provider: String,
    /// The first user message, if already known; it is shortened with [`session_title`].
    pub first_message: Option<String>,
}

/// A title made from a user message: whitespace runs (newlines included) collapsed to one
/// space, trimmed, and cut to at most 80 characters, the last being `…` when cut.
pub fn session_title(message: &str) -> String {
    let collapsed = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= TITLE_MAX_CHARS {
        return collapsed;
    }
    let mut title: String = collapsed.chars().take(TITLE_MAX_CHARS - 1).collect();
    title.truncate(title.trim_end().len());
    title.push('…');
    title
}

/// A new session id for `now`: `YYYYMMDD-HHMMSS-xxxx`.
fn new_session_id(now: OffsetDateTime) -> String {
    let mut bytes = [0u8; 2];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: fall back to the clock; `create_session` still checks uniqueness.
        let nanos = now.nanosecond() ^ std::process::id();
        bytes = [(nanos >> 8) as u8, nanos as u8];
    }
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{:02x}{:02x}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        bytes[0],
        bytes[1]
    )
}

/// The sort key of an RFC 3339 timestamp (fractional digits vary, so strings do not sort).
fn instant(ts: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(ts, &Rfc3339).ok()
}

impl Store {
    fn decode_meta(&self, key: &str, json: &str) -> Result<SessionMeta, StoreError> {
        serde_json::from_str(json).map_err(|e| self.corrupt(SESSIONS_TABLE, key, e))
    }

    fn encode_meta(meta: &SessionMeta) -> Result<String, StoreError> {
        serde_json::to_string(meta).map_err(|source| StoreError::Encode {
            table: SESSIONS_TABLE,
            source,
        })
    }

    /// Starts a session: gives it a fresh unique id, status [`SessionStatus::Active`], and
    /// stores its record.
    pub fn create_session(&self, init: NewSession) -> Result<SessionMeta, StoreError> {
        let now = OffsetDateTime::now_utc();
        let stamp = now_rfc3339();
        self.write(|txn| {
            let mut table = txn.open_table(SESSIONS).map_err(|e| self.db_err(e))?;
            let mut id = new_session_id(now);
            // 65536 ids a second; on a clash draw again (a few tries suffice in practice).
            for _ in 0..64 {
                if table
                    .get(id.as_str())
                    .map_err(|e| self.db_err(e))?
                    .is_none()
                {
                    break;
                }
                id = new_session_id(now);
            }
            if table
                .get(id.as_str())
                .map_err(|e| self.db_err(e))?
                .is_some()
            {
                return Err(self.corrupt(SESSIONS_TABLE, id, "no free session id this second"));
            }
            let meta = SessionMeta {
                id: id.clone(),
                created_at: stamp.clone(),
                updated_at: stamp,
                project_root: init.project_root,
                model: init.model,
                provider: init.provider,
                title: init
                    .first_message
                    .as_deref()
                    .map(session_title)
                    .unwrap_or_default(),
                turns: 0,
                status: SessionStatus::Active,
                usage: SessionUsage::default(),
            };
            let json = Self::encode_meta(&meta)?;
            table
                .insert(id.as_str(), json.as_str())
                .map_err(|e| self.db_err(e))?;
            Ok(meta)
        })
    }

    /// Appends one event to session `id`'s log in its own durable
    /// transaction; returns its sequence number. Fails with
    /// [`StoreError::SessionNotFound`] if the session does not exist.
    pub fn append_event(&self, id: &str, payload: &Value) -> Result<u64, StoreError> {
        self.append_events(id, std::slice::from_ref(payload))
    }

    /// Appends `payloads` to session `id`'s log, in order, in one durable
    /// transaction (all or none); returns the last sequence number. Fails
    /// with [`StoreError::SessionNotFound`] if the session does not exist.
    pub fn append_events(&self, id: &str, payloads: &[Value]) -> Result<u64, StoreError> {
        let mut jsons = Vec::with_capacity(payloads.len());
        for payload in payloads {
            jsons.push(
                serde_json::to_string(payload).map_err(|source| StoreError::Encode {
                    table: EVENTS_TABLE,
                    source,
                })?,
            );
        }
        self.write(|txn| {
            let mut sessions = txn.open_table(SESSIONS).map_err(|e| self.db_err(e))?;
            let mut meta = match sessions.get(id).map_err(|e| self.db_err(e))? {
                Some(v) => self.decode_meta(id, v.value())?,
                None => {
                    return Err(StoreError::SessionNotFound { id: id.to_string() });
                }
            };
            let mut events = txn.open_table(SESSION_EVENTS).map_err(|e| self.db_err(e))?;
            let last = events
                .range((id, 0u64)..=(id, u64::MAX))
                .map_err(|e| self.db_err(e))?
                .next_back()
                .transpose()
                .map_err(|e| self.db_err(e))?
                .map(|(k, _)| k.value().1);
            let mut seq = match last {
                None => 0,
                Some(last) => last
                    .checked_add(1)
                    .ok_or_else(|| self.corrupt(EVENTS_TABLE, id, "event sequence exhausted"))?,
            };
            for (i, json) in jsons.iter().enumerate() {
                if i > 0 {
                    seq = seq.checked_add(1).ok_or_else(|| {
                        self.corrupt(EVENTS_TABLE, id, "event sequence exhausted")
                    })?;
                }
                events
                    .insert((id, seq), json.as_str())
                    .map_err(|e| self.db_err(e))?;
            }
            meta.updated_at = now_rfc3339();
            let meta_json = Self::encode_meta(&meta)?;
            sessions
                .insert(id, meta_json.as_str())
                .map_err(|e| self.db_err(e))?;
            Ok(seq)
        })
    }

    /// Changes session `id`'s record with `f` (its `id` cannot change) and bumps `updated_at`;
    /// returns the stored record. Fails with [`StoreError::SessionNotFound`] if it does not exist.
    pub fn update_session(
        &self,
        id: &str,
        f: impl FnOnce(&mut SessionMeta),
    ) -> Result<SessionMeta, StoreError> {
        self.write(|txn| {
            let mut table = txn.open_table(SESSIONS).map_err(|e| self.db_err(e))?;
            let mut meta = match table.get(id).map_err(|e| self.db_err(e))? {
                Some(v) => self.decode_meta(id, v.value())?,
                None => return Err(StoreError::SessionNotFound { id: id.to_string() }),
            };
            f(&mut meta);
            meta.id = id.to_string();
            meta.updated_at = now_rfc3339();
            let json = Self::encode_meta(&meta)?;
            table
                .insert(id, json.as_str())
                .map_err(|e| self.db_err(e))?;
            Ok(meta)
        })
    }

    /// Session `id`'s record, if it exists.
    pub fn session(&self, id: &str) -> Result<Option<SessionMeta>, StoreError> {
        self.read(|txn| {
            let table = txn.open_table(SESSIONS).map_err(|e| self.db_err(e))?;
            let value = table.get(id).map_err(|e| self.db_err(e))?;
            value.map(|v| self.decode_meta(id, v.value())).transpose()
        })
    }

    /// Every session, newest first (by `created_at`, then by id).
    pub fn sessions(&self) -> Result<Vec<SessionMeta>, StoreError> {
        let mut all = self.read(|txn| {
            let table = txn.open_table(SESSIONS).map_err(|e| self.db_err(e))?;
            let mut out = Vec::new();
            for entry in table.iter().map_err(|e| self.db_err(e))? {
                let (k, v) = entry.map_err(|e| self.db_err(e))?;
                out.push(self.decode_meta(k.value(), v.value())?);
            }
            Ok(out)
        })?;
        all.sort_by_cached_key(|m| Reverse((instant(&m.created_at), m.id.clone())));
        Ok(all)
    }

    /// The most recently updated session (by `updated_at`, then newest id), among those whose
    /// `project_root` is `project_root` when given, or among all sessions.
    pub fn last_session(
        &self,
        project_root: Option<&Path>,
    ) -> Result<Option<SessionMeta>, StoreError> {
        Ok(self
            .sessions()?
            .into_iter()
            .filter(|m| project_root.is_none_or(|root| m.project_root == root))
            .max_by_key(|m| (instant(&m.updated_at), m.id.clone())))
    }

    /// Session `id`'s events, in order, with their sequence numbers. Empty if the session has
    /// no events or does not exist.
    pub fn events(&self, id: &str) -> Result<Vec<(u64, Value)>, StoreError> {
        self.read(|txn| {
            let table = txn.open_table(SESSION_EVENTS).map_err(|e| self.db_err(e))?;
            let mut out = Vec::new();
            for entry in table
                .range((id, 0u64)..=(id, u64::MAX))
                .map_err(|e| self.db_err(e))?
            {
                let (k, v) = entry.map_err(|e| self.db_err(e))?;
                let seq = k.value().1;
                let value: Value = serde_json::from_str(v.value())
                    .map_err(|e| self.corrupt(EVENTS_TABLE, format!("{id}#{seq}"), e))?;
                out.push((seq, value));
            }
            Ok(out)
        })
    }

    /// Deletes session `id`: its record and all its events. Returns whether it existed.
    pub fn delete_session(&self, id: &str) -> Result<bool, StoreError> {
        self.write(|txn| {
            let mut sessions = txn.open_table(SESSIONS).map_err(|e| self.db_err(e))?;
            let existed = sessions.remove(id).map_err(|e| self.db_err(e))?.is_some();
            let mut events = txn.open_table(SESSION_EVENTS).map_err(|e| self.db_err(e))?;
            let mut had_events = false;
            events
                .retain_in((id, 0u64)..=(id, u64::MAX), |_, _| {
                    had_events = true;
                    false
                })
                .map_err(|e| self.db_err(e))?;
            Ok(existed || had_events)
        })
    }

    /// The session whose id is `prefix`, or else the only one whose id starts with `prefix`.
    /// Fails with [`StoreError::SessionNotFound`] when none matches (or `prefix` is empty) and
    /// [`StoreError::AmbiguousSession`] when several do.
    pub fn find_session(&self, prefix: &str) -> Result<SessionMeta, StoreError> {
        let not_found = || StoreError::SessionNotFound {
            id: prefix.to_string(),
        };
        if prefix.is_empty() {
            return Err(not_found());
        }
        let matches = self.read(|txn| {
            let table = txn.open_table(SESSIONS).map_err(|e| self.db_err(e))?;
            if let Some(v) = table.get(prefix).map_err(|e| self.db_err(e))? {
                return Ok(vec![self.decode_meta(prefix, v.value())?]);
            }
            let mut out = Vec::new();
            for entry in table.range(prefix..).map_err(|e| self.db_err(e))? {
                let (k, v) = entry.map_err(|e| self.db_err(e))?;
                if !k.value().starts_with(prefix) {
                    break;
                }
                out.push(self.decode_meta(k.value(), v.value())?);
            }
            Ok(out)
        })?;
        let mut matches = matches.into_iter();
        match (matches.next(), matches.next()) {
            (None, _) => Err(not_found()),
            (Some(only), None) => Ok(only),
            (Some(a), Some(b)) => Err(StoreError::AmbiguousSession {
                prefix: prefix.to_string(),
                matches: [a, b].into_iter().chain(matches).map(|m| m.id).collect(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufRead;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::thread;
    use std::time::Duration;

    use redb::ReadableTableMetadata;
    use serde_json::json;

    use super::*;

    fn open(dir: &Path) -> Store {
        Store::open(dir.join("agent.redb")).unwrap()
    }

    fn new(root: &str, msg: Option<&str>) -> NewSession {
        NewSession {
            project_root: PathBuf::from(root),
            model: "model-x".into(),
            provider: "prov".into(),
            first_message: msg.map(String::from),
        }
    }

    #[test]
    fn ids_are_time_stamped_with_four_hex_digits() {
        let tmp = tempfile::tempdir().unwrap();
        let store = open(tmp.path());
        let meta = store.create_session(new("/p", Some("hi"))).unwrap();
        let parts: Vec<&str> = meta.id.split('-').collect();
        assert_eq!(parts.len(), 3, "{}", meta.id);
        assert_eq!(parts[0].len(), 8);
        assert_eq!(parts[1].len(), 6);
        assert_eq!(parts[2].len(), 4);
        assert!(
            parts[0]
                .chars()
                .chain(parts[1].chars())
                .all(|c| c.is_ascii_digit())
        );
        assert!(parts[2].chars().all(|c| c.is_ascii_hexdigit()));
        assert!(meta.created_at.starts_with(&format!(
            "{}-{}-{}",
            &parts[0][..4],
            &parts[0][4..6],
            &parts[0][6..]
        )));
        assert_eq!(meta.status, SessionStatus::Active);
        assert_eq!(meta.title, "hi");
        assert_eq!(store.session(&meta.id).unwrap(), Some(meta));
        // Many sessions in the same second still get distinct ids.
        let mut ids: Vec<String> = (0..50)
            .map(|_| store.create_session(new("/p", None)).unwrap().id)
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 50);
    }

    #[test]
    fn titles_collapse_whitespace_and_cut_at_80_chars() {
        assert_eq!(session_title("  fix\n the   bug "), "fix the bug");
        let long = "é".repeat(200);
        let title = session_title(&long);
        assert_eq!(title.chars().count(), 80);
        assert!(title.ends_with('…'));
        assert_eq!(session_title(&"a".repeat(80)), "a".repeat(80));
    }

    #[test]
    fn events_read_back_in_order_and_bump_updated_at() {
        let tmp = tempfile::tempdir().unwrap();
        let store = open(tmp.path());
        let meta = store.create_session(new("/p", Some("hello"))).unwrap();
        assert!(store.events(&meta.id).unwrap().is_empty());
        thread::sleep(Duration::from_millis(5));
        for i in 0..12u64 {
            let seq = store
                .append_event(&meta.id, &json!({"kind": "message", "i": i}))
                .unwrap();
            assert_eq!(seq, i);
        }
        let events = store.events(&meta.id).unwrap();
        assert_eq!(events.len(), 12);
        for (i, (seq, v)) in events.iter().enumerate() {
            assert_eq!(*seq, i as u64);
            assert_eq!(v["i"], json!(i));
        }
        let after = store.session(&meta.id).unwrap().unwrap();
        assert!(instant(&after.updated_at) > instant(&meta.updated_at));
        assert_eq!(after.created_at, meta.created_at);
    }

    #[test]
    fn appending_to_an_unknown_session_fails() {
        let tmp = tempfile::tempdir().unwrap();
        let store = open(tmp.path());
        let err = store.append_event("nope", &json!(1)).unwrap_err();
        assert!(matches!(err, StoreError::SessionNotFound { .. }), "{err:?}");
        let err = store.update_session("nope", |_| {}).unwrap_err();
        assert!(matches!(err, StoreError::SessionNotFound { .. }), "{err:?}");
        assert_eq!(store.session("nope").unwrap(), None);
    }

    #[test]
    fn two_interleaved_sessions_keep_separate_logs() {
        let tmp = tempfile::tempdir().unwrap();
        let store = open(tmp.path());
        let a = store.create_session(new("/a", None)).unwrap();
        let b = store.create_session(new("/b", None)).unwrap();
        for i in 0..5u64 {
            assert_eq!(store.append_event(&a.id, &json!({"a": i})).unwrap(), i);
            assert_eq!(store.append_event(&b.id, &json!({"b": i})).unwrap(), 2 * i);
            assert_eq!(
                store.append_event(&b.id, &json!({"b2": i})).unwrap(),
                2 * i + 1
            );
        }
        let ea = store.events(&a.id).unwrap();
        let eb = store.events(&b.id).unwrap();
        assert_eq!(ea.len(), 5);
        assert_eq!(eb.len(), 10);
        assert!(ea.iter().all(|(_, v)| v.get("a").is_some()));
        assert!(eb.iter().all(|(_, v)| v.get("a").is_none()));
        let seqs: Vec<u64> = eb.iter().map(|(s, _)| *s).collect();
        assert_eq!(seqs, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn update_session_changes_fields_but_not_the_id() {
        let tmp = tempfile::tempdir().unwrap();
        let store = open(tmp.path());
        let meta = store.create_session(new("/p", None)).unwrap();
        let updated = store
            .update_session(&meta.id, |m| {
                m.id = "hijack".into();
                m.turns += 3;
                m.status = SessionStatus::Completed;
                m.usage.input_tokens = 100;
                m.usage.output_tokens = 7;
                m.title = session_title("first question");
            })
            .unwrap();
        assert_eq!(updated.id, meta.id);
        assert_eq!(store.session(&meta.id).unwrap(), Some(updated.clone()));
        assert_eq!(store.session("hijack").unwrap(), None);
        assert_eq!(updated.turns, 3);
        assert_eq!(updated.status, SessionStatus::Completed);
        // The JSON uses the documented lowercase status spelling.
        let json = serde_json::to_value(&updated).unwrap();
        assert_eq!(json["status"], json!("completed"));
        assert_eq!(json["usage"]["input_tokens"], json!(100));
    }

    #[test]
    fn sessions_are_listed_newest_first_and_last_session_is_per_project() {
        let tmp = tempfile::tempdir().unwrap();
        let store = open(tmp.path());
        let mut ids = Vec::new();
        for root in ["/a", "/b", "/a", "/c"] {
            ids.push(store.create_session(new(root, None)).unwrap().id);
            thread::sleep(Duration::from_millis(3));
        }
        let listed: Vec<String> = store
            .sessions()
            .unwrap()
            .into_iter()
            .map(|m| m.id)
            .collect();
        let mut expected = ids.clone();
        expected.reverse();
        assert_eq!(listed, expected);

        let last = |root: Option<&str>| {
            store
                .last_session(root.map(Path::new))
                .unwrap()
                .map(|m| m.id)
        };
        assert_eq!(last(None).as_ref(), Some(&ids[3]));
        assert_eq!(last(Some("/a")).as_ref(), Some(&ids[2]));
        assert_eq!(last(Some("/b")).as_ref(), Some(&ids[1]));
        assert_eq!(last(Some("/zzz")), None);
        // Activity in an older session makes it the last one.
        thread::sleep(Duration::from_millis(3));
        store.append_event(&ids[0], &json!("resumed")).unwrap();
        assert_eq!(last(Some("/a")).as_ref(), Some(&ids[0]));
        assert_eq!(last(None).as_ref(), Some(&ids[0]));
        // Listing order stays by creation.
        assert_eq!(store.sessions().unwrap()[0].id, ids[3]);
    }

    #[test]
    fn delete_removes_the_record_and_all_events_only_of_that_session() {
        let tmp = tempfile::tempdir().unwrap();
        let store = open(tmp.path());
        let a = store.create_session(new("/p", None)).unwrap();
        let b = store.create_session(new("/p", None)).unwrap();
        for i in 0..4 {
            store.append_event(&a.id, &json!(i)).unwrap();
            store.append_event(&b.id, &json!(i)).unwrap();
        }
        assert!(store.delete_session(&a.id).unwrap());
        assert!(!store.delete_session(&a.id).unwrap());
        assert_eq!(store.session(&a.id).unwrap(), None);
        assert!(store.events(&a.id).unwrap().is_empty());
        assert_eq!(store.events(&b.id).unwrap().len(), 4);
        assert_eq!(store.sessions().unwrap().len(), 1);
        // Raw check: no event key of `a` is left in the table.
        let left = store
            .read(|txn| {
                let t = txn
                    .open_table(SESSION_EVENTS)
                    .map_err(|e| store.db_err(e))?;
                t.len().map_err(|e| store.db_err(e))
            })
            .unwrap();
        assert_eq!(left, 4);
    }

    #[test]
    fn find_session_resolves_prefixes_with_clear_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let store = open(tmp.path());
        let a = store.create_session(new("/p", None)).unwrap();
        let mut b = store.create_session(new("/p", None)).unwrap();
        while b.id[..15] != a.id[..15] {
            // Crossed a second boundary: try again for two ids sharing the timestamp.
            b = store.create_session(new("/p", None)).unwrap();
        }
        let b = b;
        assert_eq!(store.find_session(&a.id).unwrap().id, a.id);
        assert_eq!(store.find_session(&b.id).unwrap().id, b.id);
        let all_on_day = &a.id[..8];
        let err = store.find_session(all_on_day).unwrap_err();
        match &err {
            StoreError::AmbiguousSession { prefix, matches } => {
                assert_eq!(prefix, all_on_day);
                assert!(matches.contains(&a.id) && matches.contains(&b.id));
            }
            other => panic!("{other:?}"),
        }
        let msg = err.to_string();
        assert!(
            msg.contains("give more of the id") && msg.contains(&a.id),
            "{msg}"
        );
        let err = store.find_session("19990101").unwrap_err();
        assert!(matches!(err, StoreError::SessionNotFound { .. }), "{err:?}");
        assert_eq!(err.to_string(), "no session matches `19990101`");
        assert!(matches!(
            store.find_session("").unwrap_err(),
            StoreError::SessionNotFound { .. }
        ));
        // A unique prefix resolves.
        let c = store.create_session(new("/p", None)).unwrap();
        let mine: Vec<_> = store
            .sessions()
            .unwrap()
            .into_iter()
            .filter(|m| m.id != c.id)
            .collect();
        let n = (1..=c.id.len())
            .find(|&n| mine.iter().all(|m| !m.id.starts_with(&c.id[..n])))
            .unwrap();
        assert_eq!(store.find_session(&c.id[..n]).unwrap().id, c.id);
    }

    #[test]
    fn sessions_and_events_survive_reopening_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let (id, meta) = {
            let store = open(tmp.path());
            let meta = store.create_session(new("/p", Some("persist me"))).unwrap();
            for i in 0..3 {
                store.append_event(&meta.id, &json!({"n": i})).unwrap();
            }
            let meta = store
                .update_session(&meta.id, |m| m.status = SessionStatus::Interrupted)
                .unwrap();
            (meta.id.clone(), meta)
        };
        let store = open(tmp.path());
        assert_eq!(store.session(&id).unwrap(), Some(meta));
        let events = store.events(&id).unwrap();
        assert_eq!(
            events,
            (0..3u64).map(|i| (i, json!({"n": i}))).collect::<Vec<_>>()
        );
        assert_eq!(store.append_event(&id, &json!("more")).unwrap(), 3);
    }

    /// Runs in a child process (see `events_committed_before_a_sigkill_survive`): appends
    /// events as fast as it can, printing each committed seq, until killed.
    #[test]
    fn session_writer_child() {
        let (Some(path), Some(id)) = (
            std::env::var_os("AGENT_STORE_SESSION_DB"),
            std::env::var("AGENT_STORE_SESSION_ID").ok(),
        ) else {
            return;
        };
        let store = Store::open(&path).unwrap();
        for i in 0..1_000_000u64 {
            let seq = store
                .append_event(
                    &id,
                    &json!({"kind": "tool_result", "i": i, "pad": "x".repeat(200)}),
                )
                .unwrap();
            println!("committed {seq}");
        }
    }

    #[test]
    fn events_committed_before_a_sigkill_survive() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("agent.redb");
        let id = {
            let store = Store::open(&path).unwrap();
            let meta = store.create_session(new("/p", Some("crash"))).unwrap();
            store
                .append_event(&meta.id, &json!({"i": "before"}))
                .unwrap();
            meta.id
        };
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "sessions::tests::session_writer_child",
                "--nocapture",
            ])
            .env("AGENT_STORE_SESSION_DB", &path)
            .env("AGENT_STORE_SESSION_ID", &id)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = std::io::BufReader::new(stdout).lines();
        let mut reported = Vec::new();
        while reported.len() < 40 {
            let line = lines.next().expect("child ended early").unwrap();
            if let Some(seq) = line.strip_prefix("committed ") {
                reported.push(seq.trim().parse::<u64>().unwrap());
            }
        }
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success());
        // Lines the child wrote before dying also count as reported commits.
        for line in lines {
            let Ok(line) = line else { break };
            if let Some(seq) = line.strip_prefix("committed ")
                && let Ok(seq) = seq.trim().parse::<u64>()
            {
                reported.push(seq);
            }
        }

        let store = Store::open(&path).unwrap();
        let events = store.events(&id).unwrap();
        let seqs: Vec<u64> = events.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            seqs,
            (0..seqs.len() as u64).collect::<Vec<_>>(),
            "gap in the log"
        );
        assert_eq!(events[0].1, json!({"i": "before"}));
        for (seq, value) in &events[1..] {
            assert_eq!(value["i"], json!(seq - 1));
        }
        let max_reported = *reported.iter().max().unwrap();
        eprintln!(
            "child reported {} commits (max seq {max_reported}); log holds {} events",
            reported.len(),
            events.len()
        );
        assert!(
            (max_reported as usize) < events.len(),
            "reported seq {max_reported} missing; log has {} events",
            events.len()
        );
        // The log keeps working after the crash.
        let next = store.append_event(&id, &json!("after")).unwrap();
        assert_eq!(next, events.len() as u64);
    }
}

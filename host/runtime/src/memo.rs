//! The memo of verified files: for each cached artifact whose seal was
//! checked, the identity of the file checked (device, inode, size,
//! modification and change times), and for each component file whose
//! bytes were hashed, that identity and the SHA-256 of its unsigned part.
//! While an artifact keeps its identity it is mapped without being read and
//! its seal checked again; while a component does, its signature is checked
//! against the remembered digest instead of hashing it again.
//!
//! Why that is sound: the memo itself is sealed with the cache's key, so
//! someone who can write the cache but not the key cannot add an entry.
//! Replacing an artifact (rename, restore from a backup, copy) gives it a
//! new inode or change time; rewriting it in place changes its change time,
//! which no user can set. A file is mapped through the descriptor whose
//! identity was compared (Linux: `/proc/self/fd`), so it cannot be swapped
//! between the comparison and the mapping. What is left, writing into the
//! mapped file after the comparison, needs write access to a file of mode
//! 0600: the user's own processes, which can read the key anyway.

use std::collections::BTreeMap;
use std::fs::{File, Metadata};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::seal::{SealKey, TAG_LEN};

/// Entries kept at most (the oldest go first).
const MAX_ENTRIES: usize = 256;

/// A file's identity: what changes whenever its contents may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Identity([u64; 5]);

impl Identity {
    /// The identity in `meta`; `None` off Unix (nothing is memoized).
    pub(crate) fn of(meta: &Metadata) -> Option<Identity> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| {
                (s as u64)
                    .wrapping_mul(1_000_000_000)
                    .wrapping_add(n as u64)
            };
            Some(Identity([
                meta.dev(),
                meta.ino(),
                meta.size(),
                ns(meta.mtime(), meta.mtime_nsec()),
                ns(meta.ctime(), meta.ctime_nsec()),
            ]))
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

/// One memo file, read once per process: name → (identity, value).
#[derive(Debug)]
pub(crate) struct Memo {
    path: PathBuf,
    /// What the memo's tag is bound to in place of a component digest (its
    /// kind: one memo cannot pass for another).
    label: String,
    entries: BTreeMap<String, (Identity, String)>,
}

impl Memo {
    /// Reads the memo `kind` that belongs to the key file `key_file` (next
    /// to it: where only the user writes, outside the cache directory);
    /// empty when absent, unreadable or its seal does not match: then every
    /// file is checked again.
    pub(crate) fn load(key_file: &Path, kind: &str, key: &SealKey, engine_key: &str) -> Memo {
        let mut name = key_file.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".verified-{kind}-{engine_key}"));
        let path = key_file.with_file_name(name);
        let label = format!("memo of verified {kind}");
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|sealed| {
                let body = key.open(&label, engine_key, &sealed)?;
                parse(std::str::from_utf8(body).ok()?)
            })
            .unwrap_or_default();
        Memo {
            path,
            label,
            entries,
        }
    }

    /// What was recorded for `name` when it had identity `id`, if it still has.
    pub(crate) fn get(&self, name: &str, id: Identity) -> Option<&str> {
        match self.entries.get(name) {
            Some((recorded, value)) if *recorded == id => Some(value),
            _ => None,
        }
    }

    /// Records `value` for `name` with identity `id` and writes the memo (a
    /// failure only costs a check next time). `value` has no spaces or
    /// line breaks.
    pub(crate) fn record(
        &mut self,
        name: &str,
        id: Identity,
        value: &str,
        key: &SealKey,
        engine_key: &str,
    ) {
        if self.get(name, id) == Some(value) {
            return;
        }
        self.entries
            .insert(name.to_string(), (id, value.to_string()));
        while self.entries.len() > MAX_ENTRIES {
            self.entries.pop_first();
        }
        if let Err(e) = self.write(key, engine_key) {
            tracing::debug!("could not write {}: {e}", self.path.display());
        }
    }

    /// Forgets `name` (its artifact was rejected or replaced).
    pub(crate) fn forget(&mut self, name: &str) {
        self.entries.remove(name);
    }

    fn write(&self, key: &SealKey, engine_key: &str) -> std::io::Result<()> {
        let mut body = String::new();
        for (name, (Identity(v), value)) in &self.entries {
            body.push_str(&format!(
                "{name} {} {} {} {} {} {value}\n",
                v[0], v[1], v[2], v[3], v[4]
            ));
        }
        let tag: [u8; TAG_LEN] = key.tag(&self.label, engine_key, body.as_bytes());
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut tmp = tempfile::Builder::new()
            .prefix(".memo-")
            .suffix(".tmp")
            .tempfile_in(dir)?;
        tmp.write_all(body.as_bytes())?;
        tmp.write_all(&tag)?;
        tmp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }
}

fn parse(text: &str) -> Option<BTreeMap<String, (Identity, String)>> {
    let mut entries = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split(' ');
        let name = fields.next()?.to_string();
        let mut v = [0u64; 5];
        for slot in &mut v {
            *slot = fields.next()?.parse().ok()?;
        }
        let value = fields.next()?.to_string();
        entries.insert(name, (Identity(v), value));
    }
    Some(entries)
}

/// Whether a file of identity `id` last changed long enough ago that a
/// change after now would give it another change time (timestamps are
/// coarser than a nanosecond; git's "racy clean" problem). A file changed
/// within the last two seconds is checked again next time, not memoized.
pub(crate) fn settled(id: Identity) -> bool {
    let changed = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(id.0[4]);
    std::time::SystemTime::now()
        .duration_since(changed)
        .is_ok_and(|age| age >= std::time::Duration::from_secs(2))
}

/// A path that opens exactly the file `file` is open on (not whatever the
/// artifact's path names by then), where the system has one.
pub(crate) fn path_of_open(file: &File) -> Option<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        path.exists().then_some(path)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

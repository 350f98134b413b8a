//! The append-only, hash-chained audit log.
//!
//! # Format
//!
//! JSON Lines (`audit.log`), one entry per line, fields in this order:
//!
//! ```text
//! {"seq":1,"time":"2026-01-02T03:04:05.678Z","skill":"core-tools","capability":"shell:exec","target":"git status","decision":"granted:stored","prev":"000…000","hash":"9f2c…"}
//! ```
//!
//! - `seq` counts from 1 without gaps; `time` is RFC 3339 in UTC with milliseconds.
//! - `prev` is the `hash` of the entry before (64 zeros for the first).
//! - `hash` is the lower-case hex SHA-256 of the 64 ASCII characters of `prev` followed by the
//!   *body*: the compact JSON object `{"seq":…,"time":…,"skill":…,"capability":…,"target":…,"decision":…}`
//!   with exactly these keys in this order, as `serde_json` writes it.
//! - Every line is exactly the compact JSON of its entry (the body's keys, then `prev` and
//!   `hash`), so a change to any byte is detected, whitespace included.
//!
//! Next to the log, `audit.log.head` holds the newest entry's `{"seq":N,"hash":"…"}`, padded
//! with spaces to a fixed 128 bytes (127 and a newline). It is overwritten in place after every
//! append, under the same lock, by one write that fits in a disk sector (so it is atomic on
//! real storage; a rename-based replacement forces a flush on ext4 and would cost ~150 µs per
//! append). Removing lines from the end of the log is thereby detected. The head may lag the log by the
//! entries written by an append that was interrupted before it updated the head; the log never
//! lags the head.
//!
//! # Concurrency
//!
//! An append takes an exclusive lock on the log file (across processes), reads the last line
//! (only the end of the file) and the head, checks that they agree, writes the new line and then
//! the head. Threads of one process sharing an [`AuditLog`] are serialised by a mutex as well.
//! Appends are not `fsync`ed: after a power loss the newest entries may be missing from both the
//! log and the head, which `verify` does not report; any other change is reported.
//!
//! The chain and head detect edits, removals, reordering and truncation. They do not detect a
//! complete rewrite of both files by someone who can write them (there is no secret key).

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use time::macros::format_description;

mod rotate;

pub use rotate::{ROTATE_CAPABILITY, Rotated, Rotation};

/// The `prev` of the first entry.
pub const GENESIS_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What to append: one grant decision or one capability use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    /// The skill concerned.
    pub skill: String,
    /// The permission or capability (`shell:exec`, `http`, `revoke`).
    pub capability: String,
    /// What it was used on (a program and its arguments, a URL, a path).
    pub target: String,
    /// The decision or outcome (`granted:stored`, `denied:undeclared`, `ok`, `error: …`).
    pub decision: String,
}

/// One line of the audit log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditEntry {
    /// Position in the log, from 1.
    pub seq: u64,
    /// When it was written, RFC 3339 UTC with milliseconds.
    pub time: String,
    /// The skill concerned.
    pub skill: String,
    /// The permission or capability.
    pub capability: String,
    /// What it was used on.
    pub target: String,
    /// The decision or outcome.
    pub decision: String,
    /// The hash of the entry before.
    pub prev: String,
    /// This entry's hash.
    pub hash: String,
}

/// The hashed part of an entry, in canonical order.
#[derive(Serialize)]
struct Body<'a> {
    seq: u64,
    time: &'a str,
    skill: &'a str,
    capability: &'a str,
    target: &'a str,
    decision: &'a str,
}

impl AuditEntry {
    /// The entry `seq` for `record`, written now, chained to `prev`.
    fn new(seq: u64, prev: String, record: AuditRecord) -> AuditEntry {
        let time = now_ms();
        let body = Body {
            seq,
            time: &time,
            skill: &record.skill,
            capability: &record.capability,
            target: &record.target,
            decision: &record.decision,
        };
        let hash = chain_hash(&prev, &body);
        AuditEntry {
            seq,
            time,
            skill: record.skill,
            capability: record.capability,
            target: record.target,
            decision: record.decision,
            prev,
            hash,
        }
    }

    /// Its line in the log: the canonical JSON and a newline.
    fn line(&self) -> Vec<u8> {
        // A struct of strings and integers always serialises.
        let mut line = serde_json::to_vec(self).unwrap_or_default();
        line.push(b'\n');
        line
    }

    /// The hash this entry should carry, computed from `prev` and its body.
    pub fn compute_hash(&self) -> String {
        let body = Body {
            seq: self.seq,
            time: &self.time,
            skill: &self.skill,
            capability: &self.capability,
            target: &self.target,
            decision: &self.decision,
        };
        chain_hash(&self.prev, &body)
    }
}

fn chain_hash(prev: &str, body: &Body<'_>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prev.as_bytes());
    // A struct of strings and an integer always serialises.
    let _ = serde_json::to_writer(&mut HashWriter(&mut hasher), body);
    hex::encode(hasher.finalize())
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The head anchor file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    seq: u64,
    hash: String,
}

/// Why the audit log could not be read or appended to.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// A file operation failed.
    #[error("audit log {}: {source}", path.display())]
    Io {
        /// The file concerned (the log or its head).
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A line is not an audit entry: the log is damaged.
    #[error("audit log {} is damaged: line {line} is not a valid entry: {message}; {ROTATE_HINT}", path.display())]
    Malformed {
        /// The log.
        path: PathBuf,
        /// The line (1-based); for an append, the log's last line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// The log and its head disagree, or its last entry was changed: the log is damaged.
    /// Nothing more is appended until it is sealed aside (`agent audit rotate`).
    #[error("audit log {} is damaged: {message}; nothing more is appended to it: {ROTATE_HINT}", path.display())]
    Tampered {
        /// The log.
        path: PathBuf,
        /// What disagrees.
        message: String,
    },
}

/// What to do about a damaged log, for messages.
pub const ROTATE_HINT: &str = "run `agent audit verify` to see where, then `agent audit rotate` to seal it aside and start a new chain that records the break";

impl AuditError {
    /// Whether the log itself is damaged (a broken chain, a bad line, a head that disagrees),
    /// as opposed to a file operation that failed ([`AuditError::Io`], e.g. a full disk).
    /// Appends to a damaged log fail until `agent audit rotate` seals it aside.
    pub fn is_damaged(&self) -> bool {
        matches!(
            self,
            AuditError::Malformed { .. } | AuditError::Tampered { .. }
        )
    }
}

/// Why [`AuditLog::verify`] rejected a log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyProblem {
    /// The log or its head could not be read.
    #[error("cannot read {}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        message: String,
    },
    /// A line is not valid JSON or not an audit entry (including an incomplete last line).
    #[error("line {line} is not a valid entry: {message}")]
    Malformed {
        /// The line (1-based).
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// A line's content does not match its hash (or is not written canonically): it was edited.
    #[error("line {line} (seq {seq}) was edited: its content does not match its hash")]
    Edited {
        /// The line (1-based).
        line: u64,
        /// The seq the line claims.
        seq: u64,
    },
    /// A line carries the wrong sequence number: an entry before it was removed, or lines were
    /// reordered.
    #[error(
        "line {line} has seq {found}, expected {expected}: an entry was removed or lines were reordered"
    )]
    SeqGap {
        /// The line (1-based).
        line: u64,
        /// The seq it should have.
        expected: u64,
        /// The seq it has.
        found: u64,
    },
    /// A line does not chain to the line before it: an entry was removed or replaced.
    #[error(
        "line {line} (seq {seq}) does not chain to the entry before it: an entry was removed or replaced"
    )]
    PrevMismatch {
        /// The line (1-based).
        line: u64,
        /// Its seq.
        seq: u64,
    },
    /// The head anchors an entry beyond the end of the log: its tail was removed.
    #[error(
        "the log ends at seq {last_seq} but its head records seq {head_seq}: entries were removed from the end"
    )]
    Truncated {
        /// The seq the head records.
        head_seq: u64,
        /// The last seq in the log (0 when empty).
        last_seq: u64,
    },
    /// The head records a different hash for its entry than the log holds.
    #[error(
        "line {line} (seq {seq}) does not match the hash its head records: the log was rewritten"
    )]
    HeadMismatch {
        /// The line (1-based).
        line: u64,
        /// The seq.
        seq: u64,
    },
    /// The log has entries but no head file.
    #[error("the log has {entries} entries but its head file {} is missing", head.display())]
    MissingHead {
        /// How many entries the log has.
        entries: u64,
        /// The expected head file.
        head: PathBuf,
    },
    /// The head file is not valid.
    #[error("the head file {} is not valid: {message}", head.display())]
    BadHead {
        /// The head file.
        head: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// A log that failed verification.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("audit log {}: {problem}", path.display())]
pub struct VerifyError {
    /// The log.
    pub path: PathBuf,
    /// What is wrong, with the line where it applies.
    pub problem: VerifyProblem,
}

/// A log that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// How many entries it has.
    pub entries: u64,
    /// The hash of its last entry ([`GENESIS_HASH`] when empty).
    pub head_hash: String,
    /// The seq the head file anchors (≤ `entries`; less only after an interrupted append).
    pub anchored_seq: u64,
    /// When the log was started by `agent audit rotate`: the log it sealed aside.
    pub rotated_from: Option<Rotated>,
}

/// An open audit log, shared (`Arc`) by the threads of a process.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    head_path: PathBuf,
    file: Mutex<File>,
}

/// `audit.log` → `audit.log.head`.
fn head_path_of(path: &Path) -> PathBuf {
    let mut s: OsString = path.as_os_str().to_owned();
    s.push(".head");
    PathBuf::from(s)
}

fn now_ms() -> String {
    let format =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");
    // Only years outside 0..=9999 fail to format.
    OffsetDateTime::now_utc()
        .format(&format)
        .unwrap_or_else(|_| String::from("1970-01-01T00:00:00.000Z"))
}

/// Holds an exclusive or shared lock on a file until dropped.
struct FileLock<'a>(&'a File);

impl<'a> FileLock<'a> {
    fn exclusive(file: &'a File) -> io::Result<FileLock<'a>> {
        file.lock()?;
        Ok(FileLock(file))
    }
    fn shared(file: &'a File) -> io::Result<FileLock<'a>> {
        file.lock_shared()?;
        Ok(FileLock(file))
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // Closing the file releases the lock as well; nothing to do on failure.
        let _ = self.0.unlock();
    }
}

/// The end of the log: its last complete line and where it ends.
struct Tail {
    /// The last complete line (without its newline), if any.
    last_line: Option<Vec<u8>>,
    /// The length of the file up to and including the last newline.
    complete_len: u64,
}

/// Reads the last complete line of `file` (of length `len`), reading backwards in growing
/// chunks from the end.
fn read_tail(mut file: &File, len: u64) -> io::Result<Tail> {
    let mut chunk: u64 = 4096;
    loop {
        let start = len.saturating_sub(chunk);
        let mut buf = vec![0; usize::try_from(len - start).unwrap_or(usize::MAX)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf)?;
        // The last newline ends the last complete line.
        let Some(end) = buf.iter().rposition(|&b| b == b'\n') else {
            if start == 0 {
                return Ok(Tail {
                    last_line: None,
                    complete_len: 0,
                });
            }
            chunk = chunk.saturating_mul(4);
            continue;
        };
        match buf[..end].iter().rposition(|&b| b == b'\n') {
            Some(begin) => {
                return Ok(Tail {
                    last_line: Some(buf[begin + 1..end].to_vec()),
                    complete_len: start + end as u64 + 1,
                });
            }
            None if start == 0 => {
                return Ok(Tail {
                    last_line: Some(buf[..end].to_vec()),
                    complete_len: end as u64 + 1,
                });
            }
            None => chunk = chunk.saturating_mul(4),
        }
    }
}

/// The size of the head file: the JSON record padded with spaces, then a newline. Fixed, so
/// that it is overwritten in place by one small write (a single sector, which storage writes
/// atomically) instead of being replaced by a rename, which on ext4 forces a flush and costs
/// ~150 µs per append.
const HEAD_LEN: usize = 128;

fn encode_head(head: &Head) -> io::Result<Vec<u8>> {
    let mut record = serde_json::to_vec(head).map_err(io::Error::other)?;
    if record.len() >= HEAD_LEN {
        return Err(io::Error::other("head record too long"));
    }
    record.resize(HEAD_LEN - 1, b' ');
    record.push(b'\n');
    Ok(record)
}

/// Parses a head file's content; `None` when it is empty (created, never written).
fn parse_head(text: &[u8]) -> Result<Option<Head>, String> {
    if text.is_empty() {
        return Ok(None);
    }
    serde_json::from_slice::<Head>(text)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// Reads the head file; `None` when it does not exist or is empty.
fn read_head(head_path: &Path) -> Result<Option<Head>, String> {
    match std::fs::read(head_path) {
        Ok(text) => parse_head(&text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Parses one line as an entry in canonical form, with its hash checked.
enum LineCheck {
    Malformed(String),
    Edited(AuditEntry),
    Ok(AuditEntry),
}

fn check_line(line: &[u8]) -> LineCheck {
    let entry: AuditEntry = match serde_json::from_slice(line) {
        Ok(e) => e,
        Err(e) => return LineCheck::Malformed(e.to_string()),
    };
    let canonical = serde_json::to_vec(&entry).unwrap_or_default();
    if canonical != line || entry.compute_hash() != entry.hash {
        return LineCheck::Edited(entry);
    }
    LineCheck::Ok(entry)
}

impl AuditLog {
    /// Opens the log at `path` for appending, creating it (mode 0600 on unix) and its
    /// directory if needed.
    pub fn open(path: impl AsRef<Path>) -> Result<AuditLog, AuditError> {
        let path = path.as_ref().to_path_buf();
        let io_err = |source| AuditError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io_err)?;
        }
        let mut options = OpenOptions::new();
        options.read(true).append(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options.open(&path).map_err(io_err)?;
        Ok(AuditLog {
            head_path: head_path_of(&path),
            path,
            file: Mutex::new(file),
        })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The head anchor file next to a log.
    pub fn head_path(path: impl AsRef<Path>) -> PathBuf {
        head_path_of(path.as_ref())
    }

    /// Appends `record` and returns its `seq`. Refuses ([`AuditError::Tampered`]) when the log
    /// and its head disagree, so that a truncated log is not silently continued.
    pub fn append(&self, record: AuditRecord) -> Result<u64, AuditError> {
        let file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        let io_err = |source| AuditError::Io {
            path: self.path.clone(),
            source,
        };
        let _lock = FileLock::exclusive(&file).map_err(io_err)?;
        let len = file.metadata().map_err(io_err)?.len();
        let tail = read_tail(&file, len).map_err(io_err)?;
        let last = match &tail.last_line {
            None => None,
            Some(line) => match check_line(line) {
                LineCheck::Ok(entry) => Some(entry),
                LineCheck::Edited(entry) => {
                    return Err(self.tampered(format!(
                        "the last entry (seq {}) does not match its hash",
                        entry.seq
                    )));
                }
                LineCheck::Malformed(message) => {
                    return Err(AuditError::Malformed {
                        path: self.path.clone(),
                        line: count_lines(&file, tail.complete_len).map_err(io_err)?,
                        message,
                    });
                }
            },
        };
        let (head_file, head) = self.open_head()?;
        let last_seq = last.as_ref().map_or(0, |e| e.seq);
        match (&head, &last) {
            (None, None) => {}
            (None, Some(_)) => {
                return Err(self.tampered(format!(
                    "the head file {} is missing",
                    self.head_path.display()
                )));
            }
            (Some(h), _) if h.seq > last_seq => {
                return Err(self.tampered(format!(
                    "the log ends at seq {last_seq} but its head records seq {}",
                    h.seq
                )));
            }
            (Some(h), Some(l)) if h.seq == l.seq && h.hash != l.hash => {
                return Err(self.tampered(format!(
                    "the last entry (seq {}) is not the one its head records",
                    l.seq
                )));
            }
            (Some(_), _) => {}
        }
        if tail.complete_len < len {
            // An incomplete line after the last complete one: an append interrupted while
            // writing. Its entry was never anchored (the head is written after the line), so it
            // is dropped; only when the head confirms that.
            if head.as_ref().map_or(0, |h| h.seq) != last_seq {
                return Err(self.tampered(
                    "the log ends with an incomplete line after unanchored entries".into(),
                ));
            }
            file.set_len(tail.complete_len).map_err(io_err)?;
        }

        let seq = last_seq + 1;
        let prev = last.map_or_else(|| GENESIS_HASH.to_string(), |e| e.hash);
        let entry = AuditEntry::new(seq, prev, record);
        (&*file).write_all(&entry.line()).map_err(io_err)?;
        self.write_head(
            head_file,
            &Head {
                seq,
                hash: entry.hash,
            },
        )?;
        Ok(seq)
    }

    fn tampered(&self, message: String) -> AuditError {
        AuditError::Tampered {
            path: self.path.clone(),
            message,
        }
    }

    /// Opens (creating if needed) the head file and reads it; `None` when it is empty.
    fn open_head(&self) -> Result<(File, Option<Head>), AuditError> {
        let io_err = |source| AuditError::Io {
            path: self.head_path.clone(),
            source,
        };
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&self.head_path).map_err(io_err)?;
        let mut text = Vec::with_capacity(HEAD_LEN);
        file.read_to_end(&mut text).map_err(io_err)?;
        let head = parse_head(&text).map_err(|message| {
            self.tampered(format!(
                "the head file {} is not valid: {message}",
                self.head_path.display()
            ))
        })?;
        Ok((file, head))
    }

    /// Overwrites the head record in place. Called with the log locked.
    fn write_head(&self, file: File, head: &Head) -> Result<(), AuditError> {
        write_head_to(file, head).map_err(|source| AuditError::Io {
            path: self.head_path.clone(),
            source,
        })
    }

    /// Reads every entry of the log at `path` without verifying the chain (an absent log has
    /// none).
    pub fn entries(path: impl AsRef<Path>) -> Result<Vec<AuditEntry>, AuditError> {
        let path = path.as_ref();
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => {
                return Err(AuditError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut out = Vec::new();
        for (i, line) in text
            .split(|&b| b == b'\n')
            .enumerate()
            .filter(|(_, l)| !l.is_empty())
        {
            let entry = serde_json::from_slice(line).map_err(|e| AuditError::Malformed {
                path: path.to_path_buf(),
                line: i as u64 + 1,
                message: e.to_string(),
            })?;
            out.push(entry);
        }
        Ok(out)
    }

    /// Verifies the log at `path` and its head file: every line canonical and matching its
    /// hash, seqs contiguous from 1, each `prev` the hash before it, and the head anchoring an
    /// entry that is in the log. Reports the first problem with its line.
    pub fn verify(path: impl AsRef<Path>) -> Result<VerifyReport, VerifyError> {
        let path = path.as_ref();
        let head_path = head_path_of(path);
        let fail = |problem| VerifyError {
            path: path.to_path_buf(),
            problem,
        };
        let io_fail = |p: &Path, e: io::Error| {
            fail(VerifyProblem::Io {
                path: p.to_path_buf(),
                message: e.to_string(),
            })
        };
        // Read the log and the head under a shared lock, so no append is half-way.
        let (text, head) = match File::open(path) {
            Ok(file) => {
                let _lock = FileLock::shared(&file).map_err(|e| io_fail(path, e))?;
                let mut text = Vec::new();
                (&file)
                    .read_to_end(&mut text)
                    .map_err(|e| io_fail(path, e))?;
                (text, read_head(&head_path))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => (Vec::new(), read_head(&head_path)),
            Err(e) => return Err(io_fail(path, e)),
        };
        walk(&text, &head_path, head).outcome.map_err(fail)
    }
}

/// What [`walk`] found: the verdict, and how far the chain held from the start.
struct Walk {
    /// The report, or the first problem.
    outcome: Result<VerifyReport, VerifyProblem>,
    /// The last entry that chains from the start (seq 0 when none does).
    last_good_seq: u64,
    /// Its hash ([`GENESIS_HASH`] when none).
    last_good_hash: String,
}

/// Checks the chain of a log's bytes `text` against its head (read from `head_path`).
fn walk(text: &[u8], head_path: &Path, head: Result<Option<Head>, String>) -> Walk {
    let mut prev = GENESIS_HASH.to_string();
    let mut hashes: Vec<String> = Vec::new();
    let mut rotated_from = None;
    let outcome = (|| {
        let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
        // The piece after the final newline is empty in a well-formed log.
        let torn = lines.pop().filter(|l| !l.is_empty());
        for (i, line) in lines.iter().enumerate() {
            let line_no = i as u64 + 1;
            let entry = match check_line(line) {
                LineCheck::Malformed(message) => {
                    return Err(VerifyProblem::Malformed {
                        line: line_no,
                        message,
                    });
                }
                LineCheck::Edited(entry) => {
                    return Err(VerifyProblem::Edited {
                        line: line_no,
                        seq: entry.seq,
                    });
                }
                LineCheck::Ok(entry) => entry,
            };
            if entry.seq != line_no {
                return Err(VerifyProblem::SeqGap {
                    line: line_no,
                    expected: line_no,
                    found: entry.seq,
                });
            }
            if entry.prev != prev {
                return Err(VerifyProblem::PrevMismatch {
                    line: line_no,
                    seq: entry.seq,
                });
            }
            if line_no == 1 {
                rotated_from = Rotated::from_first_entry(&entry);
            }
            prev = entry.hash.clone();
            hashes.push(entry.hash);
        }
        if torn.is_some() {
            return Err(VerifyProblem::Malformed {
                line: lines.len() as u64 + 1,
                message: "incomplete last line (no newline at the end)".into(),
            });
        }
        let head = head.map_err(|message| VerifyProblem::BadHead {
            head: head_path.to_path_buf(),
            message,
        })?;
        let entries = hashes.len() as u64;
        let anchored_seq = match head {
            None if entries > 0 => {
                return Err(VerifyProblem::MissingHead {
                    entries,
                    head: head_path.to_path_buf(),
                });
            }
            None => 0,
            Some(h) if h.seq > entries => {
                return Err(VerifyProblem::Truncated {
                    head_seq: h.seq,
                    last_seq: entries,
                });
            }
            Some(h) if h.seq == 0 => {
                return Err(VerifyProblem::BadHead {
                    head: head_path.to_path_buf(),
                    message: "seq 0 is not an entry".into(),
                });
            }
            Some(h) => {
                let idx = usize::try_from(h.seq - 1).unwrap_or(usize::MAX);
                if hashes.get(idx) != Some(&h.hash) {
                    return Err(VerifyProblem::HeadMismatch {
                        line: h.seq,
                        seq: h.seq,
                    });
                }
                h.seq
            }
        };
        Ok(VerifyReport {
            entries,
            head_hash: prev.clone(),
            anchored_seq,
            rotated_from: rotated_from.clone(),
        })
    })();
    Walk {
        outcome,
        last_good_seq: hashes.len() as u64,
        last_good_hash: prev,
    }
}

/// Overwrites the head record of an open head file in place.
fn write_head_to(mut file: File, head: &Head) -> io::Result<()> {
    let record = encode_head(head)?;
    file.seek(SeekFrom::Start(0))?;
    file.write_all(&record)?;
    if file.metadata()?.len() != HEAD_LEN as u64 {
        file.set_len(HEAD_LEN as u64)?;
    }
    Ok(())
}

/// The number of lines in the first `len` bytes of `file` (for an error message).
fn count_lines(mut file: &File, len: u64) -> io::Result<u64> {
    file.seek(SeekFrom::Start(0))?;
    let mut buf = Vec::new();
    file.take(len).read_to_end(&mut buf)?;
    Ok(buf.iter().filter(|&&b| b == b'\n').count() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    fn rec(skill: &str, target: &str) -> AuditRecord {
        AuditRecord {
            skill: skill.into(),
            capability: "shell:exec".into(),
            target: target.into(),
            decision: "granted:stored".into(),
        }
    }

    fn log_with(n: u64) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("data/audit.log");
        let log = AuditLog::open(&path).unwrap();
        for i in 1..=n {
            assert_eq!(
                log.append(rec("core-tools", &format!("git status {i}")))
                    .unwrap(),
                i
            );
        }
        (tmp, path)
    }

    fn lines(path: &Path) -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn write_lines(path: &Path, lines: &[String]) {
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(path, text).unwrap();
    }

    fn problem(path: &Path) -> VerifyProblem {
        let err = AuditLog::verify(path).unwrap_err();
        assert!(err.to_string().contains(&path.display().to_string()));
        err.problem
    }

    #[test]
    fn append_builds_a_chain_that_verifies() {
        let (_tmp, path) = log_with(5);
        let entries = AuditLog::entries(&path).unwrap();
        assert_eq!(entries.len(), 5);
        assert_eq!(entries[0].prev, GENESIS_HASH);
        for pair in entries.windows(2) {
            assert_eq!(pair[1].prev, pair[0].hash);
            assert_eq!(pair[1].seq, pair[0].seq + 1);
        }
        for e in &entries {
            assert_eq!(e.compute_hash(), e.hash);
            assert_eq!(e.hash.len(), 64);
            // RFC 3339 UTC with milliseconds.
            assert_eq!(e.time.len(), "2026-01-02T03:04:05.678Z".len(), "{}", e.time);
            assert!(e.time.ends_with('Z'));
            assert!(
                OffsetDateTime::parse(&e.time, &time::format_description::well_known::Rfc3339)
                    .is_ok()
            );
        }
        assert_eq!(entries[2].target, "git status 3");
        let report = AuditLog::verify(&path).unwrap();
        assert_eq!(
            report,
            VerifyReport {
                entries: 5,
                head_hash: entries[4].hash.clone(),
                anchored_seq: 5,
                rotated_from: None,
            }
        );
        let head = std::fs::read_to_string(AuditLog::head_path(&path)).unwrap();
        assert_eq!(head.len(), HEAD_LEN);
        assert!(head.ends_with('\n'));
        assert_eq!(
            head.trim_end(),
            format!("{{\"seq\":5,\"hash\":\"{}\"}}", entries[4].hash)
        );
    }

    #[test]
    fn line_format_is_canonical_json_in_field_order() {
        let (_tmp, path) = log_with(1);
        let line = &lines(&path)[0];
        assert!(line.starts_with("{\"seq\":1,\"time\":\""), "{line}");
        let after_time = line.split_once("Z\",").unwrap().1;
        assert!(after_time.starts_with("\"skill\":\"core-tools\",\"capability\":\"shell:exec\",\"target\":\"git status 1\",\"decision\":\"granted:stored\",\"prev\":\"0000"), "{line}");
        // hash = sha256(prev + body) where body is the first six fields.
        let e: AuditEntry = serde_json::from_str(line).unwrap();
        let body = line.split_once(",\"prev\"").unwrap().0.to_string() + "}";
        let mut h = Sha256::new();
        h.update(GENESIS_HASH.as_bytes());
        h.update(body.as_bytes());
        assert_eq!(hex::encode(h.finalize()), e.hash);
    }

    #[test]
    fn reopening_continues_the_chain() {
        let (_tmp, path) = log_with(2);
        let log = AuditLog::open(&path).unwrap();
        assert_eq!(log.append(rec("s", "x")).unwrap(), 3);
        assert_eq!(AuditLog::verify(&path).unwrap().entries, 3);
    }

    #[test]
    fn special_characters_round_trip() {
        let (_tmp, path) = log_with(0);
        let log = AuditLog::open(&path).unwrap();
        log.append(rec("s", "echo \"a\nb\" \u{1F600} \\ \t"))
            .unwrap();
        log.append(rec("s", "")).unwrap();
        let e = AuditLog::entries(&path).unwrap();
        assert_eq!(e[0].target, "echo \"a\nb\" \u{1F600} \\ \t");
        assert_eq!(lines(&path).len(), 2);
        AuditLog::verify(&path).unwrap();
    }

    #[test]
    fn long_lines_are_found_from_the_end() {
        let (_tmp, path) = log_with(0);
        let log = AuditLog::open(&path).unwrap();
        let long = "x".repeat(20_000);
        log.append(rec("s", &long)).unwrap();
        log.append(rec("s", &long)).unwrap();
        log.append(rec("s", "short")).unwrap();
        assert_eq!(AuditLog::verify(&path).unwrap().entries, 3);
    }

    #[test]
    fn an_empty_or_absent_log_verifies() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("audit.log");
        assert_eq!(AuditLog::verify(&path).unwrap().entries, 0);
        AuditLog::open(&path).unwrap();
        let r = AuditLog::verify(&path).unwrap();
        assert_eq!((r.entries, r.head_hash.as_str()), (0, GENESIS_HASH));
        assert_eq!(AuditLog::entries(&path).unwrap(), vec![]);
    }

    #[test]
    fn an_edited_byte_in_a_middle_line_is_found() {
        let (_tmp, path) = log_with(5);
        let mut l = lines(&path);
        l[2] = l[2].replace("core-tools", "core-toolz");
        write_lines(&path, &l);
        assert_eq!(problem(&path), VerifyProblem::Edited { line: 3, seq: 3 });
    }

    #[test]
    fn edited_hash_field_and_whitespace_are_found() {
        let (_tmp, path) = log_with(3);
        let original = lines(&path);
        let mut l = original.clone();
        // Flip one hex digit of the stored hash.
        let pos = l[1].rfind("\"hash\":\"").unwrap() + 8;
        let c = if &l[1][pos..=pos] == "0" { "1" } else { "0" };
        l[1].replace_range(pos..=pos, c);
        write_lines(&path, &l);
        assert_eq!(problem(&path), VerifyProblem::Edited { line: 2, seq: 2 });

        let mut l = original;
        l[1] = l[1].replacen(",", ", ", 1);
        write_lines(&path, &l);
        assert_eq!(problem(&path), VerifyProblem::Edited { line: 2, seq: 2 });
    }

    #[test]
    fn a_deleted_middle_line_is_found() {
        let (_tmp, path) = log_with(5);
        let mut l = lines(&path);
        l.remove(2);
        write_lines(&path, &l);
        assert_eq!(
            problem(&path),
            VerifyProblem::SeqGap {
                line: 3,
                expected: 3,
                found: 4
            }
        );
    }

    #[test]
    fn a_deleted_last_line_is_found_by_the_head() {
        let (_tmp, path) = log_with(5);
        let mut l = lines(&path);
        l.pop();
        write_lines(&path, &l);
        assert_eq!(
            problem(&path),
            VerifyProblem::Truncated {
                head_seq: 5,
                last_seq: 4
            }
        );
        // And appending refuses to paper over it.
        let log = AuditLog::open(&path).unwrap();
        let err = log.append(rec("s", "x")).unwrap_err();
        assert!(matches!(err, AuditError::Tampered { .. }), "{err:?}");
        assert_eq!(lines(&path).len(), 4);
    }

    #[test]
    fn an_emptied_log_is_found_by_the_head() {
        let (_tmp, path) = log_with(2);
        std::fs::write(&path, "").unwrap();
        assert_eq!(
            problem(&path),
            VerifyProblem::Truncated {
                head_seq: 2,
                last_seq: 0
            }
        );
    }

    #[test]
    fn swapped_lines_are_found() {
        let (_tmp, path) = log_with(5);
        let mut l = lines(&path);
        l.swap(1, 3);
        write_lines(&path, &l);
        assert_eq!(
            problem(&path),
            VerifyProblem::SeqGap {
                line: 2,
                expected: 2,
                found: 4
            }
        );
    }

    #[test]
    fn a_rechained_removal_is_found_by_prev() {
        // Remove line 3 and renumber line 4 as seq 3 with a recomputed hash: the seq is right
        // and the hash matches, but it does not chain to line 2.
        let (_tmp, path) = log_with(4);
        let mut entries = AuditLog::entries(&path).unwrap();
        entries.remove(2);
        entries[2].seq = 3;
        entries[2].hash = entries[2].compute_hash();
        let l: Vec<String> = entries
            .iter()
            .map(|e| serde_json::to_string(e).unwrap())
            .collect();
        write_lines(&path, &l);
        assert_eq!(
            problem(&path),
            VerifyProblem::PrevMismatch { line: 3, seq: 3 }
        );
    }

    #[test]
    fn malformed_lines_are_reported_with_their_number() {
        let (_tmp, path) = log_with(3);
        let mut l = lines(&path);
        l[1] = "{not json".into();
        write_lines(&path, &l);
        assert!(matches!(
            problem(&path),
            VerifyProblem::Malformed { line: 2, .. }
        ));
        let err = AuditLog::entries(&path).unwrap_err();
        assert!(
            matches!(err, AuditError::Malformed { line: 2, .. }),
            "{err:?}"
        );

        let mut l = lines(&path);
        l[1] = "{\"seq\":2}".into();
        write_lines(&path, &l);
        assert!(matches!(
            problem(&path),
            VerifyProblem::Malformed { line: 2, .. }
        ));
    }

    #[test]
    fn a_missing_head_is_reported_when_entries_exist() {
        let (_tmp, path) = log_with(2);
        std::fs::remove_file(AuditLog::head_path(&path)).unwrap();
        assert!(matches!(
            problem(&path),
            VerifyProblem::MissingHead { entries: 2, .. }
        ));
        let err = AuditLog::open(&path)
            .unwrap()
            .append(rec("s", "x"))
            .unwrap_err();
        assert!(matches!(err, AuditError::Tampered { .. }), "{err:?}");
    }

    #[test]
    fn a_head_that_disagrees_is_reported() {
        let (_tmp, path) = log_with(3);
        std::fs::write(
            AuditLog::head_path(&path),
            format!("{{\"seq\":2,\"hash\":\"{}\"}}\n", "ab".repeat(32)),
        )
        .unwrap();
        assert_eq!(
            problem(&path),
            VerifyProblem::HeadMismatch { line: 2, seq: 2 }
        );
        std::fs::write(AuditLog::head_path(&path), "garbage").unwrap();
        assert!(matches!(problem(&path), VerifyProblem::BadHead { .. }));
    }

    #[test]
    fn a_head_lagging_by_an_interrupted_append_is_accepted_and_caught_up() {
        let (_tmp, path) = log_with(3);
        let entries = AuditLog::entries(&path).unwrap();
        // As if the append of seq 3 stopped before writing the head.
        std::fs::write(
            AuditLog::head_path(&path),
            format!("{{\"seq\":2,\"hash\":\"{}\"}}\n", entries[1].hash),
        )
        .unwrap();
        let r = AuditLog::verify(&path).unwrap();
        assert_eq!((r.entries, r.anchored_seq), (3, 2));
        AuditLog::open(&path)
            .unwrap()
            .append(rec("s", "x"))
            .unwrap();
        let r = AuditLog::verify(&path).unwrap();
        assert_eq!((r.entries, r.anchored_seq), (4, 4));
    }

    #[test]
    fn an_incomplete_unanchored_last_line_is_dropped_by_the_next_append() {
        let (_tmp, path) = log_with(2);
        // As if an append stopped half-way through writing its line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"seq\":3,\"time\":\"20").unwrap();
        drop(f);
        assert!(matches!(
            problem(&path),
            VerifyProblem::Malformed { line: 3, .. }
        ));
        let log = AuditLog::open(&path).unwrap();
        assert_eq!(log.append(rec("s", "after")).unwrap(), 3);
        let r = AuditLog::verify(&path).unwrap();
        assert_eq!(r.entries, 3);
        assert_eq!(AuditLog::entries(&path).unwrap()[2].target, "after");
    }

    #[test]
    fn concurrent_appends_keep_a_valid_chain() {
        let (_tmp, path) = log_with(0);
        let shared = Arc::new(AuditLog::open(&path).unwrap());
        let threads = 4;
        let per_thread = 100;
        let mut handles = Vec::new();
        for t in 0..threads {
            // Two threads share one handle (mutex), two have their own (file lock, as separate
            // processes would).
            let log = if t % 2 == 0 {
                Arc::clone(&shared)
            } else {
                Arc::new(AuditLog::open(&path).unwrap())
            };
            handles.push(std::thread::spawn(move || {
                for i in 0..per_thread {
                    log.append(rec(&format!("t{t}"), &format!("{i}"))).unwrap();
                }
            }));
        }
        for h in handles {
            h.join().unwrap();
        }
        let report = AuditLog::verify(&path).unwrap();
        assert_eq!(report.entries, threads * per_thread);
        assert_eq!(report.anchored_seq, threads * per_thread);
        let entries = AuditLog::entries(&path).unwrap();
        for t in 0..threads {
            let mine: Vec<_> = entries
                .iter()
                .filter(|e| e.skill == format!("t{t}"))
                .map(|e| e.target.parse::<u64>().unwrap())
                .collect();
            assert_eq!(mine, (0..per_thread).collect::<Vec<_>>());
        }
    }

    #[test]
    fn append_speed_printout() {
        let (_tmp, path) = log_with(0);
        let log = AuditLog::open(&path).unwrap();
        let n: u32 = 2000;
        let started = Instant::now();
        for i in 0..n {
            log.append(rec("bench", &format!("target {i}"))).unwrap();
        }
        let per = started.elapsed() / n;
        println!("audit append: {per:?} per entry over {n} entries");
        assert_eq!(AuditLog::verify(&path).unwrap().entries, u64::from(n));
    }
}

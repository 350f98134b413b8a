//! `agent audit rotate`: the way back from a damaged log.
//!
//! A damaged log (an edited, removed or torn entry, a head that disagrees) refuses every append,
//! and with it every grant. Rotating seals the log aside as it is, writes its verification report
//! next to it, and starts a new chain in the same file whose first entry records the break:
//!
//! - `audit.log.sealed-<time>`: the log's bytes, unchanged;
//! - `audit.log.sealed-<time>.head`: its head file, unchanged (when there was one), so that
//!   `agent audit verify --log audit.log.sealed-<time>` checks the sealed log as it was;
//! - `audit.log.sealed-<time>.report.txt`: the verification result and the last good entry;
//! - `audit.log`: a new chain whose entry 1 is `{"skill":"agent","capability":"audit:rotate",
//!   "target":"audit.log.sealed-<time>","decision":"sealed damaged log: …"}`.
//!
//! The whole rotation runs under the log's exclusive lock, and the log file is truncated in
//! place rather than replaced, so processes that have it open keep appending to the new chain
//! and no append can slip in between. If it is interrupted after the copy, the log no longer
//! verifies and rotating again seals what is left.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use time::OffsetDateTime;
use time::macros::format_description;

use super::{
    AuditEntry, AuditError, AuditLog, AuditRecord, FileLock, GENESIS_HASH, Head, VerifyError,
    head_path_of, now_ms, parse_head, walk, write_head_to,
};

/// The `capability` of the entry that starts a rotated log.
pub const ROTATE_CAPABILITY: &str = "audit:rotate";
/// The `skill` of that entry: the agent itself.
const ROTATE_SKILL: &str = "agent";

/// The log a rotated log continues, from its first entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotated {
    /// The sealed log's file name (it lies next to the log).
    pub sealed: String,
    /// What the rotation recorded: the last good entry and the verification error.
    pub note: String,
}

impl Rotated {
    /// The rotation recorded by a log's first entry, if it is one.
    pub(super) fn from_first_entry(entry: &AuditEntry) -> Option<Rotated> {
        (entry.seq == 1 && entry.skill == ROTATE_SKILL && entry.capability == ROTATE_CAPABILITY)
            .then(|| Rotated {
                sealed: entry.target.clone(),
                note: entry.decision.clone(),
            })
    }
}

/// What [`AuditLog::rotate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    /// The sealed copy of the log.
    pub sealed: PathBuf,
    /// The sealed copy of its head file, when it had one.
    pub sealed_head: Option<PathBuf>,
    /// The verification report written next to the sealed log.
    pub report: PathBuf,
    /// Why the log did not verify; `None` when it was intact.
    pub problem: Option<VerifyError>,
    /// The last entry of the sealed log whose chain held from the start (0 when none).
    pub last_good_seq: u64,
    /// Its hash ([`GENESIS_HASH`] when none).
    pub last_good_hash: String,
}

impl AuditLog {
    /// Seals the log at `path` aside with its head and a verification report, and starts a new
    /// chain in its place whose first entry records the break (see the module documentation).
    /// Works on an intact log as well (its report says so). Fails when there is no log.
    pub fn rotate(path: impl AsRef<Path>) -> Result<Rotation, AuditError> {
        let path = path.as_ref();
        let head_path = head_path_of(path);
        let io_err = |p: &Path| {
            let p = p.to_path_buf();
            move |source| AuditError::Io { path: p, source }
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io_err(path))?;
        let lock_file = file.try_clone().map_err(io_err(path))?;
        let _lock = FileLock::exclusive(&lock_file).map_err(io_err(path))?;
        let mut text = Vec::new();
        file.read_to_end(&mut text).map_err(io_err(path))?;
        let head_bytes = match std::fs::read(&head_path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_err(&head_path)(e)),
        };
        let head = head_bytes.as_deref().map_or(Ok(None), parse_head);
        let checked = walk(&text, &head_path, head);
        let problem = checked.outcome.err().map(|problem| VerifyError {
            path: path.to_path_buf(),
            problem,
        });

        // Until the new chain is written, a failure (a full disk) removes what was created.
        let mut created = Created(Vec::new());
        let (sealed, mut sealed_file) = create_sealed(path)?;
        created.0.push(sealed.clone());
        write_synced(&mut sealed_file, &text).map_err(io_err(&sealed))?;
        let sealed_head = match &head_bytes {
            Some(bytes) => {
                let p = head_path_of(&sealed);
                let mut f = create_new(&p).map_err(io_err(&p))?;
                created.0.push(p.clone());
                write_synced(&mut f, bytes).map_err(io_err(&p))?;
                Some(p)
            }
            None => None,
        };
        let sealed_name = file_name(&sealed);
        let note = match &problem {
            Some(e) if checked.last_good_seq == 0 => {
                format!("sealed damaged log: {}; no entry verifies", e.problem)
            }
            Some(e) => format!(
                "sealed damaged log: {}; last good entry seq {} hash {}",
                e.problem, checked.last_good_seq, checked.last_good_hash
            ),
            None => format!(
                "sealed intact log: {} entries, last seq {} hash {}",
                checked.last_good_seq, checked.last_good_seq, checked.last_good_hash
            ),
        };
        let mut report = sealed.as_os_str().to_owned();
        report.push(".report.txt");
        let report = PathBuf::from(report);
        let report_text = report_text(ReportFacts {
            log: path,
            sealed: &sealed,
            sealed_head: sealed_head.as_deref(),
            bytes: text.len(),
            problem: problem.as_ref(),
            last_good_seq: checked.last_good_seq,
            last_good_hash: &checked.last_good_hash,
        });
        let mut f = create_new(&report).map_err(io_err(&report))?;
        created.0.push(report.clone());
        write_synced(&mut f, report_text.as_bytes()).map_err(io_err(&report))?;
        // Sealed: from here on the copy is kept whatever happens to the new chain.
        created.0.clear();

        // The new chain, in the same file (still locked).
        let entry = AuditEntry::new(
            1,
            GENESIS_HASH.to_string(),
            AuditRecord {
                skill: ROTATE_SKILL.into(),
                capability: ROTATE_CAPABILITY.into(),
                target: sealed_name,
                decision: note,
            },
        );
        file.set_len(0).map_err(io_err(path))?;
        file.seek(SeekFrom::Start(0)).map_err(io_err(path))?;
        write_synced(&mut file, &entry.line()).map_err(io_err(path))?;
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let head_file = options.open(&head_path).map_err(io_err(&head_path))?;
        write_head_to(
            head_file,
            &Head {
                seq: 1,
                hash: entry.hash,
            },
        )
        .map_err(io_err(&head_path))?;
        Ok(Rotation {
            sealed,
            sealed_head,
            report,
            problem,
            last_good_seq: checked.last_good_seq,
            last_good_hash: checked.last_good_hash,
        })
    }
}

/// Files a rotation created, removed when it fails before the copy is complete.
struct Created(Vec<PathBuf>);

impl Drop for Created {
    fn drop(&mut self) {
        for path in &self.0 {
            // Best effort: the error that stopped the rotation is what gets reported.
            let _ = std::fs::remove_file(path);
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Creates `audit.log.sealed-<time>` next to the log (with a counter when that name is taken).
fn create_sealed(path: &Path) -> Result<(PathBuf, File), AuditError> {
    let format = format_description!("[year][month][day]T[hour][minute][second]Z");
    let stamp = OffsetDateTime::now_utc()
        .format(&format)
        .unwrap_or_else(|_| "19700101T000000Z".into());
    let base = format!("{}.sealed-{stamp}", file_name(path));
    let mut candidate = path.with_file_name(&base);
    for n in 2u32..1000 {
        match create_new(&candidate) {
            Ok(f) => return Ok((candidate, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                candidate = path.with_file_name(format!("{base}-{n}"));
            }
            Err(source) => {
                return Err(AuditError::Io {
                    path: candidate,
                    source,
                });
            }
        }
    }
    Err(AuditError::Io {
        path: candidate,
        source: io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a thousand sealed logs of this second already exist",
        ),
    })
}

fn create_new(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

fn write_synced(file: &mut File, bytes: &[u8]) -> io::Result<()> {
    file.write_all(bytes)?;
    file.sync_all()
}

struct ReportFacts<'a> {
    log: &'a Path,
    sealed: &'a Path,
    sealed_head: Option<&'a Path>,
    bytes: usize,
    problem: Option<&'a VerifyError>,
    last_good_seq: u64,
    last_good_hash: &'a str,
}

fn report_text(f: ReportFacts<'_>) -> String {
    let verification = match f.problem {
        Some(e) => format!("FAILED: {}", e.problem),
        None => format!("passed: {} entries, hash chain intact", f.last_good_seq),
    };
    let head = f
        .sealed_head
        .map_or_else(|| "none (the log had no head file)".into(), file_name);
    format!(
        "audit log rotation report\n\
         rotated at:      {time}\n\
         log:             {log}\n\
         sealed as:       {sealed} ({bytes} bytes, unchanged)\n\
         sealed head:     {head}\n\
         verification:    {verification}\n\
         last good entry: seq {seq}, hash {hash} (the chain holds from seq 1 to here)\n\
         new chain:       {log} starts again at seq 1; its first entry (capability `{ROTATE_CAPABILITY}`) names {sealed_name} and this result\n\
         check it again:  agent audit verify --log {sealed}\n",
        time = now_ms(),
        log = f.log.display(),
        sealed = f.sealed.display(),
        bytes = f.bytes,
        seq = f.last_good_seq,
        hash = f.last_good_hash,
        sealed_name = file_name(f.sealed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::{AuditLog, VerifyProblem};

    fn rec(target: &str) -> AuditRecord {
        AuditRecord {
            skill: "core-tools".into(),
            capability: "shell:exec".into(),
            target: target.into(),
            decision: "granted:stored".into(),
        }
    }

    /// A log of `n` entries, and the process that wrote it (still open, as a running agent's).
    fn log_with(n: u64) -> (tempfile::TempDir, PathBuf, AuditLog) {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("audit.log");
        let log = AuditLog::open(&path).unwrap();
        for i in 1..=n {
            log.append(rec(&format!("git status {i}"))).unwrap();
        }
        (tmp, path, log)
    }

    #[test]
    fn a_damaged_log_is_sealed_aside_and_a_new_chain_records_the_break() {
        let (_tmp, path, running) = log_with(4);
        // Someone edits the last entry: every append (and so every grant) now fails.
        let text = std::fs::read_to_string(&path).unwrap();
        let damaged = text.replace("git status 4", "git status X");
        std::fs::write(&path, &damaged).unwrap();
        let head_before = std::fs::read(AuditLog::head_path(&path)).unwrap();
        let err = running.append(rec("refused")).unwrap_err();
        assert!(err.is_damaged(), "{err:?}");
        assert!(err.to_string().contains("agent audit rotate"), "{err}");

        let r = AuditLog::rotate(&path).unwrap();

        // The damaged log and its head are kept byte for byte, with the verdict next to them.
        assert_eq!(std::fs::read_to_string(&r.sealed).unwrap(), damaged);
        let sealed_head = r.sealed_head.clone().unwrap();
        assert_eq!(std::fs::read(&sealed_head).unwrap(), head_before);
        assert_eq!(sealed_head, AuditLog::head_path(&r.sealed));
        let name = r.sealed.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("audit.log.sealed-"), "{name}");
        let problem = r.problem.clone().unwrap();
        assert!(
            matches!(problem.problem, VerifyProblem::Edited { line: 4, seq: 4 }),
            "{problem:?}"
        );
        assert_eq!(r.last_good_seq, 3);
        let report = std::fs::read_to_string(&r.report).unwrap();
        assert!(
            report.contains("FAILED: line 4 (seq 4) was edited"),
            "{report}"
        );
        assert!(
            report.contains(&format!("seq 3, hash {}", r.last_good_hash)),
            "{report}"
        );
        // The sealed log still fails verification on its own, as it did.
        assert_eq!(
            AuditLog::verify(&r.sealed).unwrap_err().problem,
            problem.problem
        );

        // The new chain verifies and names what it continues.
        let v = AuditLog::verify(&path).unwrap();
        assert_eq!(v.entries, 1);
        let rotated = v.rotated_from.unwrap();
        assert_eq!(rotated.sealed, name);
        assert!(
            rotated
                .note
                .contains("sealed damaged log: line 4 (seq 4) was edited")
        );
        assert!(
            rotated
                .note
                .contains(&format!("last good entry seq 3 hash {}", r.last_good_hash))
        );
        let first = &AuditLog::entries(&path).unwrap()[0];
        assert_eq!(
            (first.seq, first.skill.as_str(), first.capability.as_str()),
            (1, "agent", ROTATE_CAPABILITY)
        );
        assert_eq!(first.prev, GENESIS_HASH);

        // A process that had the log open goes on appending to the new chain.
        assert_eq!(running.append(rec("after")).unwrap(), 2);
        let v = AuditLog::verify(&path).unwrap();
        assert_eq!((v.entries, v.anchored_seq), (2, 2));
    }

    #[test]
    fn an_intact_log_can_be_rotated_too() {
        let (_tmp, path, running) = log_with(2);
        let r = AuditLog::rotate(&path).unwrap();
        assert_eq!(r.problem, None);
        assert_eq!(r.last_good_seq, 2);
        assert!(AuditLog::verify(&r.sealed).is_ok());
        let report = std::fs::read_to_string(&r.report).unwrap();
        assert!(report.contains("passed: 2 entries"), "{report}");
        let v = AuditLog::verify(&path).unwrap();
        assert!(
            v.rotated_from
                .unwrap()
                .note
                .starts_with("sealed intact log: 2 entries")
        );
        // Two rotations in the same second get distinct names.
        let again = AuditLog::rotate(&path).unwrap();
        assert_ne!(again.sealed, r.sealed);
        assert_eq!(running.append(rec("x")).unwrap(), 2);
    }

    #[test]
    fn a_log_without_its_head_or_with_a_torn_line_is_rotated() {
        let (_tmp, path, _running) = log_with(2);
        std::fs::remove_file(AuditLog::head_path(&path)).unwrap();
        let mut text = std::fs::read(&path).unwrap();
        text.extend_from_slice(b"{\"seq\":3,\"ti");
        std::fs::write(&path, &text).unwrap();
        let r = AuditLog::rotate(&path).unwrap();
        assert_eq!(r.sealed_head, None);
        assert!(
            matches!(
                r.problem.as_ref().map(|e| &e.problem),
                Some(VerifyProblem::Malformed { line: 3, .. })
            ),
            "{r:?}"
        );
        assert_eq!(r.last_good_seq, 2);
        assert_eq!(std::fs::read(&r.sealed).unwrap(), text);
        assert!(AuditLog::verify(&path).is_ok());
    }

    #[test]
    fn there_is_nothing_to_rotate_without_a_log() {
        let tmp = tempfile::tempdir().unwrap();
        let err = AuditLog::rotate(tmp.path().join("audit.log")).unwrap_err();
        assert!(matches!(err, AuditError::Io { .. }), "{err:?}");
        assert!(!err.is_damaged());
    }
}

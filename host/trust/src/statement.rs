//! The signed statement of a skill (format 2): the component's digest and
//! the path and SHA-256 of every file its manifest depends on.
//!
//! Byte format (UTF-8 text, `\n` line ends, documented in
//! `docs/signatures.md`):
//!
//! ```text
//! agent-skill-files-v2
//! component <64 lower-case hex digits>
//! <64 lower-case hex digits> <path>      (one line per file)
//! ```
//!
//! Paths are relative to the skill directory, `/`-separated, made only of
//! normal components (no `..`, `.`, empty part, leading `/`, `\`, NUL or
//! line break), unique and sorted by their bytes. `SKILL.yaml` is always
//! one of them.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::{Digest, TrustError, sha256};

/// First line of a statement.
pub const HEADER: &str = "agent-skill-files-v2";
/// The manifest's file name, which every statement covers.
pub const MANIFEST: &str = "SKILL.yaml";
/// Largest file a statement may cover (16 MiB).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// One covered file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedFile {
    /// Path relative to the skill directory, `/`-separated.
    pub path: String,
    /// SHA-256 of its bytes.
    pub digest: Digest,
}

/// What a format-2 signature covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// SHA-256 of the component's unsigned bytes.
    pub component: Digest,
    /// Every covered file, sorted by path.
    pub files: Vec<SignedFile>,
}

/// Checks one path of a statement (or of a manifest, before signing).
///
/// # Errors
/// [`TrustError::Malformed`] naming the path and the rule it breaks.
pub fn check_path(path: &str) -> Result<(), TrustError> {
    let bad = |why: &str| Err(TrustError::Malformed(format!("signed path `{path}` {why}")));
    if path.is_empty() {
        return bad("is empty");
    }
    if path.starts_with('/') {
        return bad("is absolute");
    }
    if path.contains(['\\', '\0', '\n', '\r']) {
        return bad("contains `\\`, NUL or a line break");
    }
    for part in path.split('/') {
        match part {
            "" => return bad("has an empty component"),
            "." | ".." => return bad("contains `.` or `..`"),
            _ => {}
        }
    }
    Ok(())
}

impl Statement {
    /// A statement over `component` (unsigned bytes) and `files`
    /// (path, bytes), which must include `SKILL.yaml`.
    ///
    /// # Errors
    /// A bad or duplicate path, or no `SKILL.yaml`.
    pub fn new(component: &[u8], files: &[(String, Vec<u8>)]) -> Result<Statement, TrustError> {
        let mut list = Vec::with_capacity(files.len());
        for (path, bytes) in files {
            check_path(path)?;
            list.push(SignedFile {
                path: path.clone(),
                digest: sha256(bytes),
            });
        }
        list.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        let statement = Statement {
            component: sha256(component),
            files: list,
        };
        statement.check()?;
        Ok(statement)
    }

    fn check(&self) -> Result<(), TrustError> {
        for pair in self.files.windows(2) {
            if pair[0].path.as_bytes() >= pair[1].path.as_bytes() {
                return Err(TrustError::Malformed(format!(
                    "signed path `{}` is duplicated or out of order",
                    pair[1].path
                )));
            }
        }
        if !self.files.iter().any(|f| f.path == MANIFEST) {
            return Err(TrustError::Malformed(format!(
                "the signature does not cover {MANIFEST}"
            )));
        }
        Ok(())
    }

    /// The canonical bytes (the signed message follows them).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = format!("{HEADER}\ncomponent {}\n", hex::encode(self.component));
        for f in &self.files {
            out.push_str(&format!("{} {}\n", hex::encode(f.digest), f.path));
        }
        out.into_bytes()
    }

    /// Parses canonical bytes; anything else is malformed.
    ///
    /// # Errors
    /// [`TrustError::Malformed`] naming what is wrong.
    pub fn parse(bytes: &[u8]) -> Result<Statement, TrustError> {
        let bad = |why: String| TrustError::Malformed(format!("signed file list: {why}"));
        let text = std::str::from_utf8(bytes).map_err(|_| bad("not UTF-8".into()))?;
        let body = text
            .strip_suffix('\n')
            .ok_or_else(|| bad("does not end with a line break".into()))?;
        let mut lines = body.split('\n');
        if lines.next() != Some(HEADER) {
            return Err(bad(format!("does not start with `{HEADER}`")));
        }
        let component = lines
            .next()
            .and_then(|l| l.strip_prefix("component "))
            .ok_or_else(|| bad("second line is not `component <sha256>`".into()))
            .and_then(|h| parse_digest(h).map_err(bad))?;
        let mut files = Vec::new();
        for line in lines {
            let (digest, path) = line
                .split_once(' ')
                .ok_or_else(|| bad(format!("line `{line}` is not `<sha256> <path>`")))?;
            check_path(path)?;
            files.push(SignedFile {
                path: path.to_string(),
                digest: parse_digest(digest).map_err(bad)?,
            });
        }
        let statement = Statement { component, files };
        statement.check()?;
        if statement.encode() != bytes {
            return Err(bad("not in canonical form".into()));
        }
        Ok(statement)
    }

    /// The digest recorded for `path`.
    pub fn digest_of(&self, path: &str) -> Option<&Digest> {
        self.files
            .iter()
            .find(|f| f.path == path)
            .map(|f| &f.digest)
    }

    /// Checks the covered files against their current bytes, `SKILL.yaml`
    /// first, then that every file in `required` (the files the manifest
    /// names now) is covered.
    ///
    /// # Errors
    /// [`TrustError::FileChanged`] for the first file whose bytes differ or
    /// cannot be read; [`TrustError::NotCovered`] for a required file the
    /// signature does not list.
    pub fn check_files(
        &self,
        required: &[String],
        read: impl Fn(&str) -> Result<Vec<u8>, String>,
    ) -> Result<(), TrustError> {
        let mut order: Vec<&SignedFile> =
            self.files.iter().filter(|f| f.path == MANIFEST).collect();
        order.extend(self.files.iter().filter(|f| f.path != MANIFEST));
        for f in order {
            let changed = |now: String| TrustError::FileChanged {
                path: f.path.clone(),
                now,
            };
            let bytes = read(&f.path).map_err(changed)?;
            let found = sha256(&bytes);
            if found != f.digest {
                return Err(changed(format!(
                    "its sha256 is {}, the signature covers {}",
                    hex::encode(found),
                    hex::encode(f.digest)
                )));
            }
        }
        if let Some(missing) = required.iter().find(|p| self.digest_of(p).is_none()) {
            return Err(TrustError::NotCovered {
                path: missing.clone(),
            });
        }
        Ok(())
    }
}

fn parse_digest(hex_text: &str) -> Result<Digest, String> {
    if hex_text.len() != 64 || hex_text.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(format!("`{hex_text}` is not 64 lower-case hex digits"));
    }
    let bytes = hex::decode(hex_text).map_err(|_| format!("`{hex_text}` is not hex"))?;
    let mut d = [0u8; 32];
    d.copy_from_slice(&bytes);
    Ok(d)
}

/// Reads `dir/rel` for signing or verification: `rel` must pass
/// [`check_path`], no component on the way may be a symbolic link, the file
/// must be a regular file of at most [`MAX_FILE_BYTES`].
///
/// # Errors
/// A message saying what is wrong (the caller names the file).
pub fn read_skill_file(dir: &Path, rel: &str) -> Result<Vec<u8>, String> {
    check_path(rel).map_err(|e| e.to_string())?;
    let mut path = PathBuf::from(dir);
    for part in rel.split('/') {
        path.push(part);
        let meta = std::fs::symlink_metadata(&path)
            .map_err(|e| format!("cannot be read ({}: {e})", path.display()))?;
        if meta.file_type().is_symlink() {
            return Err(format!(
                "is a symbolic link or lies under one ({}); signed files must be regular files inside the skill directory",
                path.display()
            ));
        }
    }
    let meta = std::fs::symlink_metadata(&path).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err(format!("is not a regular file ({})", path.display()));
    }
    let file = std::fs::File::open(&path).map_err(|e| format!("cannot be read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("is larger than {MAX_FILE_BYTES} bytes"));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files() -> Vec<(String, Vec<u8>)> {
        vec![
            ("schemas/b.json".into(), b"{}".to_vec()),
            (MANIFEST.into(), b"name: x\n".to_vec()),
        ]
    }

    #[test]
    fn encodes_sorted_and_parses_back() {
        let s = Statement::new(b"component", &files()).expect("statement");
        let text = String::from_utf8(s.encode()).expect("utf8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert!(lines[2].ends_with(" SKILL.yaml"), "{text}");
        assert!(lines[3].ends_with(" schemas/b.json"), "{text}");
        assert_eq!(Statement::parse(&s.encode()).expect("parse"), s);
    }

    #[test]
    fn bad_paths_are_refused() {
        for path in ["/etc/passwd", "../x", "a/../b", "a//b", "./a", "a\\b", ""] {
            let mut f = files();
            f.push((path.to_string(), Vec::new()));
            let err = Statement::new(b"c", &f).unwrap_err();
            assert!(err.to_string().contains("signed path"), "{path}: {err}");
        }
    }

    #[test]
    fn a_list_without_the_manifest_or_out_of_order_is_malformed() {
        let err = Statement::new(b"c", &files()[..1]).unwrap_err();
        assert!(
            err.to_string().contains("does not cover SKILL.yaml"),
            "{err}"
        );
        let s = Statement::new(b"c", &files()).expect("statement");
        let text = String::from_utf8(s.encode()).expect("utf8");
        let mut lines: Vec<&str> = text.lines().collect();
        lines.swap(2, 3);
        let swapped = format!("{}\n", lines.join("\n"));
        assert!(Statement::parse(swapped.as_bytes()).is_err());
    }

    #[test]
    fn a_changed_file_is_named() {
        let s = Statement::new(b"c", &files()).expect("statement");
        let err = s
            .check_files(&[], |p| {
                Ok(if p == MANIFEST {
                    b"name: x\n".to_vec()
                } else {
                    b"{\"evil\":1}".to_vec()
                })
            })
            .unwrap_err();
        assert!(
            matches!(&err, TrustError::FileChanged { path, .. } if path == "schemas/b.json"),
            "{err}"
        );
        let err = s
            .check_files(&["rules.yaml".to_string()], |p| {
                Ok(files().into_iter().find(|f| f.0 == p).expect("file").1)
            })
            .unwrap_err();
        assert!(matches!(err, TrustError::NotCovered { .. }), "{err}");
    }
}

//! The incremental state, kept in the output directory
//! (`.wiki-state.json`): each module's content hash, each written file's
//! hash, and the model's answers keyed by the hash of what it was asked
//! (so an unchanged module is never asked again and its page comes out
//! byte-identical).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The state file's name in the output directory.
pub const STATE_FILE: &str = ".wiki-state.json";

/// What the last run left.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct State {
    /// Format version.
    pub version: u32,
    /// Module → content hash.
    pub modules: BTreeMap<String, String>,
    /// Written file → content hash.
    pub files: BTreeMap<String, String>,
    /// Input hash → the model's answer.
    pub answers: BTreeMap<String, serde_json::Value>,
}

/// sha-256 of a text, hex.
pub fn hash(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

impl State {
    /// The state in `dir`; `Ok(None)` when there is none.
    ///
    /// # Errors
    /// A state file that cannot be read or parsed (naming it).
    pub fn load(dir: &Path) -> Result<Option<State>, String> {
        let path = dir.join(STATE_FILE);
        match std::fs::read_to_string(&path) {
            Ok(t) => serde_json::from_str(&t).map(Some).map_err(|e| {
                format!(
                    "{}: not a wiki state file ({e}); delete it or run with --full",
                    path.display()
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }
}

/// What writing the files did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Files written (new or changed).
    pub changed: Vec<String>,
    /// Files left as they were (same bytes).
    pub unchanged: usize,
    /// Files of the last run no longer produced, removed.
    pub removed: Vec<String>,
}

/// Writes `files` under `dir` (only those whose bytes differ), removes the
/// last run's files that are no longer produced, and saves `state` (its
/// `files` filled in here).
///
/// # Errors
/// A file cannot be written, naming it.
pub fn write(
    dir: &Path,
    files: &[(String, String)],
    previous: Option<&State>,
    mut state: State,
) -> Result<Written, String> {
    let mut out = Written::default();
    for (rel, text) in files {
        let path = dir.join(rel);
        let same = std::fs::read(&path).is_ok_and(|b| b == text.as_bytes());
        if same {
            out.unchanged += 1;
        } else {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            out.changed.push(rel.clone());
        }
        state.files.insert(rel.clone(), hash(text));
    }
    if let Some(prev) = previous {
        for rel in prev.files.keys() {
            if !state.files.contains_key(rel) && !rel.contains("..") {
                let path = dir.join(rel);
                if std::fs::remove_file(&path).is_ok() {
                    out.removed.push(rel.clone());
                }
            }
        }
    }
    state.version = 1;
    let text = serde_json::to_string_pretty(&state).map_err(|e| e.to_string())?;
    let path = dir.join(STATE_FILE);
    std::fs::write(&path, text + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(out)
}

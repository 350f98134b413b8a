//! `write_file`: create or overwrite a file, creating its parent
//! directories.

use std::path::Path;

use agent_skill_sdk::ToolError;
use agent_skill_sdk::fs;
use serde::Deserialize;

use crate::text;

/// Input of `write_file` (schema: `schemas/write_file.json`).
#[derive(Debug, Deserialize)]
pub struct Input {
    /// The file, relative to the project root, or its absolute path in the project
    /// (on the host, or under `/project`).
    pub path: String,
    /// The whole new content.
    pub content: String,
}

/// Runs `write_file` with the project mounted at `root`.
pub fn run(root: &Path, input: &Input) -> Result<String, ToolError> {
    let path = fs::resolve(root, &input.path)?;
    let shown = text::rel(root, &path);
    if path.is_dir() {
        return Err(ToolError::invalid_input(format!(
            "`{shown}` is a directory"
        )));
    }
    fs::write_creating_parents(&path, input.content.as_bytes())?;
    Ok(format!("wrote {} bytes to {shown}", input.content.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_creates_parents() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let input = Input {
            path: "a/b/c.txt".into(),
            content: "hello\n".into(),
        };
        assert_eq!(
            run(dir.path(), &input),
            Ok("wrote 6 bytes to a/b/c.txt".into())
        );
        let back = std::fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap_or_default();
        assert_eq!(back, "hello\n");
    }

    #[test]
    fn refuses_directories_and_escapes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let input = Input {
            path: ".".into(),
            content: String::new(),
        };
        assert!(
            matches!(run(dir.path(), &input), Err(ToolError::InvalidInput(m)) if m.contains("directory"))
        );
        let input = Input {
            path: "../x".into(),
            content: String::new(),
        };
        assert!(
            matches!(run(dir.path(), &input), Err(ToolError::InvalidInput(m)) if m.contains("leaves the project"))
        );
    }
}

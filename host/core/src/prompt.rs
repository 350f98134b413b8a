//! The system prompt: fixed instructions plus the project's `AGENT.md` files.

use std::path::Path;

/// The fixed instructions every run starts with.
pub const BASE_INSTRUCTIONS: &str = "You are agent, an AI coding agent working in a software project. \
Use the tools offered to read, search, edit files and run programs in the project; \
paths are relative to the project root. Tools run in a sandbox with only the permissions \
the user granted: when a tool is refused, say what was refused instead of retrying it. \
When the task is done, answer with a short summary of what you did.";

/// The system prompt: [`BASE_INSTRUCTIONS`], then the contents of every
/// `AGENT.md` from `project_root` down to `cwd` (outermost first). When
/// `cwd` is not inside `project_root`, only the root's file is read.
pub fn system_prompt(project_root: &Path, cwd: &Path) -> String {
    let mut prompt = BASE_INSTRUCTIONS.to_string();
    let mut dirs = vec![project_root.to_path_buf()];
    let root = project_root
        .canonicalize()
        .unwrap_or_else(|_| project_root.to_path_buf());
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    if let Ok(rel) = cwd.strip_prefix(&root) {
        let mut d = project_root.to_path_buf();
        for c in rel.components() {
            d = d.join(c);
            dirs.push(d.clone());
        }
    }
    for dir in dirs {
        let file = dir.join("AGENT.md");
        if let Ok(text) = std::fs::read_to_string(&file) {
            let shown = file
                .strip_prefix(project_root)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| file.display().to_string());
            prompt.push_str(&format!(
                "\n\n# Instructions from {shown}\n\n{}",
                text.trim()
            ));
        }
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_agent_md_from_root_down() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("AGENT.md"), "root rules").unwrap();
        std::fs::write(root.join("a/b/AGENT.md"), "deep rules").unwrap();
        let p = system_prompt(root, &root.join("a/b"));
        let r = p.find("root rules").unwrap();
        let d = p.find("deep rules").unwrap();
        assert!(p.starts_with(BASE_INSTRUCTIONS));
        assert!(r < d);
        let top = system_prompt(root, root);
        assert!(!top.contains("deep rules"));
    }
}

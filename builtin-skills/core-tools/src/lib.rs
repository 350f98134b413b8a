//! `core-tools`: the agent's base toolset, a tool skill built with
//! `agent-skill-sdk`.
//!
//! | tool | permission | what it does |
//! |---|---|---|
//! | `read_file` | `file:read` | a text file or a range of its lines, capped |
//! | `write_file` | `file:write` | create or overwrite a file (approval) |
//! | `edit` | `file:write` | replace one exact occurrence of a text (approval) |
//! | `list_dir` | `file:read` | a directory's entries with sizes |
//! | `search` | `file:read` | a regex over the project, honouring `.gitignore` |
//! | `exec` | `shell:exec` | run a program, no shell (approval) |
//!
//! Files are reached through the project mount (`/project`) that the host
//! provides when `file:read`/`file:write` are granted; every user-given path
//! goes through [`agent_skill_sdk::fs::resolve`], which refuses paths that
//! leave the project. Each tool's logic takes the mount point as a
//! parameter, so the unit tests run it natively on a temporary directory.

pub mod edit;
pub mod exec;
pub mod gitignore;
pub mod list;
pub mod read;
pub mod search;
pub mod text;
pub mod write;

use agent_skill_sdk::{Tool, Toolbox, fs};

/// The tools, with the input schemas the manifest also points at.
pub fn tools() -> Toolbox {
    Toolbox::new()
        .tool(
            "read_file",
            "Read a text file of the project, or a range of its lines (1-based, inclusive). \
             Output is capped at 2000 lines or 100 KiB; the note at the end says how to read on.",
            include_str!("../schemas/read_file.json"),
            |input: read::Input| read::run(&fs::project_root()?, &input),
        )
        .add_tool(
            Tool::new(
                "write_file",
                "Create or overwrite a file with the given content, creating parent directories.",
                include_str!("../schemas/write_file.json"),
                |input: write::Input| write::run(&fs::project_root()?, &input),
            )
            .requires_approval(true),
        )
        .add_tool(
            Tool::new(
                "edit",
                "Replace one exact occurrence of `old` with `new` in a file. `old` must match \
                 exactly once, whitespace included: include enough surrounding lines to make it \
                 unique.",
                include_str!("../schemas/edit.json"),
                |input: edit::Input| edit::run(&fs::project_root()?, &input),
            )
            .requires_approval(true),
        )
        .tool(
            "list_dir",
            "List a directory of the project: sorted entries, directories ending in `/`, files \
             with their sizes.",
            include_str!("../schemas/list_dir.json"),
            |input: list::Input| list::run(&fs::project_root()?, &input),
        )
        .tool(
            "search",
            "Search the project's text files for a regular expression (`(?i)` for case \
             insensitive), honouring .gitignore and .ignore and skipping hidden directories and \
             binary files. Answers `path:line: text`, at most 200 matches.",
            include_str!("../schemas/search.json"),
            |input: search::Input| search::run(&fs::project_root()?, &input),
        )
        .add_tool(
            Tool::new(
                "exec",
                "Run a program in the project (no shell: give the program and its arguments \
                 separately). Answers the exit code, stdout and stderr.",
                include_str!("../schemas/exec.json"),
                |input: exec::Input| exec::run(&input),
            )
            .requires_approval(true),
        )
}

agent_skill_sdk::export_tools!(tools);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_toolbox_is_valid() {
        assert_eq!(tools().check(), Ok(()));
    }

    /// The manifest and `list-tools` must agree: same tools in the same
    /// order, same schema files (byte for byte), same approval flags.
    #[test]
    fn the_manifest_matches_the_toolbox() {
        let manifest: serde_yaml::Value =
            serde_yaml::from_str(include_str!("../SKILL.yaml")).unwrap_or_else(|e| panic!("{e}"));
        let listed = manifest["tools"].as_sequence().cloned().unwrap_or_default();
        let specs = tools().specs();
        assert_eq!(listed.len(), specs.len());
        for (entry, spec) in listed.iter().zip(&specs) {
            assert_eq!(entry["name"].as_str(), Some(spec.name.as_str()));
            assert_eq!(
                entry["requires_approval"].as_bool(),
                Some(spec.requires_approval),
                "{}",
                spec.name
            );
            let file = entry["input_schema_file"].as_str().unwrap_or_default();
            let on_disk = std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file),
            )
            .unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(on_disk, spec.input_schema, "{}", spec.name);
        }
        assert_eq!(
            manifest["implementation"]["component"].as_str(),
            Some("core_tools.wasm")
        );
    }
}

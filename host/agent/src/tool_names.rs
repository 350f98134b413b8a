//! `--tools`: the tools a run offers the model, by their full names or by
//! the short names the spec uses (`--tools read,search`). The mapping is
//! defined here once; `agent run --help` and docs/agent-loop.md list it.

use agent_core::AgentTool;

use crate::cli::UsageError;

/// Short name → core-tools' tool name.
pub const SHORT_NAMES: &[(&str, &str)] = &[
    ("read", "read_file"),
    ("write", "write_file"),
    ("ls", "list_dir"),
    ("grep", "search"),
    ("bash", "exec"),
    ("shell", "exec"),
];

/// The tool names `wanted` stands for among `tools` (the run's tools): a
/// name a tool has (as the model sees it, or as its skill calls it) is
/// taken as it is, else a short name is mapped through [`SHORT_NAMES`].
///
/// # Errors
/// A name that is neither, or a short name whose tool no active skill
/// offers: a usage error listing the tools and the short names.
pub fn resolve(wanted: &[String], tools: &[AgentTool]) -> Result<Vec<String>, UsageError> {
    let offered = |name: &str| tools.iter().any(|t| t.name == name || t.spec.name == name);
    let mut names: Vec<String> = Vec::new();
    for w in wanted {
        let name = if offered(w) {
            w.as_str()
        } else {
            match SHORT_NAMES.iter().find(|(short, _)| short == w) {
                Some((_, full)) if offered(full) => *full,
                _ => return Err(unknown(w, tools)),
            }
        };
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

fn unknown(name: &str, tools: &[AgentTool]) -> UsageError {
    let mut tool_names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    tool_names.dedup();
    UsageError(format!(
        "--tools: no tool named `{name}` among the active skills' tools ({}); short names: {}",
        tool_names.join(", "),
        short_names_help()
    ))
}

/// `read=read_file, write=write_file, ...`, for messages and help.
pub fn short_names_help() -> String {
    SHORT_NAMES
        .iter()
        .map(|(short, full)| format!("{short}={full}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// `agent run --help` lists the mapping this module applies.
    #[test]
    fn run_help_lists_every_short_name() {
        let cli = crate::cli::Cli::command();
        let run = cli.find_subcommand("run").expect("run");
        let help = run
            .get_arguments()
            .find(|a| a.get_id() == "tools")
            .and_then(|a| a.get_help())
            .expect("--tools help")
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for (short, full) in SHORT_NAMES {
            assert!(help.contains(&format!("{short}={full}")), "{help}");
        }
    }
}

//! {{name}}: a transform skill. Removes trailing spaces, tabs and `\r` from
//! every line of the agent's output (a trailing newline is kept).

use agent_skill_sdk::types::SkillError;
use agent_skill_sdk::wit::transform_skill::exports::agent::skill::transform::{
    Guest, TransformContext,
};

struct Transform;

impl Guest for Transform {
    fn apply(output: String, _context: TransformContext) -> Result<String, SkillError> {
        let lines: Vec<&str> = output
            .split('\n')
            .map(|line| line.trim_end_matches([' ', '\t', '\r']))
            .collect();
        Ok(lines.join("\n"))
    }
}

agent_skill_sdk::wit::transform_skill::export!(Transform);

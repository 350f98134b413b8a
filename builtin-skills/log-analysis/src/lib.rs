//! The built-in `log-analysis` prompt skill: the instructions `agent logs`
//! gives the model (how to read the host's log overview, cite lines, and
//! report through `report_incident`) and a checklist of common causes.

use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
    Guest, PromptContext, PromptFragment,
};

struct LogAnalysis;

const ANALYSIS: &str = include_str!("../prompts/analysis.md");
const CHECKLIST: &str = include_str!("../prompts/checklist.md");

impl Guest for LogAnalysis {
    fn fragments(_context: PromptContext) -> Vec<PromptFragment> {
        vec![
            PromptFragment {
                title: "log analysis".to_string(),
                content: ANALYSIS.to_string(),
                priority: 0,
            },
            PromptFragment {
                title: "root-cause checklist".to_string(),
                content: CHECKLIST.to_string(),
                priority: 50,
            },
        ]
    }
}

agent_skill_sdk::wit::prompt_skill::export!(LogAnalysis);

//! The built-in `security-deep` prompt skill: the instructions `agent
//! security-audit --deep` gives the model (how to read the files the host
//! sends, follow a flow with the read tools, and report through
//! `report_finding`), and the checklists of its three analyses.

use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
    Guest, PromptContext, PromptFragment,
};

struct SecurityDeep;

const ANALYSIS: &str = include_str!("../prompts/analysis.md");
const AUTH: &str = include_str!("../prompts/auth-flow.md");
const TAINT: &str = include_str!("../prompts/taint.md");
const LOGIC: &str = include_str!("../prompts/business-logic.md");

impl Guest for SecurityDeep {
    fn fragments(_context: PromptContext) -> Vec<PromptFragment> {
        let fragment = |title: &str, content: &str, priority: i32| PromptFragment {
            title: title.to_string(),
            content: content.to_string(),
            priority,
        };
        vec![
            fragment("deep security analysis", ANALYSIS, 0),
            fragment("checklist: auth-flow", AUTH, 40),
            fragment("checklist: taint", TAINT, 50),
            fragment("checklist: business-logic", LOGIC, 60),
        ]
    }
}

agent_skill_sdk::wit::prompt_skill::export!(SecurityDeep);

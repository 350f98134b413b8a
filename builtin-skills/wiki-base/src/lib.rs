//! The built-in `wiki-base` prompt skill: the instructions `agent wiki`
//! gives the model (write one section from the parsed material, answer
//! through `write_wiki_section`, name only what exists), and what each kind
//! of section contains (module summaries, synthesis, deep-dives).

use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
    Guest, PromptContext, PromptFragment,
};

struct WikiBase;

const WIKI: &str = include_str!("../prompts/wiki.md");
const SUMMARY: &str = include_str!("../prompts/summary.md");
const SYNTHESIS: &str = include_str!("../prompts/synthesis.md");
const DEEP_DIVE: &str = include_str!("../prompts/deep-dive.md");

impl Guest for WikiBase {
    fn fragments(_context: PromptContext) -> Vec<PromptFragment> {
        let fragment = |title: &str, content: &str, priority: i32| PromptFragment {
            title: title.to_string(),
            content: content.to_string(),
            priority,
        };
        vec![
            fragment("wiki generator", WIKI, 0),
            fragment("wiki section: module summary", SUMMARY, 40),
            fragment("wiki sections: synthesis", SYNTHESIS, 50),
            fragment("wiki section: deep-dive", DEEP_DIVE, 60),
        ]
    }
}

agent_skill_sdk::wit::prompt_skill::export!(WikiBase);

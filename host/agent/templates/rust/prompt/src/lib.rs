//! {{name}}: a prompt skill. Adds guidelines to the system prompt, and the
//! project's languages when the host detected some.

use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
    Guest, PromptContext, PromptFragment,
};

struct Prompt;

impl Guest for Prompt {
    fn fragments(context: PromptContext) -> Vec<PromptFragment> {
        let mut fragments = vec![PromptFragment {
            title: "{{name}} guidelines".to_string(),
            content: "Keep changes small, explain why, and add a test for every fix.".to_string(),
            priority: 10,
        }];
        if !context.languages.is_empty() {
            fragments.push(PromptFragment {
                title: "project languages".to_string(),
                content: format!("This project uses: {}.", context.languages.join(", ")),
                priority: 20,
            });
        }
        fragments
    }
}

agent_skill_sdk::wit::prompt_skill::export!(Prompt);

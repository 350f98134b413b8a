//! Test-only prompt skill component: fragments that depend on the context,
//! so the host's budget fitting can be checked.
//!
//! - `context` (priority 0): the mode and the detected languages;
//! - `keyword` (priority 10): quotes the first word of the user message
//!   that looks like a keyword (`review`, `deploy` or `test`), or says none
//!   was found;
//! - `budget` (priority 20): the `max-tokens` it was given;
//! - `reference` (priority 50): about 6,000 characters of numbered lines,
//!   so small budgets cut it;
//! - `appendix` (priority 90): a short text that is dropped once
//!   `reference` was cut.

use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
    Guest, PromptContext, PromptFragment,
};

struct Prompt;

const KEYWORDS: [&str; 3] = ["review", "deploy", "test"];

fn fragment(title: &str, content: String, priority: i32) -> PromptFragment {
    PromptFragment {
        title: title.to_string(),
        content,
        priority,
    }
}

impl Guest for Prompt {
    fn fragments(context: PromptContext) -> Vec<PromptFragment> {
        let languages = if context.languages.is_empty() {
            "none".to_string()
        } else {
            context.languages.join(", ")
        };
        let message = context.user_message.to_lowercase();
        let keyword = KEYWORDS
            .iter()
            .find(|k| message.contains(*k))
            .map(|k| format!("The user asked about \"{k}\"."))
            .unwrap_or_else(|| "No known keyword in the message.".to_string());
        let reference: String = (1..=100)
            .map(|i| format!("Reference line {i:03}: keep changes small and tested.\n"))
            .collect();
        // Returned out of priority order on purpose: the host sorts.
        vec![
            fragment("reference", reference, 50),
            fragment(
                "context",
                format!("Mode: {}. Languages: {languages}.", context.mode),
                0,
            ),
            fragment("appendix", "Appendix: nothing else.".to_string(), 90),
            fragment("keyword", keyword, 10),
            fragment(
                "budget",
                format!("Budget: {} tokens.", context.max_tokens),
                20,
            ),
        ]
    }
}

agent_skill_sdk::wit::prompt_skill::export!(Prompt);

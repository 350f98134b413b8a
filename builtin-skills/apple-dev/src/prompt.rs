//! The prompt export: the Apple platform guidance (prompts/*.md, compiled
//! in), the system fragment first; the skill's `max_context_tokens` keeps
//! them by priority.

use agent_skill_sdk::wit::prompt_skill::exports::agent::skill::prompt::{
    Guest, PromptContext, PromptFragment,
};

pub struct Prompt;

/// (title, text, priority): lower priority is kept first.
pub const FRAGMENTS: &[(&str, &str, i32)] = &[
    (
        "Apple platform development",
        include_str!("../prompts/system.md"),
        0,
    ),
    ("SwiftUI", include_str!("../prompts/swiftui.md"), 20),
    (
        "Swift concurrency",
        include_str!("../prompts/concurrency.md"),
        30,
    ),
    ("Code signing", include_str!("../prompts/signing.md"), 40),
    ("UIKit", include_str!("../prompts/uikit.md"), 50),
];

impl Guest for Prompt {
    fn fragments(_context: PromptContext) -> Vec<PromptFragment> {
        FRAGMENTS
            .iter()
            .map(|(title, content, priority)| PromptFragment {
                title: (*title).to_string(),
                content: (*content).to_string(),
                priority: *priority,
            })
            .collect()
    }
}

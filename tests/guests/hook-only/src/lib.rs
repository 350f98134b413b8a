//! Test-only hook skill of contract 0.2.0: manifest `types: [hook]`, world
//! `hook-skill`, nothing else (see `tests/suite/contract.rs`).
//!
//! It listens to `on_after_tool_result` and appends to every tool result
//! ` [seen by hook-only, project mount: M]`, where `M` is what
//! `project.mount` (new in 0.2.0) answers for the hook's own call: `none`,
//! `read-only` or `read-write`.

use agent_skill_sdk::project::{self, MountMode};
use agent_skill_sdk::wit::hook_skill::exports::agent::skill::hooks::Guest;
use agent_skill_sdk::wit::tool_skill::agent::skill::types::{
    HookEvent, HookPhase, HookResult, HookSubscription, SkillError, ToolResult,
};

struct HookOnly;

fn mount_name(mode: MountMode) -> &'static str {
    match mode {
        MountMode::None => "none",
        MountMode::ReadOnly => "read-only",
        MountMode::ReadWrite => "read-write",
    }
}

impl Guest for HookOnly {
    fn subscriptions() -> Vec<HookSubscription> {
        vec![HookSubscription {
            phase: HookPhase::OnAfterToolResult,
            priority: 0,
        }]
    }

    fn on_event(event: HookEvent) -> Result<HookResult, SkillError> {
        let tool_result = event.tool_result.map(|r| ToolResult {
            output: format!(
                "{} [seen by hook-only, project mount: {}]",
                r.output,
                mount_name(project::mount())
            ),
            ..r
        });
        Ok(HookResult {
            cancel: false,
            cancel_reason: None,
            tool_call: None,
            tool_result,
            response: None,
            inject_prompt: None,
        })
    }
}

agent_skill_sdk::wit::hook_skill::export!(HookOnly);

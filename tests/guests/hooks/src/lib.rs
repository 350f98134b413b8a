//! Test-only hook component: one component whose behaviour comes entirely
//! from its configuration section, so the suite can load it under several
//! names with different behaviour (see `tests/suite/hooks.rs`).
//!
//! Keys of the section (all optional):
//!
//! - `phases`: phase names to subscribe to, spec spelling
//!   (`"on_before_tool_call"`, ...); default none.
//! - `priority`: the priority of every subscription (default 0).
//! - `fail_subscriptions`: `true` makes `subscriptions` trap.
//! - `cancel_tools`: tool names to cancel in `on_before_tool_call`, `"*"`
//!   for every tool; `cancel_reason` is the reason given (default none).
//! - `append_input`: `{"field": "f", "text": "t"}` appends `t` to the string
//!   field `f` of the tool input (created when missing), so a chain of hooks
//!   leaves a trail showing who ran, in which order, on whose output.
//! - `replace_tool`: a tool name; returns a replacement call for that other
//!   tool (which the host must ignore).
//! - `redact`: a string replaced with `[REDACTED]` in tool results
//!   (`on_after_tool_result`) and responses (`on_after_response`).
//! - `inject`: text added to the system prompt (`on_before_prompt_build`).
//! - `stray_response`: text returned as `response` in every phase (the host
//!   must ignore it outside `on_after_response`).
//! - `fail`: `true` returns a skill error from `on_event`.
//! - `trap`: `true` panics in `on_event`.

use agent_skill_sdk::wit::hook_skill::exports::agent::skill::hooks::Guest;
use agent_skill_sdk::wit::tool_skill::agent::skill::types::{
    HookEvent, HookPhase, HookResult, HookSubscription, SkillError, ToolCall, ToolResult,
};
use serde_json::{Map, Value};

struct Hooks;

/// The configuration section as JSON (`{}` when absent or unreadable).
fn config() -> Value {
    serde_json::from_str(&agent_skill_sdk::config::all_json())
        .unwrap_or_else(|_| Value::Object(Map::new()))
}

fn phase_from_name(name: &str) -> Option<HookPhase> {
    Some(match name {
        "on_activate" => HookPhase::OnActivate,
        "on_deactivate" => HookPhase::OnDeactivate,
        "on_conversation_start" => HookPhase::OnConversationStart,
        "on_before_prompt_build" => HookPhase::OnBeforePromptBuild,
        "on_before_tool_call" => HookPhase::OnBeforeToolCall,
        "on_after_tool_result" => HookPhase::OnAfterToolResult,
        "on_after_response" => HookPhase::OnAfterResponse,
        "on_before_wiki_section" => HookPhase::OnBeforeWikiSection,
        "on_security_scan_complete" => HookPhase::OnSecurityScanComplete,
        _ => return None,
    })
}

fn text<'a>(cfg: &'a Value, key: &str) -> Option<&'a str> {
    cfg.get(key).and_then(Value::as_str)
}

fn flag(cfg: &Value, key: &str) -> bool {
    cfg.get(key).and_then(Value::as_bool).unwrap_or(false)
}

const REDACTED: &str = "[REDACTED]";

impl Guest for Hooks {
    fn subscriptions() -> Vec<HookSubscription> {
        let cfg = config();
        assert!(
            !flag(&cfg, "fail_subscriptions"),
            "configured to fail its subscriptions"
        );
        let priority = cfg
            .get("priority")
            .and_then(Value::as_i64)
            .and_then(|p| i32::try_from(p).ok())
            .unwrap_or(0);
        cfg.get("phases")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str().and_then(phase_from_name))
            .map(|phase| HookSubscription { phase, priority })
            .collect()
    }

    fn on_event(event: HookEvent) -> Result<HookResult, SkillError> {
        let cfg = config();
        assert!(!flag(&cfg, "trap"), "configured to trap");
        if flag(&cfg, "fail") {
            return Err(SkillError::Failed("configured to fail".into()));
        }
        let mut result = HookResult {
            cancel: false,
            cancel_reason: None,
            tool_call: None,
            tool_result: None,
            response: text(&cfg, "stray_response").map(str::to_string),
            inject_prompt: None,
        };
        match event.phase {
            HookPhase::OnBeforeToolCall => before_tool_call(&cfg, event.tool_call, &mut result),
            HookPhase::OnAfterToolResult => {
                if let (Some(secret), Some(r)) = (text(&cfg, "redact"), event.tool_result)
                    && r.output.contains(secret)
                {
                    result.tool_result = Some(ToolResult {
                        output: r.output.replace(secret, REDACTED),
                        ..r
                    });
                }
            }
            HookPhase::OnAfterResponse => {
                if let (Some(secret), Some(r)) = (text(&cfg, "redact"), event.response)
                    && r.contains(secret)
                {
                    result.response = Some(r.replace(secret, REDACTED));
                }
            }
            HookPhase::OnBeforePromptBuild => {
                result.inject_prompt = text(&cfg, "inject").map(str::to_string);
            }
            _ => {}
        }
        Ok(result)
    }
}

fn before_tool_call(cfg: &Value, call: Option<ToolCall>, result: &mut HookResult) {
    let Some(call) = call else { return };
    let cancels = cfg
        .get("cancel_tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|t| t == "*" || t == call.tool);
    if cancels {
        result.cancel = true;
        result.cancel_reason = text(cfg, "cancel_reason").map(str::to_string);
        return;
    }
    if let Some(other) = text(cfg, "replace_tool") {
        result.tool_call = Some(ToolCall {
            tool: other.to_string(),
            ..call
        });
        return;
    }
    if let Some(append) = cfg.get("append_input")
        && let (Some(field), Some(suffix)) = (text(append, "field"), text(append, "text"))
    {
        let mut input: Map<String, Value> = serde_json::from_str(&call.input).unwrap_or_default();
        let before = input.get(field).and_then(Value::as_str).unwrap_or("");
        let after = format!("{before}{suffix}");
        input.insert(field.to_string(), Value::String(after));
        result.tool_call = Some(ToolCall {
            input: Value::Object(input).to_string(),
            ..call
        });
    }
}

agent_skill_sdk::wit::hook_skill::export!(Hooks);

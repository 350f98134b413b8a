//! Lifecycle hooks with a real component: `guest-hooks`, whose behaviour
//! comes from its configuration section, loaded under several names with
//! different configurations and dispatched through `HookSet`.
//!
//! The hooks-only component is loaded as a `prompt` skill whose prompt is a
//! file (`prompt.system_prompt_file`): then the component need not export
//! `prompt`, and `hooks` rides along with any type. That was the only way
//! before contract 0.2.0 added the `hook` type (`types: [hook]`, see
//! `contract.rs`); it still loads, and these tests keep it.

use std::collections::HashMap;
use std::sync::Arc;

use agent_core::hooks::{HookChange, HookSet, phase_name};
use agent_runtime::{
    CallContext, GrantsAuthorizer, HookEvent, HookPhase, Origin, Skill, SkillPackage, WitToolCall,
    WitToolResult,
};
use agent_tests::write_skill;
use serde_json::{Value, json};

use crate::common::{Harness, guest};

/// Skills loaded from the hook component, and a context carrying their
/// configuration sections.
struct World {
    h: Harness,
    ctx: Arc<CallContext>,
    skills: Vec<Skill>,
}

impl World {
    /// Loads `guest-hooks` once per `(name, config)`.
    fn new(specs: &[(&str, Value)]) -> World {
        let h = Harness::new(&[]);
        let component = guest("guest-hooks");
        let mut skills = Vec::new();
        let mut config = HashMap::new();
        for (name, cfg) in specs {
            let dir = h.sandbox.home.path().join("skill-src").join(name);
            let manifest = format!(
                "name: {name}\nversion: 0.1.0\ndescription: hook skill {name}\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\nimplementation:\n  component: skill.wasm\n"
            );
            write_skill(&dir, &manifest, &component, Some(&h.key));
            std::fs::write(dir.join("PROMPT.md"), "Hook test skill.\n").expect("prompt file");
            // The signature covers PROMPT.md too: sign again now that it exists.
            agent_tests::sign_skill_dir(&dir, &h.key);
            let pkg = SkillPackage::from_dir(&dir, Origin::Path).expect("package");
            let skill = h.runtime.load(pkg, &h.trust).expect("load hook skill");
            assert!(skill.exports(agent_runtime::ExportKind::Hooks));
            skills.push(skill);
            config.insert(name.to_string(), cfg.clone());
        }
        let authorizer = Arc::new(GrantsAuthorizer::new(Arc::clone(&h.grants)));
        let mut ctx = CallContext::new(h.project(), "headless", authorizer).expect("context");
        ctx.skill_config = config;
        World {
            h,
            ctx: Arc::new(ctx),
            skills,
        }
    }

    async fn hooks(&self) -> HookSet {
        let active: Vec<usize> = (0..self.skills.len()).collect();
        let (set, problems) =
            HookSet::load(&self.h.runtime, &self.ctx, &self.skills, &active).await;
        assert!(problems.is_empty(), "{problems:?}");
        set
    }
}

fn event(phase: HookPhase) -> HookEvent {
    HookEvent {
        phase,
        skill: "owner".into(),
        conversation: Vec::new(),
        tool_call: None,
        tool_result: None,
        response: None,
        findings: Vec::new(),
    }
}

fn before_call(tool: &str, input: Value) -> HookEvent {
    HookEvent {
        tool_call: Some(WitToolCall {
            id: "call-1".into(),
            tool: tool.into(),
            input: input.to_string(),
        }),
        ..event(HookPhase::OnBeforeToolCall)
    }
}

/// A hook appending `text` to the input's `trail` field.
fn trail(name: &'static str, text: &str, priority: i32) -> (&'static str, Value) {
    (
        name,
        json!({
            "phases": ["on_before_tool_call"],
            "priority": priority,
            "append_input": {"field": "trail", "text": text},
        }),
    )
}

fn change(skill: &str, phase: HookPhase, what: &str) -> HookChange {
    HookChange {
        skill: skill.into(),
        phase,
        what: what.into(),
    }
}

fn input_of(call: &WitToolCall) -> Value {
    serde_json::from_str(&call.input).expect("input is JSON")
}

#[tokio::test]
async fn cancel_stops_the_chain_and_later_hooks_do_not_run() {
    let w = World::new(&[
        trail("a-trail", "A", 1),
        (
            "b-guard",
            json!({
                "phases": ["on_before_tool_call"],
                "priority": 2,
                "cancel_tools": ["exec"],
                "cancel_reason": "no exec in this project",
            }),
        ),
        trail("c-trail", "C", 3),
    ]);
    let hooks = w.hooks().await;
    let phase = HookPhase::OnBeforeToolCall;

    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            before_call("exec", json!({"cmd": "ls"})),
        )
        .await;
    let cancel = out.cancelled.expect("exec is cancelled");
    assert_eq!(cancel.skill, "b-guard");
    assert_eq!(cancel.reason, "no exec in this project");
    // c-trail (priority 3) never ran: no change of its own.
    assert_eq!(
        out.changes,
        [
            change("a-trail", phase, "changed the input"),
            change("b-guard", phase, "cancelled the call"),
        ]
    );
    assert!(out.errors.is_empty(), "{:?}", out.errors);

    // The control: a tool the guard lets through runs every hook.
    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            before_call("read", json!({"path": "x"})),
        )
        .await;
    assert!(out.cancelled.is_none());
    assert_eq!(out.changes.len(), 2, "{:?}", out.changes);
    assert_eq!(
        out.changes[1],
        change("c-trail", phase, "changed the input")
    );
}

#[tokio::test]
async fn each_hook_sees_the_input_as_changed_by_the_ones_before() {
    let w = World::new(&[trail("first", "1", 0), trail("second", "2", 10)]);
    let hooks = w.hooks().await;
    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            before_call("read", json!({"path": "src/main.rs"})),
        )
        .await;
    let call = out.tool_call.expect("the input changed");
    assert_eq!(call.id, "call-1");
    assert_eq!(call.tool, "read");
    // "second" appended to what "first" wrote.
    assert_eq!(
        input_of(&call),
        json!({"path": "src/main.rs", "trail": "12"})
    );
}

#[tokio::test]
async fn priority_order_then_skill_name() {
    let w = World::new(&[
        trail("zulu", "Z", 0),
        trail("alpha", "A", 0),
        trail("mid", "M", -5),
        trail("last", "L", 7),
    ]);
    let hooks = w.hooks().await;
    let order: Vec<&str> = hooks
        .subscriptions()
        .iter()
        .map(|s| s.skill_name.as_str())
        .collect();
    assert_eq!(order, ["mid", "alpha", "zulu", "last"]);
    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            before_call("read", json!({})),
        )
        .await;
    assert_eq!(input_of(&out.tool_call.expect("changed"))["trail"], "MAZL");
}

#[tokio::test]
async fn listens_only_to_subscribed_phases() {
    let w = World::new(&[
        trail("trail", "T", 0),
        (
            "quiet",
            json!({"phases": [], "redact": "SECRET", "inject": "never"}),
        ),
    ]);
    let hooks = w.hooks().await;
    assert!(!hooks.is_empty());
    assert!(hooks.listens(HookPhase::OnBeforeToolCall));
    for phase in [
        HookPhase::OnActivate,
        HookPhase::OnBeforePromptBuild,
        HookPhase::OnAfterToolResult,
        HookPhase::OnAfterResponse,
        HookPhase::OnSecurityScanComplete,
    ] {
        assert!(!hooks.listens(phase), "{}", phase_name(phase));
    }
    // "quiet" would redact, but it subscribed to nothing.
    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            HookEvent {
                response: Some("SECRET".into()),
                ..event(HookPhase::OnAfterResponse)
            },
        )
        .await;
    assert!(out.response.is_none() && out.changes.is_empty() && out.errors.is_empty());
}

#[tokio::test]
async fn tool_results_and_responses_are_redacted_by_each_hook_in_turn() {
    let phases = json!(["on_after_tool_result", "on_after_response"]);
    let w = World::new(&[
        (
            "redact-secret",
            json!({"phases": phases, "priority": 1, "redact": "SECRET"}),
        ),
        (
            "redact-token",
            json!({"phases": phases, "priority": 2, "redact": "TOKEN"}),
        ),
    ]);
    let hooks = w.hooks().await;

    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            HookEvent {
                tool_call: Some(WitToolCall {
                    id: "call-9".into(),
                    tool: "read".into(),
                    input: "{}".into(),
                }),
                tool_result: Some(WitToolResult {
                    id: "call-9".into(),
                    output: "key=SECRET token=TOKEN".into(),
                    is_error: false,
                }),
                ..event(HookPhase::OnAfterToolResult)
            },
        )
        .await;
    let result = out.tool_result.expect("the result changed");
    assert_eq!(result.id, "call-9");
    assert_eq!(result.output, "key=[REDACTED] token=[REDACTED]");
    assert!(!result.is_error);
    assert_eq!(
        out.changes,
        [
            change(
                "redact-secret",
                HookPhase::OnAfterToolResult,
                "changed the result"
            ),
            change(
                "redact-token",
                HookPhase::OnAfterToolResult,
                "changed the result"
            ),
        ]
    );

    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            HookEvent {
                response: Some("The TOKEN is SECRET.".into()),
                ..event(HookPhase::OnAfterResponse)
            },
        )
        .await;
    assert_eq!(
        out.response.as_deref(),
        Some("The [REDACTED] is [REDACTED].")
    );
    assert_eq!(out.changes.len(), 2);

    // Nothing to redact: no change reported.
    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            HookEvent {
                response: Some("clean".into()),
                ..event(HookPhase::OnAfterResponse)
            },
        )
        .await;
    assert!(out.response.is_none() && out.changes.is_empty());
}

#[tokio::test]
async fn prompt_injections_come_in_hook_order() {
    let w = World::new(&[
        (
            "style",
            json!({"phases": ["on_before_prompt_build"], "priority": 2, "inject": "Be terse."}),
        ),
        (
            "rules",
            json!({"phases": ["on_before_prompt_build"], "priority": 1, "inject": "Never push."}),
        ),
    ]);
    let hooks = w.hooks().await;
    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            event(HookPhase::OnBeforePromptBuild),
        )
        .await;
    assert_eq!(
        out.injected,
        [
            ("rules".to_string(), "Never push.".to_string()),
            ("style".to_string(), "Be terse.".to_string()),
        ]
    );
    assert_eq!(
        out.changes,
        [
            change(
                "rules",
                HookPhase::OnBeforePromptBuild,
                "added to the system prompt"
            ),
            change(
                "style",
                HookPhase::OnBeforePromptBuild,
                "added to the system prompt"
            ),
        ]
    );
}

#[tokio::test]
async fn a_failing_before_tool_call_hook_cancels_the_call() {
    for (name, cfg, expect) in [
        ("broken", json!({"fail": true}), "configured to fail"),
        ("trapper", json!({"trap": true}), "crashed"),
    ] {
        let mut cfg = cfg;
        cfg["phases"] = json!(["on_before_tool_call"]);
        let w = World::new(&[(name, cfg), trail("later", "L", 5)]);
        let hooks = w.hooks().await;
        let out = hooks
            .dispatch(
                &w.h.runtime,
                &w.ctx,
                &w.skills,
                before_call("read", json!({})),
            )
            .await;
        let cancel = out.cancelled.expect("fail closed");
        assert_eq!(cancel.skill, name);
        assert!(
            cancel.reason.contains(&format!("`{name}`")) && cancel.reason.contains(expect),
            "{}",
            cancel.reason
        );
        assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
        assert!(out.errors[0].contains(&format!("skill `{name}`")));
        // "later" never ran.
        assert_eq!(
            out.changes,
            [change(
                name,
                HookPhase::OnBeforeToolCall,
                "cancelled the call"
            )]
        );
        assert!(out.tool_call.is_none());
    }
}

#[tokio::test]
async fn a_failing_after_response_hook_is_recorded_and_skipped() {
    let w = World::new(&[
        (
            "broken",
            json!({"phases": ["on_after_response"], "priority": 0, "fail": true}),
        ),
        (
            "redactor",
            json!({"phases": ["on_after_response"], "priority": 1, "redact": "SECRET"}),
        ),
    ]);
    let hooks = w.hooks().await;
    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            HookEvent {
                response: Some("SECRET".into()),
                ..event(HookPhase::OnAfterResponse)
            },
        )
        .await;
    assert!(out.cancelled.is_none());
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    assert!(
        out.errors[0].contains("skill `broken`")
            && out.errors[0].contains("on_after_response")
            && out.errors[0].contains("configured to fail"),
        "{}",
        out.errors[0]
    );
    assert_eq!(out.response.as_deref(), Some("[REDACTED]"));
}

#[tokio::test]
async fn fields_that_do_not_apply_are_ignored_with_a_note() {
    let w = World::new(&[
        (
            "swapper",
            json!({"phases": ["on_before_tool_call"], "priority": 0, "replace_tool": "exec"}),
        ),
        (
            "chatty",
            json!({"phases": ["on_before_tool_call"], "priority": 1, "stray_response": "hi"}),
        ),
    ]);
    let hooks = w.hooks().await;
    let out = hooks
        .dispatch(
            &w.h.runtime,
            &w.ctx,
            &w.skills,
            before_call("read", json!({"path": "a"})),
        )
        .await;
    assert!(out.cancelled.is_none());
    assert!(out.tool_call.is_none(), "the swapped tool must be ignored");
    assert!(out.response.is_none() && out.changes.is_empty());
    assert_eq!(out.errors.len(), 2, "{:?}", out.errors);
    assert!(out.errors[0].contains("skill `swapper`") && out.errors[0].contains("only the input"));
    assert!(out.errors[1].contains("skill `chatty`") && out.errors[1].contains("`response`"));
}

#[tokio::test]
async fn a_failing_subscriptions_call_is_a_load_problem() {
    let w = World::new(&[
        ("broken", json!({"fail_subscriptions": true})),
        trail("fine", "F", 0),
    ]);
    let (hooks, problems) = HookSet::load(&w.h.runtime, &w.ctx, &w.skills, &[0, 1]).await;
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].contains("skill `broken`"), "{}", problems[0]);
    let names: Vec<&str> = hooks
        .subscriptions()
        .iter()
        .map(|s| s.skill_name.as_str())
        .collect();
    assert_eq!(names, ["fine"]);
    // Only the active skills are asked.
    let (hooks, problems) = HookSet::load(&w.h.runtime, &w.ctx, &w.skills, &[]).await;
    assert!(hooks.is_empty() && problems.is_empty());
}

use super::*;

fn sub(skill: usize, name: &str, phase: HookPhase, priority: i32) -> Subscription {
    Subscription {
        skill,
        skill_name: name.to_string(),
        phase,
        priority,
    }
}

fn event(phase: HookPhase) -> HookEvent {
    HookEvent {
        phase,
        skill: "owner".into(),
        conversation: Vec::new(),
        tool_call: Some(WitToolCall {
            id: "c1".into(),
            tool: "read".into(),
            input: r#"{"path":"a"}"#.into(),
        }),
        tool_result: Some(WitToolResult {
            id: "c1".into(),
            output: "SECRET here".into(),
            is_error: false,
        }),
        response: Some("said SECRET".into()),
        findings: Vec::new(),
    }
}

fn nothing() -> HookResult {
    HookResult {
        cancel: false,
        cancel_reason: None,
        tool_call: None,
        tool_result: None,
        response: None,
        inject_prompt: None,
    }
}

#[test]
fn phase_names_round_trip() {
    for p in ALL_PHASES {
        assert_eq!(phase_from_name(phase_name(p)), Some(p));
    }
    assert_eq!(
        phase_name(HookPhase::OnBeforeToolCall),
        "on_before_tool_call"
    );
    assert_eq!(phase_from_name("on-before-tool-call"), None);
}

#[test]
fn sorted_by_priority_then_name_and_deduplicated() {
    let set = HookSet::from_subscriptions(vec![
        sub(0, "zeta", HookPhase::OnAfterResponse, 5),
        sub(1, "alpha", HookPhase::OnAfterResponse, 5),
        sub(2, "mid", HookPhase::OnAfterResponse, -1),
        sub(2, "mid", HookPhase::OnAfterResponse, 9),
    ]);
    let order: Vec<(&str, i32)> = set
        .subscriptions()
        .iter()
        .map(|s| (s.skill_name.as_str(), s.priority))
        .collect();
    assert_eq!(order, [("mid", -1), ("alpha", 5), ("zeta", 5)]);
    assert!(set.listens(HookPhase::OnAfterResponse));
    assert!(!set.listens(HookPhase::OnBeforeToolCall));
    assert!(!set.is_empty());
    let empty = HookSet::default();
    assert!(empty.is_empty());
    assert!(ALL_PHASES.iter().all(|p| !empty.listens(*p)));
}

#[test]
fn cancel_stops_with_reason_or_default() {
    let mut chain = Chain::new(event(HookPhase::OnBeforeToolCall));
    let flow = chain.apply(
        "guard",
        Ok(HookResult {
            cancel: true,
            ..nothing()
        }),
    );
    assert_eq!(flow, Flow::Stop);
    let out = chain.finish();
    let c = out.cancelled.expect("cancelled");
    assert_eq!(c.skill, "guard");
    assert!(c.reason.contains("`guard`"), "{}", c.reason);
    assert_eq!(out.changes[0].what, "cancelled the call");
}

#[test]
fn cancel_outside_before_tool_call_is_ignored() {
    let mut chain = Chain::new(event(HookPhase::OnAfterResponse));
    let flow = chain.apply(
        "late",
        Ok(HookResult {
            cancel: true,
            ..nothing()
        }),
    );
    assert_eq!(flow, Flow::Continue);
    let out = chain.finish();
    assert!(out.cancelled.is_none());
    assert_eq!(out.errors.len(), 1);
    assert!(out.errors[0].contains("`late`") && out.errors[0].contains("`cancel`"));
}

#[test]
fn replacement_call_may_change_only_the_input() {
    let mut chain = Chain::new(event(HookPhase::OnBeforeToolCall));
    let other_tool = WitToolCall {
        id: "c1".into(),
        tool: "exec".into(),
        input: "{}".into(),
    };
    let not_object = WitToolCall {
        id: "c1".into(),
        tool: "read".into(),
        input: "[1]".into(),
    };
    let good = WitToolCall {
        id: "c1".into(),
        tool: "read".into(),
        input: r#"{"path":"b"}"#.into(),
    };
    for (who, call) in [("a", other_tool), ("b", not_object), ("c", good)] {
        let r = HookResult {
            tool_call: Some(call),
            ..nothing()
        };
        assert_eq!(chain.apply(who, Ok(r)), Flow::Continue);
    }
    let out = chain.finish();
    assert_eq!(out.errors.len(), 2, "{:?}", out.errors);
    assert!(out.errors[0].contains("`a`") && out.errors[0].contains("only the input"));
    assert!(out.errors[1].contains("`b`") && out.errors[1].contains("JSON object"));
    assert_eq!(out.tool_call.expect("changed").input, r#"{"path":"b"}"#);
    assert_eq!(
        out.changes,
        [HookChange {
            skill: "c".into(),
            phase: HookPhase::OnBeforeToolCall,
            what: "changed the input".into()
        }]
    );
}

#[test]
fn unchanged_replacements_are_not_changes() {
    let mut chain = Chain::new(event(HookPhase::OnBeforeToolCall));
    let same = WitToolCall {
        id: "c1".into(),
        tool: "read".into(),
        input: r#"{ "path": "a" }"#.into(),
    };
    chain.apply(
        "a",
        Ok(HookResult {
            tool_call: Some(same),
            ..nothing()
        }),
    );
    let out = chain.finish();
    assert!(out.tool_call.is_none() && out.changes.is_empty() && out.errors.is_empty());
}

#[test]
fn failure_cancels_before_tool_call_and_is_recorded_elsewhere() {
    let mut chain = Chain::new(event(HookPhase::OnBeforeToolCall));
    assert_eq!(
        chain.apply("guard", Err("skill `guard`: boom".into())),
        Flow::Stop
    );
    let out = chain.finish();
    let c = out.cancelled.expect("fail closed");
    assert!(c.reason.contains("skill `guard`: boom"), "{}", c.reason);
    assert_eq!(out.errors, ["skill `guard`: boom"]);

    let mut chain = Chain::new(event(HookPhase::OnAfterResponse));
    assert_eq!(
        chain.apply("late", Err("skill `late`: boom".into())),
        Flow::Continue
    );
    let out = chain.finish();
    assert!(out.cancelled.is_none());
    assert_eq!(out.errors, ["skill `late`: boom"]);
}

#[test]
fn fields_of_other_phases_are_ignored_with_a_note() {
    let mut chain = Chain::new(event(HookPhase::OnAfterToolResult));
    chain.apply(
        "x",
        Ok(HookResult {
            response: Some("r".into()),
            inject_prompt: Some("p".into()),
            tool_result: Some(WitToolResult {
                id: "c1".into(),
                output: "clean".into(),
                is_error: false,
            }),
            ..nothing()
        }),
    );
    let out = chain.finish();
    assert_eq!(out.errors.len(), 2, "{:?}", out.errors);
    assert!(out.errors.iter().all(|e| e.starts_with("skill `x`")));
    assert!(out.response.is_none() && out.injected.is_empty());
    assert_eq!(out.tool_result.expect("changed").output, "clean");
}

#[test]
fn result_id_must_stay() {
    let mut chain = Chain::new(event(HookPhase::OnAfterToolResult));
    chain.apply(
        "x",
        Ok(HookResult {
            tool_result: Some(WitToolResult {
                id: "other".into(),
                output: "clean".into(),
                is_error: false,
            }),
            ..nothing()
        }),
    );
    let out = chain.finish();
    assert!(out.tool_result.is_none());
    assert_eq!(out.errors.len(), 1);
}

#[test]
fn injections_keep_hook_order() {
    let mut chain = Chain::new(event(HookPhase::OnBeforePromptBuild));
    for (who, text) in [("a", "first"), ("b", "  "), ("c", "second")] {
        chain.apply(
            who,
            Ok(HookResult {
                inject_prompt: Some(text.into()),
                ..nothing()
            }),
        );
    }
    let out = chain.finish();
    assert_eq!(
        out.injected,
        [
            ("a".to_string(), "first".to_string()),
            ("c".to_string(), "second".to_string())
        ]
    );
    assert_eq!(out.changes.len(), 2);
}

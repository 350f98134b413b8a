//! The one tool router, seen from the agent loop over the real runtime and
//! the real grants, with the hostile skill:
//!
//! - denials are events when they happen: a skill refused a program keeps
//!   going (a granted `sleep 2`), and the refusal reaches the run's events
//!   while the call is still running — not after it ended, as it did when
//!   denials were polled from the grants' list after each call;
//! - whether a tool asks first is decided in one place: a tool whose signed
//!   manifest says `requires_approval: true` asks the gate even when the
//!   component's own spec says it need not (the model's calls used to read
//!   the component's spec only, `skills.invoke` both).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_core::{Agent, AgentEvent, ApprovalGate, RunLimits, collect_tools};
use agent_providers::{
    BoxFuture, CancellationToken, Completion, ContentBlock, EventSink, Message, Provider,
    ProviderError, Request, Role, StopReason, Usage,
};
use agent_runtime::GrantsAuthorizer;
use serde_json::json;

use crate::common::Harness;

/// Asks for one tool call, then ends its turn.
struct OneCall {
    tool: &'static str,
    input: serde_json::Value,
    answered: Mutex<u32>,
}

impl Provider for OneCall {
    fn name(&self) -> &str {
        "one-call"
    }

    fn stream<'a>(
        &'a self,
        _req: &'a Request,
        _cancel: &'a CancellationToken,
        _on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(async move {
            let mut n = self.answered.lock().unwrap_or_else(|e| e.into_inner());
            *n += 1;
            let message = if *n == 1 {
                Message {
                    role: Role::Assistant,
                    content: vec![ContentBlock::ToolUse {
                        id: "call_1".into(),
                        name: self.tool.into(),
                        input: self.input.clone(),
                    }],
                }
            } else {
                Message::assistant("done")
            };
            Ok(Completion {
                message,
                usage: Usage::default(),
                stop_reason: StopReason::EndTurn,
                invalid_inputs: Vec::new(),
            })
        })
    }
}

/// Refuses every tool, remembering what it was asked.
#[derive(Default)]
struct NoApproval {
    asked: Mutex<Vec<(String, String)>>,
}

impl ApprovalGate for NoApproval {
    fn approve_tool(&self, skill: &str, tool: &str, _: &str) -> bool {
        self.asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((skill.to_string(), tool.to_string()));
        false
    }
    fn refusal(&self) -> String {
        "the test approves nothing".into()
    }
}

#[tokio::test]
async fn a_denial_is_reported_when_it_happens_not_when_the_call_ends() {
    // The prober may run `sleep` only: `echo` is refused, then `sleep 2`
    // keeps the call going.
    let h = Harness::new(&["prober/shell:exec:sleep"]);
    let skill = h
        .load_hostile("prober", "permissions: [shell:exec]\n")
        .expect("load");
    let skills = vec![skill];
    let tools = collect_tools(&h.runtime, &h.ctx, &skills, &[0])
        .await
        .expect("tools");
    let provider = Arc::new(OneCall {
        tool: "exec_each",
        input: json!({"runs": [
            {"program": "echo", "args": ["hi"]},
            {"program": "sleep", "args": ["2"]},
        ]}),
        answered: Mutex::new(0),
    });
    let gate = NoApproval::default();
    let agent = Agent::builder(provider, &h.runtime, h.ctx.clone(), &skills, &gate)
        .limits(RunLimits {
            max_turns: 3,
            timeout: Duration::from_secs(60),
        })
        .tools(tools)
        .grants(Arc::new(GrantsAuthorizer::new(h.grants.clone())))
        .build();

    let start = Instant::now();
    let mut seen: Vec<(Duration, AgentEvent)> = Vec::new();
    let mut sink = |e: &AgentEvent| seen.push((start.elapsed(), e.clone()));
    let out = agent
        .run(Vec::new(), "probe", None, &mut sink)
        .await
        .expect("run");
    for (at, e) in &seen {
        println!(
            "{:>6} ms  {}",
            at.as_millis(),
            serde_json::to_string(e).unwrap()
        );
    }

    // The call ran to its end: echo refused, sleep ran.
    let result = seen
        .iter()
        .position(|(_, e)| matches!(e, AgentEvent::ToolResult { id, .. } if id == "call_1"))
        .expect("the call's result");
    let AgentEvent::ToolResult { output, .. } = &seen[result].1 else {
        unreachable!()
    };
    assert!(
        output.contains("echo: CapabilityError::Denied("),
        "{output}"
    );
    assert!(output.contains("sleep: exit=Some(0)"), "{output}");

    // The refusal is an event of its own, before the call's result...
    let denial = seen
        .iter()
        .position(|(_, e)| matches!(e, AgentEvent::Denial { .. }))
        .expect("a denial event");
    let AgentEvent::Denial {
        skill,
        permission,
        reason,
    } = &seen[denial].1
    else {
        unreachable!()
    };
    assert_eq!(skill, "prober");
    assert_eq!(permission, "shell:exec");
    assert!(
        reason.contains("prober was not granted shell:exec (echo)"),
        "{reason}"
    );
    assert!(
        denial < result,
        "the denial is reported during the call, before its result"
    );
    // ...and it arrived while `sleep 2` was still running: well before the
    // call ended, not with its end.
    let (denied_at, ended_at) = (seen[denial].0, seen[result].0);
    assert!(
        ended_at >= denied_at + Duration::from_millis(1500),
        "denied at {denied_at:?}, the call ended at {ended_at:?}"
    );

    // The run's outcome lists it once, and the audit log recorded it.
    assert_eq!(out.denials.len(), 1, "{:?}", out.denials);
    assert_eq!(out.denials[0].permission, "shell:exec");
    assert!(
        h.audit_of("prober")
            .iter()
            .any(|(cap, _, decision)| cap == "shell:exec" && decision.starts_with("denied")),
        "{:?}",
        h.audit_of("prober")
    );
}

#[tokio::test]
async fn a_tool_the_manifest_says_requires_approval_asks_even_if_the_component_does_not() {
    // The hostile component's `echo` spec says `requires_approval: false`;
    // the signed manifest says true.
    let h = Harness::new(&[]);
    let skill = h
        .load_hostile(
            "asker",
            "permissions: [shell:exec]\ntools:\n  - name: echo\n    description: says it again\n    requires_approval: true\n    files: none\n",
        )
        .expect("load");
    let skills = vec![skill];
    let tools = collect_tools(&h.runtime, &h.ctx, &skills, &[0])
        .await
        .expect("tools");
    let provider = Arc::new(OneCall {
        tool: "echo",
        input: json!({"text": "unapproved"}),
        answered: Mutex::new(0),
    });
    let gate = NoApproval::default();
    let agent = Agent::builder(provider, &h.runtime, h.ctx.clone(), &skills, &gate)
        .limits(RunLimits {
            max_turns: 3,
            timeout: Duration::from_secs(60),
        })
        .tools(tools)
        .build();
    let mut seen: Vec<AgentEvent> = Vec::new();
    let mut sink = |e: &AgentEvent| seen.push(e.clone());
    let out = agent
        .run(Vec::new(), "say it", None, &mut sink)
        .await
        .expect("run");
    for e in &seen {
        println!("{}", serde_json::to_string(e).unwrap());
    }

    // The gate was asked, once, about asker's echo, and said no.
    assert_eq!(
        *gate.asked.lock().unwrap(),
        vec![("asker".to_string(), "echo".to_string())]
    );
    assert!(
        seen.iter().any(|e| matches!(
            e,
            AgentEvent::Approval { tool, approved: false, reason }
                if tool == "echo" && reason == "the test approves nothing"
        )),
        "{seen:?}"
    );
    // The tool did not run: the model was told why, not "unapproved".
    let call = &out.tool_calls[0];
    assert!(call.is_error, "{call:?}");
    assert_eq!(
        call.output,
        "tool `echo` was not run: not approved: the test approves nothing"
    );
}

//! Tools the host provides itself (a mode's reporting tool, MCP servers,
//! instruction skills) go through the one router like a component's: offered
//! under their skill's name, renamed on a clash, their input checked against
//! the schema before they run, approval asked as an event, and the prompt of
//! their source in the system prompt. A real session with the real
//! core-tools component, a scripted model on 127.0.0.1.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::{AgentEvent, FixedTools, HostFuture, HostTool, Session, StopKind};
use agent_protocol::{ApprovalAnswer, ApprovalKind, Event, Op};
use agent_runtime::{SkillError, ToolOutput, ToolSpec};
use agent_tests::Sandbox;
use agent_tests::model_server::{ModelServer, Wire};
use serde_json::{Value, json};

use crate::session::{next, parts};

/// A host tool of skill `notes-mode` that records what it was called with.
struct Recorder {
    spec: ToolSpec,
    calls: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn tool(name: &str, approval: bool, calls: Arc<Mutex<Vec<String>>>) -> Arc<dyn HostTool> {
        Arc::new(Recorder {
            spec: ToolSpec {
                name: name.to_string(),
                description: format!("{name}: records its input"),
                input_schema: json!({
                    "type": "object",
                    "properties": {"note": {"type": "string"}},
                    "required": ["note"]
                })
                .to_string(),
                requires_approval: approval,
            },
            calls,
        })
    }
}

impl HostTool for Recorder {
    fn skill(&self) -> &str {
        "notes-mode"
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, input: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move {
            let v: Value =
                serde_json::from_str(input).map_err(|e| SkillError::InvalidInput(e.to_string()))?;
            let note = v["note"].as_str().unwrap_or_default().to_string();
            self.calls
                .lock()
                .unwrap()
                .push(format!("{}:{note}", self.spec.name));
            Ok(ToolOutput {
                text: format!("recorded {note}"),
                truncated: false,
            })
        })
    }
}

/// The text of the tool result with `id` in a recorded Anthropic request.
fn tool_result(body: &Value, id: &str) -> Option<(String, bool)> {
    body["messages"].as_array()?.iter().find_map(|m| {
        m["content"].as_array()?.iter().find_map(|c| {
            (c["type"] == "tool_result" && c["tool_use_id"] == id).then(|| {
                let text = match &c["content"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (text, c["is_error"].as_bool().unwrap_or(false))
            })
        })
    })
}

#[test]
fn host_tools_are_offered_checked_approved_and_called_through_the_one_router() {
    let rt = agent_tests::model_server::tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            // Split into small chunks: the input arrives in pieces.
            Wire::Anthropic
                .tool("call_1", "remember", &json!({"note": "first"}))
                .split(7, Duration::from_millis(1)),
            Wire::Anthropic.tool("call_2", "remember", &json!({"text": "no note"})),
            Wire::Anthropic.tool("call_3", "shred", &json!({"note": "all"})),
            Wire::Anthropic.tool("call_4", "notes-mode__read_file", &json!({"note": "mine"})),
            Wire::Anthropic.answer("Done."),
        ]))
        .expect("model server");
    let sb = Sandbox::new();
    let calls = Arc::new(Mutex::new(Vec::new()));
    let mut parts = parts(&sb, server.url());
    parts.host_tools = vec![Arc::new(FixedTools {
        tools: vec![
            Recorder::tool("remember", false, calls.clone()),
            Recorder::tool("shred", true, calls.clone()),
            // core-tools has a `read_file` too: this one is renamed.
            Recorder::tool("read_file", false, calls.clone()),
        ],
        prompt: Some("Record every note with `remember`.".into()),
    })];
    let client = Session::spawn(parts, rt.handle().clone());
    assert!(matches!(next(&client), Event::SessionConfigured { .. }));

    client.send(Op::UserTurn {
        text: "Take notes".into(),
        attachments: vec![],
    });
    let mut events = Vec::new();
    let mut asked = Vec::new();
    let done = loop {
        match next(&client) {
            Event::Agent(e) => events.push(e),
            Event::ApprovalRequested(req) => {
                if let ApprovalKind::Tool { skill, tool, .. } = &req.kind {
                    asked.push((skill.clone(), tool.clone()));
                }
                client.send(Op::Approve {
                    id: req.id,
                    answer: ApprovalAnswer::Deny,
                });
            }
            Event::TurnComplete(done) => break done,
            _ => {}
        }
    };
    assert_eq!(done.stop, Some(StopKind::EndTurn), "{done:?}");

    // Only the valid, approved calls ran; the clash was renamed.
    assert_eq!(*calls.lock().unwrap(), ["remember:first", "read_file:mine"]);
    // The approval was asked as an event naming the owning skill.
    assert_eq!(asked, [("notes-mode".to_string(), "shred".to_string())]);
    // The events name the owning skill.
    let called: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall { skill, name, .. } => Some((skill.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert!(
        called.contains(&("notes-mode".to_string(), "remember".to_string())),
        "{called:?}"
    );

    // What the model was offered and told, and what it read back.
    let requests = server.requests();
    let first = &requests[0].body;
    let names: Vec<&str> = first["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for want in ["remember", "shred", "read_file", "notes-mode__read_file"] {
        assert!(names.contains(&want), "{want} not offered: {names:?}");
    }
    let system = first["system"].to_string();
    assert!(
        system.contains("Record every note with `remember`."),
        "{system}"
    );
    let last = &requests.last().expect("requests").body;
    assert_eq!(
        tool_result(last, "call_1"),
        Some(("recorded first".to_string(), false))
    );
    let (invalid, is_error) = tool_result(last, "call_2").expect("call_2 answered");
    assert!(
        is_error && invalid.starts_with("invalid input for `remember`"),
        "{invalid}"
    );
    let (refused, is_error) = tool_result(last, "call_3").expect("call_3 answered");
    assert!(
        is_error && refused.contains("tool `shred` was not run: not approved"),
        "{refused}"
    );
    assert_eq!(
        tool_result(last, "call_4"),
        Some(("recorded mine".to_string(), false))
    );
    client.send(Op::Shutdown);
}

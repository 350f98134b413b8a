//! Calls `llm`, `skills` and `syntax`, whose host side arrives with later
//! work: each must link and answer a clear error, never trap.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "tool-skill",
    generate_all,
});

use agent::skill::llm::{CompletionRequest, complete};
use agent::skill::types::{Message, Role, SkillError, ToolSpec};
use exports::agent::skill::tool::Guest;

struct Later;

impl Guest for Later {
    fn list_tools() -> Vec<ToolSpec> {
        ["llm", "invoke", "syntax"]
            .iter()
            .map(|name| ToolSpec {
                name: name.to_string(),
                description: format!("call the `{name}` import"),
                input_schema: r#"{"type":"object"}"#.to_string(),
                requires_approval: false,
            })
            .collect()
    }

    fn call_tool(name: String, _input: String) -> Result<String, SkillError> {
        let answer = match name.as_str() {
            "llm" => complete(&CompletionRequest {
                system: None,
                messages: vec![Message {
                    role: Role::User,
                    content: "hi".into(),
                }],
                max_tokens: None,
                temperature: None,
            })
            .map_err(|e| format!("{e:?}")),
            "invoke" => {
                agent::skill::skills::invoke("other", "tool", "{}").map_err(|e| format!("{e:?}"))
            }
            "syntax" => agent::skill::syntax::query("rust", "fn main() {}", "(function_item) @f")
                .map(|m| format!("{} matches", m.len()))
                .map_err(|e| format!("{e:?}")),
            other => return Err(SkillError::NotFound(other.to_string())),
        };
        Ok(match answer {
            Ok(v) => format!("ok: {v}"),
            Err(e) => format!("error: {e}"),
        })
    }
}

export!(Later);

//! Calls `llm`, `skills` and `syntax`, the imports whose host side came after the
//! first runtime: each must link and answer (a clear error when unavailable), never trap.
//!
//! `syntax` with input `{"language", "source", "query"}` runs that query and answers
//! the matches as JSON; with `{"languages": true}` it lists the languages; with no
//! input it runs a fixed Rust query.

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

    fn call_tool(name: String, input: String) -> Result<String, SkillError> {
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
            "syntax" => syntax(&input),
            other => return Err(SkillError::NotFound(other.to_string())),
        };
        Ok(match answer {
            Ok(v) => format!("ok: {v}"),
            Err(e) => format!("error: {e}"),
        })
    }
}

fn syntax(input: &str) -> Result<String, String> {
    use agent::skill::syntax;
    let input: serde_json::Value = serde_json::from_str(input).unwrap_or_default();
    if input.get("languages").is_some() {
        return Ok(serde_json::to_string(&syntax::languages()).unwrap_or_default());
    }
    let field = |k: &str| input.get(k).and_then(|v| v.as_str()).map(str::to_string);
    let (Some(language), Some(source), Some(query)) =
        (field("language"), field("source"), field("query"))
    else {
        return syntax::query("rust", "fn main() {}", "(function_item) @f")
            .map(|m| format!("{} matches", m.len()))
            .map_err(|e| format!("{e:?}"));
    };
    let matches = syntax::query(&language, &source, &query).map_err(|e| format!("{e:?}"))?;
    let json: Vec<serde_json::Value> = matches
        .iter()
        .map(|m| {
            serde_json::json!({
                "pattern": m.pattern,
                "captures": m.captures.iter().map(|c| serde_json::json!({
                    "name": c.name,
                    "text": c.text,
                    "start_byte": c.start_byte,
                    "end_byte": c.end_byte,
                    "start_line": c.start_line,
                    "start_column": c.start_column,
                    "end_line": c.end_line,
                    "end_column": c.end_column,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(serde_json::to_string(&json).unwrap_or_default())
}

export!(Later);

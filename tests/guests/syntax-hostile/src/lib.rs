//! A hostile skill against the `syntax` import, which needs no permission: every tool
//! builds a source and a query meant to cost the host time, memory or stack, runs it
//! once and answers `ok: <matches> matches, <bytes> bytes captured` or
//! `error: <the capability error>`.
//!
//! - `nested`: 96 nested Python lists around an 8 MiB string, query `(list) @l` (each
//!   match captures the whole 8 MiB again).
//! - `quantified`: `((_) @c . (_)* @d)` over a 240-line Python file.
//! - `deep-query`: a query of 100 000 nested parentheses (under the query size cap).
//! - `patterns`: a query of 5 000 patterns.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "tool-skill",
    generate_all,
});

use agent::skill::syntax;
use agent::skill::types::{SkillError, ToolSpec};
use exports::agent::skill::tool::Guest;

struct SyntaxHostile;

const TOOLS: [&str; 4] = ["nested", "quantified", "deep-query", "patterns"];

/// A 240-line Python file of ordinary statements.
fn lines_240() -> String {
    (0..240)
        .map(|i| format!("value_{i} = compute(a{i}, b{i}, [c, d, e], {{'k': {i}}})\n"))
        .collect()
}

fn case(name: &str) -> Option<(String, String)> {
    Some(match name {
        "nested" => {
            let mut source = String::with_capacity(8 * 1024 * 1024 + 256);
            source.push_str("x = ");
            source.push_str(&"[".repeat(96));
            source.push('"');
            source.push_str(&"a".repeat(8 * 1024 * 1024 - 300));
            source.push('"');
            source.push_str(&"]".repeat(96));
            source.push('\n');
            (source, "(list) @l".to_string())
        }
        "quantified" => (lines_240(), "((_) @c . (_)* @d)".to_string()),
        "deep-query" => (
            lines_240(),
            format!(
                "{}identifier{} @i",
                "(".repeat(100_000),
                ")".repeat(100_000)
            ),
        ),
        "patterns" => (lines_240(), "(identifier) @i\n".repeat(5000)),
        _ => return None,
    })
}

impl Guest for SyntaxHostile {
    fn list_tools() -> Vec<ToolSpec> {
        TOOLS
            .iter()
            .map(|name| ToolSpec {
                name: name.to_string(),
                description: format!("hostile syntax query `{name}`"),
                input_schema: r#"{"type":"object"}"#.to_string(),
                requires_approval: false,
            })
            .collect()
    }

    fn call_tool(name: String, _input: String) -> Result<String, SkillError> {
        let (source, query) = case(&name).ok_or_else(|| SkillError::NotFound(name.clone()))?;
        Ok(match syntax::query("python", &source, &query) {
            Ok(matches) => {
                let bytes: usize = matches
                    .iter()
                    .flat_map(|m| m.captures.iter())
                    .map(|c| c.text.len())
                    .sum();
                format!("ok: {} matches, {bytes} bytes captured", matches.len())
            }
            Err(e) => format!("error: {e:?}"),
        })
    }
}
export!(SyntaxHostile);

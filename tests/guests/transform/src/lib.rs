//! Test-only transform skill component: one component whose behaviour comes
//! entirely from its configuration section, so the CLI suite can load it
//! under several names (see `tests/cli/skills.rs`).
//!
//! Keys of the section (all optional), applied in this order:
//!
//! - `fail`: `true` returns a skill error (the output is left alone);
//! - `redact`: a string replaced with `[REDACTED]`;
//! - `upper`: `true` upper-cases the output;
//! - `append`: text appended on a new line (a footer);
//! - `tag`: `true` appends `[mode/format]` from the transform context.

use agent_skill_sdk::wit::tool_skill::agent::skill::types::SkillError;
use agent_skill_sdk::wit::transform_skill::exports::agent::skill::transform::{
    Guest, TransformContext,
};
use serde_json::{Map, Value};

struct Transform;

/// The configuration section as JSON (`{}` when absent or unreadable).
fn config() -> Value {
    serde_json::from_str(&agent_skill_sdk::config::all_json())
        .unwrap_or_else(|_| Value::Object(Map::new()))
}

fn flag(cfg: &Value, key: &str) -> bool {
    cfg.get(key).and_then(Value::as_bool).unwrap_or(false)
}

impl Guest for Transform {
    fn apply(output: String, context: TransformContext) -> Result<String, SkillError> {
        let cfg = config();
        if flag(&cfg, "fail") {
            return Err(SkillError::Failed("configured to fail".into()));
        }
        let mut out = output;
        if let Some(word) = cfg.get("redact").and_then(Value::as_str) {
            out = out.replace(word, "[REDACTED]");
        }
        if flag(&cfg, "upper") {
            out = out.to_uppercase();
        }
        if let Some(footer) = cfg.get("append").and_then(Value::as_str) {
            out = format!("{out}\n{footer}");
        }
        if flag(&cfg, "tag") {
            out = format!("{out} [{}/{}]", context.mode, context.format);
        }
        Ok(out)
    }
}

agent_skill_sdk::wit::transform_skill::export!(Transform);

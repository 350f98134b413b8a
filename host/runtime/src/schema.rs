//! The host's check of a tool call's input against the tool's JSON Schema,
//! before the guest sees it: the input is a JSON object, required
//! properties are present, declared properties have their declared type,
//! enums hold, and `additionalProperties: false` is honoured. Deeper rules
//! are the tool's own business.

use agent_bounded::Limits;
use serde_json::Value;

fn type_matches(ty: &str, v: &Value) -> bool {
    match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_i64().is_some() || v.as_u64().is_some(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        _ => true,
    }
}

fn check_type(schema: &Value, v: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => type_matches(t, v),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| type_matches(t, v)),
        _ => true,
    }
}

/// Checks `input` (JSON text) against `schema` (JSON text). Returns the
/// first problem, phrased for the model, naming the property.
pub fn check_input(schema: &str, input: &str) -> Result<(), String> {
    let input: Value =
        agent_bounded::parse_json(input, "input", Limits::MESSAGE).map_err(|e| match e {
            agent_bounded::Error::Limit(e) => format!("input refused: {}", e.reason()),
            agent_bounded::Error::Parse(e) => format!("input is not valid JSON: {e}"),
        })?;
    let Ok(schema) = agent_bounded::parse_json::<Value>(schema, "schema", Limits::MESSAGE) else {
        // A tool with an unreadable schema gets its input unchecked; `agent
        // skill test` reports the schema itself.
        return Ok(());
    };
    if !check_type(&schema, &input) {
        return Err(format!(
            "input must be of type {}",
            schema
                .get("type")
                .map(|t| t.to_string())
                .unwrap_or_default()
        ));
    }
    let Some(obj) = input.as_object() else {
        return Ok(());
    };
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !obj.contains_key(name) {
                return Err(format!("missing required property `{name}`"));
            }
        }
    }
    let props = schema.get("properties").and_then(Value::as_object);
    for (name, value) in obj {
        match props.and_then(|p| p.get(name)) {
            Some(prop) => {
                if !check_type(prop, value) {
                    return Err(format!(
                        "property `{name}` must be of type {}",
                        prop.get("type").map(|t| t.to_string()).unwrap_or_default()
                    ));
                }
                if let Some(allowed) = prop.get("enum").and_then(Value::as_array)
                    && !allowed.contains(value)
                {
                    return Err(format!(
                        "property `{name}` must be one of {}",
                        Value::Array(allowed.clone())
                    ));
                }
            }
            None => {
                if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
                    return Err(format!("unknown property `{name}`"));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"type":"object","properties":{"path":{"type":"string"},"n":{"type":"integer"},"mode":{"enum":["a","b"]}},"required":["path"],"additionalProperties":false}"#;

    #[test]
    fn accepts_valid_input() {
        assert_eq!(
            check_input(SCHEMA, r#"{"path":"x","n":3,"mode":"a"}"#),
            Ok(())
        );
    }

    #[test]
    fn names_the_problem() {
        assert_eq!(
            check_input(SCHEMA, "{}"),
            Err("missing required property `path`".into())
        );
        assert_eq!(
            check_input(SCHEMA, r#"{"path":1}"#),
            Err("property `path` must be of type \"string\"".into())
        );
        assert_eq!(
            check_input(SCHEMA, r#"{"path":"x","extra":1}"#),
            Err("unknown property `extra`".into())
        );
        assert!(check_input(SCHEMA, r#"{"path":"x","mode":"c"}"#).is_err());
        assert!(check_input(SCHEMA, "[1]").is_err());
        assert!(
            check_input(SCHEMA, "not json")
                .unwrap_err()
                .contains("not valid JSON")
        );
    }
}

//! Tool skills: typed tools registered in a [`Toolbox`], exported with
//! [`export_tools!`](crate::export_tools).
//!
//! Each tool has a name (`[a-z0-9_]+`), a description written for the model,
//! a JSON Schema (draft 2020-12) of its input object, and a handler that
//! takes the input decoded with serde. The host checks the input against the
//! schema before the call; the handler still gets a clear
//! [`ToolError::InvalidInput`] naming the field when the schema and the Rust
//! type disagree.

use std::fmt;

use serde::Serialize;
use serde::de::{Deserialize, DeserializeOwned, Deserializer, IgnoredAny};

use crate::ToolError;
use crate::types::ToolSpec;

/// The JSON Schema of a tool that takes no input: an empty object.
pub const NO_INPUT_SCHEMA: &str =
    r#"{"type":"object","properties":{},"additionalProperties":false}"#;

/// The input type of a tool that takes none; it accepts any JSON value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoInput;

impl<'de> Deserialize<'de> for NoInput {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(deserializer)?;
        Ok(NoInput)
    }
}

/// The boxed handler of a [`Tool`]: JSON input text in, output text out.
type Handler = Box<dyn Fn(&str) -> Result<String, ToolError>>;

/// One tool: its spec and its handler.
pub struct Tool {
    name: String,
    description: String,
    input_schema: String,
    requires_approval: bool,
    handler: Handler,
}

impl Tool {
    /// A tool named `name` described by `description`, whose input has the
    /// JSON Schema `input_schema` and is decoded into `I` for `handler`.
    ///
    /// It does not require approval; see [`Tool::requires_approval`].
    pub fn new<I, F>(name: &str, description: &str, input_schema: &str, handler: F) -> Self
    where
        I: DeserializeOwned,
        F: Fn(I) -> Result<String, ToolError> + 'static,
    {
        let tool_name = name.to_string();
        Tool {
            name: name.to_string(),
            description: description.to_string(),
            input_schema: input_schema.to_string(),
            requires_approval: false,
            handler: Box::new(move |json| handler(decode_input(&tool_name, json)?)),
        }
    }

    /// Whether the user must approve every call (the host asks before
    /// calling). Tools that change files or run programs should say `true`,
    /// as should the manifest's `requires_approval` for them.
    pub fn requires_approval(mut self, yes: bool) -> Self {
        self.requires_approval = yes;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's spec, as `list-tools` returns it.
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: self.description.clone(),
            input_schema: self.input_schema.clone(),
            requires_approval: self.requires_approval,
        }
    }

    /// Calls the handler with JSON input text.
    ///
    /// # Errors
    ///
    /// [`ToolError::InvalidInput`] when the input does not decode, or what the
    /// handler returns.
    pub fn call(&self, input: &str) -> Result<String, ToolError> {
        (self.handler)(input)
    }
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("requires_approval", &self.requires_approval)
            .finish_non_exhaustive()
    }
}

/// The tools of a skill.
///
/// # Example
///
/// ```
/// use agent_skill_sdk::{Tool, ToolError, Toolbox};
/// use serde::Deserialize;
///
/// #[derive(Deserialize)]
/// struct Echo {
///     text: String,
/// }
///
/// const ECHO: &str = r#"{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}"#;
///
/// let tools = Toolbox::new()
///     .tool("echo", "Repeat the text", ECHO, |i: Echo| Ok(i.text))
///     .add_tool(Tool::new("shout", "Repeat it loudly", ECHO, |i: Echo| Ok(i.text.to_uppercase()))
///         .requires_approval(true));
///
/// assert_eq!(tools.call("shout", r#"{"text":"hi"}"#), Ok("HI".to_string()));
/// assert!(matches!(tools.call("echo", "{}"), Err(ToolError::InvalidInput(m)) if m.contains("`text`")));
/// assert!(matches!(tools.call("nope", "{}"), Err(ToolError::NotFound(_))));
/// assert_eq!(tools.check(), Ok(()));
/// ```
#[derive(Debug, Default)]
pub struct Toolbox {
    tools: Vec<Tool>,
}

impl Toolbox {
    /// An empty toolbox.
    pub fn new() -> Self {
        Toolbox::default()
    }

    /// Adds a tool that needs no approval; see [`Tool::new`].
    pub fn tool<I, F>(self, name: &str, description: &str, input_schema: &str, handler: F) -> Self
    where
        I: DeserializeOwned,
        F: Fn(I) -> Result<String, ToolError> + 'static,
    {
        self.add_tool(Tool::new(name, description, input_schema, handler))
    }

    /// Adds a tool built with [`Tool::new`] (e.g. one that requires approval).
    pub fn add_tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// The tools, in the order they were added.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool named `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// Every tool's spec, as `list-tools` returns them.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(Tool::spec).collect()
    }

    /// Calls tool `name` with JSON input text.
    ///
    /// # Errors
    ///
    /// [`ToolError::NotFound`] when there is no such tool, otherwise as
    /// [`Tool::call`].
    pub fn call(&self, name: &str, input: &str) -> Result<String, ToolError> {
        match self.get(name) {
            Some(tool) => tool.call(input),
            None => {
                let names: Vec<&str> = self.tools.iter().map(|t| t.name.as_str()).collect();
                Err(ToolError::NotFound(format!(
                    "no tool named `{name}` in this skill (its tools: {})",
                    names.join(", ")
                )))
            }
        }
    }

    /// Checks what the host will check at load: tool names are
    /// `[a-z0-9_]+` and unique, descriptions are not empty, and each input
    /// schema is a JSON object describing an object. Call it from a unit
    /// test of the skill.
    ///
    /// # Errors
    ///
    /// Every problem found, one per line.
    pub fn check(&self) -> Result<(), String> {
        let mut problems = Vec::new();
        for (i, tool) in self.tools.iter().enumerate() {
            let name = &tool.name;
            let valid_name = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !valid_name {
                problems.push(format!("tool name `{name}` is not [a-z0-9_]+"));
            }
            if self.tools[..i].iter().any(|t| &t.name == name) {
                problems.push(format!("tool `{name}` is defined twice"));
            }
            if tool.description.trim().is_empty() {
                problems.push(format!("tool `{name}` has no description"));
            }
            match serde_json::from_str::<serde_json::Value>(&tool.input_schema) {
                Err(e) => problems.push(format!("tool `{name}`: input schema is not JSON: {e}")),
                Ok(serde_json::Value::Object(schema)) => {
                    if schema.get("type").and_then(|t| t.as_str()) != Some("object") {
                        problems.push(format!(
                            "tool `{name}`: input schema must have \"type\": \"object\""
                        ));
                    }
                }
                Ok(_) => problems.push(format!("tool `{name}`: input schema is not a JSON object")),
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\n"))
        }
    }
}

/// Serializes `value` as pretty JSON text, for tools that answer with JSON.
///
/// # Errors
///
/// [`ToolError::Failed`] when `value` cannot be serialized.
pub fn json<T: Serialize + ?Sized>(value: &T) -> Result<String, ToolError> {
    serde_json::to_string_pretty(value).map_err(|e| ToolError::Failed(format!("JSON output: {e}")))
}

/// Decodes a tool's JSON input into `I`, naming the field in the error.
fn decode_input<I: DeserializeOwned>(tool: &str, input: &str) -> Result<I, ToolError> {
    let input = if input.trim().is_empty() { "{}" } else { input };
    let value: serde_json::Value = serde_json::from_str(input).map_err(|e| {
        ToolError::InvalidInput(format!("input of tool `{tool}` is not valid JSON: {e}"))
    })?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ToolError::InvalidInput(format!("input of tool `{tool}`: {inner}"))
        } else {
            ToolError::InvalidInput(format!("input of tool `{tool}`, field `{path}`: {inner}"))
        }
    })
}

/// Support for [`export_tools!`](crate::export_tools); not public API.
#[doc(hidden)]
pub mod __export {
    use super::Toolbox;
    use crate::types::{SkillError, ToolSpec};

    /// `list-tools`.
    pub fn list(toolbox: &Toolbox) -> Vec<ToolSpec> {
        toolbox.specs()
    }

    /// `call-tool`.
    pub fn call(toolbox: &Toolbox, name: &str, input: &str) -> Result<String, SkillError> {
        toolbox.call(name, input).map_err(SkillError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize)]
    struct Range {
        path: String,
        start: Option<u32>,
    }

    const SCHEMA: &str = r#"{"type":"object","properties":{"path":{"type":"string"}}}"#;

    fn toolbox() -> Toolbox {
        Toolbox::new()
            .tool("range", "A range", SCHEMA, |r: Range| {
                Ok(format!("{}:{}", r.path, r.start.unwrap_or(1)))
            })
            .add_tool(
                Tool::new("none", "No input", NO_INPUT_SCHEMA, |_: NoInput| {
                    Ok("ok".into())
                })
                .requires_approval(true),
            )
    }

    #[test]
    fn calls_decode_the_input() {
        let t = toolbox();
        assert_eq!(
            t.call("range", r#"{"path":"a","start":3}"#),
            Ok("a:3".into())
        );
        assert_eq!(t.call("none", ""), Ok("ok".into()));
        assert_eq!(t.call("none", "{}"), Ok("ok".into()));
    }

    #[test]
    fn bad_input_names_the_field() {
        let t = toolbox();
        let e = t.call("range", r#"{"path":"a","start":"x"}"#);
        assert!(
            matches!(&e, Err(ToolError::InvalidInput(m)) if m.contains("field `start`")),
            "{e:?}"
        );
        let e = t.call("range", r#"{"start":1}"#);
        assert!(
            matches!(&e, Err(ToolError::InvalidInput(m)) if m.contains("missing field `path`")),
            "{e:?}"
        );
        let e = t.call("range", "{nope");
        assert!(
            matches!(&e, Err(ToolError::InvalidInput(m)) if m.contains("not valid JSON")),
            "{e:?}"
        );
    }

    #[test]
    fn unknown_tools_are_not_found() {
        let e = toolbox().call("other", "{}");
        assert!(
            matches!(&e, Err(ToolError::NotFound(m)) if m.contains("range, none")),
            "{e:?}"
        );
    }

    #[test]
    fn specs_carry_approval() {
        let specs = toolbox().specs();
        assert_eq!(specs.len(), 2);
        assert!(!specs[0].requires_approval);
        assert!(specs[1].requires_approval);
        assert_eq!(specs[1].input_schema, NO_INPUT_SCHEMA);
    }

    #[test]
    fn check_reports_every_problem() {
        let bad = Toolbox::new()
            .tool("Bad-Name", "", "[]", |_: NoInput| Ok(String::new()))
            .tool("dup", "x", r#"{"type":"string"}"#, |_: NoInput| {
                Ok(String::new())
            })
            .tool("dup", "x", "{", |_: NoInput| Ok(String::new()));
        let problems = bad.check().err().unwrap_or_default();
        assert!(problems.contains("`Bad-Name` is not"), "{problems}");
        assert!(
            problems.contains("`Bad-Name` has no description"),
            "{problems}"
        );
        assert!(problems.contains("not a JSON object"), "{problems}");
        assert!(
            problems.contains("must have \"type\": \"object\""),
            "{problems}"
        );
        assert!(problems.contains("defined twice"), "{problems}");
        assert!(problems.contains("not JSON"), "{problems}");
        assert_eq!(toolbox().check(), Ok(()));
    }
}

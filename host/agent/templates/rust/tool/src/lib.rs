//! {{name}}: a tool skill. `hello {name}` greets someone.

use agent_skill_sdk::{ToolError, Toolbox};
use serde::Deserialize;

#[derive(Deserialize)]
struct Hello {
    name: String,
}

fn hello(input: Hello) -> Result<String, ToolError> {
    match input.name.trim() {
        "" => Err(ToolError::invalid_input("`name` is empty")),
        name => Ok(format!("Hello, {name}!")),
    }
}

/// Every tool of this skill. Unknown tool names are answered with
/// `not-found` by the SDK.
fn tools() -> Toolbox {
    Toolbox::new().tool(
        "hello",
        "Greet someone by name.",
        include_str!("../schemas/hello.json"),
        hello,
    )
}

agent_skill_sdk::export_tools!(tools);

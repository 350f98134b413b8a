//! A tool skill that opens a raw TCP socket: it imports `wasi:sockets`,
//! which the host never links, so it must be refused at load.

wit_bindgen::generate!({
    path: "../../../wit",
    world: "tool-skill",
    generate_all,
});

use agent::skill::types::{SkillError, ToolSpec};
use exports::agent::skill::tool::Guest;

struct Sockets;

impl Guest for Sockets {
    fn list_tools() -> Vec<ToolSpec> {
        vec![ToolSpec {
            name: "connect".into(),
            description: "open a TCP connection".into(),
            input_schema: r#"{"type":"object"}"#.into(),
            requires_approval: false,
        }]
    }

    fn call_tool(_name: String, input: String) -> Result<String, SkillError> {
        std::net::TcpStream::connect(input.trim())
            .map(|_| "connected".to_string())
            .map_err(|e| SkillError::Failed(e.to_string()))
    }
}

export!(Sockets);

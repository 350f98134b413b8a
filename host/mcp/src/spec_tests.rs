//! `.mcp.json` and `${VAR}` expansion.

use std::path::Path;

use super::*;

fn dot(dir: &Path, text: &str) -> Result<Vec<ServerSpec>, McpError> {
    let file = dir.join(".mcp.json");
    std::fs::write(&file, text).expect("write");
    dot_mcp_json(&file)
}

#[test]
fn reads_stdio_and_http_servers_in_the_format_other_agents_use() {
    let dir = tempfile::tempdir().expect("dir");
    let specs = dot(
        dir.path(),
        r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server", "."], "env": {"T": "${TOKEN}"}},
            "web": {"type": "http", "url": "https://mcp.example.com:8443/mcp",
                    "headers": {"Authorization": "Bearer ${WEB}"}}
        }}"#,
    )
    .expect("parsed");
    assert_eq!(specs.len(), 2);
    assert_eq!(specs[0].name, "files");
    assert_eq!(specs[0].target(), "npx -y server .");
    assert_eq!(specs[0].allow_flag(), "mcp:files/shell:exec:npx");
    assert_eq!(
        specs[1].allow_flag(),
        "mcp:web/net:fetch:https://mcp.example.com:8443"
    );
    assert!(matches!(specs[1].source, Source::ProjectFile(_)));
}

#[test]
fn a_missing_file_is_no_servers_and_a_bad_one_names_file_and_line() {
    let dir = tempfile::tempdir().expect("dir");
    assert!(
        dot_mcp_json(&dir.path().join(".mcp.json"))
            .expect("none")
            .is_empty()
    );
    let e = dot(
        dir.path(),
        "{\n\"mcpServers\": {\n\"x\": {\"command\": 3}}}",
    )
    .expect_err("bad")
    .to_string();
    assert!(e.contains(".mcp.json: line 3"), "{e}");
    let e = dot(dir.path(), r#"{"mcpServers": {"x": {"args": []}}}"#)
        .expect_err("no command")
        .to_string();
    assert!(e.contains("mcpServers.x: give `command`"), "{e}");
    let e = dot(dir.path(), r#"{"mcpServers": {"a b": {"command": "x"}}}"#)
        .expect_err("bad name")
        .to_string();
    assert!(e.contains("invalid MCP server name `a b`"), "{e}");
    let e = dot(
        dir.path(),
        r#"{"mcpServers": {"old": {"type": "sse", "url": "http://h/sse"}}}"#,
    )
    .expect_err("sse")
    .to_string();
    assert!(e.contains("legacy SSE transport is not supported"), "{e}");
}

#[test]
fn expand_reads_only_the_named_variables() {
    let env = |k: &str| (k == "A").then(|| "1".to_string());
    assert_eq!(expand("x${A}y${A}", &env).expect("ok"), "x1y1");
    assert_eq!(expand("plain", &env).expect("ok"), "plain");
    assert_eq!(
        expand("${B}", &env).expect_err("unset"),
        "the variable B is not set"
    );
    assert!(
        expand("${A", &env)
            .expect_err("open")
            .contains("without a closing")
    );
    assert!(
        expand("${1x}", &env)
            .expect_err("name")
            .contains("not a variable name")
    );
}

#[test]
fn config_toml_wins_a_name_clash_with_mcp_json() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(
        dir.path().join(".mcp.json"),
        r#"{"mcpServers": {"same": {"command": "from-json"}, "other": {"command": "o"}}}"#,
    )
    .expect("write");
    let mut config = agent_config::McpConfig::default();
    config.servers.insert(
        "same".into(),
        agent_config::McpServerConfig {
            command: Some("from-config".into()),
            ..Default::default()
        },
    );
    let specs = servers(&config, dir.path()).expect("servers");
    let names: Vec<(&str, String)> = specs
        .iter()
        .map(|s| (s.name.as_str(), s.target()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("same", "from-config".to_string()),
            ("other", "o".to_string())
        ]
    );
}

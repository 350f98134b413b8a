//! Where `agent run` gets the provider's API key (issue 15, item 3): the
//! environment variable, `provider.<name>.api_key_file` (refused when group
//! or others can read it) or `provider.<name>.api_key_command`. Before, the
//! missing-key error said to "give the key in the configuration", and every
//! key the configuration could hold was refused. A plaintext `api_key` is
//! still refused, naming the three ways. The model server on 127.0.0.1 shows
//! which key each request carried.

use std::path::Path;

use agent_tests::Sandbox;
use agent_tests::model_server::{ModelServer, Wire, tokio_rt};

use super::sandbox;

struct Outcome {
    code: i32,
    stderr: String,
    /// The key header of each request the model server received.
    keys: Vec<String>,
}

/// `agent run --prompt hi` with `config` as config.toml and no key variable.
fn run(sb: &Sandbox, wire: Wire, config: &str) -> Outcome {
    let file = sb.paths().config_file();
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    std::fs::write(&file, config).expect("config");
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![wire.answer("Hello.")]))
        .expect("server");
    let out = sb
        .agent_cmd(&[
            "run",
            "--provider",
            wire.name(),
            "--model",
            "test-model",
            "--base-url",
            server.url(),
            "--prompt",
            "hi",
        ])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("agent");
    let keys = server
        .requests()
        .iter()
        .map(|r| {
            r.header("x-api-key")
                .or_else(|| r.header("authorization"))
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        keys,
    }
}

#[cfg(unix)]
fn key_file(dir: &Path, mode: u32) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("anthropic.key");
    std::fs::write(&path, "sk-from-file\n").expect("key");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    path.display().to_string()
}

#[cfg(unix)]
#[test]
fn a_key_file_readable_by_its_owner_only_is_used_and_a_more_open_one_refused() {
    let sb = sandbox();
    let keys = tempfile::tempdir().expect("dir");
    let path = key_file(keys.path(), 0o600);
    let config = format!("[provider.anthropic]\napi_key_file = \"{path}\"\n");
    let r = run(&sb, Wire::Anthropic, &config);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.keys, vec!["sk-from-file".to_string()]);

    let path = key_file(keys.path(), 0o644);
    let r = run(&sb, Wire::Anthropic, &config);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!(
            "provider.anthropic.api_key_file {path} can be read by other users (mode 644); \
             run `chmod 600 {path}`"
        )),
        "{}",
        r.stderr
    );
    assert!(r.keys.is_empty(), "no request without a key");
}

#[test]
fn a_key_command_is_run_and_its_failure_names_the_key() {
    let sb = sandbox();
    let r = run(
        &sb,
        Wire::OpenAi,
        "[provider.openai]\napi_key_command = \"echo '  sk-from-command  '\"\n",
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.keys, vec!["Bearer sk-from-command".to_string()]);

    let r = run(
        &sb,
        Wire::Anthropic,
        "[provider.anthropic]\napi_key_command = \"echo vault is sealed >&2; exit 3\"\n",
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "provider.anthropic.api_key_command `echo vault is sealed >&2; exit 3` failed \
             (exit status: 3): vault is sealed"
        ),
        "{}",
        r.stderr
    );
    let r = run(
        &sb,
        Wire::Anthropic,
        "[provider.anthropic]\napi_key_command = \"true\"\n",
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "provider.anthropic.api_key_command `true` printed nothing; it must print the API key"
        ),
        "{}",
        r.stderr
    );
    assert!(r.keys.is_empty());
}

#[test]
fn the_environment_variable_comes_first() {
    let sb = sandbox();
    let file = sb.paths().config_file();
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    std::fs::write(
        &file,
        "[provider.anthropic]\napi_key_command = \"echo sk-from-command\"\n",
    )
    .expect("config");
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![Wire::Anthropic.answer("Hello.")]))
        .expect("server");
    let out = sb
        .agent_cmd(&["run", "--base-url", server.url(), "--prompt", "hi"])
        .env("ANTHROPIC_API_KEY", "sk-from-env")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("agent");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        server.requests()[0].header("x-api-key"),
        Some("sk-from-env")
    );
}

#[test]
fn without_a_key_the_error_lists_exactly_the_ways_that_work() {
    let sb = sandbox();
    let r = run(&sb, Wire::Anthropic, "");
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "error: provider: no API key for anthropic: set the ANTHROPIC_API_KEY environment \
             variable, or in config.toml under [provider.anthropic] set api_key_file = \"PATH\" \
             (a file only you can read: chmod 600) or api_key_command = \"COMMAND\" (prints the key)"
        ),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("give the key in the configuration"));
    let r = run(&sb, Wire::OpenAi, "");
    assert!(
        r.stderr
            .contains("no API key for openai: set the OPENAI_API_KEY environment variable"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_plaintext_key_in_the_config_is_refused_naming_the_three_ways() {
    let sb = sandbox();
    let r = run(
        &sb,
        Wire::Anthropic,
        "[provider.anthropic]\napi_key = \"sk-plain\"\n",
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains(
            "config.toml:2: provider.anthropic.api_key: a key in plain text is not accepted in \
             config.toml; set the ANTHROPIC_API_KEY environment variable, or in config.toml under \
             [provider.anthropic] set api_key_file = \"PATH\""
        ),
        "{}",
        r.stderr
    );
    assert!(r.keys.is_empty());
}

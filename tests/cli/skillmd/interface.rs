//! `/NAME ARGS` typed in the interface (the real binary in tmux): the skill's body, with
//! `$ARGUMENTS` substituted, joins that turn's system prompt.

use std::time::Duration;

use agent_tests::copy_tree;
use agent_tests::model_server::{ModelServer, Wire, tokio_rt};

use super::super::sandbox;
use super::super::tui::Tmux;
use super::fixtures;

#[test]
fn skillmd_slash_name_loads_the_body_into_that_turn() {
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Wire::Anthropic.answer("plain loaded, docs"),
        ]))
        .expect("server");
    let sb = sandbox();
    copy_tree(
        &fixtures().join("plain"),
        &sb.project.path().join(".agent/skills/plain"),
    );
    let long = Duration::from_secs(60);
    let tmux = Tmux::agent("agent-skillmd-slash", &sb, server.url(), long);
    tmux.keys(&["-l", "/plain the docs"]);
    tmux.keys(&["Enter"]);
    tmux.wait_for("plain loaded, docs", long)
        .unwrap_or_else(|s| panic!("no answer:\n{s}"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let system = reqs[0].body["system"].to_string();
    assert!(
        system.contains("Skill `plain` (invoked by the user with /plain)"),
        "{system}"
    );
    assert!(
        system.contains("PLAIN-BODY-MARKER: say \\\"plain loaded\\\" and the docs."),
        "{system}"
    );
    tmux.keys(&["-l", "/quit"]);
    tmux.keys(&["Enter"]);
    assert!(tmux.wait_dead(long), "{}", tmux.screen());
}

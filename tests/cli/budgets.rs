//! Budgets through `agent run`: `skills.max_llm_calls_per_skill` from
//! config.toml is applied to a skill's model requests per model turn, the
//! next turn starts a new budget, and the uses are reported. The skill is the
//! hostile `tests/guests/budget` (`llm-loop` asks the model N times).

use agent_tests::model_server::{Wire, jsonl as events};
use agent_tests::{Sandbox, guest_bytes, tool_manifest, write_skill};
use serde_json::json;

use super::skills::{Server, run_agent};
use super::{ok, sandbox};

fn spender(sb: &Sandbox) {
    write_skill(
        &sb.project.path().join(".agent/skills/spender"),
        &tool_manifest(
            "spender",
            "permissions: [llm:call, shell:exec, net:fetch]\nhosts: [\"http://127.0.0.1:9\"]\n",
        ),
        &guest_bytes("guest-budget"),
        None,
    );
    let config = sb.paths().config_file();
    std::fs::create_dir_all(config.parent().expect("config dir")).expect("mkdir");
    std::fs::write(&config, "[skills]\nmax_llm_calls_per_skill = 2\n").expect("config");
}

#[test]
fn the_configured_model_budget_holds_per_turn_and_is_reported() {
    let wire = Wire::Anthropic;
    let sb = sandbox();
    spender(&sb);
    // Before: the key was never read; the third request of the first turn
    // reached the model (and took the reply meant for the loop).
    let server = Server::start(vec![
        wire.tool("call_1", "llm-loop", &json!({"times": 3})),
        wire.answer("one"),
        wire.answer("two"),
        wire.tool("call_2", "llm-loop", &json!({"times": 2})),
        wire.answer("three"),
        wire.answer("four"),
        wire.answer("Done."),
    ]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--prompt",
            "Spend",
            "--skills",
            "spender",
            "--allow",
            "spender/llm:call",
            "--verbose",
        ],
    );
    let stdout = ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let results: Vec<String> = events(&stdout)
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["output"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        results,
        vec![
            "ok=2 refused=1 last=limit exceeded: skill `spender` has used its budget of 2 model \
             requests this turn (raise `skills.max_llm_calls_per_skill` in config.toml)"
                .to_string(),
            "ok=2 refused=0 last=".to_string(),
        ],
        "{stdout}\n{stderr}"
    );
    assert_eq!(
        server.bodies().len(),
        7,
        "loop turns and exactly the budget"
    );
    assert!(
        stderr.contains(
            "skill uses: spender: 4 model requests, 0 programs, 0 HTTP requests (1 refused: budget spent)"
        ),
        "{stderr}"
    );
    let audit = std::fs::read_to_string(sb.paths().audit_log_path()).expect("audit");
    assert_eq!(
        audit
            .lines()
            .filter(|l| l.contains("\"skill\":\"spender\"")
                && l.contains("\"decision\":\"refused: budget spent\""))
            .count(),
        1,
        "{audit}"
    );
}

/// `skills.max_shell_exec_per_skill` from config.toml holds for a skill's
/// programs (issue 15, item 2: every budget key takes effect).
#[test]
fn the_configured_program_budget_holds() {
    let sb = sandbox();
    spender(&sb);
    std::fs::write(
        sb.paths().config_file(),
        "[skills]\nmax_shell_exec_per_skill = 2\n",
    )
    .expect("config");
    let out = sb.agent(&[
        "skill",
        "call",
        "spender",
        "exec-loop",
        "--input",
        r#"{"times": 3, "program": "true"}"#,
        "--allow",
        "spender/shell:exec",
        "--allow-unsigned",
    ]);
    let stdout = ok(&out);
    assert!(
        stdout.contains(
            "ok=2 refused=1 last=limit exceeded: skill `spender` has used its budget of 2 \
             programs this turn (raise `skills.max_shell_exec_per_skill` in config.toml)"
        ),
        "{stdout}"
    );
}

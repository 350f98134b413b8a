//! Skills in the agent loop, end to end: the real `agent run` binary, the
//! scripted model server, and real components (`guest-hooks`,
//! `guest-prompt`, `guest-transform`) or component-less skills laid out in
//! the project's `.agent/skills/` and loaded with `--allow-unsigned`; each
//! skill's behaviour comes from `[skills.config.<name>]` in `config.toml`.

use std::path::Path;

use agent_tests::model_server::{ModelServer, Reply, Wire, jsonl as events, tokio_rt};
use agent_tests::{Sandbox, build_guest, text, write_skill};
use serde_json::{Value, json};

use super::{code, ok, sandbox, write};

// ---------------------------------------------------------------------------
// Driving `agent run` (a small copy of the helpers of `run.rs`).

/// A scripted model server with its own runtime (dropped with it).
pub(crate) struct Server {
    server: ModelServer,
    _rt: tokio::runtime::Runtime,
}

impl Server {
    pub(crate) fn start(script: Vec<Reply>) -> Server {
        let rt = tokio_rt();
        let server = rt.block_on(ModelServer::start(script)).expect("server");
        Server { server, _rt: rt }
    }

    /// The recorded request bodies.
    pub(crate) fn bodies(&self) -> Vec<Value> {
        self.server.requests().into_iter().map(|r| r.body).collect()
    }
}

/// `agent run --allow-unsigned` against `server`, `--output jsonl` unless
/// `extra` gives an `--output`.
pub(crate) fn run_agent(
    sb: &Sandbox,
    wire: Wire,
    server: &Server,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "run",
        "--allow-unsigned",
        "--provider",
        wire.name(),
        "--model",
        "test-model",
        "--base-url",
        server.server.url(),
        "--timeout",
        "120s",
    ];
    if !extra.contains(&"--output") {
        args.extend_from_slice(&["--output", "jsonl"]);
    }
    args.extend_from_slice(extra);
    sb.agent_cmd(&args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("OPENAI_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent")
}

fn of_type<'a>(evs: &'a [Value], ty: &str) -> Vec<&'a Value> {
    evs.iter().filter(|e| e["type"] == ty).collect()
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

/// The system prompt of a request, whatever the wire.
pub(crate) fn system(body: &Value) -> String {
    match &body["system"] {
        Value::String(s) => return s.clone(),
        Value::Array(blocks) => {
            return blocks
                .iter()
                .map(|b| str_of(b, "text"))
                .collect::<Vec<_>>()
                .join("\n");
        }
        _ => {}
    }
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "system")
        .map(|m| str_of(m, "content").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tool names a request offers, sorted, whatever the wire.
fn offered(body: &Value) -> Vec<String> {
    let mut names: Vec<String> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            t["name"]
                .as_str()
                .or_else(|| t["function"]["name"].as_str())
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------
// Laying out skills and their configuration.

/// `[skills.config.<name>]` tables in the sandbox's `config.toml`.
fn configure(sb: &Sandbox, sections: &[(&str, Value)]) {
    let mut out = String::new();
    for (name, cfg) in sections {
        out.push_str(&format!("[skills.config.\"{name}\"]\n"));
        for (k, v) in cfg.as_object().expect("a config section is an object") {
            out.push_str(&format!("{k} = {}\n", toml_value(v)));
        }
        out.push('\n');
    }
    let path = sb.paths().config_file();
    std::fs::create_dir_all(path.parent().expect("config dir")).expect("mkdir");
    std::fs::write(path, out).expect("write config.toml");
}

/// A JSON value as a TOML inline value (JSON strings are valid TOML basic
/// strings for the text used here).
fn toml_value(v: &Value) -> String {
    match v {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => format!(
            "{{ {} }}",
            map.iter()
                .map(|(k, v)| format!("{k} = {}", toml_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

fn skill_dir(sb: &Sandbox, name: &str) -> std::path::PathBuf {
    sb.project.path().join(".agent/skills").join(name)
}

/// The hooks component under `name` (a `prompt` skill whose prompt is a
/// file, as in tests/suite/hooks.rs — the form from before the `hook` type,
/// which still loads), unsigned.
fn hook_skill(sb: &Sandbox, name: &str) {
    let component = std::fs::read(build_guest("guest-hooks")).expect("guest-hooks");
    let dir = skill_dir(sb, name);
    let manifest = format!(
        "name: {name}\nversion: 0.1.0\ndescription: hook skill {name}\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\nimplementation:\n  component: skill.wasm\n"
    );
    write_skill(&dir, &manifest, &component, None);
    write(&dir, "PROMPT.md", &format!("Hook test skill {name}.\n"));
}

/// The transform component under `name`, unsigned.
fn transform_skill(sb: &Sandbox, name: &str) {
    let component = std::fs::read(build_guest("guest-transform")).expect("guest-transform");
    let manifest = format!(
        "name: {name}\nversion: 0.1.0\ndescription: transform skill {name}\ntypes: [transform]\nimplementation:\n  component: skill.wasm\n"
    );
    write_skill(&skill_dir(sb, name), &manifest, &component, None);
}

/// A component-less prompt skill: `PROMPT.md` and `rest` of the manifest.
fn prompt_only_skill(sb: &Sandbox, name: &str, rest: &str, prompt: &str) {
    let dir = skill_dir(sb, name);
    write(
        &dir,
        "SKILL.yaml",
        &format!(
            "name: {name}\nversion: 0.1.0\ndescription: prompt skill {name}\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\n{rest}"
        ),
    );
    write(&dir, "PROMPT.md", prompt);
}

fn read(root: &Path, rel: &str) -> Option<String> {
    std::fs::read_to_string(root.join(rel)).ok()
}

// ---------------------------------------------------------------------------
// Hooks.

#[test]
fn a_hook_cancels_exec_and_the_command_does_not_run() {
    let wire = Wire::Anthropic;
    let sb = sandbox();
    hook_skill(&sb, "no-exec");
    configure(
        &sb,
        &[(
            "no-exec",
            json!({"phases": ["on_before_tool_call"], "cancel_tools": ["exec"], "cancel_reason": "no shell today"}),
        )],
    );
    let server = Server::start(vec![
        wire.tool(
            "call_x",
            "exec",
            &json!({"program": "touch", "args": ["ran.txt"]}),
        ),
        wire.answer("Could not run it."),
    ]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--prompt",
            "Create ran.txt",
            "--allow",
            "core-tools/shell:exec:touch",
        ],
    );
    let stdout = ok(&out);
    let evs = events(&stdout);
    assert!(
        !sb.project.path().join("ran.txt").exists(),
        "the cancelled command ran"
    );
    let activated = of_type(&evs, "activated");
    assert!(
        activated.iter().any(|e| e["skill"] == "no-exec"),
        "{activated:?}"
    );
    let refused = of_type(&evs, "refused");
    assert_eq!(refused.len(), 1, "{stdout}");
    assert_eq!(refused[0]["by"], "hook:no-exec", "{}", refused[0]);
    assert_eq!(refused[0]["tool"], "exec");
    assert_eq!(refused[0]["id"], "call_x");
    let result = of_type(&evs, "tool_result")[0];
    assert_eq!(result["is_error"], true, "{result}");
    assert_eq!(
        str_of(result, "output"),
        "cancelled by hook `no-exec`: no shell today"
    );
    // The model was told.
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies[1]
            .to_string()
            .contains("cancelled by hook `no-exec`: no shell today"),
        "{}",
        bodies[1]
    );
    let last = evs.last().expect("events");
    assert_eq!(last["type"], "final");
    assert_eq!(last["text"], "Could not run it.");
}

#[test]
fn two_hooks_rewrite_tool_input_in_priority_order() {
    let wire = Wire::OpenAi;
    let sb = sandbox();
    // Named against their priority, so name order would give the wrong trail.
    hook_skill(&sb, "a-second");
    hook_skill(&sb, "b-first");
    configure(
        &sb,
        &[
            (
                "a-second",
                json!({"phases": ["on_before_tool_call"], "priority": 20, "append_input": {"field": "content", "text": "+second"}}),
            ),
            (
                "b-first",
                json!({"phases": ["on_before_tool_call"], "priority": 10, "append_input": {"field": "content", "text": "+first"}}),
            ),
        ],
    );
    let server = Server::start(vec![
        wire.tool(
            "call_w",
            "write_file",
            &json!({"path": "out.txt", "content": "base"}),
        ),
        wire.answer("Written."),
    ]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &["--prompt", "Write out.txt", "--allow", "file:write"],
    );
    let stdout = ok(&out);
    assert_eq!(
        read(sb.project.path(), "out.txt").as_deref(),
        Some("base+first+second"),
        "{stdout}"
    );
    let evs = events(&stdout);
    let hooks: Vec<(&str, &str)> = of_type(&evs, "hook")
        .into_iter()
        .filter(|e| e["phase"] == "on_before_tool_call")
        .map(|e| (str_of(e, "skill"), str_of(e, "change")))
        .collect();
    assert_eq!(
        hooks.iter().map(|h| h.0).collect::<Vec<_>>(),
        ["b-first", "a-second"],
        "{hooks:?}"
    );
    // The event shows what the model asked for; the hooks changed what ran.
    let call = of_type(&evs, "tool_call")[0];
    assert_eq!(call["input"]["content"], "base");
    let result = of_type(&evs, "tool_result")[0];
    assert_eq!(result["is_error"], false, "{result}");
}

#[test]
fn a_hook_redacts_tool_results_and_responses() {
    let wire = Wire::Ollama;
    let sb = sandbox();
    write(sb.project.path(), "creds.txt", "token: SECRET-42\n");
    hook_skill(&sb, "redactor");
    configure(
        &sb,
        &[(
            "redactor",
            json!({"phases": ["on_after_tool_result", "on_after_response"], "redact": "SECRET"}),
        )],
    );
    let script = || {
        vec![
            wire.tool("call_r", "read_file", &json!({"path": "creds.txt"})),
            wire.answer("The token is SECRET-42."),
        ]
    };
    let server = Server::start(script());
    let out = run_agent(
        &sb,
        wire,
        &server,
        &["--prompt", "What is in creds.txt?", "--allow", "file:read"],
    );
    let stdout = ok(&out);
    let evs = events(&stdout);
    let result = of_type(&evs, "tool_result")[0];
    let output = str_of(result, "output");
    assert!(output.contains("token: [REDACTED]-42"), "{result}");
    assert!(!output.contains("SECRET"), "{result}");
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    let follow_up = bodies[1].to_string();
    assert!(follow_up.contains("[REDACTED]-42"), "{follow_up}");
    assert!(!follow_up.contains("SECRET"), "{follow_up}");
    let last = evs.last().expect("events");
    assert_eq!(last["type"], "final");
    assert_eq!(last["text"], "The token is [REDACTED]-42.");
    // Nothing on stdout carries the secret: not the streamed text either.
    assert!(!stdout.contains("SECRET"), "{stdout}");
    let changes: Vec<&str> = of_type(&evs, "hook")
        .into_iter()
        .map(|e| str_of(e, "phase"))
        .collect();
    assert!(changes.contains(&"on_after_tool_result"), "{changes:?}");
    assert!(changes.contains(&"on_after_response"), "{changes:?}");

    // In text output only the rewritten answer is printed.
    let server = Server::start(script());
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--prompt",
            "What is in creds.txt?",
            "--allow",
            "file:read",
            "--output",
            "text",
        ],
    );
    let stdout = ok(&out);
    assert!(!stdout.contains("SECRET"), "{stdout:?}");
    // Only the rewritten answer, with no blank line for the earlier turn
    // that printed nothing.
    assert_eq!(stdout, "The token is [REDACTED]-42.\n", "{stdout:?}");
}

#[test]
fn a_hook_injects_text_into_the_system_prompt() {
    let wire = Wire::Anthropic;
    let sb = sandbox();
    hook_skill(&sb, "style");
    configure(
        &sb,
        &[(
            "style",
            json!({"phases": ["on_before_prompt_build"], "inject": "Always answer in haiku."}),
        )],
    );
    let server = Server::start(vec![wire.answer("Old pond, frog jumps in.")]);
    let out = run_agent(&sb, wire, &server, &["--prompt", "Say hello"]);
    let stdout = ok(&out);
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 1);
    let sys = system(&bodies[0]);
    assert!(sys.contains("Always answer in haiku."), "{sys}");
    // The skill's own prompt file is there too.
    assert!(sys.contains("## Skill: style"), "{sys}");
    let evs = events(&stdout);
    let hook = of_type(&evs, "hook");
    assert!(
        hook.iter()
            .any(|e| e["skill"] == "style" && e["phase"] == "on_before_prompt_build"),
        "{hook:?}"
    );
}

// ---------------------------------------------------------------------------
// Prompt skills.

#[test]
fn prompt_skills_activate_on_keywords_and_files_within_their_budget() {
    let wire = Wire::OpenAi;
    let sb = sandbox();
    // guest-prompt, keyword-triggered, with a small budget.
    let component = std::fs::read(build_guest("guest-prompt")).expect("guest-prompt");
    let dir = skill_dir(&sb, "guided");
    write_skill(
        &dir,
        "name: guided\nversion: 1.0.0\ndescription: test prompt component\ntypes: [prompt]\nimplementation:\n  component: skill.wasm\nprompt:\n  system_prompt_file: PROMPT.md\n  max_context_tokens: 200\ntriggers:\n  keywords: [review]\n",
        &component,
        None,
    );
    write(&dir, "PROMPT.md", "Always follow the house rules.\n");
    // Component-less, file-triggered.
    prompt_only_skill(
        &sb,
        "terraform",
        "triggers:\n  files: [\"*.tf\"]\n",
        "Run terraform fmt before answering.\n",
    );
    write(
        sb.project.path(),
        "infra/main.tf",
        "resource \"x\" \"y\" {}\n",
    );

    // The keyword is in the message: both skills.
    let server = Server::start(vec![wire.answer("Reviewed.")]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &["--prompt", "Please REVIEW the parser", "--verbose"],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    let sys = system(&server.bodies()[0]);
    assert!(sys.contains("## Skill: guided"), "{sys}");
    assert!(sys.contains("Always follow the house rules."), "{sys}");
    assert!(sys.contains("The user asked about \"review\"."), "{sys}");
    assert!(sys.contains("Reference line 001"), "{sys}");
    assert!(
        sys.contains("[trimmed to this skill's budget of 200 tokens]"),
        "{sys}"
    );
    assert!(!sys.contains("Appendix"), "{sys}");
    assert!(sys.contains("## Skill: terraform"), "{sys}");
    assert!(sys.contains("Run terraform fmt before answering."), "{sys}");
    let evs = events(&stdout);
    let reasons: Vec<(&str, &str)> = of_type(&evs, "activated")
        .into_iter()
        .map(|e| (str_of(e, "skill"), str_of(e, "reason")))
        .collect();
    assert!(
        reasons.contains(&("guided", "keyword `review` in the message")),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&("terraform", "file pattern `*.tf` matched `infra/main.tf`")),
        "{reasons:?}"
    );
    assert!(stderr.contains("skills active in this run:"), "{stderr}");
    assert!(
        stderr.contains("guided: keyword `review` in the message"),
        "{stderr}"
    );
    assert!(
        stderr.contains("terraform: file pattern `*.tf` matched `infra/main.tf`"),
        "{stderr}"
    );
    assert!(stderr.contains("prompt skill guided:"), "{stderr}");
    assert!(stderr.contains("of 200 tokens"), "{stderr}");
    assert!(stderr.contains("trimmed:"), "{stderr}");

    // Without the keyword: only the file-triggered skill.
    let server = Server::start(vec![wire.answer("Hello.")]);
    let out = run_agent(&sb, wire, &server, &["--prompt", "Say hello"]);
    let stdout = ok(&out);
    let sys = system(&server.bodies()[0]);
    assert!(!sys.contains("## Skill: guided"), "{sys}");
    assert!(!sys.contains("house rules"), "{sys}");
    assert!(sys.contains("## Skill: terraform"), "{sys}");
    let evs = events(&stdout);
    assert!(
        !of_type(&evs, "activated")
            .iter()
            .any(|e| e["skill"] == "guided"),
        "{stdout}"
    );
}

// ---------------------------------------------------------------------------
// Constraints: the design's §4.1 CodeReviewSkill and §4.2 SecurityPolicySkill.

fn code_review_and_security_policy(sb: &Sandbox) {
    prompt_only_skill(
        sb,
        "code-review",
        "triggers:\n  keywords: [review, code review, analyze code, inspect, audit code]\nconstraints:\n  priority: 10\n  allowed_tools: [read_file, search, list_dir, exec]\n  forbidden_tools: [write_file, edit]\n  max_steps: 5\n  context:\n    review_mode: \"true\"\n    focus_areas: \"security, performance, maintainability\"\n",
        "Enforce code review best practices; analyse, never modify.\n",
    );
    prompt_only_skill(
        sb,
        "security-policy",
        "constraints:\n  priority: 100\n  forbidden_tools: [exec]\n  max_duration: 5m\n",
        "Never run high-risk tools.\n",
    );
}

#[test]
fn constraints_of_code_review_and_security_policy_merge_in_the_loop() {
    let wire = Wire::Anthropic;
    let sb = sandbox();
    code_review_and_security_policy(&sb);
    let server = Server::start(vec![
        wire.tool(
            "call_x",
            "exec",
            &json!({"program": "touch", "args": ["ran.txt"]}),
        ),
        wire.answer("Review done without running anything."),
    ]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &[
            "--prompt",
            "Please review src/lib.rs",
            "--allow",
            "file:read",
            "--allow",
            "core-tools/shell:exec:touch",
            "--verbose",
            // The design's code-review skill takes the built-in's name.
            "--allow-shadow",
            "code-review",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    assert!(!sb.project.path().join("ran.txt").exists());
    let evs = events(&stdout);
    let reasons: Vec<(&str, &str)> = of_type(&evs, "activated")
        .into_iter()
        .map(|e| (str_of(e, "skill"), str_of(e, "reason")))
        .collect();
    assert!(
        reasons.contains(&("code-review", "keyword `review` in the message")),
        "{reasons:?}"
    );
    assert!(
        reasons.contains(&("security-policy", "always active (no triggers)")),
        "{reasons:?}"
    );

    // Offered: the allow list minus the forbidden exec.
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    for b in &bodies {
        assert_eq!(offered(b), ["list_dir", "read_file", "search"], "{b}");
    }

    // The model's exec call anyway: refused, deny overrides allow.
    let refused = of_type(&evs, "refused");
    assert_eq!(refused.len(), 1, "{stdout}");
    assert_eq!(refused[0]["by"], "constraints");
    assert_eq!(refused[0]["tool"], "exec");
    let reason = str_of(refused[0], "reason");
    assert!(
        reason.starts_with("tool `exec` is forbidden by skill `security-policy` (priority 100)"),
        "{reason}"
    );
    assert!(reason.contains("`code-review`"), "{reason}");
    assert!(reason.contains("deny overrides allow"), "{reason}");
    let result = of_type(&evs, "tool_result")[0];
    assert_eq!(result["is_error"], true);
    assert_eq!(str_of(result, "output"), format!("refused: {reason}"));
    assert!(
        bodies[1].to_string().contains("refused: tool `exec`"),
        "{}",
        bodies[1]
    );

    // The context values, in the system prompt.
    let sys = system(&bodies[0]);
    assert!(sys.contains("## Context from active skills"), "{sys}");
    assert!(sys.contains("- review_mode: true"), "{sys}");
    assert!(
        sys.contains("- focus_areas: security, performance, maintainability"),
        "{sys}"
    );
    assert!(sys.contains("## Skill: code-review"), "{sys}");
    assert!(sys.contains("## Skill: security-policy"), "{sys}");

    // --verbose: the merge and its reasons.
    assert!(stderr.contains("constraints:"), "{stderr}");
    assert!(
        stderr.contains("code-review: keyword `review` in the message"),
        "{stderr}"
    );
    assert!(
        stderr.contains("security-policy: always active (no triggers)"),
        "{stderr}"
    );
    for want in [
        "skills in order of precedence: `security-policy` (priority 100), `code-review` (priority 10)",
        "allowed tools = `code-review`: exec, list_dir, read_file, search",
        "tool `exec` is allowed by `code-review` but forbidden by `security-policy` (priority 100): deny overrides allow",
        "tool `read_file` is allowed: listed by skill `code-review` (priority 10)",
        "tool `write_file` is forbidden by skill `code-review` (priority 10)",
        "tool `exec` is forbidden by skill `security-policy` (priority 100)",
        "max steps = 5 (minimum), set by skill `code-review` (priority 10)",
        "max duration = 300s (minimum), set by skill `security-policy` (priority 100)",
        "context `review_mode` = `true`, set by skill `code-review` (priority 10)",
        "context `focus_areas` = `security, performance, maintainability`, set by skill `code-review` (priority 10)",
    ] {
        assert!(stderr.contains(want), "missing {want:?} in:\n{stderr}");
    }
}

#[test]
fn max_steps_of_a_skill_caps_the_run_with_exit_5() {
    let wire = Wire::Ollama;
    let sb = sandbox();
    write(sb.project.path(), "notes.txt", "hello\n");
    prompt_only_skill(
        &sb,
        "short-leash",
        "constraints:\n  max_steps: 2\n",
        "Be quick.\n",
    );
    let read = || wire.tool("call_r", "read_file", &json!({"path": "notes.txt"}));
    let server = Server::start(vec![read(), read(), read(), wire.answer("Never reached.")]);
    let out = run_agent(
        &sb,
        wire,
        &server,
        &["--prompt", "Read it", "--allow", "file:read"],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 5, "{stdout}\n{stderr}");
    assert_eq!(server.bodies().len(), 2, "two turns only");
    let evs = events(&stdout);
    let last = evs.last().expect("events");
    assert_eq!(last["type"], "final");
    assert_eq!(last["stop"], "max_turns");
    assert_eq!(last["turns"], 2);
    // The message names the effective limit: the skill's `max_steps`.
    assert!(
        stderr.contains("stopped: the turn limit (2) was reached"),
        "{stderr}"
    );
}

// ---------------------------------------------------------------------------
// Transforms.

#[test]
fn a_transform_rewrites_the_final_answer_in_every_output() {
    let wire = Wire::OpenAi;
    let sb = sandbox();
    transform_skill(&sb, "footer");
    configure(
        &sb,
        &[("footer", json!({"append": "-- checked", "tag": true}))],
    );
    let answer = "The answer is 42.";
    let expected = |format: &str| format!("{answer}\n-- checked [headless/{format}]");

    // jsonl: a `transformed` event, and the final event carries the result.
    let server = Server::start(vec![wire.answer(answer)]);
    let stdout = ok(&run_agent(&sb, wire, &server, &["--prompt", "Answer"]));
    let evs = events(&stdout);
    let transformed = of_type(&evs, "transformed");
    assert_eq!(transformed.len(), 1, "{stdout}");
    assert_eq!(transformed[0]["skill"], "footer");
    let last = evs.last().expect("events");
    assert_eq!(last["type"], "final");
    assert_eq!(last["text"], expected("jsonl"));

    // text: only the transformed text.
    let server = Server::start(vec![wire.answer(answer)]);
    let stdout = ok(&run_agent(
        &sb,
        wire,
        &server,
        &["--prompt", "Answer", "--output", "text"],
    ));
    assert_eq!(stdout, format!("{}\n", expected("text")), "{stdout:?}");

    // json: the text field.
    let server = Server::start(vec![wire.answer(answer)]);
    let stdout = ok(&run_agent(
        &sb,
        wire,
        &server,
        &["--prompt", "Answer", "--output", "json"],
    ));
    let v: Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(v["text"], expected("json"), "{v}");
}

#[test]
fn transforms_apply_in_order_and_a_failing_one_is_skipped_with_a_warning() {
    let wire = Wire::Anthropic;
    let sb = sandbox();
    // Activation order: dependencies first, then by name.
    transform_skill(&sb, "a-upper");
    transform_skill(&sb, "b-broken");
    transform_skill(&sb, "c-footer");
    configure(
        &sb,
        &[
            ("a-upper", json!({"upper": true})),
            ("b-broken", json!({"fail": true, "append": "never"})),
            ("c-footer", json!({"append": "footer"})),
        ],
    );
    let server = Server::start(vec![wire.answer("quiet answer")]);
    let out = run_agent(&sb, wire, &server, &["--prompt", "Answer", "--verbose"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "{stdout}\n{stderr}");
    let evs = events(&stdout);
    let applied: Vec<&str> = of_type(&evs, "transformed")
        .into_iter()
        .map(|e| str_of(e, "skill"))
        .collect();
    assert_eq!(applied, ["a-upper", "c-footer"], "{stdout}");
    let warnings: Vec<&str> = of_type(&evs, "warning")
        .into_iter()
        .map(|e| str_of(e, "message"))
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("transform `b-broken` failed") && w.contains("configured to fail")),
        "{warnings:?}"
    );
    let last = evs.last().expect("events");
    assert_eq!(last["type"], "final");
    // Upper-cased first, then the footer (which stays lower case).
    assert_eq!(last["text"], "QUIET ANSWER\nfooter");
    assert!(
        stderr.contains("warning: transform `b-broken` failed"),
        "{stderr}"
    );
    for t in [
        "transform: a-upper",
        "transform: b-broken",
        "transform: c-footer",
    ] {
        assert!(stderr.contains(t), "{stderr}");
    }
}

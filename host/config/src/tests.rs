use super::*;

const SPEC: &str = r#"
[provider]
default = "anthropic"
model = "claude-sonnet-4-5"

[provider.anthropic]
api_key_source = "env"

[provider.openai]
base_url = "https://api.openai.com/v1"
api_key_source = "env"

[provider.ollama]
base_url = "http://localhost:11434"

[agent]
max_turns = 50
approval_mode = "prompt"
context_budget = 100000

[security]
fail_on = "high"
custom_rules = ".security.yaml"
enable_llm_analysis = true
max_llm_calls = 7

[skills]
auto_approve = ["core-tools", "git"]
user_skills_dir = "~/.config/aiagent/skills"
registry_url = "https://github.com/aiagent-skills/registry"
max_llm_calls_per_skill = 5
max_shell_exec_per_skill = 10
skill_shell_timeout = "30s"

[skills.config.kubernetes]
default_namespace = "production"
kubeconfig_path = "~/.kube/config"

[skills.config.i18n-output]
language = "ja"
"#;

fn no_env(_: &str) -> Option<String> {
    None
}

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("/x/config.toml"), no_env)
}

fn bad(text: &str) -> (usize, String, String) {
    match parse(text) {
        Err(e @ ConfigError::Invalid { .. }) => {
            let shown = e.to_string();
            let ConfigError::Invalid { line, key, .. } = e else {
                unreachable!()
            };
            (line, key, shown)
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn the_spec_example_parses() {
    let c = Config::parse(SPEC, Path::new("c.toml"), |k| {
        (k == "HOME").then(|| "/home/u".to_string())
    })
    .unwrap();
    assert_eq!(c.provider.default, ProviderKind::Anthropic);
    assert_eq!(c.provider.effective_model(), "claude-sonnet-4-5");
    assert_eq!(c.agent.max_turns, 50);
    assert_eq!(c.agent.context_budget, 100_000);
    assert_eq!(c.security.fail_on, Severity::High);
    assert!(c.security.enable_llm_analysis);
    assert_eq!(c.security.max_llm_calls, 7);
    assert_eq!(c.skills.auto_approve, vec!["core-tools", "git"]);
    assert_eq!(
        c.skills.user_skills_dir.as_deref(),
        Some(Path::new("/home/u/.config/aiagent/skills"))
    );
    assert_eq!(c.skills.skill_shell_timeout, Duration::from_secs(30));
    assert_eq!(
        c.skills.config["kubernetes"],
        serde_json::json!({"default_namespace": "production", "kubeconfig_path": "~/.kube/config"})
    );
    assert_eq!(c.skills.config["i18n-output"]["language"], "ja");
    // Round trip of the JSON view through TOML text.
    let text = toml::to_string(&c.to_json()).unwrap();
    assert!(text.contains("max_turns = 50"), "{text}");
}

#[test]
fn defaults_and_missing_file() {
    let c = Config::load(Path::new("/nonexistent/dir/config.toml"), no_env).unwrap();
    assert_eq!(c, Config::default());
    assert_eq!(c.agent.max_turns, 50);
    assert_eq!(c.agent.approval_mode, ApprovalMode::Prompt);
    assert_eq!(c.agent.timeout, Duration::from_secs(600));
    assert_eq!(c.provider.ollama.base_url, "http://localhost:11434");
    assert!(c.skills.auto_approve.is_empty());
    assert!(c.skills.config.is_empty());
    assert_eq!(parse("").unwrap(), Config::default());
}

#[test]
fn bad_values_name_key_and_line() {
    let (line, key, shown) = bad("[agent]\nmax_turns = 0\n");
    assert_eq!((line, key.as_str()), (2, "agent.max_turns"));
    assert!(
        shown.starts_with("/x/config.toml:2: agent.max_turns: "),
        "{shown}"
    );
    assert!(shown.contains("greater than 0"), "{shown}");

    let cases: &[(&str, usize, &str, &str)] = &[
        (
            "[agent]\n\napproval_mode = \"yolo\"",
            3,
            "agent.approval_mode",
            "\"prompt\"",
        ),
        (
            "[agent]\ntimeout = \"5 minutes\"",
            2,
            "agent.timeout",
            "duration",
        ),
        ("[agent]\ntimeout = 0", 2, "agent.timeout", "duration"),
        (
            "[agent]\ncontext_budget = -1",
            2,
            "agent.context_budget",
            "greater than 0",
        ),
        (
            "[agent]\nmax_turns = \"ten\"",
            2,
            "agent.max_turns",
            "found string",
        ),
        ("[agent]\nmax_turn = 3", 2, "agent.max_turn", "unknown key"),
        ("[agnt]\n", 1, "agnt", "unknown key"),
        (
            "[provider]\ndefault = \"gemini\"",
            2,
            "provider.default",
            "\"ollama\"",
        ),
        (
            "[provider.anthropic]\napi_key_source = \"keyring\"",
            2,
            "provider.anthropic.api_key_source",
            "use \"env\"",
        ),
        (
            "[provider.openai]\nbase_url = \"ftp://x\"",
            2,
            "provider.openai.base_url",
            "http",
        ),
        (
            "[security]\nfail_on = \"severe\"",
            2,
            "security.fail_on",
            "\"critical\"",
        ),
        (
            "[security]\nenable_llm_analysis = \"yes\"",
            2,
            "security.enable_llm_analysis",
            "expected true or false, found string",
        ),
        (
            "[security]\nmax_llm_calls = 0",
            2,
            "security.max_llm_calls",
            "found 0",
        ),
        (
            "[skills]\nauto_approve = \"git\"",
            2,
            "skills.auto_approve",
            "array",
        ),
        (
            "[skills]\nauto_approve = [\"git\", 3]",
            2,
            "skills.auto_approve",
            "strings",
        ),
        (
            "[skills]\nskill_shell_timeout = \"30\"",
            2,
            "skills.skill_shell_timeout",
            "duration",
        ),
        (
            "[skills.config]\nkubernetes = 3",
            2,
            "skills.config.kubernetes",
            "table",
        ),
        // `[wiki]` is real now (`agent wiki`): a bad value names its line and key.
        (
            "[agent]\nmax_turns = 3\n\n[wiki]\nformat = \"pdf\"",
            5,
            "wiki.format",
            "expected one of \"raw-md\", \"mkdocs\", \"hugo\", \"docusaurus\", found \"pdf\"",
        ),
        (
            "[wiki]\ndepth = \"standard\"\nmax_llm_calls = 0",
            3,
            "wiki.max_llm_calls",
            "at most",
        ),
        (
            "[wiki]\ntheme = \"dark\"",
            2,
            "wiki.theme",
            "unknown key; expected one of: format, diagrams, depth, output, max_llm_calls",
        ),
    ];
    for (text, line, key, needle) in cases {
        let (l, k, shown) = bad(text);
        assert_eq!((l, k.as_str()), (*line, *key), "{text}: {shown}");
        assert!(shown.contains(needle), "{text}: {shown}");
    }
}

#[test]
fn syntax_errors_give_the_line() {
    match parse("[agent]\nmax_turns = = 3\n") {
        Err(e @ ConfigError::Syntax { line: 2, .. }) => {
            assert!(e.to_string().starts_with("/x/config.toml:2:"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn env_overrides_apply_and_bad_values_name_the_variable() {
    let dir = std::env::temp_dir().join(format!("agent-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("config.toml");
    std::fs::write(
        &file,
        "[agent]\nmax_turns = 7\n[provider]\ndefault = \"openai\"\n",
    )
    .unwrap();
    let vars = [
        ("AGENT_PROVIDER", "ollama"),
        ("AGENT_MODEL", "qwen3"),
        ("AGENT_MAX_TURNS", "9"),
        ("AGENT_APPROVAL_MODE", "deny"),
        ("AGENT_CONTEXT_BUDGET", "2000"),
        ("ANTHROPIC_BASE_URL", "https://proxy.example/"),
        ("OPENAI_BASE_URL", "http://localhost:8080/v1"),
        ("OLLAMA_HOST", "gpu-box:11434"),
    ];
    let env = |k: &str| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    };
    let c = Config::load(&file, env).unwrap();
    assert_eq!(c.provider.default, ProviderKind::Ollama);
    assert_eq!(c.provider.effective_model(), "qwen3");
    assert_eq!(c.agent.max_turns, 9);
    assert_eq!(c.agent.approval_mode, ApprovalMode::Deny);
    assert_eq!(c.agent.context_budget, 2000);
    assert_eq!(c.provider.anthropic.base_url, "https://proxy.example");
    assert_eq!(c.provider.openai.base_url, "http://localhost:8080/v1");
    assert_eq!(c.provider.ollama.base_url, "http://gpu-box:11434");

    // File only; the provider's default model follows the provider.
    let c = Config::load(&file, no_env).unwrap();
    assert_eq!(
        (c.agent.max_turns, c.provider.effective_model()),
        (7, "gpt-4o")
    );

    // OLLAMA_BASE_URL wins over OLLAMA_HOST; empty variables are ignored.
    let env = |k: &str| match k {
        "OLLAMA_BASE_URL" => Some("https://o.example".to_string()),
        "OLLAMA_HOST" => Some("ignored:1".to_string()),
        "AGENT_MAX_TURNS" => Some(String::new()),
        _ => None,
    };
    let c = Config::load(&file, env).unwrap();
    assert_eq!(c.provider.ollama.base_url, "https://o.example");
    assert_eq!(c.agent.max_turns, 7);

    for (var, value) in [
        ("AGENT_MAX_TURNS", "0"),
        ("AGENT_MAX_TURNS", "many"),
        ("AGENT_PROVIDER", "gemini"),
        ("AGENT_APPROVAL_MODE", "yes"),
        ("AGENT_CONTEXT_BUDGET", "-5"),
        ("ANTHROPIC_BASE_URL", "api.anthropic.com"),
    ] {
        let err = Config::load(&file, |k: &str| (k == var).then(|| value.to_string())).unwrap_err();
        assert!(
            matches!(&err, ConfigError::Env { var: v, .. } if v == var),
            "{err}"
        );
        assert!(err.to_string().contains(var), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn durations() {
    assert_eq!(parse_duration("120s"), Ok(Duration::from_secs(120)));
    assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
    assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
    assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    assert!(parse_duration("0s").is_err());
    assert!(parse_duration("5").is_err());
    assert!(parse_duration("s").is_err());
    assert_eq!(format_duration(Duration::from_secs(600)), "10m");
    assert_eq!(format_duration(Duration::from_secs(30)), "30s");
    assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
}

#[test]
fn registry_sources() {
    for ok in [
        "git+https://example.com/index.git",
        "git+https://example.com/index#v2",
        "git+file:///tmp/index",
        "git://127.0.0.1:9418/index",
        "https://example.com/index",
        "http://127.0.0.1:8080/index",
        "http://localhost/index",
        "file:///srv/index",
        "/srv/index",
        "./index",
        "index",
    ] {
        assert_eq!(check_registry_source(ok).as_deref(), Ok(ok), "{ok}");
        let c = parse(&format!("[skills]\nregistry_url = \"{ok}\"\n")).unwrap();
        assert_eq!(c.skills.registry_url, ok);
    }
    for bad_value in [
        "http://example.com/index",
        "ftp://x/y",
        "git+",
        "git+nothing",
        "",
    ] {
        assert!(check_registry_source(bad_value).is_err(), "{bad_value}");
    }
    let (line, key, shown) = bad("[skills]\nregistry_url = \"http://example.com/i\"\n");
    assert_eq!((line, key.as_str()), (2, "skills.registry_url"));
    assert!(
        shown.contains("127.0.0.1") && shown.contains("git+URL"),
        "{shown}"
    );
}

#[test]
fn budgets_and_allowed_shadows_are_read_and_checked() {
    let c = parse(
        "[skills]\nallow_shadow = [\"core-tools\"]\nmax_llm_calls_per_turn = 7\n\
         max_shell_exec_per_turn = 8\nmax_http_requests_per_skill = 2\nmax_http_requests_per_turn = 0\n",
    )
    .unwrap();
    assert_eq!(c.skills.allow_shadow, vec!["core-tools"]);
    assert_eq!(
        (
            c.skills.max_llm_calls_per_skill,
            c.skills.max_llm_calls_per_turn,
            c.skills.max_shell_exec_per_turn,
            c.skills.max_http_requests_per_skill,
            c.skills.max_http_requests_per_turn,
        ),
        (5, 7, 8, 2, 0)
    );
    let d = Config::default().skills;
    assert_eq!(
        (
            d.max_llm_calls_per_turn,
            d.max_shell_exec_per_turn,
            d.max_http_requests_per_skill,
            d.max_http_requests_per_turn
        ),
        (20, 40, 20, 60)
    );
    let (line, key, shown) = bad("[skills]\n\nallow_shadow = [\"Core Tools\"]\n");
    assert_eq!((line, key.as_str()), (3, "skills.allow_shadow"));
    assert!(
        shown.contains("expected an array of skill names") && shown.contains("\"Core Tools\""),
        "{shown}"
    );
    let (_, key, _) = bad("[skills]\nmax_llm_calls_per_turn = -1\n");
    assert_eq!(key, "skills.max_llm_calls_per_turn");
}

#[test]
fn api_key_file_and_command_are_read_and_a_plaintext_key_is_refused() {
    let c = Config::parse(
        "[provider.anthropic]\napi_key_file = \"~/k/anthropic.key\"\n\n[provider.openai]\napi_key_command = \"pass show openai\"\n",
        Path::new("c.toml"),
        |k| (k == "HOME").then(|| "/home/u".to_string()),
    )
    .unwrap();
    assert_eq!(
        c.provider.anthropic.api_key_file.as_deref(),
        Some(Path::new("/home/u/k/anthropic.key"))
    );
    assert_eq!(
        c.provider.openai.api_key_command.as_deref(),
        Some("pass show openai")
    );
    assert_eq!(
        c.to_json()["provider"]["openai"]["api_key_command"],
        "pass show openai"
    );
    let (line, key, shown) = bad("[provider.openai]\napi_key = \"sk-1\"");
    assert_eq!((line, key.as_str()), (2, "provider.openai.api_key"));
    assert!(
        shown.contains("a key in plain text is not accepted"),
        "{shown}"
    );
    assert!(shown.contains("OPENAI_API_KEY"), "{shown}");
    // Ollama needs no key; the variable comes first.
    assert_eq!(c.api_key(ProviderKind::Ollama, no_env), Ok(None));
    assert_eq!(
        c.api_key(ProviderKind::OpenAi, |k| (k == "OPENAI_API_KEY")
            .then(|| " sk-env ".into())),
        Ok(Some("sk-env".into()))
    );
}

#[test]
fn the_wiki_section_of_appendix_b_takes_effect() {
    let c = parse(
        "[wiki]\nformat = \"mkdocs\"\ndiagrams = \"dot\"\ndepth = \"quick\"\noutput = \"site/wiki\"\nmax_llm_calls = 9\n",
    )
    .unwrap();
    assert_eq!(c.wiki.format, WikiFormat::Mkdocs);
    assert_eq!(c.wiki.diagrams, DiagramFormat::Dot);
    assert_eq!(c.wiki.depth, WikiDepth::Quick);
    assert_eq!(c.wiki.output, Path::new("site/wiki"));
    assert_eq!(c.wiki.max_llm_calls, 9);
    assert_eq!(parse("").unwrap().wiki, WikiConfig::default());
}

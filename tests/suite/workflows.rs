//! Workflow skills for real: the `workflow` export, `skills.invoke` through
//! the core's [`Invoker`] (the callee's own grants, schema checks, the
//! approval gate, skill constraints, the depth limit) and the `llm` import
//! through [`ProviderLlm`] over a loopback model server.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use agent_core::{ApprovalGate, Invoker, ProviderLlm};
use agent_policy::{AllowList, AuditLog, Constraints, Grants, SkillConstraint, merge};
use agent_providers::{AnthropicProvider, ProviderConfig};
use agent_runtime::{
    CallContext, GrantsAuthorizer, Limits, LlmBackend, Origin, Runtime, Skill, SkillError,
    SkillPackage, TrustPolicy,
};
use agent_tests::model_server::{ModelServer, Reply, anthropic_sse};
use agent_tests::{Sandbox, write_skill};
use agent_trust::{SecretKey, TrustStore};
use serde_json::{Value, json};

use crate::common::{guest, shared_cache, skill_error_text};

/// The approval gate of a test: a fixed answer, and what it was asked.
struct Gate {
    yes: bool,
    asked: Mutex<Vec<(String, String)>>,
}

impl Gate {
    fn new(yes: bool) -> Arc<Gate> {
        Arc::new(Gate {
            yes,
            asked: Mutex::new(Vec::new()),
        })
    }

    fn asked(&self) -> Vec<(String, String)> {
        self.asked.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl ApprovalGate for Gate {
    fn approve_tool(&self, skill: &str, tool: &str, _input_json: &str) -> bool {
        self.asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((skill.to_string(), tool.to_string()));
        self.yes
    }
    fn refusal(&self) -> String {
        "the test's gate refuses".into()
    }
}

/// A sandbox with the built-in core-tools and copies of the workflow
/// component, the real runtime and the real non-interactive grants.
struct World {
    sandbox: Sandbox,
    runtime: Arc<Runtime>,
    skills: Arc<Vec<Skill>>,
    authorizer: Arc<GrantsAuthorizer>,
}

/// The manifest of a copy of the workflow component.
fn workflow_manifest(name: &str) -> String {
    format!(
        "name: {name}\nversion: 0.1.0\ndescription: test workflows {name}\ntypes: [workflow]\n\
         implementation:\n  component: skill.wasm\npermissions: [skill:invoke, llm:call]\n"
    )
}

/// The built-in core-tools, as the binary loads it.
fn core_tools() -> SkillPackage {
    agent_tests::builtin_package("core-tools", Origin::Builtin)
}

impl World {
    /// Loads core-tools and one copy of the workflow component per name in
    /// `workflows`, granting `allow` (`--allow` values).
    fn new(workflows: &[&str], allow: &[&str]) -> World {
        let sandbox = Sandbox::new();
        sandbox.paths().ensure_dirs().expect("agent dirs");
        let key: SecretKey = sandbox.trusted_key();
        let trust = TrustPolicy {
            store: TrustStore::load(&sandbox.paths().trusted_keys_dir()).expect("trust store"),
            builtin_key: Some(agent_builtins::public_key().expect("built-in key")),
            allow_unsigned: false,
        };
        let runtime =
            Arc::new(Runtime::new(Some(shared_cache()), Limits::default()).expect("runtime"));
        let mut skills = vec![
            runtime
                .load(core_tools(), &trust)
                .expect("core-tools loads"),
        ];
        let component = guest("guest-workflow");
        for name in workflows {
            let dir = sandbox.home.path().join("skill-src").join(name);
            write_skill(&dir, &workflow_manifest(name), &component, Some(&key));
            let pkg = SkillPackage::from_dir(&dir, Origin::Path).expect("package");
            skills.push(runtime.load(pkg, &trust).expect("the workflow skill loads"));
        }
        let audit = Arc::new(AuditLog::open(sandbox.paths().audit_log_path()).expect("audit log"));
        let allow = AllowList::from_flags(allow.iter().copied()).expect("--allow values");
        let grants = Arc::new(Grants::non_interactive(allow, audit));
        World {
            sandbox,
            runtime,
            skills: Arc::new(skills),
            authorizer: Arc::new(GrantsAuthorizer::new(grants)),
        }
    }

    fn skill(&self, name: &str) -> &Skill {
        self.skills
            .iter()
            .find(|s| s.name() == name)
            .unwrap_or_else(|| panic!("skill {name} not loaded"))
    }

    fn project(&self) -> &Path {
        self.sandbox.project.path()
    }

    fn invoker(&self, gate: Arc<Gate>) -> Arc<Invoker> {
        Arc::new(Invoker::new(
            self.runtime.clone(),
            self.skills.clone(),
            gate,
        ))
    }

    /// A top-level context with `llm` and `invoker`.
    fn ctx(
        &self,
        llm: Option<Arc<dyn LlmBackend>>,
        invoker: Option<Arc<Invoker>>,
    ) -> Arc<CallContext> {
        let mut ctx =
            CallContext::new(self.project(), "cli", self.authorizer.clone()).expect("context");
        ctx.llm = llm;
        ctx.invoker = invoker.map(|i| i as Arc<dyn agent_runtime::SkillInvoker>);
        Arc::new(ctx)
    }

    async fn run(
        &self,
        ctx: &Arc<CallContext>,
        skill: &str,
        workflow: &str,
        input: &Value,
    ) -> Result<String, SkillError> {
        let (result, _logs) = self
            .runtime
            .run_workflow(self.skill(skill), ctx, workflow, &input.to_string())
            .await
            .unwrap_or_else(|e| panic!("host error running {skill}/{workflow}: {e}"));
        result.map(|out| out.text)
    }

    async fn run_ok(
        &self,
        ctx: &Arc<CallContext>,
        skill: &str,
        workflow: &str,
        input: &Value,
    ) -> Value {
        let text = self
            .run(ctx, skill, workflow, input)
            .await
            .unwrap_or_else(|e| panic!("{skill}/{workflow} should succeed, got {e:?}"));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    async fn run_err(
        &self,
        ctx: &Arc<CallContext>,
        skill: &str,
        workflow: &str,
        input: &Value,
    ) -> SkillError {
        match self.run(ctx, skill, workflow, input).await {
            Err(e) => e,
            Ok(out) => panic!("{skill}/{workflow} should fail, got {out}"),
        }
    }

    /// The audit entries of `skill` as `(capability, target, decision)`.
    fn audit_of(&self, skill: &str) -> Vec<(String, String, String)> {
        let path = self.sandbox.paths().audit_log_path();
        AuditLog::verify(&path).expect("the audit log verifies");
        AuditLog::entries(&path)
            .expect("audit entries")
            .into_iter()
            .filter(|e| e.skill == skill)
            .map(|e| (e.capability, e.target, e.decision))
            .collect()
    }
}

fn answer(text: &str) -> Reply {
    Reply::sse(anthropic_sse(&[
        json!({"type": "message_start", "message": {"usage": {"input_tokens": 50, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 12}}),
        json!({"type": "message_stop"}),
    ]))
}

fn provider_llm(server: &ModelServer) -> Arc<ProviderLlm> {
    let provider = AnthropicProvider::new(
        ProviderConfig::anthropic("claude-test")
            .base_url(server.url())
            .api_key("sk-ant-test"),
    )
    .expect("provider");
    Arc::new(ProviderLlm::new(Arc::new(provider), "claude-test", 1024))
}

fn message(e: &SkillError) -> String {
    skill_error_text(e).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn count_words_is_listed_and_runs() {
    let w = World::new(&["wf"], &[]);
    let ctx = w.ctx(None, None);
    let specs = w
        .runtime
        .list_workflows(w.skill("wf"), &ctx)
        .await
        .expect("list");
    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["summarize_file", "count_words", "invoke"]);
    let schema: Value = serde_json::from_str(&specs[1].input_schema).expect("schema is JSON");
    assert_eq!(schema["required"], json!(["text"]));

    let out = w
        .run_ok(
            &ctx,
            "wf",
            "count_words",
            &json!({"text": "one two  three\nfour"}),
        )
        .await;
    assert_eq!(out, json!({"words": 4}));

    // The guest validates its own input.
    let e = w
        .run_err(&ctx, "wf", "count_words", &json!({"text": 3}))
        .await;
    assert!(matches!(e, SkillError::InvalidInput(_)), "{e:?}");
    assert!(message(&e).contains("`text` must be a string"), "{e:?}");
    let (result, _) = w
        .runtime
        .run_workflow(w.skill("wf"), &ctx, "count_words", "not json")
        .await
        .expect("no host error");
    let e = result.expect_err("not JSON");
    assert!(message(&e).contains("JSON"), "{e:?}");
    let e = w.run_err(&ctx, "wf", "nope", &json!({})).await;
    assert!(matches!(e, SkillError::NotFound(_)), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summarize_file_reads_through_core_tools_and_asks_the_model() {
    let server = ModelServer::start(vec![answer("  A greeting to the world.  ")])
        .await
        .expect("server");
    let w = World::new(&["wf"], &["wf/skill:invoke", "wf/llm:call", "file:read"]);
    std::fs::write(
        w.project().join("notes.txt"),
        "hello world\nsecond line of notes\n",
    )
    .expect("write");
    let llm = provider_llm(&server);
    let usage = llm.usage();
    let gate = Gate::new(false);
    let ctx = w.ctx(Some(llm), Some(w.invoker(gate.clone())));
    let out = w
        .run_ok(&ctx, "wf", "summarize_file", &json!({"path": "notes.txt"}))
        .await;
    assert_eq!(out["path"], "notes.txt", "{out}");
    assert_eq!(out["summary"], "A greeting to the world.", "{out}");
    assert!(out["lines"].as_u64().is_some_and(|n| n >= 2), "{out}");

    // One model request, carrying the file's text (read by core-tools).
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    let body = reqs[0].body.to_string();
    assert!(body.contains("Summarise this file in one line."), "{body}");
    assert!(body.contains("hello world"), "{body}");
    assert!(body.contains("second line of notes"), "{body}");
    assert_eq!(reqs[0].body["model"], "claude-test");
    assert_eq!(usage.requests.load(Ordering::Relaxed), 1);
    assert_eq!(usage.input_tokens.load(Ordering::Relaxed), 50);
    assert_eq!(usage.output_tokens.load(Ordering::Relaxed), 12);
    // read_file needs no approval.
    assert!(gate.asked().is_empty(), "{:?}", gate.asked());

    // Audited: the invoke and the model call, as uses of `wf`.
    let audit = w.audit_of("wf");
    assert!(
        audit.iter().any(|(c, t, d)| c == "skill:invoke"
            && t == "skills.invoke(core-tools, read_file)"
            && d == "ok"),
        "{audit:?}"
    );
    assert!(
        audit
            .iter()
            .any(|(c, t, d)| c == "llm:call" && t == "llm.complete" && d == "ok"),
        "{audit:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_and_llm_need_their_grants() {
    let server = ModelServer::start(vec![answer("unused")])
        .await
        .expect("server");
    // No skill:invoke.
    let w = World::new(&["wf"], &["wf/llm:call", "file:read"]);
    std::fs::write(w.project().join("notes.txt"), "hello\n").expect("write");
    let ctx = w.ctx(
        Some(provider_llm(&server)),
        Some(w.invoker(Gate::new(true))),
    );
    let e = w
        .run_err(&ctx, "wf", "summarize_file", &json!({"path": "notes.txt"}))
        .await;
    assert!(matches!(e, SkillError::Denied(_)), "{e:?}");
    assert!(message(&e).contains("--allow wf/skill:invoke"), "{e:?}");

    // skill:invoke but no llm:call: the file is read, the model is not asked.
    let w = World::new(&["wf"], &["wf/skill:invoke", "file:read"]);
    std::fs::write(w.project().join("notes.txt"), "hello\n").expect("write");
    let ctx = w.ctx(
        Some(provider_llm(&server)),
        Some(w.invoker(Gate::new(true))),
    );
    let e = w
        .run_err(&ctx, "wf", "summarize_file", &json!({"path": "notes.txt"}))
        .await;
    assert!(matches!(e, SkillError::Denied(_)), "{e:?}");
    assert!(message(&e).contains("--allow wf/llm:call"), "{e:?}");
    assert!(server.requests().is_empty(), "the model was asked");

    // The callee runs with its own grants: core-tools has no file:read.
    let w = World::new(&["wf"], &["wf/skill:invoke", "wf/llm:call"]);
    std::fs::write(w.project().join("notes.txt"), "hello\n").expect("write");
    let ctx = w.ctx(
        Some(provider_llm(&server)),
        Some(w.invoker(Gate::new(true))),
    );
    let e = w
        .run_err(&ctx, "wf", "summarize_file", &json!({"path": "notes.txt"}))
        .await;
    assert!(message(&e).contains("file:read"), "{e:?}");
    assert!(server.requests().is_empty(), "the model was asked");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_refuses_unknown_callees_itself_and_bad_input() {
    let w = World::new(&["wf", "other"], &["skill:invoke", "file:read"]);
    let ctx = w.ctx(None, Some(w.invoker(Gate::new(true))));

    let e = w
        .run_err(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "nope", "function": "x", "input": {}}),
        )
        .await;
    let m = message(&e);
    assert!(m.contains("no skill named `nope`"), "{m}");
    assert!(
        m.contains("core-tools") && m.contains("other"),
        "lists the loaded skills: {m}"
    );

    let e = w
        .run_err(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "core-tools", "function": "read_files", "input": {}}),
        )
        .await;
    let m = message(&e);
    assert!(m.contains("has no tool or workflow `read_files`"), "{m}");
    for f in [
        "read_file",
        "write_file",
        "edit",
        "list_dir",
        "search",
        "exec",
    ] {
        assert!(m.contains(f), "{f} not listed: {m}");
    }
    let e = w
        .run_err(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "other", "function": "nope", "input": {}}),
        )
        .await;
    let m = message(&e);
    assert!(
        m.contains("summarize_file") && m.contains("count_words") && m.contains("invoke"),
        "workflows listed: {m}"
    );

    // Itself.
    let e = w
        .run_err(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "wf", "function": "count_words", "input": {"text": "a"}}),
        )
        .await;
    assert!(message(&e).contains("cannot invoke itself"), "{e:?}");

    // The callee's schema is checked before it runs.
    let e = w
        .run_err(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "core-tools", "function": "read_file", "input": {"file": "x"}}),
        )
        .await;
    let m = message(&e);
    assert!(
        m.contains("invalid input for `core-tools`/`read_file`"),
        "{m}"
    );

    // Another workflow skill's workflow, and a tool, work.
    let out = w
        .run_ok(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "other", "function": "count_words", "input": {"text": "a b"}}),
        )
        .await;
    assert_eq!(out, json!({"words": 2}));
    std::fs::write(w.project().join("a.txt"), "alpha\n").expect("write");
    let text = w
        .run(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "core-tools", "function": "read_file", "input": {"path": "a.txt"}}),
        )
        .await
        .expect("read_file through invoke");
    assert!(text.contains("alpha"), "{text}");

    // Without an invoker in the context: unavailable, not a trap.
    let bare = w.ctx(None, None);
    let e = w
        .run_err(
            &bare,
            "wf",
            "invoke",
            &json!({"skill": "other", "function": "count_words", "input": {"text": "a"}}),
        )
        .await;
    assert!(message(&e).contains("no other skills are loaded"), "{e:?}");
}

/// `{skill, function: invoke, input: ...}` alternating between `a` and `b`
/// for `hops` invokes, ending in `count_words`.
fn chain(a: &str, b: &str, hops: usize) -> Value {
    // The innermost call: count_words on whichever skill is next.
    let mut names = Vec::new();
    for i in 0..hops {
        names.push(if i % 2 == 0 { b } else { a });
    }
    let last = names.pop().expect("at least one hop");
    let mut input = json!({"skill": last, "function": "count_words", "input": {"text": "x y z"}});
    while let Some(name) = names.pop() {
        input = json!({"skill": name, "function": "invoke", "input": input});
    }
    input
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_chains_stop_at_the_depth_limit() {
    let w = World::new(&["wf-a", "wf-b"], &["skill:invoke"]);
    let ctx = w.ctx(None, Some(w.invoker(Gate::new(true))));
    assert_eq!(agent_runtime::MAX_INVOKE_DEPTH, 4);

    // a(0) → b(1) → a(2) → b(3) → a(4) count_words: four invokes, allowed.
    let out = w
        .run_ok(&ctx, "wf-a", "invoke", &chain("wf-a", "wf-b", 4))
        .await;
    assert_eq!(out, json!({"words": 3}));

    // One more hop: the skill at depth 4 may not invoke.
    let e = w
        .run_err(&ctx, "wf-a", "invoke", &chain("wf-a", "wf-b", 5))
        .await;
    let m = message(&e);
    assert!(m.contains("limit exceeded"), "{m}");
    assert!(m.contains("at most 4 levels deep"), "{m}");
    let audit = w.audit_of("wf-a");
    assert!(
        audit.iter().any(|(c, t, d)| c == "skill:invoke"
            && t == "skills.invoke(wf-b, count_words)"
            && d == "refused: too deep"),
        "{audit:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nested_tools_needing_approval_go_through_the_gate() {
    let w = World::new(&["wf"], &["wf/skill:invoke", "file:read", "file:write"]);
    let input = json!({"skill": "core-tools", "function": "write_file",
        "input": {"path": "out/new.txt", "content": "written by a workflow\n"}});

    let no = Gate::new(false);
    let ctx = w.ctx(None, Some(w.invoker(no.clone())));
    let e = w.run_err(&ctx, "wf", "invoke", &input).await;
    assert!(matches!(e, SkillError::Denied(_)), "{e:?}");
    let m = message(&e);
    assert!(
        m.contains("`core-tools`/`write_file` (called by `wf`) needs approval"),
        "{m}"
    );
    assert_eq!(
        no.asked(),
        [("core-tools".to_string(), "write_file".to_string())]
    );
    assert!(!w.project().join("out/new.txt").exists());

    let yes = Gate::new(true);
    let ctx = w.ctx(None, Some(w.invoker(yes.clone())));
    w.run(&ctx, "wf", "invoke", &input)
        .await
        .expect("approved write_file runs");
    assert_eq!(yes.asked().len(), 1);
    assert_eq!(
        std::fs::read_to_string(w.project().join("out/new.txt")).expect("written"),
        "written by a workflow\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skill_constraints_apply_to_invoked_tools() {
    let w = World::new(&["wf"], &["wf/skill:invoke", "file:read"]);
    std::fs::write(w.project().join("a.txt"), "alpha\n").expect("write");
    let invoker = w.invoker(Gate::new(true));
    invoker.set_constraints(Arc::new(merge(&[SkillConstraint {
        skill: "no-reading".to_string(),
        priority: 5,
        constraints: Constraints {
            forbidden_tools: ["read_file".to_string()].into_iter().collect(),
            ..Constraints::default()
        },
    }])));
    let ctx = w.ctx(None, Some(invoker));
    let e = w
        .run_err(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "core-tools", "function": "read_file", "input": {"path": "a.txt"}}),
        )
        .await;
    assert!(matches!(e, SkillError::Denied(_)), "{e:?}");
    let m = message(&e);
    assert!(m.contains("read_file") && m.contains("no-reading"), "{m}");
    // Other tools still run.
    let text = w
        .run(
            &ctx,
            "wf",
            "invoke",
            &json!({"skill": "core-tools", "function": "list_dir", "input": {"path": "."}}),
        )
        .await
        .expect("list_dir is not forbidden");
    assert!(text.contains("a.txt"), "{text}");
}

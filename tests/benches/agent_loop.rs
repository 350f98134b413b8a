//! The agent loop's own overhead per turn, model time excluded, with 10
//! skills active (docs/performance.md, goal ≤ 1 ms).
//!
//! Ten real skills are loaded and activated through `agent_core::setup`:
//! the built-ins core-tools and git, the rust-hello example, the workflow,
//! prompt and hook test components (built from source and signed here), and
//! four component-less prompt skills, two of which carry the seed's
//! constraint examples. The model is an in-process provider that answers
//! instantly, every turn, with a call to a tool the constraints refuse: the
//! loop then does all of its per-turn work (context check, request, stream
//! handling, tool dispatch with the constraint check, events, result) but
//! runs no skill code, so what is measured is the loop itself.
//!
//! Run: `cargo bench -p agent-tests --bench agent_loop` (or
//! `tests/bench.sh agent_loop`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_core::{Agent, AgentEvent, ApprovalGate, RunLimits, SessionLog, Setup, SetupInput};
use agent_manifest::Mode;
use agent_policy::{AllowList, AuditLog, Grants};
use agent_providers::{
    BoxFuture, CancellationToken, Completion, ContentBlock, EventSink, Message, Provider,
    ProviderError, Request, Role, StopReason, StreamEvent, Usage,
};
use agent_runtime::{
    CallContext, GrantsAuthorizer, Limits, Origin, Runtime, Skill, SkillPackage, TrustPolicy,
};
use agent_store::{NewSession, Store};
use agent_tests::{build_guest, write_skill};
use agent_trust::{SecretKey, TrustStore};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

/// Turns per measured run.
const TURNS: u32 = 20;

/// Answers every request at once with a short text and a call to `exec`,
/// which the active skills' constraints forbid.
struct Instant;

impl Provider for Instant {
    fn name(&self) -> &str {
        "instant"
    }

    fn stream<'a>(
        &'a self,
        req: &'a Request,
        _cancel: &'a CancellationToken,
        on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>> {
        Box::pin(async move {
            let n = req.messages.len();
            on_event(StreamEvent::TextDelta("Checking.".into()));
            Ok(Completion {
                message: Message {
                    role: Role::Assistant,
                    content: vec![
                        ContentBlock::Text("Checking.".into()),
                        ContentBlock::ToolUse {
                            id: format!("call_{n}"),
                            name: "exec".into(),
                            input: serde_json::json!({"program": "ls"}),
                        },
                    ],
                },
                usage: Usage {
                    input_tokens: 100,
                    output_tokens: 10,
                },
                stop_reason: StopReason::ToolUse,
                invalid_inputs: Vec::new(),
            })
        })
    }
}

struct No;

impl ApprovalGate for No {
    fn approve_tool(&self, _: &str, _: &str, _: &str) -> bool {
        false
    }
    fn refusal(&self) -> String {
        "the bench refuses every tool".into()
    }
}

struct World {
    _dir: tempfile::TempDir,
    runtime: Runtime,
    skills: Vec<Skill>,
    ctx: Arc<CallContext>,
    project: std::path::PathBuf,
    store: Arc<Store>,
    tokio: tokio::runtime::Runtime,
}

fn builtin(name: &str) -> SkillPackage {
    agent_tests::builtin_package(name, Origin::Builtin)
}

fn component_skill(root: &Path, key: &SecretKey, name: &str, package: &str, rest: &str) {
    let bytes = std::fs::read(build_guest(package)).expect("guest bytes");
    let manifest = format!(
        "name: {name}\nversion: 1.0.0\ndescription: bench skill {name}\nimplementation:\n  component: skill.wasm\n{rest}"
    );
    let dir = root.join(name);
    // Written before signing: the signature covers the files the manifest names.
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("PROMPT.md"), "Follow the house rules.\n").expect("PROMPT.md");
    write_skill(&dir, &manifest, &bytes, Some(key));
}

fn prompt_skill(root: &Path, name: &str, rest: &str) {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.yaml"),
        format!(
            "name: {name}\nversion: 1.0.0\ndescription: bench prompt skill {name}\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\n  max_context_tokens: 500\n{rest}"
        ),
    )
    .expect("manifest");
    std::fs::write(
        dir.join("PROMPT.md"),
        format!(
            "# {name}\n\n{}\n",
            "Keep changes small and tested. ".repeat(40)
        ),
    )
    .expect("PROMPT.md");
}

impl World {
    fn new() -> World {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        let src = dir.path().join("skills");
        std::fs::create_dir_all(&project).expect("mkdir project");
        std::fs::write(project.join("main.rs"), "fn main() {}\n").expect("main.rs");

        let key = SecretKey::generate().expect("key");
        let mut store = TrustStore::load(&home.join("keys")).expect("trust store");
        store.trust(key.public(), "bench").expect("trust");
        let trust = TrustPolicy {
            store,
            builtin_key: Some(agent_builtins::public_key().expect("built-in key")),
            allow_unsigned: false,
        };

        component_skill(
            &src,
            &key,
            "workflows",
            "guest-workflow",
            "types: [workflow]\npermissions: [llm:call, skill:invoke]\n",
        );
        component_skill(
            &src,
            &key,
            "house-prompt",
            "guest-prompt",
            "types: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\n  max_context_tokens: 800\n",
        );
        component_skill(
            &src,
            &key,
            "audit-hook",
            "guest-hooks",
            "types: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\n",
        );
        let hello = agent_tests::workspace().join("sdk-guest-examples/rust-hello");
        let hello_dir = src.join("rust-hello");
        std::fs::create_dir_all(hello_dir.join("schemas")).expect("mkdir");
        std::fs::copy(hello.join("SKILL.yaml"), hello_dir.join("SKILL.yaml")).expect("copy");
        for e in std::fs::read_dir(hello.join("schemas")).expect("schemas") {
            let e = e.expect("entry");
            std::fs::copy(e.path(), hello_dir.join("schemas").join(e.file_name())).expect("copy");
        }
        let wasm = std::fs::read(build_guest("rust-hello")).expect("rust-hello");
        std::fs::write(hello_dir.join("rust_hello.wasm"), wasm).expect("write");
        agent_tests::sign_skill_dir(&hello_dir, &key);
        // The seed's two examples (docs/constraints), adapted to our tools.
        prompt_skill(
            &src,
            "code-review",
            "constraints:\n  priority: 10\n  allowed_tools: [read_file, search, list_dir, exec, git_status, git_diff]\n  forbidden_tools: [write_file, edit]\n  max_steps: 50\n  context:\n    review_mode: \"true\"\n",
        );
        prompt_skill(
            &src,
            "security-policy",
            "constraints:\n  priority: 100\n  forbidden_tools: [exec]\n  max_duration: 5m\n",
        );
        prompt_skill(&src, "style-guide", "");
        prompt_skill(&src, "docs-prompt", "");

        let runtime = Runtime::new(
            Some(agent_tests::component_cache(home.join("cache"))),
            Limits::default(),
        )
        .expect("runtime");
        let mut skills = vec![
            runtime
                .load(builtin("core-tools"), &trust)
                .expect("core-tools"),
            runtime.load(builtin("git"), &trust).expect("git"),
        ];
        for name in [
            "rust-hello",
            "workflows",
            "house-prompt",
            "audit-hook",
            "code-review",
            "security-policy",
            "style-guide",
            "docs-prompt",
        ] {
            let pkg = SkillPackage::from_dir(&src.join(name), Origin::User).expect("package");
            skills.push(runtime.load(pkg, &trust).expect("load"));
        }
        assert_eq!(skills.len(), 10);

        let audit = Arc::new(AuditLog::open(home.join("audit.log")).expect("audit log"));
        let allow = AllowList::from_flags(["file:read"]).expect("allow");
        let grants = Arc::new(Grants::non_interactive(allow, audit));
        let mut ctx = CallContext::new(
            &project,
            "headless",
            Arc::new(GrantsAuthorizer::new(grants)),
        )
        .expect("ctx");
        ctx.skill_config.insert(
            "audit-hook".into(),
            serde_json::json!({"phases": ["on_conversation_start"]}),
        );
        let store = Arc::new(Store::open(home.join("state.redb")).expect("store"));
        World {
            _dir: dir,
            runtime,
            skills,
            ctx: Arc::new(ctx),
            project,
            store,
            tokio: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio"),
        }
    }

    fn setup(&self) -> Setup {
        let names: Vec<String> = self.skills.iter().map(|s| s.name().to_string()).collect();
        let setup = self
            .tokio
            .block_on(agent_core::setup(&SetupInput {
                runtime: &self.runtime,
                ctx: &self.ctx,
                skills: &self.skills,
                project_root: &self.project,
                cwd: &self.project,
                user_message: "review the code",
                mode: Mode::Headless,
                explicit: &names,
            }))
            .expect("setup");
        assert_eq!(setup.activation.order.len(), 10, "{:?}", setup.activation);
        assert!(setup.warnings.is_empty(), "{:?}", setup.warnings);
        setup
    }

    /// One run of `TURNS` turns; returns the number of refused calls.
    fn run(&self, setup: Setup, session: Option<SessionLog>) -> usize {
        let gate = No;
        let agent = Agent::builder(
            Arc::new(Instant),
            &self.runtime,
            self.ctx.clone(),
            &self.skills,
            &gate,
        )
        .model("bench")
        .limits(RunLimits {
            max_turns: TURNS,
            timeout: Duration::from_secs(60),
        })
        .setup(setup)
        .build();
        let mut refused = 0;
        let mut sink = |e: &AgentEvent| {
            if matches!(e, AgentEvent::Refused { .. }) {
                refused += 1;
            }
        };
        let out = self
            .tokio
            .block_on(agent.run(Vec::new(), "review the code", session, &mut sink))
            .expect("run");
        assert_eq!(out.turns, TURNS);
        refused
    }
}

fn bench(c: &mut Criterion) {
    let w = World::new();
    // Sanity: every turn's call is refused by the constraints, with the
    // reason, and no skill code runs.
    assert_eq!(w.run(w.setup(), None), TURNS as usize);

    let mut g = c.benchmark_group("agent_loop");
    g.sample_size(30);
    g.bench_function("run_20_turns_10_skills", |b| {
        b.iter_batched(|| w.setup(), |s| w.run(s, None), BatchSize::PerIteration)
    });
    g.bench_function("run_20_turns_10_skills_session_log", |b| {
        b.iter_batched(
            || {
                let meta = w
                    .store
                    .create_session(NewSession {
                        project_root: w.project.clone(),
                        model: "bench".into(),
                        provider: "instant".into(),
                        first_message: None,
                    })
                    .expect("session");
                (
                    w.setup(),
                    SessionLog {
                        store: w.store.clone(),
                        id: meta.id,
                    },
                )
            },
            |(s, log)| w.run(s, Some(log)),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("setup_10_skills", |b| b.iter(|| w.setup()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

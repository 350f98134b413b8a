//! The same skill in every language: the `hello` tool of the `agent skill
//! create --type tool` template in Rust, JavaScript, Go and Python, built by
//! the real `agent skill build` and signed, then measured in the real
//! runtime:
//!
//! - `activation/load_cached/<lang>`: what activating a skill costs once its
//!   compiled artifact is cached (signature check, artifact load, import and
//!   export checks, `InstancePre`);
//! - `call_fresh/<lang>/hello`: a new instance, one `call-tool`, drop — what
//!   every tool call of the agent loop does;
//! - `activation_and_call/<lang>`: both.
//!
//! Goals (docs/performance.md): Rust ≤ 50 µs; JavaScript, Go, Python ≤ 1 ms.
//!
//! Needs the toolchains of `agent skill build` on PATH and a built `agent`
//! (`target/release/agent`, else `target/debug/agent`): `tests/bench.sh
//! languages` does both.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use agent_policy::{AllowList, AuditLog, Grants};
use agent_runtime::{
    CacheOutcome, CallContext, GrantsAuthorizer, Limits, Origin, Runtime, Skill, SkillPackage,
    TrustPolicy,
};
use agent_trust::{SecretKey, TrustStore};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

const LANGS: [&str; 4] = ["rust", "js", "go", "python"];
const INPUT: &str = r#"{"name":"bench"}"#;

struct Built {
    lang: &'static str,
    pkg: SkillPackage,
    skill: Skill,
}

struct World {
    _dirs: tempfile::TempDir,
    runtime: Runtime,
    tokio: tokio::runtime::Runtime,
    trust: TrustPolicy,
    ctx: Arc<CallContext>,
    skills: Vec<Built>,
}

fn agent_binary() -> PathBuf {
    let target = agent_tests::workspace().join("target");
    ["release", "debug"]
        .iter()
        .map(|p| target.join(p).join("agent"))
        .find(|p| p.is_file())
        .expect("no agent binary: run `cargo build --release -p agent` first")
}

fn agent(home: &Path, args: &[&str]) {
    let out = Command::new(agent_binary())
        .args(args)
        .env("AGENT_HOME", home)
        .env("CI", "true")
        .env(
            "CARGO_TARGET_DIR",
            agent_tests::workspace().join("target/scaffold-guests"),
        )
        .output()
        .expect("running agent");
    assert!(
        out.status.success(),
        "agent {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl World {
    fn new() -> World {
        let dirs = tempfile::tempdir().expect("tempdir");
        let home = dirs.path().join("home");
        let project = dirs.path().join("project");
        std::fs::create_dir_all(&project).expect("project");
        let key = SecretKey::generate().expect("key");
        let (key_file, _) = key
            .write_pair(&dirs.path().join("keys"), "bench")
            .expect("key");
        let mut store = TrustStore::load(&home.join("trusted")).expect("trust store");
        store.trust(key.public(), "bench author").expect("trust");
        let trust = TrustPolicy {
            store,
            builtin_key: None,
            allow_unsigned: false,
        };
        let runtime = Runtime::new(
            Some(agent_tests::component_cache(home.join("cache"))),
            Limits::default(),
        )
        .expect("runtime");
        let tokio = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio");
        let audit = Arc::new(AuditLog::open(home.join("audit.log")).expect("audit"));
        let grants = Arc::new(Grants::non_interactive(
            AllowList::from_flags(Vec::<String>::new()).expect("allow"),
            audit,
        ));
        let ctx = Arc::new(
            CallContext::new(&project, "cli", Arc::new(GrantsAuthorizer::new(grants)))
                .expect("ctx"),
        );

        let parent = dirs.path().join("skills");
        let mut skills = Vec::new();
        for lang in LANGS {
            let name = format!("bench-{lang}");
            let p = parent.display().to_string();
            agent(
                &home,
                &["skill", "create", &name, "--lang", lang, "--dir", &p],
            );
            let dir = parent.join(&name);
            let d = dir.display().to_string();
            if lang == "js" {
                let npm = Command::new("npm")
                    .args([
                        "install",
                        "--prefix",
                        &d,
                        "--prefer-offline",
                        "--no-audit",
                        "--no-fund",
                    ])
                    .output()
                    .expect("npm");
                assert!(npm.status.success(), "npm install failed");
            }
            let k = key_file.display().to_string();
            agent(&home, &["skill", "build", &d, "--key", &k]);
            let pkg = SkillPackage::from_dir(&dir, Origin::User).expect("package");
            let size = pkg.component.as_ref().map(|c| c.stored_len()).unwrap_or(0);
            let first = runtime.load(pkg.clone(), &trust).expect("first load");
            assert!(matches!(
                first.cache,
                Some(CacheOutcome::Compiled | CacheOutcome::Hit)
            ));
            let skill = runtime.load(pkg.clone(), &trust).expect("cached load");
            assert_eq!(skill.cache, Some(CacheOutcome::Hit), "{lang} cached");
            let (out, _) = tokio
                .block_on(runtime.call_tool(&skill, &ctx, "hello", INPUT))
                .expect("call");
            assert_eq!(out.expect("hello").text, "Hello, bench!", "{lang}");
            eprintln!("{lang}: component {size} B (signed)");
            skills.push(Built { lang, pkg, skill });
        }
        World {
            _dirs: dirs,
            runtime,
            tokio,
            trust,
            ctx,
            skills,
        }
    }

    fn call(&self, skill: &Skill) -> String {
        let (out, _) = self
            .tokio
            .block_on(self.runtime.call_tool(skill, &self.ctx, "hello", INPUT))
            .expect("call");
        out.expect("hello").text
    }
}

fn languages(c: &mut Criterion) {
    let w = World::new();
    let mut g = c.benchmark_group("activation");
    for b in &w.skills {
        g.bench_function(format!("load_cached/{}", b.lang), |bench| {
            bench.iter_batched(
                || b.pkg.clone(),
                |pkg| w.runtime.load(pkg, &w.trust).expect("load"),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
    let mut g = c.benchmark_group("call_fresh");
    for b in &w.skills {
        g.bench_function(format!("{}/hello", b.lang), |bench| {
            bench.iter(|| black_box(w.call(&b.skill)))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("activation_and_call");
    for b in &w.skills {
        g.bench_function(b.lang, |bench| {
            bench.iter_batched(
                || b.pkg.clone(),
                |pkg| {
                    let skill = w.runtime.load(pkg, &w.trust).expect("load");
                    black_box(w.call(&skill))
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

criterion_group!(benches, languages);
criterion_main!(benches);

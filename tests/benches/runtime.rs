//! Benchmarks of the skill runtime with the real runtime and real
//! components: the built-in `core-tools` (embedded, signed at build time) and
//! the `rust-hello` example (built from source, signed with a key generated
//! here). What each one measures, and the goals, are in
//! `docs/performance.md`.
//!
//! Run: `cargo bench -p agent-tests --bench runtime` (or `tests/bench.sh`,
//! which also builds the release `agent` binary the process benchmark needs
//! and prints the medians). A filter selects benchmarks as usual:
//! `cargo bench -p agent-tests --bench runtime -- warm_call`.

use std::cell::LazyCell;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_policy::{AllowList, AuditLog, Grants};
use agent_runtime::{
    CacheOutcome, CallContext, FileIntent, GrantsAuthorizer, Limits, Origin, Runtime, Skill,
    SkillPackage, TrustPolicy,
};
use agent_trust::{PublicKey, SecretKey, TrustStore};
use criterion::{BatchSize, Criterion, SamplingMode, criterion_group, criterion_main};
use wasmtime::component::Component;

/// Everything the in-process benchmarks share.
struct World {
    /// Keeps the temporary directories alive.
    _dirs: tempfile::TempDir,
    /// A runtime with a warm artifact cache.
    runtime: Runtime,
    /// A current-thread tokio runtime to drive the async calls.
    tokio: tokio::runtime::Runtime,
    trust: TrustPolicy,
    builtin_key: PublicKey,
    core_pkg: SkillPackage,
    hello_pkg: SkillPackage,
    core: Skill,
    hello: Skill,
    ctx: Arc<CallContext>,
    cache_dir: PathBuf,
}

/// core-tools' signed component, inflated (the binary embeds it compressed).
fn core_tools_bytes() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| {
        let packed = agent_builtins::all()
            .iter()
            .find(|b| b.name == "core-tools")
            .expect("core-tools is built in")
            .component;
        agent_runtime::inflate(packed).expect("the embedded component inflates")
    })
}

fn core_tools_package() -> SkillPackage {
    agent_tests::builtin_package("core-tools", Origin::Builtin)
}

/// Lays out rust-hello (its SKILL.yaml, schemas and the component built
/// from source, signed with `key`) in `dir`.
fn hello_package(dir: &Path, key: &SecretKey) -> SkillPackage {
    let src = agent_tests::workspace()
        .join("sdk-guest-examples")
        .join("rust-hello");
    std::fs::create_dir_all(dir.join("schemas")).expect("mkdir rust-hello");
    std::fs::copy(src.join("SKILL.yaml"), dir.join("SKILL.yaml")).expect("copy SKILL.yaml");
    for entry in std::fs::read_dir(src.join("schemas")).expect("schemas") {
        let entry = entry.expect("schema entry");
        std::fs::copy(entry.path(), dir.join("schemas").join(entry.file_name()))
            .expect("copy schema");
    }
    let wasm = std::fs::read(agent_tests::build_guest("rust-hello")).expect("rust_hello.wasm");
    std::fs::write(dir.join("rust_hello.wasm"), wasm).expect("write rust_hello.wasm");
    agent_tests::sign_skill_dir(dir, key);
    SkillPackage::from_dir(dir, Origin::User).expect("rust-hello package")
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

impl World {
    fn new() -> World {
        let dirs = tempfile::tempdir().expect("tempdir");
        let home = dirs.path().join("home");
        let project = dirs.path().join("project");
        let cache_dir = home.join("cache").join("components");
        std::fs::create_dir_all(&project).expect("mkdir project");
        std::fs::write(
            project.join("hello.txt"),
            "first line\nsecond line\nthird line\n",
        )
        .expect("write hello.txt");

        let key = SecretKey::generate().expect("key");
        let keys_dir = home.join("keys");
        let mut store = TrustStore::load(&keys_dir).expect("trust store");
        store.trust(key.public(), "bench publisher").expect("trust");
        let builtin_key = agent_builtins::public_key().expect("built-in key");
        let trust = TrustPolicy {
            store,
            builtin_key: Some(builtin_key),
            allow_unsigned: false,
        };

        let core_pkg = core_tools_package();
        let hello_pkg = hello_package(&dirs.path().join("rust-hello"), &key);

        let runtime = Runtime::new(
            Some(agent_tests::component_cache(cache_dir.clone())),
            Limits::default(),
        )
        .expect("runtime");
        // Warm the cache: the first load compiles and writes the artifact.
        for pkg in [&core_pkg, &hello_pkg] {
            let first = runtime.load(pkg.clone(), &trust).expect("first load");
            assert!(
                matches!(
                    first.cache,
                    Some(CacheOutcome::Compiled | CacheOutcome::Hit)
                ),
                "unexpected cache outcome {:?}",
                first.cache
            );
        }
        let core = runtime
            .load(core_pkg.clone(), &trust)
            .expect("load core-tools");
        let hello = runtime
            .load(hello_pkg.clone(), &trust)
            .expect("load rust-hello");
        assert_eq!(core.cache, Some(CacheOutcome::Hit), "core-tools cached");
        assert_eq!(hello.cache, Some(CacheOutcome::Hit), "rust-hello cached");

        // A non-interactive run granting file:read, like `--allow file:read`.
        let audit = Arc::new(AuditLog::open(home.join("audit.log")).expect("audit log"));
        let allow = AllowList::from_flags(["file:read"]).expect("--allow file:read");
        let grants = Arc::new(Grants::non_interactive(allow, audit));
        let authorizer = Arc::new(GrantsAuthorizer::new(grants));
        let ctx = Arc::new(CallContext::new(&project, "cli", authorizer).expect("call context"));

        let tokio = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");

        let world = World {
            _dirs: dirs,
            runtime,
            tokio,
            trust,
            builtin_key,
            core_pkg,
            hello_pkg,
            core,
            hello,
            ctx,
            cache_dir,
        };
        world.report_sizes();
        world.prime();
        world
    }

    /// First calls: the grant decisions are made (and audited) once; later
    /// calls find them memoized, as in a session.
    fn prime(&self) {
        let rt = &self.tokio;
        let first = rt
            .block_on(
                self.runtime
                    .call_tool(&self.core, &self.ctx, "read_file", READ_INPUT),
            )
            .expect("read_file");
        let text = expect_ok(first.0);
        assert!(text.contains("second line"), "read_file output: {text}");
        let first = rt
            .block_on(
                self.runtime
                    .call_tool(&self.hello, &self.ctx, "greet", GREET_INPUT),
            )
            .expect("greet");
        let text = expect_ok(first.0);
        assert!(text.contains("Hello, bench!"), "greet output: {text}");
    }

    fn artifact(&self, skill: &Skill) -> PathBuf {
        self.runtime_cache()
            .artifact_path(skill.digest.as_deref().expect("digest"))
            .expect("cache configured")
    }

    fn runtime_cache(&self) -> agent_runtime::ComponentCache {
        agent_runtime::ComponentCache::new(
            self.runtime.engine(),
            Some(agent_tests::component_cache(self.cache_dir.clone())),
        )
    }

    fn report_sizes(&self) {
        let core_len = core_tools_bytes().len();
        let hello_len = self
            .hello_pkg
            .component
            .as_ref()
            .map(|c| c.stored_len())
            .unwrap_or(0);
        eprintln!(
            "sizes: core-tools component {core_len} B (signed), artifact {} B; \
             rust-hello component {hello_len} B (signed), artifact {} B",
            file_size(&self.artifact(&self.core)),
            file_size(&self.artifact(&self.hello)),
        );
    }
}

const READ_INPUT: &str = r#"{"path":"hello.txt"}"#;
const GREET_INPUT: &str = r#"{"name":"bench"}"#;

fn expect_ok(result: Result<agent_runtime::ToolOutput, agent_runtime::SkillError>) -> String {
    match result {
        Ok(out) => out.text,
        Err(e) => panic!("tool failed: {e:?}"),
    }
}

/// The world, built the first time a benchmark that needs it runs (a
/// filter that selects only `process/...` never builds it).
type Lazy = LazyCell<World>;

/// Benchmark 1: Cold compile of core-tools (Cranelift), no cache.
fn cold(c: &mut Criterion, w: &Lazy) {
    let mut g = c.benchmark_group("cold");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(20));
    let bytes = core_tools_bytes();
    g.bench_function("component_new/core-tools", |b| {
        let engine = w.runtime.engine();
        b.iter(|| Component::new(engine, black_box(bytes)).expect("compile"))
    });
    g.bench_function("load_uncached/core-tools", |b| {
        let runtime = Runtime::new(None, Limits::default()).expect("runtime");
        b.iter_batched(
            || w.core_pkg.clone(),
            |pkg| {
                let skill = runtime.load(pkg, &w.trust).expect("load");
                assert_eq!(skill.cache, Some(CacheOutcome::Uncached));
                skill
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// Benchmark 2: Cached activation of core-tools: the whole load path with a warm
/// cache, and its parts.
fn activation(c: &mut Criterion, w: &Lazy) {
    let mut g = c.benchmark_group("activation");
    g.bench_function("load_cached/core-tools", |b| {
        b.iter_batched(
            || w.core_pkg.clone(),
            |pkg| {
                let skill = w.runtime.load(pkg, &w.trust).expect("load");
                debug_assert_eq!(skill.cache, Some(CacheOutcome::Hit));
                skill
            },
            BatchSize::SmallInput,
        )
    });
    // As the binary loads it: the build checked its signature (no SHA-256
    // at load) and the cached artifact is mapped through the memo once it
    // has been checked (two seconds after it was written).
    let builtin = agent_builtins::all()
        .iter()
        .find(|b| b.name == "core-tools")
        .expect("core-tools is built in");
    let prebuilt = w.core_pkg.clone().with_prebuilt(agent_runtime::Prebuilt {
        digest: builtin.digest,
        precompiled: builtin.precompiled,
    });
    g.bench_function("load_cached_builtin/core-tools", |b| {
        b.iter_batched(
            || prebuilt.clone(),
            |pkg| {
                let skill = w.runtime.load(pkg, &w.trust).expect("load");
                debug_assert_eq!(skill.cache, Some(CacheOutcome::Hit));
                skill
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("load_cached/rust-hello", |b| {
        b.iter_batched(
            || w.hello_pkg.clone(),
            |pkg| w.runtime.load(pkg, &w.trust).expect("load"),
            BatchSize::SmallInput,
        )
    });
    let bytes = core_tools_bytes();
    g.bench_function("verify_signature/core-tools", |b| {
        let key = w.builtin_key;
        b.iter(|| agent_trust::verify(black_box(bytes), |k| *k == key).expect("verify"))
    });
    g.bench_function("sha256/core-tools", |b| {
        b.iter(|| agent_trust::sha256(black_box(bytes)))
    });
    // The cached file is the artifact followed by its 32-byte seal; the
    // parts below take the artifact alone, as the cache hands it to wasmtime.
    let sealed = std::fs::read(w.artifact(&w.core)).expect("read artifact");
    let artifact = sealed[..sealed.len() - 32].to_vec();
    let unsealed_file = w.cache_dir.join("unsealed-core-tools.cwasm");
    std::fs::write(&unsealed_file, &artifact).expect("write the unsealed artifact");
    g.bench_function("deserialize_file/core-tools", |b| {
        let engine = w.runtime.engine();
        b.iter(|| {
            // SAFETY: the artifact was written by this engine's runtime from
            // the verified built-in component.
            unsafe { Component::deserialize_file(engine, &unsealed_file) }.expect("deserialize")
        })
    });
    g.bench_function("deserialize_bytes/core-tools", |b| {
        let engine = w.runtime.engine();
        b.iter(|| {
            // SAFETY: as above.
            unsafe { Component::deserialize(engine, &artifact) }.expect("deserialize")
        })
    });
    // What the seal adds: reading the file into memory, and one SHA-256 pass
    // over it (HMAC-SHA256 is that plus two blocks).
    g.bench_function("read_artifact/core-tools", |b| {
        let path = w.artifact(&w.core);
        b.iter(|| std::fs::read(black_box(&path)).expect("read"))
    });
    g.bench_function("sha256_artifact/core-tools", |b| {
        b.iter(|| agent_trust::sha256(black_box(&sealed)))
    });
    g.bench_function("inspect/core-tools", |b| {
        let engine = w.runtime.engine();
        // SAFETY: as above.
        let component =
            unsafe { Component::deserialize_file(engine, &unsealed_file) }.expect("deserialize");
        b.iter(|| agent_runtime::ComponentInfo::of(&component, engine))
    });
    g.bench_function("manifest_parse/core-tools", |b| b.iter(core_tools_package));
    g.finish();

    let mut g = c.benchmark_group("startup");
    g.sample_size(30);
    g.bench_function("runtime_new", |b| {
        b.iter(|| Runtime::new(None, Limits::default()).expect("runtime"))
    });
    g.finish();
}

/// Benchmark 3: A fresh instance + one tool call + drop, as `Runtime::call_tool` does.
fn instantiate_and_call(c: &mut Criterion, w: &Lazy) {
    let mut g = c.benchmark_group("call_fresh");
    g.bench_function("core-tools/read_file", |b| {
        let w = &**w;
        b.iter(|| {
            let (out, _logs) = w
                .tokio
                .block_on(
                    w.runtime
                        .call_tool(&w.core, &w.ctx, "read_file", READ_INPUT),
                )
                .expect("call");
            expect_ok(out)
        })
    });
    g.bench_function("rust-hello/greet", |b| {
        let w = &**w;
        b.iter(|| {
            let (out, _logs) = w
                .tokio
                .block_on(w.runtime.call_tool(&w.hello, &w.ctx, "greet", GREET_INPUT))
                .expect("call");
            expect_ok(out)
        })
    });
    // The parts: instantiation + drop alone (with the project mounted, and bare).
    g.bench_function("core-tools/instantiate_read", |b| {
        let w = &**w;
        b.iter(|| {
            w.tokio
                .block_on(w.runtime.instantiate_for(&w.core, &w.ctx, FileIntent::Read))
                .expect("instantiate")
        })
    });
    g.bench_function("core-tools/instantiate_bare", |b| {
        let w = &**w;
        b.iter(|| {
            w.tokio
                .block_on(w.runtime.instantiate_bare(&w.core, &w.ctx))
                .expect("instantiate")
        })
    });
    g.bench_function("rust-hello/instantiate", |b| {
        let w = &**w;
        b.iter(|| {
            w.tokio
                .block_on(w.runtime.instantiate(&w.hello, &w.ctx))
                .expect("instantiate")
        })
    });
    g.bench_function("tokio_block_on_noop", |b| {
        let rt = &w.tokio;
        b.iter(|| rt.block_on(async {}))
    });
    g.finish();
}

/// Benchmark 4: One instance reused for many calls.
fn warm_call(c: &mut Criterion, w: &Lazy) {
    let mut g = c.benchmark_group("warm_call");
    g.bench_function("rust-hello/greet", |b| {
        let w = &**w;
        let mut inst = w
            .tokio
            .block_on(w.runtime.instantiate(&w.hello, &w.ctx))
            .expect("instantiate rust-hello");
        b.iter(|| {
            expect_ok(
                w.tokio
                    .block_on(inst.call_tool("greet", GREET_INPUT))
                    .expect("call"),
            )
        })
    });
    g.bench_function("core-tools/list_tools", |b| {
        let w = &**w;
        let mut inst = w
            .tokio
            .block_on(w.runtime.instantiate_bare(&w.core, &w.ctx))
            .expect("instantiate core-tools");
        b.iter(|| w.tokio.block_on(inst.list_tools()).expect("list_tools"))
    });
    g.bench_function("core-tools/read_file", |b| {
        let w = &**w;
        let mut inst = w
            .tokio
            .block_on(w.runtime.instantiate_for(&w.core, &w.ctx, FileIntent::Read))
            .expect("instantiate core-tools");
        b.iter(|| {
            expect_ok(
                w.tokio
                    .block_on(inst.call_tool("read_file", READ_INPUT))
                    .expect("call"),
            )
        })
    });
    g.finish();
}

/// The release `agent` binary next to this bench (target/release/agent).
fn release_agent() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/release/deps/runtime-<hash> → target/release/agent
    let dir = exe.parent()?.parent()?;
    let bin = dir.join(format!("agent{}", std::env::consts::EXE_SUFFIX));
    bin.exists().then_some(bin)
}

fn run_agent(bin: &Path, args: &[&str], home: &Path, project: &Path) -> Duration {
    let start = Instant::now();
    let status = Command::new(bin)
        .args(args)
        .current_dir(project)
        .env("AGENT_HOME", home)
        .env("CI", "true")
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .env_remove("AGENT_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("running agent");
    let elapsed = start.elapsed();
    assert!(status.success(), "agent {args:?} failed: {status}");
    elapsed
}

/// A home whose component cache holds every built-in (filled by one first
/// `agent skill list`), and an empty project.
struct ProcessEnv {
    bin: PathBuf,
    _dirs: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl ProcessEnv {
    fn new(bin: PathBuf) -> ProcessEnv {
        let dirs = tempfile::tempdir().expect("tempdir");
        let home = dirs.path().join("home");
        let project = dirs.path().join("project");
        std::fs::create_dir_all(&project).expect("mkdir project");
        let first = run_agent(&bin, &["skill", "list"], &home, &project);
        let cached = std::fs::read_dir(home.join("cache").join("components"))
            .map(|d| d.count())
            .unwrap_or(0);
        assert!(
            cached >= agent_builtins::all().len(),
            "the first run cached {cached} artifacts"
        );
        eprintln!("agent skill list, first run (compiling the built-ins): {first:?}");
        ProcessEnv {
            bin,
            _dirs: dirs,
            home,
            project,
        }
    }

    fn run(&self, args: &[&str]) -> Duration {
        run_agent(&self.bin, args, &self.home, &self.project)
    }
}

/// Benchmark 5: `agent skill list` as a whole process, every built-in cached.
fn process(c: &mut Criterion) {
    let Some(bin) = release_agent() else {
        eprintln!(
            "skipping process/*: target/release/agent is missing \
             (`cargo build --release -p agent`, or run tests/bench.sh)"
        );
        return;
    };
    let env = LazyCell::new(|| ProcessEnv::new(bin));
    let mut g = c.benchmark_group("process");
    g.sample_size(30)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(8));
    g.bench_function("agent_skill_list", |b| {
        let env = &*env;
        b.iter_custom(|iters| (0..iters).map(|_| env.run(&["skill", "list"])).sum())
    });
    g.bench_function("agent_version", |b| {
        let env = &*env;
        b.iter_custom(|iters| (0..iters).map(|_| env.run(&["--version"])).sum())
    });
    g.finish();
}

fn benches(c: &mut Criterion) {
    let w: Lazy = LazyCell::new(World::new);
    cold(c, &w);
    activation(c, &w);
    instantiate_and_call(c, &w);
    warm_call(c, &w);
    process(c);
}

criterion_group!(runtime, benches);
criterion_main!(runtime);

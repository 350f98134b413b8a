//! What-if benchmarks for `docs/performance.md`: the runtime's per-call path
//! (fresh Store, WASI context, `InstancePre::instantiate_async`, one call,
//! drop) rebuilt with plain wasmtime, so that one knob at a time can be
//! changed without touching `host/runtime`:
//!
//! - `default`: what `agent-runtime` does today (on-demand allocator,
//!   WASI filesystem calls through tokio's `spawn_blocking`);
//! - `blocking`: `WasiCtxBuilder::allow_blocking_current_thread(true)`;
//! - `pooling`: the pooling instance allocator (memories, tables and async
//!   stacks reused between Stores instead of mmap/munmap per call);
//! - `pooling+blocking`: both (first 1 MiB of each memory kept resident);
//! - `pooling+blocking+pagemap`: and `pagemap_scan` (Linux 6.7+) with 16 MiB
//!   kept resident: after a call only the pages it dirtied are reset, and
//!   they stay mapped, so the next instance takes no page faults for them;
//! - `...(keep 1 MiB)` / `...(keep 16 MiB, no pagemap)`: the two halves of
//!   that last change, one at a time.
//!
//! The same components as `runtime.rs` (core-tools from the binary's
//! built-ins, rust-hello built from source). Host imports of
//! `agent:skill` other than `project` are linked as traps; the calls
//! measured here use none of them.
//!
//! Run: `cargo bench -p agent-tests --bench wasmtime_knobs`.

use std::hint::black_box;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use wasmtime::component::types::ComponentItem;
use wasmtime::component::{
    Component, ComponentExportIndex, InstancePre, Linker, ResourceTable, Val,
};
use wasmtime::{
    Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, Store,
    StoreLimits, StoreLimitsBuilder,
};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

const MEMORY_LIMIT: usize = 256 * 1024 * 1024;
const OUTPUT_CAP: usize = 1024 * 1024;

struct State {
    wasi: WasiCtx,
    table: ResourceTable,
    limits: StoreLimits,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The engine configuration of `agent_runtime::engine::build_engine`, plus
/// the pooling allocator when asked.
fn engine(pool: Option<Pool>) -> Engine {
    let mut config = Config::new();
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    config.wasm_backtrace_max_frames(NonZeroUsize::new(32));
    if let Some(pool) = pool {
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pooling_config(pool)));
    }
    Engine::new(&config).expect("engine")
}

/// Pooling allocator settings that vary between variants.
#[derive(Clone, Copy)]
struct Pool {
    /// `linear_memory_keep_resident`, bytes.
    keep_resident: usize,
    /// `pagemap_scan` (Linux 6.7+): reset only the pages a call dirtied.
    pagemap: bool,
}

/// A pool sized for an agent: 64 concurrent skill instances, the runtime's
/// 256 MiB memory limit, part of each memory (`pool.keep_resident`) and the
/// async stacks kept resident between uses.
fn pooling_config(pool: Pool) -> PoolingAllocationConfig {
    let mut p = PoolingAllocationConfig::new();
    p.total_component_instances(64)
        .total_core_instances(512)
        .total_memories(128)
        .total_tables(256)
        .total_stacks(64)
        .max_memory_size(MEMORY_LIMIT)
        .linear_memory_keep_resident(pool.keep_resident)
        .table_keep_resident(64 << 10)
        .async_stack_keep_resident(64 << 10);
    if pool.pagemap {
        p.pagemap_scan(Enabled::Yes);
    }
    p
}

struct Prepared {
    pre: InstancePre<State>,
    call_tool: ComponentExportIndex,
    list_tools: ComponentExportIndex,
}

fn prepare(engine: &Engine, bytes: &[u8]) -> Prepared {
    let component = Component::new(engine, bytes).expect("compile");
    let mut linker = Linker::<State>::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("wasi");
    let mut project = linker
        .instance(&agent_runtime::contract::LATEST.interface("project"))
        .expect("project instance");
    project
        .func_wrap("name", |_, (): ()| Ok(("project".to_string(),)))
        .expect("name");
    project
        .func_wrap("guest-root", |_, (): ()| {
            Ok((Some("/project".to_string()),))
        })
        .expect("guest-root");
    project
        .func_wrap("languages", |_, (): ()| Ok((Vec::<String>::new(),)))
        .expect("languages");
    project
        .func_wrap("build-system", |_, (): ()| Ok((None::<String>,)))
        .expect("build-system");
    project
        .func_wrap("mode", |_, (): ()| Ok(("cli".to_string(),)))
        .expect("mode");
    // The other agent:skill imports trap. (Not `define_unknown_imports_as_traps`:
    // it matches names exactly and would shadow WASI's semver matching.)
    for (name, item) in component.component_type().imports(engine) {
        if !name.starts_with("agent:skill/") || name.starts_with("agent:skill/project@") {
            continue;
        }
        let ComponentItem::ComponentInstance(instance) = item.ty else {
            continue;
        };
        let mut stub = linker.instance(name).expect("stub instance");
        for (func, item) in instance.exports(engine) {
            if let ComponentItem::ComponentFunc(_) = item.ty {
                let what = format!("{name}#{func} is not linked in this benchmark");
                stub.func_new(func, move |_, _, _, _| {
                    Err(wasmtime::Error::msg(what.clone()))
                })
                .expect("stub function");
            }
        }
    }
    let pre = linker.instantiate_pre(&component).expect("instantiate_pre");
    let tool = component
        .get_export_index(None, agent_runtime::contract::LATEST.interface("tool"))
        .expect("tool export");
    let call_tool = component
        .get_export_index(Some(&tool), "call-tool")
        .expect("call-tool");
    let list_tools = component
        .get_export_index(Some(&tool), "list-tools")
        .expect("list-tools");
    Prepared {
        pre,
        call_tool,
        list_tools,
    }
}

/// A Store as `Runtime::instantiate_with` builds it.
fn store(engine: &Engine, project: Option<&Path>, blocking: bool) -> Store<State> {
    let stdout = MemoryOutputPipe::new(OUTPUT_CAP);
    let mut wasi = WasiCtxBuilder::new();
    wasi.stdout(stdout.clone()).stderr(stdout);
    wasi.allow_blocking_current_thread(blocking);
    if let Some(root) = project {
        wasi.preopened_dir(root, "/project", FsPerms::ReadOnly)
            .expect("preopen");
        wasi.env("PWD", "/project");
    }
    let limits = StoreLimitsBuilder::new()
        .memory_size(MEMORY_LIMIT)
        .instances(64)
        .tables(64)
        .memories(16)
        .trap_on_grow_failure(true)
        .build();
    let mut store = Store::new(
        engine,
        State {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            limits,
        },
    );
    store.limiter(|s| &mut s.limits);
    store.epoch_deadline_trap();
    store.set_epoch_deadline(3001);
    store
}

async fn call(
    store: &mut Store<State>,
    p: &Prepared,
    inst: &wasmtime::component::Instance,
    tool: &str,
    input: &str,
) -> String {
    let func = inst
        .get_func(&mut *store, p.call_tool)
        .expect("call-tool func");
    let mut results = [Val::Bool(false)];
    func.call_async(
        &mut *store,
        &[Val::String(tool.into()), Val::String(input.into())],
        &mut results,
    )
    .await
    .expect("call-tool");
    match &results[0] {
        Val::Result(Ok(Some(v))) => match &**v {
            Val::String(s) => s.clone(),
            other => panic!("unexpected output {other:?}"),
        },
        other => panic!("the tool failed: {other:?}"),
    }
}

struct Variant {
    name: &'static str,
    engine: Engine,
    blocking: bool,
    hello: Prepared,
    core: Prepared,
}

fn variants(hello: &[u8], core: &[u8]) -> Vec<Variant> {
    let pool = Pool {
        keep_resident: 1 << 20,
        pagemap: false,
    };
    let pagemap = Pool {
        keep_resident: 16 << 20,
        pagemap: true,
    };
    [
        ("default", None, false),
        ("blocking", None, true),
        ("pooling", Some(pool), false),
        ("pooling+blocking", Some(pool), true),
        ("pooling+blocking+pagemap", Some(pagemap), true),
        (
            "pooling+blocking+pagemap(keep 1 MiB)",
            Some(Pool {
                keep_resident: 1 << 20,
                pagemap: true,
            }),
            true,
        ),
        (
            "pooling+blocking(keep 16 MiB, no pagemap)",
            Some(Pool {
                keep_resident: 16 << 20,
                pagemap: false,
            }),
            true,
        ),
    ]
    .into_iter()
    .map(|(name, pool, blocking)| {
        let engine = engine(pool);
        let hello = prepare(&engine, hello);
        let core = prepare(&engine, core);
        Variant {
            name,
            engine,
            blocking,
            hello,
            core,
        }
    })
    .collect()
}

fn project_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().canonicalize().expect("canonical");
    std::fs::write(
        root.join("hello.txt"),
        "first line\nsecond line\nthird line\n",
    )
    .expect("hello.txt");
    (dir, root)
}

const READ_INPUT: &str = r#"{"path":"hello.txt"}"#;
const GREET_INPUT: &str = r#"{"name":"bench"}"#;

fn benches(c: &mut Criterion) {
    let hello_bytes = std::fs::read(agent_tests::build_guest("rust-hello")).expect("rust-hello");
    // The binary embeds core-tools compressed.
    let core_bytes = agent_runtime::inflate(
        agent_builtins::all()
            .iter()
            .find(|b| b.name == "core-tools")
            .expect("core-tools")
            .component,
    )
    .expect("the embedded component inflates");
    let variants = variants(&hello_bytes, &core_bytes);
    let (_keep, root) = project_dir();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");

    let mut g = c.benchmark_group("knobs/engine_new");
    g.sample_size(20);
    g.bench_function("default", |b| b.iter(|| engine(None)));
    let pool = Pool {
        keep_resident: 1 << 20,
        pagemap: false,
    };
    g.bench_function("pooling", |b| b.iter(|| engine(Some(pool))));
    g.finish();

    let mut g = c.benchmark_group("knobs/fresh_greet");
    for v in variants.iter().filter(|v| v.name != "blocking") {
        g.bench_function(v.name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut store = store(&v.engine, None, v.blocking);
                    let inst = v
                        .hello
                        .pre
                        .instantiate_async(&mut store)
                        .await
                        .expect("inst");
                    call(&mut store, &v.hello, &inst, "greet", GREET_INPUT).await
                })
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("knobs/instantiate_hello");
    for v in variants
        .iter()
        .filter(|v| !v.blocking || v.name.contains("pagemap"))
    {
        g.bench_function(v.name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut store = store(&v.engine, None, v.blocking);
                    let inst = v
                        .hello
                        .pre
                        .instantiate_async(&mut store)
                        .await
                        .expect("inst");
                    black_box(inst);
                    store
                })
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("knobs/fresh_read_file");
    for v in &variants {
        g.bench_function(v.name, |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut store = store(&v.engine, Some(&root), v.blocking);
                    let inst = v
                        .core
                        .pre
                        .instantiate_async(&mut store)
                        .await
                        .expect("inst");
                    call(&mut store, &v.core, &inst, "read_file", READ_INPUT).await
                })
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("knobs/warm_read_file");
    for v in variants
        .iter()
        .filter(|v| v.name == "default" || v.name == "blocking")
    {
        let mut store = store(&v.engine, Some(&root), v.blocking);
        let inst = rt
            .block_on(v.core.pre.instantiate_async(&mut store))
            .expect("inst");
        let text = rt.block_on(call(&mut store, &v.core, &inst, "read_file", READ_INPUT));
        assert!(text.contains("second line"), "read_file: {text}");
        g.bench_function(v.name, |b| {
            b.iter(|| rt.block_on(call(&mut store, &v.core, &inst, "read_file", READ_INPUT)))
        });
    }
    g.finish();

    // A sanity check that list-tools is reachable through this linker too.
    let v = &variants[0];
    let start = Instant::now();
    rt.block_on(async {
        let mut store = store(&v.engine, None, false);
        let inst = v
            .hello
            .pre
            .instantiate_async(&mut store)
            .await
            .expect("inst");
        let func = inst
            .get_func(&mut store, v.hello.list_tools)
            .expect("list-tools");
        let mut results = [Val::Bool(false)];
        func.call_async(&mut store, &[], &mut results)
            .await
            .expect("list-tools");
    });
    eprintln!(
        "rust-hello list-tools on a fresh instance: {:?}",
        start.elapsed()
    );
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_secs(2))
}

criterion_group! {
    name = knobs;
    config = config();
    targets = benches
}
criterion_main!(knobs);

//! The wasmtime engine (epoch interruption, ticker thread) and the on-disk
//! cache of compiled components.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::component::Component;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the engine's epoch advances; deadlines are counted in ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Most skill instances alive at once (each call has its own).
pub const MAX_INSTANCES: u32 = 64;

/// Builds the one engine the host uses and starts its epoch ticker.
///
/// Instances come from a pooling allocator sized for [`MAX_INSTANCES`]
/// concurrent instances of at most `memory_limit` bytes of linear memory:
/// memories, tables and async stacks are reused between calls instead of
/// mapped and unmapped each time, and (Linux 6.7+) only the pages a call
/// dirtied are reset.
///
/// The ticker thread stops by itself once the engine is dropped.
pub fn build_engine(memory_limit: usize) -> Result<Engine> {
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(MAX_INSTANCES)
        .total_core_instances(MAX_INSTANCES * 8)
        .total_memories(MAX_INSTANCES * 2)
        .total_tables(MAX_INSTANCES * 4)
        .total_stacks(MAX_INSTANCES)
        .max_memory_size(memory_limit)
        .linear_memory_keep_resident(1 << 20)
        .table_keep_resident(64 << 10)
        .async_stack_keep_resident(64 << 10)
        .pagemap_scan(Enabled::Auto);
    let mut config = Config::new();
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    config.wasm_component_model(true);
    config.epoch_interruption(true);
    // Keep guest names in backtraces so traps point at functions.
    config.wasm_backtrace_max_frames(std::num::NonZeroUsize::new(32));
    let engine = Engine::new(&config)
        .map_err(anyhow::Error::from)
        .context("creating the WebAssembly engine")?;
    let weak = engine.weak();
    std::thread::Builder::new()
        .name("agent-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EPOCH_TICK);
                match weak.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => break,
                }
            }
        })
        .context("starting the epoch ticker thread")?;
    Ok(engine)
}

/// Where compiled artifacts are kept: `<dir>/<sha256>-<engine key>.cwasm`.
///
/// The key covers the component's SHA-256 (of its unsigned bytes), the
/// wasmtime version and the engine's configuration and target (wasmtime's
/// own compatibility hash), so an artifact is never used by an engine that
/// could not run it.
#[derive(Debug, Clone)]
pub struct ComponentCache {
    dir: Option<PathBuf>,
    engine_key: String,
}

/// How a component was obtained, for benchmarks and `--verbose`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from the on-disk cache.
    Hit,
    /// Compiled now and written to the cache.
    Compiled,
    /// Compiled now; no cache configured.
    Uncached,
}

impl ComponentCache {
    /// A cache in `dir` (created on first write), or no cache for `None`.
    pub fn new(engine: &Engine, dir: Option<PathBuf>) -> ComponentCache {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine_key = format!(
            "wasmtime48-{}-{:016x}",
            std::env::consts::ARCH,
            hasher.finish()
        );
        ComponentCache { dir, engine_key }
    }

    /// The artifact path for a component digest.
    pub fn artifact_path(&self, digest_hex: &str) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{digest_hex}-{}.cwasm", self.engine_key)))
    }

    /// Loads the compiled component for `bytes` (whose verified digest is
    /// `digest_hex`) from the cache, or compiles and caches it.
    ///
    /// A cache entry that cannot be loaded (corrupt, from another engine) is
    /// replaced. Failing to write the cache is not an error.
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
        digest_hex: &str,
    ) -> Result<(Component, CacheOutcome)> {
        let Some(path) = self.artifact_path(digest_hex) else {
            return Ok((compile(engine, bytes)?, CacheOutcome::Uncached));
        };
        if path.exists() {
            // SAFETY: the artifact was written by this host from a component
            // whose signature was verified, into the user's private cache
            // directory, and its header is checked by wasmtime against this
            // engine's version and configuration.
            match unsafe { Component::deserialize_file(engine, &path) } {
                Ok(component) => return Ok((component, CacheOutcome::Hit)),
                Err(e) => {
                    tracing::warn!("discarding cached artifact {}: {e}", path.display());
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        let component = compile(engine, bytes)?;
        if let Err(e) = write_artifact(&path, &component) {
            tracing::warn!(
                "could not cache compiled component at {}: {e:#}",
                path.display()
            );
        }
        Ok((component, CacheOutcome::Compiled))
    }
}

fn compile(engine: &Engine, bytes: &[u8]) -> Result<Component> {
    Component::new(engine, bytes)
        .map_err(anyhow::Error::from)
        .context("compiling the component (is it a wasm32-wasip2 component?)")
}

fn write_artifact(path: &Path, component: &Component) -> Result<()> {
    let dir = path.parent().context("cache path has no parent")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let bytes = component.serialize().map_err(anyhow::Error::from)?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("artifact"),
        std::process::id()
    ));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

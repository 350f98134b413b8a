//! The wasmtime engine (epoch interruption, ticker thread).

use std::time::Duration;

use anyhow::{Context, Result};
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

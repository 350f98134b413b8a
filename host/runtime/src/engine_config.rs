//! The engine configuration, in a file of its own: `host/builtins/build.rs`
//! includes it (`#[path]`) to precompile the built-in skills with exactly the
//! configuration the runtime's engine has, so the precompiled forms fit it.
//! It may use `wasmtime` and `std` only.

use wasmtime::{Config, Enabled, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Most skill instances alive at once (each call has its own).
pub const MAX_INSTANCES: u32 = 64;

/// Linear memory per instance unless the embedder says otherwise (256 MiB):
/// the default of `Limits::memory`, and what the built-ins are precompiled
/// for.
pub const DEFAULT_MEMORY_LIMIT: usize = 256 * 1024 * 1024;

/// The configuration of the one engine the host uses.
///
/// Instances come from a pooling allocator sized for [`MAX_INSTANCES`]
/// concurrent instances of at most `memory_limit` bytes of linear memory:
/// memories, tables and async stacks are reused between calls instead of
/// mapped and unmapped each time, and (Linux 6.7+) only the pages a call
/// dirtied are reset.
pub fn engine_config(memory_limit: usize) -> Config {
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
    config
}

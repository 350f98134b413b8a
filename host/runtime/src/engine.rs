//! The wasmtime engine (epoch interruption, ticker thread).

use std::time::Duration;

use anyhow::{Context, Result};
use wasmtime::Engine;

/// How often the engine's epoch advances; deadlines are counted in ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

pub(crate) use crate::engine_config::MAX_INSTANCES;

/// Builds the one engine the host uses (configured by
/// [`crate::engine_config::engine_config`]) and starts its epoch ticker.
///
/// The ticker thread stops by itself once the engine is dropped.
pub fn build_engine(memory_limit: usize) -> Result<Engine> {
    let config = crate::engine_config::engine_config(memory_limit);
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

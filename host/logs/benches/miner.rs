//! Throughput of the template miner on one core (criterion, bytes per
//! second): plain single-line records in ten line formats, and the full
//! generated corpus (stack traces, JSON lines). The goal: at least
//! 100 MB/s for plain lines. The 1 GB memory run and the drain3 comparison
//! are `examples/mine.rs` and `benches/drain3_compare.py` (docs/logs.md).

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use agent_logs::{Miner, MinerConfig};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn mine(log: &str) -> u64 {
    let mut miner = Miner::new(MinerConfig::default());
    let mut records = 0u64;
    miner
        .mine_reader("bench", log.as_bytes(), &mut |_| records += 1)
        .expect("read");
    records
}

fn throughput(c: &mut Criterion) {
    let mut plain = String::new();
    corpus::plain(11, 32 * 1024 * 1024, &mut plain, None);
    let (mixed, _) = corpus::corpus(13, 200_000);
    let mut g = c.benchmark_group("miner");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(plain.len() as u64));
    g.bench_function("plain_lines_32MiB", |b| b.iter(|| mine(&plain)));
    g.throughput(Throughput::Bytes(mixed.len() as u64));
    g.bench_function("mixed_corpus", |b| b.iter(|| mine(&mixed)));
    g.finish();
}

criterion_group!(benches, throughput);
criterion_main!(benches);

//! Measurements the benches cannot make (docs/logs.md, "Measurements"):
//!
//! - `mine gen FILE MIB [--truth TRUTH]`: writes plain generated lines (and
//!   each line's true template id, one per line) for the 1 GB run and the
//!   drain3 comparison;
//! - `mine run FILE [--truth TRUTH]`: streams FILE through the miner and
//!   prints bytes, seconds, MB/s, templates and the process's peak resident
//!   memory (VmHWM); with TRUTH, the grouping accuracy too.

#[path = "../tests/corpus/mod.rs"]
mod corpus;

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::time::Instant;

use agent_logs::{Miner, MinerConfig};

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let truth_path = args
        .iter()
        .position(|a| a == "--truth")
        .map(|i| args[i + 1].clone());
    match args.get(1).map(String::as_str) {
        Some("gen") => {
            let path = &args[2];
            let mib: usize = args[3].parse().expect("MIB");
            let mut out = BufWriter::new(std::fs::File::create(path).expect("create"));
            let mut truth = truth_path
                .as_ref()
                .map(|p| BufWriter::new(std::fs::File::create(p).expect("create truth")));
            let chunk = 16 * 1024 * 1024;
            let mut written = 0usize;
            let mut seed = 1;
            while written < mib * 1024 * 1024 {
                let mut s = String::with_capacity(chunk + 4096);
                let mut t = Vec::new();
                corpus::plain(
                    seed,
                    chunk.min(mib * 1024 * 1024 - written),
                    &mut s,
                    Some(&mut t),
                );
                out.write_all(s.as_bytes()).expect("write");
                if let Some(tw) = truth.as_mut() {
                    for i in t {
                        writeln!(tw, "{i}").expect("write truth");
                    }
                }
                written += s.len();
                seed += 1;
            }
            out.flush().expect("flush");
            println!("wrote {written} bytes to {path}");
        }
        Some("run") => {
            let path = &args[2];
            let file = std::fs::File::open(path).expect("open");
            let mut predicted: Vec<u32> = Vec::new();
            let keep = truth_path.is_some();
            let start = Instant::now();
            let mut miner = Miner::new(MinerConfig::default());
            miner
                .mine_reader(path, BufReader::with_capacity(256 * 1024, file), &mut |a| {
                    if keep {
                        let id = a.template.map_or(0, |t| t.id);
                        predicted.extend(std::iter::repeat_n(id, a.lines as usize));
                    }
                })
                .expect("read");
            let secs = start.elapsed().as_secs_f64();
            let a = miner.finish();
            let mb = a.totals.bytes as f64 / 1e6;
            println!(
                "bytes {} lines {} records {} templates {} seconds {secs:.2} MB/s {:.1} peak_rss_MiB {:.1}",
                a.totals.bytes,
                a.totals.lines,
                a.totals.records,
                a.templates.len(),
                mb / secs,
                peak_rss_kib() as f64 / 1024.0
            );
            if let Some(tp) = truth_path {
                let truth: Vec<usize> = BufReader::new(std::fs::File::open(tp).expect("truth"))
                    .lines()
                    .map(|l| l.expect("line").trim().parse().expect("id"))
                    .collect();
                let predicted: Vec<u64> = predicted.into_iter().map(u64::from).collect();
                println!(
                    "grouping_accuracy {:.4}",
                    corpus::grouping_accuracy(&predicted, &truth)
                );
            }
        }
        _ => eprintln!("usage: mine gen FILE MIB [--truth T] | mine run FILE [--truth T]"),
    }
}

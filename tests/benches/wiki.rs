//! The wiki generator on a generated project of ~50,000 lines
//! ([`agent_tests::wiki_project::generated`]; docs/wiki.md, "Speed").
//!
//! - `wiki pipeline, 50k lines, every format`: the host's pipeline without
//!   the model, in process — scan every file through tree-sitter, modules,
//!   import graph, diagrams, pages, and all four site formats rendered.
//! - `agent wiki --depth standard, 50k lines, instant model`: the release
//!   binary end to end against a loopback model server that answers every
//!   request at once (the Anthropic wire format), so the time measured is
//!   the host's own: the scan, one model request per section through the
//!   agent loop and the `write_wiki_section` tool, the security chapter,
//!   the diagrams and the pages written to disk. Each sample starts from a
//!   fresh home and project (no state, no answer cache).
//!
//! Run: `tests/bench.sh wiki` (builds the release binary first), or
//! `AGENT_BIN=path/to/agent cargo bench -p agent-tests --bench wiki`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;

use agent_tests::model_server::{ModelServer, Reply, Wire, tokio_rt};
use agent_tests::wiki_project::generated;
use agent_tests::{Sandbox, workspace};
use agent_wiki::modules::FileClass;
use agent_wiki::pages::{self, Prose, SYNTHESIS};
use agent_wiki::{DiagramFormat, WikiFormat, formats, project};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;

fn lines(files: &BTreeMap<String, String>) -> usize {
    files.values().map(|t| t.lines().count()).sum()
}

fn pipeline(c: &mut Criterion) {
    let files = generated();
    assert!(lines(&files) >= 50_000, "{} lines", lines(&files));
    c.bench_function("wiki pipeline, 50k lines, every format", |b| {
        b.iter(|| {
            let p = project::from_texts("bench".into(), files.clone());
            let pages = pages::build(&p, &Prose::default(), DiagramFormat::Mermaid);
            for f in [
                WikiFormat::RawMd,
                WikiFormat::Mkdocs,
                WikiFormat::Hugo,
                WikiFormat::Docusaurus,
            ] {
                std::hint::black_box(formats::render(f, "bench", &pages));
            }
        });
    });
}

/// The release binary: `AGENT_BIN`, else `target/release/agent`.
fn binary() -> PathBuf {
    let bin = std::env::var_os("AGENT_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/release/agent"));
    assert!(
        bin.is_file(),
        "{} does not exist: build it first (`cargo build --release -p agent`, which tests/bench.sh \
         does) or name it in AGENT_BIN",
        bin.display()
    );
    bin
}

/// The sections a standard-depth run asks for, in its order: a summary of
/// every module with source lines, then the synthesis sections.
fn sections(files: &BTreeMap<String, String>) -> (Vec<String>, Vec<String>) {
    let p = project::from_texts("bench".into(), files.clone());
    let modules: Vec<String> = p
        .modules
        .iter()
        .filter(|m| p.lines(m, FileClass::Source) > 0)
        .map(|m| m.name.clone())
        .collect();
    let mut ids: Vec<String> = modules.iter().map(|m| format!("summary:{m}")).collect();
    ids.extend(SYNTHESIS.iter().map(|(id, _)| (*id).to_string()));
    (ids, modules)
}

/// Per section: the call of `write_wiki_section`, then the turn's end.
fn script(ids: &[String], modules: &[String]) -> Vec<Reply> {
    let wire = Wire::Anthropic;
    let mut r = Vec::new();
    for (n, id) in ids.iter().enumerate() {
        let input = if let Some(m) = id.strip_prefix("summary:") {
            json!({"section": id, "text": format!("The {m} module of the generated project."), "symbols": []})
        } else {
            json!({"section": id, "text": format!("The {id} of the generated project."), "modules": [modules[0], modules[1]]})
        };
        r.push(wire.tool(&format!("c{n}"), "write_wiki_section", &input));
        r.push(wire.answer("Done."));
    }
    r
}

fn end_to_end(c: &mut Criterion) {
    let bin = binary();
    let files = generated();
    let (ids, modules) = sections(&files);
    let expected = 2 * ids.len();
    let rt = tokio_rt();
    let mut reported = false;
    c.bench_function(
        "agent wiki --depth standard, 50k lines, instant model",
        |b| {
            b.iter_batched(
                || {
                    let sb = Sandbox::with_binary(&bin);
                    for (path, text) in &files {
                        let f = sb.project.path().join(path);
                        std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
                        std::fs::write(&f, text).expect("write");
                    }
                    let server = rt
                        .block_on(ModelServer::start(script(&ids, &modules)))
                        .expect("model server");
                    (sb, server)
                },
                |(sb, server)| {
                    let budget = expected.to_string();
                    let out = sb
                        .agent_cmd(&[
                            "wiki",
                            "--provider",
                            "anthropic",
                            "--model",
                            "bench-model",
                            "--base-url",
                            server.url(),
                            "--depth",
                            "standard",
                            "--max-llm-calls",
                            &budget,
                        ])
                        .current_dir(sb.project.path())
                        .env("ANTHROPIC_API_KEY", "bench-key")
                        .stdin(Stdio::null())
                        .output()
                        .expect("running agent");
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    assert!(
                        out.status.success(),
                        "agent wiki failed: {stdout}\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let made = format!("{expected} requests made");
                    assert!(
                        stdout.contains(&made) && stdout.contains(" 0 answers rejected"),
                        "expected {made}, none rejected: {stdout}"
                    );
                    if !reported {
                        reported = true;
                        let summary = stdout.lines().find(|l| l.starts_with("modules:"));
                        eprintln!(
                            "{} lines, {} sections: {}",
                            lines(&files),
                            ids.len(),
                            summary.unwrap_or_default()
                        );
                    }
                    (sb, server)
                },
                BatchSize::PerIteration,
            );
        },
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = pipeline, end_to_end
}
criterion_main!(benches);

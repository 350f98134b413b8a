//! Host time of a review of a 1,000-line diff, the model excluded: parsing
//! the patch, the outline of every file (tree-sitter: functions, classes,
//! imports), chunking within the budget, and taking in one reported finding
//! per chunk (validation, anchoring, deduplication). Goal: ≤ 2 s.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use agent_findings::{Anchor, ChunkOptions, FileView, Intake, chunks, parse_patch, patch};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// 20 Python files of 100 lines, 50 added lines in each (5 functions of
/// 10 added lines): a 1,000-line diff.
fn fixture() -> (String, BTreeMap<String, String>) {
    let mut diff = String::new();
    let mut files = BTreeMap::new();
    for f in 0..20 {
        let path = format!("pkg/module_{f}.py");
        let mut text = String::from("import os\nimport json\nfrom db import conn\n\n");
        for func in 0..8 {
            let _ = writeln!(text, "def handler_{func}(request):");
            for l in 0..10 {
                let _ = writeln!(text, "    value_{l} = request.get(\"k{l}\") + {l}");
            }
            text.push_str("    return value_0\n");
        }
        let lines: Vec<&str> = text.lines().collect();
        let _ = writeln!(
            diff,
            "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}"
        );
        // Functions 0..5 had their 10 body lines added.
        for func in 0..5u32 {
            let def = 5 + func * 12; // 1-based line of `def`
            let _ = writeln!(diff, "@@ -{def},2 +{def},12 @@");
            let _ = writeln!(diff, " {}", lines[(def - 1) as usize]);
            for l in 0..10 {
                let _ = writeln!(diff, "+{}", lines[(def + l) as usize]);
            }
            let _ = writeln!(diff, " {}", lines[(def + 10) as usize]);
        }
        files.insert(path, text);
    }
    (diff, files)
}

fn review_host(c: &mut Criterion) {
    let (diff, files) = fixture();
    // How many model conversations such a review makes (the chunk count
    // at the budget `agent review` uses by default, 48,000 characters).
    {
        let parsed = parse_patch(&diff);
        let views: Vec<FileView> = parsed
            .iter()
            .map(|p| FileView {
                patch: p,
                text: files.get(&p.path).map(String::as_str),
            })
            .collect();
        for budget in [24_000, 48_000] {
            let n = chunks(
                &views,
                &ChunkOptions {
                    budget_chars: budget,
                    ..ChunkOptions::default()
                },
            )
            .len();
            eprintln!("1,000-line diff: {n} chunks at {budget} characters");
        }
    }
    c.bench_function("review_host_1000_line_diff", |b| {
        b.iter(|| {
            let parsed = parse_patch(&diff);
            let added: usize = parsed.iter().map(|f| f.added_count()).sum();
            assert_eq!(added, 1000);
            let views: Vec<FileView> = parsed
                .iter()
                .map(|p| FileView {
                    patch: p,
                    text: files.get(&p.path).map(String::as_str),
                })
                .collect();
            let cs = chunks(&views, &ChunkOptions::default());
            let source = files.clone();
            let mut intake = Intake::new(
                "code-review/model",
                Anchor {
                    diff: Some(patch::scope(&parsed)),
                    context_findings: false,
                },
                Box::new(move |p: &str| source.get(p).cloned()),
            );
            for (i, _) in cs.iter().enumerate() {
                let file = format!("pkg/module_{}.py", i % 20);
                intake.submit(&json!({
                    "severity": "medium", "category": "correctness",
                    "title": "t", "description": "d",
                    "location": {"file": file, "start_line": 6},
                    "evidence": "value_0 = request.get(\"k0\") + 0",
                }));
            }
            intake.finish()
        })
    });
}

criterion_group!(benches, review_host);
criterion_main!(benches);

//! Host time of the risk scoring of a repository of 2,000 files (the
//! model excluded): generated Python, JavaScript, Go and Java files, a
//! quarter of them with route, SQL, process or network code.

use agent_deep::risk::{Context, rank};
use criterion::{Criterion, criterion_group, criterion_main};

fn repository() -> Vec<(String, String)> {
    let mut files = Vec::new();
    for i in 0..2_000 {
        let (ext, body) = match i % 4 {
            0 => (
                "py",
                format!(
                    "from flask import request\n\n@app.route('/u/{i}')\ndef h{i}():\n    \
                     q = \"SELECT * FROM t WHERE id = \" + request.args['id']\n    \
                     return db.execute(q)\n"
                ),
            ),
            1 => (
                "js",
                format!("const x{i} = require('x');\nfunction f{i}(a) {{ return a + {i}; }}\n"),
            ),
            2 => (
                "go",
                format!("package p\n\nfunc F{i}(s string) int {{ return len(s) + {i} }}\n"),
            ),
            _ => (
                "java",
                format!(
                    "class C{i} {{ void run(String c) throws Exception {{ \
                     Runtime.getRuntime().exec(c); }} }}\n"
                ),
            ),
        };
        // ~60 lines a file.
        let mut text = body;
        for l in 0..55 {
            text.push_str(&format!("// line {l} of file {i}: nothing to see here\n"));
        }
        files.push((format!("src/m{}/f{i}.{ext}", i % 20), text));
    }
    files
}

fn bench(c: &mut Criterion) {
    let files = repository();
    let ctx = Context::new(&[]);
    c.bench_function("risk_rank_2000_files", |b| {
        b.iter(|| {
            let ranked = rank(files.iter().map(|(p, t)| (p.as_str(), t.as_str())), &ctx);
            assert_eq!(ranked.len(), 1_000);
            ranked
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

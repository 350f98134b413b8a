//! The taint engine on small files per language: each vulnerable case has
//! a safe look-alike (constant, sanitized, allowlisted, dead branch) that
//! must stay quiet.

use super::{Specs, scan};

mod go;
mod guards;
mod java;
mod javascript;
mod php;
mod python;
mod ruby;

/// `(rule id, line)` of every taint finding in `code`.
pub(super) fn hits(grammar: &str, code: &str) -> Vec<(String, u32)> {
    let specs = Specs::builtin();
    let mut v: Vec<(String, u32)> = scan("t", grammar, code, &specs)
        .expect("parses")
        .into_iter()
        .map(|f| (f.rule_id, f.location.start_line))
        .collect();
    v.sort();
    v
}

/// The rule ids found in `code`.
pub(super) fn rules(grammar: &str, code: &str) -> Vec<String> {
    hits(grammar, code).into_iter().map(|(r, _)| r).collect()
}

#[test]
fn the_builtin_specs_parse() {
    let specs = Specs::builtin();
    for l in super::LANGUAGES {
        assert!(specs.get(l).is_some(), "{l}");
    }
}

#[test]
fn a_flow_names_source_steps_and_sink_with_lines_and_snippets() {
    let code = "from flask import request\n\ndef view(db):\n    name = request.args.get('n')\n    q = \"SELECT * FROM t WHERE n = '\" + name + \"'\"\n    db.execute(q)\n";
    let found = scan("app.py", "python", code, &Specs::builtin()).unwrap();
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    assert_eq!(f.rule_id, "PY-TAINT-SQLI");
    assert_eq!(f.cwe.as_deref(), Some("CWE-89"));
    assert_eq!(f.location.start_line, 6);
    let lines: Vec<u32> = f.flow.iter().map(|s| s.line).collect();
    assert_eq!(lines, vec![4, 5, 6], "{:#?}", f.flow);
    assert!(f.flow[0].note.contains("request.args"), "{:#?}", f.flow);
    assert_eq!(f.flow[2].snippet, "db.execute(q)");
    assert!(
        f.flow[2].note.starts_with("sink: db.execute"),
        "{:#?}",
        f.flow
    );
}

#[test]
fn a_taint_section_extends_the_builtin_specs_and_bad_entries_name_the_field() {
    use std::path::Path;
    let cfg = crate::SecurityConfig::parse(
        "taint:\n  - language: python\n    sources:\n      calls: [get_user_input]\n    sinks:\n      - category: command\n        calls: [run_it]\n",
        Path::new(".security.yaml"),
    )
    .unwrap();
    let mut specs = Specs::builtin();
    for t in &cfg.taint {
        specs.add(t).unwrap();
    }
    let found = scan(
        "a.py",
        "python",
        "x = get_user_input()\nrun_it(x)\n",
        &specs,
    )
    .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].rule_id, "PY-TAINT-CMDI");

    let e = crate::SecurityConfig::parse(
        "taint:\n  - language: python\n    sinks:\n      - category: sqlinjection\n        calls: [q]\n",
        Path::new(".security.yaml"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains(".security.yaml"), "{e}");
    assert!(e.contains("taint[0].sinks[0].category"), "{e}");
    assert!(e.contains("unknown category `sqlinjection`"), "{e}");

    let e = crate::SecurityConfig::parse(
        "taint:\n  - language: python\n    sinks:\n      - category: sqli\n        call: [q]\n",
        Path::new(".security.yaml"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains(".security.yaml:5:"), "{e}");
    assert!(e.contains("unknown field `call`"), "{e}");

    let e =
        crate::SecurityConfig::parse("taint:\n  - language: cobol\n", Path::new(".security.yaml"))
            .unwrap_err()
            .to_string();
    assert!(e.contains("taint[0].language"), "{e}");
    assert!(e.contains("`cobol` has no taint adapter"), "{e}");

    let e = crate::SecurityConfig::parse(
        "taint:\n  - language: python\n    sources:\n      calls: [get_user_input]\n      local: [read_cli]\n",
        Path::new(".security.yaml"),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("taint[0].sources.local[0]"), "{e}");
    assert!(
        e.contains("`read_cli` is not one of this entry's `sources.exprs` or `sources.calls`"),
        "{e}"
    );
}

#[test]
fn a_path_from_the_local_users_input_is_not_a_finding_but_other_sinks_and_remote_input_are() {
    // The command line, the environment and stdin name files the user who
    // runs the program may open anyway.
    let local = r#"
import os, sys
def main():
    name = sys.argv[1]
    with open(name) as f:
        print(f.read())
    with open(os.environ["CONFIG"] + "/app.ini") as f:
        pass
    open(input("file? "))
"#;
    assert_eq!(rules("python", local), Vec::<String>::new());
    // The same local input into a shell is still command injection.
    let shell = "import os, sys
os.system('ls ' + sys.argv[1])
";
    assert_eq!(rules("python", shell), vec!["PY-TAINT-CMDI"]);
    // A path from a request, or from a request and the command line, is.
    let remote = r#"
import sys
from flask import request
@app.route("/f")
def f():
    open(request.args["p"])
    open(sys.argv[1] + request.args["q"])
    return "ok"
"#;
    assert_eq!(
        hits("python", remote),
        vec![
            ("PY-TAINT-PATH".to_string(), 6),
            ("PY-TAINT-PATH".to_string(), 7)
        ]
    );
    // JavaScript: process.argv names a file; a query parameter does not.
    let js = "const fs = require('fs');
fs.readFileSync(process.argv[2]);
app.get('/', (req, res) => { fs.readFileSync(req.query.f); });
";
    assert_eq!(
        hits("javascript", js),
        vec![("JS-TAINT-PATH".to_string(), 3)]
    );
}

#[test]
#[ignore]
fn debug_dump() {
    let lang = std::env::var("L").unwrap();
    let code = std::fs::read_to_string(std::env::var("F").unwrap()).unwrap();
    let tree = agent_syntax::parse_tree(&lang, &code).unwrap();
    println!("{}", tree.root_node().to_sexp());
    for f in scan("t", &lang, &code, &Specs::builtin()).unwrap() {
        println!("{} {} {:#?}", f.rule_id, f.location.start_line, f.flow);
    }
}

#[test]
fn deeply_nested_code_neither_overflows_the_stack_nor_hangs() {
    // 20,000 nested parentheses and a 20,000-term concatenation.
    let deep = format!(
        "def f():\n    x = {}request.args['a']{}\n    y = request.args['b']{}\n    os.system(y)\n",
        "(".repeat(20_000),
        ")".repeat(20_000),
        " + 'a'".repeat(20_000)
    );
    let started = std::time::Instant::now();
    let found = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || hits("python", &deep))
        .expect("thread")
        .join()
        .expect("no stack overflow");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // The nesting limit makes the deep parts clean: nothing is invented.
    assert!(found.iter().all(|(r, _)| r == "PY-TAINT-CMDI"), "{found:?}");
}

/// Throughput of the taint engine alone (one thread) on ~100,000 generated
/// lines shaped like the security bench's corpus. Ignored: a measurement,
/// not a check (`cargo test -p agent-security --lib taint_throughput --
/// --ignored --nocapture`; the release numbers come from the bench).
#[test]
#[ignore]
fn taint_throughput() {
    let py = "def handler_N(request, db):\n    name = request.args.get(\"name\", \"\")\n    items = [x.strip() for x in name.split(\",\") if x]\n    total = sum(len(x) for x in items)\n    if total > 10:\n        return {\"error\": \"too long\"}\n    cur = db.cursor()\n    cur.execute(\"SELECT id FROM users WHERE name = ?\", (name,))\n    cur.execute(\"DELETE FROM t WHERE id = \" + request.args[\"id\"])\n    return {\"rows\": cur.fetchall(), \"total\": total}\n\n";
    let js = "app.get(\"/items/N\", async (req, res) => {\n  const limit = Number.parseInt(req.query.limit ?? \"10\", 10);\n  const items = await store.list({ limit, offset: 3 });\n  const names = items.map((it) => it.name.trim()).filter(Boolean);\n  res.json({ names, count: names.length });\n});\n\n";
    let go = "func HandleN(w http.ResponseWriter, r *http.Request) {\n\tname := r.URL.Query().Get(\"name\")\n\tif len(name) > 10 {\n\t\thttp.Error(w, \"too long\", http.StatusBadRequest)\n\t\treturn\n\t}\n\tfmt.Fprintf(w, \"hello %s\", html.EscapeString(name))\n}\n\n";
    let java = "    public int computeN(List<String> values, HttpServletRequest request) {\n        int total = 3;\n        String p = request.getParameter(\"p\");\n        for (String v : values) {\n            if (v != null && !v.isEmpty()) {\n                total += v.length();\n            }\n        }\n        return total;\n    }\n\n";
    let files: Vec<(&str, String)> = vec![
        ("python", py.repeat(40)),
        ("javascript", js.repeat(40)),
        ("go", format!("package h\n\n{}", go.repeat(40))),
        ("java", format!("class S {{\n{}}}\n", java.repeat(40))),
    ];
    let per_round: usize = files.iter().map(|(_, t)| t.lines().count()).sum();
    let rounds = 100_000 / per_round + 1;
    let specs = Specs::builtin();
    let started = std::time::Instant::now();
    let mut found = 0;
    for _ in 0..rounds {
        for (lang, text) in &files {
            found += scan("f", lang, text, &specs).expect("scan").len();
        }
    }
    let elapsed = started.elapsed();
    println!(
        "taint: {} lines in {:?} ({} findings, one thread)",
        rounds * per_round,
        elapsed,
        found
    );
}

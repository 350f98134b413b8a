//! `agent wiki` end to end: a real multi-language project (a Cargo
//! workspace of three crates, two Python packages, two npm packages, real
//! imports between them, a git repository), the real binary, the built-in
//! wiki-base and security-base skills, and a scripted model server on
//! 127.0.0.1 answering through `write_wiki_section` — once with an invented
//! definition (rejected), once with an invented edge (dropped).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use agent_tests::model_server::{ModelServer, Reply, Wire, tokio_rt};
use agent_tests::wiki_check::{d2_parse, dot_parse, hugo_build, mermaid_parse_all, mkdocs_build};
use agent_tests::{Sandbox, build_guest, text, write_skill};
use serde_json::{Value, json};

use super::{code, git, ok, sandbox, write};

/// The import edges between the project's modules, as written in its
/// files below — what every dependency diagram must show, no more.
const EDGES: &[(&str, &str)] = &[
    ("loader", "analytics"),
    ("report", "wiki-store"),
    ("web-ui", "@demo/shared"),
    ("wiki-cli", "wiki-store"),
];

/// The modules with source, in the order their summaries are asked.
const SUMMARIES: &[&str] = &[
    "@demo/shared",
    "analytics",
    "loader",
    "report",
    "web-ui",
    "wiki-cli",
    "wiki-store",
];

/// The synthesis sections, in the order they are asked.
const SYNTHESIS: &[&str] = &[
    "architecture",
    "data-flow",
    "key-abstractions",
    "design-patterns",
    "improvements",
    "performance",
];

fn project(sb: &Sandbox) {
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    write(
        p,
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n",
    );
    write(p, "README.md", "# demo\n");
    write(
        p,
        "crates/store/Cargo.toml",
        "[package]\nname = \"wiki-store\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    write(
        p,
        "crates/store/src/lib.rs",
        "//! Storage.\n\n/// A key-value store kept in memory.\npub struct Store {\n    items: Vec<(String, String)>,\n}\n\nimpl Store {\n    /// An empty store.\n    pub fn open() -> Store {\n        Store { items: Vec::new() }\n    }\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn opens() {\n        let _ = super::Store::open();\n    }\n}\n",
    );
    write(
        p,
        "crates/cli/Cargo.toml",
        "[package]\nname = \"wiki-cli\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nwiki-store = { path = \"../store\" }\n",
    );
    write(
        p,
        "crates/cli/src/main.rs",
        "use wiki_store::Store;\n\n/// Opens the store and exits.\nfn main() {\n    let _store = Store::open();\n}\n",
    );
    write(
        p,
        "crates/report/Cargo.toml",
        "[package]\nname = \"report\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nwiki-store = { path = \"../store\" }\n",
    );
    write(
        p,
        "crates/report/src/lib.rs",
        "use wiki_store::Store;\n\n/// Renders a store.\npub fn render(_s: &Store) -> String {\n    String::new()\n}\n",
    );
    write(p, "py/analytics/__init__.py", "\"\"\"Analytics.\"\"\"\n");
    write(
        p,
        "py/analytics/stats.py",
        "def mean(xs):\n    \"\"\"The mean of xs.\"\"\"\n    return sum(xs) / len(xs)\n",
    );
    write(
        p,
        "py/analytics/test_stats.py",
        "from analytics.stats import mean\n\n\ndef test_mean():\n    assert mean([1, 3]) == 2\n",
    );
    write(
        p,
        "py/loader/__init__.py",
        "import analytics.stats\n\n\ndef load(path):\n    \"\"\"Loads numbers and averages them.\"\"\"\n    return analytics.stats.mean([1, 2])\n",
    );
    write(
        p,
        "shared/package.json",
        "{\"name\": \"@demo/shared\", \"version\": \"1.0.0\"}\n",
    );
    write(
        p,
        "shared/index.ts",
        "/** Formats a number. */\nexport function format(n: number): string {\n  return `${n}`;\n}\n",
    );
    write(
        p,
        "web/package.json",
        "{\"name\": \"web-ui\", \"version\": \"1.0.0\"}\n",
    );
    write(
        p,
        "web/src/app.ts",
        "import { format } from '@demo/shared';\nimport { clamp } from './util';\n\n/** Starts the UI. */\nexport function start(): string {\n  return format(clamp(3));\n}\n",
    );
    write(
        p,
        "web/src/util.ts",
        "export function clamp(n: number): number {\n  return Math.max(0, n);\n}\n",
    );
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "demo"]);
}

fn section(wire: Wire, id: &str, input: &Value) -> Vec<Reply> {
    vec![
        wire.tool(&format!("c-{id}"), "write_wiki_section", input),
        wire.answer("Done."),
    ]
}

fn summary(name: &str, version: &str) -> Value {
    let (text, symbols): (String, Vec<&str>) = match name {
        "wiki-store" => (
            "Keeps items in a `Store`, created by `open`.".into(),
            vec!["Store", "open"],
        ),
        "wiki-cli" => (
            "The program: `main` opens a `Store`.".into(),
            vec!["main", "Store"],
        ),
        "loader" => (
            format!("Loads numbers with `load` ({version})."),
            vec!["load"],
        ),
        "analytics" => (
            "Statistics: `mean`, tested in `py/analytics/test_stats.py`.".into(),
            vec!["mean"],
        ),
        _ => (format!("The `{name}` module."), vec![]),
    };
    json!({"section": format!("summary:{name}"), "text": text, "symbols": symbols})
}

/// The replies of a standard-depth run: every summary, then every
/// synthesis section; analytics' first answer invents a definition
/// (rejected, then corrected), the architecture answer labels a real edge
/// and an invented one, and groups a module that does not exist.
fn script(wire: Wire, summaries: &[&str], version: &str) -> Vec<Reply> {
    let mut r = Vec::new();
    for name in summaries {
        if *name == "analytics" && version == "v1" {
            r.push(wire.tool(
                "c-bad",
                "write_wiki_section",
                &json!({"section": "summary:analytics", "text": "Caches results with `Cache::flush`.", "symbols": ["Cache"]}),
            ));
        }
        r.extend(section(
            wire,
            &format!("summary:{name}"),
            &summary(name, version),
        ));
    }
    for id in SYNTHESIS {
        let mut input = json!({"section": id, "text": format!("The {id} of the demo ({version}): `wiki-cli` uses `wiki-store`."), "modules": ["wiki-cli", "wiki-store"]});
        if *id == "architecture" {
            input["relations"] = json!([
                {"from": "wiki-cli", "to": "wiki-store", "label": "opens the store"},
                {"from": "analytics", "to": "web-ui", "label": "pushes charts"}
            ]);
            input["groups"] = json!([
                {"name": "storage", "modules": ["wiki-store", "ghost-module"]}
            ]);
        }
        r.extend(section(wire, id, &input));
    }
    r
}

fn served(replies: Vec<Reply>) -> (tokio::runtime::Runtime, ModelServer) {
    let rt = tokio_rt();
    let server = rt.block_on(ModelServer::start(replies)).expect("server");
    (rt, server)
}

fn wiki(sb: &Sandbox, server: Option<&ModelServer>, args: &[&str]) -> Output {
    let mut all: Vec<&str> = vec!["wiki"];
    if let Some(s) = server {
        all.extend([
            "--provider",
            "anthropic",
            "--model",
            "test-model",
            "--base-url",
            s.url(),
        ]);
    }
    all.extend_from_slice(args);
    sb.agent_cmd(&all)
        .current_dir(sb.project.path())
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .expect("running agent")
}

/// The text of `docs/wiki/REL` in the sandbox's project.
fn wiki_page(sb: &Sandbox, rel: &str) -> String {
    let path = sb.project.path().join("docs/wiki").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir` (relative path → text), the state file excluded.
fn files(dir: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, d: &Path, out: &mut BTreeMap<String, String>) {
        for e in std::fs::read_dir(d).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .expect("rel")
                    .to_string_lossy()
                    .replace('\\', "/");
                if rel != ".wiki-state.json" {
                    out.insert(rel, std::fs::read_to_string(&p).expect("utf-8"));
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Every relative Markdown link of every page resolves to a file.
fn check_links(dir: &Path, all: &BTreeMap<String, String>) {
    let mut checked = 0;
    for (rel, text) in all.iter().filter(|(r, _)| r.ends_with(".md")) {
        let base = dir.join(rel);
        let base = base.parent().expect("parent");
        let mut rest = text.as_str();
        while let Some(i) = rest.find("](") {
            let after = &rest[i + 2..];
            let end = after.find(')').expect("closing parenthesis");
            let target = &after[..end];
            rest = &after[end..];
            if target.contains("://") || target.starts_with('#') {
                continue;
            }
            let target = target.split('#').next().expect("path");
            assert!(
                base.join(target).is_file(),
                "{rel}: the link to {target} does not resolve"
            );
            checked += 1;
        }
    }
    assert!(checked > 30, "only {checked} links checked");
}

/// The text of the first fenced block of `lang` in `page`.
fn first_block<'a>(page: &'a str, lang: &str) -> &'a str {
    page.split(format!("```{lang}\n").as_str())
        .nth(1)
        .unwrap_or_else(|| panic!("no {lang} block in:\n{page}"))
        .split("```")
        .next()
        .expect("block")
}

/// The edges of the first Mermaid `graph` block of `page`, by label.
fn mermaid_edges(page: &str) -> BTreeSet<(String, String)> {
    let block = first_block(page, "mermaid");
    let mut names = BTreeMap::new();
    let mut edges = BTreeSet::new();
    for line in block.lines().map(str::trim) {
        if let Some((id, rest)) = line.split_once("[\"") {
            names.insert(
                id.to_string(),
                rest.trim_end_matches("\"]").replace("#quot;", "\""),
            );
        } else if let Some((a, rest)) = line.split_once(" -->") {
            let b = rest.rsplit(' ').next().expect("target");
            edges.insert((a.to_string(), b.to_string()));
        }
    }
    edges
        .into_iter()
        .map(|(a, b)| (names[&a].clone(), names[&b].clone()))
        .collect()
}

/// Every fenced block of `lang` in the files.
fn blocks<'a>(all: &'a BTreeMap<String, String>, lang: &str) -> Vec<&'a str> {
    let fence = format!("```{lang}\n");
    all.values()
        .flat_map(|t| {
            t.split(fence.as_str())
                .skip(1)
                .map(|b| b.split("```").next().expect("block"))
        })
        .collect()
}

/// Every diagram block parses with the language's own parser (mermaid
/// under node, Graphviz `dot`, `d2 validate`).
fn diagrams_parse(all: &BTreeMap<String, String>, lang: &str) {
    let found = blocks(all, lang);
    assert!(found.len() >= 3, "{lang}: {} blocks", found.len());
    match lang {
        "mermaid" => {
            let results = mermaid_parse_all(&found).expect("mermaid");
            for (b, r) in found.iter().zip(results) {
                r.unwrap_or_else(|e| panic!("mermaid block does not parse: {e}\n{b}"));
            }
        }
        "dot" => {
            for b in &found {
                dot_parse(b).unwrap_or_else(|e| panic!("dot block does not parse: {e}\n{b}"));
            }
        }
        _ => {
            for b in &found {
                d2_parse(b).unwrap_or_else(|e| panic!("d2 block does not parse: {e}\n{b}"));
            }
        }
    }
}

fn expected_edges() -> BTreeSet<(String, String)> {
    EDGES
        .iter()
        .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
        .collect()
}

/// Appendix D's files (in Appendix D's names: `_index.md` and the rest).
const APPENDIX_D: &[&str] = &[
    "_index.md",
    "architecture/overview.md",
    "architecture/data-flow.md",
    "architecture/dependencies.md",
    "modules/_index.md",
    "modules/wiki-store.md",
    "modules/demo-shared.md",
    "code-structure/overview.md",
    "code-structure/key-abstractions.md",
    "code-structure/design-patterns.md",
    "testing/coverage-report.md",
    "testing/testing-gaps.md",
    "security/overview.md",
    "security/findings.md",
    "security/dependencies.md",
    "security/recommendations.md",
    "security/sbom.md",
    "suggestions/improvements.md",
    "suggestions/security.md",
    "suggestions/performance.md",
    "glossary.md",
];

fn appendix_d(prefix: &str, index: &str) -> Vec<String> {
    APPENDIX_D
        .iter()
        .map(|f| match f.strip_suffix("_index.md") {
            Some(d) => format!("{prefix}{d}{index}"),
            None => format!("{prefix}{f}"),
        })
        .collect()
}

#[test]
fn a_standard_wiki_with_a_model_that_invents_a_definition_and_an_edge() {
    let sb = sandbox();
    project(&sb);
    let (_rt, server) = served(script(Wire::Anthropic, SUMMARIES, "v1"));
    let out = wiki(&sb, Some(&server), &[]);
    let stdout = ok(&out);
    let dir = sb.project.path().join("docs/wiki");
    let all = files(&dir);
    for f in appendix_d("", "_index.md") {
        assert!(all.contains_key(&f), "{f} missing; files: {:?}", all.keys());
    }
    check_links(&dir, &all);
    diagrams_parse(&all, "mermaid");

    // The dependency diagram is the import graph: every edge, no other.
    assert_eq!(
        mermaid_edges(&all["architecture/dependencies.md"]),
        expected_edges()
    );
    assert_eq!(
        mermaid_edges(&all["architecture/overview.md"]),
        expected_edges()
    );
    // The model's label of a real edge is drawn; its invented edge and
    // its ghost module are dropped and reported.
    assert!(all["architecture/dependencies.md"].contains("|\"opens the store\"|"));
    assert!(!all.values().any(|t| t.contains("pushes charts")));
    assert!(!all.values().any(|t| t.contains("ghost-module")));
    assert!(
        stdout.contains("dropped: edge `analytics` → `web-ui` (no such import)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("dropped: group of unknown module `ghost-module`"),
        "{stdout}"
    );

    // The invented definition was rejected; the corrected summary is on
    // the page, the invented one nowhere.
    assert!(stdout.contains("1 answers rejected"), "{stdout}");
    assert!(!all.values().any(|t| t.contains("Cache::flush")));
    assert!(all["modules/analytics.md"].contains("Statistics: `mean`"));
    let body: String = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        body.contains("the project has no definition `Cache`"),
        "the rejection went back to the model"
    );

    // Structural facts: the public API with signature and doc comment,
    // the entry point, the tests.
    let store = &all["modules/wiki-store.md"];
    assert!(
        store.contains(
            "`pub struct Store` — `crates/store/src/lib.rs:4`: A key-value store kept in memory."
        ),
        "{store}"
    );
    assert!(all["architecture/overview.md"].contains("`crates/cli/src/main.rs`"));
    assert!(all["testing/testing-gaps.md"].contains("[report]"));
    assert!(!all["testing/testing-gaps.md"].contains("[wiki-store]"));

    // 7 summaries + 6 synthesis sections, 2 requests each, + 1 rejected.
    assert_eq!(server.requests().len(), 27);
    assert!(
        stdout.contains("model: 27 requests made, 0 sections from the cache"),
        "{stdout}"
    );
    assert!(stdout.contains("diagrams, format raw-md"), "{stdout}");
}

#[test]
fn an_incremental_run_asks_only_for_the_changed_module_and_the_synthesis() {
    let sb = sandbox();
    project(&sb);
    let (_rt, server) = served(script(Wire::Anthropic, SUMMARIES, "v1"));
    ok(&wiki(&sb, Some(&server), &[]));
    let dir = sb.project.path().join("docs/wiki");
    let before = files(&dir);

    write(
        sb.project.path(),
        "py/loader/__init__.py",
        "import analytics.stats\n\n\ndef load(path):\n    \"\"\"Loads numbers and averages them.\"\"\"\n    return analytics.stats.mean([1, 2])\n\n\ndef reload(path):\n    return load(path)\n",
    );
    let (_rt2, server2) = served(script(Wire::Anthropic, &["loader"], "v2"));
    let out = wiki(&sb, Some(&server2), &["--incremental"]);
    let stdout = ok(&out);
    // One summary and the six synthesis sections: 14 requests, 6 from the cache.
    assert_eq!(server2.requests().len(), 14, "{stdout}");
    assert!(
        stdout.contains("model: 14 requests made, 6 sections from the cache"),
        "{stdout}"
    );
    assert!(
        stdout.contains("(1 changed since the last run)"),
        "{stdout}"
    );
    let after = files(&dir);
    let changed: BTreeSet<&str> = after
        .iter()
        .filter(|(f, t)| before.get(*f) != Some(*t))
        .map(|(f, _)| f.as_str())
        .collect();
    for must in [
        "modules/loader.md",
        "architecture/overview.md",
        "suggestions/improvements.md",
    ] {
        assert!(
            changed.contains(must),
            "{must} unchanged; changed: {changed:?}"
        );
    }
    // Other modules' pages are byte-identical.
    for m in [
        "analytics",
        "wiki-store",
        "wiki-cli",
        "report",
        "web-ui",
        "demo-shared",
    ] {
        let page = format!("modules/{m}.md");
        assert!(!changed.contains(page.as_str()), "{page} changed");
    }
    let allowed: BTreeSet<&str> = [
        "modules/loader.md",
        "modules/_index.md",
        "_index.md",
        "glossary.md",
        "code-structure/overview.md",
        "testing/coverage-report.md",
        "testing/testing-gaps.md",
    ]
    .into_iter()
    .collect();
    let synthesis_pages = [
        "architecture/overview.md",
        "architecture/data-flow.md",
        "code-structure/key-abstractions.md",
        "code-structure/design-patterns.md",
        "suggestions/improvements.md",
        "suggestions/performance.md",
    ];
    for c in &changed {
        assert!(
            allowed.contains(c) || synthesis_pages.contains(c),
            "{c} changed"
        );
    }

    // --full ignores the state: every section is asked again.
    let (_rt3, server3) = served(script(Wire::Anthropic, SUMMARIES, "v1"));
    let out = wiki(&sb, Some(&server3), &["--full"]);
    let stdout = ok(&out);
    assert!(stdout.contains("0 sections from the cache"), "{stdout}");
}

#[test]
fn every_format_writes_appendix_d_with_links_that_resolve() {
    let sb = sandbox();
    project(&sb);
    for (format, diagrams, prefix, index, extra) in [
        ("mkdocs", "mermaid", "docs/", "index.md", "mkdocs.yml"),
        ("hugo", "dot", "content/", "_index.md", "hugo.toml"),
        ("docusaurus", "d2", "docs/", "index.md", "sidebars.js"),
        ("raw-md", "mermaid", "", "_index.md", "glossary.md"),
    ] {
        let out_dir = format!("site-{format}");
        let out = wiki(
            &sb,
            None,
            &[
                "--no-llm",
                "--format",
                format,
                "--diagrams",
                diagrams,
                "--output",
                &out_dir,
            ],
        );
        let stdout = ok(&out);
        assert!(
            stdout.contains("model: none (--no-llm: structural wiki)"),
            "{stdout}"
        );
        let dir: PathBuf = sb.project.path().join(&out_dir);
        let all = files(&dir);
        assert!(all.contains_key(extra), "{format}: {extra} missing");
        for f in appendix_d(prefix, index) {
            assert!(
                all.contains_key(&f),
                "{format}: {f} missing; files: {:?}",
                all.keys()
            );
        }
        check_links(&dir, &all);
        diagrams_parse(&all, diagrams);
        match format {
            "mkdocs" => mkdocs_build(&dir).unwrap_or_else(|e| panic!("mkdocs build --strict: {e}")),
            "hugo" => hugo_build(&dir).unwrap_or_else(|e| panic!("hugo: {e}")),
            _ => {}
        }
        let index_page = &all[&format!("{prefix}{index}")];
        assert!(
            index_page.contains("Structural wiki"),
            "{format}: {index_page}"
        );
        let deps = &all[&format!("{prefix}architecture/dependencies.md")];
        assert!(
            deps.contains(&format!("```{diagrams}\n")),
            "{format}: {deps}"
        );
        if format == "hugo" || format == "docusaurus" {
            assert!(
                index_page.starts_with("---\ntitle: "),
                "{format}: front matter"
            );
        }
        if diagrams == "dot" {
            // Every DOT edge is an import edge, every import edge is drawn.
            let block = first_block(deps, "dot");
            let mut names = BTreeMap::new();
            let mut edges = BTreeSet::new();
            for l in block.lines().map(str::trim) {
                if let Some((id, rest)) = l.split_once(" [label=\"")
                    && !id.contains("->")
                {
                    names.insert(id.to_string(), rest.trim_end_matches("\"];").to_string());
                }
                if let Some((a, rest)) = l.split_once(" -> ") {
                    let b = rest.split(' ').next().expect("b");
                    edges.insert((a.to_string(), b.to_string()));
                }
            }
            let edges: BTreeSet<(String, String)> = edges
                .into_iter()
                .map(|(a, b)| (names[&a].clone(), names[&b].clone()))
                .collect();
            assert_eq!(edges, expected_edges(), "{format}");
        }
    }
    let mkdocs = std::fs::read_to_string(sb.project.path().join("site-mkdocs/mkdocs.yml"))
        .expect("mkdocs.yml");
    assert!(mkdocs.contains("docs_dir: docs"), "{mkdocs}");
    assert!(mkdocs.contains("\"modules/wiki-store.md\""), "{mkdocs}");
}

#[test]
fn without_a_model_it_says_so_and_bad_flags_name_the_flag() {
    let sb = sandbox();
    project(&sb);
    let out = sb
        .agent_cmd(&["wiki"])
        .current_dir(sb.project.path())
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::null())
        .output()
        .expect("agent");
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 3, "{stderr}");
    assert!(
        stderr.contains("run `agent wiki --no-llm` for the structural wiki"),
        "{stderr}"
    );
    assert!(!sb.project.path().join("docs/wiki").exists());

    let out = wiki(&sb, None, &["--no-llm", "--format", "pdf"]);
    assert_eq!(code(&out), 2);
    assert!(
        text(&out)
            .1
            .contains("--format pdf: expected one of raw-md, mkdocs, hugo, docusaurus"),
        "{}",
        text(&out).1
    );

    // config.toml's [wiki] gives the defaults.
    let file = sb.paths().config_file();
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    std::fs::write(&file, "[wiki]\nformat = \"hugo\"\noutput = \"site\"\n").expect("config");
    ok(&wiki(&sb, None, &["--no-llm"]));
    assert!(sb.project.path().join("site/hugo.toml").is_file());
    assert!(sb.project.path().join("site/content/_index.md").is_file());
}

#[test]
fn the_test_report_runs_the_granted_runners_only() {
    let sb = sandbox();
    project(&sb);
    // Without the grant: the page says the runner was not run and how to grant it.
    let out = wiki(&sb, None, &["--no-llm", "--test-report"]);
    ok(&out);
    let page = wiki_page(&sb, "testing/test-execution.md");
    assert!(
        page.contains("grant it with `--allow core-tools/shell:exec:cargo`"),
        "{page}"
    );
    assert!(
        !sb.project.path().join("target").exists(),
        "cargo ran without its grant"
    );

    // With it: cargo test ran; its one test is on the page.
    let out = wiki(
        &sb,
        None,
        &[
            "--no-llm",
            "--test-report",
            "--allow",
            "core-tools/shell:exec:cargo",
        ],
    );
    ok(&out);
    let page = wiki_page(&sb, "testing/test-execution.md");
    assert!(page.contains("| cargo | 1 | 0 | 0 |"), "{page}");
    assert!(!page.contains("Not run"), "{page}");
    let index = wiki_page(&sb, "_index.md");
    assert!(
        index.contains("[Test execution](testing/test-execution.md)"),
        "{index}"
    );
}

#[test]
fn skills_contribute_sections_and_a_hook_rewrites_every_section() {
    let sb = sandbox();
    project(&sb);
    let skills = sb.project.path().join(".agent/skills");
    write(
        &skills.join("notes"),
        "SKILL.yaml",
        "name: notes\nversion: 0.1.0\ndescription: deployment notes\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\nwiki:\n  sections:\n    - title: \"Deployment Notes\"\n      template: wiki/notes.md\n",
    );
    write(&skills.join("notes"), "PROMPT.md", "Notes.\n");
    write(
        &skills.join("notes"),
        "wiki/notes.md",
        "{{project.name}} has {{modules.count}} modules.\n",
    );
    let out = wiki(&sb, None, &["--no-llm", "--allow-unsigned"]);
    ok(&out);
    let dir = sb.project.path().join("docs/wiki");
    let page = std::fs::read_to_string(dir.join("skill-contributed/deployment-notes.md"))
        .expect("contributed page");
    let name = sb
        .project
        .path()
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(page.contains(&format!("{name} has 8 modules.")), "{page}");
    check_links(&dir, &files(&dir));

    // A hook on on_before_wiki_section replaces each section's Markdown.
    let component = std::fs::read(build_guest("guest-hooks")).expect("guest-hooks");
    write_skill(
        &skills.join("rewriter"),
        "name: rewriter\nversion: 0.1.0\ndescription: hook skill\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\nimplementation:\n  component: skill.wasm\n",
        &component,
        None,
    );
    write(&skills.join("rewriter"), "PROMPT.md", "Hook.\n");
    let file = sb.paths().config_file();
    std::fs::create_dir_all(file.parent().expect("dir")).expect("mkdir");
    std::fs::write(
        &file,
        "[skills.config.rewriter]\nphases = [\"on_before_wiki_section\"]\nstray_response = \"Rewritten by the hook.\"\n",
    )
    .expect("config");
    let out = wiki(&sb, None, &["--no-llm", "--allow-unsigned"]);
    ok(&out);
    for f in [
        "glossary.md",
        "skill-contributed/deployment-notes.md",
        "modules/wiki-store.md",
    ] {
        let t = std::fs::read_to_string(dir.join(f)).expect("page");
        assert_eq!(t, "Rewritten by the hook.", "{f}");
    }
}

/// A prompt skill at `dir` contributing one section, `title`, from
/// `wiki/section.md` = `template` (and `more`: further `wiki:` entries).
fn wiki_skill(dir: &Path, name: &str, title: &str, template: &str, more: &str) {
    write(
        dir,
        "SKILL.yaml",
        &format!(
            "name: {name}\nversion: 0.1.0\ndescription: wiki test skill\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\nwiki:\n  sections:\n    - title: \"{title}\"\n      template: wiki/section.md\n{more}"
        ),
    );
    write(dir, "PROMPT.md", "Wiki test skill.\n");
    write(dir, "wiki/section.md", template);
}

#[test]
fn skills_chooses_the_skills_that_contribute() {
    let sb = sandbox();
    project(&sb);
    let p = sb.project.path();
    wiki_skill(
        &p.join(".agent/skills/notes"),
        "notes",
        "Deployment Notes",
        "Notes of {{project.name}}.\n",
        "",
    );
    let dev = sb.home.path().join("dev/runbook");
    wiki_skill(
        &dev,
        "runbook",
        "Runbook",
        "Run {{modules.count}} modules.\n",
        "",
    );
    let dir = p.join("docs/wiki");
    let notes = dir.join("skill-contributed/deployment-notes.md");
    let runbook = dir.join("skill-contributed/runbook.md");

    // Without --skills: every loaded skill (here the project's) takes part.
    ok(&wiki(&sb, None, &["--no-llm", "--allow-unsigned"]));
    assert!(notes.is_file());
    assert!(!runbook.exists());

    // --skills DIR: that development copy only (unsigned: --allow-unsigned).
    let dev_arg = dev.display().to_string();
    let out = wiki(
        &sb,
        None,
        &["--no-llm", "--allow-unsigned", "--skills", &dev_arg],
    );
    ok(&out);
    let page = std::fs::read_to_string(&runbook).expect("runbook page");
    assert!(page.contains("Run 8 modules."), "{page}");
    assert!(!notes.exists(), "a skill not named took part");
    let index = std::fs::read_to_string(dir.join("_index.md")).expect("index");
    assert!(
        index.contains("(skill-contributed/runbook.md)") && !index.contains("deployment-notes"),
        "{index}"
    );

    // --skills NAME: that loaded skill only.
    ok(&wiki(
        &sb,
        None,
        &["--no-llm", "--allow-unsigned", "--skills", "notes"],
    ));
    assert!(notes.is_file());
    assert!(!runbook.exists());

    // Bad names are usage errors naming the flag and the value.
    for (name, says) in [
        (
            "nosuch",
            "--skills nosuch: no such skill is installed or loaded",
        ),
        ("core-tools", "--skills core-tools: gives a wiki nothing"),
    ] {
        let out = wiki(&sb, None, &["--no-llm", "--skills", name]);
        let stderr = text(&out).1;
        assert_eq!(code(&out), 2, "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
}

#[test]
fn a_skill_diagram_is_rendered_as_mermaid_whatever_the_diagram_format() {
    let sb = sandbox();
    project(&sb);
    let dev = sb.home.path().join("dev/runbook");
    wiki_skill(
        &dev,
        "runbook",
        "Runbook",
        "Run it.\n",
        "  diagrams:\n    - type: deployment-topology\n      template: wiki/topology.mmd\n",
    );
    write(
        &dev,
        "wiki/topology.mmd",
        "graph LR\n  project[\"{{project.name}}\"]\n  count[\"{{modules.count}} modules, {{languages}}\"]\n  project --> count\n",
    );
    let dev_arg = dev.display().to_string();
    let out = wiki(
        &sb,
        None,
        &["--no-llm", "--diagrams", "dot", "--skills", &dev_arg],
    );
    ok(&out);
    let dir = sb.project.path().join("docs/wiki");
    let all = files(&dir);
    let page = &all["skill-contributed/runbook-deployment-topology.md"];
    let name = sb
        .project
        .path()
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    assert!(
        page.starts_with("# Deployment topology (runbook)\n"),
        "{page}"
    );
    assert!(
        page.contains(&format!("  project[\"{name}\"]\n")) && page.contains("8 modules, "),
        "{page}"
    );
    // Mermaid whatever --diagrams is; the generator's own diagrams are DOT.
    let mermaid = blocks(&all, "mermaid");
    assert_eq!(mermaid.len(), 1, "{mermaid:?}");
    for r in mermaid_parse_all(&mermaid).expect("mermaid") {
        r.unwrap_or_else(|e| panic!("the skill's diagram does not parse: {e}\n{page}"));
    }
    diagrams_parse(&all, "dot");
    assert!(
        all["_index.md"].contains(
            "[Deployment topology (runbook)](skill-contributed/runbook-deployment-topology.md)"
        ),
        "{}",
        all["_index.md"]
    );
    check_links(&dir, &all);
}

#[test]
fn analyzers_run_as_workflows_and_their_failures_are_on_the_page() {
    let sb = sandbox();
    project(&sb);
    let dev = sb.home.path().join("dev/k8s");
    let component = std::fs::read(build_guest("guest-wiki-analyzer")).expect("guest");
    write_skill(
        &dev,
        "name: k8s\nversion: 0.1.0\ndescription: wiki analyzers\ntypes: [workflow]\nimplementation:\n  component: skill.wasm\nwiki:\n  sections:\n    - title: \"Cluster\"\n      template: wiki/cluster.md\n      analyzer: k8s-facts\n    - title: \"Cluster Facts\"\n      analyzer: k8s-facts\n    - title: \"Nested\"\n      template: wiki/cluster.md\n      analyzer: nested\n    - title: \"Broken\"\n      analyzer: broken\n    - title: \"Missing\"\n      analyzer: no-such\n",
        &component,
        None,
    );
    write(
        &dev,
        "wiki/cluster.md",
        "{{analyzer.project}} runs {{ analyzer.replicas }} replicas of {{analyzer.modules}} modules; python: {{analyzer.python}}.\n",
    );
    let dev_arg = dev.display().to_string();
    let dir = sb.project.path().join("docs/wiki");
    let page = |id: &str| {
        std::fs::read_to_string(dir.join(format!("skill-contributed/{id}.md"))).expect("page")
    };

    // An unsigned development copy takes part only with --allow-unsigned.
    let out = wiki(&sb, None, &["--no-llm", "--skills", &dev_arg]);
    let (_, stderr) = text(&out);
    assert!(stderr.contains("--allow-unsigned"), "{stderr}");
    assert!(!dir.join("skill-contributed/cluster.md").exists());

    let out = wiki(
        &sb,
        None,
        &["--no-llm", "--allow-unsigned", "--skills", &dev_arg],
    );
    let stdout = ok(&out);
    let (_, stderr) = text(&out);
    let name = sb
        .project
        .path()
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    // The workflow got the project, its 8 modules and its languages.
    assert_eq!(
        page("cluster"),
        format!("# Cluster\n\n{name} runs 3 replicas of 8 modules; python: true.\n")
    );
    assert!(
        page("cluster-facts").contains("| `analyzer.replicas` | 3 |"),
        "{}",
        page("cluster-facts")
    );
    // Failures: the page says which skill, which workflow, what; a warning
    // says the same; the wiki is written.
    for (id, problem) in [
        (
            "nested",
            "skill `k8s`: analyzer `nested`: key `cluster` is an object: only strings, numbers and booleans can be template variables",
        ),
        ("broken", "skill `k8s`: analyzer `broken`: failed: "),
        (
            "missing",
            "skill `k8s`: analyzer `no-such`: not exported: the component has no such workflow (its workflows: k8s-facts, nested, broken)",
        ),
    ] {
        let text = page(id);
        assert!(
            text.contains(&format!("*This section could not be written: {problem}")),
            "{text}"
        );
        let title = text.lines().next().unwrap_or("").trim_start_matches("# ");
        assert!(
            stderr.contains(&format!("warning: wiki section `{title}`: {problem}")),
            "{stderr}"
        );
    }
    assert!(page("broken").contains("no cluster manifests found"));
    assert!(stdout.contains("wiki: "), "{stdout}");
    check_links(&dir, &files(&dir));
}

#[test]
fn a_skills_file_classifiers_change_the_classes_and_the_pages() {
    let sb = sandbox();
    project(&sb);
    let dir = sb.project.path().join("docs/wiki");
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("page");

    // The generator's own rules: report's lib.rs is source, untested.
    ok(&wiki(&sb, None, &["--no-llm"]));
    assert!(
        read("modules/report.md").contains("| `crates/report/src/lib.rs` | source |"),
        "{}",
        read("modules/report.md")
    );
    assert!(read("testing/testing-gaps.md").contains("[report]"));
    assert!(
        read("modules/_index.md").contains("| `crates/report` | 2 | 6 |"),
        "{}",
        read("modules/_index.md")
    );

    // A skill's classifiers come first: crates/report is generated code,
    // web/src/util.ts a test file.
    let dev = sb.home.path().join("dev/codegen");
    wiki_skill(
        &dev,
        "codegen",
        "Code Generation",
        "Generated code is not documented.\n",
        "  classifiers:\n    - pattern: \"crates/report/**\"\n      class: generated\n    - pattern: \"**/util.ts\"\n      class: test\n    - pattern: \"crates/**\"\n      class: docs\n",
    );
    let dev_arg = dev.display().to_string();
    ok(&wiki(&sb, None, &["--no-llm", "--skills", &dev_arg]));
    let report = read("modules/report.md");
    assert!(
        report.contains("| `crates/report/src/lib.rs` | generated |"),
        "{report}"
    );
    // The first match wins: crates/report is not docs.
    assert!(!report.contains("| docs |"), "{report}");
    assert!(
        read("modules/_index.md").contains("| `crates/report` | 2 | 0 |"),
        "{}",
        read("modules/_index.md")
    );
    assert!(
        !read("testing/testing-gaps.md").contains("[report]"),
        "{}",
        read("testing/testing-gaps.md")
    );
    assert!(
        read("testing/coverage-report.md").contains("| [web-ui](../modules/web-ui.md) | 1 |"),
        "{}",
        read("testing/coverage-report.md")
    );
    assert!(read("modules/web-ui.md").contains("| `web/src/util.ts` | test |"));
    // Another skill's classifiers do not apply when --skills leaves it out.
    ok(&wiki(&sb, None, &["--no-llm"]));
    assert!(read("modules/report.md").contains("| `crates/report/src/lib.rs` | source |"));
}

#[test]
fn skills_with_a_model_the_selected_skill_contributes_and_the_model_writes() {
    let sb = sandbox();
    project(&sb);
    let dev = sb.home.path().join("dev/runbook");
    wiki_skill(&dev, "runbook", "Runbook", "Run it.\n", "");
    let replies: Vec<Reply> = SUMMARIES
        .iter()
        .flat_map(|name| {
            section(
                Wire::Anthropic,
                &format!("summary:{name}"),
                &summary(name, "v2"),
            )
        })
        .collect();
    let (_rt, server) = served(replies);
    let dev_arg = dev.display().to_string();
    let out = wiki(
        &sb,
        Some(&server),
        &["--depth", "quick", "--skills", &dev_arg],
    );
    let stdout = ok(&out);
    assert!(stdout.contains("model: 14 requests made"), "{stdout}");
    let dir = sb.project.path().join("docs/wiki");
    let store = std::fs::read_to_string(dir.join("modules/wiki-store.md")).expect("page");
    assert!(store.contains("Keeps items in a `Store`"), "{store}");
    assert!(dir.join("skill-contributed/runbook.md").is_file());
}

//! Stage 5: the pages of Appendix D's layout, from the project, the
//! diagrams and the model's prose. Links between pages are written
//! `(@/path.md)` and resolved by the format ([`crate::formats`]).

use std::collections::{BTreeMap, BTreeSet};

use agent_config::DiagramFormat;

use crate::diagrams::{self, Hints};
use crate::modules::{FileClass, Module};
use crate::project::Project;

/// One page, by its path in Appendix D's layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// `architecture/overview.md`, `modules/core-lib.md`, ...
    pub path: String,
    /// Its title.
    pub title: String,
    /// Markdown, links as `(@/path.md)`.
    pub body: String,
}

/// What the model wrote (all optional: a structural wiki has none).
#[derive(Debug, Clone, Default)]
pub struct Prose {
    /// Whether a model was asked at all.
    pub model: bool,
    /// Module → its summary.
    pub summaries: BTreeMap<String, String>,
    /// Synthesis section id → text (`architecture`, `data-flow`,
    /// `key-abstractions`, `design-patterns`, `improvements`, `performance`).
    pub sections: BTreeMap<String, String>,
    /// Module → its deep-dive.
    pub deep_dives: BTreeMap<String, String>,
    /// Groups and edge labels for the diagrams (checked).
    pub hints: Hints,
}

/// The synthesis sections the model is asked for, with their pages.
pub const SYNTHESIS: &[(&str, &str)] = &[
    ("architecture", "architecture/overview.md"),
    ("data-flow", "architecture/data-flow.md"),
    ("key-abstractions", "code-structure/key-abstractions.md"),
    ("design-patterns", "code-structure/design-patterns.md"),
    ("improvements", "suggestions/improvements.md"),
    ("performance", "suggestions/performance.md"),
];

/// A module's page.
pub fn module_page(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let slug = slug.trim_matches('-');
    format!(
        "modules/{}.md",
        if slug.is_empty() { "module" } else { slug }
    )
}

/// A link to a page.
pub fn link(text: &str, path: &str) -> String {
    format!("[{}](@/{path})", text.replace(['[', ']'], ""))
}

fn block(format: DiagramFormat, text: &str) -> String {
    format!("```{}\n{}```\n", diagrams::fence(format), text)
}

/// What a page says where the model's prose would be and there is none.
fn missing(prose: &Prose, what: &str) -> String {
    if prose.model {
        format!(
            "*No model text for {what}: the model's budget ran out or it gave no valid answer (see the run's summary).*\n"
        )
    } else {
        format!(
            "*Structural wiki: no model was asked (`--no-llm`), so there is no written {what}.*\n"
        )
    }
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Every page but the security and testing-run ones (the command adds
/// those).
pub fn build(project: &Project, prose: &Prose, format: DiagramFormat) -> Vec<Page> {
    let mut pages = vec![
        index(project, prose),
        arch_overview(project, prose, format),
        data_flow(project, prose, format),
        dependencies(project, prose, format),
        modules_index(project, prose),
        code_overview(project),
        key_abstractions(project, prose),
        synthesis_only(
            prose,
            "design-patterns",
            "code-structure/design-patterns.md",
            "Design patterns",
        ),
        coverage(project),
        gaps(project),
        synthesis_only(
            prose,
            "improvements",
            "suggestions/improvements.md",
            "Improvements",
        ),
        synthesis_only(
            prose,
            "performance",
            "suggestions/performance.md",
            "Performance",
        ),
        glossary(project),
    ];
    for m in &project.modules {
        pages.push(module(project, prose, m));
    }
    pages
}

fn index(p: &Project, prose: &Prose) -> Page {
    let mut b = format!("# {}\n\n", p.name);
    if !prose.model {
        b.push_str("> Structural wiki: generated from the code alone (`--no-llm`); no model wrote any of it.\n\n");
    }
    let source: usize = p
        .modules
        .iter()
        .map(|m| p.lines(m, FileClass::Source))
        .sum();
    let mut langs: BTreeMap<&str, usize> = BTreeMap::new();
    for s in p.scans.values() {
        if let Some(l) = &s.language {
            *langs.entry(l.as_str()).or_default() += 1;
        }
    }
    let langs: Vec<String> = langs
        .iter()
        .map(|(l, n)| format!("{l} ({n} files)"))
        .collect();
    b.push_str(&format!(
        "{} files, {} lines of source in {} modules; languages: {}.\n\n",
        p.scans.len(),
        source,
        p.modules.len(),
        if langs.is_empty() {
            "none".into()
        } else {
            langs.join(", ")
        }
    ));
    b.push_str("## Sections\n\n");
    for (t, path) in [
        ("Architecture overview", "architecture/overview.md"),
        ("Data flow", "architecture/data-flow.md"),
        ("Dependencies", "architecture/dependencies.md"),
        ("Modules", "modules/_index.md"),
        ("Code structure", "code-structure/overview.md"),
        ("Key abstractions", "code-structure/key-abstractions.md"),
        ("Design patterns", "code-structure/design-patterns.md"),
        ("Test coverage", "testing/coverage-report.md"),
        ("Testing gaps", "testing/testing-gaps.md"),
        ("Security", "security/overview.md"),
        ("Improvements", "suggestions/improvements.md"),
        ("Glossary", "glossary.md"),
    ] {
        b.push_str(&format!("- {}\n", link(t, path)));
    }
    Page {
        path: "_index.md".into(),
        title: p.name.clone(),
        body: b,
    }
}

fn arch_overview(p: &Project, prose: &Prose, format: DiagramFormat) -> Page {
    let mut b = "# Architecture overview\n\n".to_string();
    match prose.sections.get("architecture") {
        Some(t) => b.push_str(&format!("{t}\n\n")),
        None => b.push_str(&format!("{}\n", missing(prose, "architecture overview"))),
    }
    b.push_str("## Modules and their imports\n\n");
    b.push_str(&block(
        format,
        &diagrams::overview(&p.graph, &p.modules, &prose.hints, format),
    ));
    let entries = p.entry_modules();
    if !entries.is_empty() {
        b.push_str("\n## Entry points\n\n");
        for (f, s) in &p.scans {
            if s.entry_point {
                let m = p
                    .modules
                    .iter()
                    .find(|m| m.files.contains(f))
                    .map_or("", |m| m.name.as_str());
                b.push_str(&format!("- `{f}` in {}\n", link(m, &module_page(m))));
            }
        }
    }
    Page {
        path: "architecture/overview.md".into(),
        title: "Architecture overview".into(),
        body: b,
    }
}

fn data_flow(p: &Project, prose: &Prose, format: DiagramFormat) -> Page {
    let mut b = "# Data flow\n\n".to_string();
    match prose.sections.get("data-flow") {
        Some(t) => b.push_str(&format!("{t}\n\n")),
        None => b.push_str(&format!("{}\n", missing(prose, "data-flow description"))),
    }
    let entries = p.entry_modules();
    match diagrams::sequence(&p.graph, &entries, &prose.hints, format) {
        Some(d) => {
            b.push_str("## From the entry points, along the imports\n\n");
            b.push_str(&block(format, &d));
            b.push('\n');
            for (i, (a, c)) in diagrams::flow(&p.graph, &entries).iter().enumerate() {
                let ev = &p.graph.edges[&(a.clone(), c.clone())][0];
                b.push_str(&format!(
                    "{}. {} → {}: `{}` (`{}:{}`)\n",
                    i + 1,
                    a,
                    c,
                    ev.import,
                    ev.file,
                    ev.line
                ));
            }
        }
        None => b.push_str(
            "No entry point imports another module of the project, so there is no flow to draw.\n",
        ),
    }
    Page {
        path: "architecture/data-flow.md".into(),
        title: "Data flow".into(),
        body: b,
    }
}

fn dependencies(p: &Project, prose: &Prose, format: DiagramFormat) -> Page {
    let mut b = "# Dependencies\n\n## Between the modules\n\n".to_string();
    b.push_str(&block(
        format,
        &diagrams::dependencies(&p.graph, &prose.hints, format),
    ));
    b.push_str("\n| Module | Imports | Where |\n|---|---|---|\n");
    for ((a, c), ev) in &p.graph.edges {
        let first = &ev[0];
        b.push_str(&format!(
            "| {} | {} | `{}:{}` `{}`{} |\n",
            link(a, &module_page(a)),
            link(c, &module_page(c)),
            first.file,
            first.line,
            cell(&first.import),
            if ev.len() > 1 {
                format!(" and {} more", ev.len() - 1)
            } else {
                String::new()
            }
        ));
    }
    b.push_str("\n## External\n\n");
    if p.graph.external.is_empty() {
        b.push_str("No module imports an external package.\n");
    }
    for (m, deps) in &p.graph.external {
        let d: Vec<String> = deps.iter().map(|d| format!("`{}`", cell(d))).collect();
        b.push_str(&format!(
            "- {}: {}\n",
            link(m, &module_page(m)),
            d.join(", ")
        ));
    }
    Page {
        path: "architecture/dependencies.md".into(),
        title: "Dependencies".into(),
        body: b,
    }
}

fn first_line(s: &str) -> String {
    cell(
        s.lines()
            .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .unwrap_or(""),
    )
}

fn modules_index(p: &Project, prose: &Prose) -> Page {
    let mut b = "# Modules\n\n| Module | Kind | Directory | Files | Source lines | Summary |\n|---|---|---|---|---|---|\n".to_string();
    for m in &p.modules {
        b.push_str(&format!(
            "| {} | {} | `{}` | {} | {} | {} |\n",
            link(&m.name, &module_page(&m.name)),
            m.kind.as_str(),
            if m.dir.is_empty() { "." } else { &m.dir },
            m.files.len(),
            p.lines(m, FileClass::Source),
            prose
                .summaries
                .get(&m.name)
                .map(|s| first_line(s))
                .unwrap_or_default()
        ));
    }
    Page {
        path: "modules/_index.md".into(),
        title: "Modules".into(),
        body: b,
    }
}

fn module(p: &Project, prose: &Prose, m: &Module) -> Page {
    let mut b = format!(
        "# {}\n\n{} in `{}`.\n\n",
        m.name,
        m.kind.as_str(),
        if m.dir.is_empty() { "." } else { &m.dir }
    );
    match prose.summaries.get(&m.name) {
        Some(s) => b.push_str(&format!("## Summary\n\n{s}\n\n")),
        None => b.push_str(&format!(
            "## Summary\n\n{}\n",
            missing(prose, "summary of this module")
        )),
    }
    if let Some(d) = prose.deep_dives.get(&m.name) {
        b.push_str(&format!("## Deep dive\n\n{d}\n\n"));
    }
    let uses = p.graph.uses(&m.name);
    let used = p.graph.used_by(&m.name);
    let links = |v: &[&str]| -> String {
        if v.is_empty() {
            "none".into()
        } else {
            v.iter()
                .map(|n| link(n, &module_page(n)))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    b.push_str(&format!(
        "Uses: {}.\n\nUsed by: {}.\n\n",
        links(&uses),
        links(&used)
    ));
    if let Some(ext) = p.graph.external.get(&m.name) {
        let e: Vec<String> = ext.iter().map(|d| format!("`{}`", cell(d))).collect();
        b.push_str(&format!("External packages: {}.\n\n", e.join(", ")));
    }
    b.push_str("## Public API\n\n");
    let mut any = false;
    for f in &m.files {
        let Some(s) = p.scans.get(f) else { continue };
        for sym in s.symbols.iter().filter(|s| s.public && s.kind != "method") {
            any = true;
            b.push_str(&format!(
                "- `{}` — `{}:{}`",
                cell(&sym.signature),
                f,
                sym.line
            ));
            if !sym.doc.is_empty() {
                b.push_str(&format!(": {}", cell(&sym.doc)));
            }
            b.push('\n');
        }
    }
    if !any {
        b.push_str("No public definitions.\n");
    }
    b.push_str(
        "\n## Files\n\n| File | Class | Language | Lines | Tests |\n|---|---|---|---|---|\n",
    );
    for f in &m.files {
        let s = &p.scans[f];
        b.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            f,
            p.classes[f].as_str(),
            s.language.as_deref().unwrap_or("-"),
            s.lines,
            s.tests
        ));
    }
    Page {
        path: module_page(&m.name),
        title: m.name.clone(),
        body: b,
    }
}

fn code_overview(p: &Project) -> Page {
    let mut b =
        "# Code structure\n\n## Files by class\n\n| Class | Files | Lines |\n|---|---|---|\n"
            .to_string();
    let mut by: BTreeMap<FileClass, (usize, usize)> = BTreeMap::new();
    for (f, c) in &p.classes {
        let e = by.entry(*c).or_default();
        e.0 += 1;
        e.1 += p.scans[f].lines;
    }
    for (c, (n, l)) in &by {
        b.push_str(&format!("| {} | {n} | {l} |\n", c.as_str()));
    }
    b.push_str("\n## Directories\n\n");
    let dirs: BTreeSet<String> = p
        .scans
        .keys()
        .filter_map(|f| {
            f.rsplit_once('/')
                .map(|(d, _)| d.split('/').take(2).collect::<Vec<_>>().join("/"))
        })
        .collect();
    for d in dirs {
        let depth = d.matches('/').count();
        b.push_str(&format!("{}- `{}/`\n", "  ".repeat(depth), d));
    }
    Page {
        path: "code-structure/overview.md".into(),
        title: "Code structure".into(),
        body: b,
    }
}

fn key_abstractions(p: &Project, prose: &Prose) -> Page {
    let mut b = "# Key abstractions\n\n".to_string();
    match prose.sections.get("key-abstractions") {
        Some(t) => b.push_str(&format!("{t}\n\n")),
        None => b.push_str(&format!(
            "{}\n",
            missing(prose, "account of the key abstractions")
        )),
    }
    b.push_str("## Public types, by how many modules import their module\n\n");
    let mut mods: Vec<&Module> = p.modules.iter().collect();
    mods.sort_by_key(|m| std::cmp::Reverse(p.graph.used_by(&m.name).len()));
    for m in mods {
        let types: Vec<String> = m
            .files
            .iter()
            .filter_map(|f| p.scans.get(f).map(|s| (f, s)))
            .flat_map(|(f, s)| {
                s.symbols
                    .iter()
                    .filter(|y| {
                        y.public
                            && ["struct", "enum", "trait", "class", "interface", "type"]
                                .contains(&y.kind.as_str())
                    })
                    .map(move |y| format!("`{}` ({}, `{}:{}`)", y.name, y.kind, f, y.line))
            })
            .collect();
        if !types.is_empty() {
            b.push_str(&format!(
                "- {}: {}\n",
                link(&m.name, &module_page(&m.name)),
                types.join(", ")
            ));
        }
    }
    Page {
        path: "code-structure/key-abstractions.md".into(),
        title: "Key abstractions".into(),
        body: b,
    }
}

fn synthesis_only(prose: &Prose, id: &str, path: &str, title: &str) -> Page {
    let text = prose.sections.get(id).map_or_else(
        || missing(prose, &title.to_lowercase()),
        |t| format!("{t}\n"),
    );
    Page {
        path: path.into(),
        title: title.into(),
        body: format!("# {title}\n\n{text}"),
    }
}

fn tests_of(p: &Project, m: &Module) -> (usize, usize) {
    let files = m
        .files
        .iter()
        .filter(|f| p.classes.get(*f) == Some(&FileClass::Test))
        .count();
    let fns = m
        .files
        .iter()
        .filter_map(|f| p.scans.get(f))
        .map(|s| s.tests)
        .sum();
    (files, fns)
}

fn coverage(p: &Project) -> Page {
    let mut b = "# Test coverage\n\nTest files and test functions found in each module's code (a static count; `--test-report` runs them).\n\n| Module | Test files | Test functions | Source lines |\n|---|---|---|---|\n".to_string();
    for m in &p.modules {
        let (files, fns) = tests_of(p, m);
        b.push_str(&format!(
            "| {} | {files} | {fns} | {} |\n",
            link(&m.name, &module_page(&m.name)),
            p.lines(m, FileClass::Source)
        ));
    }
    Page {
        path: "testing/coverage-report.md".into(),
        title: "Test coverage".into(),
        body: b,
    }
}

fn gaps(p: &Project) -> Page {
    let mut b = "# Testing gaps\n\nModules with source code and no test function:\n\n".to_string();
    let mut any = false;
    for m in &p.modules {
        if tests_of(p, m).1 == 0 && p.lines(m, FileClass::Source) > 0 {
            any = true;
            b.push_str(&format!(
                "- {} ({} source lines)\n",
                link(&m.name, &module_page(&m.name)),
                p.lines(m, FileClass::Source)
            ));
        }
    }
    if !any {
        b.push_str("None: every module with source has tests.\n");
    }
    Page {
        path: "testing/testing-gaps.md".into(),
        title: "Testing gaps".into(),
        body: b,
    }
}

fn glossary(p: &Project) -> Page {
    let mut terms: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in &p.modules {
        terms
            .entry(m.name.clone())
            .or_default()
            .push(format!("module: {}", link(&m.name, &module_page(&m.name))));
        for f in &m.files {
            for s in p.scans[f]
                .symbols
                .iter()
                .filter(|s| s.public && s.kind != "method" && s.kind != "function")
            {
                let doc = if s.doc.is_empty() {
                    String::new()
                } else {
                    format!(" — {}", cell(&s.doc))
                };
                terms.entry(s.name.clone()).or_default().push(format!(
                    "{} in {}{doc}",
                    s.kind,
                    link(&m.name, &module_page(&m.name))
                ));
            }
        }
    }
    let mut b = "# Glossary\n\n".to_string();
    for (t, what) in terms {
        b.push_str(&format!("- **{}**: {}\n", cell(&t), what.join("; ")));
    }
    Page {
        path: "glossary.md".into(),
        title: "Glossary".into(),
        body: b,
    }
}

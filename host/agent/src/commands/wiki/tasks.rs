//! What the model is asked, section by section: only the project's real
//! modules, files, definitions and import edges are in each task.

use agent_wiki::WikiDepth;
use agent_wiki::graph::Graph;
use agent_wiki::modules::{FileClass, Module};
use agent_wiki::pages::SYNTHESIS;
use agent_wiki::project::Project;

/// Definitions listed per module in a task, at most.
const MAX_DEFINITIONS: usize = 80;

/// Deep-dives at `deep`: the modules most imported, at most.
pub const DEEP_DIVES: usize = 3;

/// One section to ask for.
#[derive(Debug, Clone)]
pub struct Task {
    /// `summary:NAME`, a synthesis id, `deep-dive:NAME`.
    pub section: String,
    /// The message.
    pub text: String,
}

fn module_facts(p: &Project, m: &Module, out: &mut String) {
    out.push_str(&format!(
        "Module `{}` ({}, directory `{}`), {} files, {} source lines.\nFiles:\n",
        m.name,
        m.kind.as_str(),
        if m.dir.is_empty() { "." } else { &m.dir },
        m.files.len(),
        p.lines(m, FileClass::Source)
    ));
    for f in &m.files {
        let s = &p.scans[f];
        out.push_str(&format!(
            "- `{f}` ({}, {}, {} lines{}{})\n",
            p.classes[f].as_str(),
            s.language.as_deref().unwrap_or("-"),
            s.lines,
            if s.entry_point { ", entry point" } else { "" },
            if s.tests > 0 {
                format!(", {} tests", s.tests)
            } else {
                String::new()
            }
        ));
    }
    out.push_str("Definitions (signature — file:line — doc):\n");
    let mut n = 0;
    for f in &m.files {
        for y in &p.scans[f].symbols {
            if n == MAX_DEFINITIONS {
                out.push_str("- (more not listed)\n");
                break;
            }
            n += 1;
            out.push_str(&format!("- `{}` — {f}:{}", y.signature, y.line));
            if !y.doc.is_empty() {
                out.push_str(&format!(" — {}", y.doc));
            }
            out.push('\n');
        }
    }
    edges(&p.graph, &m.name, out);
}

fn edges(g: &Graph, name: &str, out: &mut String) {
    out.push_str("Imports from the project's modules:\n");
    for to in g.uses(name) {
        let ev = &g.edges[&(name.to_string(), to.to_string())];
        out.push_str(&format!(
            "- `{to}`: `{}` at {}:{}\n",
            ev[0].import, ev[0].file, ev[0].line
        ));
    }
    let by = g.used_by(name);
    out.push_str(&format!(
        "Imported by: {}\n",
        if by.is_empty() {
            "none".to_string()
        } else {
            by.iter()
                .map(|b| format!("`{b}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    ));
    if let Some(ext) = g.external.get(name) {
        out.push_str(&format!(
            "External packages: {}\n",
            ext.iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// The per-module summaries.
pub fn summaries(p: &Project) -> Vec<Task> {
    p.modules
        .iter()
        .filter(|m| p.lines(m, FileClass::Source) > 0)
        .map(|m| {
            let section = format!("summary:{}", m.name);
            let mut text = format!("Wiki section `{section}`: the summary of one module.\n\n");
            module_facts(p, m, &mut text);
            text.push_str(&format!(
                "\nWrite section `{section}` with `write_wiki_section`."
            ));
            Task { section, text }
        })
        .collect()
}

/// The synthesis sections, from the summaries (`summary` gives a module's,
/// if any) and the graph. Each task names every module's content hash, so
/// a changed module makes every synthesis section be asked again.
pub fn synthesis(p: &Project, summary: &dyn Fn(&str) -> Option<String>) -> Vec<Task> {
    let mut facts = String::from("Modules (name — kind — directory — content version):\n");
    for m in &p.modules {
        facts.push_str(&format!(
            "\n### `{}` — {} — `{}` — {}\n",
            m.name,
            m.kind.as_str(),
            if m.dir.is_empty() { "." } else { &m.dir },
            &p.hashes[&m.name][..12]
        ));
        if let Some(s) = summary(&m.name) {
            facts.push_str(&format!("{s}\n"));
        }
        let public: Vec<String> = m
            .files
            .iter()
            .flat_map(|f| {
                p.scans[f]
                    .symbols
                    .iter()
                    .filter(|y| y.public && y.kind != "method")
                    .map(move |y| format!("`{}` ({f})", y.name))
            })
            .take(30)
            .collect();
        if !public.is_empty() {
            facts.push_str(&format!("Public definitions: {}\n", public.join(", ")));
        }
    }
    facts.push_str("\nImport edges between modules (the only dependencies that exist):\n");
    for ((a, b), ev) in &p.graph.edges {
        facts.push_str(&format!(
            "- `{a}` → `{b}` (`{}` at {}:{})\n",
            ev[0].import, ev[0].file, ev[0].line
        ));
    }
    let entries = p.entry_modules();
    facts.push_str(&format!(
        "Entry points in: {}\n",
        if entries.is_empty() {
            "none".into()
        } else {
            entries
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    ));
    SYNTHESIS
        .iter()
        .map(|(id, _)| Task {
            section: (*id).to_string(),
            text: format!("Wiki section `{id}` (synthesis).\n\n{facts}\nWrite section `{id}` with `write_wiki_section`."),
        })
        .collect()
}

/// The deep-dives: the most imported modules.
pub fn deep_dives(p: &Project) -> Vec<Task> {
    let mut mods: Vec<&Module> = p
        .modules
        .iter()
        .filter(|m| !p.graph.used_by(&m.name).is_empty())
        .collect();
    mods.sort_by_key(|m| {
        (
            std::cmp::Reverse(p.graph.used_by(&m.name).len()),
            m.name.clone(),
        )
    });
    mods.into_iter()
        .take(DEEP_DIVES)
        .map(|m| {
            let section = format!("deep-dive:{}", m.name);
            let mut text =
                format!("Wiki section `{section}`: a deep-dive into a module others import.\n\n");
            module_facts(p, m, &mut text);
            text.push_str("How its importers use it:\n");
            for (a, b) in p.graph.edges.keys().filter(|(_, b)| b == &m.name) {
                for ev in p.graph.edges[&(a.clone(), b.clone())].iter().take(5) {
                    text.push_str(&format!(
                        "- `{a}`: `{}` at {}:{}\n",
                        ev.import, ev.file, ev.line
                    ));
                }
            }
            text.push_str(&format!(
                "\nWrite section `{section}` with `write_wiki_section`."
            ));
            Task { section, text }
        })
        .collect()
}

/// Whether a depth asks for synthesis / deep-dives.
pub fn stages(depth: WikiDepth) -> (bool, bool) {
    match depth {
        WikiDepth::Quick => (false, false),
        WikiDepth::Standard => (true, false),
        WikiDepth::Deep => (true, true),
    }
}

//! Stage 4: diagrams drawn from the [`Graph`] — the dependency graph, the
//! architecture overview (modules grouped, with their edges) and a
//! sequence of calls from the entry points along real edges — in Mermaid,
//! Graphviz DOT or D2. The model may name groups and label modules and
//! edges ([`Hints`]); it never adds an edge or a module: whatever it names
//! that the graph does not have is dropped ([`Hints::checked`]). Every
//! identifier is an generated id (`n0`, `g0`) and every label is quoted and
//! escaped, so each block parses whatever the names are.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use agent_config::DiagramFormat;

use crate::graph::Graph;
use crate::modules::Module;

/// What the model may add to the diagrams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hints {
    /// Module → group name (the overview's boxes).
    pub groups: BTreeMap<String, String>,
    /// (from, to) → what the edge carries.
    pub edge_labels: BTreeMap<(String, String), String>,
}

impl Hints {
    /// The hints about what exists; the rest, one line each, in `dropped`.
    pub fn checked(self, graph: &Graph) -> (Hints, Vec<String>) {
        let known: BTreeSet<&str> = graph.modules.iter().map(String::as_str).collect();
        let mut out = Hints::default();
        let mut dropped = Vec::new();
        for (m, g) in self.groups {
            if known.contains(m.as_str()) {
                out.groups.insert(m, g);
            } else {
                dropped.push(format!("group of unknown module `{m}`"));
            }
        }
        for ((a, b), l) in self.edge_labels {
            if graph.has_edge(&a, &b) {
                out.edge_labels.insert((a, b), l);
            } else {
                dropped.push(format!("edge `{a}` → `{b}` (no such import)"));
            }
        }
        (out, dropped)
    }
}

/// The fenced block's language for a format.
pub fn fence(format: DiagramFormat) -> &'static str {
    match format {
        DiagramFormat::Mermaid => "mermaid",
        DiagramFormat::Dot => "dot",
        DiagramFormat::D2 => "d2",
    }
}

/// Text safe inside a quoted label of any of the three languages.
fn label(s: &str, format: DiagramFormat) -> String {
    match format {
        DiagramFormat::Mermaid => s
            .replace('&', "#amp;")
            .replace('"', "#quot;")
            .replace('<', "#lt;")
            .replace('>', "#gt;")
            .replace(['\n', '\r'], " "),
        DiagramFormat::Dot | DiagramFormat::D2 => s
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace(['\n', '\r'], " "),
    }
}

/// Text safe in a Mermaid sequence diagram (unquoted there).
fn plain(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || " _./@-".contains(c) {
                c
            } else {
                ' '
            }
        })
        .collect();
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.is_empty() { "module".into() } else { t }
}

fn ids(graph: &Graph) -> BTreeMap<&str, String> {
    graph
        .modules
        .iter()
        .enumerate()
        .map(|(i, m)| (m.as_str(), format!("n{i}")))
        .collect()
}

/// The dependency graph: every module, every import edge.
pub fn dependencies(graph: &Graph, hints: &Hints, format: DiagramFormat) -> String {
    let ids = ids(graph);
    let edge_label = |a: &str, b: &str| {
        hints
            .edge_labels
            .get(&(a.to_string(), b.to_string()))
            .cloned()
            .unwrap_or_else(|| {
                let n = graph.edges[&(a.to_string(), b.to_string())].len();
                format!("{n} import{}", if n == 1 { "" } else { "s" })
            })
    };
    let mut t = String::new();
    match format {
        DiagramFormat::Mermaid => {
            t.push_str("graph LR\n");
            for m in &graph.modules {
                t.push_str(&format!(
                    "  {}[\"{}\"]\n",
                    ids[m.as_str()],
                    label(m, format)
                ));
            }
            for (a, b) in graph.edges.keys() {
                t.push_str(&format!(
                    "  {} -->|\"{}\"| {}\n",
                    ids[a.as_str()],
                    label(&edge_label(a, b), format),
                    ids[b.as_str()]
                ));
            }
        }
        DiagramFormat::Dot => {
            t.push_str("digraph dependencies {\n  rankdir=LR;\n  node [shape=box];\n");
            for m in &graph.modules {
                t.push_str(&format!(
                    "  {} [label=\"{}\"];\n",
                    ids[m.as_str()],
                    label(m, format)
                ));
            }
            for (a, b) in graph.edges.keys() {
                t.push_str(&format!(
                    "  {} -> {} [label=\"{}\"];\n",
                    ids[a.as_str()],
                    ids[b.as_str()],
                    label(&edge_label(a, b), format)
                ));
            }
            t.push_str("}\n");
        }
        DiagramFormat::D2 => {
            t.push_str("direction: right\n");
            for m in &graph.modules {
                t.push_str(&format!("{}: \"{}\"\n", ids[m.as_str()], label(m, format)));
            }
            for (a, b) in graph.edges.keys() {
                t.push_str(&format!(
                    "{} -> {}: \"{}\"\n",
                    ids[a.as_str()],
                    ids[b.as_str()],
                    label(&edge_label(a, b), format)
                ));
            }
        }
    }
    t
}

/// The group of each module: the model's, else its top-level directory.
fn groups<'a>(
    graph: &'a Graph,
    modules: &[Module],
    hints: &Hints,
) -> BTreeMap<String, Vec<&'a str>> {
    let mut out: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for name in &graph.modules {
        let g = hints.groups.get(name).cloned().unwrap_or_else(|| {
            let dir = modules
                .iter()
                .find(|m| &m.name == name)
                .map_or("", |m| m.dir.as_str());
            match dir.split('/').next() {
                Some(top) if !top.is_empty() => top.to_string(),
                _ => "(root)".to_string(),
            }
        });
        out.entry(g).or_default().push(name);
    }
    out
}

/// The architecture overview: modules in their groups, with the edges.
pub fn overview(graph: &Graph, modules: &[Module], hints: &Hints, format: DiagramFormat) -> String {
    let ids = ids(graph);
    let groups = groups(graph, modules, hints);
    let mut path: BTreeMap<&str, String> = BTreeMap::new();
    let mut t = String::new();
    match format {
        DiagramFormat::Mermaid => {
            t.push_str("graph TB\n");
            for (i, (g, members)) in groups.iter().enumerate() {
                t.push_str(&format!("  subgraph g{i}[\"{}\"]\n", label(g, format)));
                for m in members {
                    t.push_str(&format!("    {}[\"{}\"]\n", ids[m], label(m, format)));
                }
                t.push_str("  end\n");
            }
            for (a, b) in graph.edges.keys() {
                t.push_str(&format!("  {} --> {}\n", ids[a.as_str()], ids[b.as_str()]));
            }
        }
        DiagramFormat::Dot => {
            t.push_str("digraph architecture {\n  compound=true;\n  node [shape=box];\n");
            for (i, (g, members)) in groups.iter().enumerate() {
                t.push_str(&format!(
                    "  subgraph cluster_{i} {{\n    label=\"{}\";\n",
                    label(g, format)
                ));
                for m in members {
                    t.push_str(&format!(
                        "    {} [label=\"{}\"];\n",
                        ids[m],
                        label(m, format)
                    ));
                }
                t.push_str("  }\n");
            }
            for (a, b) in graph.edges.keys() {
                t.push_str(&format!("  {} -> {};\n", ids[a.as_str()], ids[b.as_str()]));
            }
            t.push_str("}\n");
        }
        DiagramFormat::D2 => {
            for (i, (g, members)) in groups.iter().enumerate() {
                t.push_str(&format!("g{i}: \"{}\" {{\n", label(g, format)));
                for m in members {
                    t.push_str(&format!("  {}: \"{}\"\n", ids[m], label(m, format)));
                    path.insert(m, format!("g{i}.{}", ids[m]));
                }
                t.push_str("}\n");
            }
            for (a, b) in graph.edges.keys() {
                t.push_str(&format!("{} -> {}\n", path[a.as_str()], path[b.as_str()]));
            }
        }
    }
    t
}

/// The edges walked breadth-first from `entries` (modules with an entry
/// point), each once: the order a program's control reaches its modules.
pub fn flow(graph: &Graph, entries: &[String]) -> Vec<(String, String)> {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut queue: VecDeque<String> = entries.iter().cloned().collect();
    let mut out = Vec::new();
    while let Some(m) = queue.pop_front() {
        if !seen.insert(m.clone()) {
            continue;
        }
        for to in graph.uses(&m) {
            out.push((m.clone(), to.to_string()));
            queue.push_back(to.to_string());
        }
    }
    out
}

/// A sequence diagram of [`flow`]: each step names the first import that
/// makes the edge. `None` when there is no edge to show.
pub fn sequence(
    graph: &Graph,
    entries: &[String],
    hints: &Hints,
    format: DiagramFormat,
) -> Option<String> {
    let steps = flow(graph, entries);
    if steps.is_empty() {
        return None;
    }
    let ids = ids(graph);
    let mut actors: Vec<&str> = Vec::new();
    for (a, b) in &steps {
        for m in [a, b] {
            if !actors.contains(&m.as_str()) {
                actors.push(m);
            }
        }
    }
    let what = |a: &str, b: &str| {
        let key = (a.to_string(), b.to_string());
        hints.edge_labels.get(&key).cloned().unwrap_or_else(|| {
            graph.edges[&key]
                .first()
                .map_or_else(String::new, |e| format!("uses {}", e.import))
        })
    };
    let mut t = String::new();
    match format {
        DiagramFormat::Mermaid => {
            t.push_str("sequenceDiagram\n");
            for m in &actors {
                t.push_str(&format!("  participant {} as {}\n", ids[m], plain(m)));
            }
            for (a, b) in &steps {
                t.push_str(&format!(
                    "  {}->>{}: {}\n",
                    ids[a.as_str()],
                    ids[b.as_str()],
                    plain(&what(a, b))
                ));
            }
        }
        DiagramFormat::Dot => {
            t.push_str("digraph flow {\n  rankdir=LR;\n  node [shape=box];\n");
            for m in &actors {
                t.push_str(&format!("  {} [label=\"{}\"];\n", ids[m], label(m, format)));
            }
            for (i, (a, b)) in steps.iter().enumerate() {
                t.push_str(&format!(
                    "  {} -> {} [label=\"{}. {}\"];\n",
                    ids[a.as_str()],
                    ids[b.as_str()],
                    i + 1,
                    label(&what(a, b), format)
                ));
            }
            t.push_str("}\n");
        }
        DiagramFormat::D2 => {
            t.push_str("shape: sequence_diagram\n");
            for m in &actors {
                t.push_str(&format!("{}: \"{}\"\n", ids[m], label(m, format)));
            }
            for (a, b) in &steps {
                t.push_str(&format!(
                    "{} -> {}: \"{}\"\n",
                    ids[a.as_str()],
                    ids[b.as_str()],
                    label(&what(a, b), format)
                ));
            }
        }
    }
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Evidence;

    fn graph() -> Graph {
        let mut g = Graph {
            modules: vec!["a\"b".into(), "c<d>".into(), "e".into()],
            ..Graph::default()
        };
        let ev = vec![Evidence {
            file: "x".into(),
            line: 1,
            import: "c::d".into(),
        }];
        g.edges.insert(("a\"b".into(), "c<d>".into()), ev.clone());
        g.edges.insert(("c<d>".into(), "e".into()), ev);
        g
    }

    #[test]
    fn invented_edges_and_modules_are_dropped() {
        let g = graph();
        let mut h = Hints::default();
        h.groups.insert("ghost".into(), "G".into());
        h.groups.insert("e".into(), "core".into());
        h.edge_labels
            .insert(("e".into(), "a\"b".into()), "calls".into());
        h.edge_labels
            .insert(("a\"b".into(), "c<d>".into()), "reads".into());
        let (h, dropped) = h.checked(&g);
        assert_eq!(h.groups.len(), 1);
        assert_eq!(h.edge_labels.len(), 1);
        assert_eq!(dropped.len(), 2, "{dropped:?}");
        let text = dependencies(&g, &h, DiagramFormat::Mermaid);
        assert_eq!(text.matches("-->").count(), 2, "{text}");
        assert!(text.contains("n0[\"a#quot;b\"]"), "{text}");
        assert!(text.contains("|\"reads\"|"), "{text}");
    }

    #[test]
    fn every_format_quotes_names() {
        let g = graph();
        let h = Hints::default();
        let dot = dependencies(&g, &h, DiagramFormat::Dot);
        assert!(dot.contains("label=\"a\\\"b\""), "{dot}");
        let d2 = overview(&g, &[], &h, DiagramFormat::D2);
        assert!(d2.contains("g0.n0 -> g0.n1"), "{d2}");
        let seq = sequence(&g, &["a\"b".into()], &h, DiagramFormat::Mermaid).unwrap();
        assert!(seq.contains("participant n0 as a b"), "{seq}");
        assert_eq!(seq.matches("->>").count(), 2);
    }
}

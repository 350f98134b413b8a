//! The module dependency graph, from the real imports: each import of each
//! file is resolved to a module of this project (an edge) or named as an
//! external dependency. Nothing else makes an edge.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::modules::Module;
use crate::scan::FileScan;

/// Where an edge was seen.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Evidence {
    /// The importing file.
    pub file: String,
    /// Its line.
    pub line: u32,
    /// The import as written.
    pub import: String,
}

/// Modules and the imports between them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Graph {
    /// Every module's name, sorted.
    pub modules: Vec<String>,
    /// (importer, imported) → where.
    pub edges: BTreeMap<(String, String), Vec<Evidence>>,
    /// Module → the external packages it imports.
    pub external: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    /// Whether `from` imports `to`.
    pub fn has_edge(&self, from: &str, to: &str) -> bool {
        self.edges.contains_key(&(from.to_string(), to.to_string()))
    }

    /// The modules `name` imports.
    pub fn uses(&self, name: &str) -> Vec<&str> {
        self.edges
            .keys()
            .filter(|(a, _)| a == name)
            .map(|(_, b)| b.as_str())
            .collect()
    }

    /// The modules importing `name`.
    pub fn used_by(&self, name: &str) -> Vec<&str> {
        self.edges
            .keys()
            .filter(|(_, b)| b == name)
            .map(|(a, _)| a.as_str())
            .collect()
    }
}

/// Standard libraries' roots: never an external dependency.
const STD: &[&str] = &[
    "std",
    "core",
    "alloc",
    "crate",
    "self",
    "super",
    "os",
    "sys",
    "re",
    "json",
    "typing",
    "collections",
    "pathlib",
    "dataclasses",
    "abc",
    "functools",
    "itertools",
    "subprocess",
    "logging",
    "unittest",
    "fmt",
    "io",
    "strings",
    "errors",
    "context",
    "time",
    "net/http",
    "sync",
    "path",
    "fs",
    "http",
    "crypto",
    "util",
    "events",
    "java",
];

/// The module holding `path`.
fn owner<'a>(modules: &'a [Module], path: &str) -> Option<&'a Module> {
    modules.iter().find(|m| m.files.iter().any(|f| f == path))
}

/// Normalises `dir/rel` (`..`, `.`), `None` above the root.
fn join(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            _ => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// What an import resolves to.
enum Target<'a> {
    Module(&'a Module),
    External(String),
    Internal,
}

fn resolve<'a>(
    modules: &'a [Module],
    files: &BTreeSet<&str>,
    file: &str,
    language: &str,
    import: &str,
) -> Target<'a> {
    let by_name = |name: &str| {
        modules
            .iter()
            .find(|m| m.import_names.iter().any(|n| n == name))
    };
    match language {
        "rust" => {
            let first = import
                .trim_start_matches("::")
                .split("::")
                .next()
                .unwrap_or("");
            let first = first.trim_start_matches('{').trim();
            // `use chunk::X` after `mod chunk;`: the crate's own module.
            let own = owner(modules, file).is_some_and(|m| {
                m.files.iter().any(|f| {
                    f.ends_with(&format!("/{first}.rs")) || f.ends_with(&format!("/{first}/mod.rs"))
                })
            });
            match by_name(first) {
                Some(m) => Target::Module(m),
                None if own || STD.contains(&first) || first.is_empty() => Target::Internal,
                None => Target::External(first.to_string()),
            }
        }
        "python" => {
            if import.starts_with('.') {
                return Target::Internal;
            }
            let first = import.split('.').next().unwrap_or("");
            match by_name(first) {
                Some(m) => Target::Module(m),
                None if STD.contains(&first) => Target::Internal,
                None => Target::External(first.to_string()),
            }
        }
        "javascript" | "typescript" | "tsx" => {
            if import.starts_with('.') {
                let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
                let Some(base) = join(dir, import) else {
                    return Target::Internal;
                };
                let candidates = [
                    "",
                    ".ts",
                    ".tsx",
                    ".js",
                    ".jsx",
                    ".mjs",
                    "/index.ts",
                    "/index.js",
                ];
                for ext in candidates {
                    let p = format!("{base}{ext}");
                    if files.contains(p.as_str())
                        && let Some(m) = owner(modules, &p)
                    {
                        return Target::Module(m);
                    }
                }
                return Target::Internal;
            }
            let mut parts = import.split('/');
            let first = parts.next().unwrap_or("");
            let name = if first.starts_with('@') {
                format!("{first}/{}", parts.next().unwrap_or(""))
            } else {
                first.trim_start_matches("node:").to_string()
            };
            match by_name(&name) {
                Some(m) => Target::Module(m),
                None if STD.contains(&name.as_str()) => Target::Internal,
                None => Target::External(name),
            }
        }
        "go" => {
            let best = modules
                .iter()
                .filter(|m| m.import_names.iter().any(|n| n == import))
                .max_by_key(|m| m.dir.len());
            match best {
                Some(m) => Target::Module(m),
                None if !import.contains('.') => Target::Internal,
                None => Target::External(import.to_string()),
            }
        }
        _ => Target::Internal,
    }
}

/// The graph of `modules`, from the scans of their files.
pub fn build(modules: &[Module], scans: &BTreeMap<String, FileScan>) -> Graph {
    let files: BTreeSet<&str> = scans.keys().map(String::as_str).collect();
    let mut g = Graph {
        modules: modules.iter().map(|m| m.name.clone()).collect(),
        ..Graph::default()
    };
    g.modules.sort();
    for m in modules {
        for f in &m.files {
            let Some(scan) = scans.get(f) else { continue };
            let Some(language) = scan.language.as_deref() else {
                continue;
            };
            for i in &scan.imports {
                match resolve(modules, &files, f, language, &i.path) {
                    Target::Module(to) if to.name != m.name => {
                        g.edges
                            .entry((m.name.clone(), to.name.clone()))
                            .or_default()
                            .push(Evidence {
                                file: f.clone(),
                                line: i.line,
                                import: i.path.clone(),
                            });
                    }
                    Target::External(name) => {
                        g.external.entry(m.name.clone()).or_default().insert(name);
                    }
                    _ => {}
                }
            }
        }
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modules::ModuleKind;
    use crate::scan::Import;

    fn module(name: &str, dir: &str, import: &str, files: &[&str]) -> Module {
        Module {
            name: name.into(),
            dir: dir.into(),
            kind: ModuleKind::Crate,
            import_names: vec![import.into()],
            files: files.iter().map(|f| (*f).to_string()).collect(),
        }
    }

    fn file(language: &str, imports: &[&str]) -> FileScan {
        FileScan {
            language: Some(language.into()),
            imports: imports
                .iter()
                .map(|p| Import {
                    path: (*p).to_string(),
                    line: 1,
                })
                .collect(),
            ..FileScan::default()
        }
    }

    #[test]
    fn imports_become_edges_and_external_dependencies() {
        let modules = vec![
            module("app", "app", "app", &["app/src/main.rs", "app/src/cli.rs"]),
            module("core-lib", "core", "core_lib", &["core/src/lib.rs"]),
            module("web", "web", "web", &["web/a.ts", "web/b.ts"]),
            module("util", "util", "@x/util", &["util/index.ts"]),
        ];
        let scans: BTreeMap<String, FileScan> = [
            (
                "app/src/main.rs",
                file(
                    "rust",
                    &[
                        "core_lib::Store",
                        "serde::Serialize",
                        "std::io",
                        "crate::x",
                        "cli::run",
                    ],
                ),
            ),
            ("app/src/cli.rs", file("rust", &[])),
            ("core/src/lib.rs", file("rust", &["std::fmt"])),
            (
                "web/a.ts",
                file("typescript", &["./b", "../util/index", "react"]),
            ),
            ("web/b.ts", file("typescript", &["@x/util/deep"])),
            ("util/index.ts", file("typescript", &[])),
        ]
        .into_iter()
        .map(|(p, s)| (p.to_string(), s))
        .collect();
        let g = build(&modules, &scans);
        let edges: Vec<(&str, &str)> = g
            .edges
            .keys()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        assert_eq!(edges, [("app", "core-lib"), ("web", "util")]);
        assert_eq!(g.edges[&("web".into(), "util".into())].len(), 2);
        assert_eq!(g.external["app"].iter().collect::<Vec<_>>(), ["serde"]);
        assert_eq!(g.external["web"].iter().collect::<Vec<_>>(), ["react"]);
    }
}

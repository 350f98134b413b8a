//! Stage 2: the project's modules, from its own structure — Cargo packages,
//! Go packages (under `go.mod`), Python packages (a directory with
//! `__init__.py` whose parent has none), npm packages (`package.json` with a
//! name); files outside all of them are grouped by top-level directory — and
//! each file's class.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileClass {
    /// Program source.
    Source,
    /// Tests.
    Test,
    /// Build and tool configuration.
    Config,
    /// Documentation.
    Docs,
    /// Generated (marked so, minified, lock files).
    Generated,
    /// Anything else.
    Other,
}

impl FileClass {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            FileClass::Source => "source",
            FileClass::Test => "test",
            FileClass::Config => "config",
            FileClass::Docs => "docs",
            FileClass::Generated => "generated",
            FileClass::Other => "other",
        }
    }
}

/// How a module was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModuleKind {
    /// A Cargo package.
    Crate,
    /// A Go package.
    Go,
    /// A Python package.
    Python,
    /// An npm package.
    Npm,
    /// A top-level directory (or the project's root files).
    Directory,
}

impl ModuleKind {
    /// Its name.
    pub fn as_str(self) -> &'static str {
        match self {
            ModuleKind::Crate => "Cargo crate",
            ModuleKind::Go => "Go package",
            ModuleKind::Python => "Python package",
            ModuleKind::Npm => "npm package",
            ModuleKind::Directory => "directory",
        }
    }
}

/// One module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Module {
    /// Its name (the package's own name; a directory's path).
    pub name: String,
    /// Its directory, relative to the project (`""`: the root).
    pub dir: String,
    /// How it was found.
    pub kind: ModuleKind,
    /// The names other code imports it by (`core_lib` for `core-lib`).
    pub import_names: Vec<String>,
    /// Its files, relative to the project.
    pub files: Vec<String>,
}

/// Whether a path names a test file.
pub fn is_test_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let in_dir = |d: &str| path.starts_with(&format!("{d}/")) || path.contains(&format!("/{d}/"));
    in_dir("tests")
        || in_dir("test")
        || in_dir("__tests__")
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || [".test.", ".spec."].iter().any(|m| name.contains(m))
}

/// The class of a file, from its path and its first lines.
pub fn classify(path: &str, text: &str) -> FileClass {
    let name = path.rsplit('/').next().unwrap_or(path);
    let head: String = text.lines().take(5).collect::<Vec<_>>().join("\n");
    if name.ends_with(".lock")
        || name == "package-lock.json"
        || name.contains(".min.")
        || name.ends_with(".pb.go")
        || head.contains("@generated")
        || head.contains("DO NOT EDIT")
    {
        return FileClass::Generated;
    }
    if is_test_path(path) {
        return FileClass::Test;
    }
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    if ["md", "rst", "adoc", "txt"].contains(&ext) || path.starts_with("docs/") {
        return FileClass::Docs;
    }
    if ["toml", "yaml", "yml", "json", "ini", "cfg", "mod", "sum"].contains(&ext)
        || ["Makefile", "Dockerfile", "setup.py"].contains(&name)
        || name.starts_with('.')
    {
        return FileClass::Config;
    }
    if agent_syntax::language_for_path(path).is_some() {
        return FileClass::Source;
    }
    FileClass::Other
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// `[package] name` of a Cargo.toml.
fn cargo_name(text: &str) -> Option<String> {
    let doc: toml::Table = text.parse().ok()?;
    Some(doc.get("package")?.get("name")?.as_str()?.to_string())
}

fn npm_name(text: &str) -> Option<String> {
    let doc: serde_json::Value = serde_json::from_str(text).ok()?;
    Some(doc.get("name")?.as_str()?.to_string())
}

fn go_module(text: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("module "))
        .map(|m| m.trim().to_string())
}

/// The modules of a project whose files are `files` (sorted, relative);
/// `read` gives a file's text.
pub fn detect(files: &[String], read: &dyn Fn(&str) -> Option<String>) -> Vec<Module> {
    let mut roots: BTreeMap<String, (String, ModuleKind, Vec<String>)> = BTreeMap::new();
    let set: std::collections::BTreeSet<&str> = files.iter().map(String::as_str).collect();
    let mut go_mods: Vec<(String, String)> = Vec::new();
    for f in files {
        let name = f.rsplit('/').next().unwrap_or(f);
        let dir = parent(f).to_string();
        match name {
            "Cargo.toml" => {
                if let Some(n) = read(f).as_deref().and_then(cargo_name) {
                    let import = n.replace('-', "_");
                    roots.insert(dir, (n, ModuleKind::Crate, vec![import]));
                }
            }
            "package.json" if !f.contains("node_modules/") => {
                if let Some(n) = read(f).as_deref().and_then(npm_name) {
                    roots.insert(dir, (n.clone(), ModuleKind::Npm, vec![n]));
                }
            }
            "go.mod" => {
                if let Some(m) = read(f).as_deref().and_then(go_module) {
                    go_mods.push((dir, m));
                }
            }
            "__init__.py" => {
                let up = parent(&dir);
                let top = !set.contains(format!("{up}/__init__.py").trim_start_matches('/'));
                if top && !dir.is_empty() {
                    let n = dir.rsplit('/').next().unwrap_or(&dir).to_string();
                    roots.insert(dir.clone(), (n.clone(), ModuleKind::Python, vec![n]));
                }
            }
            _ => {}
        }
    }
    // Go: each directory of .go files under a go.mod is a package.
    for f in files.iter().filter(|f| f.ends_with(".go")) {
        let dir = parent(f);
        let Some((mdir, mpath)) = go_mods
            .iter()
            .filter(|(d, _)| d.is_empty() || dir == d || dir.starts_with(&format!("{d}/")))
            .max_by_key(|(d, _)| d.len())
        else {
            continue;
        };
        let rel = dir
            .strip_prefix(mdir.as_str())
            .unwrap_or(dir)
            .trim_matches('/');
        let import = if rel.is_empty() {
            mpath.clone()
        } else {
            format!("{mpath}/{rel}")
        };
        roots
            .entry(dir.to_string())
            .or_insert_with(|| (import.clone(), ModuleKind::Go, vec![import]));
    }
    let mut modules: BTreeMap<String, Module> = BTreeMap::new();
    for f in files {
        let owner = roots
            .keys()
            .filter(|d| d.is_empty() || f.starts_with(&format!("{d}/")))
            .max_by_key(|d| d.len());
        let (key, module) = match owner {
            // The root's package only takes its own files when nothing
            // deeper claims them; a Go package only its own directory.
            Some(d) if roots[d].1 != ModuleKind::Go || parent(f) == d.as_str() => {
                let (name, kind, imports) = &roots[d];
                (
                    d.clone(),
                    Module {
                        name: name.clone(),
                        dir: d.clone(),
                        kind: *kind,
                        import_names: imports.clone(),
                        files: Vec::new(),
                    },
                )
            }
            _ => {
                let top = f.split_once('/').map_or("", |(t, _)| t).to_string();
                let name = if top.is_empty() {
                    "(root)".to_string()
                } else {
                    top.clone()
                };
                (
                    format!("\u{0}{top}"),
                    Module {
                        name,
                        dir: top,
                        kind: ModuleKind::Directory,
                        import_names: Vec::new(),
                        files: Vec::new(),
                    },
                )
            }
        };
        modules.entry(key).or_insert(module).files.push(f.clone());
    }
    let mut out: Vec<Module> = modules.into_values().collect();
    // Names are unique: a clash gets the directory appended.
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for m in &out {
        *seen.entry(m.name.clone()).or_default() += 1;
    }
    for m in &mut out {
        if seen[&m.name] > 1 {
            m.name = format!(
                "{} ({})",
                m.name,
                if m.dir.is_empty() { "." } else { &m.dir }
            );
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packages_of_four_ecosystems_and_directories() {
        let files: Vec<String> = [
            "Cargo.toml",
            "crates/core-lib/Cargo.toml",
            "crates/core-lib/src/lib.rs",
            "crates/app/Cargo.toml",
            "crates/app/src/main.rs",
            "py/pkg/__init__.py",
            "py/pkg/sub/__init__.py",
            "py/pkg/sub/x.py",
            "web/package.json",
            "web/src/app.ts",
            "svc/go.mod",
            "svc/main.go",
            "svc/store/store.go",
            "scripts/run.sh",
            "README.md",
        ]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
        let read = |p: &str| -> Option<String> {
            Some(match p {
                "crates/core-lib/Cargo.toml" => "[package]\nname = \"core-lib\"\n".into(),
                "crates/app/Cargo.toml" => "[package]\nname = \"app\"\n".into(),
                "Cargo.toml" => "[workspace]\nmembers = []\n".into(),
                "web/package.json" => "{\"name\": \"@acme/web\"}".into(),
                "svc/go.mod" => "module example.com/svc\n".into(),
                _ => return None,
            })
        };
        let m = detect(&files, &read);
        let names: Vec<(&str, ModuleKind, usize)> = m
            .iter()
            .map(|m| (m.name.as_str(), m.kind, m.files.len()))
            .collect();
        assert_eq!(
            names,
            [
                ("(root)", ModuleKind::Directory, 2),
                ("@acme/web", ModuleKind::Npm, 2),
                ("app", ModuleKind::Crate, 2),
                ("core-lib", ModuleKind::Crate, 2),
                ("example.com/svc", ModuleKind::Go, 2),
                ("example.com/svc/store", ModuleKind::Go, 1),
                ("pkg", ModuleKind::Python, 3),
                ("scripts", ModuleKind::Directory, 1),
            ]
        );
        assert_eq!(m[3].import_names, ["core_lib"]);
    }

    #[test]
    fn classes() {
        assert_eq!(classify("tests/a.rs", ""), FileClass::Test);
        assert_eq!(classify("pkg/test_x.py", ""), FileClass::Test);
        assert_eq!(classify("src/lib.rs", ""), FileClass::Source);
        assert_eq!(classify("Cargo.lock", ""), FileClass::Generated);
        assert_eq!(classify("README.md", ""), FileClass::Docs);
        assert_eq!(classify("Cargo.toml", ""), FileClass::Config);
        assert_eq!(
            classify("gen.go", "// Code generated by x. DO NOT EDIT.\n"),
            FileClass::Generated
        );
    }
}

//! Stage 1: every source file through tree-sitter ([`agent_syntax`]): its
//! language, its definitions (with the signature's text and the doc comment
//! above them), its imports, whether it is an entry point, its tests.

use serde::{Deserialize, Serialize};

/// One definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// `function`, `method`, `struct`, `enum`, `trait`, `class`,
    /// `interface`, `type`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// The declaration up to its body, whitespace collapsed.
    pub signature: String,
    /// The doc comment (or docstring) above it, first paragraph.
    pub doc: String,
    /// 1-based line.
    pub line: u32,
    /// Exported (`pub`, `export`, a capital in Go, no `_` in Python).
    pub public: bool,
}

/// One import, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The imported path (`crate_a::x`, `pkg.sub`, `./util`, `fmt`).
    pub path: String,
    /// 1-based line.
    pub line: u32,
}

/// What one file holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct FileScan {
    /// The grammar, if one is bundled for it.
    pub language: Option<String>,
    /// Its lines.
    pub lines: usize,
    /// Its definitions.
    pub symbols: Vec<Symbol>,
    /// Its imports.
    pub imports: Vec<Import>,
    /// It starts a program (`fn main`, `func main`, `if __name__ == "__main__"`).
    pub entry_point: bool,
    /// Test functions in it.
    pub tests: usize,
}

/// (query, kind) pairs per grammar: `@name` the name, `@def` the node.
fn definitions(language: &str) -> &'static [(&'static str, &'static str)] {
    match language {
        "rust" => &[
            ("(function_item name: (identifier) @name) @def", "function"),
            ("(struct_item name: (type_identifier) @name) @def", "struct"),
            ("(enum_item name: (type_identifier) @name) @def", "enum"),
            ("(trait_item name: (type_identifier) @name) @def", "trait"),
            ("(type_item name: (type_identifier) @name) @def", "type"),
        ],
        "python" => &[
            (
                "(function_definition name: (identifier) @name) @def",
                "function",
            ),
            ("(class_definition name: (identifier) @name) @def", "class"),
        ],
        "javascript" => &[
            (
                "(function_declaration name: (identifier) @name) @def",
                "function",
            ),
            ("(class_declaration name: (identifier) @name) @def", "class"),
            (
                "(method_definition name: (property_identifier) @name) @def",
                "method",
            ),
        ],
        "typescript" | "tsx" => &[
            (
                "(function_declaration name: (identifier) @name) @def",
                "function",
            ),
            (
                "(class_declaration name: (type_identifier) @name) @def",
                "class",
            ),
            (
                "(method_definition name: (property_identifier) @name) @def",
                "method",
            ),
            (
                "(interface_declaration name: (type_identifier) @name) @def",
                "interface",
            ),
            (
                "(type_alias_declaration name: (type_identifier) @name) @def",
                "type",
            ),
        ],
        "go" => &[
            (
                "(function_declaration name: (identifier) @name) @def",
                "function",
            ),
            (
                "(method_declaration name: (field_identifier) @name) @def",
                "method",
            ),
            ("(type_spec name: (type_identifier) @name) @def", "type"),
        ],
        "java" => &[
            ("(class_declaration name: (identifier) @name) @def", "class"),
            (
                "(interface_declaration name: (identifier) @name) @def",
                "interface",
            ),
            (
                "(method_declaration name: (identifier) @name) @def",
                "method",
            ),
        ],
        _ => &[],
    }
}

/// Queries whose `@path` capture is an imported path.
fn imports(language: &str) -> &'static [&'static str] {
    match language {
        "rust" => &[
            "(use_declaration argument: (_) @path)",
            "(extern_crate_declaration name: (identifier) @path)",
        ],
        "python" => &[
            "(import_statement name: (dotted_name) @path)",
            "(import_statement name: (aliased_import name: (dotted_name) @path))",
            "(import_from_statement module_name: (_) @path)",
        ],
        "javascript" | "typescript" | "tsx" => &[
            "(import_statement source: (string) @path)",
            "(export_statement source: (string) @path)",
            "(call_expression function: (identifier) @f arguments: (arguments (string) @path) (#eq? @f \"require\"))",
        ],
        "go" => &["(import_spec path: (_) @path)"],
        "java" => &["(import_declaration (scoped_identifier) @path)"],
        _ => &[],
    }
}

/// Scans one file (`path` relative to the project, `/`-separated).
pub fn scan(path: &str, text: &str) -> FileScan {
    let mut out = FileScan {
        lines: text.lines().count(),
        ..FileScan::default()
    };
    let Some(language) = agent_syntax::language_for_path(path) else {
        return out;
    };
    out.language = Some(language.to_string());
    let lines: Vec<&str> = text.lines().collect();
    for (query, kind) in definitions(language) {
        let Ok(matches) = agent_syntax::query(language, text, query) else {
            continue;
        };
        for m in matches {
            let name = m.captures.iter().find(|c| c.name == "name");
            let def = m.captures.iter().find(|c| c.name == "def");
            let (Some(name), Some(def)) = (name, def) else {
                continue;
            };
            let signature = signature(&def.text);
            let public = public(language, &name.text, &signature, &lines, def.start_line);
            out.symbols.push(Symbol {
                kind: (*kind).to_string(),
                name: name.text.clone(),
                doc: doc(language, &lines, def.start_line, &def.text),
                signature,
                line: def.start_line,
                public,
            });
        }
    }
    out.symbols.sort_by_key(|s| s.line);
    for query in imports(language) {
        let Ok(matches) = agent_syntax::query(language, text, query) else {
            continue;
        };
        for m in matches {
            if let Some(c) = m.captures.iter().find(|c| c.name == "path") {
                let path = c.text.trim_matches(['"', '\'', '`']).to_string();
                out.imports.push(Import {
                    path,
                    line: c.start_line,
                });
            }
        }
    }
    out.imports
        .sort_by(|a, b| (a.line, &a.path).cmp(&(b.line, &b.path)));
    out.imports.dedup();
    out.entry_point = entry_point(language, path, text, &out.symbols);
    out.tests = tests(language, path, text, &out.symbols);
    out
}

/// The declaration up to its body, on one line, at most 200 characters.
fn signature(def: &str) -> String {
    let head = def
        .split_once('{')
        .map_or(def, |(h, _)| h)
        .split("\n\n")
        .next()
        .unwrap_or("");
    // Python: up to the `:` that ends the header line.
    let head = if head.trim_start().starts_with("def ")
        || head.trim_start().starts_with("class ")
        || head.trim_start().starts_with("async def ")
    {
        head.lines().next().unwrap_or("").trim_end_matches(':')
    } else {
        head
    };
    let one: Vec<&str> = head.split_whitespace().collect();
    let mut s = one
        .join(" ")
        .replace("( ", "(")
        .replace(", )", ")")
        .replace(" )", ")");
    if s.chars().count() > 200 {
        s = s.chars().take(199).collect::<String>() + "…";
    }
    s
}

fn public(language: &str, name: &str, signature: &str, lines: &[&str], line: u32) -> bool {
    let at = lines
        .get(line.saturating_sub(1) as usize)
        .map_or("", |l| l.trim_start());
    match language {
        "rust" => signature.starts_with("pub"),
        "python" => !name.starts_with('_'),
        "go" => name.chars().next().is_some_and(char::is_uppercase),
        "javascript" | "typescript" | "tsx" => at.starts_with("export"),
        "java" => signature.starts_with("public"),
        _ => true,
    }
}

/// The comment lines right above `line` (or a Python docstring), first
/// paragraph, one line.
fn doc(language: &str, lines: &[&str], line: u32, def: &str) -> String {
    if language == "python" {
        let body = def.lines().skip(1).map(str::trim).find(|l| !l.is_empty());
        if let Some(b) = body
            && let Some(q) = ["\"\"\"", "'''"].iter().find(|q| b.starts_with(**q))
        {
            let rest = &def[def.find(b).unwrap_or(0) + q.len()..];
            let text = rest.split(q).next().unwrap_or("");
            return first_paragraph(text);
        }
    }
    let mut above = Vec::new();
    let mut i = line.saturating_sub(1) as usize;
    while i > 0 {
        i -= 1;
        let l = lines[i].trim();
        if l.starts_with("#[") || l.starts_with('@') {
            continue;
        }
        let text = ["///", "//!", "//", "/**", "*/", "* ", "*", "#"]
            .iter()
            .find_map(|p| l.strip_prefix(p));
        match text {
            Some(t) if !l.starts_with("#!") => above.push(t.trim().to_string()),
            _ => break,
        }
    }
    above.reverse();
    first_paragraph(&above.join("\n"))
}

fn first_paragraph(text: &str) -> String {
    let para = text.trim().split("\n\n").next().unwrap_or("");
    let words: Vec<&str> = para.split_whitespace().collect();
    let mut s = words.join(" ");
    if s.chars().count() > 300 {
        s = s.chars().take(299).collect::<String>() + "…";
    }
    s
}

fn entry_point(language: &str, path: &str, text: &str, symbols: &[Symbol]) -> bool {
    let has_main = symbols
        .iter()
        .any(|s| s.name == "main" && s.kind == "function");
    match language {
        "rust" => has_main && (path.ends_with("main.rs") || path.contains("/bin/")),
        "go" => has_main && text.contains("package main"),
        "python" => {
            text.contains("if __name__ == \"__main__\"")
                || text.contains("if __name__ == '__main__'")
        }
        "java" => text.contains("static void main("),
        "javascript" | "typescript" | "tsx" => text.starts_with("#!"),
        _ => has_main,
    }
}

fn tests(language: &str, path: &str, text: &str, symbols: &[Symbol]) -> usize {
    match language {
        "rust" => text.matches("#[test]").count() + text.matches("#[tokio::test").count(),
        "python" | "go" => symbols
            .iter()
            .filter(|s| {
                s.kind != "class" && (s.name.starts_with("test_") || s.name.starts_with("Test"))
            })
            .count(),
        "javascript" | "typescript" | "tsx" if crate::modules::is_test_path(path) => {
            text.matches("test(").count() + text.matches("it(").count()
        }
        "java" => text.matches("@Test").count(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles() {
        for lang in agent_syntax::languages() {
            for (q, _) in definitions(lang) {
                agent_syntax::query(lang, "", q).unwrap_or_else(|e| panic!("{lang}: {q}: {e}"));
            }
            for q in imports(lang) {
                agent_syntax::query(lang, "", q).unwrap_or_else(|e| panic!("{lang}: {q}: {e}"));
            }
        }
    }

    #[test]
    fn rust_definitions_docs_and_imports() {
        let s = scan(
            "src/main.rs",
            "use core_lib::Store;\nuse std::io;\n\n/// Runs the program.\n///\n/// More.\npub fn main() {\n}\n\nstruct Hidden;\n",
        );
        assert_eq!(s.language.as_deref(), Some("rust"));
        let main = &s.symbols[0];
        assert_eq!(
            (main.name.as_str(), main.doc.as_str(), main.public),
            ("main", "Runs the program.", true)
        );
        assert_eq!(main.signature, "pub fn main()");
        assert!(!s.symbols[1].public);
        let paths: Vec<&str> = s.imports.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["core_lib::Store", "std::io"]);
        assert!(s.entry_point);
    }

    #[test]
    fn python_docstrings_imports_and_main() {
        let s = scan(
            "pkg/cli.py",
            "import os\nfrom pkg.core import load\nfrom . import util\n\ndef run(x):\n    \"\"\"Run it.\"\"\"\n    return x\n\nif __name__ == \"__main__\":\n    run(1)\n",
        );
        assert_eq!(s.symbols[0].doc, "Run it.");
        assert_eq!(s.symbols[0].signature, "def run(x)");
        let paths: Vec<&str> = s.imports.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["os", "pkg.core", "."]);
        assert!(s.entry_point);
    }

    #[test]
    fn typescript_imports_and_exports() {
        let s = scan(
            "web/src/app.ts",
            "import { a } from './util';\nimport x from \"left-pad\";\nexport function start(): void {}\nfunction inner() {}\n",
        );
        let paths: Vec<&str> = s.imports.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["./util", "left-pad"]);
        assert!(s.symbols[0].public);
        assert!(!s.symbols[1].public);
    }
}

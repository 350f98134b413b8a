//! A generated project of about 50,000 lines for the wiki's benchmarks
//! (tests/benches/wiki.rs): 10 Rust crates, 10 Python packages and 10 npm
//! packages, importing each other in rings, every definition with a doc comment.

use std::collections::BTreeMap;

/// (path, text) of ~50k lines.
pub fn generated() -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    files.insert(
        "Cargo.toml".into(),
        "[workspace]\nmembers = [\"crates/*\"]\n".into(),
    );
    for c in 0..10 {
        files.insert(
            format!("crates/c{c}/Cargo.toml"),
            format!("[package]\nname = \"c{c}\"\n"),
        );
        for f in 0..10 {
            let mut t = format!("use c{}::Item0;\nuse serde::Serialize;\n\n", (c + 1) % 10);
            for i in 0..17 {
                t.push_str(&format!(
                    "/// Item {i}.\npub struct Item{i} {{ pub v: u32 }}\n\n/// Makes {i}.\npub fn make{f}_{i}(v: u32) -> u32 {{\n    let x = v + {i};\n    x * 2\n}}\n\n"
                ));
            }
            files.insert(format!("crates/c{c}/src/m{f}.rs"), t);
        }
        let mut py = format!("import p{}\nimport requests\n\n", (c + 3) % 10);
        let mut js = format!(
            "import {{ x }} from 'w{}';\nimport React from 'react';\n\n",
            (c + 7) % 10
        );
        for i in 0..180 {
            py.push_str(&format!(
                "def f{i}(a):\n    \"\"\"F {i}.\"\"\"\n    b = a + {i}\n    return b\n\n"
            ));
            js.push_str(&format!(
                "export function g{i}(a) {{\n  const b = a + {i};\n  return b;\n}}\n\n"
            ));
        }
        files.insert(format!("py/p{c}/__init__.py"), String::new());
        for f in 0..2 {
            files.insert(format!("py/p{c}/m{f}.py"), py.clone());
            files.insert(format!("web/w{c}/src/m{f}.js"), js.clone());
        }
        files.insert(
            format!("web/w{c}/package.json"),
            format!("{{\"name\": \"w{c}\"}}"),
        );
    }
    files
}

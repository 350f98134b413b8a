//! The model's answers, checked: `write_wiki_section`'s input must be for
//! the section asked, and every definition, path and module it names —
//! in its lists and in the text's code spans — must exist in the project.
//! An answer that names something that does not exist is rejected (the
//! tool's error names it, so the model can correct it). Edge labels and
//! groups about edges or modules that do not exist are dropped, never
//! drawn ([`crate::diagrams::Hints::checked`]).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::project::Project;

/// The tool's name.
pub const TOOL: &str = "write_wiki_section";

/// Its description.
pub const DESCRIPTION: &str = "Write one section of the wiki (the section id the task names). \
List every definition, file path and module the text mentions; each must exist in the project.";

/// Its input schema.
pub const SCHEMA: &str = r#"{
  "type": "object",
  "additionalProperties": false,
  "required": ["section", "text"],
  "properties": {
    "section": {"type": "string", "description": "The section id the task names."},
    "text": {"type": "string", "maxLength": 20000, "description": "Markdown, no top-level heading."},
    "symbols": {"type": "array", "items": {"type": "string"}, "description": "Definitions mentioned."},
    "paths": {"type": "array", "items": {"type": "string"}, "description": "Files mentioned."},
    "modules": {"type": "array", "items": {"type": "string"}, "description": "Modules mentioned."},
    "relations": {"type": "array", "items": {"type": "object", "additionalProperties": false,
      "required": ["from", "to", "label"],
      "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "label": {"type": "string", "maxLength": 60}}},
      "description": "Labels for existing import edges between modules."},
    "groups": {"type": "array", "items": {"type": "object", "additionalProperties": false,
      "required": ["name", "modules"],
      "properties": {"name": {"type": "string", "maxLength": 60}, "modules": {"type": "array", "items": {"type": "string"}}}},
      "description": "Layers of modules for the architecture diagram."}
  }
}"#;

/// Every name an answer may use.
#[derive(Debug, Clone, Default)]
pub struct Known {
    symbols: BTreeSet<String>,
    paths: BTreeSet<String>,
    modules: BTreeSet<String>,
    /// Import names, external packages, directories: accepted in text.
    other: BTreeSet<String>,
}

impl Known {
    /// The names of `project`.
    pub fn of(project: &Project) -> Known {
        let mut k = Known::default();
        for (f, s) in &project.scans {
            k.paths.insert(f.clone());
            let mut dir = f.as_str();
            while let Some((d, _)) = dir.rsplit_once('/') {
                k.other.insert(d.to_string());
                k.other.insert(format!("{d}/"));
                dir = d;
            }
            for y in &s.symbols {
                k.symbols.insert(y.name.clone());
            }
        }
        for m in &project.modules {
            k.modules.insert(m.name.clone());
            k.other.extend(m.import_names.iter().cloned());
        }
        for deps in project.graph.external.values() {
            k.other.extend(deps.iter().cloned());
        }
        k
    }

    /// Whether a code span of the text names something that exists.
    fn span_ok(&self, span: &str) -> bool {
        let s = span.trim_end_matches("()");
        if self.symbols.contains(s)
            || self.paths.contains(s)
            || self.modules.contains(s)
            || self.other.contains(s)
        {
            return true;
        }
        // `core_lib::Store`, `pkg.load`, `Store::new`: the last segment is a
        // definition and the first something known.
        let parts: Vec<&str> = s.split(['.', ':', '/']).filter(|p| !p.is_empty()).collect();
        parts.len() > 1
            && parts.last().is_some_and(|l| self.symbols.contains(*l))
            && parts.first().is_some_and(|f| {
                self.symbols.contains(*f)
                    || self.modules.contains(*f)
                    || self.other.contains(*f)
                    || ["crate", "self", "super"].contains(f)
            })
    }
}

/// A checked answer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Answer {
    /// The section's text.
    pub text: String,
    /// (from, to, label), not yet checked against the graph.
    pub relations: Vec<(String, String, String)>,
    /// (module, group), not yet checked.
    pub groups: Vec<(String, String)>,
}

/// Whether a code span looks like a name (one token, identifier or path
/// characters) rather than code or a command.
fn name_like(span: &str) -> bool {
    !span.is_empty()
        && span.len() <= 120
        && span
            .chars()
            .all(|c| c.is_alphanumeric() || "_.:/-@()".contains(c))
        && span.chars().any(char::is_alphabetic)
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Checks one input of the tool for `section`.
///
/// # Errors
/// The reason it is rejected, naming what does not exist.
pub fn check(input: &Value, section: &str, known: &Known) -> Result<Answer, String> {
    let got = input.get("section").and_then(Value::as_str).unwrap_or("");
    if got != section {
        return Err(format!(
            "this task is section `{section}`, not `{got}`; call the tool again with section `{section}`"
        ));
    }
    let text = input
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    if text.is_empty() {
        return Err("`text` is empty; write the section".into());
    }
    let mut unknown: Vec<String> = Vec::new();
    for s in strings(input, "symbols") {
        if !known.symbols.contains(&s) && !known.span_ok(&s) {
            unknown.push(format!("definition `{s}`"));
        }
    }
    for p in strings(input, "paths") {
        if !known.paths.contains(&p) && !known.other.contains(&p) {
            unknown.push(format!("path `{p}`"));
        }
    }
    for m in strings(input, "modules") {
        if !known.modules.contains(&m) {
            unknown.push(format!("module `{m}`"));
        }
    }
    for (i, part) in text.split('`').enumerate() {
        // Fenced blocks (```) split into empty parts; only inline spans count.
        if i % 2 == 1 && !part.contains('\n') && name_like(part) && !known.span_ok(part) {
            unknown.push(format!("`{part}` in the text"));
        }
    }
    if !unknown.is_empty() {
        unknown.dedup();
        return Err(format!(
            "rejected: the project has no {}; mention only the definitions, paths and modules the task lists, and call the tool again",
            unknown.join(", ")
        ));
    }
    let mut answer = Answer {
        text,
        ..Answer::default()
    };
    if let Some(rs) = input.get("relations").and_then(Value::as_array) {
        for r in rs {
            let f = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            answer.relations.push((f("from"), f("to"), f("label")));
        }
    }
    if let Some(gs) = input.get("groups").and_then(Value::as_array) {
        for g in gs {
            let name = g
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            for m in strings(g, "modules") {
                answer.groups.push((m, name.clone()));
            }
        }
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::project::from_texts;

    fn project() -> Project {
        let files: BTreeMap<String, String> = [
            ("a/Cargo.toml", "[package]\nname = \"store-lib\"\n"),
            (
                "a/src/lib.rs",
                "pub struct Store;\nimpl Store { pub fn open() {} }\n",
            ),
            ("b/Cargo.toml", "[package]\nname = \"app\"\n"),
            ("b/src/main.rs", "use store_lib::Store;\nfn main() {}\n"),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        from_texts("p".into(), files)
    }

    #[test]
    fn real_names_pass_invented_ones_are_rejected() {
        let p = project();
        let k = Known::of(&p);
        let good = json!({"section": "summary:app", "text": "Opens a `Store` via `store_lib::Store` from `b/src/main.rs` (`cargo run` starts it).",
            "symbols": ["Store", "main"], "paths": ["b/src/main.rs"], "modules": ["store-lib"],
            "relations": [{"from": "app", "to": "store-lib", "label": "opens"}]});
        let a = check(&good, "summary:app", &k).unwrap();
        assert_eq!(a.relations.len(), 1);
        let bad = json!({"section": "summary:app", "text": "Calls `Cache::flush` in `b/src/cache.rs`.", "symbols": ["Cache"]});
        let e = check(&bad, "summary:app", &k).unwrap_err();
        assert!(e.contains("definition `Cache`"), "{e}");
        assert!(e.contains("`Cache::flush` in the text"), "{e}");
        assert!(e.contains("`b/src/cache.rs` in the text"), "{e}");
        let other = json!({"section": "architecture", "text": "x"});
        assert!(
            check(&other, "summary:app", &k)
                .unwrap_err()
                .contains("section `summary:app`")
        );
        let ghost = json!({"section": "summary:app", "text": "x", "modules": ["ghost"]});
        assert!(
            check(&ghost, "summary:app", &k)
                .unwrap_err()
                .contains("module `ghost`")
        );
    }
}

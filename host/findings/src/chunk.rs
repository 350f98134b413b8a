//! What the model sees of a diff: each hunk with its enclosing function or
//! class (tree-sitter, [`agent_syntax`]) and the file's imports, the lines
//! numbered as in the new version (`+` added, `-` removed), packed into
//! chunks of at most a budget of characters — one model call per chunk.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::patch::{FilePatch, Hunk, LineKind};

/// How chunks are cut.
#[derive(Debug, Clone, Copy)]
pub struct ChunkOptions {
    /// At most this many characters of diff per chunk (a hunk longer than
    /// this is split).
    pub budget_chars: usize,
    /// An enclosing function or class longer than this many lines is shown
    /// only around the hunk.
    pub max_scope_lines: u32,
    /// Lines shown around a hunk without an enclosing scope (or with too
    /// long a one).
    pub context_lines: u32,
}

impl Default for ChunkOptions {
    fn default() -> ChunkOptions {
        ChunkOptions {
            budget_chars: 24_000,
            max_scope_lines: 120,
            context_lines: 10,
        }
    }
}

/// One file of the diff with its new version's text (`None`: not
/// readable, only the hunks are shown).
#[derive(Debug, Clone, Copy)]
pub struct FileView<'a> {
    /// The file's patch.
    pub patch: &'a FilePatch,
    /// Its text in the new version.
    pub text: Option<&'a str>,
}

/// One model call's worth of diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// The text for the model.
    pub text: String,
    /// The files it shows.
    pub files: Vec<String>,
    /// The hunks (or parts of hunks) it shows.
    pub hunks: usize,
}

/// Node kinds of functions/classes, and of imports, per grammar.
fn kinds(language: &str) -> (&'static [&'static str], &'static [&'static str]) {
    match language {
        "python" => (
            &["function_definition", "class_definition"],
            &["import_statement", "import_from_statement"],
        ),
        "javascript" => (
            &[
                "function_declaration",
                "method_definition",
                "class_declaration",
            ],
            &["import_statement"],
        ),
        "typescript" | "tsx" => (
            &[
                "function_declaration",
                "method_definition",
                "class_declaration",
                "interface_declaration",
            ],
            &["import_statement"],
        ),
        "go" => (
            &["function_declaration", "method_declaration"],
            &["import_declaration"],
        ),
        "java" => (
            &[
                "method_declaration",
                "constructor_declaration",
                "class_declaration",
            ],
            &["import_declaration"],
        ),
        "rust" => (
            &["function_item", "impl_item", "trait_item"],
            &["use_declaration"],
        ),
        "ruby" => (&["method", "class", "module"], &[]),
        "c" => (&["function_definition"], &["preproc_include"]),
        "cpp" => (
            &["function_definition", "class_specifier"],
            &["preproc_include"],
        ),
        "swift" => (
            &["function_declaration", "class_declaration"],
            &["import_declaration"],
        ),
        _ => (&[], &[]),
    }
}

/// Spans (first line, last line, first line's text) of the nodes of
/// `kinds`; a kind the grammar does not know is skipped.
fn spans(language: &str, text: &str, kinds: &[&str]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for kind in kinds {
        let q = format!("({kind}) @n");
        if let Ok(matches) = agent_syntax::query(language, text, &q) {
            for m in matches {
                for c in m.captures {
                    let end = if c.end_column <= 1 && c.end_line > c.start_line {
                        c.end_line - 1
                    } else {
                        c.end_line
                    };
                    out.push((c.start_line, end));
                }
            }
        }
    }
    out
}

/// What is known of one file: its lines, its scopes and imports.
struct Outline<'a> {
    lines: Vec<&'a str>,
    scopes: Vec<(u32, u32)>,
    imports: Vec<u32>,
}

fn outline<'a>(path: &str, text: &'a str) -> Outline<'a> {
    let lines: Vec<&str> = text.lines().collect();
    let Some(language) = agent_syntax::language_for_path(path) else {
        return Outline {
            lines,
            scopes: Vec::new(),
            imports: Vec::new(),
        };
    };
    let (scope_kinds, import_kinds) = kinds(language);
    let scopes = spans(language, text, scope_kinds);
    let mut imports: Vec<u32> = spans(language, text, import_kinds)
        .into_iter()
        .flat_map(|(a, b)| a..=b)
        .collect();
    imports.sort_unstable();
    imports.dedup();
    Outline {
        lines,
        scopes,
        imports,
    }
}

/// The smallest scope holding `line`.
fn enclosing(scopes: &[(u32, u32)], line: u32) -> Option<(u32, u32)> {
    scopes
        .iter()
        .filter(|(a, b)| *a <= line && line <= *b)
        .min_by_key(|(a, b)| b - a)
        .copied()
}

/// The lines shown for a hunk and how its title names them: the enclosing
/// scope of every added line (the smallest function or class holding it),
/// whole when shorter than `max_scope_lines`, else only the lines around
/// the change.
fn scope_region(
    o: &Outline,
    hunk: &Hunk,
    (first, last): (u32, u32),
    around: (u32, u32),
    opts: &ChunkOptions,
) -> ((u32, u32), String) {
    let mut scopes: Vec<(u32, u32)> = hunk
        .added()
        .filter_map(|n| enclosing(&o.scopes, n))
        .collect();
    scopes.sort_unstable();
    scopes.dedup();
    if scopes.is_empty() {
        return (around, "at the top level".to_string());
    }
    let (mut start, mut end) = (first, last);
    let mut names = Vec::new();
    let mut long = false;
    for (a, b) in &scopes {
        let name = o.lines.get((*a - 1) as usize).map_or("", |t| t.trim());
        if b - a < opts.max_scope_lines {
            start = start.min(*a);
            end = end.max(*b);
            names.push(format!("`{}` (lines {a}-{b})", clip(name, 80)));
        } else {
            long = true;
            names.push(format!(
                "`{}` (lines {a}-{b}, shown around the change)",
                clip(name, 80)
            ));
        }
    }
    if long {
        start = start.min(around.0);
        end = end.max(around.1);
    }
    ((start, end), format!("in {}", names.join(", ")))
}

fn clip(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The rendered lines of one hunk in its region: each line `NNNNN M text`.
fn hunk_lines(hunk: &Hunk, outline: Option<&Outline>, region: (u32, u32)) -> Vec<String> {
    let mut removed: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    let mut added = std::collections::HashSet::new();
    let mut next = hunk.new_start;
    for l in &hunk.lines {
        match (l.kind, l.new_line) {
            (LineKind::Removed, _) => removed.entry(next).or_default().push(&l.text),
            (LineKind::Added, Some(n)) => {
                added.insert(n);
                next = n + 1;
            }
            (_, Some(n)) => next = n + 1,
            _ => {}
        }
    }
    let mut out = Vec::new();
    match outline {
        Some(o) => {
            for n in region.0..=region.1 {
                for r in removed.get(&n).into_iter().flatten() {
                    out.push(format!("      - {}", clip(r, 400)));
                }
                let Some(text) = o.lines.get((n - 1) as usize) else {
                    break;
                };
                let mark = if added.contains(&n) { '+' } else { ' ' };
                out.push(format!("{n:>5} {mark} {}", clip(text, 400)));
            }
            for r in removed.range(region.1 + 1..).flat_map(|(_, v)| v) {
                out.push(format!("      - {}", clip(r, 400)));
            }
        }
        None => {
            for l in &hunk.lines {
                match (l.kind, l.new_line) {
                    (LineKind::Removed, _) => out.push(format!("      - {}", clip(&l.text, 400))),
                    (k, Some(n)) => {
                        let mark = if k == LineKind::Added { '+' } else { ' ' };
                        out.push(format!("{n:>5} {mark} {}", clip(&l.text, 400)));
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

/// One section per hunk (split when longer than the budget).
fn sections(view: &FileView, opts: &ChunkOptions) -> Vec<String> {
    let patch = view.patch;
    let outline = view.text.map(|t| outline(&patch.path, t));
    let mut header = format!("## {}\n", patch.path);
    if let Some(o) = &outline
        && !o.imports.is_empty()
    {
        header.push_str("imports:\n");
        for n in o.imports.iter().take(40) {
            if let Some(t) = o.lines.get((*n - 1) as usize) {
                let _ = writeln!(header, "{n:>5}   {}", clip(t, 200));
            }
        }
    }
    let mut out = Vec::new();
    for hunk in patch.hunks.iter().filter(|h| h.added().next().is_some()) {
        let (first, last) = hunk.new_span();
        let count = outline.as_ref().map_or(last, |o| o.lines.len() as u32);
        let around = (
            first.saturating_sub(opts.context_lines).max(1),
            (last + opts.context_lines).min(count.max(1)),
        );
        let (region, title) = match &outline {
            Some(o) => scope_region(o, hunk, (first, last), around, opts),
            None => (around, "at the top level".to_string()),
        };
        let lines = hunk_lines(hunk, outline.as_ref(), region);
        let head = format!("{header}### change at lines {first}-{last}, {title}\n");
        let mut part = head.clone();
        for l in lines {
            if part.len() + l.len() + 1 > opts.budget_chars && part.len() > head.len() {
                out.push(std::mem::replace(&mut part, format!("{head}(continued)\n")));
            }
            part.push_str(&l);
            part.push('\n');
        }
        out.push(part);
    }
    out
}

/// The chunks of a diff: every hunk with added lines of every file, in
/// order, packed while they fit in `opts.budget_chars`.
pub fn chunks(files: &[FileView], opts: &ChunkOptions) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::new();
    let mut current = Chunk {
        text: String::new(),
        files: Vec::new(),
        hunks: 0,
    };
    for view in files.iter().filter(|v| !v.patch.deleted && !v.patch.binary) {
        for s in sections(view, opts) {
            if !current.text.is_empty() && current.text.len() + s.len() > opts.budget_chars {
                out.push(std::mem::replace(
                    &mut current,
                    Chunk {
                        text: String::new(),
                        files: Vec::new(),
                        hunks: 0,
                    },
                ));
            }
            current.text.push_str(&s);
            current.text.push('\n');
            current.hunks += 1;
            if current.files.last() != Some(&view.patch.path) {
                current.files.push(view.patch.path.clone());
            }
        }
    }
    if current.hunks > 0 {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::parse_patch;

    const NEW: &str = "import os\nfrom db import conn\n\n\ndef other():\n    return 1\n\n\ndef run(q):\n    cur = conn.execute(\"SELECT \" + q)\n    return cur\n";
    const PATCH: &str = "\
diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -9,3 +9,3 @@
 def run(q):
-    cur = conn.execute(q)
+    cur = conn.execute(\"SELECT \" + q)
     return cur
";

    #[test]
    fn a_hunk_comes_with_its_function_and_the_imports() {
        let files = parse_patch(PATCH);
        let views = [FileView {
            patch: &files[0],
            text: Some(NEW),
        }];
        let c = chunks(&views, &ChunkOptions::default());
        assert_eq!(c.len(), 1);
        let t = &c[0].text;
        assert!(
            t.starts_with("## app.py\nimports:\n    1   import os\n    2   from db import conn\n"),
            "{t}"
        );
        assert!(
            t.contains("### change at lines 9-11, in `def run(q):` (lines 9-11)\n"),
            "{t}"
        );
        assert!(t.contains("    9   def run(q):\n      -     cur = conn.execute(q)\n   10 +     cur = conn.execute(\"SELECT \" + q)\n   11       return cur\n"), "{t}");
        assert!(!t.contains("def other"), "only the enclosing function: {t}");
    }

    #[test]
    fn a_hunk_across_two_functions_shows_both() {
        let new = "import os\n\n\ndef a():\n    return 1\n\n\ndef b():\n    return 2\n";
        let patch = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -4,6 +4,6 @@\n def a():\n-    return 0\n+    return 1\n \n \n def b():\n-    return 0\n+    return 2\n";
        let files = parse_patch(patch);
        let c = chunks(
            &[FileView {
                patch: &files[0],
                text: Some(new),
            }],
            &ChunkOptions::default(),
        );
        let t = &c[0].text;
        assert!(
            t.contains(
                "### change at lines 4-9, in `def a():` (lines 4-5), `def b():` (lines 8-9)\n"
            ),
            "{t}"
        );
    }

    #[test]
    fn chunks_stay_within_the_budget() {
        let mut patch = String::from(
            "diff --git a/big.txt b/big.txt\n--- a/big.txt\n+++ b/big.txt\n@@ -0,0 +1,1000 @@\n",
        );
        let mut text = String::new();
        for i in 1..=1000 {
            patch.push_str(&format!("+line number {i} of the new file\n"));
            text.push_str(&format!("line number {i} of the new file\n"));
        }
        let files = parse_patch(&patch);
        let views = [FileView {
            patch: &files[0],
            text: Some(&text),
        }];
        let opts = ChunkOptions {
            budget_chars: 4_000,
            ..ChunkOptions::default()
        };
        let c = chunks(&views, &opts);
        assert!(c.len() >= 9, "{}", c.len());
        assert!(c.iter().all(|c| c.text.len() <= 4_000 + 200));
        let shown: usize = c
            .iter()
            .map(|c| c.text.matches(" + line number").count())
            .sum();
        assert_eq!(shown, 1000, "every added line is shown once");
    }
}

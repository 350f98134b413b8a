//! Tree-sitter rules of the `sast` scanner, run through the host's `syntax`
//! import. Every query captures `@call` (the location) and, optionally,
//! `@arg` (an argument that must not be a plain string literal). They reuse
//! the ids of the regex rules for the same weakness, so a finding both
//! report on the same line is kept once; the queries add what a line regex
//! cannot see (calls spread over several lines).
//!
//! All query strings are in [`QUERIES`] so host-side tests can check that
//! they compile against the bundled grammars. Where the import is
//! unavailable (natively, or in a host without grammars) these rules are
//! skipped without a finding.

use agent_skill_sdk::types::Finding;

use crate::finding::{self, Span};
use crate::sast::{Kind, is_literal_arg};
use crate::text;

/// One tree-sitter rule.
pub struct QueryRule {
    /// Rule id (shared with the regex rule for the same weakness).
    pub id: &'static str,
    /// Weakness kind.
    pub kind: Kind,
    /// Grammar names it runs on.
    pub languages: &'static [&'static str],
    /// The query: captures `@call` and optionally `@arg`.
    pub query: &'static str,
    /// A substring the file must contain for the query to run.
    pub file_requires: &'static str,
}

/// Every tree-sitter rule.
pub static QUERIES: &[QueryRule] = &[
    QueryRule {
        id: "PY-CMDI-002",
        kind: Kind::Cmdi,
        languages: &["python"],
        query: r#"(call
  function: (attribute object: (identifier) @mod attribute: (identifier) @fn)
  arguments: (argument_list . (_) @arg (keyword_argument name: (identifier) @kw value: (true)))
  (#eq? @mod "subprocess")
  (#match? @fn "^(call|run|Popen|check_output|check_call)$")
  (#eq? @kw "shell")) @call"#,
        file_requires: "shell",
    },
    QueryRule {
        id: "PY-EVAL-001",
        kind: Kind::Eval,
        languages: &["python"],
        query: r#"(call
  function: (identifier) @fn
  arguments: (argument_list . (_) @arg)
  (#match? @fn "^(eval|exec)$")) @call"#,
        file_requires: "",
    },
    QueryRule {
        id: "JS-XSS-001",
        kind: Kind::Xss,
        languages: &["javascript", "typescript", "tsx"],
        query: r#"(assignment_expression
  left: (member_expression property: (property_identifier) @prop)
  right: (_) @arg
  (#match? @prop "^(innerHTML|outerHTML)$")) @call
(augmented_assignment_expression
  left: (member_expression property: (property_identifier) @prop)
  right: (_) @arg
  (#match? @prop "^(innerHTML|outerHTML)$")) @call"#,
        file_requires: "HTML",
    },
    QueryRule {
        id: "JS-EVAL-001",
        kind: Kind::Eval,
        languages: &["javascript", "typescript", "tsx"],
        query: r#"(call_expression
  function: (identifier) @fn
  arguments: (arguments . (_) @arg)
  (#eq? @fn "eval")) @call"#,
        file_requires: "eval",
    },
    QueryRule {
        id: "JS-CMDI-001",
        kind: Kind::Cmdi,
        languages: &["javascript", "typescript", "tsx"],
        query: r#"(call_expression
  function: [(identifier) @fn (member_expression property: (property_identifier) @fn)]
  arguments: (arguments . (_) @arg)
  (#match? @fn "^(exec|execSync)$")) @call"#,
        file_requires: "child_process",
    },
    QueryRule {
        id: "GO-CMDI-001",
        kind: Kind::Cmdi,
        languages: &["go"],
        query: r#"(call_expression
  function: (selector_expression operand: (identifier) @pkg field: (field_identifier) @fn)
  arguments: (argument_list . (interpreted_string_literal) @sh . (interpreted_string_literal) @flag . (_) @arg)
  (#eq? @pkg "exec")
  (#eq? @fn "Command")
  (#match? @sh "^\"(sh|bash|/bin/sh|/bin/bash)\"$")
  (#eq? @flag "\"-c\"")) @call"#,
        file_requires: "exec.Command",
    },
    QueryRule {
        id: "JAVA-CMDI-001",
        kind: Kind::Cmdi,
        languages: &["java"],
        query: r#"(method_invocation
  object: (method_invocation name: (identifier) @rt)
  name: (identifier) @fn
  arguments: (argument_list . (_) @arg)
  (#eq? @rt "getRuntime")
  (#eq? @fn "exec")) @call"#,
        file_requires: "getRuntime",
    },
    QueryRule {
        id: "C-CMDI-001",
        kind: Kind::Cmdi,
        languages: &["c", "cpp"],
        query: r#"(call_expression
  function: (identifier) @fn
  arguments: (argument_list . (_) @arg)
  (#match? @fn "^(system|popen)$")) @call"#,
        file_requires: "",
    },
];

/// Runs the tree-sitter rules for `language` (nothing where the `syntax`
/// import is unavailable).
pub fn scan(path: &str, content: &str, language: &str, out: &mut Vec<Finding>) {
    for rule in QUERIES {
        if !rule.languages.contains(&language)
            || (!rule.file_requires.is_empty() && !content.contains(rule.file_requires))
        {
            continue;
        }
        let Some(matches) = run(language, content, rule.query) else {
            continue;
        };
        for m in matches {
            let mut call = None;
            let mut literal = false;
            for c in &m.captures {
                match c.name.as_str() {
                    "call" => call = Some(c),
                    "arg" => literal = is_literal_arg(&c.text),
                    _ => {}
                }
            }
            let Some(call) = call else { continue };
            if literal {
                continue;
            }
            let span = Span {
                start_line: call.start_line,
                start_column: call.start_column,
                end_line: call.end_line,
                end_column: call.end_column,
            };
            let first_line = call.text.lines().next().unwrap_or_default();
            out.push(finding::make(
                &rule.kind.meta(rule.id),
                path,
                span,
                text::clip(first_line.trim()),
            ));
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn run(
    language: &str,
    source: &str,
    query: &str,
) -> Option<Vec<agent_skill_sdk::syntax::QueryMatch>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static UNAVAILABLE: AtomicBool = AtomicBool::new(false);
    if UNAVAILABLE.load(Ordering::Relaxed) {
        return None;
    }
    match agent_skill_sdk::syntax::query(language, source, query) {
        Ok(matches) => Some(matches),
        Err(e) => {
            if matches!(e.kind(), agent_skill_sdk::ErrorKind::Unavailable(_)) {
                UNAVAILABLE.store(true, Ordering::Relaxed);
            }
            None
        }
    }
}

/// Natively the `syntax` import does not exist: tree-sitter rules are skipped.
#[cfg(not(target_arch = "wasm32"))]
fn run(
    _language: &str,
    _source: &str,
    _query: &str,
) -> Option<Vec<agent_skill_sdk::syntax::QueryMatch>> {
    None
}

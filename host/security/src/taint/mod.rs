//! The taint engine: a per-function dataflow over the tree-sitter syntax
//! tree, from sources (request data, environment, arguments) to sinks (SQL,
//! commands, paths, HTML, eval, deserializers, HTTP clients, redirects,
//! LDAP, XPath, the session), through assignments, concatenation,
//! formatting, f-strings and templates, collections, attributes, returns and
//! the file's own functions (summaries). Sanitizers clean values for some
//! categories or all. What is a source, sink, sanitizer or propagator is
//! data: [`spec`] (built-in YAML per language plus `taint:` entries of rule
//! files). Intra-file only: a call into another file is the union of its
//! arguments.

mod analyze;
mod branch;
mod call;
pub mod category;
mod consts;
mod guard;
mod java_checks;
mod lang;
mod lang_php;
mod php_checks;
mod shape;
pub mod spec;
#[cfg(test)]
mod tests;
mod value;

use crate::finding::{Confidence, Finding, FlowStep, Location};
pub use spec::{LANGUAGES, RawSpec, Specs, spec_language};

/// The scanner name of taint findings (`--scanners taint`).
pub const SCANNER: &str = "taint";

/// The CWEs of the taint categories (and the pattern rules' variants).
const TAINT_CWES: [&str; 13] = [
    "CWE-89", "CWE-79", "CWE-22", "CWE-78", "CWE-77", "CWE-94", "CWE-95", "CWE-502", "CWE-918",
    "CWE-601", "CWE-90", "CWE-643", "CWE-501",
];

/// Whether a pattern rule's CWE is the taint category's (`CWE-77` is
/// command injection too, `CWE-94` code injection).
fn same_kind(taint_cwe: &str, cwe: &str) -> bool {
    let norm = |c: &str| {
        match c {
            "CWE-77" => "CWE-78",
            "CWE-94" => "CWE-95",
            other => other,
        }
        .to_string()
    };
    norm(taint_cwe) == norm(cwe)
}

/// Longest snippet in a flow step.
const MAX_SNIPPET: usize = 160;

/// The rule-id prefix of a spec language.
fn prefix(lang: &str) -> &'static str {
    match lang {
        "python" => "PY",
        "java" => "JAVA",
        "javascript" => "JS",
        "go" => "GO",
        "ruby" => "RUBY",
        "php" => "PHP",
        _ => "TAINT",
    }
}

/// Whether the taint engine analyses files of `grammar`.
pub fn supports(grammar: Option<&str>, specs: &Specs) -> bool {
    grammar
        .and_then(spec_language)
        .is_some_and(|l| specs.get(l).is_some())
}

/// Analyses one file: the findings of tainted data reaching sinks, each
/// with its flow.
///
/// # Errors
/// The file does not parse (too large, grammar missing).
pub fn scan(
    path: &str,
    grammar: &str,
    source: &str,
    specs: &Specs,
) -> Result<Vec<Finding>, String> {
    analyse(path, grammar, source, specs).map(|a| a.findings)
}

/// What [`analyse`] found in one file.
#[derive(Debug, Default)]
pub struct Analysis {
    /// The taint findings (and the Java and PHP checks').
    pub findings: Vec<Finding>,
    /// Sinks reached by a parameter of a function the file never calls:
    /// `(file, line, CWE)`. A pattern finding there stays (see
    /// [`supersede`]).
    pub open: Vec<(String, u32, &'static str)>,
}

/// [`scan`], with the sinks the dataflow leaves open.
///
/// # Errors
/// The file does not parse (too large, grammar missing).
pub fn analyse(path: &str, grammar: &str, source: &str, specs: &Specs) -> Result<Analysis, String> {
    let Some(lang_name) = spec_language(grammar) else {
        return Ok(Analysis::default());
    };
    let (Some(spec), Some(lang)) = (specs.get(lang_name), lang::adapter(lang_name)) else {
        return Ok(Analysis::default());
    };
    let tree = agent_syntax::parse_tree(grammar, source).map_err(|e| e.to_string())?;
    let outcome = analyze::Analyzer::run(lang, spec, source, tree.root_node());
    let open = outcome
        .open
        .iter()
        .map(|(line, c)| (path.to_string(), *line, c.meta().cwe))
        .collect();
    let hits = outcome.hits;
    let mut extra = match lang_name {
        "java" => java_checks::check(path, source, tree.root_node()),
        "php" => php_checks::check(path, source, tree.root_node()),
        _ => Vec::new(),
    };
    let lines: Vec<&str> = source.lines().collect();
    let line_text = |n: u32| {
        lines
            .get((n as usize).saturating_sub(1))
            .map_or("", |l| l.trim())
    };
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for h in hits {
        if !seen.insert((h.span.0, h.category)) {
            continue;
        }
        let meta = h.category.meta();
        let (sl, sc, el, ec) = h.span;
        let rule = format!("{}-TAINT-{}", prefix(lang_name), meta.suffix);
        let mut f = Finding::new(
            rule,
            SCANNER,
            meta.severity,
            meta.category,
            meta.title,
            Location {
                file: path.to_string(),
                start_line: sl,
                end_line: el.max(sl),
                start_column: sc,
                end_column: ec,
                function: h.function.clone().filter(|f| !f.is_empty()),
            },
        );
        let source_step = h.flow.first().map(|s| s.note.clone()).unwrap_or_default();
        f.description = format!(
            "{} Flow: {} (line {}) → line {sl}.",
            meta.description,
            source_step.trim_start_matches("source: "),
            h.flow.first().map_or(sl, |s| s.line)
        );
        f.cwe = Some(meta.cwe.to_string());
        f.owasp = Some(meta.owasp.to_string());
        f.remediation = meta.remediation.to_string();
        f.confidence = Confidence::High;
        f.references = vec![format!(
            "https://cwe.mitre.org/data/definitions/{}.html",
            meta.cwe.trim_start_matches("CWE-")
        )];
        f.evidence = crate::rules::cut(line_text(sl), 200);
        f.metadata
            .insert("taint_category".into(), h.category.name().into());
        f.flow = h
            .flow
            .iter()
            .map(|s| FlowStep {
                file: path.to_string(),
                line: s.line,
                snippet: crate::rules::cut(line_text(s.line), MAX_SNIPPET),
                note: s.note.clone(),
            })
            .collect();
        f.fingerprint(Some(line_text(sl)));
        out.push(f);
    }
    out.append(&mut extra);
    Ok(Analysis {
        findings: out,
        open,
    })
}

/// Drops the pattern findings a taint finding of the same file, line and
/// CWE covers (the taint finding carries the flow and replaces them), and
/// every pattern finding of a category the taint engine decides in the
/// languages it analyses (injections, paths, requests, redirects, code,
/// deserialization, the session): those are findings only when tainted
/// data reaches the sink (issue 16, item 4). The pattern rules guess
/// from one line ("a non-literal argument") and fire on casts, escaped
/// values, allowlists and dead branches the dataflow sees through.
pub fn supersede(
    findings: &mut Vec<Finding>,
    grammar: Option<&str>,
    specs: &Specs,
    open: &[(String, u32, &'static str)],
) {
    if !supports(grammar, specs) {
        return;
    }
    // Weak randomness is CWE-338 in the pattern rules, CWE-330 here.
    let key = |f: &Finding| {
        let cwe = match f.cwe.as_deref() {
            Some("CWE-338") => Some("CWE-330".to_string()),
            other => other.map(str::to_string),
        };
        (f.location.file.clone(), f.location.start_line, cwe)
    };
    let covered: std::collections::HashSet<(String, u32, Option<String>)> = findings
        .iter()
        .filter(|f| f.scanner == SCANNER)
        .map(key)
        .collect();
    findings.retain(|f| {
        if f.scanner == SCANNER {
            return true;
        }
        let cwe = f.cwe.as_deref().unwrap_or("");
        if f.scanner.ends_with("/sast") && TAINT_CWES.contains(&cwe) {
            // Kept where a parameter of an uncalled function reaches a sink
            // of the same kind: the caller is in another file.
            return open.iter().any(|(file, line, c)| {
                *file == f.location.file && *line == f.location.start_line && same_kind(c, cwe)
            });
        }
        !covered.contains(&key(f))
    });
}

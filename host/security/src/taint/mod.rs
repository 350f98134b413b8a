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
mod call;
pub mod category;
mod consts;
mod java_checks;
mod lang;
pub mod spec;
#[cfg(test)]
mod tests;
mod value;

use crate::finding::{Confidence, Finding, FlowStep, Location};
pub use spec::{LANGUAGES, RawSpec, Specs, spec_language};

/// The scanner name of taint findings (`--scanners taint`).
pub const SCANNER: &str = "taint";

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
    let Some(lang_name) = spec_language(grammar) else {
        return Ok(Vec::new());
    };
    let (Some(spec), Some(lang)) = (specs.get(lang_name), lang::adapter(lang_name)) else {
        return Ok(Vec::new());
    };
    let tree = agent_syntax::parse_tree(grammar, source).map_err(|e| e.to_string())?;
    let hits = analyze::Analyzer::run(lang, spec, source, tree.root_node());
    let mut extra = if lang_name == "java" {
        java_checks::check(path, source, tree.root_node())
    } else {
        Vec::new()
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
    Ok(out)
}

/// Drops the pattern findings a taint finding of the same file, line and
/// CWE covers (the taint finding carries the flow and replaces them), and
/// the pattern findings of code injection and deserialization in languages
/// the taint engine analyses: those fire only when tainted data reaches
/// the sink (issue 16, item 4).
pub fn supersede(findings: &mut Vec<Finding>, grammar: Option<&str>, specs: &Specs) {
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
        if matches!(cwe, "CWE-94" | "CWE-95" | "CWE-502") && f.scanner.ends_with("/sast") {
            return false;
        }
        !covered.contains(&key(f))
    });
}

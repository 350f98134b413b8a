//! Swift and Objective-C data flow for the iOS rules (issue 19): a small
//! def-use pass over one file, so that a secret or a text field's input
//! stored in `UserDefaults` through a variable, a property or an
//! interpolation is found, and so is a `WKWebView` loading a URL that came
//! from a deep link, a text field or a query parameter.
//!
//! It is deliberately small and specific: the definitions of a name
//! (`let`/`var`, assignments, deep-link parameters) are collected per scope
//! (function, initialiser, closure; an assignment to an undeclared name or
//! to `self.x` is a property of the file's types, visible everywhere), and
//! a name is tainted when any definition of it visible at the use is
//! (flow-insensitive within its scope, to a fixpoint). The general taint
//! engine of the security crate (Python, JavaScript, Java, Go, Ruby, PHP)
//! can absorb it later: the sources and sinks below are the iOS part of
//! such a specification.
//!
//! Findings carry scanner `apple-dev/rules` like the declarative iOS
//! rules, and the chain of definitions in their `flow` metadata.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::config::Rule;
use crate::finding::{Confidence, Finding, Location, Severity};
use crate::rules::RuleError;

use super::facts::{Call, Def, Facts, Origin, identifiers, variables};

/// Which kind of taint a name carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A password, token, secret, key or a text field's input.
    Secret,
    /// Content from outside the app: a deep link, a text field, a query
    /// parameter.
    Untrusted,
}

/// Parts of identifiers that name a secret (lower case).
const SECRET_NAMES: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "api_key",
    "credential",
    "pincode",
    "ssn",
    "creditcard",
    "credit_card",
];

/// Identifiers that read a URL's query (`URLComponents(…).queryItems`).
const QUERY_READS: &[&str] = &["queryItems", "query", "webpageURL"];

/// Runs the pass over one file; findings and errors are appended.
pub fn scan(
    path: &str,
    language: Option<&str>,
    content: &str,
    findings: &mut Vec<Finding>,
    errors: &mut Vec<RuleError>,
) {
    let Some(lang @ ("swift" | "objective-c")) = language else {
        return;
    };
    let facts = match super::facts::read(lang, content) {
        Ok(f) => f,
        Err(message) => {
            errors.push(RuleError {
                rule_id: "IOS-FLOW".into(),
                file: path.to_string(),
                message: format!("the iOS data-flow pass: {message}"),
            });
            return;
        }
    };
    let lines: Vec<&str> = content.lines().collect();
    let flow = Flow::new(&facts, lang);
    let mut out = Out {
        path,
        lines: &lines,
        lang,
        findings,
    };
    for call in &facts.calls {
        check_call(&flow, call, &mut out);
    }
    if lang == "swift" {
        check_file_javascript(&facts, &mut out);
    }
}

/// The tainted definitions of a file, per kind.
struct Flow<'f> {
    facts: &'f Facts,
    lang: &'f str,
    secret: Vec<bool>,
    untrusted: Vec<bool>,
}

impl<'f> Flow<'f> {
    fn new(facts: &'f Facts, lang: &'f str) -> Flow<'f> {
        let mut flow = Flow {
            facts,
            lang,
            secret: vec![false; facts.defs.len()],
            untrusted: vec![false; facts.defs.len()],
        };
        for kind in [Kind::Secret, Kind::Untrusted] {
            // To a fixpoint: each round can only add tainted definitions.
            loop {
                let mut changed = false;
                for (i, d) in facts.defs.iter().enumerate() {
                    if !flow.set(kind)[i] && flow.def_source(d, kind) {
                        flow.set_mut(kind)[i] = true;
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
            }
        }
        flow
    }

    fn set(&self, kind: Kind) -> &[bool] {
        match kind {
            Kind::Secret => &self.secret,
            Kind::Untrusted => &self.untrusted,
        }
    }

    fn set_mut(&mut self, kind: Kind) -> &mut Vec<bool> {
        match kind {
            Kind::Secret => &mut self.secret,
            Kind::Untrusted => &mut self.untrusted,
        }
    }

    fn def_source(&self, d: &Def, kind: Kind) -> bool {
        match d.origin {
            Origin::DeepLink => kind == Kind::Untrusted,
            Origin::Value => self.tainted(&d.value, d.at, kind).is_some(),
        }
    }

    /// The definitions visible at byte `at` for `name`.
    fn visible(&self, name: &str, at: u32) -> impl Iterator<Item = (usize, &'f Def)> {
        let name = name.to_string();
        self.facts
            .defs
            .iter()
            .enumerate()
            .filter(move |(_, d)| d.name == name && d.scope.is_none_or(|s| s.0 <= at && at < s.1))
    }

    /// Why the code `expr` at byte `at` carries `kind`: the source it
    /// names, or the tainted definition it uses.
    fn tainted(&self, expr: &str, at: u32, kind: Kind) -> Option<Why<'f>> {
        if let Some(src) = direct_source(expr, kind, self.lang) {
            return Some(Why::Source(src));
        }
        for id in variables(expr) {
            if let Some((_, d)) = self.visible(id, at).find(|(i, _)| self.set(kind)[*i]) {
                return Some(Why::Def(d));
            }
        }
        None
    }

    /// Whether `expr` is constant: a literal without interpolation, a
    /// resource of the app bundle named by literals, or names whose every
    /// definition is constant.
    fn constant(&self, expr: &str, at: u32, depth: usize) -> bool {
        let e = expr.trim();
        if e.contains("\\(") || depth > 8 {
            return false;
        }
        let ids = variables(e);
        if ids.is_empty() {
            return e.starts_with('"') || e.starts_with("@\"");
        }
        if e.contains("Bundle.main") || e.contains("NSBundle mainBundle") {
            // Every other name must be constant as well.
            return ids
                .iter()
                .filter(|id| self.visible(id, at).next().is_some())
                .all(|id| self.name_constant(id, at, depth));
        }
        ids.len() == 1 && self.name_constant(ids[0], at, depth)
    }

    fn name_constant(&self, name: &str, at: u32, depth: usize) -> bool {
        let mut defs = self.visible(name, at).peekable();
        defs.peek().is_some()
            && defs
                .all(|(_, d)| d.origin == Origin::Value && self.constant(&d.value, d.at, depth + 1))
    }
}

/// Why an expression is tainted.
enum Why<'f> {
    /// It names a source itself (`passwordField.text`, `token`).
    Source(String),
    /// It uses a tainted definition.
    Def(&'f Def),
}

/// The source `expr` names directly, if any.
fn direct_source(expr: &str, kind: Kind, lang: &str) -> Option<String> {
    let text_field = expr.contains(".text") && {
        let i = expr.find(".text").unwrap_or(0) + 5;
        !expr[i..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    };
    let objc_text = lang == "objective-c" && expr.contains(" text]");
    if text_field || objc_text {
        return Some("a text field's input".into());
    }
    let ids = identifiers(expr);
    match kind {
        Kind::Secret => ids
            .iter()
            .find(|id| {
                let l = id.to_ascii_lowercase();
                l == "pin" || SECRET_NAMES.iter().any(|s| l.contains(s))
            })
            .map(|id| format!("`{id}`")),
        Kind::Untrusted => ids
            .iter()
            .find(|id| QUERY_READS.contains(id))
            .map(|id| format!("a URL's `{id}`")),
    }
}

struct Out<'a> {
    path: &'a str,
    lines: &'a [&'a str],
    lang: &'a str,
    findings: &'a mut Vec<Finding>,
}

fn check_call(flow: &Flow<'_>, call: &Call, out: &mut Out<'_>) {
    let m = call.method.as_str();
    let user_defaults = matches!(m, "set" | "setValue" | "setObject" | "setBool")
        && receiver_is(flow, call, &["UserDefaults", "NSUserDefaults"]);
    if user_defaults {
        if let Some(why) = flow.tainted(&call.first, call.at, Kind::Secret) {
            out.report("IOS-SEC-001", call, &why);
        }
        return;
    }
    if !receiver_is(flow, call, &["webView", "WebView", "webview", "WKWebView"]) {
        return;
    }
    match m {
        "load" | "loadFileURL" | "loadRequest" => {
            let read_access = call
                .args
                .split_once("allowingReadAccessTo:")
                .map(|(_, r)| r.to_string())
                .unwrap_or_default();
            let why = flow
                .tainted(&call.first, call.at, Kind::Untrusted)
                .or_else(|| flow.tainted(&read_access, call.at, Kind::Untrusted));
            if let Some(why) = why {
                out.report("IOS-WEBVIEW-003", call, &why);
            }
        }
        "loadHTMLString" => {
            if let Some(why) = flow.tainted(&call.first, call.at, Kind::Untrusted) {
                out.report("IOS-WEBVIEW-001", call, &why);
            } else if !flow.constant(&call.first, call.at, 0) {
                out.report(
                    "IOS-WEBVIEW-001",
                    call,
                    &Why::Source("HTML built at run time".into()),
                );
            }
        }
        _ => {}
    }
}

/// Whether the call's receiver is (or is a name defined as) one of
/// `types` (a prefix or a part of the receiver's code).
fn receiver_is(flow: &Flow<'_>, call: &Call, types: &[&str]) -> bool {
    let names = |code: &str| types.iter().any(|t| code.contains(t));
    if names(&call.receiver) {
        return true;
    }
    let ids = variables(&call.receiver);
    let mut seen = HashSet::new();
    ids.iter().any(|id| {
        seen.insert(*id)
            && flow
                .visible(id, call.at)
                .any(|(_, d)| d.origin == Origin::Value && names(&d.value))
    })
}

/// JavaScript turned on in a type that loads file URLs: a page from a
/// file URL then runs script with access to local files.
fn check_file_javascript(facts: &Facts, out: &mut Out<'_>) {
    for s in &facts.member_sets {
        let here = facts.type_of(s.at);
        let loads_files = facts
            .calls
            .iter()
            .any(|c| c.method == "loadFileURL" && facts.type_of(c.at) == here);
        if !loads_files {
            continue;
        }
        let js = s.target.ends_with("javaScriptEnabled")
            || s.target.ends_with("allowsContentJavaScript");
        if js && s.value.trim() == "true" {
            let call = Call {
                receiver: String::new(),
                method: String::new(),
                first: String::new(),
                args: String::new(),
                at: 0,
                line: s.line,
                column: s.column,
                end: (s.line, s.column),
            };
            out.report(
                "IOS-WEBVIEW-004",
                &call,
                &Why::Source(format!("`{} = true`", s.target)),
            );
        }
    }
}

impl Out<'_> {
    fn report(&mut self, id: &str, call: &Call, why: &Why<'_>) {
        let Some(rule) = rule(id, self.lang) else {
            return;
        };
        let line = self
            .lines
            .get((call.line as usize).saturating_sub(1))
            .copied()
            .unwrap_or("");
        let mut f = Finding::new(
            rule.id.clone(),
            format!("{}/rules", super::SKILL),
            rule.severity,
            rule.category.clone(),
            rule.title.clone(),
            Location {
                file: self.path.to_string(),
                start_line: call.line,
                end_line: call.end.0,
                start_column: call.column,
                end_column: call.end.1,
                function: None,
            },
        );
        f.skill_source = Some(super::SKILL.to_string());
        let flow = match why {
            Why::Source(s) => s.clone(),
            Why::Def(d) => match d.origin {
                Origin::DeepLink => format!("`{}`: a deep link's URL (line {})", d.name, d.line),
                Origin::Value => format!(
                    "`{}` = {} (line {})",
                    d.name,
                    crate::rules::cut(d.value.trim(), 80),
                    d.line
                ),
            },
        };
        f.description = format!("{} Here: {flow}.", rule.description);
        f.cwe = rule.cwe.clone();
        f.owasp = rule.owasp.clone();
        f.remediation = rule.remediation.clone();
        f.confidence = rule.confidence;
        f.references = rule.references.clone();
        f.evidence = crate::rules::cut(line.trim(), 200);
        f.metadata.insert("flow".into(), flow);
        f.fingerprint(Some(line));
        self.findings.push(f);
    }
}

/// The rule `id` for `lang`: from the built-in rule files (IOS-SEC-001)
/// or this pass's own ([`own_rules`]).
fn rule(id: &str, lang: &str) -> Option<&'static Rule> {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    let rules = RULES.get_or_init(|| {
        let mut all: Vec<Rule> = super::configs()
            .map(|c| c.into_iter().flat_map(|c| c.rules).collect())
            .unwrap_or_default();
        all.extend(own_rules());
        all
    });
    rules
        .iter()
        .find(|r| r.id == id && (r.languages.is_empty() || r.languages.iter().any(|l| l == lang)))
}

/// The rules only this pass reports (they have no pattern of their own).
fn own_rules() -> Vec<Rule> {
    let make =
        |id: &str, title: &str, description: &str, severity, cwe: &str, remediation: &str| Rule {
            id: id.into(),
            title: title.into(),
            description: description.into(),
            severity,
            category: if cwe == "CWE-79" {
                "injection"
            } else {
                "misconfiguration"
            }
            .into(),
            confidence: Confidence::Medium,
            cwe: Some(cwe.into()),
            owasp: None,
            remediation: remediation.into(),
            references: Vec::new(),
            pattern: crate::config::PatternKind::Regex(String::new()),
            languages: vec!["swift".into(), "objective-c".into()],
            paths: Vec::new(),
            exclude_paths: Vec::new(),
            line: 0,
        };
    vec![
        make(
            "IOS-WEBVIEW-001",
            "WKWebView loads HTML that is not a literal",
            "loadHTMLString is given HTML built at run time; untrusted content rendered in the app's web view can run script with the page's privileges.",
            Severity::Medium,
            "CWE-79",
            "Escape or sanitise untrusted content before rendering it, or load it with JavaScript disabled (WKWebpagePreferences.allowsContentJavaScript = false)",
        ),
        make(
            "IOS-WEBVIEW-003",
            "WKWebView loads a URL from outside the app",
            "The web view loads a URL that comes from a deep link, a text field or a URL's query: another app or a link in a message decides what the app's web view shows and runs, with the app's cookies and script bridges.",
            Severity::High,
            "CWE-601",
            "Allow only your own hosts (compare url.host against a fixed list, require https) before loading; open anything else in Safari (UIApplication.open / SFSafariViewController)",
        ),
        make(
            "IOS-WEBVIEW-004",
            "JavaScript enabled in a web view that loads file URLs",
            "The file loads file URLs into a web view and turns JavaScript on: a page from a file URL runs script that can read the files it was given access to.",
            Severity::Medium,
            "CWE-749",
            "Turn JavaScript off for local content (allowsContentJavaScript = false), or load it with loadHTMLString and a constant baseURL; limit allowingReadAccessTo: to the page's own directory",
        ),
    ]
}

//! Taint specifications as data: per language, the sources, sinks,
//! sanitizers and propagators. The built-in ones are the YAML files in
//! `specs/`; `.security.yaml` and security-rule skills' rule files add more
//! under a `taint:` key (the same schema, one entry per language).

use std::collections::HashMap;

use regex::Regex;
use serde::Deserialize;

use super::category::Category;

/// One language's specification as written in YAML.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSpec {
    /// The language (`python`, `java`, `javascript`, `go`, `ruby`;
    /// `javascript` also covers TypeScript).
    pub language: String,
    /// Where untrusted data comes from.
    #[serde(default)]
    pub sources: RawSources,
    /// Where it must not arrive.
    #[serde(default)]
    pub sinks: Vec<RawSink>,
    /// Calls whose result is clean (for some categories or all).
    #[serde(default)]
    pub sanitizers: Vec<RawSanitizer>,
    /// Calls that move taint from their arguments into their receiver
    /// (`list.append(x)`, `sb.append(x)`, `map.put(k, x)`).
    #[serde(default)]
    pub propagators: Vec<String>,
    /// Calls whose result is their arguments' text (`str`, `format`,
    /// `unquote`). Any other call the spec does not name gives an opaque
    /// value (a parsed document, another module's object): still tainted,
    /// but not HTML text a route returns (see `returns_of_decorated`).
    #[serde(default)]
    pub text_calls: Vec<String>,
}

/// Sources of one language.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSources {
    /// Expressions (names, attribute paths) that are untrusted:
    /// `request.args`, `os.environ`, `$_GET`.
    #[serde(default)]
    pub exprs: Vec<String>,
    /// Calls whose result is untrusted: `input`, `*.getParameter`.
    #[serde(default)]
    pub calls: Vec<String>,
    /// Parameters of functions with one of these decorators are untrusted
    /// (`route` matches `@app.route(...)`).
    #[serde(default)]
    pub param_decorators: Vec<String>,
    /// Parameters with one of these annotations are untrusted
    /// (`RequestParam` matches `@RequestParam("id")`).
    #[serde(default)]
    pub param_annotations: Vec<String>,
    /// Which of `exprs` and `calls` are local: the input of the user who
    /// runs the program (command line, environment, standard input). A
    /// file path built only from them is not a finding; every other sink
    /// still is.
    #[serde(default)]
    pub local: Vec<String>,
}

/// One sink family.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSink {
    /// `sqli`, `xss`, `path`, `command`, `code`, `deserialization`, `ssrf`,
    /// `redirect`, `ldap`, `xpath`, `trust-boundary`.
    pub category: String,
    /// Calls (`*.execute`, `os.system`, `new File`).
    #[serde(default)]
    pub calls: Vec<String>,
    /// 0-based argument positions that matter; empty: every argument.
    #[serde(default)]
    pub args: Vec<usize>,
    /// The receiver's taint counts too (`data.html_safe`).
    #[serde(default)]
    pub receiver: bool,
    /// Assignments into these are sinks (`session` covers
    /// `session["k"] = v`; `*.innerHTML` covers `el.innerHTML = v`).
    #[serde(default)]
    pub assigns: Vec<String>,
    /// Values returned by functions with one of these decorators are sinks.
    #[serde(default)]
    pub returns_of_decorated: Vec<String>,
    /// A regex the call's text must match (`shell\s*=\s*True`).
    pub requires: Option<String>,
    /// A regex the call's text must not match (`SafeLoader`).
    pub unless: Option<String>,
}

/// One sanitizer family.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSanitizer {
    /// Calls whose result is clean.
    pub calls: Vec<String>,
    /// The categories they clean; empty: every one.
    #[serde(default)]
    pub categories: Vec<String>,
}

/// A call or expression pattern: `a.b` exactly, `*.b` (`b` or any
/// `x.b`), or `a.*` (anything under `a.`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pat {
    /// The whole text.
    Exact(String),
    /// The text itself (without the `*.`) or anything ending in `.text`.
    Suffix(String),
    /// Anything starting with the text and a dot (`hashlib.*`).
    Prefix(String),
}

impl Pat {
    fn new(p: &str) -> Pat {
        let p: String = p.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(rest) = p.strip_prefix("*.") {
            return Pat::Suffix(rest.to_string());
        }
        match p.strip_suffix(".*") {
            Some(head) => Pat::Prefix(head.to_string()),
            None => Pat::Exact(p),
        }
    }

    /// Whether `text` (normalized: no spaces except after `new`) matches.
    pub fn matches(&self, text: &str) -> bool {
        match self {
            Pat::Exact(p) => p == text,
            Pat::Suffix(s) => {
                text == s
                    || (text.len() > s.len()
                        && text.ends_with(s.as_str())
                        && text.as_bytes()[text.len() - s.len() - 1] == b'.')
            }
            Pat::Prefix(h) => {
                text.len() > h.len() + 1
                    && text.starts_with(h.as_str())
                    && text.as_bytes()[h.len()] == b'.'
            }
        }
    }
}

/// A compiled sink.
#[derive(Debug, Clone)]
pub struct Sink {
    /// Its category.
    pub category: Category,
    /// The calls.
    pub calls: Vec<Pat>,
    /// Argument positions; empty: all.
    pub args: Vec<usize>,
    /// The receiver counts.
    pub receiver: bool,
    /// Assignment targets.
    pub assigns: Vec<Pat>,
    /// Decorators whose functions' returns are sinks.
    pub returns_of_decorated: Vec<String>,
    /// Must match the call text.
    pub requires: Option<Regex>,
    /// Must not match the call text.
    pub unless: Option<Regex>,
}

/// A compiled sanitizer.
#[derive(Debug, Clone)]
pub struct Sanitizer {
    /// The calls.
    pub calls: Vec<Pat>,
    /// Category bits cleaned (all bits: every category).
    pub mask: u16,
}

/// One language's compiled specification (built-ins plus extensions).
#[derive(Debug, Clone, Default)]
pub struct LangSpec {
    /// Source expressions.
    pub source_exprs: Vec<Pat>,
    /// Source calls.
    pub source_calls: Vec<Pat>,
    /// The local ones among both (`sources.local`).
    pub local_sources: Vec<Pat>,
    /// Decorators marking untrusted parameters.
    pub param_decorators: Vec<String>,
    /// Annotations marking untrusted parameters.
    pub param_annotations: Vec<String>,
    /// Sinks.
    pub sinks: Vec<Sink>,
    /// Sanitizers.
    pub sanitizers: Vec<Sanitizer>,
    /// Propagators (arguments into receiver).
    pub propagators: Vec<Pat>,
    /// Calls whose result is their arguments' text.
    pub text_calls: Vec<Pat>,
}

/// Every language's specification.
#[derive(Debug, Clone, Default)]
pub struct Specs {
    by_lang: HashMap<String, LangSpec>,
}

/// The languages the taint engine has an adapter for.
pub const LANGUAGES: [&str; 6] = ["python", "java", "javascript", "go", "ruby", "php"];

/// The built-in specification files: (name, text).
pub const BUILTIN: [(&str, &str); 6] = [
    ("python.yaml", include_str!("specs/python.yaml")),
    ("java.yaml", include_str!("specs/java.yaml")),
    ("javascript.yaml", include_str!("specs/javascript.yaml")),
    ("go.yaml", include_str!("specs/go.yaml")),
    ("ruby.yaml", include_str!("specs/ruby.yaml")),
    ("php.yaml", include_str!("specs/php.yaml")),
];

/// The language whose spec and adapter a grammar uses.
pub fn spec_language(grammar: &str) -> Option<&'static str> {
    Some(match grammar {
        "python" => "python",
        "java" => "java",
        "javascript" | "typescript" | "tsx" => "javascript",
        "go" => "go",
        "ruby" => "ruby",
        "php" => "php",
        _ => return None,
    })
}

impl Specs {
    /// The built-in specifications.
    ///
    /// # Panics
    /// Never for the shipped files (a test parses them).
    pub fn builtin() -> Specs {
        let mut specs = Specs::default();
        for (name, text) in BUILTIN {
            let raw: RawSpec = serde_yaml::from_str(text)
                .unwrap_or_else(|e| panic!("built-in taint spec {name}: {e}"));
            specs
                .add(&raw)
                .unwrap_or_else(|(field, e)| panic!("built-in taint spec {name}: {field}: {e}"));
        }
        specs
    }

    /// The specification of `language` (a spec language, see
    /// [`spec_language`]).
    pub fn get(&self, language: &str) -> Option<&LangSpec> {
        self.by_lang.get(language)
    }

    /// Adds `raw` to its language.
    ///
    /// # Errors
    /// `(field, message)`: an unknown language or category, a bad regex.
    pub fn add(&mut self, raw: &RawSpec) -> Result<(), (String, String)> {
        check(raw)?;
        let s = self.by_lang.entry(raw.language.clone()).or_default();
        let pats = |v: &[String]| v.iter().map(|p| Pat::new(p)).collect::<Vec<_>>();
        s.source_exprs.extend(pats(&raw.sources.exprs));
        s.source_calls.extend(pats(&raw.sources.calls));
        s.local_sources.extend(pats(&raw.sources.local));
        s.param_decorators
            .extend(raw.sources.param_decorators.iter().cloned());
        s.param_annotations
            .extend(raw.sources.param_annotations.iter().cloned());
        for k in &raw.sinks {
            let re = |r: &Option<String>| r.as_deref().map(Regex::new).transpose();
            s.sinks.push(Sink {
                // `check` validated the category and the regexes.
                category: Category::parse(&k.category).unwrap_or(Category::Sqli),
                calls: pats(&k.calls),
                args: k.args.clone(),
                receiver: k.receiver,
                assigns: pats(&k.assigns),
                returns_of_decorated: k.returns_of_decorated.clone(),
                requires: re(&k.requires).ok().flatten(),
                unless: re(&k.unless).ok().flatten(),
            });
        }
        for z in &raw.sanitizers {
            let mask = if z.categories.is_empty() {
                u16::MAX
            } else {
                z.categories
                    .iter()
                    .filter_map(|c| Category::parse(c))
                    .fold(0, |m, c| m | c.bit())
            };
            s.sanitizers.push(Sanitizer {
                calls: pats(&z.calls),
                mask,
            });
        }
        s.propagators.extend(pats(&raw.propagators));
        s.text_calls.extend(pats(&raw.text_calls));
        Ok(())
    }
}

/// Validates a raw spec; the error names the field (`sinks[2].category`).
fn check(raw: &RawSpec) -> Result<(), (String, String)> {
    if !LANGUAGES.contains(&raw.language.as_str()) {
        return Err((
            "language".into(),
            format!(
                "`{}` has no taint adapter; the languages are: {}",
                raw.language,
                LANGUAGES.join(", ")
            ),
        ));
    }
    let cats = || {
        super::category::ALL
            .iter()
            .map(|c| c.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for (i, l) in raw.sources.local.iter().enumerate() {
        if !raw.sources.exprs.contains(l) && !raw.sources.calls.contains(l) {
            return Err((
                format!("sources.local[{i}]"),
                format!("`{l}` is not one of this entry's `sources.exprs` or `sources.calls`"),
            ));
        }
    }
    for (i, k) in raw.sinks.iter().enumerate() {
        if Category::parse(&k.category).is_none() {
            return Err((
                format!("sinks[{i}].category"),
                format!(
                    "unknown category `{}`; the categories are: {}",
                    k.category,
                    cats()
                ),
            ));
        }
        if k.calls.is_empty() && k.assigns.is_empty() && k.returns_of_decorated.is_empty() {
            return Err((
                format!("sinks[{i}]"),
                "a sink needs `calls`, `assigns` or `returns_of_decorated`".into(),
            ));
        }
        for (field, r) in [("requires", &k.requires), ("unless", &k.unless)] {
            if let Some(r) = r
                && let Err(e) = Regex::new(r)
            {
                return Err((format!("sinks[{i}].{field}"), format!("bad regex: {e}")));
            }
        }
    }
    for (i, z) in raw.sanitizers.iter().enumerate() {
        for (j, c) in z.categories.iter().enumerate() {
            if Category::parse(c).is_none() {
                return Err((
                    format!("sanitizers[{i}].categories[{j}]"),
                    format!("unknown category `{c}`; the categories are: {}", cats()),
                ));
            }
        }
    }
    Ok(())
}

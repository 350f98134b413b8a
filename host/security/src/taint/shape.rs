//! What a value looks like, read from the syntax: text built by
//! concatenation or interpolation, a comprehension's scope, a URL parsed
//! from a variable, and a response declared as something other than HTML.

use agent_syntax::tree_sitter::Node;

use super::analyze::{Analyzer, descendants};
use super::lang::{Role, squash};

/// A response declared as something other than HTML (`text/plain`, JSON,
/// XML, CSV): `setContentType("text/plain")`, `header("Content-Type:
/// application/json")`, `mimetype="application/json"`.
static NON_HTML: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r#"(?i)(setContentType|content-type|mimetype|content_type|media_type)\s*[(=:,]?\s*["']\s*(content-type:\s*)?(text/plain|application/json|application/xml|text/csv)"#,
    )
    .expect("regex")
});

impl<'t> Analyzer<'_, 't> {
    /// `x` when `n` parses it as a URL (`urlparse(x)`, `new URL(x)`,
    /// `url.Parse(x)`, `parse_url($x)`, `URI(x)`).
    pub(super) fn parsed_from(&self, n: Node<'t>) -> Option<String> {
        if !matches!(self.lang.role(n.kind()), Role::Call | Role::New) {
            return None;
        }
        let parts = super::lang::call_parts(self.lang, n, self.src);
        let name = parts.name.to_ascii_lowercase();
        let uri_create = name == "create" && parts.callee.ends_with("URI.create");
        if !(name.contains("parse") || name == "url" || name == "uri" || uri_create) {
            return None;
        }
        // The variable the URL is made of (`URI.create(x == null ? "/" : x)`).
        let a = *parts.args.first()?;
        std::iter::once(a)
            .chain(descendants(a))
            .find(|d| self.lang.role(d.kind()) == Role::Ident)
            .map(|d| squash(d, self.src))
    }

    /// Whether the function around `node` (or the file, for top-level
    /// code) declares a non-HTML response type.
    pub(super) fn non_html_response(&self, node: Node<'t>) -> bool {
        let mut n = node;
        while let Some(p) = n.parent() {
            n = p;
            if self.lang.role(n.kind()) == Role::Function {
                break;
            }
        }
        NON_HTML.is_match(self.text(n))
    }
}

/// Python comprehensions and generator expressions.
pub(super) fn is_comprehension(kind: &str) -> bool {
    matches!(
        kind,
        "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension"
            | "generator_expression"
    )
}

/// Node kinds whose value is text built from their parts: binary
/// operators (`"<p>" + x`, `"%s" % x`), strings with interpolation
/// (f-strings, template literals, `"#{x}"`).
pub(super) fn is_text_building(kind: &str) -> bool {
    matches!(
        kind,
        "binary_operator"
            | "binary_expression"
            | "binary"
            | "string"
            | "template_string"
            | "interpolated_string_expression"
            | "concatenated_string"
            | "encapsed_string"
    )
}

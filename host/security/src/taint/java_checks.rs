//! Two Java checks that need a method's context rather than a line
//! (issue 16, item 4): a `Cookie` added to the response without
//! `setSecure(true)` (CWE-614), and `java.util.Random`/`Math.random()` in a
//! method whose values end up in a cookie, the session or a
//! security-named variable (CWE-330).

use std::sync::LazyLock;

use agent_syntax::tree_sitter::Node;
use regex::Regex;

use crate::finding::{Confidence, Finding, Location, Severity};

static SECURITY_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b\w*(token|secret|passw|nonce|salt|otp|apikey|api_key|sessionid|rememberme|csrf|auth)\w*\s*=")
        .expect("regex")
});

fn text<'s>(n: Node<'_>, src: &'s str) -> &'s str {
    &src[n.byte_range()]
}

fn walk<'t>(n: Node<'t>, out: &mut Vec<Node<'t>>) {
    out.extend(super::analyze::descendants(n));
}

/// The findings of both checks in one Java file.
pub fn check(path: &str, src: &str, root: Node<'_>) -> Vec<Finding> {
    let mut nodes = Vec::new();
    walk(root, &mut nodes);
    let mut out = Vec::new();
    for m in nodes
        .iter()
        .filter(|n| matches!(n.kind(), "method_declaration" | "constructor_declaration"))
    {
        let body = text(*m, src);
        let mut inner = Vec::new();
        walk(*m, &mut inner);
        cookies(path, src, body, &inner, &mut out);
        randomness(path, src, body, &inner, &mut out);
    }
    out
}

fn cookies(path: &str, src: &str, body: &str, nodes: &[Node<'_>], out: &mut Vec<Finding>) {
    for d in nodes.iter().filter(|n| n.kind() == "variable_declarator") {
        let (Some(name), Some(value)) = (
            d.child_by_field_name("name"),
            d.child_by_field_name("value"),
        ) else {
            continue;
        };
        let is_cookie = value.kind() == "object_creation_expression"
            && value
                .child_by_field_name("type")
                .is_some_and(|t| text(t, src).rsplit('.').next() == Some("Cookie"));
        if !is_cookie {
            continue;
        }
        let name = text(name, src);
        let squashed: String = body.chars().filter(|c| !c.is_whitespace()).collect();
        if squashed.contains(&format!("{name}.setSecure(true)")) {
            continue;
        }
        let added = nodes.iter().find(|n| {
            n.kind() == "method_invocation"
                && n.child_by_field_name("name")
                    .is_some_and(|x| text(x, src) == "addCookie")
                && n.child_by_field_name("arguments")
                    .is_some_and(|a| text(a, src).trim_matches(['(', ')', ' ']) == name)
        });
        if let Some(at) = added {
            out.push(finding(
                path,
                src,
                *at,
                "JAVA-COOKIE-001",
                "CWE-614",
                "Cookie sent without the Secure flag",
                &format!("The cookie `{name}` is added to the response without `setSecure(true)`: it is also sent over plain HTTP, where it can be read."),
                "Call `setSecure(true)` (and `setHttpOnly(true)`) on the cookie before adding it.",
                Severity::Low,
            ));
        }
    }
}

fn randomness(path: &str, src: &str, body: &str, nodes: &[Node<'_>], out: &mut Vec<Finding>) {
    let sensitive = body.contains("addCookie")
        || body.contains("setAttribute")
        || body.contains("putValue")
        || SECURITY_NAME.is_match(body);
    if !sensitive {
        return;
    }
    for n in nodes {
        let weak = match n.kind() {
            "object_creation_expression" => n
                .child_by_field_name("type")
                .is_some_and(|t| matches!(text(t, src), "Random" | "java.util.Random")),
            "method_invocation" => {
                let squashed: String = text(*n, src)
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect();
                squashed == "Math.random()" || squashed == "java.lang.Math.random()"
            }
            _ => false,
        };
        if weak {
            out.push(finding(
                path,
                src,
                *n,
                "JAVA-WEAKRAND-001",
                "CWE-330",
                "Predictable random value used for a security purpose",
                "java.util.Random / Math.random() is predictable; its value goes into a cookie, the session or a security-named variable in this method.",
                "Use java.security.SecureRandom for tokens, identifiers and keys.",
                Severity::Medium,
            ));
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn finding(
    path: &str,
    src: &str,
    n: Node<'_>,
    rule: &str,
    cwe: &str,
    title: &str,
    description: &str,
    remediation: &str,
    severity: Severity,
) -> Finding {
    let (s, e) = (n.start_position(), n.end_position());
    let line_text = src.lines().nth(s.row).unwrap_or("").trim();
    let mut f = Finding::new(
        rule,
        super::SCANNER,
        severity,
        "cryptography",
        title,
        Location {
            file: path.to_string(),
            start_line: s.row as u32 + 1,
            end_line: e.row as u32 + 1,
            start_column: s.column as u32 + 1,
            end_column: e.column as u32 + 1,
            function: None,
        },
    );
    if rule.contains("-COOKIE") {
        f.category = "insecure-configuration".into();
    }
    f.description = description.into();
    f.remediation = remediation.into();
    f.cwe = Some(cwe.into());
    f.owasp = Some("A02:2021".into());
    f.confidence = Confidence::High;
    f.evidence = crate::rules::cut(line_text, 200);
    f.fingerprint(Some(line_text));
    f
}

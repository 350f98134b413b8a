//! PHP checks of a call's own arguments (no dataflow needed): weak hashes
//! of secrets (CWE-328), predictable random values for security values
//! (CWE-330), weak ciphers and modes (CWE-327), and cookies sent without
//! the Secure flag (CWE-614).

use std::sync::LazyLock;

use agent_syntax::tree_sitter::Node;
use regex::Regex;

use super::java_checks::finding;
use crate::finding::{Finding, Severity};

/// A statement about a secret, a token or a one-time code.
static SECURITY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(token|secret|passw|nonce|salt|otp|csrf|session|reset|auth|sign|hmac|apikey|api_key|(^|[^a-z])(code|key|pin)([^a-z]|$))")
        .expect("regex")
});

/// Cipher names and modes that are broken or leak structure.
static WEAK_CIPHER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i)^["'](des|rc2|rc4|bf|blowfish|idea|cast5|seed)\b|ecb"#).expect("regex")
});

fn text<'s>(n: Node<'_>, src: &'s str) -> &'s str {
    &src[n.byte_range()]
}

/// The call's positional arguments (each `argument` node's expression).
fn args<'t>(call: Node<'t>) -> Vec<Node<'t>> {
    let Some(list) = call.child_by_field_name("arguments") else {
        return Vec::new();
    };
    let mut cursor = list.walk();
    list.named_children(&mut cursor)
        .map(|a| a.named_child(0).unwrap_or(a))
        .collect()
}

/// The statement around `n` (its assignment target names the value).
fn statement<'t>(mut n: Node<'t>) -> Node<'t> {
    while let Some(p) = n.parent() {
        if p.kind().ends_with("_statement") || p.kind() == "program" {
            return if p.kind() == "program" { n } else { p };
        }
        n = p;
    }
    n
}

/// Whether an array literal sets `key` to `true`.
fn sets_true(arr: &str, key: &str) -> bool {
    let squashed: String = arr.chars().filter(|c| !c.is_whitespace()).collect();
    let squashed = squashed.to_ascii_lowercase();
    squashed.contains(&format!("\"{key}\"=>true")) || squashed.contains(&format!("'{key}'=>true"))
}

/// The findings of every check in one PHP file.
pub fn check(path: &str, src: &str, root: Node<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for call in super::analyze::descendants(root)
        .into_iter()
        .filter(|n| n.kind() == "function_call_expression")
    {
        let Some(name) = call.child_by_field_name("function") else {
            continue;
        };
        let name = text(name, src)
            .trim_start_matches('\\')
            .to_ascii_lowercase();
        let a = args(call);
        let arg = |i: usize| a.get(i).map_or("", |n| text(*n, src));
        let context = text(statement(call), src);
        let hit = match name.as_str() {
            "md5" | "sha1" if SECURITY.is_match(context) => Some((
                "PHP-CRYPTO-001",
                "CWE-328",
                "Weak hash of a secret",
                "MD5 and SHA-1 are fast and broken: a password or token hashed with them is cracked or forged.",
                "Use password_hash() for passwords and hash_hmac('sha256', ...) for signatures.",
                Severity::Medium,
            )),
            "hash" | "hash_hmac"
                if matches!(
                    arg(0)
                        .trim_matches(['"', '\''])
                        .to_ascii_lowercase()
                        .as_str(),
                    "md5" | "sha1" | "md4" | "md2"
                ) && SECURITY.is_match(context) =>
            {
                Some((
                    "PHP-CRYPTO-001",
                    "CWE-328",
                    "Weak hash of a secret",
                    "MD5 and SHA-1 are fast and broken: a password or token hashed with them is cracked or forged.",
                    "Use password_hash() for passwords and hash_hmac('sha256', ...) for signatures.",
                    Severity::Medium,
                ))
            }
            "openssl_encrypt" | "openssl_decrypt" if WEAK_CIPHER.is_match(arg(1)) => Some((
                "PHP-CRYPTO-002",
                "CWE-327",
                "Weak cipher or mode",
                "DES, RC4, Blowfish and ECB mode do not protect the data: short keys, biased streams, or identical blocks that show through.",
                "Use an authenticated cipher: aes-256-gcm with a random IV, or sodium_crypto_secretbox().",
                Severity::High,
            )),
            n if n.starts_with("mcrypt_") => Some((
                "PHP-CRYPTO-002",
                "CWE-327",
                "Weak cipher or mode",
                "mcrypt is unmaintained and its ciphers are used without authentication.",
                "Use sodium_crypto_secretbox() or openssl with aes-256-gcm.",
                Severity::High,
            )),
            "rand" | "mt_rand" | "lcg_value" | "uniqid" | "str_shuffle" | "array_rand"
                if SECURITY.is_match(context) =>
            {
                Some((
                    "PHP-RANDOM-001",
                    "CWE-330",
                    "Predictable random value used for a security purpose",
                    "rand(), mt_rand(), uniqid() and lcg_value() are predictable; the value is a token, code or key.",
                    "Use random_bytes() or random_int().",
                    Severity::Medium,
                ))
            }
            "setcookie" | "setrawcookie" if insecure_setcookie(&a, src) => Some(cookie()),
            "session_set_cookie_params" if insecure_session_params(&a, src) => Some(cookie()),
            "ini_set"
                if arg(0).contains("session.cookie_secure")
                    && matches!(
                        arg(1)
                            .trim_matches(['"', '\''])
                            .to_ascii_lowercase()
                            .as_str(),
                        "0" | "false" | "off" | ""
                    ) =>
            {
                Some(cookie())
            }
            _ => None,
        };
        if let Some((rule, cwe, title, description, remediation, severity)) = hit {
            // One finding per rule and line (`str_shuffle(md5(mt_rand()))`).
            let line = call.start_position().row as u32 + 1;
            if out
                .iter()
                .any(|f: &Finding| f.rule_id == rule && f.location.start_line == line)
            {
                continue;
            }
            out.push(finding(
                path,
                src,
                call,
                rule,
                cwe,
                title,
                description,
                remediation,
                severity,
            ));
        }
    }
    out
}

type Check = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    Severity,
);

fn cookie() -> Check {
    (
        "PHP-COOKIE-001",
        "CWE-614",
        "Cookie sent without the Secure flag",
        "The cookie is also sent over plain HTTP, where it can be read.",
        "Pass `secure: true` (the options array's \"secure\" => true, or the sixth argument).",
        Severity::Low,
    )
}

/// `setcookie(name, value, options[])` without `"secure" => true`, or the
/// positional form whose sixth argument is missing or false.
fn insecure_setcookie(a: &[Node<'_>], src: &str) -> bool {
    match a.get(2) {
        Some(o) if o.kind() == "array_creation_expression" => !sets_true(text(*o, src), "secure"),
        _ => a
            .get(5)
            .is_none_or(|s| matches!(text(*s, src).to_ascii_lowercase().as_str(), "false" | "0")),
    }
}

/// `session_set_cookie_params([...])` without `"secure" => true`, or the
/// positional form whose fourth argument is missing or false.
fn insecure_session_params(a: &[Node<'_>], src: &str) -> bool {
    match a.first() {
        Some(o) if o.kind() == "array_creation_expression" => !sets_true(text(*o, src), "secure"),
        _ => a
            .get(3)
            .is_none_or(|s| matches!(text(*s, src).to_ascii_lowercase().as_str(), "false" | "0")),
    }
}

//! The weakness categories a taint sink belongs to: each names its CWE,
//! the rule-id suffix, title, description and remediation.

use crate::finding::Severity;

/// What kind of sink tainted data reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// SQL text (CWE-89).
    Sqli,
    /// HTML output (CWE-79).
    Xss,
    /// File paths (CWE-22).
    Path,
    /// OS commands (CWE-78).
    Command,
    /// Code evaluation (CWE-95).
    Code,
    /// Deserialization (CWE-502).
    Deser,
    /// Server-side requests (CWE-918).
    Ssrf,
    /// Redirects (CWE-601).
    Redirect,
    /// LDAP queries (CWE-90).
    Ldap,
    /// XPath queries (CWE-643).
    Xpath,
    /// Session attributes (CWE-501).
    Trust,
}

/// Every category, in the order of their bits.
pub const ALL: [Category; 11] = [
    Category::Sqli,
    Category::Xss,
    Category::Path,
    Category::Command,
    Category::Code,
    Category::Deser,
    Category::Ssrf,
    Category::Redirect,
    Category::Ldap,
    Category::Xpath,
    Category::Trust,
];

/// A category's fixed texts.
pub struct Meta {
    /// Rule-id suffix: `PY-TAINT-<suffix>`.
    pub suffix: &'static str,
    /// `CWE-n`.
    pub cwe: &'static str,
    /// The finding's category.
    pub category: &'static str,
    /// OWASP Top 10 entry.
    pub owasp: &'static str,
    /// Default severity.
    pub severity: Severity,
    /// One-line title.
    pub title: &'static str,
    /// Why it matters.
    pub description: &'static str,
    /// How to fix it.
    pub remediation: &'static str,
}

impl Category {
    /// The name used in spec files.
    pub fn name(self) -> &'static str {
        match self {
            Category::Sqli => "sqli",
            Category::Xss => "xss",
            Category::Path => "path",
            Category::Command => "command",
            Category::Code => "code",
            Category::Deser => "deserialization",
            Category::Ssrf => "ssrf",
            Category::Redirect => "redirect",
            Category::Ldap => "ldap",
            Category::Xpath => "xpath",
            Category::Trust => "trust-boundary",
        }
    }

    /// The category named `name` in a spec file.
    pub fn parse(name: &str) -> Option<Category> {
        ALL.into_iter().find(|c| c.name() == name)
    }

    /// This category's bit in a sanitizer mask.
    pub fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// The fixed texts.
    pub fn meta(self) -> Meta {
        let injection = "injection";
        let a03 = "A03:2021";
        match self {
            Category::Sqli => Meta {
                suffix: "SQLI",
                cwe: "CWE-89",
                category: injection,
                owasp: a03,
                severity: Severity::High,
                title: "Untrusted input reaches a SQL query",
                description: "Data from a request (or another untrusted source) flows into SQL text that is executed: it can change the query (SQL injection).",
                remediation: "Pass the value as a bound parameter of a parameterised query (placeholders), or use the ORM's query builder.",
            },
            Category::Xss => Meta {
                suffix: "XSS",
                cwe: "CWE-79",
                category: injection,
                owasp: a03,
                severity: Severity::High,
                title: "Untrusted input written into an HTML response",
                description: "Data from a request flows into an HTML response or template without escaping: a script in it runs in the victim's browser (cross-site scripting).",
                remediation: "Escape the value for HTML (html.escape, markupsafe.escape, ESAPI encodeForHTML, htmlspecialchars) or render it through an auto-escaping template.",
            },
            Category::Path => Meta {
                suffix: "PATH",
                cwe: "CWE-22",
                category: injection,
                owasp: "A01:2021",
                severity: Severity::High,
                title: "Untrusted input used as a file path",
                description: "Data from a request flows into a file path that is opened or changed: `../` in it reaches files outside the intended directory (path traversal).",
                remediation: "Reduce the value to a file name (basename, secure_filename), or resolve the path and check it stays inside the base directory before using it.",
            },
            Category::Command => Meta {
                suffix: "CMDI",
                cwe: "CWE-78",
                category: injection,
                owasp: a03,
                severity: Severity::High,
                title: "Untrusted input reaches an OS command",
                description: "Data from a request flows into a command line that is run: shell metacharacters in it run other commands (command injection).",
                remediation: "Run the program with an argument list and no shell, validate the value against an allowlist, or quote it (shlex.quote, escapeshellarg).",
            },
            Category::Code => Meta {
                suffix: "CODE",
                cwe: "CWE-95",
                category: injection,
                owasp: a03,
                severity: Severity::High,
                title: "Untrusted input evaluated as code",
                description: "Data from a request flows into eval/exec or a script engine: it runs as code in the server (code injection).",
                remediation: "Never evaluate request data; parse it (json.loads, ast.literal_eval, a lookup table) instead.",
            },
            Category::Deser => Meta {
                suffix: "DESER",
                cwe: "CWE-502",
                category: "insecure-deserialization",
                owasp: "A08:2021",
                severity: Severity::High,
                title: "Untrusted input deserialized",
                description: "Data from a request flows into a deserializer that can build arbitrary objects (pickle, yaml.load, ObjectInputStream, Marshal): it can run code.",
                remediation: "Deserialize untrusted data only with a data-only format (JSON, yaml.safe_load) or an allowlist of classes.",
            },
            Category::Ssrf => Meta {
                suffix: "SSRF",
                cwe: "CWE-918",
                category: "ssrf",
                owasp: "A10:2021",
                severity: Severity::High,
                title: "Untrusted input chooses the URL the server fetches",
                description: "Data from a request flows into the URL of an outgoing HTTP request: it can reach internal services (server-side request forgery).",
                remediation: "Allow only known hosts (an allowlist checked after parsing the URL) and refuse private and link-local addresses.",
            },
            Category::Redirect => Meta {
                suffix: "REDIRECT",
                cwe: "CWE-601",
                category: "open-redirect",
                owasp: "A01:2021",
                severity: Severity::Medium,
                title: "Untrusted input chooses a redirect target",
                description: "Data from a request flows into a redirect: the site sends its users wherever the link says (open redirect, phishing).",
                remediation: "Redirect only to relative paths or to an allowlist of hosts.",
            },
            Category::Ldap => Meta {
                suffix: "LDAP",
                cwe: "CWE-90",
                category: injection,
                owasp: a03,
                severity: Severity::High,
                title: "Untrusted input reaches an LDAP query",
                description: "Data from a request flows into an LDAP search filter or base: it can change the query (LDAP injection).",
                remediation: "Escape the value for LDAP filters (ESAPI encodeForLDAP, ldap.filter.escape_filter_chars) or validate it against an allowlist.",
            },
            Category::Xpath => Meta {
                suffix: "XPATH",
                cwe: "CWE-643",
                category: injection,
                owasp: a03,
                severity: Severity::High,
                title: "Untrusted input reaches an XPath expression",
                description: "Data from a request flows into an XPath expression that is compiled or evaluated: it can change the query (XPath injection).",
                remediation: "Use XPath variables (XPathVariableResolver) or escape the value (ESAPI encodeForXPath).",
            },
            Category::Trust => Meta {
                suffix: "TRUST",
                cwe: "CWE-501",
                category: "trust-boundary",
                owasp: "A04:2021",
                severity: Severity::Medium,
                title: "Untrusted input stored in the session",
                description: "Data from a request is stored in the server-side session, where other code trusts it (trust boundary violation).",
                remediation: "Validate the value before storing it in the session, or keep request data out of the session.",
            },
        }
    }
}

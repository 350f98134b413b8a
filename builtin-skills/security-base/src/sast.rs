//! The `sast` scanner: regex rules for every supported language, plus the
//! tree-sitter rules of [`crate::queries`] through the host's `syntax`
//! import when it is available (they find the same issues across lines and
//! tell literal from non-literal arguments exactly).
//!
//! Regex rules are line rules: a keyword prefilter picks the lines, the
//! regex must match, optional `require`/`unless` regexes test the line,
//! `file_requires` tests the file, and a named `arg` group must not be a
//! plain string literal. Comment lines are skipped.

use std::collections::HashSet;
use std::sync::LazyLock;

use agent_skill_sdk::types::{Confidence, Finding, Severity};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;

use crate::finding::{self, Meta, Span};
use crate::queries;
use crate::text::{self, Lines};

/// Kinds of weakness: each gives a rule its title, CWE, OWASP entry,
/// category, default severity, description and remediation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// SQL built from strings.
    Sqli,
    /// Shell command built from strings.
    Cmdi,
    /// File path from the request.
    Path,
    /// MD5 / SHA-1.
    WeakHash,
    /// DES, RC4, ECB...
    WeakCipher,
    /// Non-cryptographic randomness for secrets.
    WeakRandom,
    /// Deserialization of untrusted data.
    Deser,
    /// HTML sink with non-literal input.
    Xss,
    /// Request-derived URL fetched by the server.
    Ssrf,
    /// Dynamic code evaluation.
    Eval,
}

impl Kind {
    /// This kind's metadata under rule id `id`.
    pub const fn meta(self, id: &'static str) -> Meta {
        let (title, description, severity, category, cwe, owasp, remediation, references): (
            &str,
            &str,
            Severity,
            &str,
            &str,
            &str,
            &str,
            &[&str],
        ) = match self {
            Kind::Sqli => (
                "SQL query built from strings",
                "A SQL statement is assembled with string formatting or concatenation and executed; input that reaches it can change the query (SQL injection).",
                Severity::High,
                "injection",
                "CWE-89",
                "A03:2021",
                "Use parameterised queries (placeholders and bound parameters) or the ORM's query builder; never format values into SQL text.",
                &[
                    "https://cwe.mitre.org/data/definitions/89.html",
                    "https://owasp.org/Top10/A03_2021-Injection/",
                ],
            ),
            Kind::Cmdi => (
                "OS command built from non-literal input",
                "A shell command line is built from a non-literal value; input that reaches it can run arbitrary commands (command injection).",
                Severity::High,
                "injection",
                "CWE-78",
                "A03:2021",
                "Run the program directly with an argument list (no shell), and validate arguments against an allowlist.",
                &[
                    "https://cwe.mitre.org/data/definitions/78.html",
                    "https://owasp.org/Top10/A03_2021-Injection/",
                ],
            ),
            Kind::Path => (
                "File path taken from the request",
                "A file is opened or sent using a path derived from the request; `../` sequences or absolute paths can reach files outside the intended directory (path traversal).",
                Severity::High,
                "input-validation",
                "CWE-22",
                "A01:2021",
                "Resolve the path against a fixed base directory, canonicalise it and check it stays inside the base; or map identifiers to files server-side.",
                &[
                    "https://cwe.mitre.org/data/definitions/22.html",
                    "https://owasp.org/Top10/A01_2021-Broken_Access_Control/",
                ],
            ),
            Kind::WeakHash => (
                "Weak hash algorithm (MD5 / SHA-1)",
                "MD5 and SHA-1 are broken for collision resistance and too fast for passwords; they must not protect integrity, signatures or credentials.",
                Severity::Medium,
                "cryptography",
                "CWE-328",
                "A02:2021",
                "Use SHA-256 or better for integrity, and a password hash (argon2, bcrypt, scrypt, PBKDF2) for passwords. Mark non-security uses explicitly (e.g. `usedforsecurity=False`).",
                &[
                    "https://cwe.mitre.org/data/definitions/328.html",
                    "https://owasp.org/Top10/A02_2021-Cryptographic_Failures/",
                ],
            ),
            Kind::WeakCipher => (
                "Weak cipher or mode (DES, 3DES, RC4, Blowfish, ECB)",
                "The cipher or mode is broken or leaks patterns of the plaintext.",
                Severity::High,
                "cryptography",
                "CWE-327",
                "A02:2021",
                "Use an authenticated cipher such as AES-GCM or ChaCha20-Poly1305 with unique nonces.",
                &[
                    "https://cwe.mitre.org/data/definitions/327.html",
                    "https://owasp.org/Top10/A02_2021-Cryptographic_Failures/",
                ],
            ),
            Kind::WeakRandom => (
                "Predictable random value used for a secret",
                "A non-cryptographic random generator produces a token, key or password; its output can be predicted.",
                Severity::Medium,
                "cryptography",
                "CWE-338",
                "A02:2021",
                "Use a cryptographically secure generator (`crypto.randomBytes`, `crypto.getRandomValues`, `secrets`, `SecureRandom`).",
                &["https://cwe.mitre.org/data/definitions/338.html"],
            ),
            Kind::Deser => (
                "Deserialization of untrusted data",
                "The deserializer can instantiate arbitrary objects or run code while loading; attacker-controlled input leads to remote code execution.",
                Severity::High,
                "injection",
                "CWE-502",
                "A08:2021",
                "Use a data-only format (JSON) or the library's safe loader, and never deserialize data from untrusted sources.",
                &[
                    "https://cwe.mitre.org/data/definitions/502.html",
                    "https://owasp.org/Top10/A08_2021-Software_and_Data_Integrity_Failures/",
                ],
            ),
            Kind::Xss => (
                "Non-literal HTML written to the page",
                "Markup built from a non-literal value is inserted without escaping; input that reaches it can inject script (cross-site scripting).",
                Severity::High,
                "injection",
                "CWE-79",
                "A03:2021",
                "Insert text with `textContent` or the template engine's escaping; sanitise HTML with a vetted sanitiser (DOMPurify) when markup is required.",
                &[
                    "https://cwe.mitre.org/data/definitions/79.html",
                    "https://owasp.org/Top10/A03_2021-Injection/",
                ],
            ),
            Kind::Ssrf => (
                "Server-side request to a URL from the request",
                "The server fetches a URL derived from the request; an attacker can reach internal services or cloud metadata endpoints (SSRF).",
                Severity::High,
                "input-validation",
                "CWE-918",
                "A10:2021",
                "Allowlist destination hosts and schemes, resolve and block private address ranges, and do not forward raw user URLs.",
                &[
                    "https://cwe.mitre.org/data/definitions/918.html",
                    "https://owasp.org/Top10/A10_2021-Server-Side_Request_Forgery_%28SSRF%29/",
                ],
            ),
            Kind::Eval => (
                "Dynamic code evaluation of a non-literal",
                "A non-literal string is evaluated as code; input that reaches it runs with the program's privileges.",
                Severity::High,
                "injection",
                "CWE-95",
                "A03:2021",
                "Do not evaluate strings as code: parse data with a real parser (JSON, `ast.literal_eval`) or dispatch through a fixed table of functions.",
                &[
                    "https://cwe.mitre.org/data/definitions/95.html",
                    "https://owasp.org/Top10/A03_2021-Injection/",
                ],
            ),
        };
        Meta {
            id,
            title,
            description,
            severity,
            category,
            cwe,
            owasp,
            remediation,
            confidence: Confidence::High,
            references,
        }
    }
}

/// Language groups.
const PY: &[&str] = &["python"];
const JS: &[&str] = &["javascript", "typescript", "tsx"];
const GO: &[&str] = &["go"];
const JAVA: &[&str] = &["java"];
const RUST: &[&str] = &["rust"];
const SWIFT: &[&str] = &["swift"];
const RUBY: &[&str] = &["ruby"];
const C: &[&str] = &["c", "cpp"];

/// SQL keywords a string-built statement must show.
const SQL: &str = r#"(?i)["'`][^"'`]*\b(?:select\s|insert\s+into|update\s+\w+\s+set|delete\s+from|drop\s+table|create\s+table|alter\s+table|where\s|order\s+by)"#;

/// A C declaration or definition of a function (the library itself, not a use).
const C_DECL: &str = r"^\s*(?:OPENSSL_EXPORT|extern|static|inline|int|void|unsigned|const|uint\w*|size_t|char|EVP_\w+\s*\*|DES_\w+|RC4_\w+)\b[^=;]*\b(?:MD5|SHA1|DES|EVP|RC4)\w*\([^)]*(?:\)\s*;?\s*\{?\s*$|,\s*$)";

/// A JS/TS function declaration or signature (not a call).
const JS_DECL: &str = r"\bfunction\s+\w+\s*\(|^\s*(?:declare\s+)?(?:async\s+)?\w+\([^)]*\)\s*:\s*\w|^\s*(?:async\s+)?\w+\([^)]*\)\s*\{\s*$";

/// One regex rule.
pub struct RegexRule {
    /// Rule id.
    pub id: &'static str,
    /// Weakness kind.
    pub kind: Kind,
    /// Languages it applies to.
    pub languages: &'static [&'static str],
    /// Substrings (ASCII case-insensitive) a line must hold to be tried.
    pub keywords: &'static [&'static str],
    /// The line regex; a named group `arg` must not be a pure literal.
    pub pattern: &'static str,
    /// A regex the line must also match.
    pub require: Option<&'static str>,
    /// A regex that, matching the line, cancels the finding.
    pub unless: Option<&'static str>,
    /// A substring the file must contain.
    pub file_requires: Option<&'static str>,
    /// Overrides of the kind's severity and the confidence.
    pub severity: Option<Severity>,
    /// How sure the rule is.
    pub confidence: Confidence,
}

macro_rules! r {
    ($id:literal, $kind:ident, $langs:expr, [$($kw:literal),*], $re:literal $(, $field:ident = $val:expr)* ) => {
        RegexRule {
            id: $id,
            kind: Kind::$kind,
            languages: $langs,
            keywords: &[$($kw),*],
            pattern: $re,
            $($field: $val,)*
            ..RegexRule::DEFAULT
        }
    };
}

impl RegexRule {
    const DEFAULT: RegexRule = RegexRule {
        id: "",
        kind: Kind::Eval,
        languages: &[],
        keywords: &[],
        pattern: "",
        require: None,
        unless: None,
        file_requires: None,
        severity: None,
        confidence: Confidence::High,
    };
}

/// Every regex rule.
pub static RULES: &[RegexRule] = &[
    // ---- Python
    r!(
        "PY-SQLI-001",
        Sqli,
        PY,
        ["execute", "raw(", "text("],
        r#"\.(?:execute|executemany|executescript|raw)\(\s*(?:[fF](?:"[^"\n]*\{|'[^'\n]*\{)|(?:"[^"\n]*"|'[^'\n]*')\s*(?:%\s*[\w(\[]|\+|\.format\())|\btext\(\s*[fF](?:"[^"\n]*\{|'[^'\n]*\{)"#,
        require = Some(SQL)
    ),
    r!(
        "PY-CMDI-001",
        Cmdi,
        PY,
        ["os.system", "os.popen"],
        r#"\bos\.(?:system|popen)\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^,)\n"'])+)"#
    ),
    r!(
        "PY-CMDI-002",
        Cmdi,
        PY,
        ["shell"],
        r#"\bsubprocess\.(?:call|run|Popen|check_output|check_call|getoutput|getstatusoutput)\((?P<arg>(?:\[[^\]\n]*\]|"[^"\n]*"|'[^'\n]*'|[^,\n"'\[])+),[^\n]*\bshell\s*=\s*True"#
    ),
    r!(
        "PY-PATH-001",
        Path,
        PY,
        ["request."],
        r"\b(?:open|send_file|send_from_directory|os\.path\.join|FileResponse)\([^\n]*\brequest\.(?:args|form|values|files|json|get_json|GET|POST|query_params|path_params)\b"
    ),
    r!(
        "PY-CRYPTO-001",
        WeakHash,
        PY,
        ["md5", "sha1"],
        r"\bhashlib\.(?:md5|sha1)\(|\bhashlib\.new\(\s*['\x22](?:md5|sha1)['\x22]",
        unless = Some(r"usedforsecurity\s*=\s*False"),
        confidence = Confidence::Medium
    ),
    r!(
        "PY-CRYPTO-002",
        WeakCipher,
        PY,
        ["des", "arc4", "blowfish", "mode_ecb"],
        r"\b(?:DES|DES3|ARC4|ARC2|Blowfish)\.new\(|\bMODE_ECB\b|\balgorithms\.(?:TripleDES|ARC4|Blowfish)\(|\bmodes\.ECB\("
    ),
    r!(
        "PY-RANDOM-001",
        WeakRandom,
        PY,
        ["random."],
        r"\brandom\.(?:random|randint|choice|choices|getrandbits|randrange)\(",
        require = Some(
            r"(?i)\b\w*(?:token|secret|password|passwd|nonce|salt|otp|api_?key|session_?id)\w*\s*="
        ),
        confidence = Confidence::Medium
    ),
    r!(
        "PY-DESER-001",
        Deser,
        PY,
        ["pickle", "dill", "shelve", "jsonpickle"],
        r"\b(?:c?[Pp]ickle|dill|jsonpickle)\.(?:loads?|decode|Unpickler)\(|\bshelve\.open\(",
        confidence = Confidence::Medium
    ),
    r!(
        "PY-DESER-002",
        Deser,
        PY,
        ["yaml"],
        r"\byaml\.(?:load|load_all)\(|\byaml\.unsafe_load(?:_all)?\(",
        unless = Some(r"Loader\s*=\s*(?:yaml\.)?C?SafeLoader|Loader\s*=\s*(?:yaml\.)?BaseLoader")
    ),
    r!(
        "PY-XSS-001",
        Xss,
        PY,
        ["markup("],
        r#"\bMarkup\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#,
        confidence = Confidence::Medium
    ),
    r!(
        "PY-XSS-002",
        Xss,
        PY,
        ["render_template_string"],
        r#"\brender_template_string\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^,)\n"'])+)"#
    ),
    r!(
        "PY-SSRF-001",
        Ssrf,
        PY,
        ["request"],
        r"\b(?:requests|httpx|session)\.(?:get|post|put|delete|head|patch|request)\([^\n]*\brequest\.(?:args|form|values|json|get_json|GET|POST|query_params)\b|\burlopen\([^\n]*\brequest\.(?:args|form|values|GET|POST)\b"
    ),
    r!(
        "PY-EVAL-001",
        Eval,
        PY,
        ["eval(", "exec("],
        r#"(?:^|[^.\w])(?:eval|exec)\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#,
        unless = Some(r"\bdef\s+(?:eval|exec)\b")
    ),
    // ---- JavaScript / TypeScript
    r!(
        "JS-SQLI-001",
        Sqli,
        JS,
        ["query(", "execute(", "raw(", "exec("],
        r#"\.(?:query|execute|raw|exec|run|all|get)\(\s*(?:`[^`]*\$\{|(?:"[^"\n]*"|'[^'\n]*')\s*\+)"#,
        require = Some(SQL)
    ),
    r!(
        "JS-CMDI-001",
        Cmdi,
        JS,
        ["exec"],
        r#"(?:^|[^.\w$]|child_process\.|cp\.)(?:exec|execSync)\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^,)\n"'])+)"#,
        unless = Some(JS_DECL),
        file_requires = Some("child_process")
    ),
    r!(
        "JS-CMDI-002",
        Cmdi,
        JS,
        ["shell"],
        r#"\b(?:spawn|spawnSync|execFile|execFileSync)\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^,)\n"'])+),[^\n]*\bshell\s*:\s*true"#,
        file_requires = Some("child_process")
    ),
    r!(
        "JS-PATH-001",
        Path,
        JS,
        ["req."],
        r"\b(?:readFile|readFileSync|createReadStream|sendFile|download|unlink|unlinkSync|writeFile|writeFileSync|path\.join|path\.resolve)\([^\n]*\breq\.(?:params|query|body|cookies)\b"
    ),
    r!(
        "JS-CRYPTO-001",
        WeakHash,
        JS,
        ["md5", "sha1"],
        r#"\bcreateHash\(\s*["'](?i:md5|sha1)["']"#,
        confidence = Confidence::Medium
    ),
    r!(
        "JS-CRYPTO-002",
        WeakCipher,
        JS,
        ["createcipher"],
        r#"\bcreate(?:De)?[Cc]ipher(?:iv)?\(\s*["'](?i:des|des-ede|des-ede3|des-ede3-cbc|des-cbc|rc4|rc4-40|bf|bf-cbc|blowfish|[a-z0-9-]*-ecb)["']"#
    ),
    r!(
        "JS-RANDOM-001",
        WeakRandom,
        JS,
        ["math.random"],
        r"\bMath\.random\(\)",
        require = Some(
            r"(?i)\b\w*(?:token|secret|password|passwd|nonce|salt|otp|api_?key|session_?id)\w*\s*[=:]"
        ),
        confidence = Confidence::Medium
    ),
    r!(
        "JS-DESER-001",
        Deser,
        JS,
        ["unserialize"],
        r"\b(?:serialize\.)?unserialize\(",
        file_requires = Some("node-serialize")
    ),
    r!(
        "JS-XSS-001",
        Xss,
        JS,
        ["innerhtml", "outerhtml"],
        r#"\.(?:innerHTML|outerHTML)\s*\+?=\s*(?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^;\n"'])+)"#
    ),
    r!(
        "JS-XSS-002",
        Xss,
        JS,
        ["document.write"],
        r#"\bdocument\.write(?:ln)?\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#
    ),
    r!(
        "JS-XSS-003",
        Xss,
        JS,
        ["dangerouslysetinnerhtml"],
        r#"dangerouslySetInnerHTML\s*=\s*\{\{\s*__html\s*:\s*(?P<arg>[^}\n]+)\}\}"#,
        unless = Some(r"(?i)purify|sanitiz")
    ),
    r!(
        "JS-XSS-004",
        Xss,
        JS,
        ["insertadjacenthtml"],
        r#"\.insertAdjacentHTML\(\s*[^,\n]+,\s*(?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#
    ),
    r!(
        "JS-SSRF-001",
        Ssrf,
        JS,
        ["req."],
        r"\b(?:fetch|axios(?:\.(?:get|post|put|delete|head|patch|request))?|got|request|https?\.(?:get|request)|needle|superagent\.get)\(\s*[^\n]*\breq\.(?:query|params|body)\b"
    ),
    r!(
        "JS-EVAL-001",
        Eval,
        JS,
        ["eval("],
        r#"(?:^|[^.\w$])eval\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#,
        unless = Some(JS_DECL)
    ),
    r!(
        "JS-EVAL-002",
        Eval,
        JS,
        ["function("],
        r#"\bnew\s+Function\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#
    ),
    r!(
        "JS-EVAL-003",
        Eval,
        JS,
        ["settimeout", "setinterval"],
        r#"\b(?:setTimeout|setInterval)\(\s*(?:(?:"[^"\n]*"|'[^'\n]*')\s*\+|`[^`\n]*\$\{|["'][^"'\n]*\w\([^"'\n]*["'])"#
    ),
    // ---- Go
    r!(
        "GO-SQLI-001",
        Sqli,
        GO,
        ["query", "exec"],
        r#"\.(?:Query|QueryRow|Exec|QueryContext|ExecContext|QueryRowContext|Raw|Prepare)\([^\n]*(?:fmt\.Sprintf\(|"\s*\+\s*[A-Za-z_])"#,
        require = Some(SQL)
    ),
    r!(
        "GO-CMDI-001",
        Cmdi,
        GO,
        ["exec.command"],
        r#"\bexec\.Command(?:Context)?\((?:\w+,\s*)?"(?:sh|bash|/bin/sh|/bin/bash|zsh|cmd|cmd\.exe|powershell)"\s*,\s*"(?:-c|/c|/C|-Command)"\s*,\s*(?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#
    ),
    r!(
        "GO-PATH-001",
        Path,
        GO,
        ["r.url", "formvalue", "pathvalue"],
        r"\b(?:os\.Open|os\.OpenFile|os\.ReadFile|ioutil\.ReadFile|http\.ServeFile|os\.Remove|filepath\.Join)\([^\n]*\br\.(?:URL\.Query\(\)|FormValue|PathValue|PostFormValue)"
    ),
    r!(
        "GO-CRYPTO-001",
        WeakHash,
        GO,
        ["md5.", "sha1."],
        r"\b(?:md5|sha1)\.(?:New|Sum)\(",
        confidence = Confidence::Medium
    ),
    r!(
        "GO-CRYPTO-002",
        WeakCipher,
        GO,
        ["des.new", "rc4.new"],
        r"\b(?:des\.NewCipher|des\.NewTripleDESCipher|rc4\.NewCipher)\("
    ),
    r!(
        "GO-SSRF-001",
        Ssrf,
        GO,
        ["http."],
        r"\bhttp\.(?:Get|Post|Head|NewRequest|NewRequestWithContext)\([^\n]*\br\.(?:URL\.Query\(\)|FormValue|PostFormValue)"
    ),
    // ---- Java
    r!(
        "JAVA-SQLI-001",
        Sqli,
        JAVA,
        ["execute", "preparestatement", "addbatch", "query("],
        r#"\.(?:executeQuery|executeUpdate|executeLargeUpdate|execute|prepareStatement|prepareCall|addBatch|createQuery|createNativeQuery|query|queryForList|queryForObject|update)\(\s*"[^"\n]*"\s*\+"#,
        require = Some(SQL)
    ),
    r!(
        "JAVA-CMDI-001",
        Cmdi,
        JAVA,
        ["getruntime"],
        r#"\bRuntime\.getRuntime\(\)\.exec\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#
    ),
    r!(
        "JAVA-CMDI-002",
        Cmdi,
        JAVA,
        ["processbuilder"],
        r#"\bnew\s+ProcessBuilder\(\s*(?:Arrays\.asList\(|List\.of\()?\s*"(?:sh|bash|/bin/sh|/bin/bash|cmd|cmd\.exe)"\s*,\s*"(?:-c|/c|/C)"\s*,\s*(?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)"#
    ),
    r!(
        "JAVA-PATH-001",
        Path,
        JAVA,
        ["getparameter"],
        r"\b(?:new\s+File(?:InputStream|OutputStream|Reader|Writer)?|Paths\.get|Path\.of|Files\.\w+)\([^\n]*\brequest\.getParameter\("
    ),
    r!(
        "JAVA-CRYPTO-001",
        WeakHash,
        JAVA,
        ["messagedigest"],
        r#"\bMessageDigest\.getInstance\(\s*"(?i:md5|md2|sha-?1)""#,
        confidence = Confidence::Medium
    ),
    r!(
        "JAVA-CRYPTO-002",
        WeakCipher,
        JAVA,
        ["cipher.getinstance"],
        r#"\bCipher\.getInstance\(\s*"(?i:(?:des|desede|tripledes|rc4|arcfour|rc2|blowfish)(?:/[^"]*)?|aes|[a-z0-9]+/ecb/[^"]*)""#
    ),
    r!(
        "JAVA-RANDOM-001",
        WeakRandom,
        JAVA,
        ["random"],
        r"\bnew\s+Random\(\)|\bMath\.random\(\)",
        require = Some(
            r"(?i)\b\w*(?:token|secret|password|passwd|nonce|salt|otp|apikey|sessionid)\w*\s*="
        ),
        confidence = Confidence::Medium
    ),
    r!(
        "JAVA-DESER-001",
        Deser,
        JAVA,
        ["readobject", "readunshared"],
        r"\.(?:readObject|readUnshared)\(\)",
        file_requires = Some("ObjectInputStream"),
        confidence = Confidence::Medium
    ),
    r!(
        "JAVA-DESER-002",
        Deser,
        JAVA,
        ["xmldecoder", "xstream"],
        r"\bnew\s+XMLDecoder\(|\bxstream\.fromXML\(|\bXStream\(\)\.fromXML\("
    ),
    r!(
        "JAVA-SSRF-001",
        Ssrf,
        JAVA,
        ["getparameter"],
        r"\bnew\s+URL\([^\n]*\brequest\.getParameter\(|\bURI\.create\([^\n]*\brequest\.getParameter\("
    ),
    // ---- Rust
    r!(
        "RUST-SQLI-001",
        Sqli,
        RUST,
        ["format!"],
        r#"\b(?:query|query_as|query_scalar|execute|batch_execute|prepare|sql_query)(?:::<[^>\n]*>)?\(\s*&?format!\(\s*""#,
        require = Some(SQL)
    ),
    r!(
        "RUST-CMDI-001",
        Cmdi,
        RUST,
        ["command::new"],
        r#"\bCommand::new\(\s*"(?:sh|bash|/bin/sh|/bin/bash|cmd|cmd\.exe)"\s*\)\s*\.args?\(\s*(?:&?\[\s*)?"(?:-c|/C|/c)"\s*(?:\)\s*\.arg\(|,)\s*(?P<arg>[^)\]\n]+)"#
    ),
    r!(
        "RUST-CRYPTO-001",
        WeakHash,
        RUST,
        ["md5", "sha1"],
        r"\bmd5::compute\(|\bMd5::(?:new|digest)\(|\bSha1::(?:new|digest)\(",
        confidence = Confidence::Medium
    ),
    // ---- Swift
    r!(
        "SWIFT-SQLI-001",
        Sqli,
        SWIFT,
        ["sqlite3_"],
        r#"\bsqlite3_(?:exec|prepare(?:_v2|_v3)?)\([^,\n]*,\s*"[^"\n]*\\\("#,
        require = Some(SQL)
    ),
    r!(
        "SWIFT-CRYPTO-001",
        WeakHash,
        SWIFT,
        ["md5", "sha1"],
        r"\bInsecure\.(?:MD5|SHA1)\b|\bCC_(?:MD5|SHA1)\(",
        confidence = Confidence::Medium
    ),
    r!(
        "SWIFT-CRYPTO-002",
        WeakCipher,
        SWIFT,
        ["kccalgorithm", "kccoptionecb"],
        r"\bkCCAlgorithm(?:DES|3DES|RC4|Blowfish)\b|\bkCCOptionECBMode\b"
    ),
    r!(
        "SWIFT-EVAL-001",
        Eval,
        SWIFT,
        ["evaluatejavascript"],
        r#"\.evaluateJavaScript\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^,)\n"'])+)"#
    ),
    // ---- Ruby
    r!(
        "RUBY-SQLI-001",
        Sqli,
        RUBY,
        ["#{"],
        r#"\.(?:where|find_by_sql|execute|exec_query|select_all|select_value|order|group|having|joins|pluck|delete_all|update_all|count_by_sql)\(\s*"[^"\n]*#\{"#
    ),
    r!(
        "RUBY-CMDI-001",
        Cmdi,
        RUBY,
        ["#{"],
        r#"`[^`\n]*#\{[^`\n]*`|%x[({\[][^\n]*#\{|\b(?:system|exec|spawn|IO\.popen|Open3\.(?:capture2e?|capture3|popen2e?|popen3))\(?\s*"[^"\n]*#\{"#
    ),
    r!(
        "RUBY-PATH-001",
        Path,
        RUBY,
        ["params["],
        r"\b(?:File\.(?:open|read|readlines|binread)|IO\.read|send_file)\(?\s*[^\n]*\bparams\["
    ),
    r!(
        "RUBY-CRYPTO-001",
        WeakHash,
        RUBY,
        ["digest::"],
        r"\bDigest::(?:MD5|SHA1)\b|OpenSSL::Digest::(?:MD5|SHA1)\b",
        confidence = Confidence::Medium
    ),
    r!(
        "RUBY-DESER-001",
        Deser,
        RUBY,
        ["marshal", "yaml.unsafe_load", "oj.load"],
        r"\bMarshal\.(?:load|restore)\(|\b(?:YAML|Psych)\.unsafe_load\(|\bOj\.load\("
    ),
    r!(
        "RUBY-EVAL-001",
        Eval,
        RUBY,
        ["eval("],
        r#"(?:^|[^.\w])(?:eval|instance_eval|class_eval|module_eval)\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#
    ),
    r!(
        "RUBY-XSS-001",
        Xss,
        RUBY,
        ["html_safe", "raw("],
        r#"(?P<arg>[\w@\[\]:.]+(?:\([^)\n]*\))?)\.html_safe\b|(?:^|[^.\w])raw\((?P<arg2>(?:"[^"\n]*"|'[^'\n]*'|[^)\n"'])+)\)"#,
        confidence = Confidence::Medium
    ),
    // ---- C / C++
    r!(
        "C-CMDI-001",
        Cmdi,
        C,
        ["system(", "popen("],
        r#"(?:^|[^.\w>:])(?:system|popen|_popen|_wsystem)\((?P<arg>(?:"[^"\n]*"|'[^'\n]*'|[^,)\n"'])+)"#
    ),
    r!(
        "C-CRYPTO-001",
        WeakHash,
        C,
        ["md5", "sha1"],
        r"\b(?:MD5_Init|MD5_Update|MD5|SHA1_Init|SHA1_Update|SHA1|EVP_md5|EVP_sha1)\(",
        confidence = Confidence::Medium,
        unless = Some(C_DECL)
    ),
    r!(
        "C-CRYPTO-002",
        WeakCipher,
        C,
        ["des_", "rc4", "_ecb"],
        r"\b(?:DES_\w*crypt\w*|DES_set_key\w*|EVP_des_\w+|EVP_rc4\w*|EVP_bf_\w+|EVP_aes_\d+_ecb|RC4|RC4_set_key)\(",
        unless = Some(C_DECL)
    ),
];

struct Compiled {
    prefilter: AhoCorasick,
    pattern_rule: Vec<usize>,
    regexes: Vec<Regex>,
    requires: Vec<Option<Regex>>,
    unless: Vec<Option<Regex>>,
}

static COMPILED: LazyLock<Compiled> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut pattern_rule = Vec::new();
    for (i, rule) in RULES.iter().enumerate() {
        for kw in rule.keywords {
            patterns.push(*kw);
            pattern_rule.push(i);
        }
    }
    let compile = |s: &str| Regex::new(s).expect("sast regex compiles");
    Compiled {
        prefilter: AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&patterns)
            .expect("sast keywords compile"),
        pattern_rule,
        regexes: RULES.iter().map(|r| compile(r.pattern)).collect(),
        requires: RULES.iter().map(|r| r.require.map(compile)).collect(),
        unless: RULES.iter().map(|r| r.unless.map(compile)).collect(),
    }
});

/// Scans one source file.
pub fn scan(path: &str, content: &str, language: Option<&str>) -> Vec<Finding> {
    let Some(language) = language else {
        return Vec::new();
    };
    let mut findings = Vec::new();
    let lines = Lines::new(content);
    scan_regex(path, content, language, &lines, &mut findings);
    if language == "python" {
        scan_python_taint(path, content, &lines, &mut findings);
    }
    queries::scan(path, content, language, &mut findings);
    findings.sort_by_key(|f| (f.location.start_line, f.location.start_column));
    finding::dedup(&mut findings);
    findings
}

fn scan_regex(
    path: &str,
    content: &str,
    language: &str,
    lines: &Lines<'_>,
    out: &mut Vec<Finding>,
) {
    let c = &*COMPILED;
    let mut seen = HashSet::new();
    let mut todo = Vec::new();
    for m in c.prefilter.find_overlapping_iter(content) {
        let rule_index = c.pattern_rule[m.pattern().as_usize()];
        let rule = &RULES[rule_index];
        if !rule.languages.contains(&language) {
            continue;
        }
        let line = lines.index_of(m.start());
        if seen.insert((rule_index, line)) {
            todo.push((rule_index, line));
        }
    }
    todo.sort_unstable_by_key(|&(rule, line)| (line, rule));
    for (rule_index, line_index) in todo {
        let rule = &RULES[rule_index];
        if rule
            .file_requires
            .is_some_and(|needle| !content.contains(needle))
        {
            continue;
        }
        let line = lines.line(line_index);
        if text::is_comment(line) {
            continue;
        }
        if c.requires[rule_index]
            .as_ref()
            .is_some_and(|re| !re.is_match(line))
            || c.unless[rule_index]
                .as_ref()
                .is_some_and(|re| re.is_match(line))
        {
            continue;
        }
        for caps in c.regexes[rule_index].captures_iter(line) {
            let arg = caps.name("arg").or_else(|| caps.name("arg2"));
            if let Some(arg) = arg
                && is_literal_arg(arg.as_str())
            {
                continue;
            }
            let whole = caps.get(0).expect("group 0");
            // Skip a leading boundary character the regex consumed.
            let mut start = whole.start();
            let s = whole.as_str();
            if let Some(first) = s.chars().next()
                && !first.is_alphanumeric()
                && !matches!(first, '.' | '`' | '%' | '_' | '"' | '\'' | '@' | '$' | '-')
            {
                start += first.len_utf8();
            }
            let (start_line, start_column) = lines.position(lines.start(line_index) + start);
            let span = Span {
                start_line,
                start_column,
                end_line: start_line,
                end_column: start_column + (whole.end() - start) as u32,
            };
            let mut meta = rule.kind.meta(rule.id);
            if let Some(sev) = rule.severity {
                meta.severity = sev;
            }
            meta.confidence = rule.confidence;
            out.push(finding::make(&meta, path, span, text::clip(line.trim())));
        }
    }
}

/// A literal argument, or one that is obviously not data (`None`, empty).
pub fn is_literal_arg(arg: &str) -> bool {
    let a = arg.trim().trim_end_matches(',').trim();
    if let Some(inner) = a.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return inner
            .split(',')
            .all(|e| text::is_pure_literal(e) || e.trim().is_empty());
    }
    text::is_pure_literal(a)
        || a.is_empty()
        || matches!(
            a,
            "None" | "null" | "undefined" | "nil" | "NULL" | "''" | "\"\""
        )
}

/// Python variables assigned straight from request data
/// (`url = request.args.get("url")`), then passed to an HTTP client or a
/// file API: the one-step flow the line rules PY-SSRF-001 and PY-PATH-001
/// cannot see. Assignments count from their line on, in the same file.
/// `send_from_directory` is not a sink here: it refuses paths that leave
/// its directory.
fn scan_python_taint(path: &str, content: &str, lines: &Lines<'_>, out: &mut Vec<Finding>) {
    static SOURCE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^\s*([A-Za-z_]\w*)\s*=\s*[^=\n]*\brequest\.(?:args|form|values|files|json|get_json|GET|POST|query_params|path_params|data|cookies|headers)\b",
        )
        .expect("taint source regex")
    });
    if !content.contains("request.") {
        return;
    }
    let mut tainted: Vec<(String, usize)> = Vec::new();
    let mut index = 0;
    while index < lines.count() {
        let line = lines.line(index);
        if let Some(c) = SOURCE.captures(line) {
            tainted.push((c[1].to_string(), index));
        }
        index += 1;
    }
    if tainted.is_empty() {
        return;
    }
    let names: Vec<String> = tainted.iter().map(|(n, _)| regex::escape(n)).collect();
    let alternation = names.join("|");
    let sinks = [
        (
            "PY-SSRF-001",
            Kind::Ssrf,
            format!(
                r"\b(?:requests|httpx|session)\.(?:get|post|put|delete|head|patch|request)\((?:[^\n]*?,\s*)?\s*(?:url\s*=\s*)?({alternation})\b|\burlopen\(\s*({alternation})\b"
            ),
        ),
        (
            "PY-PATH-001",
            Kind::Path,
            format!(
                r"\b(?:open|send_file|FileResponse)\([^\n]*\b({alternation})\b|\bos\.path\.join\([^\n]*\b({alternation})\b"
            ),
        ),
    ];
    for (id, kind, pattern) in sinks {
        let Ok(re) = Regex::new(&pattern) else {
            continue;
        };
        for i in 0..lines.count() {
            let line = lines.line(i);
            if text::is_comment(line) {
                continue;
            }
            let Some(c) = re.captures(line) else {
                continue;
            };
            let var = c.get(1).or_else(|| c.get(2)).map(|m| m.as_str());
            // The variable must have been assigned from request data on an
            // earlier line.
            if !tainted
                .iter()
                .any(|(n, at)| Some(n.as_str()) == var && *at < i)
            {
                continue;
            }
            if out
                .iter()
                .any(|f| f.rule_id == id && f.location.start_line == i as u32 + 1)
            {
                continue;
            }
            let whole = c.get(0).expect("group 0");
            let (start_line, start_column) = lines.position(lines.start(i) + whole.start());
            let span = Span {
                start_line,
                start_column,
                end_line: start_line,
                end_column: start_column + whole.len() as u32,
            };
            let mut meta = kind.meta(id);
            meta.confidence = Confidence::Medium;
            out.push(finding::make(&meta, path, span, text::clip(line.trim())));
        }
    }
}

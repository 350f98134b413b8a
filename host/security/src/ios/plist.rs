//! The plist/entitlements scanner: `*.plist` and `*.entitlements`, XML or
//! binary (the `plist` crate reads both), checked for App Transport Security
//! exceptions, `get-task-allow` in release entitlements, file sharing,
//! custom URL schemes, wildcard keychain access groups and cleartext
//! `http://` values; plus usage descriptions missing for capabilities the
//! code uses ([`super::usage`]).
//!
//! Locations: in an XML plist, the line of the key (or of the array string);
//! in a binary plist, line 1, with the key path in the evidence.

use std::io::{Cursor, Read};

use plist::{Dictionary, Value};

use crate::finding::{Confidence, Finding, Location, Severity};
use crate::walk::WalkedFile;

/// The scanner name in findings and statistics.
pub const SCANNER: &str = "apple-dev/plist";

/// What the scan found.
#[derive(Debug, Default)]
pub struct PlistScan {
    /// Property lists read.
    pub files: usize,
    /// Findings.
    pub findings: Vec<Finding>,
    /// (file, message) of files that could not be read or parsed.
    pub errors: Vec<(String, String)>,
}

/// Whether `path` is a property list the scanner reads.
pub fn is_plist(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    lower.ends_with(".plist") || lower.ends_with(".entitlements")
}

/// Scans the property lists among `files` (and, for usage descriptions,
/// the Swift and Objective-C sources and `.pbxproj` files).
pub fn scan(files: &[WalkedFile], max_bytes: u64) -> PlistScan {
    let mut out = PlistScan::default();
    let mut info_keys: Vec<Vec<String>> = Vec::new();
    for file in files.iter().filter(|f| is_plist(&f.path)) {
        let bytes = match read_bytes(file, max_bytes) {
            Ok(b) => b,
            Err(e) => {
                out.errors.push((file.path.clone(), e));
                continue;
            }
        };
        let value = match Value::from_reader(Cursor::new(&bytes)) {
            Ok(v) => v,
            Err(e) => {
                out.errors
                    .push((file.path.clone(), format!("not a property list: {e}")));
                continue;
            }
        };
        out.files += 1;
        let Some(root) = value.as_dictionary() else {
            continue;
        };
        if file.path.rsplit('/').next() == Some("Info.plist") {
            info_keys.push(root.keys().cloned().collect());
        }
        let text = (!bytes.starts_with(b"bplist")).then(|| String::from_utf8_lossy(&bytes));
        let mut doc = Doc {
            file: &file.path,
            text: text.as_deref(),
            out: &mut out.findings,
        };
        check(&mut doc, root);
    }
    super::usage::check(files, max_bytes, &info_keys, &mut out);
    out
}

pub(super) fn read_bytes(file: &WalkedFile, max: u64) -> Result<Vec<u8>, String> {
    let mut f =
        agent_runtime::open_regular(&file.abs).map_err(|e| format!("cannot read it: {e}"))?;
    let mut bytes = Vec::new();
    f.by_ref()
        .take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than the size limit of {max} bytes"));
    }
    Ok(bytes)
}

/// One property list being checked.
struct Doc<'a> {
    file: &'a str,
    /// The XML text (`None` for a binary plist).
    text: Option<&'a str>,
    out: &'a mut Vec<Finding>,
}

/// A finding's fixed parts.
struct Check {
    id: &'static str,
    severity: Severity,
    category: &'static str,
    cwe: &'static str,
    title: &'static str,
    remediation: &'static str,
}

impl Doc<'_> {
    /// The 1-based line of the element at `path`: each key (`<key>K</key>`)
    /// or array string (`<string>S</string>`) is looked for after the
    /// previous one. 1 for a binary plist or when not found.
    fn line(&self, path: &[Step<'_>]) -> u32 {
        let Some(text) = self.text else { return 1 };
        let mut at = 0;
        for step in path {
            let needle = match step {
                Step::Key(k) => format!("<key>{}</key>", escape(k)),
                Step::Str(s) => format!("<string>{}</string>", escape(s)),
            };
            match text[at..].find(&needle) {
                Some(i) => at += i,
                None => return 1,
            }
        }
        text[..at].matches('\n').count() as u32 + 1
    }

    fn report(&mut self, c: &Check, path: &[Step<'_>], detail: String) {
        let line = self.line(path);
        let key_path: Vec<String> = path.iter().map(Step::to_string).collect();
        let mut f = Finding::new(
            c.id,
            SCANNER,
            c.severity,
            c.category,
            c.title,
            Location {
                file: self.file.to_string(),
                start_line: line,
                end_line: line,
                start_column: 1,
                end_column: 1,
                function: None,
            },
        );
        f.skill_source = Some(super::SKILL.to_string());
        f.description = detail;
        f.cwe = Some(c.cwe.to_string());
        f.remediation = c.remediation.to_string();
        f.confidence = Confidence::High;
        f.evidence = key_path.join("/");
        f.metadata.insert("key_path".into(), key_path.join("/"));
        f.fingerprint(None);
        self.out.push(f);
    }
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Str(&'a str),
}

impl std::fmt::Display for Step<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Key(k) => f.write_str(k),
            Step::Str(s) => write!(f, "{s:?}"),
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn is_true(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Boolean(true)))
}

const ATS_ARBITRARY: Check = Check {
    id: "IOS-SEC-002",
    severity: Severity::High,
    category: "misconfiguration",
    cwe: "CWE-319",
    title: "App Transport Security exception allows insecure HTTP",
    remediation: "Remove NSAllowsArbitraryLoads; if one server cannot do HTTPS yet, add an NSExceptionDomains entry for that domain only",
};
const ATS_WEB: Check = Check {
    id: "IOS-ATS-002",
    severity: Severity::Medium,
    category: "misconfiguration",
    cwe: "CWE-319",
    title: "App Transport Security disabled for web views or media",
    remediation: "Remove NSAllowsArbitraryLoadsInWebContent / NSAllowsArbitraryLoadsForMedia unless the app is a browser",
};
const ATS_DOMAIN: Check = Check {
    id: "IOS-ATS-003",
    severity: Severity::Medium,
    category: "misconfiguration",
    cwe: "CWE-319",
    title: "App Transport Security allows cleartext HTTP to a domain",
    remediation: "Serve the domain over HTTPS and remove the exception",
};
const ATS_TLS: Check = Check {
    id: "IOS-ATS-004",
    severity: Severity::Medium,
    category: "cryptography",
    cwe: "CWE-326",
    title: "App Transport Security accepts TLS older than 1.2",
    remediation: "Remove NSExceptionMinimumTLSVersion (the default is TLS 1.2) or set TLSv1.2 or later",
};
const TASK_ALLOW: Check = Check {
    id: "IOS-ENT-001",
    severity: Severity::High,
    category: "misconfiguration",
    cwe: "CWE-489",
    title: "get-task-allow is true in release entitlements",
    remediation: "Set get-task-allow only in Debug entitlements: a release build that allows debugger attachment lets any process read its memory",
};
const KEYCHAIN_WILDCARD: Check = Check {
    id: "IOS-ENT-002",
    severity: Severity::Medium,
    category: "data-exposure",
    cwe: "CWE-732",
    title: "Keychain access group with a wildcard",
    remediation: "List the exact access groups the app shares its keychain items with",
};
const FILE_SHARING: Check = Check {
    id: "IOS-PLIST-001",
    severity: Severity::Low,
    category: "data-exposure",
    cwe: "CWE-200",
    title: "The app's Documents folder is exposed in Files and Finder",
    remediation: "Keep secrets and databases out of Documents (use Application Support) or turn UIFileSharingEnabled / LSSupportsOpeningDocumentsInPlace off",
};
const URL_SCHEME: Check = Check {
    id: "IOS-PLIST-002",
    severity: Severity::Info,
    category: "input-validation",
    cwe: "CWE-939",
    title: "Custom URL scheme: any app can open it",
    remediation: "Validate every URL parameter in the handler; prefer Universal Links for anything sensitive",
};
const CLEARTEXT: Check = Check {
    id: "IOS-HTTP-001",
    severity: Severity::Medium,
    category: "misconfiguration",
    cwe: "CWE-319",
    title: "Cleartext http:// URL",
    remediation: "Use https://; if the server cannot, fix the server rather than adding an ATS exception",
};

const INSECURE_HTTP_KEYS: [&str; 3] = [
    "NSExceptionAllowsInsecureHTTPLoads",
    "NSTemporaryExceptionAllowsInsecureHTTPLoads",
    "NSThirdPartyExceptionAllowsInsecureHTTPLoads",
];
const MIN_TLS_KEYS: [&str; 3] = [
    "NSExceptionMinimumTLSVersion",
    "NSTemporaryExceptionMinimumTLSVersion",
    "NSThirdPartyExceptionMinimumTLSVersion",
];

fn check(doc: &mut Doc<'_>, root: &Dictionary) {
    let ats_key = "NSAppTransportSecurity";
    if let Some(ats) = root.get(ats_key).and_then(Value::as_dictionary) {
        check_ats(doc, ats);
    }
    for key in ["UIFileSharingEnabled", "LSSupportsOpeningDocumentsInPlace"] {
        if is_true(root.get(key)) {
            doc.report(
                &FILE_SHARING,
                &[Step::Key(key)],
                format!("{key} is true: every file in the app's Documents folder is visible and copyable in the Files app and Finder."),
            );
        }
    }
    check_url_schemes(doc, root);
    check_entitlements(doc, root);
    check_cleartext(doc, root);
}

fn check_ats(doc: &mut Doc<'_>, ats: &Dictionary) {
    let base = Step::Key("NSAppTransportSecurity");
    if is_true(ats.get("NSAllowsArbitraryLoads")) {
        doc.report(
            &ATS_ARBITRARY,
            &[base, Step::Key("NSAllowsArbitraryLoads")],
            "NSAllowsArbitraryLoads is true: App Transport Security is off, so the app may load any URL over cleartext HTTP or weak TLS.".into(),
        );
    }
    for key in [
        "NSAllowsArbitraryLoadsInWebContent",
        "NSAllowsArbitraryLoadsForMedia",
    ] {
        if is_true(ats.get(key)) {
            doc.report(
                &ATS_WEB,
                &[base, Step::Key(key)],
                format!("{key} is true: App Transport Security does not protect this content."),
            );
        }
    }
    let Some(domains) = ats.get("NSExceptionDomains").and_then(Value::as_dictionary) else {
        return;
    };
    for (domain, settings) in domains {
        let Some(settings) = settings.as_dictionary() else {
            continue;
        };
        let at = [base, Step::Key("NSExceptionDomains"), Step::Key(domain)];
        for key in INSECURE_HTTP_KEYS {
            if is_true(settings.get(key)) {
                doc.report(
                    &ATS_DOMAIN,
                    &[at[0], at[1], at[2], Step::Key(key)],
                    format!("{key} is true for {domain}: the app talks to it over cleartext HTTP."),
                );
            }
        }
        for key in MIN_TLS_KEYS {
            if let Some(v) = settings.get(key).and_then(Value::as_string)
                && matches!(v, "TLSv1.0" | "TLSv1.1")
            {
                doc.report(
                    &ATS_TLS,
                    &[at[0], at[1], at[2], Step::Key(key)],
                    format!("{key} is {v} for {domain}: TLS 1.0 and 1.1 are deprecated and weak."),
                );
            }
        }
    }
}

fn check_url_schemes(doc: &mut Doc<'_>, root: &Dictionary) {
    let Some(types) = root.get("CFBundleURLTypes").and_then(Value::as_array) else {
        return;
    };
    for t in types {
        let Some(schemes) = t
            .as_dictionary()
            .and_then(|d| d.get("CFBundleURLSchemes"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for s in schemes.iter().filter_map(Value::as_string) {
            doc.report(
                &URL_SCHEME,
                &[Step::Key("CFBundleURLTypes"), Step::Key("CFBundleURLSchemes"), Step::Str(s)],
                format!("The app registers the URL scheme `{s}://`; any app or web page can open it with parameters of its choosing, and another app may register the same scheme."),
            );
        }
    }
}

fn check_entitlements(doc: &mut Doc<'_>, root: &Dictionary) {
    let name = doc
        .file
        .rsplit('/')
        .next()
        .unwrap_or(doc.file)
        .to_ascii_lowercase();
    let debug_only = name.contains("debug") || name.contains("development");
    if is_true(root.get("get-task-allow")) && !debug_only {
        doc.report(
            &TASK_ALLOW,
            &[Step::Key("get-task-allow")],
            "get-task-allow is true in entitlements that are not named for Debug: a build signed with them lets a debugger attach.".into(),
        );
    }
    let Some(groups) = root.get("keychain-access-groups").and_then(Value::as_array) else {
        return;
    };
    for g in groups.iter().filter_map(Value::as_string) {
        if g.contains('*') {
            doc.report(
                &KEYCHAIN_WILDCARD,
                &[Step::Key("keychain-access-groups"), Step::Str(g)],
                format!("The keychain access group `{g}` has a wildcard: every app of the team matching it can read these keychain items."),
            );
        }
    }
}

fn check_cleartext(doc: &mut Doc<'_>, root: &Dictionary) {
    let mut found: Vec<(Vec<String>, String)> = Vec::new();
    walk_strings(
        &Value::Dictionary(root.clone()),
        &mut Vec::new(),
        &mut found,
    );
    for (keys, url) in found {
        let mut path: Vec<Step<'_>> = keys.iter().map(|k| Step::Key(k)).collect();
        path.push(Step::Str(&url));
        doc.report(
            &CLEARTEXT,
            &path,
            format!("The property list holds the cleartext URL {url}."),
        );
    }
}

/// Collects string values starting with `http://` (not loopback), with the
/// keys leading to them.
fn walk_strings(v: &Value, keys: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    match v {
        Value::String(s) if is_cleartext(s) => out.push((keys.clone(), s.clone())),
        Value::Array(items) => items.iter().for_each(|i| walk_strings(i, keys, out)),
        Value::Dictionary(d) => {
            for (k, v) in d {
                keys.push(k.clone());
                walk_strings(v, keys, out);
                keys.pop();
            }
        }
        _ => {}
    }
}

fn is_cleartext(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("http://") else {
        return false;
    };
    !["localhost", "127.0.0.1", "[::1]"].iter().any(|h| {
        rest.strip_prefix(h)
            .is_some_and(|r| r.is_empty() || r.starts_with([':', '/']))
    })
}

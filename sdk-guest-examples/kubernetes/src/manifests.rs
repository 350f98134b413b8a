//! `k8s-manifest-scanner`: checks over Kubernetes YAML manifests, line by
//! line with the indentation the manifests use (no YAML library: line
//! numbers must be exact, and manifests are regular enough).
//!
//! Complements security-base's `config` scanner (K8S-PRIVILEGED,
//! K8S-HOSTPATH, K8S-HOST-NAMESPACE, K8S-RUN-AS-ROOT, K8S-NO-RESOURCE-LIMITS):
//! none of those is repeated here.

use agent_skill_sdk::ToolError;
use agent_skill_sdk::types::{Confidence, Finding, Location, Severity, SkillError};
use agent_skill_sdk::wit::scanner_skill::exports::agent::skill::scanner::{
    Guest, ScanTarget, ScannerSpec,
};

pub const SCANNER: &str = "k8s-manifest-scanner";

pub struct Scanner;

impl Guest for Scanner {
    fn list_scanners() -> Vec<ScannerSpec> {
        vec![ScannerSpec {
            name: SCANNER.to_string(),
            description: "Kubernetes manifests: image tags, capabilities, privilege escalation, \
                          runAsNonRoot, runtime sockets, literal secrets"
                .to_string(),
            file_patterns: vec!["*.yaml".to_string(), "*.yml".to_string()],
            languages: Vec::new(),
        }]
    }

    fn scan(name: String, target: ScanTarget) -> Result<Vec<Finding>, SkillError> {
        if name != SCANNER {
            return Err(ToolError::not_found(format!("no scanner `{name}`")).into_wit());
        }
        Ok(scan(&target.path, &target.content))
    }
}

struct Rule {
    id: &'static str,
    title: &'static str,
    description: &'static str,
    severity: Severity,
    cwe: Option<&'static str>,
    remediation: &'static str,
}

const LATEST: Rule = Rule {
    id: "KUBE-IMAGE-LATEST",
    title: "Container image without a pinned tag",
    description: "The image uses `latest` or no tag, so what runs changes whenever the tag \
                  moves; rollbacks and audits cannot tell which image ran.",
    severity: Severity::Medium,
    cwe: Some("CWE-1357"),
    remediation: "Pin a version tag, or better a digest (`image@sha256:…`).",
};

const CAPABILITY: Rule = Rule {
    id: "KUBE-DANGEROUS-CAPABILITY",
    title: "Container adds a dangerous Linux capability",
    description: "SYS_ADMIN, NET_ADMIN, SYS_PTRACE, SYS_MODULE or ALL give the container \
                  near-root power over the node.",
    severity: Severity::High,
    cwe: Some("CWE-250"),
    remediation: "Drop ALL capabilities and add back only the narrow ones the process needs.",
};

const ESCALATION: Rule = Rule {
    id: "KUBE-PRIVILEGE-ESCALATION",
    title: "Privilege escalation allowed",
    description: "`allowPrivilegeEscalation: true` lets a process gain more privileges than its \
                  parent (setuid binaries, file capabilities).",
    severity: Severity::High,
    cwe: Some("CWE-269"),
    remediation: "Set `allowPrivilegeEscalation: false` in the container's securityContext.",
};

const NON_ROOT: Rule = Rule {
    id: "KUBE-RUN-AS-NON-ROOT-MISSING",
    title: "Container may run as root",
    description: "Neither the container nor its pod sets `runAsNonRoot: true`, so an image \
                  whose user is root runs as root.",
    severity: Severity::Medium,
    cwe: Some("CWE-250"),
    remediation: "Set `runAsNonRoot: true` (and a non-zero `runAsUser`) in the pod's or the \
                  container's securityContext.",
};

const SOCKET: Rule = Rule {
    id: "KUBE-RUNTIME-SOCKET",
    title: "Container runtime socket mounted",
    description: "Mounting the Docker or containerd socket hands the pod control of every \
                  container on the node.",
    severity: Severity::Critical,
    cwe: Some("CWE-250"),
    remediation: "Do not mount runtime sockets; use the Kubernetes API with a narrow RBAC role.",
};

const SECRET_ENV: Rule = Rule {
    id: "KUBE-SECRET-IN-ENV",
    title: "Secret written as a literal environment value",
    description: "An environment variable that holds a password, token or key has its value \
                  in the manifest, where everyone with access to the repository can read it.",
    severity: Severity::High,
    cwe: Some("CWE-798"),
    remediation: "Use `valueFrom.secretKeyRef` with a Kubernetes Secret.",
};

const DANGEROUS_CAPS: &[&str] = &["SYS_ADMIN", "NET_ADMIN", "SYS_PTRACE", "SYS_MODULE", "ALL"];
const SOCKETS: &[&str] = &[
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/var/run/containerd/containerd.sock",
    "/var/run/crio/crio.sock",
];
const SECRET_WORDS: &[&str] = &["PASSWORD", "PASSWD", "SECRET", "TOKEN", "API_KEY", "APIKEY"];

/// One line of a manifest.
struct Line<'a> {
    number: u32,
    indent: usize,
    /// The text after the indentation and a leading `- `.
    body: &'a str,
    /// Whether the line starts a sequence item (`- `).
    item: bool,
    raw: &'a str,
}

fn parse(content: &str) -> Vec<Vec<Line<'_>>> {
    let mut docs = vec![Vec::new()];
    for (i, raw) in content.split('\n').enumerate() {
        let raw = raw.trim_end_matches('\r');
        let trimmed = raw.trim_start();
        if trimmed.starts_with("---") {
            docs.push(Vec::new());
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = raw.len() - trimmed.len();
        let (item, body) = match trimmed.strip_prefix("- ") {
            Some(rest) => (true, rest.trim_start()),
            None => (trimmed == "-", trimmed),
        };
        docs.last_mut().expect("one document").push(Line {
            number: i as u32 + 1,
            indent,
            body,
            item,
            raw,
        });
    }
    docs
}

/// `key: value` → (key, value without quotes and trailing comment).
fn key_value(body: &str) -> Option<(&str, &str)> {
    let (key, value) = body.split_once(':')?;
    let key = key.trim().trim_matches(['"', '\'']);
    let value = match value.find(" #") {
        Some(at) => &value[..at],
        None => value,
    };
    Some((key, value.trim().trim_matches(['"', '\''])))
}

fn finding(rule: &Rule, path: &str, line: &Line, column: usize) -> Finding {
    Finding {
        rule_id: rule.id.to_string(),
        title: rule.title.to_string(),
        description: rule.description.to_string(),
        severity: rule.severity,
        category: "kubernetes-misconfiguration".to_string(),
        cwe: rule.cwe.map(str::to_string),
        owasp: Some("A05:2021".to_string()),
        location: Location {
            file: path.to_string(),
            start_line: line.number,
            end_line: line.number,
            start_column: column as u32 + 1,
            end_column: 0,
            function: None,
        },
        evidence: line.raw.trim().to_string(),
        remediation: rule.remediation.to_string(),
        confidence: Confidence::High,
        references: vec![
            "https://kubernetes.io/docs/concepts/security/pod-security-standards/".to_string(),
        ],
        metadata: Vec::new(),
    }
}

/// The column (0-based, in characters) where `body` starts in `line.raw`.
fn column(line: &Line) -> usize {
    let at = line.raw.len() - line.body.len();
    line.raw[..at].chars().count()
}

/// Whether an image reference has a pinned tag or digest.
fn pinned(image: &str) -> bool {
    if image.contains('@') {
        return true;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag != "latest" && !tag.is_empty(),
        None => false,
    }
}

pub fn scan(path: &str, content: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for doc in parse(content) {
        if !doc
            .iter()
            .any(|l| l.indent == 0 && !l.item && l.body.starts_with("apiVersion:"))
        {
            continue;
        }
        scan_document(path, &doc, &mut out);
    }
    out.sort_by_key(|f| (f.location.start_line, f.rule_id.clone()));
    out
}

fn scan_document(path: &str, doc: &[Line], out: &mut Vec<Finding>) {
    // Line checks.
    let mut adding: Option<usize> = None; // indent of a `add:` key being read
    for (i, line) in doc.iter().enumerate() {
        if let Some(indent) = adding {
            let inside = line.indent > indent || (line.item && line.indent == indent);
            if inside && line.item {
                let cap = line.body.trim().trim_matches(['"', '\'']);
                if DANGEROUS_CAPS.contains(&cap) {
                    out.push(finding(&CAPABILITY, path, line, column(line)));
                }
                continue;
            }
            adding = None;
        }
        let Some((key, value)) = key_value(line.body) else {
            continue;
        };
        match key {
            "image" if !value.is_empty() && !pinned(value) => {
                out.push(finding(&LATEST, path, line, column(line)));
            }
            "add" => {
                if let Some(list) = value.strip_prefix('[') {
                    let list = list.trim_end_matches(']');
                    if list
                        .split(',')
                        .map(|c| c.trim().trim_matches(['"', '\'']))
                        .any(|c| DANGEROUS_CAPS.contains(&c))
                    {
                        out.push(finding(&CAPABILITY, path, line, column(line)));
                    }
                } else if value.is_empty() {
                    adding = Some(line.indent);
                }
            }
            "allowPrivilegeEscalation" if value == "true" => {
                out.push(finding(&ESCALATION, path, line, column(line)));
            }
            "path" if SOCKETS.contains(&value) => {
                out.push(finding(&SOCKET, path, line, column(line)));
            }
            "name" if line.item => {
                let upper = value.to_ascii_uppercase();
                if SECRET_WORDS.iter().any(|w| upper.contains(w))
                    && let Some(next) = doc.get(i + 1)
                    && next.indent > line.indent
                    && !next.item
                    && let Some(("value", literal)) = key_value(next.body)
                    && !literal.is_empty()
                {
                    out.push(finding(&SECRET_ENV, path, next, column(next)));
                }
            }
            _ => {}
        }
    }
    non_root(path, doc, out);
}

/// Containers without `runAsNonRoot: true`, neither their own nor their pod's.
fn non_root(path: &str, doc: &[Line], out: &mut Vec<Finding>) {
    let mut containers = Vec::new(); // (index of the item line, end index)
    let mut i = 0;
    while i < doc.len() {
        let line = &doc[i];
        let key = key_value(line.body).map(|(k, _)| k);
        if !line.item && matches!(key, Some("containers" | "initContainers")) {
            let base = line.indent;
            let mut j = i + 1;
            let mut start: Option<usize> = None;
            let mut item_indent = None;
            while j < doc.len() {
                let l = &doc[j];
                let inside = l.indent > base || (l.item && l.indent == base);
                if !inside {
                    break;
                }
                if l.item && item_indent.is_none_or(|d| d == l.indent) {
                    item_indent = Some(l.indent);
                    if let Some(s) = start {
                        containers.push((s, j));
                    }
                    start = Some(j);
                }
                j += 1;
            }
            if let Some(s) = start {
                containers.push((s, j));
            }
            i = j;
            continue;
        }
        i += 1;
    }
    if containers.is_empty() {
        return;
    }
    let in_container = |k: usize| containers.iter().any(|&(s, e)| k >= s && k < e);
    let non_root_true = |l: &Line| key_value(l.body) == Some(("runAsNonRoot", "true"));
    let pod_level = doc
        .iter()
        .enumerate()
        .any(|(k, l)| !in_container(k) && non_root_true(l));
    if pod_level {
        return;
    }
    for &(s, e) in &containers {
        if !doc[s..e].iter().any(non_root_true) {
            out.push(finding(&NON_ROOT, path, &doc[s], column(&doc[s])));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_tags() {
        assert!(pinned("nginx:1.27"));
        assert!(pinned("registry:5000/team/app:2.1"));
        assert!(pinned("nginx@sha256:abc"));
        assert!(!pinned("nginx"));
        assert!(!pinned("nginx:latest"));
        assert!(!pinned("registry:5000/team/app"));
    }
}

//! The `config` scanner: Dockerfiles, Kubernetes manifests, GitHub Actions
//! workflows and Terraform. YAML is read line by line with its indentation
//! (enough for these checks, and every finding keeps its exact line).

use std::sync::LazyLock;

use agent_skill_sdk::types::{Confidence, Finding, Severity};
use regex::Regex;

use crate::finding::{self, Meta, Span};
use crate::text::{self, Lines};

/// What kind of configuration file `path` is, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// Dockerfile / Containerfile.
    Dockerfile,
    /// GitHub Actions workflow.
    Workflow,
    /// Any other YAML (Kubernetes when it has `apiVersion` and `kind`).
    Yaml,
    /// Terraform.
    Terraform,
}

/// Classifies a path.
pub fn kind_of(path: &str) -> Option<FileKind> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    if lower == "dockerfile"
        || lower.starts_with("dockerfile.")
        || lower.ends_with(".dockerfile")
        || lower == "containerfile"
    {
        Some(FileKind::Dockerfile)
    } else if lower.ends_with(".yml") || lower.ends_with(".yaml") {
        if path.starts_with(".github/workflows/") || path.contains("/.github/workflows/") {
            Some(FileKind::Workflow)
        } else {
            Some(FileKind::Yaml)
        }
    } else if lower.ends_with(".tf") {
        Some(FileKind::Terraform)
    } else {
        None
    }
}

/// Scans one configuration file.
pub fn scan(path: &str, content: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    match kind_of(path) {
        Some(FileKind::Dockerfile) => dockerfile(path, content, &mut out),
        Some(FileKind::Workflow) => workflow(path, content, &mut out),
        Some(FileKind::Yaml) => kubernetes(path, content, &mut out),
        Some(FileKind::Terraform) => terraform(path, content, &mut out),
        None => {}
    }
    out.sort_by_key(|f| (f.location.start_line, f.location.start_column));
    finding::dedup(&mut out);
    out
}

const fn m(
    id: &'static str,
    title: &'static str,
    description: &'static str,
    severity: Severity,
    cwe: &'static str,
    remediation: &'static str,
    references: &'static [&'static str],
) -> Meta {
    Meta {
        id,
        title,
        description,
        severity,
        category: "misconfiguration",
        cwe,
        owasp: "A05:2021",
        remediation,
        confidence: Confidence::High,
        references,
    }
}

const DOCKER_REF: &[&str] = &["https://docs.docker.com/build/building/best-practices/"];

/// Dockerfile rules.
pub const DOCKER_ROOT_USER: Meta = m(
    "DOCKER-ROOT-USER",
    "Container runs as root",
    "The final stage sets `USER root` (or uid 0), or never sets a USER: the container's processes run as root, so a compromise of the application is a compromise of the container.",
    Severity::Medium,
    "CWE-250",
    "Create an unprivileged user and switch to it with `USER <name>` in the final stage.",
    DOCKER_REF,
);
/// `FROM x:latest` or untagged.
pub const DOCKER_LATEST_TAG: Meta = m(
    "DOCKER-LATEST-TAG",
    "Base image not pinned (`latest` or no tag)",
    "The base image is `latest` or has no tag, so builds are not reproducible and can silently pick up a different, possibly compromised, image.",
    Severity::Low,
    "CWE-1357",
    "Pin the base image to a specific version tag, ideally with its digest (`image:1.2.3@sha256:...`).",
    DOCKER_REF,
);
/// `ADD https://...`.
pub const DOCKER_ADD_URL: Meta = m(
    "DOCKER-ADD-URL",
    "ADD downloads a remote URL",
    "`ADD` of a URL fetches content at build time without integrity checking.",
    Severity::Medium,
    "CWE-494",
    "Download with `curl`/`wget` and verify a checksum (or use `ADD --checksum=sha256:...`), or COPY a vendored file.",
    DOCKER_REF,
);
/// Secrets in ENV/ARG.
pub const DOCKER_SECRET_ENV: Meta = Meta {
    category: "secrets-exposure",
    owasp: "A07:2021",
    ..m(
        "DOCKER-SECRET-ENV",
        "Secret in ENV or ARG",
        "A credential is set with ENV or ARG: it is stored in the image layers and metadata and visible to anyone who can pull the image.",
        Severity::High,
        "CWE-798",
        "Pass secrets at build time with BuildKit secret mounts (`RUN --mount=type=secret`) and at run time through the orchestrator's secrets.",
        DOCKER_REF,
    )
};

const K8S_REF: &[&str] = &["https://kubernetes.io/docs/concepts/security/pod-security-standards/"];

/// `privileged: true`.
pub const K8S_PRIVILEGED: Meta = m(
    "K8S-PRIVILEGED",
    "Privileged container",
    "A privileged container has all capabilities and access to the host's devices; escaping to the node is trivial.",
    Severity::High,
    "CWE-250",
    "Remove `privileged: true`; grant only the specific capabilities needed.",
    K8S_REF,
);
/// `hostPath` volumes.
pub const K8S_HOST_PATH: Meta = m(
    "K8S-HOSTPATH",
    "hostPath volume",
    "A hostPath volume mounts a directory of the node into the pod, exposing the node's filesystem.",
    Severity::Medium,
    "CWE-668",
    "Use persistent volumes, configMaps, secrets or emptyDir instead of hostPath.",
    K8S_REF,
);
/// hostNetwork/hostPID/hostIPC.
pub const K8S_HOST_NAMESPACE: Meta = m(
    "K8S-HOST-NAMESPACE",
    "Pod shares the host's namespaces",
    "`hostNetwork`, `hostPID` or `hostIPC` gives the pod the node's network, processes or IPC, bypassing isolation.",
    Severity::High,
    "CWE-668",
    "Remove `hostNetwork`, `hostPID` and `hostIPC` (or set them to false).",
    K8S_REF,
);
/// runAsUser 0 / runAsNonRoot false / not set.
pub const K8S_RUN_AS_ROOT: Meta = m(
    "K8S-RUN-AS-ROOT",
    "Container may run as root",
    "The container runs as uid 0, or nothing (`runAsNonRoot: true` or a non-zero `runAsUser`) prevents it from running as root.",
    Severity::Medium,
    "CWE-250",
    "Set `securityContext.runAsNonRoot: true` and a non-zero `runAsUser` on the pod or container.",
    K8S_REF,
);
/// No resources.limits.
pub const K8S_NO_LIMITS: Meta = m(
    "K8S-NO-RESOURCE-LIMITS",
    "Container without resource limits",
    "Without CPU and memory limits one container can exhaust the node's resources (denial of service).",
    Severity::Low,
    "CWE-770",
    "Set `resources.limits.cpu` and `resources.limits.memory` on every container.",
    &["https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/"],
);

const GHA_REF: &[&str] = &[
    "https://docs.github.com/en/actions/security-for-github-actions/security-guides/security-hardening-for-github-actions",
];

/// pull_request_target + checkout of the head.
pub const GHA_PR_TARGET: Meta = Meta {
    category: "supply-chain",
    owasp: "A08:2021",
    ..m(
        "GHA-PR-TARGET-CHECKOUT",
        "pull_request_target checks out the pull request's code",
        "The workflow runs on `pull_request_target` (with secrets and a write token) and checks out the pull request's head: untrusted code runs with those privileges.",
        Severity::Critical,
        "CWE-829",
        "Use `pull_request` for untrusted code, or do not check out or run the head in a `pull_request_target` workflow.",
        GHA_REF,
    )
};
/// Secrets echoed.
pub const GHA_SECRET_ECHO: Meta = Meta {
    category: "secrets-exposure",
    owasp: "A09:2021",
    ..m(
        "GHA-SECRET-ECHO",
        "Secret printed in a run step",
        "A `run:` step echoes a secret; masking is best-effort and transformed values leak into the logs.",
        Severity::High,
        "CWE-532",
        "Do not print secrets; pass them to tools through environment variables or files.",
        GHA_REF,
    )
};
/// Unpinned actions.
pub const GHA_UNPINNED: Meta = Meta {
    category: "supply-chain",
    owasp: "A08:2021",
    ..m(
        "GHA-UNPINNED-ACTION",
        "Action not pinned to a commit SHA",
        "The action is referenced by a tag or branch, which its owner (or an attacker who compromises it) can move to different code.",
        Severity::Medium,
        "CWE-829",
        "Pin the action to a full 40-character commit SHA (keep the version in a comment).",
        GHA_REF,
    )
};

const TF_REF: &[&str] = &[
    "https://docs.aws.amazon.com/AmazonS3/latest/userguide/access-control-block-public-access.html",
];

/// Public S3 ACL.
pub const TF_S3_PUBLIC_ACL: Meta = Meta {
    category: "data-exposure",
    owasp: "A01:2021",
    ..m(
        "TF-S3-PUBLIC-ACL",
        "S3 bucket with a public ACL",
        "The bucket's canned ACL grants read (or write) access to everyone.",
        Severity::High,
        "CWE-732",
        "Use `private` ACLs (or no ACL with bucket owner enforced) and grant access through IAM policies.",
        TF_REF,
    )
};
/// Public access block disabled.
pub const TF_S3_PUBLIC_ACCESS_BLOCK: Meta = Meta {
    category: "data-exposure",
    owasp: "A01:2021",
    ..m(
        "TF-S3-PUBLIC-ACCESS-BLOCK-DISABLED",
        "S3 public access block disabled",
        "A setting of the bucket's public access block is false, allowing public ACLs or policies.",
        Severity::Medium,
        "CWE-732",
        "Set `block_public_acls`, `block_public_policy`, `ignore_public_acls` and `restrict_public_buckets` to true.",
        TF_REF,
    )
};
/// Open ingress.
pub const TF_SG_OPEN: Meta = m(
    "TF-SG-OPEN-INGRESS",
    "Security group open to the internet on an administrative or every port",
    "An ingress rule allows 0.0.0.0/0 (or ::/0) on SSH, RDP or all ports.",
    Severity::High,
    "CWE-284",
    "Restrict the CIDR to known addresses, or reach hosts through a bastion, VPN or SSM.",
    &["https://docs.aws.amazon.com/vpc/latest/userguide/vpc-security-groups.html"],
);

fn at_line(meta: &Meta, path: &str, line: usize, text_line: &str) -> Finding {
    let trimmed = text_line.trim_start();
    let col = (text_line.len() - trimmed.len() + 1) as u32;
    let span = Span {
        start_line: line as u32,
        start_column: col,
        end_line: line as u32,
        end_column: col + trimmed.trim_end().len() as u32,
    };
    finding::make(meta, path, span, text::clip(trimmed.trim_end()))
}

// ---------------------------------------------------------------- Dockerfile

static SECRET_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|private_?key|credentials?)")
        .expect("regex")
});

fn dockerfile(path: &str, content: &str, out: &mut Vec<Finding>) {
    let lines = Lines::new(content);
    // Logical instructions: (first line index, text with continuations joined).
    let mut instructions: Vec<(usize, String)> = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for i in 0..lines.count() {
        let raw = lines.line(i);
        let t = raw.trim();
        if current.is_none() && (t.is_empty() || t.starts_with('#')) {
            continue;
        }
        if current.is_some() && t.starts_with('#') {
            continue;
        }
        let (cont, body) = match t.strip_suffix('\\') {
            Some(b) => (true, b),
            None => (false, t),
        };
        match &mut current {
            Some((_, s)) => {
                s.push(' ');
                s.push_str(body.trim());
            }
            None => current = Some((i, body.trim().to_string())),
        }
        if !cont && let Some(done) = current.take() {
            instructions.push(done);
        }
    }
    if let Some(done) = current.take() {
        instructions.push(done);
    }

    let mut stages: Vec<String> = Vec::new();
    let mut last_from: Option<usize> = None;
    let mut last_user: Option<(usize, String)> = None;
    for (line_index, ins) in &instructions {
        let line_index = *line_index;
        let (word, rest) = ins.split_once(char::is_whitespace).unwrap_or((ins, ""));
        let rest = rest.trim();
        let raw = lines.line(line_index);
        match word.to_ascii_uppercase().as_str() {
            "FROM" => {
                last_from = Some(line_index);
                last_user = None;
                let parts: Vec<&str> = rest
                    .split_whitespace()
                    .filter(|p| !p.starts_with("--"))
                    .collect();
                let image = parts.first().copied().unwrap_or("");
                if let (Some(kw), Some(alias)) = (parts.get(1), parts.get(2))
                    && kw.eq_ignore_ascii_case("as")
                {
                    stages.push(alias.to_ascii_lowercase());
                }
                if image.is_empty()
                    || image.eq_ignore_ascii_case("scratch")
                    || image.contains('$')
                    || stages[..stages.len().saturating_sub(usize::from(parts.len() > 2))]
                        .contains(&image.to_ascii_lowercase())
                    || image.contains('@')
                {
                    continue;
                }
                let last = image.rsplit('/').next().unwrap_or(image);
                match last.split_once(':') {
                    Some((_, tag)) if tag != "latest" => {}
                    _ => out.push(at_line(&DOCKER_LATEST_TAG, path, line_index + 1, raw)),
                }
            }
            "USER" => last_user = Some((line_index, rest.to_string())),
            "ADD"
                if rest
                    .split_whitespace()
                    .any(|p| p.starts_with("http://") || p.starts_with("https://"))
                    && !rest.contains("--checksum") =>
            {
                out.push(at_line(&DOCKER_ADD_URL, path, line_index + 1, raw));
            }
            "ENV" | "ARG" => {
                for (name, value) in env_pairs(rest) {
                    if SECRET_NAME.is_match(&name)
                        && !value.is_empty()
                        && !text::is_placeholder(&value)
                        && !name.to_ascii_uppercase().ends_with("_FILE")
                        && !name.to_ascii_uppercase().ends_with("_PATH")
                    {
                        let mut f = at_line(&DOCKER_SECRET_ENV, path, line_index + 1, raw);
                        f.evidence = text::redacted_line(raw, &value);
                        out.push(f);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some(from) = last_from {
        match last_user {
            Some((line_index, user)) => {
                let name = user.split(':').next().unwrap_or("").trim();
                if name == "root" || name == "0" {
                    out.push(at_line(
                        &DOCKER_ROOT_USER,
                        path,
                        line_index + 1,
                        lines.line(line_index),
                    ));
                }
            }
            None => {
                let mut f = at_line(&DOCKER_ROOT_USER, path, from + 1, lines.line(from));
                f.title = "Container runs as root (no USER in the final stage)".into();
                f.confidence = Confidence::Medium;
                out.push(f);
            }
        }
    }
}

/// `K=V K2="V 2"` or `K V` pairs of ENV/ARG.
fn env_pairs(rest: &str) -> Vec<(String, String)> {
    let unquote = |s: &str| s.trim().trim_matches('"').trim_matches('\'').to_string();
    let first = rest.split_whitespace().next().unwrap_or("");
    if !first.contains('=') {
        // Legacy `ENV NAME value...`, or `ARG NAME` without a default.
        let (name, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        return vec![(name.to_string(), unquote(value))];
    }
    let mut pairs = Vec::new();
    let mut chars = rest.chars().peekable();
    while chars.peek().is_some() {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut name = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c.is_whitespace() {
                break;
            }
            name.push(c);
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'=') {
            chars.next();
            let quote = match chars.peek() {
                Some(&q) if q == '"' || q == '\'' => {
                    chars.next();
                    Some(q)
                }
                _ => None,
            };
            while let Some(&c) = chars.peek() {
                chars.next();
                match quote {
                    Some(q) if c == q => break,
                    None if c.is_whitespace() => break,
                    _ => value.push(c),
                }
            }
        }
        if !name.is_empty() {
            pairs.push((name, value));
        }
    }
    pairs
}

// ---------------------------------------------------------------- YAML lines

/// One significant YAML line.
#[derive(Debug)]
struct YLine<'a> {
    /// 0-based line index.
    index: usize,
    /// Column of the first character (after `- ` list markers).
    indent: usize,
    /// Column of the leading `- `, if the line starts a list item.
    dash: Option<usize>,
    /// The key, if the line is `key: ...`.
    key: Option<&'a str>,
    /// The value after the colon, comments stripped, trimmed.
    value: &'a str,
    /// The raw line.
    raw: &'a str,
}

fn strip_comment(s: &str) -> &str {
    let mut in_single = false;
    let mut in_double = false;
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'\'' if !in_double => in_single = !in_single,
            b'"' if !in_single => in_double = !in_double,
            b'#' if !in_single && !in_double && (i == 0 || bytes[i - 1] == b' ') => {
                return &s[..i];
            }
            _ => {}
        }
    }
    s
}

fn yaml_lines<'a>(lines: &Lines<'a>, from: usize, to: usize) -> Vec<YLine<'a>> {
    let mut out = Vec::new();
    for index in from..to {
        let raw = lines.line(index);
        let body = strip_comment(raw);
        if body.trim().is_empty() {
            continue;
        }
        let mut indent = body.len() - body.trim_start().len();
        let mut rest = body.trim_start();
        let mut dash = None;
        while let Some(r) = rest
            .strip_prefix("- ")
            .or_else(|| (rest == "-").then_some(""))
        {
            if dash.is_none() {
                dash = Some(indent);
            }
            let r2 = r.trim_start();
            indent += rest.len() - r2.len();
            rest = r2;
        }
        let (key, value) = match split_key(rest) {
            Some((k, v)) => (Some(k), v.trim()),
            None => (None, rest.trim()),
        };
        out.push(YLine {
            index,
            indent,
            dash,
            key,
            value,
            raw,
        });
    }
    out
}

/// `key: value` → (key, value); quotes around the key removed.
fn split_key(s: &str) -> Option<(&str, &str)> {
    let pos = s
        .find(": ")
        .or_else(|| s.ends_with(':').then(|| s.len() - 1))?;
    let key = s[..pos].trim().trim_matches('"').trim_matches('\'');
    if key.is_empty() || key.contains(' ') && !key.starts_with('$') {
        return None;
    }
    Some((key, &s[(pos + 1).min(s.len())..]))
}

fn unquote(v: &str) -> &str {
    v.trim().trim_matches('"').trim_matches('\'')
}

// ---------------------------------------------------------------- Kubernetes

const WORKLOADS: &[&str] = &[
    "Pod",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "ReplicationController",
    "Job",
    "CronJob",
];

fn kubernetes(path: &str, content: &str, out: &mut Vec<Finding>) {
    if !content.contains("apiVersion") || !content.contains("kind") {
        return;
    }
    let lines = Lines::new(content);
    let n = lines.count();
    // Split documents at `---`.
    let mut start = 0;
    for i in 0..=n {
        let boundary =
            i == n || lines.line(i).trim_end() == "---" || lines.line(i).starts_with("--- ");
        if boundary {
            if i > start {
                let doc = yaml_lines(&lines, start, i);
                k8s_document(path, &doc, out);
            }
            start = i + 1;
        }
    }
}

fn k8s_document(path: &str, doc: &[YLine<'_>], out: &mut Vec<Finding>) {
    let is_workload = doc
        .iter()
        .any(|l| l.indent == 0 && l.key == Some("kind") && WORKLOADS.contains(&unquote(l.value)));
    if !is_workload
        || !doc
            .iter()
            .any(|l| l.indent == 0 && l.key == Some("apiVersion"))
    {
        return;
    }
    let truthy = |v: &str| matches!(unquote(v), "true" | "True" | "TRUE" | "yes");
    for l in doc {
        match l.key {
            Some("privileged") if truthy(l.value) => {
                out.push(at_line(&K8S_PRIVILEGED, path, l.index + 1, l.raw));
            }
            Some("hostPath") => out.push(at_line(&K8S_HOST_PATH, path, l.index + 1, l.raw)),
            Some("hostNetwork" | "hostPID" | "hostIPC") if truthy(l.value) => {
                out.push(at_line(&K8S_HOST_NAMESPACE, path, l.index + 1, l.raw));
            }
            Some("runAsUser") if unquote(l.value) == "0" => {
                out.push(at_line(&K8S_RUN_AS_ROOT, path, l.index + 1, l.raw));
            }
            Some("runAsNonRoot") if matches!(unquote(l.value), "false" | "False" | "no") => {
                out.push(at_line(&K8S_RUN_AS_ROOT, path, l.index + 1, l.raw));
            }
            _ => {}
        }
    }
    // Containers: items of `containers:` / `initContainers:` lists.
    let mut container_ranges = Vec::new();
    for (i, l) in doc.iter().enumerate() {
        if !matches!(
            l.key,
            Some("containers" | "initContainers" | "ephemeralContainers")
        ) {
            continue;
        }
        let key_indent = l.indent;
        let mut j = i + 1;
        while j < doc.len() {
            let item = &doc[j];
            let Some(dash) = item.dash else { break };
            if dash < key_indent {
                break;
            }
            let mut k = j + 1;
            while k < doc.len() && doc[k].indent > dash && doc[k].dash != Some(dash) {
                k += 1;
            }
            container_ranges.push((j, k));
            j = k;
        }
    }
    let in_container = |idx: usize| container_ranges.iter().any(|&(a, b)| idx >= a && idx < b);
    let pod_non_root = doc.iter().enumerate().any(|(i, l)| {
        !in_container(i)
            && ((l.key == Some("runAsNonRoot") && truthy(l.value))
                || (l.key == Some("runAsUser")
                    && unquote(l.value).parse::<u64>().is_ok_and(|u| u > 0)))
    });
    let pod_root = doc.iter().enumerate().any(|(i, l)| {
        !in_container(i)
            && ((l.key == Some("runAsUser") && unquote(l.value) == "0")
                || (l.key == Some("runAsNonRoot") && !truthy(l.value)))
    });
    for &(a, b) in &container_ranges {
        let item = &doc[a..b];
        let head = &doc[a];
        let non_root = item.iter().any(|l| {
            (l.key == Some("runAsNonRoot") && truthy(l.value))
                || (l.key == Some("runAsUser")
                    && unquote(l.value).parse::<u64>().is_ok_and(|u| u > 0))
        });
        let explicit_root = item.iter().any(|l| {
            (l.key == Some("runAsUser") && unquote(l.value) == "0")
                || (l.key == Some("runAsNonRoot") && !truthy(l.value))
        });
        if !non_root && !pod_non_root && !explicit_root && !pod_root {
            let mut f = at_line(&K8S_RUN_AS_ROOT, path, head.index + 1, head.raw);
            f.description = "Nothing prevents this container from running as root: neither it nor the pod sets `runAsNonRoot: true` or a non-zero `runAsUser`.".into();
            f.confidence = Confidence::Medium;
            out.push(f);
        }
        let has_limits = item.iter().enumerate().any(|(k, l)| {
            l.key == Some("resources")
                && item[k + 1..]
                    .iter()
                    .take_while(|c| c.indent > l.indent)
                    .any(|c| c.key == Some("limits") && (c.value.is_empty() || c.value != "{}"))
        });
        if !has_limits {
            out.push(at_line(&K8S_NO_LIMITS, path, head.index + 1, head.raw));
        }
    }
}

// ---------------------------------------------------------------- GitHub Actions

static USES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s*(?:-\s+)?uses:\s*["']?([^"'\s#]+)"#).expect("regex"));
static SECRET_EXPR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$\{\{\s*secrets\.[A-Za-z0-9_]+\s*\}\}").expect("regex"));
static PRINT_CMD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:echo|printf|print|cat|Write-Host|Write-Output)\b").expect("regex")
});
static HEAD_REF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"github\.event\.pull_request\.head\.(?:sha|ref)|github\.head_ref|refs/pull/")
        .expect("regex")
});
static FULL_SHA: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[0-9a-f]{40}$").expect("regex"));

fn workflow(path: &str, content: &str, out: &mut Vec<Finding>) {
    let lines = Lines::new(content);
    let doc = yaml_lines(&lines, 0, lines.count());
    // Triggers.
    let pr_target = doc.iter().enumerate().any(|(i, l)| {
        if l.indent == 0 && matches!(l.key, Some("on" | "\"on\"" | "true")) {
            if l.value.contains("pull_request_target") {
                return true;
            }
            return doc[i + 1..]
                .iter()
                .take_while(|c| c.indent > 0)
                .any(|c| c.key == Some("pull_request_target") || c.value == "pull_request_target");
        }
        false
    });
    let mut in_run: Option<usize> = None; // indent of the `run:` key of a block scalar
    for l in &doc {
        if let Some(run_indent) = in_run {
            if l.indent > run_indent {
                check_run_line(path, l, out);
                continue;
            }
            in_run = None;
        }
        if let Some(caps) = USES.captures(l.raw) {
            let target = &caps[1];
            if !target.starts_with("./") && !target.starts_with("docker://") {
                let pinned = target
                    .rsplit_once('@')
                    .is_some_and(|(_, r)| FULL_SHA.is_match(r));
                if !pinned {
                    out.push(at_line(&GHA_UNPINNED, path, l.index + 1, l.raw));
                }
            }
        }
        if pr_target && l.key == Some("ref") && HEAD_REF.is_match(l.value) {
            out.push(at_line(&GHA_PR_TARGET, path, l.index + 1, l.raw));
        }
        if l.key == Some("run") {
            let v = l.value;
            if v.starts_with('|') || v.starts_with('>') {
                in_run = Some(l.indent);
            } else {
                check_run_line(path, l, out);
            }
        }
    }
}

fn check_run_line(path: &str, l: &YLine<'_>, out: &mut Vec<Finding>) {
    if let Some(m) = SECRET_EXPR.find(l.raw)
        && PRINT_CMD.find(l.raw).is_some_and(|p| p.start() < m.start())
        && !l.raw.contains("::add-mask::")
        && !l.raw[m.end()..].contains('|')
    {
        out.push(at_line(&GHA_SECRET_ECHO, path, l.index + 1, l.raw));
    }
}

// ---------------------------------------------------------------- Terraform

static TF_ACL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*acl\s*=\s*"(?:public-read|public-read-write|authenticated-read)""#)
        .expect("regex")
});
static TF_BLOCK_FALSE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:block_public_acls|block_public_policy|ignore_public_acls|restrict_public_buckets)\s*=\s*false\b")
        .expect("regex")
});
static TF_ATTR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^\s*([a-z_0-9]+)\s*=\s*(.*)$"#).expect("regex"));

fn terraform(path: &str, content: &str, out: &mut Vec<Finding>) {
    let lines = Lines::new(content);
    let n = lines.count();
    for i in 0..n {
        let raw = lines.line(i);
        if TF_ACL.is_match(raw) {
            out.push(at_line(&TF_S3_PUBLIC_ACL, path, i + 1, raw));
        }
        if TF_BLOCK_FALSE.is_match(raw) {
            out.push(at_line(&TF_S3_PUBLIC_ACCESS_BLOCK, path, i + 1, raw));
        }
    }
    // Ingress blocks: `ingress {` inside aws_security_group, and rule resources.
    let mut i = 0;
    while i < n {
        let t = lines.line(i).trim();
        let is_ingress_block = t.starts_with("ingress") && t.ends_with('{');
        let is_rule_resource = t.starts_with("resource")
            && (t.contains("\"aws_security_group_rule\"")
                || t.contains("\"aws_vpc_security_group_ingress_rule\""));
        if !(is_ingress_block || is_rule_resource) {
            i += 1;
            continue;
        }
        // Collect the block by brace depth.
        let mut depth = 0i32;
        let mut opened = false;
        let mut end = i;
        for j in i..n {
            let l = strip_tf_comment(lines.line(j));
            opened |= l.contains('{');
            depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
            end = j;
            if opened && depth <= 0 {
                break;
            }
        }
        let mut from = None;
        let mut to = None;
        let mut protocol = None;
        let mut kind_ingress = is_ingress_block;
        let mut open_line = None;
        for j in i..=end {
            let raw = lines.line(j);
            let l = strip_tf_comment(raw);
            if let Some(c) = TF_ATTR.captures(l) {
                let value = c[2].trim().trim_matches('"');
                match &c[1] {
                    "from_port" => from = value.parse::<i64>().ok(),
                    "to_port" => to = value.parse::<i64>().ok(),
                    "protocol" | "ip_protocol" => protocol = Some(value.to_string()),
                    "type" => kind_ingress = kind_ingress || value == "ingress",
                    _ => {}
                }
            }
            if (l.contains("\"0.0.0.0/0\"") || l.contains("\"::/0\""))
                && (l.contains("cidr") || l.trim_start().starts_with('"'))
                && open_line.is_none()
            {
                open_line = Some(j);
            }
        }
        if t.contains("aws_vpc_security_group_ingress_rule") {
            kind_ingress = true;
        }
        if kind_ingress && let Some(j) = open_line {
            let all_protocols = protocol
                .as_deref()
                .is_some_and(|p| p == "-1" || p.eq_ignore_ascii_case("all"));
            let covers = |port: i64| match (from, to) {
                (Some(a), Some(b)) => a <= port && port <= b,
                (Some(a), None) => a == port,
                _ => false,
            };
            let all_ports = matches!((from, to), (Some(0), Some(65535)));
            if all_protocols || all_ports || covers(22) || covers(3389) {
                out.push(at_line(&TF_SG_OPEN, path, j + 1, lines.line(j)));
            }
        }
        i = end + 1;
    }
}

fn strip_tf_comment(s: &str) -> &str {
    let cut = [s.find('#'), s.find("//")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(s.len());
    &s[..cut]
}

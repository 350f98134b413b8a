//! The kubectl tools.

use agent_skill_sdk::{Tool, ToolError, Toolbox, config, exec};
use serde::Deserialize;
use serde_json::Value;

/// Output longer than this is cut (with a note) before it reaches the model.
const MAX_OUTPUT: usize = 20_000;

pub fn tools() -> Toolbox {
    Toolbox::new()
        .tool(
            "kubectl_get",
            "Get Kubernetes resources (a concise summary of `kubectl get -o json`)",
            include_str!("../schemas/kubectl_get.json"),
            get,
        )
        .tool(
            "kubectl_describe",
            "Describe one Kubernetes resource (`kubectl describe`)",
            include_str!("../schemas/kubectl_describe.json"),
            describe,
        )
        .tool(
            "kubectl_logs",
            "Get container logs from a pod (the last lines)",
            include_str!("../schemas/kubectl_logs.json"),
            logs,
        )
        .add_tool(
            Tool::new(
                "kubectl_apply",
                "Apply a Kubernetes manifest (optionally a server-side dry run)",
                include_str!("../schemas/kubectl_apply.json"),
                apply,
            )
            .requires_approval(true),
        )
}

/// The skill's configuration, `[skills.config.kubernetes]`.
pub struct Settings {
    pub namespace: String,
    pub context: Option<String>,
}

pub fn settings() -> Result<Settings, ToolError> {
    let namespace: Option<String> = config::get("default_namespace")?;
    let namespace = namespace.unwrap_or_else(|| "default".to_string());
    check_label("default_namespace (config)", &namespace)?;
    let context: Option<String> = config::get("context")?;
    if let Some(c) = &context {
        check_context(c)?;
    }
    Ok(Settings { namespace, context })
}

/// A DNS label (RFC 1123), as namespaces and container names are.
fn check_label(what: &str, value: &str) -> Result<(), ToolError> {
    let ok = !value.is_empty()
        && value.len() <= 63
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !value.starts_with('-')
        && !value.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_input(format!(
            "{what} `{value}` is not a valid name: lowercase letters, digits and `-`, \
             starting and ending with a letter or digit, at most 63 characters"
        )))
    }
}

/// A DNS subdomain, as most resource names are.
fn check_name(what: &str, value: &str) -> Result<(), ToolError> {
    let ok = !value.is_empty()
        && value.len() <= 253
        && value.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.' || b == b':'
        })
        && value.as_bytes()[0].is_ascii_alphanumeric()
        && value.as_bytes()[value.len() - 1].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_input(format!(
            "{what} `{value}` is not a valid resource name: lowercase letters, digits, `-`, `.` \
             (and `:` for RBAC names), starting and ending with a letter or digit"
        )))
    }
}

/// A resource kind (`pods`, `deployments.apps`, `pods,services`).
fn check_kind(value: &str) -> Result<(), ToolError> {
    let ok = !value.is_empty()
        && value.len() <= 200
        && value.split(',').all(|part| {
            part.as_bytes()
                .first()
                .is_some_and(|b| b.is_ascii_alphabetic())
                && part
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'/')
        });
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_input(format!(
            "kind `{value}` is not a resource kind (e.g. pods, deployments.apps, pods,services)"
        )))
    }
}

/// A label selector: `key=value`, `key!=value`, `key in (a,b)`, `!key`...
fn check_selector(value: &str) -> Result<(), ToolError> {
    let ok = !value.trim().is_empty()
        && !value.starts_with('-')
        && value.len() <= 1000
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "=!,._/-() ".contains(c));
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_input(format!(
            "selector `{value}` is not a label selector (e.g. app=web,tier!=cache)"
        )))
    }
}

fn check_context(value: &str) -> Result<(), ToolError> {
    let ok = !value.is_empty()
        && !value.starts_with('-')
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:@/".contains(c));
    if ok {
        Ok(())
    } else {
        Err(ToolError::invalid_input(format!(
            "context `{value}` (config) is not a kubeconfig context name"
        )))
    }
}

/// The namespace of a call: the input's, else the configured default.
fn namespace(input: Option<String>, settings: &Settings) -> Result<String, ToolError> {
    match input {
        Some(ns) => {
            check_label("namespace", &ns)?;
            Ok(ns)
        }
        None => Ok(settings.namespace.clone()),
    }
}

/// `kubectl [--context C] ARGS…`; a non-zero exit is a tool error with
/// kubectl's message.
fn kubectl(
    settings: &Settings,
    args: Vec<String>,
    stdin: Option<&str>,
) -> Result<String, ToolError> {
    let mut full = Vec::new();
    if let Some(context) = &settings.context {
        full.push(format!("--context={context}"));
    }
    full.extend(args);
    let mut cmd = exec::Command::new("kubectl").args(full.iter());
    if let Some(text) = stdin {
        cmd = cmd.stdin(text.as_bytes().to_vec());
    }
    let out = cmd.run()?;
    if out.timed_out {
        return Err(ToolError::failed(format!(
            "`kubectl {}` timed out",
            full.join(" ")
        )));
    }
    if !out.success() {
        let code = out
            .exit_code
            .map_or_else(|| "a signal".to_string(), |c| format!("exit code {c}"));
        return Err(ToolError::failed(format!(
            "`kubectl {}` failed ({code}): {}",
            full.join(" "),
            out.stderr.trim()
        )));
    }
    Ok(out.stdout)
}

fn cap(mut text: String) -> String {
    if text.len() > MAX_OUTPUT {
        let mut end = MAX_OUTPUT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let total = text.len();
        text.truncate(end);
        text.push_str(&format!("\n[cut: {total} bytes in all]"));
    }
    text
}

#[derive(Deserialize)]
struct Get {
    kind: String,
    name: Option<String>,
    namespace: Option<String>,
    selector: Option<String>,
    #[serde(default)]
    all_namespaces: bool,
}

fn get(input: Get) -> Result<String, ToolError> {
    let settings = settings()?;
    check_kind(&input.kind)?;
    let mut args = vec!["get".to_string(), input.kind.clone()];
    if let Some(name) = &input.name {
        check_name("name", name)?;
        args.push(name.clone());
    }
    if input.all_namespaces {
        if input.namespace.is_some() {
            return Err(ToolError::invalid_input(
                "give either `namespace` or `all_namespaces`, not both",
            ));
        }
        args.push("--all-namespaces".into());
    } else {
        args.push(format!(
            "--namespace={}",
            namespace(input.namespace, &settings)?
        ));
    }
    if let Some(selector) = &input.selector {
        check_selector(selector)?;
        args.push(format!("--selector={selector}"));
    }
    args.push("--output=json".into());
    let json = kubectl(&settings, args, None)?;
    let value: Value = serde_json::from_str(&json)
        .map_err(|e| ToolError::failed(format!("kubectl printed no JSON: {e}")))?;
    Ok(cap(summarize(&value)))
}

/// One line per object: `kind/name` (namespace) and what matters about it.
pub fn summarize(value: &Value) -> String {
    let items: Vec<&Value> = match value["items"].as_array() {
        Some(items) => items.iter().collect(),
        None => vec![value],
    };
    if items.is_empty() {
        return "no resources found".to_string();
    }
    let mut out = Vec::new();
    for item in &items {
        let kind = item["kind"].as_str().unwrap_or("Object");
        let name = item["metadata"]["name"].as_str().unwrap_or("?");
        let mut line = format!("{kind}/{name}");
        if let Some(ns) = item["metadata"]["namespace"].as_str() {
            line.push_str(&format!(" (namespace {ns})"));
        }
        let details = match kind {
            "Pod" => pod_details(item),
            "Deployment" | "StatefulSet" | "ReplicaSet" => workload_details(item),
            "Service" => service_details(item),
            "Node" => node_details(item),
            _ => Vec::new(),
        };
        if !details.is_empty() {
            line.push_str(": ");
            line.push_str(&details.join(", "));
        }
        out.push(line);
    }
    out.push(format!("{} resource(s)", items.len()));
    out.join("\n")
}

fn pod_details(pod: &Value) -> Vec<String> {
    let statuses = pod["status"]["containerStatuses"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let total = pod["spec"]["containers"]
        .as_array()
        .map_or(statuses.len(), Vec::len);
    let ready = statuses.iter().filter(|s| s["ready"] == true).count();
    let restarts: u64 = statuses
        .iter()
        .map(|s| s["restartCount"].as_u64().unwrap_or(0))
        .sum();
    let mut phase = pod["status"]["phase"]
        .as_str()
        .unwrap_or("Unknown")
        .to_string();
    // A waiting reason (CrashLoopBackOff, ImagePullBackOff) says more than the phase.
    if let Some(reason) = statuses
        .iter()
        .find_map(|s| s["state"]["waiting"]["reason"].as_str())
    {
        phase = reason.to_string();
    }
    let mut details = vec![
        phase,
        format!("ready {ready}/{total}"),
        format!("restarts {restarts}"),
    ];
    if let Some(node) = pod["spec"]["nodeName"].as_str() {
        details.push(format!("node {node}"));
    }
    details
}

fn workload_details(item: &Value) -> Vec<String> {
    let wanted = item["spec"]["replicas"].as_u64().unwrap_or(0);
    let ready = item["status"]["readyReplicas"].as_u64().unwrap_or(0);
    let mut details = vec![format!("ready {ready}/{wanted}")];
    if let Some(updated) = item["status"]["updatedReplicas"].as_u64() {
        details.push(format!("up-to-date {updated}"));
    }
    let images: Vec<&str> = item["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["image"].as_str())
        .collect();
    if !images.is_empty() {
        details.push(format!("images {}", images.join(" ")));
    }
    details
}

fn service_details(item: &Value) -> Vec<String> {
    let mut details = vec![
        item["spec"]["type"]
            .as_str()
            .unwrap_or("ClusterIP")
            .to_string(),
    ];
    if let Some(ip) = item["spec"]["clusterIP"].as_str() {
        details.push(format!("cluster IP {ip}"));
    }
    let ports: Vec<String> = item["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            format!(
                "{}/{}",
                p["port"].as_u64().unwrap_or(0),
                p["protocol"].as_str().unwrap_or("TCP")
            )
        })
        .collect();
    if !ports.is_empty() {
        details.push(format!("ports {}", ports.join(" ")));
    }
    details
}

fn node_details(item: &Value) -> Vec<String> {
    let ready = item["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Ready")
        .and_then(|c| c["status"].as_str())
        .unwrap_or("Unknown");
    let mut details = vec![if ready == "True" { "Ready" } else { "NotReady" }.to_string()];
    if let Some(version) = item["status"]["nodeInfo"]["kubeletVersion"].as_str() {
        details.push(version.to_string());
    }
    details
}

#[derive(Deserialize)]
struct Describe {
    kind: String,
    name: String,
    namespace: Option<String>,
}

fn describe(input: Describe) -> Result<String, ToolError> {
    let settings = settings()?;
    check_kind(&input.kind)?;
    check_name("name", &input.name)?;
    let ns = namespace(input.namespace, &settings)?;
    let args = vec![
        "describe".to_string(),
        input.kind,
        input.name,
        format!("--namespace={ns}"),
    ];
    Ok(cap(kubectl(&settings, args, None)?))
}

#[derive(Deserialize)]
struct Logs {
    pod: String,
    namespace: Option<String>,
    container: Option<String>,
    tail: Option<u32>,
    #[serde(default)]
    previous: bool,
}

fn logs(input: Logs) -> Result<String, ToolError> {
    let settings = settings()?;
    check_name("pod", &input.pod)?;
    let ns = namespace(input.namespace, &settings)?;
    let tail = input.tail.unwrap_or(100);
    if !(1..=5000).contains(&tail) {
        return Err(ToolError::invalid_input(
            "`tail` must be between 1 and 5000",
        ));
    }
    let mut args = vec![
        "logs".to_string(),
        input.pod,
        format!("--namespace={ns}"),
        format!("--tail={tail}"),
    ];
    if let Some(container) = &input.container {
        check_label("container", container)?;
        args.push(format!("--container={container}"));
    }
    if input.previous {
        args.push("--previous".into());
    }
    let text = kubectl(&settings, args, None)?;
    if text.is_empty() {
        return Ok("(no log lines)".to_string());
    }
    Ok(cap(text))
}

#[derive(Deserialize)]
struct Apply {
    manifest: String,
    namespace: Option<String>,
    #[serde(default)]
    dry_run: bool,
}

fn apply(input: Apply) -> Result<String, ToolError> {
    let settings = settings()?;
    if input.manifest.trim().is_empty() {
        return Err(ToolError::invalid_input("`manifest` is empty"));
    }
    let ns = namespace(input.namespace, &settings)?;
    let mut args = vec![
        "apply".to_string(),
        "--filename=-".to_string(),
        format!("--namespace={ns}"),
    ];
    if input.dry_run {
        args.push("--dry-run=server".into());
    }
    let out = kubectl(&settings, args, Some(&input.manifest))?;
    Ok(cap(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_could_be_flags_are_refused() {
        assert!(check_label("namespace", "-n").is_err());
        assert!(check_label("namespace", "--all").is_err());
        assert!(check_name("name", "-oyaml").is_err());
        assert!(check_kind("--raw=/").is_err());
        assert!(check_selector("-l x").is_err());
        assert!(check_label("namespace", "prod-1").is_ok());
        assert!(check_kind("deployments.apps,pods").is_ok());
        assert!(check_selector("app=web,tier!=cache").is_ok());
    }
}

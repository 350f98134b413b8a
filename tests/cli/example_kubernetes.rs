//! The spec's `kubernetes` example (sdk-guest-examples/kubernetes), built
//! from source with `agent skill build` and run through the real host: the
//! kubectl tools against a fake `kubectl` first on PATH (it records its
//! arguments and prints real-format output), the refusals, the prompt
//! fragments the model sees in `agent run`, and the manifest scanner in
//! `agent security-audit`.

use std::path::PathBuf;
use std::sync::OnceLock;

use agent_tests::model_server::{ModelServer, Reply, Wire, jsonl, tokio_rt};
use agent_tests::{Sandbox, copy_tree, text, workspace, write_executable};
use agent_trust::SecretKey;
use serde_json::{Value, json};

use super::skills::system;
use super::{code, ok, sandbox, write};

/// A scripted model server with its own runtime.
pub(crate) struct Model {
    server: ModelServer,
    _rt: tokio::runtime::Runtime,
}

impl Model {
    pub(crate) fn start(script: Vec<Reply>) -> Model {
        let rt = tokio_rt();
        let server = rt.block_on(ModelServer::start(script)).expect("server");
        Model { server, _rt: rt }
    }

    pub(crate) fn url(&self) -> &str {
        self.server.url()
    }

    /// The recorded request bodies.
    pub(crate) fn bodies(&self) -> Vec<Value> {
        self.server.requests().into_iter().map(|r| r.body).collect()
    }
}

/// The arguments that point `agent run` (or `agent workflow run`) at `model`.
pub(crate) fn model_args(wire: Wire, model: &Model) -> Vec<String> {
    [
        "--provider",
        wire.name(),
        "--model",
        "test-model",
        "--base-url",
        model.url(),
    ]
    .map(str::to_string)
    .to_vec()
}

/// An example skill built once per test process: a copy of the crate in a
/// temporary workspace (the example is a member of the repository's
/// workspace, so its copy is a member of one too), built and signed by the
/// real binary with `key`.
pub(crate) struct Built {
    pub dir: PathBuf,
    pub key: SecretKey,
}

/// Where the examples' Rust builds go: one target directory for every
/// test process, so only the first build is cold.
fn target_dir() -> PathBuf {
    workspace().join("target").join("scaffold-guests")
}

/// Copies `sdk-guest-examples/<name>` into a new temporary workspace, runs
/// `agent skill build DIR --key KEYFILE` and `agent skill test DIR`, and
/// returns the built skill.
pub(crate) fn build_example(name: &str) -> Built {
    let root = tempfile::tempdir().expect("tempdir").keep();
    let dir = root.join(name);
    copy_tree(&workspace().join("sdk-guest-examples").join(name), &dir);
    std::fs::write(
        root.join("Cargo.toml"),
        format!(
            r#"[workspace]
resolver = "3"
members = ["{name}"]

[workspace.package]
version = "0.1.0"
edition = "2024"
rust-version = "1.95"
license = "Apache-2.0"

[workspace.dependencies]
agent-skill-sdk = {{ path = "{sdk}" }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"

[workspace.lints.rust]
unsafe_op_in_unsafe_fn = "deny"
"#,
            sdk = workspace().join("sdk-rust").display()
        ),
    )
    .expect("write workspace");
    // The repository's lock file: the same dependency versions as the
    // repository's own guest builds, resolved offline.
    std::fs::copy(workspace().join("Cargo.lock"), root.join("Cargo.lock")).expect("Cargo.lock");
    let key = SecretKey::generate().expect("key");
    let key_file = root.join("author.key");
    std::fs::write(&key_file, key.to_file_line()).expect("write key");

    let sb = sandbox();
    let out = sb
        .agent_cmd(&[
            "skill",
            "build",
            dir.to_str().expect("utf-8"),
            "--key",
            key_file.to_str().expect("utf-8"),
        ])
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_BUILD_TARGET")
        .output()
        .expect("running agent skill build");
    let stdout = ok(&out);
    let stem = name.replace('-', "_");
    let component = dir.join("dist").join(format!("{stem}.wasm"));
    assert!(
        stdout.contains(&format!("built {}", component.display())),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("signed with key {}", key.public().id())),
        "{stdout}"
    );
    assert!(
        stdout.contains("$ cargo build --target wasm32-wasip2 --release"),
        "{stdout}"
    );
    let bytes = std::fs::read(&component).expect("component");
    assert_eq!(&bytes[..4], b"\0asm", "not wasm");

    trust(&sb, &key);
    let out = sb.agent(&["skill", "test", dir.to_str().expect("utf-8")]);
    let stdout = ok(&out);
    assert!(stdout.contains(&format!("PASS  {name}")), "{stdout}");
    Built { dir, key }
}

/// Trusts the author's key in `sb`.
pub(crate) fn trust(sb: &Sandbox, key: &SecretKey) {
    let mut store =
        agent_trust::TrustStore::load(&sb.paths().trusted_keys_dir()).expect("trust store");
    store.trust(key.public(), "example author").expect("trust");
}

fn kubernetes() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| build_example("kubernetes"))
}

/// A sandbox trusting the example's author, with `[skills.config.kubernetes]`
/// and a fake `kubectl` in `bin/` that appends its arguments (one call per
/// line) to `kubectl.log` and prints what the real one prints.
struct Kube {
    sb: Sandbox,
    bin: tempfile::TempDir,
}

const PODS_JSON: &str = r#"{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web-7d4b9c6f5-x2k8p", "namespace": "staging", "labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "nginx:1.27"}, {"name": "proxy", "image": "envoyproxy/envoy:v1.31.0"}]},
            "status": {
                "phase": "Running",
                "containerStatuses": [
                    {"name": "web", "ready": true, "restartCount": 0, "state": {"running": {"startedAt": "2026-11-20T10:00:00Z"}}},
                    {"name": "proxy", "ready": false, "restartCount": 7, "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 5m0s"}}}
                ]
            }
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web-7d4b9c6f5-q9w2z", "namespace": "staging", "labels": {"app": "web"}},
            "spec": {"nodeName": "node-2", "containers": [{"name": "web", "image": "nginx:1.27"}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "web", "ready": true, "restartCount": 1, "state": {"running": {}}}]}
        }
    ],
    "kind": "List",
    "metadata": {"resourceVersion": ""}
}"#;

const DESCRIBE: &str = "Name:             web-7d4b9c6f5-x2k8p
Namespace:        staging
Node:             node-1/10.0.0.11
Status:           Running
Containers:
  proxy:
    State:          Waiting
      Reason:       CrashLoopBackOff
    Restart Count:  7
Events:
  Type     Reason   Age                From     Message
  ----     ------   ----               ----     -------
  Warning  BackOff  2m (x31 over 40m)  kubelet  Back-off restarting failed container proxy
";

const LOGS: &str = "[2026-11-22 10:00:01] config: listener 0.0.0.0:8080
[2026-11-22 10:00:02] error: upstream cluster `web` has no healthy hosts
";

impl Kube {
    fn new(config: &str) -> Kube {
        let sb = sandbox();
        trust(&sb, &kubernetes().key);
        let bin = tempfile::tempdir().expect("bin");
        let log = bin.path().join("kubectl.log");
        write(bin.path(), "pods.json", PODS_JSON);
        write(bin.path(), "describe.txt", DESCRIBE);
        write(bin.path(), "logs.txt", LOGS);
        let script = format!(
            r#"#!/bin/sh
# A fake kubectl: records its arguments, prints real-format output.
printf '%s\n' "$*" >> '{log}'
for a in "$@"; do
  case "$a" in
    get) cat '{dir}/pods.json'; exit 0 ;;
    describe) cat '{dir}/describe.txt'; exit 0 ;;
    logs) cat '{dir}/logs.txt'; exit 0 ;;
    apply)
      cat > '{dir}/applied.yaml'
      echo 'deployment.apps/web configured (server dry run)'
      exit 0 ;;
  esac
done
echo 'error: unknown command' >&2
exit 1
"#,
            log = log.display(),
            dir = bin.path().display()
        );
        write_executable(&bin.path().join("kubectl"), &script);
        write(&sb.paths().config_dir, "config.toml", config);
        Kube { sb, bin }
    }

    /// `agent` with the fake kubectl first on PATH.
    fn agent(&self, args: &[&str]) -> std::process::Output {
        self.cmd(args).output().expect("running agent")
    }

    fn cmd(&self, args: &[&str]) -> std::process::Command {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.bin.path().to_path_buf()];
        dirs.extend(std::env::split_paths(&path));
        let mut cmd = self.sb.agent_cmd(args);
        cmd.env("PATH", std::env::join_paths(dirs).expect("PATH"));
        cmd
    }

    /// `agent skill call <example> TOOL --input INPUT [extra…]`.
    fn call(&self, tool: &str, input: &Value, extra: &[&str]) -> std::process::Output {
        let dir = kubernetes().dir.to_str().expect("utf-8").to_string();
        let input = input.to_string();
        let mut args = vec!["skill", "call", &dir, tool, "--input", &input];
        args.extend_from_slice(extra);
        self.agent(&args)
    }

    /// The kubectl command lines run so far.
    fn runs(&self) -> Vec<String> {
        std::fs::read_to_string(self.bin.path().join("kubectl.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

const CONFIG: &str =
    "[skills.config.kubernetes]\ndefault_namespace = \"staging\"\ncontext = \"kind-dev\"\n";
const ALLOW: [&str; 2] = ["--allow", "shell:exec:kubectl"];

#[test]
fn kubernetes_tools_run_kubectl_with_checked_arguments() {
    let k = Kube::new(CONFIG);

    // get: the namespace and context from the config, JSON summarised.
    let out = k.call(
        "kubectl_get",
        &json!({"kind": "pods", "selector": "app=web"}),
        &ALLOW,
    );
    assert_eq!(
        ok(&out),
        "Pod/web-7d4b9c6f5-x2k8p (namespace staging): CrashLoopBackOff, ready 1/2, restarts 7, node node-1\n\
         Pod/web-7d4b9c6f5-q9w2z (namespace staging): Running, ready 1/1, restarts 1, node node-2\n\
         2 resource(s)\n"
    );
    assert_eq!(
        k.runs(),
        ["--context=kind-dev get pods --namespace=staging --selector=app=web --output=json"]
    );

    // describe and logs: kubectl's text as it is.
    let out = k.call(
        "kubectl_describe",
        &json!({"kind": "pod", "name": "web-7d4b9c6f5-x2k8p", "namespace": "prod"}),
        &ALLOW,
    );
    assert_eq!(ok(&out), format!("{DESCRIBE}\n"));
    let out = k.call(
        "kubectl_logs",
        &json!({"pod": "web-7d4b9c6f5-x2k8p", "container": "proxy", "tail": 50, "previous": true}),
        &ALLOW,
    );
    assert_eq!(ok(&out), format!("{LOGS}\n"));
    assert_eq!(
        k.runs()[1..],
        [
            "--context=kind-dev describe pod web-7d4b9c6f5-x2k8p --namespace=prod",
            "--context=kind-dev logs web-7d4b9c6f5-x2k8p --namespace=staging --tail=50 --container=proxy --previous",
        ]
    );

    // Values that would become flags are refused before kubectl runs.
    for (tool, input, message) in [
        (
            "kubectl_get",
            json!({"kind": "pods", "namespace": "-A"}),
            "namespace `-A` is not a valid name",
        ),
        (
            "kubectl_get",
            json!({"kind": "--raw=/api", "name": "x"}),
            "kind `--raw=/api` is not a resource kind",
        ),
        (
            "kubectl_logs",
            json!({"pod": "--all-containers"}),
            "pod `--all-containers` is not a valid resource name",
        ),
        (
            "kubectl_get",
            json!({"kind": "pods", "selector": "-lapp"}),
            "selector `-lapp` is not a label selector",
        ),
    ] {
        let out = k.call(tool, &input, &ALLOW);
        let (_, stderr) = text(&out);
        assert_eq!(code(&out), 1, "{input}: {stderr}");
        assert!(stderr.contains("invalid input"), "{stderr}");
        assert!(stderr.contains(message), "{input}: {stderr}");
    }
    assert_eq!(k.runs().len(), 3, "a refused call ran kubectl");

    // No shell:exec grant: denied (exit 4), kubectl never runs.
    let out = k.call("kubectl_get", &json!({"kind": "pods"}), &[]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 4, "{stderr}");
    assert!(
        stderr.contains("--allow kubernetes/shell:exec:kubectl"),
        "{stderr}"
    );
    assert_eq!(k.runs().len(), 3);

    // A failing kubectl is a tool error with its message.
    let bad = Kube::new("[skills.config.kubernetes]\ndefault_namespace = \"staging\"\n");
    std::fs::write(bad.bin.path().join("pods.json"), "not json").expect("write");
    let out = bad.call("kubectl_get", &json!({"kind": "pods"}), &ALLOW);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(stderr.contains("kubectl printed no JSON"), "{stderr}");
    assert_eq!(
        bad.runs(),
        ["get pods --namespace=staging --output=json"],
        "no context configured: no --context"
    );
}

/// The JSON events of `agent run --output jsonl`.
fn events(out: &std::process::Output) -> Vec<Value> {
    jsonl(&ok(out))
}

#[test]
fn kubernetes_in_agent_run_prompt_fragments_and_apply_approval() {
    let wire = Wire::Anthropic;
    let dir = kubernetes().dir.to_str().expect("utf-8").to_string();
    let manifest = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n";
    let apply = json!({"manifest": manifest, "dry_run": true});

    // Headless (CI) with no grant: kubectl_apply needs approval and is not run.
    let k = Kube::new(CONFIG);
    let model = Model::start(vec![
        wire.tool("call_1", "kubectl_apply", &apply),
        wire.answer("I could not apply it."),
    ]);
    let args = [
        "--prompt",
        "Apply the web deployment on kubernetes",
        "--skills",
        &dir,
    ];
    let evs = events(&run_agent_in(&k, wire, &model, &args));
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 2, "{evs:?}");
    let prompt = system(&bodies[0]);
    assert!(
        prompt.contains(
            "The default namespace is `staging`: the kubectl tools use it when no namespace is given. \
             Every kubectl call uses the context `kind-dev`."
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains("Before kubectl_apply, run it with `dry_run: true`"),
        "{prompt}"
    );
    let approval = evs
        .iter()
        .find(|e| e["type"] == "approval")
        .expect("an approval event");
    assert_eq!(approval["tool"], "kubectl_apply", "{approval}");
    assert_eq!(approval["approved"], false, "{approval}");
    let result = evs
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a tool result");
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result["output"]
            .as_str()
            .unwrap_or_default()
            .starts_with("tool `kubectl_apply` was not run: not approved"),
        "{result}"
    );
    assert!(k.runs().is_empty(), "kubectl ran: {:?}", k.runs());
    assert!(!k.bin.path().join("applied.yaml").exists());

    // Granted (`--allow shell:exec:kubectl` approves the skill's tools in CI):
    // get, then the server-side dry run with the manifest on kubectl's stdin.
    let k = Kube::new(CONFIG);
    let model = Model::start(vec![
        wire.tool("call_1", "kubectl_get", &json!({"kind": "pods"})),
        wire.tool("call_2", "kubectl_apply", &apply),
        wire.answer("One pod is crash-looping; the dry run of the fix passed."),
    ]);
    let mut args = args.to_vec();
    args.extend_from_slice(&ALLOW);
    let evs = events(&run_agent_in(&k, wire, &model, &args));
    let results: Vec<&Value> = evs.iter().filter(|e| e["type"] == "tool_result").collect();
    assert_eq!(results.len(), 2, "{evs:?}");
    assert_eq!(results[0]["is_error"], false, "{}", results[0]);
    assert!(
        results[0]["output"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Pod/web-7d4b9c6f5-x2k8p (namespace staging): CrashLoopBackOff"),
        "{}",
        results[0]
    );
    assert_eq!(results[1]["is_error"], false, "{}", results[1]);
    assert_eq!(
        results[1]["output"],
        "deployment.apps/web configured (server dry run)\n"
    );
    assert_eq!(
        k.runs(),
        [
            "--context=kind-dev get pods --namespace=staging --output=json",
            "--context=kind-dev apply --filename=- --namespace=staging --dry-run=server",
        ]
    );
    assert_eq!(
        std::fs::read_to_string(k.bin.path().join("applied.yaml")).expect("applied"),
        manifest
    );
    // The model saw the summary, not kubectl's JSON.
    let told = bodies_text(&model.bodies()[1]);
    assert!(told.contains("ready 1/2, restarts 7"), "{told}");
    assert!(!told.contains("containerStatuses"), "{told}");
}

fn bodies_text(body: &Value) -> String {
    body.to_string()
}

/// `agent run --output jsonl` against `model`, the fake kubectl first on PATH.
fn run_agent_in(k: &Kube, wire: Wire, model: &Model, extra: &[&str]) -> std::process::Output {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(model_args(wire, model));
    args.extend(["--timeout", "120s", "--output", "jsonl"].map(str::to_string));
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    k.cmd(&args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("running agent")
}

const MANIFEST: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:latest
          securityContext:
            allowPrivilegeEscalation: true
            capabilities:
              add:
                - NET_BIND_SERVICE
                - SYS_ADMIN
          env:
            - name: DB_PASSWORD
              value: \"hunter2\"
            - name: API_TOKEN
              valueFrom:
                secretKeyRef: {name: api, key: token}
            - name: LOG_LEVEL
              value: debug
        - name: sidecar
          image: registry.example.com:5000/team/agent:2.1
          securityContext:
            runAsNonRoot: true
      volumes:
        - name: docker
          hostPath:
            path: /var/run/docker.sock
---
apiVersion: v1
kind: Pod
metadata:
  name: safe
spec:
  securityContext:
    runAsNonRoot: true
  containers:
    - name: app
      image: ghcr.io/acme/app@sha256:0123456789abcdef
      securityContext:
        capabilities:
          add: [\"NET_ADMIN\"]
";

#[test]
fn kubernetes_scanner_reports_manifest_findings_with_exact_lines() {
    let sb = sandbox();
    trust(&sb, &kubernetes().key);
    write(sb.project.path(), "k8s/web.yaml", MANIFEST);
    let dir = kubernetes().dir.to_str().expect("utf-8").to_string();
    let out = sb.agent(&[
        "security-audit",
        "--skills",
        &dir,
        "--output",
        "json",
        "--fail-on",
        "none",
    ]);
    let report: Value = serde_json::from_str(&ok(&out)).expect("json report");
    let findings = report["findings"].as_array().expect("findings");
    let mut ours: Vec<(String, String, u64, u64)> = findings
        .iter()
        .filter(|f| f["scanner"] == "kubernetes/k8s-manifest-scanner")
        .map(|f| {
            (
                f["rule_id"].as_str().unwrap_or_default().to_string(),
                f["location"]["file"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                f["location"]["start_line"].as_u64().unwrap_or(0),
                f["location"]["start_column"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    ours.sort_by_key(|f| (f.2, f.0.clone()));
    let at = |rule: &str, line: u64, column: u64| {
        (rule.to_string(), "k8s/web.yaml".to_string(), line, column)
    };
    assert_eq!(
        ours,
        [
            at("KUBE-RUN-AS-NON-ROOT-MISSING", 9, 11),
            at("KUBE-IMAGE-LATEST", 10, 11),
            at("KUBE-PRIVILEGE-ESCALATION", 12, 13),
            at("KUBE-DANGEROUS-CAPABILITY", 16, 19),
            at("KUBE-SECRET-IN-ENV", 19, 15),
            at("KUBE-RUNTIME-SOCKET", 32, 13),
            at("KUBE-DANGEROUS-CAPABILITY", 46, 11),
        ],
        "{findings:#?}"
    );
    let cap = findings
        .iter()
        .find(|f| f["rule_id"] == "KUBE-DANGEROUS-CAPABILITY")
        .expect("capability finding");
    assert_eq!(cap["cwe"], "CWE-250");
    assert_eq!(cap["severity"], "high");
    assert_eq!(cap["evidence"], "- SYS_ADMIN");
    let socket = findings
        .iter()
        .find(|f| f["rule_id"] == "KUBE-RUNTIME-SOCKET")
        .expect("socket finding");
    assert_eq!(socket["severity"], "critical");
    // Complementary to security-base: its hostPath finding is there, under its own id.
    assert!(
        findings
            .iter()
            .any(|f| f["rule_id"] == "K8S-HOSTPATH" && f["location"]["file"] == "k8s/web.yaml"),
        "{findings:#?}"
    );
}

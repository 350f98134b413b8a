//! The spec's `kubernetes` skill: a tool, prompt and security-rule skill in
//! one component.
//!
//! - Tools (`tool` export): `kubectl_get`, `kubectl_describe`,
//!   `kubectl_logs` and `kubectl_apply` (approval required; server-side dry
//!   run on request). They run `kubectl` only through the `exec` import
//!   (`shell:exec`, `exec: [kubectl]`). Every value that reaches kubectl's
//!   command line is checked first: names, namespaces and kinds follow
//!   Kubernetes' own syntax, so nothing can start with `-` and become a flag.
//! - Prompt (`prompt` export): the cluster's conventions from
//!   `[skills.config.kubernetes]` (`default_namespace`, `context`) and how to
//!   operate it safely.
//! - Scanner (`scanner` export, `k8s-manifest-scanner`): manifest checks
//!   that complement security-base's `config` scanner (which already reports
//!   privileged containers, hostPath, host namespaces, `runAsUser: 0` and
//!   missing limits); rule ids here start with `KUBE-`.

mod manifests;
mod prompt;
mod tools;

use manifests::Scanner;
use prompt::Prompt;

agent_skill_sdk::export_tools!(tools::tools);
agent_skill_sdk::wit::prompt_skill::export!(Prompt);
agent_skill_sdk::wit::scanner_skill::export!(Scanner);

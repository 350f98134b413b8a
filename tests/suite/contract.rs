//! The versioned `agent:skill` contract (docs/wit-reference.md, "Contract
//! versions"): one host links 0.1.0 (frozen in `wit/0.1.0/`, served through
//! an adapter) and 0.2.0 (`wit/`), side by side, in one runtime.
//!
//! - A 0.1.0 component straight from `registry-index/` — the published
//!   `rust-hello` artifact with its real signature by the index key — loads
//!   and runs next to a 0.2.0 hook-only component (`types: [hook]`), which
//!   rewrites the 0.1.0 tool's result where hooks run (`HookSet`).
//! - `project.mount` (new in 0.2.0) answers `read-only` or `read-write`
//!   according to the call's file intent, and `none` without a grant.
//! - A component built against a version this host does not link is
//!   refused at load, and the message names the versions it supports; so
//!   is one that mixes two supported versions.

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_core::hooks::HookSet;
use agent_runtime::contract::{self, V0_1_0, V0_2_0};
use agent_runtime::{
    HookEvent, HookPhase, LoadError, Mismatch, Origin, Signer, Skill, SkillPackage, TrustPolicy,
    WitToolCall, WitToolResult,
};
use agent_trust::TrustStore;
use serde_json::json;

use crate::common::{Harness, guest, hostile};

/// The index key that signed every artifact of `registry-index/`.
const INDEX_KEY: &str = "90dbe1d66cd053ff";

/// Unpacks `registry-index/artifacts/<artifact>.tar.gz` (as published) into
/// a fresh directory under the harness's home and returns it.
fn unpack_published(h: &Harness, artifact: &str) -> PathBuf {
    let tarball = agent_tests::workspace()
        .join("registry-index")
        .join("artifacts")
        .join(format!("{artifact}.tar.gz"));
    let dir = h.sandbox.home.path().join("published").join(artifact);
    std::fs::create_dir_all(&dir).expect("creating the unpack directory");
    let status = Command::new("tar")
        .arg("xzf")
        .arg(&tarball)
        .arg("-C")
        .arg(&dir)
        .status()
        .expect("running tar");
    assert!(status.success(), "unpacking {}", tarball.display());
    dir
}

/// The harness's trust policy plus the index key, as after
/// `agent keys trust registry-index/keys/<id>.pub`.
fn trusting_the_index(h: &Harness) -> TrustPolicy {
    let keys = h.sandbox.paths().trusted_keys_dir();
    let public = agent_tests::workspace()
        .join("registry-index")
        .join("keys")
        .join(format!("{INDEX_KEY}.pub"));
    std::fs::copy(&public, keys.join(format!("{INDEX_KEY}.pub"))).expect("trusting the index key");
    TrustPolicy {
        store: TrustStore::load(&keys).expect("trust store"),
        builtin_key: None,
        allow_unsigned: false,
    }
}

fn load_dir(h: &Harness, dir: &Path, origin: Origin, trust: &TrustPolicy) -> Skill {
    let pkg = SkillPackage::from_dir(dir, origin).expect("package");
    h.runtime.load(pkg, trust).expect("the skill loads")
}

/// The 0.2.0 hook-only test component under `name`, signed by the harness
/// key: a manifest of type `hook` and nothing else (no prompt file, no
/// workaround).
fn load_hook_only(h: &Harness, name: &str) -> Skill {
    let dir = h.sandbox.home.path().join("skill-src").join(name);
    let manifest = format!(
        "name: {name}\nversion: 0.2.0\ndescription: hook-only skill {name}\ntypes: [hook]\nimplementation:\n  component: skill.wasm\n"
    );
    agent_tests::write_skill(&dir, &manifest, &guest("guest-hook-only"), Some(&h.key));
    load_dir(h, &dir, Origin::Path, &h.trust)
}

#[tokio::test]
async fn a_published_0_1_0_tool_and_a_0_2_0_hook_only_skill_run_under_one_host() {
    let h = Harness::new(&[]);
    let trust = trusting_the_index(&h);

    // The published 0.1.0 component, verified with its real signature.
    let dir = unpack_published(&h, "rust-hello-0.1.0");
    let hello = load_dir(&h, &dir, Origin::User, &trust);
    let info = hello.info.as_ref().expect("a component");
    println!(
        "rust-hello: contract {:?}, imports {:?}",
        info.contract,
        info.imports.iter().map(|i| &i.name).collect::<Vec<_>>()
    );
    assert_eq!(info.contract, Some(V0_1_0), "built against 0.1.0");
    assert!(
        info.imports
            .iter()
            .any(|i| i.name == V0_1_0.interface("project")),
        "it imports the 0.1.0 project interface: {:?}",
        info.imports
    );
    assert_eq!(hello.signer, Signer::Key(INDEX_KEY.to_string()));

    // Its tools run through the adapter: `greet` is pure, `project_summary`
    // calls the 0.1.0 `project` import, answered by the 0.2.0 host.
    let greeting = h.call_ok(&hello, "greet", json!({"name": "world"})).await;
    assert!(greeting.contains("Hello, world!"), "{greeting}");
    let project_name = h
        .project()
        .file_name()
        .and_then(|n| n.to_str())
        .expect("project name")
        .to_string();
    let summary = h.call_ok(&hello, "project_summary", json!({})).await;
    println!("project_summary through the adapter: {summary}");
    assert!(summary.contains(&project_name), "{summary}");

    // The 0.2.0 hook-only skill, in the same runtime.
    let hook = load_hook_only(&h, "watcher");
    let hook_info = hook.info.as_ref().expect("a component");
    assert_eq!(hook_info.contract, Some(V0_2_0));
    assert!(hook.exports(agent_runtime::ExportKind::Hooks));
    let skills = vec![hook];
    let (set, problems) = HookSet::load(&h.runtime, &h.ctx, &skills, &[0]).await;
    assert!(problems.is_empty(), "{problems:?}");
    assert!(set.listens(HookPhase::OnAfterToolResult));

    // Where the agent loop runs hooks: after the 0.1.0 tool's result.
    let out = set
        .dispatch(
            &h.runtime,
            &h.ctx,
            &skills,
            HookEvent {
                phase: HookPhase::OnAfterToolResult,
                skill: "rust-hello".into(),
                conversation: Vec::new(),
                tool_call: Some(WitToolCall {
                    id: "call-1".into(),
                    tool: "greet".into(),
                    input: json!({"name": "world"}).to_string(),
                }),
                tool_result: Some(WitToolResult {
                    id: "call-1".into(),
                    output: greeting.clone(),
                    is_error: false,
                }),
                response: None,
                findings: Vec::new(),
            },
        )
        .await;
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let rewritten = out.tool_result.expect("the hook changed the result").output;
    println!("after the hook: {rewritten}");
    assert_eq!(
        rewritten,
        format!("{greeting} [seen by hook-only, project mount: none]")
    );
}

#[tokio::test]
async fn the_mount_query_answers_by_the_calls_file_intent() {
    let h = Harness::new(&["file:read", "file:write"]);
    // Declared `requires_approval: false` (the default of a declared tool):
    // the call may only read, so the mount is read-only.
    let reader = h
        .load_hostile(
            "mount-reader",
            "permissions: [file:read, file:write, shell:exec]\ntools:\n  - name: mount\n    description: how the project is mounted\n",
        )
        .expect("load");
    assert_eq!(h.call_ok(&reader, "mount", json!({})).await, "read-only");
    // Not declared, so it needs approval: the call may write, file:write is
    // granted, the mount is read-write.
    let writer = h
        .load_hostile(
            "mount-writer",
            "permissions: [file:read, file:write, shell:exec]\n",
        )
        .expect("load");
    assert_eq!(h.call_ok(&writer, "mount", json!({})).await, "read-write");

    // Without any file permission granted there is no mount at all.
    let bare = Harness::new(&[]);
    let nothing = bare
        .load_hostile("mount-bare", "permissions: [file:read, shell:exec]\n")
        .expect("load");
    assert_eq!(bare.call_ok(&nothing, "mount", json!({})).await, "none");
}

/// `component` with every `agent:skill/<iface>@<from>` name renamed to
/// version `to` (same length, so the binary stays valid): what a component
/// built against another contract version looks like to the host.
fn renamed_contract(component: &[u8], from: &str, to: &str) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let from = format!("@{from}");
    let to = format!("@{to}");
    let mut bytes = component.to_vec();
    let prefix = format!("{}/", contract::PACKAGE);
    let mut at = 0;
    let mut renamed = 0;
    while let Some(i) = find(&bytes[at..], prefix.as_bytes()) {
        let start = at + i;
        // The interface name runs to the `@`.
        let end = start
            + bytes[start..]
                .iter()
                .take(64)
                .position(|b| *b == b'@')
                .unwrap_or(0);
        if end > start && bytes[end..].starts_with(from.as_bytes()) {
            bytes[end..end + to.len()].copy_from_slice(to.as_bytes());
            renamed += 1;
        }
        at = start + prefix.len();
    }
    assert!(renamed > 0, "no agent:skill name found");
    bytes
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[tokio::test]
async fn a_component_of_an_unknown_contract_version_is_refused_naming_the_supported_ones() {
    let h = Harness::new(&["shell:exec"]);
    for version in ["0.3.0", "0.0.9"] {
        let component = renamed_contract(&hostile(), V0_2_0.as_str(), version);
        let name = format!("future-{}", version.replace('.', "-"));
        let err = h
            .load_guest(
                &component,
                &name,
                "permissions: [shell:exec]\nexec: [echo]\n",
            )
            .expect_err("an unknown contract version must be refused");
        let message = err.to_string();
        println!("{version}: {message}");
        let LoadError::Mismatch { problems, .. } = &err else {
            panic!("expected a mismatch, got {err:?}")
        };
        let exec = format!("{}/exec@{version}", contract::PACKAGE);
        let why = format!(
            "built against agent:skill@{version}, which this host does not link; it supports agent:skill@0.1.0, agent:skill@0.2.0 (rebuild the skill against one of them)"
        );
        assert!(
            problems.contains(&Mismatch::UnknownImport {
                import: exec.clone(),
                reason: why.clone(),
            }),
            "{problems:?}"
        );
        // Its `tool` export is of that version too: not recognised, so the
        // declared type has nothing serving it.
        assert!(
            problems.contains(&Mismatch::UnknownExport {
                export: format!("{}/tool@{version}", contract::PACKAGE),
                reason: why,
            }),
            "{problems:?}"
        );
        assert!(message.contains(&format!("`{exec}`")), "{message}");
        assert!(message.contains(&contract::supported_list()), "{message}");
        // Nothing ran.
        assert!(h.audit_of(&name).is_empty());
    }
    // The same bytes with the contract left alone load: only the version
    // made the difference.
    h.load_guest(
        &hostile(),
        "today",
        "permissions: [shell:exec]\nexec: [echo]\n",
    )
    .expect("the unrenamed component loads");
}

/// A component is bound to one contract: one whose `exec` import says 0.1.0
/// while the rest says 0.2.0 (each version on its own would load) is
/// refused, naming both versions.
#[tokio::test]
async fn a_component_mixing_two_supported_versions_is_refused() {
    let h = Harness::new(&["shell:exec"]);
    let exec_now = V0_2_0.interface("exec");
    let exec_then = V0_1_0.interface("exec");
    let mut component = hostile().to_vec();
    let at = find(&component, exec_now.as_bytes()).expect("an exec import");
    component[at..at + exec_then.len()].copy_from_slice(exec_then.as_bytes());
    let err = h
        .load_guest(
            &component,
            "mixed",
            "permissions: [shell:exec]\nexec: [echo]\n",
        )
        .expect_err("a mixed component must be refused");
    let message = err.to_string();
    println!("{message}");
    let LoadError::Mismatch { problems, .. } = &err else {
        panic!("expected a mismatch, got {err:?}")
    };
    assert!(
        problems.contains(&Mismatch::MixedContract {
            versions: "agent:skill@0.1.0, agent:skill@0.2.0".into(),
        }),
        "{problems:?}"
    );
    assert!(
        message.contains(
            "the component mixes contract versions (agent:skill@0.1.0, agent:skill@0.2.0); build it against one version of agent:skill"
        ),
        "{message}"
    );
    assert!(h.audit_of("mixed").is_empty());
}

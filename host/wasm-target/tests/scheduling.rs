//! Issue 15: on a machine without the wasm32-wasip2 target and without
//! rustup, the README's `cargo run --release -p agent -- skill list` failed
//! only minutes in. The check itself (this crate's build script) takes
//! milliseconds; it ran late because cargo starts, among the units ready to
//! build, the one the most other units depend on (its priority is the number
//! of units that depend on it, directly or not), and only `agent-builtins`
//! depended on this crate: the check waited behind wasmtime and Cranelift.
//!
//! Every workspace crate the `agent` binary is built from now depends on
//! `agent-wasm-target`, directly or through another workspace crate, so the
//! check outranks everything but the common base crates (serde, syn,
//! tokio, ...). A crate added without that dependency (directly or through
//! `agent-bounded`, `agent-trust`, `agent-protocol`, `agent-syntax` or
//! `agent-tls`) fails this test, naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The workspace's packages and, for each, its normal dependencies that
/// are workspace packages too (from `cargo metadata --no-deps`).
fn workspace_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata json");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().expect("name").to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .expect("dependencies")
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().expect("dep name").to_string())
                .filter(|n| names.contains(n))
                .collect();
            (p["name"].as_str().expect("name").to_string(), deps)
        })
        .collect()
}

fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut stack = vec![from.to_string()];
    let mut seen = BTreeSet::new();
    while let Some(n) = stack.pop() {
        if !seen.insert(n.clone()) {
            continue;
        }
        for d in graph.get(&n).into_iter().flatten() {
            if d == to {
                return true;
            }
            stack.push(d.clone());
        }
    }
    false
}

#[test]
fn every_workspace_crate_of_the_binary_depends_on_the_target_check() {
    let graph = workspace_graph();
    // The workspace crates the binary is built from: `agent` and what it
    // reaches through normal dependencies.
    let mut in_binary = BTreeSet::new();
    let mut stack = vec!["agent".to_string()];
    while let Some(n) = stack.pop() {
        if in_binary.insert(n.clone()) {
            stack.extend(graph.get(&n).into_iter().flatten().cloned());
        }
    }
    assert!(in_binary.len() > 10, "the agent's graph: {in_binary:?}");
    let missing: Vec<&String> = in_binary
        .iter()
        .filter(|n| n.as_str() != "agent-wasm-target")
        .filter(|n| !reaches(&graph, n, "agent-wasm-target"))
        .collect();
    assert!(
        missing.is_empty(),
        "these crates of the agent binary do not depend on agent-wasm-target, so cargo \
         may schedule the wasm32-wasip2 check minutes into a build: add \
         `agent-wasm-target.workspace = true` to their [dependencies]: {missing:?}"
    );
}

//! agent-tui is a frontend of the protocol and nothing more: its normal
//! dependencies (direct and transitive) include agent-protocol and none of
//! the agent's own machinery — no core, policy, manifest or runtime.

use std::process::Command;

#[test]
fn the_interface_depends_on_the_protocol_not_on_the_agent() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "-p",
            "agent-tui",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("cargo tree");
    let tree = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let crates: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(crates.contains(&"agent-protocol"), "{tree}");
    for forbidden in [
        "agent-core",
        "agent-policy",
        "agent-manifest",
        "agent-runtime",
        "agent-providers",
        "agent-store",
        "agent-config",
        "agent-registry",
    ] {
        assert!(
            !crates.contains(&forbidden),
            "agent-tui depends on {forbidden}:\n{tree}"
        );
    }
}

//! Builds the built-in skills as wasm32-wasip2 components, signs them with a
//! key generated for this build, and leaves them in OUT_DIR for embedding.
//!
//! The private half of the key exists only in this process: it is never
//! written anywhere, so nothing but this build can sign a "built-in".

use std::path::{Path, PathBuf};
use std::process::Command;

/// (skill directory under builtin-skills/, cargo package, wasm file stem)
const BUILTINS: &[(&str, &str, &str)] = &[
    ("core-tools", "core-tools", "core_tools"),
    ("git", "git-skill", "git_skill"),
    ("security-base", "security-base", "security_base"),
];

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR")?);
    let workspace = manifest_dir
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot find the workspace root")?
        .to_path_buf();
    let out_dir = PathBuf::from(env("OUT_DIR")?);
    let guest_target = workspace.join("target").join("guests");

    for watched in ["wit", "sdk-rust/src", "sdk-rust/Cargo.toml", "Cargo.lock"] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    for (dir, _, _) in BUILTINS {
        let d = workspace.join("builtin-skills").join(dir);
        for watched in ["src", "Cargo.toml", "SKILL.yaml", "schemas"] {
            println!("cargo:rerun-if-changed={}", d.join(watched).display());
        }
    }

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&workspace)
        .args([
            "build",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "guest",
            "--target-dir",
        ])
        .arg(&guest_target);
    for (_, package, _) in BUILTINS {
        cmd.args(["-p", package]);
    }
    // Do not let this crate's own build settings leak into the guest build.
    for var in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("running cargo for the built-in skills: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building the built-in skills failed ({status}); is the wasm32-wasip2 target installed? (`rustup target add wasm32-wasip2`)"
        ));
    }

    let key = agent_trust::SecretKey::generate().map_err(|e| e.to_string())?;
    for (_, _, stem) in BUILTINS {
        let built = guest_target
            .join("wasm32-wasip2")
            .join("guest")
            .join(format!("{stem}.wasm"));
        let bytes = std::fs::read(&built).map_err(|e| format!("{}: {e}", built.display()))?;
        let signed = agent_trust::sign(&bytes, key.signing_key()).map_err(|e| e.to_string())?;
        let dest = out_dir.join(format!("{stem}.wasm"));
        std::fs::write(&dest, signed).map_err(|e| format!("{}: {e}", dest.display()))?;
    }
    std::fs::write(out_dir.join("builtin.pub"), key.public().to_base64())
        .map_err(|e| format!("writing the built-in public key: {e}"))?;
    Ok(())
}

fn env(name: &str) -> Result<String, String> {
    std::env::var(name).map_err(|_| format!("{name} is not set"))
}

//! Rust skills: `cargo build --target wasm32-wasip2 --release` in the skill
//! directory. Rust `wasm32-wasip2` builds come out as components directly.
//!
//! The crate may stand alone (what `agent skill create` makes: its own
//! `[workspace]`) or be a member of a workspace, whose target directory is
//! elsewhere: cargo's JSON messages name the `.wasm` it produced, so the
//! build never guesses the target directory or the profile's output path.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{Ctx, Missing, find_program};

const TARGET: &str = "wasm32-wasip2";

pub fn toolchain(dir: &Path) -> Vec<Missing> {
    if find_program("cargo").is_none() {
        return vec![Missing {
            what: "Rust toolchain (`cargo`)".into(),
            install: "curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh".into(),
        }];
    }
    let mut missing = Vec::new();
    if !target_installed(dir) {
        missing.push(Missing {
            what: format!("Rust target `{TARGET}`"),
            install: format!("rustup target add {TARGET}"),
        });
    }
    missing
}

/// Whether the toolchain that builds in `dir` (rustup honours the
/// directory's `rust-toolchain.toml`) has the target's standard library.
fn target_installed(dir: &Path) -> bool {
    let Some(rustc) = find_program("rustc") else {
        return false;
    };
    let output = Command::new(rustc)
        .args(["--print", "sysroot"])
        .current_dir(dir)
        .stderr(Stdio::null())
        .output();
    match output {
        Ok(out) if out.status.success() => {
            let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
            Path::new(&sysroot)
                .join("lib/rustlib")
                .join(TARGET)
                .is_dir()
        }
        _ => false,
    }
}

pub fn build(ctx: &Ctx) -> Result<()> {
    let mut cmd = Command::new("cargo");
    cmd.current_dir(ctx.dir).args([
        "build",
        "--target",
        TARGET,
        "--release",
        "--message-format=json-render-diagnostics",
    ]);
    let line =
        "cargo build --target wasm32-wasip2 --release --message-format=json-render-diagnostics";
    println!("  $ {line}");
    // stdout carries the JSON messages; diagnostics (rendered) and cargo's
    // progress go to stderr, straight to the user.
    let output = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .context("could not start `cargo`")?;
    let messages = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        bail!("`{line}` failed ({})", output.status);
    }
    let wasm = component_artifact(&messages, ctx.dir)
        .with_context(|| format!("skill `{}`", ctx.manifest.name))?;
    std::fs::copy(&wasm, &ctx.out)
        .with_context(|| format!("copying {} to {}", wasm.display(), ctx.out.display()))?;
    Ok(())
}

/// The `.wasm` of the `cdylib` of the package in `dir`, from cargo's
/// `compiler-artifact` messages.
fn component_artifact(messages: &str, dir: &Path) -> Result<PathBuf> {
    let manifest = dir.join("Cargo.toml");
    let manifest = manifest.canonicalize().unwrap_or(manifest);
    let mut found = None;
    for line in messages.lines() {
        let Ok(message) =
            agent_bounded::parse_json::<Value>(line, "cargo", agent_bounded::Limits::DATA)
        else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let is_cdylib = message["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|k| k == "cdylib"));
        if !is_cdylib {
            continue;
        }
        let wasm = message["filenames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|f| f.ends_with(".wasm"));
        let Some(wasm) = wasm else { continue };
        let ours = message["manifest_path"]
            .as_str()
            .map(|p| Path::new(p) == manifest)
            .unwrap_or(false);
        if ours || found.is_none() {
            found = Some((PathBuf::from(wasm), ours));
        }
        if ours {
            break;
        }
    }
    match found {
        Some((wasm, _)) => Ok(wasm),
        None => bail!(
            "cargo built no `.wasm` for {}: the crate must be a library with \
             `crate-type = [\"cdylib\"]` under [lib]",
            dir.join("Cargo.toml").display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_the_cdylib_wasm_of_the_package_in_dir() {
        let dir = Path::new("/w/skills/k8s");
        let messages = [
            r#"{"reason":"compiler-artifact","manifest_path":"/w/sdk/Cargo.toml","target":{"kind":["lib"]},"filenames":["/w/target/wasm32-wasip2/release/libsdk.rlib"]}"#,
            r#"{"reason":"compiler-message","message":{"rendered":"warning"}}"#,
            r#"{"reason":"compiler-artifact","manifest_path":"/w/skills/k8s/Cargo.toml","target":{"kind":["cdylib"]},"filenames":["/w/target/wasm32-wasip2/release/k8s.wasm"]}"#,
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        assert_eq!(
            component_artifact(&messages, dir).unwrap(),
            PathBuf::from("/w/target/wasm32-wasip2/release/k8s.wasm")
        );
    }

    #[test]
    fn a_crate_without_cdylib_is_an_error_naming_the_fix() {
        let messages = r#"{"reason":"compiler-artifact","manifest_path":"/w/a/Cargo.toml","target":{"kind":["lib"]},"filenames":["/w/target/liba.rlib"]}"#;
        let err = component_artifact(messages, Path::new("/w/a")).unwrap_err();
        assert!(
            err.to_string().contains("crate-type = [\"cdylib\"]"),
            "{err}"
        );
    }
}

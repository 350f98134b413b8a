//! Makes sure the Rust toolchain that builds this workspace has the
//! `wasm32-wasip2` target before anything is compiled for it (the built-in
//! skills are compiled by `agent-builtins`' build script, minutes later).
//!
//! rustup installs the targets of `rust-toolchain.toml` only when it installs
//! the toolchain itself; when the pinned toolchain is already there without
//! the target, this adds it (`rustup target add`) and says so. Without rustup
//! the build stops here, naming the command to run.

#[path = "src/check.rs"]
mod check;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    match check::ensure_target(&rustc, check::find_rustup().as_deref()) {
        Ok(check::Outcome::Present(dir)) => {
            // Run again if the target is removed (a missing path always reruns).
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        Ok(check::Outcome::Added { command, dir }) => {
            println!(
                "cargo:warning=added the missing {} target: `{command}`",
                check::TARGET
            );
            println!("cargo:rerun-if-changed={}", dir.display());
        }
        Err(message) => {
            eprintln!("error: {message}");
            std::process::exit(1);
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/check.rs");
    println!("cargo:rerun-if-env-changed=RUSTUP_TOOLCHAIN");
}

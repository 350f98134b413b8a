//! The README's first command, `./run skill list` (issue 15): on a toolchain
//! without the wasm32-wasip2 target and without rustup to add it, it stops at
//! the toolchain check, naming the command to run, before a single crate of
//! the agent is compiled (a plain `cargo run` gets there only after cargo has
//! scheduled dozens of other crates first).

use std::path::{Path, PathBuf};
use std::process::Command;

use agent_tests::text;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repository root")
}

/// The sysroot of the pinned toolchain (through rustup, from the repository).
fn real_sysroot(root: &Path) -> PathBuf {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .current_dir(root)
        .output()
        .expect("rustc --print sysroot");
    assert!(out.status.success(), "{out:?}");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn run_stops_at_the_toolchain_check_naming_the_command_before_compiling_the_agent() {
    let root = repo_root();
    let real = real_sysroot(&root);
    let tmp = tempfile::tempdir().expect("tmp");
    // A sysroot laid out as rustup lays one out, without the wasm32-wasip2 target.
    let fake = tmp
        .path()
        .join("toolchains/1.95.0-x86_64-unknown-linux-gnu");
    std::fs::create_dir_all(fake.join("lib/rustlib/x86_64-unknown-linux-gnu")).expect("sysroot");
    // Its rustc: the real one, except that it reports that sysroot.
    let rustc = tmp.path().join("rustc");
    agent_tests::write_executable(
        &rustc,
        &format!(
            "#!/bin/sh\nif [ $# -eq 2 ] && [ \"$1\" = --print ] && [ \"$2\" = sysroot ]; then echo '{}'; exit 0; fi\nexec '{}' \"$@\"\n",
            fake.display(),
            real.join("bin/rustc").display()
        ),
    );
    // cargo itself, on a PATH without rustup.
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).expect("bin");
    std::os::unix::fs::symlink(real.join("bin/cargo"), bin.join("cargo")).expect("cargo");
    let target = tmp.path().join("target");
    let work = tmp.path().join("project");
    std::fs::create_dir(&work).expect("project");

    let out = Command::new(root.join("run"))
        .args(["skill", "list"])
        .current_dir(&work)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("RUSTC", &rustc)
        .env("CARGO_TARGET_DIR", &target)
        .env("CARGO_NET_OFFLINE", "true")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("RUSTC_WRAPPER")
        .output()
        .expect("./run");
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "the Rust toolchain 1.95.0-x86_64-unknown-linux-gnu has no wasm32-wasip2 target"
        ) && stderr.contains("rustup is not on PATH")
            && stderr.contains(
                "Run `rustup target add wasm32-wasip2 --toolchain 1.95.0-x86_64-unknown-linux-gnu`"
            ),
        "{stderr}"
    );
    // Nothing but the check was built: no fingerprint of any other crate.
    let built: Vec<String> = std::fs::read_dir(target.join("release/.fingerprint"))
        .expect("fingerprints")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !built.is_empty() && built.iter().all(|n| n.starts_with("agent-wasm-target-")),
        "{built:?}"
    );
}

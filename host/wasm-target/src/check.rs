//! Is the wasm32-wasip2 target installed for the toolchain at hand, and if
//! not, can rustup add it? Shared by the build script and the unit tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target every skill is compiled for (pinned in `rust-toolchain.toml`).
pub const TARGET: &str = "wasm32-wasip2";

/// What [`ensure_target`] found or did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The target's standard library is in the sysroot (`dir`).
    Present(PathBuf),
    /// It was missing; `command` added it into `dir`.
    Added { command: String, dir: PathBuf },
}

/// `rustup` on `PATH`, if any.
pub fn find_rustup() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(format!("rustup{}", std::env::consts::EXE_SUFFIX)))
        .find(|candidate| candidate.is_file())
}

/// Checks that `rustc`'s sysroot has [`TARGET`]; when it does not, adds it
/// with `rustup` (when given and the toolchain is one of rustup's), or says
/// exactly what to run.
///
/// # Errors
/// The message names the toolchain and the command that installs the target.
pub fn ensure_target(rustc: &str, rustup: Option<&Path>) -> Result<Outcome, String> {
    let sysroot = sysroot(rustc)?;
    let dir = target_dir(&sysroot);
    if dir.is_dir() {
        return Ok(Outcome::Present(dir));
    }
    let toolchain = rustup_toolchain(&sysroot);
    let Some(toolchain) = toolchain else {
        return Err(format!(
            "the Rust toolchain at {} has no {TARGET} target, which the skills are built for, \
             and it is not one of rustup's toolchains. Install rustup (https://rustup.rs) and \
             build again, or add the target to this toolchain by its own means.",
            sysroot.display()
        ));
    };
    let command = format!("rustup target add {TARGET} --toolchain {toolchain}");
    let Some(rustup) = rustup else {
        return Err(format!(
            "the Rust toolchain {toolchain} has no {TARGET} target, which the skills are built \
             for, and rustup is not on PATH to add it. Run `{command}` and build again."
        ));
    };
    let out = Command::new(rustup)
        .args(["target", "add", TARGET, "--toolchain", &toolchain])
        .output()
        .map_err(|e| format!("running `{command}` ({}): {e}", rustup.display()))?;
    if !out.status.success() || !dir.is_dir() {
        return Err(format!(
            "the Rust toolchain {toolchain} has no {TARGET} target, and `{command}` failed \
             ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(Outcome::Added { command, dir })
}

/// `rustc --print sysroot`.
fn sysroot(rustc: &str) -> Result<PathBuf, String> {
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("running `{rustc} --print sysroot`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{rustc} --print sysroot` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// Where a sysroot keeps the target's standard library.
fn target_dir(sysroot: &Path) -> PathBuf {
    sysroot.join("lib").join("rustlib").join(TARGET)
}

/// rustup's name for the toolchain at `sysroot`: rustup keeps each toolchain
/// in `$RUSTUP_HOME/toolchains/<name>`.
fn rustup_toolchain(sysroot: &Path) -> Option<String> {
    let parent = sysroot.parent()?;
    if parent.file_name()? != "toolchains" {
        return None;
    }
    Some(sysroot.file_name()?.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A toolchain directory laid out as rustup lays it out, and a `rustc`
    /// script that prints its sysroot as the real one does.
    fn toolchain(root: &Path, with_target: bool) -> (PathBuf, String) {
        let sysroot = root
            .join("toolchains")
            .join("1.95.0-x86_64-unknown-linux-gnu");
        std::fs::create_dir_all(sysroot.join("lib/rustlib/x86_64-unknown-linux-gnu")).unwrap();
        if with_target {
            std::fs::create_dir_all(target_dir(&sysroot)).unwrap();
        }
        let rustc = script(root, "rustc", &format!("echo {}", sysroot.display()));
        (sysroot, rustc.display().to_string())
    }

    /// Writes an executable script through `install`, a child process, so
    /// that this process never holds a writable descriptor of it: a test
    /// thread forking meanwhile would keep one open and make running the
    /// script fail with "Text file busy".
    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        let staging = dir.join(format!(".{name}.staging"));
        std::fs::write(&staging, format!("#!/bin/sh\n{body}\n")).unwrap();
        let status = Command::new("install")
            .args(["-m", "755"])
            .arg(&staging)
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success(), "install {}: {status}", path.display());
        path
    }

    /// The usual case: the target is there, nothing is run.
    #[test]
    fn an_installed_target_is_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let (sysroot, rustc) = toolchain(root.path(), true);
        let rustup = script(root.path(), "rustup", "exit 7");
        let outcome = ensure_target(&rustc, Some(&rustup)).unwrap();
        assert_eq!(outcome, Outcome::Present(target_dir(&sysroot)));
    }

    /// The machine: rustup and the pinned toolchain, no target. The
    /// build asks rustup for exactly that toolchain's target and says so.
    #[test]
    fn a_missing_target_is_added_with_rustup_for_that_toolchain() {
        let root = tempfile::tempdir().unwrap();
        let (sysroot, rustc) = toolchain(root.path(), false);
        let log = root.path().join("rustup.log");
        let rustup = script(
            root.path(),
            "rustup",
            &format!(
                "echo \"$@\" > {}\nmkdir -p {}",
                log.display(),
                target_dir(&sysroot).display()
            ),
        );
        let outcome = ensure_target(&rustc, Some(&rustup)).unwrap();
        assert_eq!(
            outcome,
            Outcome::Added {
                command: "rustup target add wasm32-wasip2 --toolchain \
                          1.95.0-x86_64-unknown-linux-gnu"
                    .into(),
                dir: target_dir(&sysroot),
            }
        );
        let args = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            args.trim(),
            "target add wasm32-wasip2 --toolchain 1.95.0-x86_64-unknown-linux-gnu"
        );
    }

    /// No rustup on PATH: the build stops at once and names the command.
    #[test]
    fn without_rustup_the_error_names_the_command() {
        let root = tempfile::tempdir().unwrap();
        let (_, rustc) = toolchain(root.path(), false);
        let err = ensure_target(&rustc, None).unwrap_err();
        assert!(
            err.contains("rustup is not on PATH")
                && err.contains(
                    "Run `rustup target add wasm32-wasip2 --toolchain \
                     1.95.0-x86_64-unknown-linux-gnu`"
                ),
            "{err}"
        );
    }

    /// rustup fails (offline, say): its own words are passed on.
    #[test]
    fn a_failing_rustup_is_reported_with_its_output() {
        let root = tempfile::tempdir().unwrap();
        let (_, rustc) = toolchain(root.path(), false);
        let rustup = script(
            root.path(),
            "rustup",
            "echo 'error: could not download' >&2; exit 1",
        );
        let err = ensure_target(&rustc, Some(&rustup)).unwrap_err();
        assert!(
            err.contains("`rustup target add wasm32-wasip2 --toolchain")
                && err.contains("error: could not download"),
            "{err}"
        );
    }

    /// A toolchain rustup does not manage (a distribution's rustc) cannot be
    /// given a target by rustup: say so instead of running a command that fails.
    #[test]
    fn a_toolchain_outside_rustup_is_named() {
        let root = tempfile::tempdir().unwrap();
        let sysroot = root.path().join("usr");
        std::fs::create_dir_all(&sysroot).unwrap();
        let rustc = script(root.path(), "rustc", &format!("echo {}", sysroot.display()));
        let err = ensure_target(&rustc.display().to_string(), None).unwrap_err();
        assert!(err.contains("not one of rustup's toolchains"), "{err}");
    }
}

//! A fresh checkout stays as committed (issue 15, Build: "`./test.sh`
//! modifies a tracked file"): the JavaScript example's `ensure-built.sh`,
//! which `./test.sh` and the tests run, installs its npm packages with
//! `npm ci` only. When `npm ci` fails the script fails and says why; it never
//! falls back to `npm install`, which rewrote the committed
//! `package-lock.json`.

use std::process::Command;

use agent_tests::text;

/// `npm ci` fails (here: the registry is a closed loopback port and the npm
/// cache is empty). The script exits 1 naming `npm ci`, retries nothing,
/// installs nothing, and the lock file is byte for byte as committed.
#[test]
fn the_js_example_never_rewrites_its_lock_file() {
    let example = agent_tests::workspace().join("sdk-guest-examples/js-hello");
    let dir = tempfile::tempdir().expect("tempdir");
    for file in ["ensure-built.sh", "package.json", "package-lock.json"] {
        std::fs::copy(example.join(file), dir.path().join(file)).expect("copy");
    }
    let committed = std::fs::read(example.join("package-lock.json")).expect("lock");
    let out = Command::new("bash")
        .arg(dir.path().join("ensure-built.sh"))
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_fetch_retries", "0")
        .env("npm_config_cache", dir.path().join("npm-cache"))
        .output()
        .expect("running ensure-built.sh");
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: npm ci failed in"),
        "the failure must name `npm ci`:\n{stderr}"
    );
    assert!(
        !stderr.contains("npm install"),
        "no fallback to `npm install`:\n{stderr}"
    );
    let after = std::fs::read(dir.path().join("package-lock.json")).expect("lock after");
    assert!(after == committed, "package-lock.json was rewritten");
    assert!(
        !dir.path().join("node_modules").exists(),
        "something installed"
    );
}

//! The skill registry end to end: a real component (rust-hello), a publisher key generated
//! here, an index built with `agent registry init` + `publish`, served by `git daemon` on
//! 127.0.0.1 and also used as a local directory; install, search, list --available, update
//! with new permissions, remove, add, and refused attacks (a tampered artifact, an expired
//! snapshot, a rollback) that leave nothing on disk.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_tests::{Sandbox, build_guest, copy_tree, text, workspace};

use super::{code, ok, sandbox};

/// `git daemon` serving `base` on a free port of 127.0.0.1; killed when dropped.
pub(super) struct GitDaemon {
    child: Child,
    pub(super) port: u16,
}

impl GitDaemon {
    pub(super) fn start(base: &Path) -> GitDaemon {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        // The `git-daemon` program itself (not `git daemon`, whose `git` parent would leave
        // the daemon running when killed).
        let exec_path = Command::new("git")
            .arg("--exec-path")
            .output()
            .expect("git --exec-path");
        let exec_path = String::from_utf8_lossy(&exec_path.stdout)
            .trim()
            .to_string();
        let child = Command::new(Path::new(&exec_path).join("git-daemon"))
            .args([
                "--export-all",
                "--reuseaddr",
                "--listen=127.0.0.1",
                &format!("--port={port}"),
                &format!("--base-path={}", base.display()),
            ])
            .arg(base)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting git daemon");
        let daemon = GitDaemon { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "git daemon did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        daemon
    }

    fn url(&self, repo: &str) -> String {
        format!("git+git://127.0.0.1:{}/{repo}", self.port)
    }
}

impl Drop for GitDaemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=Publisher",
            "-c",
            "user.email=publisher@example.com",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .expect("running git");
    assert!(out.status.success(), "git {args:?}: {:?}", text(&out));
}

pub(super) fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

pub(super) fn s(p: &Path) -> &str {
    p.to_str().expect("utf8 path")
}

/// A publisher: a key pair made with `agent keys generate --trust` (so this sandbox's user
/// trusts it) and skill sources of rust-hello to publish.
pub(super) struct Publisher {
    pub(super) key: PathBuf,
    work: PathBuf,
    wasm: PathBuf,
}

impl Publisher {
    pub(super) fn new(sb: &Sandbox) -> Publisher {
        let keys = sb.home.path().join("publisher-keys");
        ok(&sb.agent(&[
            "keys",
            "generate",
            "--name",
            "publisher",
            "--out",
            s(&keys),
            "--trust",
        ]));
        let work = sb.home.path().join("publish");
        std::fs::create_dir_all(&work).expect("mkdir");
        Publisher {
            key: keys.join("publisher.key"),
            work,
            wasm: build_guest("rust-hello"),
        }
    }

    /// A copy of sdk-guest-examples/rust-hello at `version`, with `extra` manifest lines
    /// replacing `permissions: []`. Returns the SKILL.yaml and the component.
    pub(super) fn source(&self, version: &str, extra: &str) -> (PathBuf, PathBuf) {
        let example = workspace().join("sdk-guest-examples/rust-hello");
        let dir = self.work.join(version);
        std::fs::create_dir_all(dir.join("schemas")).expect("mkdir");
        for e in std::fs::read_dir(example.join("schemas"))
            .expect("schemas")
            .flatten()
        {
            std::fs::copy(e.path(), dir.join("schemas").join(e.file_name())).expect("copy");
        }
        let manifest = std::fs::read_to_string(example.join("SKILL.yaml"))
            .expect("SKILL.yaml")
            .replace("version: 0.1.0", &format!("version: {version}"))
            .replace(
                "permissions: []",
                if extra.is_empty() {
                    "permissions: []"
                } else {
                    extra
                },
            );
        std::fs::write(dir.join("SKILL.yaml"), manifest).expect("write");
        let component = dir.join("rust_hello.wasm");
        std::fs::copy(&self.wasm, &component).expect("copy wasm");
        (dir.join("SKILL.yaml"), component)
    }

    fn publish(&self, sb: &Sandbox, index: &Path, version: &str, extra: &str, expires: &str) {
        let (manifest, component) = self.source(version, extra);
        let out = sb.agent(&[
            "registry",
            "publish",
            s(&component),
            "--manifest",
            s(&manifest),
            "--key",
            s(&self.key),
            "--index",
            s(index),
            "--expires",
            expires,
        ]);
        let stdout = ok(&out);
        assert!(
            stdout.contains(&format!("published rust-hello {version}")),
            "{stdout}"
        );
    }
}

const NEW_PERMISSIONS: &str = "permissions: [file:read, shell:exec]\nexec: [git]";

fn installed_version(dir: &Path) -> Option<String> {
    let manifest = std::fs::read_to_string(dir.join("SKILL.yaml")).ok()?;
    manifest
        .lines()
        .find_map(|l| l.strip_prefix("version: "))
        .map(|v| v.trim().to_string())
}

/// Nothing but `allowed` in `dir` (no staging directories, no partial installs).
pub(super) fn only(dir: &Path, allowed: &[&str]) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for n in &names {
        assert!(
            allowed.contains(&n.as_str()),
            "unexpected {n} left in {}: {names:?}",
            dir.display()
        );
    }
}

#[test]
fn a_git_index_installs_searches_updates_removes_and_adds() {
    let sb = sandbox();
    let publisher = Publisher::new(&sb);
    let served = sb.home.path().join("served");
    let index = served.join("index");
    ok(&sb.agent(&["registry", "init", s(&index)]));
    publisher.publish(&sb, &index, "0.1.0", "", "365d");
    let verified = ok(&sb.agent(&["registry", "verify", s(&index)]));
    assert!(verified.contains("checks out"), "{verified}");
    git(&index, &["init", "-q"]);
    commit(&index, "rust-hello 0.1.0");
    let daemon = GitDaemon::start(&served);
    let source = daemon.url("index");

    let found = ok(&sb.agent(&["skill", "search", "hello", "--index", &source]));
    assert!(
        found.contains("rust-hello") && found.contains("0.1.0"),
        "{found}"
    );
    let none = ok(&sb.agent(&["skill", "search", "zzz-nothing", "--index", &source]));
    assert!(none.contains("no skill"), "{none}");

    let available = ok(&sb.agent(&["skill", "list", "--available", "--index", &source]));
    let row = available
        .lines()
        .find(|l| l.starts_with("rust-hello"))
        .unwrap_or_else(|| panic!("no rust-hello row:\n{available}"));
    assert!(row.contains("0.1.0"), "{row}");

    // Install (non-interactive: no prompt), then discovery loads it with its signature.
    let out = sb.agent(&["skill", "install", "rust-hello", "--index", &source]);
    let stdout = ok(&out);
    assert!(stdout.contains("installed rust-hello 0.1.0"), "{stdout}");
    let (_, stderr) = text(&out);
    assert!(stderr.contains("could, once granted"), "{stderr}");
    let user_dir = sb.paths().user_skills_dir();
    assert_eq!(
        installed_version(&user_dir.join("rust-hello")).as_deref(),
        Some("0.1.0")
    );
    only(&user_dir, &["rust-hello"]);
    let list = ok(&sb.agent(&["skill", "list"]));
    let row = list
        .lines()
        .find(|l| l.starts_with("rust-hello"))
        .unwrap_or_else(|| panic!("no rust-hello row:\n{list}"));
    assert!(row.contains("0.1.0") && row.contains("user"), "{row}");
    let greeting = ok(&sb.agent(&[
        "skill",
        "call",
        "rust-hello",
        "greet",
        "--input",
        r#"{"name":"Ada"}"#,
    ]));
    assert!(greeting.contains("Hello, Ada!"), "{greeting}");
    let available = ok(&sb.agent(&["skill", "list", "--available", "--index", &source]));
    assert!(
        available
            .lines()
            .any(|l| l.starts_with("rust-hello") && l.matches("0.1.0").count() == 2),
        "installed column: {available}"
    );

    // A new version asks for more: refused without a terminal (exit 4), naming the
    // permissions and the --allow that accepts them.
    publisher.publish(&sb, &index, "0.2.0", NEW_PERMISSIONS, "365d");
    commit(&index, "rust-hello 0.2.0");
    let out = sb.agent(&["skill", "update", "--index", &source]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 4, "{stdout}\n{stderr}");
    assert!(
        stderr.contains("file:read") && stderr.contains("shell:exec (git)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("--allow rust-hello/file:read")
            && stderr.contains("--allow rust-hello/shell:exec:git"),
        "{stderr}"
    );
    assert_eq!(
        installed_version(&user_dir.join("rust-hello")).as_deref(),
        Some("0.1.0")
    );
    // Only part of it allowed: still refused.
    let out = sb.agent(&[
        "skill",
        "update",
        "rust-hello",
        "--index",
        &source,
        "--allow",
        "rust-hello/file:read",
    ]);
    assert_eq!(code(&out), 4, "{:?}", text(&out));
    assert!(text(&out).1.contains("shell:exec"), "{:?}", text(&out));
    let out = sb.agent(&[
        "skill",
        "update",
        "rust-hello",
        "--index",
        &source,
        "--allow",
        "rust-hello/file:read",
        "--allow",
        "rust-hello/shell:exec:git",
    ]);
    assert!(
        ok(&out).contains("updated rust-hello 0.1.0 -> 0.2.0"),
        "{:?}",
        text(&out)
    );
    assert_eq!(
        installed_version(&user_dir.join("rust-hello")).as_deref(),
        Some("0.2.0")
    );
    only(&user_dir, &["rust-hello"]);
    let up_to_date = ok(&sb.agent(&["skill", "update", "--index", &source]));
    assert!(up_to_date.contains("up to date"), "{up_to_date}");

    // Remove: the directory is gone and discovery no longer finds it.
    let removed = ok(&sb.agent(&["skill", "remove", "rust-hello"]));
    assert!(removed.contains("removed rust-hello"), "{removed}");
    assert!(!user_dir.join("rust-hello").exists());
    assert!(!ok(&sb.agent(&["skill", "list"])).contains("rust-hello"));
    let out = sb.agent(&["skill", "remove", "rust-hello"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));

    // Add into the project, from the same index as a local directory, with a version
    // requirement; the config's registry_url is the default index.
    std::fs::write(
        sb.paths().config_file(),
        format!("[skills]\nregistry_url = \"{}\"\n", s(&index)),
    )
    .expect("config");
    let out = sb.agent(&["skill", "add", "rust-hello@^0.2"]);
    assert!(
        ok(&out).contains("installed rust-hello 0.2.0"),
        "{:?}",
        text(&out)
    );
    let project_dir = sb.project.path().join(".agent/skills");
    assert_eq!(
        installed_version(&project_dir.join("rust-hello")).as_deref(),
        Some("0.2.0")
    );
    only(&project_dir, &["rust-hello"]);
    let list = ok(&sb.agent(&["skill", "list"]));
    assert!(
        list.lines()
            .any(|l| l.starts_with("rust-hello") && l.contains("project")),
        "{list}"
    );
    let greeting = ok(&sb.agent(&[
        "skill",
        "call",
        "rust-hello",
        "greet",
        "--input",
        r#"{"name":"Grace"}"#,
    ]));
    assert!(greeting.contains("Hello, Grace!"), "{greeting}");
    ok(&sb.agent(&["skill", "remove", "rust-hello", "--in-project"]));
    assert!(!project_dir.join("rust-hello").exists());

    // The git index rolled back to its first commit (an older snapshot) is refused.
    git(&index, &["reset", "-q", "--hard", "HEAD~1"]);
    let out = sb.agent(&["skill", "install", "rust-hello", "--index", &source]);
    assert_ne!(code(&out), 0, "{:?}", text(&out));
    assert!(text(&out).1.contains("rollback"), "{:?}", text(&out));
    only(&user_dir, &[]);
    drop(daemon);
}

/// An index directory with rust-hello 0.1.0 published, and its publisher.
fn local_index(sb: &Sandbox, expires: &str) -> (Publisher, PathBuf) {
    let publisher = Publisher::new(sb);
    let index = sb.home.path().join("index");
    ok(&sb.agent(&["registry", "init", s(&index)]));
    publisher.publish(sb, &index, "0.1.0", "", expires);
    (publisher, index)
}

#[test]
fn a_tampered_artifact_is_refused_and_nothing_is_left() {
    let sb = sandbox();
    let (_publisher, index) = local_index(&sb, "365d");
    let artifacts = index.join("artifacts");
    let artifact = std::fs::read_dir(&artifacts)
        .expect("artifacts")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .expect("an artifact");
    let mut bytes = std::fs::read(&artifact).expect("read");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&artifact, bytes).expect("write");

    let verify = sb.agent(&["registry", "verify", s(&index)]);
    assert_eq!(code(&verify), 1, "{:?}", text(&verify));

    let out = sb.agent(&["skill", "install", "rust-hello", "--index", s(&index)]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(
        stderr.contains("does not match") && stderr.contains("artifacts/"),
        "{stderr}"
    );
    only(&sb.paths().user_skills_dir(), &[]);
    assert!(!ok(&sb.agent(&["skill", "list"])).contains("rust-hello"));
}

#[test]
fn an_expired_snapshot_is_refused() {
    let sb = sandbox();
    let (_publisher, index) = local_index(&sb, "1s");
    std::thread::sleep(Duration::from_millis(2100));
    let out = sb.agent(&["skill", "install", "rust-hello", "--index", s(&index)]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(stderr.contains("expired"), "{stderr}");
    only(&sb.paths().user_skills_dir(), &[]);
    let out = sb.agent(&["skill", "search", "hello", "--index", s(&index)]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
}

#[test]
fn a_rollback_to_an_older_snapshot_is_refused() {
    let sb = sandbox();
    let (publisher, index) = local_index(&sb, "365d");
    let old = sb.home.path().join("index-old");
    copy_tree(&index, &old);
    publisher.publish(&sb, &index, "0.2.0", "", "365d");
    let out = sb.agent(&["skill", "install", "rust-hello", "--index", s(&index)]);
    assert!(
        ok(&out).contains("installed rust-hello 0.2.0"),
        "{:?}",
        text(&out)
    );

    // The same index location now serves the older, still validly signed snapshot.
    std::fs::remove_dir_all(&index).expect("rm");
    copy_tree(&old, &index);
    let user_dir = sb.paths().user_skills_dir();
    for args in [
        vec!["skill", "install", "rust-hello@0.1.0", "--index", s(&index)],
        vec!["skill", "update", "--index", s(&index)],
        vec!["skill", "list", "--available", "--index", s(&index)],
    ] {
        let out = sb.agent(&args);
        let (_, stderr) = text(&out);
        assert_eq!(code(&out), 1, "{args:?}: {stderr}");
        assert!(stderr.contains("rollback"), "{args:?}: {stderr}");
    }
    assert_eq!(
        installed_version(&user_dir.join("rust-hello")).as_deref(),
        Some("0.2.0")
    );
    only(&user_dir, &["rust-hello"]);
}

#[test]
fn local_directories_install_and_bad_sources_are_usage_errors() {
    let sb = sandbox();
    let (publisher, _index) = local_index(&sb, "365d");
    // A skill directory signed by the trusted publisher key.
    let (manifest, component) = publisher.source("0.3.0", "");
    ok(&sb.agent(&["skill", "sign", s(&component), "--key", s(&publisher.key)]));
    let dir = manifest.parent().expect("dir");
    let out = sb.agent(&["skill", "install", s(dir)]);
    assert!(
        ok(&out).contains("installed rust-hello 0.3.0"),
        "{:?}",
        text(&out)
    );
    let list = ok(&sb.agent(&["skill", "list"]));
    assert!(
        list.lines()
            .any(|l| l.starts_with("rust-hello") && l.contains("0.3.0")),
        "{list}"
    );

    // The same skill from a git repository (`git+URL`).
    ok(&sb.agent(&["skill", "remove", "rust-hello"]));
    git(dir, &["init", "-q"]);
    commit(dir, "rust-hello 0.3.0");
    let url = format!("git+file://{}", s(dir));
    let out = sb.agent(&["skill", "install", &url]);
    assert!(
        ok(&out).contains("installed rust-hello 0.3.0"),
        "{:?}",
        text(&out)
    );
    let user_dir = sb.paths().user_skills_dir();
    assert!(!user_dir.join("rust-hello/.git").exists());
    only(&user_dir, &["rust-hello"]);

    let out = sb.agent(&[
        "skill",
        "search",
        "x",
        "--index",
        "http://example.com/index",
    ]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("127.0.0.1"), "{:?}", text(&out));
    let out = sb.agent(&["skill", "install", "Not A Name"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
}

/// Runs the binary on a real terminal (`script`), feeding `answers` to its stdin.
fn on_a_terminal(sb: &Sandbox, args: &str, answers: &str) -> String {
    use std::io::Write;
    let mut child = Command::new("script")
        .args(["-qec"])
        .arg(format!("{} {args}", env!("CARGO_BIN_EXE_agent")))
        .arg("/dev/null")
        .current_dir(sb.project.path())
        .env("AGENT_HOME", sb.home.path())
        .env_remove("CI")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("script");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(answers.as_bytes()).expect("answers");
    drop(stdin);
    let out = child.wait_with_output().expect("wait");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn on_a_terminal_install_and_update_ask_and_store_grants() {
    let sb = sandbox();
    let (publisher, index) = local_index(&sb, "365d");
    let idx = s(&index).to_string();
    // Declined: nothing installed.
    let out = on_a_terminal(
        &sb,
        &format!("skill install rust-hello --index {idx}"),
        "n\n",
    );
    assert!(out.contains("Install rust-hello 0.1.0?"), "{out}");
    assert!(
        !sb.paths().user_skills_dir().join("rust-hello").exists(),
        "{out}"
    );
    let out = on_a_terminal(
        &sb,
        &format!("skill install rust-hello --index {idx}"),
        "y\n",
    );
    assert!(out.contains("installed rust-hello 0.1.0"), "{out}");

    // The update's new permissions are asked for again; "always" is stored.
    publisher.publish(&sb, &index, "0.2.0", NEW_PERMISSIONS, "365d");
    let out = on_a_terminal(&sb, &format!("skill update --index {idx}"), "y\na\nd\n");
    assert!(out.contains("did not have"), "{out}");
    assert!(out.contains("grant file:read"), "{out}");
    assert!(out.contains("updated rust-hello 0.1.0 -> 0.2.0"), "{out}");
    let perms = ok(&sb.agent(&["skill", "permissions", "rust-hello"]));
    let line = |p: &str| {
        perms
            .lines()
            .find(|l| l.trim_start().starts_with(p))
            .unwrap_or_else(|| panic!("no {p} line: {perms}"))
            .to_string()
    };
    assert!(line("file:read").contains("always"), "{perms}");
    assert!(line("shell:exec").contains("deny"), "{perms}");
}

/// The repository's own `registry-index/` (README) is a real signed index: on a fresh clone,
/// offline, its examples verify, install and run. It fails once the committed snapshot has
/// expired (2027-11-25), which is the signal to re-sign it (registry-index/README.md).
#[test]
fn the_repository_index_installs_its_examples_offline() {
    let sb = sandbox();
    let index = workspace().join("registry-index");
    let key = index.join("keys").join("90dbe1d66cd053ff.pub");
    ok(&sb.agent(&["keys", "trust", s(&key)]));
    let verified = ok(&sb.agent(&["registry", "verify", s(&index)]));
    assert!(!verified.contains("problem"), "{verified}");
    let found = ok(&sb.agent(&["skill", "search", "hello", "--index", s(&index)]));
    assert!(
        found.contains("rust-hello") && found.contains("js-hello"),
        "{found}"
    );
    for name in ["rust-hello", "js-hello"] {
        ok(&sb.agent(&["skill", "install", name, "--index", s(&index)]));
    }
    let greeting = ok(&sb.agent(&[
        "skill",
        "call",
        "rust-hello",
        "greet",
        "--input",
        r#"{"name":"world"}"#,
    ]));
    assert!(greeting.contains("Hello, world!"), "{greeting}");
    let slug = ok(&sb.agent(&[
        "skill",
        "call",
        "js-hello",
        "slugify",
        "--input",
        r#"{"text":"Hello World"}"#,
    ]));
    assert!(slug.contains("hello-world"), "{slug}");

    // The spec's example skills, one per language at least, each published
    // signed by the index key: install verifies every digest and signature,
    // and the installed copy loads and passes `skill test`.
    let examples = [
        ("kubernetes", "1.2.0"),
        ("database", "1.0.0"),
        ("ddd-expert", "1.0.0"),
        ("rfc-writer", "1.0.0"),
        ("hipaa-compliance", "1.0.0"),
        ("i18n-output", "1.0.0"),
    ];
    let listed = ok(&sb.agent(&["skill", "list", "--available", "--index", s(&index)]));
    for (name, version) in examples {
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with(name) && l.contains(version)),
            "{name} {version} not offered:\n{listed}"
        );
        ok(&sb.agent(&["skill", "install", name, "--index", s(&index)]));
        let dir = sb.paths().user_skills_dir().join(name);
        let tested = ok(&sb.agent(&["skill", "test", s(&dir)]));
        assert!(
            tested.contains("signed by key 90dbe1d66cd053ff") && tested.contains("PASS"),
            "{name}: {tested}"
        );
    }
    // Nothing was written into the committed index.
    let status = Command::new("git")
        .args(["status", "--porcelain", "--", "registry-index"])
        .current_dir(workspace())
        .output()
        .expect("git status");
    assert!(
        String::from_utf8_lossy(&status.stdout).trim().is_empty(),
        "the index changed: {}",
        String::from_utf8_lossy(&status.stdout)
    );
}

/// The update plan compares `net:fetch` scopes as origins: the installed version's
/// `https://API.example.com:443` is the new version's `https://api.example.com`, so only the
/// origin that is really new is refused, and a grant for it spelt another way accepts it.
#[test]
fn an_update_names_only_the_origins_that_are_new_however_they_are_spelt() {
    let sb = sandbox();
    let publisher = Publisher::new(&sb);
    let index = sb.home.path().join("index");
    ok(&sb.agent(&["registry", "init", s(&index)]));
    publisher.publish(
        &sb,
        &index,
        "0.1.0",
        "permissions: [net:fetch]\nhosts: [\"https://API.example.com:443\"]",
        "365d",
    );
    let out = sb.agent(&["skill", "install", "rust-hello", "--index", s(&index)]);
    assert!(
        ok(&out).contains("installed rust-hello 0.1.0"),
        "{:?}",
        text(&out)
    );
    publisher.publish(
        &sb,
        &index,
        "0.2.0",
        "permissions: [net:fetch]\nhosts: [\"https://api.example.com\", \"https://new.example.com\"]",
        "365d",
    );

    let out = sb.agent(&["skill", "update", "--index", s(&index)]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 4, "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "error: refusing to update rust-hello to 0.2.0: it asks for new permissions: net:fetch (https://new.example.com)\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "to accept them without a terminal, run again with: --allow rust-hello/net:fetch:https://new.example.com\n"
        ),
        "{stderr}"
    );
    assert_eq!(
        installed_version(&sb.paths().user_skills_dir().join("rust-hello")).as_deref(),
        Some("0.1.0")
    );

    // The new origin granted in another spelling is the new origin.
    let out = sb.agent(&[
        "skill",
        "update",
        "--index",
        s(&index),
        "--allow",
        "rust-hello/net:fetch:HTTPS://New.Example.com:443/",
    ]);
    assert!(
        ok(&out).contains("updated rust-hello 0.1.0 -> 0.2.0"),
        "{:?}",
        text(&out)
    );
}

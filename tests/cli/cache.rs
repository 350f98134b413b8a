//! State on disk under attack and under pressure, through the real binary:
//! a tampered compiled-component cache (recompiled, warned about, audited,
//! never run), and a full disk (a tmpfs mounted over the sandbox's home):
//! no temporary file left behind, the cause named, and the agent working
//! again once space is freed.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agent_tests::{Sandbox, text};

use super::{code, ok, sandbox, write};

fn read_file(sb: &Sandbox) -> Output {
    sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "read_file",
        "--input",
        r#"{"path":"hello.txt"}"#,
        "--allow",
        "core-tools/file:read",
    ])
}

/// Every file under `dir`, recursively (none when it does not exist).
pub(super) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

/// The compiled artifacts in the sandbox's component cache.
pub(super) fn artifacts(sb: &Sandbox) -> Vec<PathBuf> {
    files_under(&sb.paths().component_cache_dir())
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".cwasm"))
        .collect()
}

#[test]
fn a_tampered_cached_core_tools_is_recompiled_warned_about_and_audited() {
    let sb = sandbox();
    write(sb.project.path(), "hello.txt", "hello from the project\n");
    assert!(ok(&read_file(&sb)).contains("hello from the project"));
    let cached = artifacts(&sb);
    assert_eq!(cached.len(), 1, "{cached:?}");

    // Overwrite the native code of the cached artifact with breakpoints.
    let mut bytes = std::fs::read(&cached[0]).expect("artifact");
    let text_section = agent_tests::elf_section(&bytes, ".text").expect(".text");
    bytes[text_section].fill(0xcc);
    std::fs::write(&cached[0], &bytes).expect("tampering");

    let out = read_file(&sb);
    let (stdout, stderr) = text(&out);
    println!("stderr after tampering:\n{stderr}");
    assert!(
        out.status.success(),
        "the call runs the real code: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("hello from the project"), "{stdout}");
    assert!(
        stderr.contains(
            "warning: the cached compiled code of `core-tools` was discarded and recompiled: \
             its seal does not match"
        ),
        "{stderr}"
    );
    let artifact = cached[0].display().to_string();
    assert!(stderr.contains(&artifact), "{stderr}");

    // Audited, in an intact chain; the artifact was rewritten and is used again.
    let log = std::fs::read_to_string(sb.paths().audit_log_path()).expect("audit log");
    let entry = log
        .lines()
        .find(|l| l.contains(r#""capability":"component-cache""#))
        .unwrap_or_else(|| panic!("no component-cache entry:\n{log}"));
    assert!(entry.contains(r#""skill":"core-tools""#), "{entry}");
    assert!(
        entry.contains(r#""decision":"recompiled: its seal does not match"#),
        "{entry}"
    );
    assert!(
        entry.contains(&format!(r#""target":"{artifact}""#)),
        "{entry}"
    );
    assert!(ok(&sb.agent(&["audit", "verify"])).contains("hash chain intact"));
    assert_ne!(std::fs::read(&cached[0]).expect("artifact"), bytes);
    let again = read_file(&sb);
    assert!(ok(&again).contains("hello from the project"));
    assert!(!text(&again).1.contains("recompiled"), "{:?}", text(&again));
    let log = std::fs::read_to_string(sb.paths().audit_log_path()).expect("audit log");
    assert_eq!(log.matches("component-cache").count(), 1, "{log}");
}

/// A tmpfs of `size` mounted over an empty directory; unmounted when dropped.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    /// `None` (with the reason on stderr) where mounting is not allowed.
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs {
                dir: dir.to_path_buf(),
            }),
            Ok(o) => {
                eprintln!(
                    "SKIPPED: cannot mount a tmpfs to fill (needs root): {}",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("SKIPPED: cannot run mount: {e}");
                None
            }
        }
    }

    /// Fills the filesystem with `name` until it is full, then gives back
    /// `leave` bytes.
    fn fill(&self, name: &str, leave: u64) -> PathBuf {
        let path = self.dir.join(name);
        let mut file = std::fs::File::create(&path).expect("creating the filler");
        let chunk = vec![0x5au8; 64 * 1024];
        let mut written = 0u64;
        loop {
            match file.write(&chunk) {
                Ok(0) => break,
                Ok(n) => written += n as u64,
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                Err(e) => panic!("filling {}: {e}", path.display()),
            }
        }
        file.set_len(written.saturating_sub(leave))
            .expect("giving space back");
        path
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// Temporary files anywhere under the agent's home.
fn temporaries(sb: &Sandbox) -> Vec<PathBuf> {
    files_under(sb.home.path())
        .into_iter()
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            name.is_some_and(|n| {
                n.ends_with(".tmp")
                    || n.starts_with(".tmp")
                    || n.starts_with(".artifact-")
                    || n.starts_with(".component-cache-key-")
            })
        })
        .collect()
}

#[test]
fn a_full_disk_leaves_no_temporary_file_names_the_cause_and_recovers() {
    let sb = sandbox();
    let Some(disk) = Tmpfs::mount(sb.home.path(), "16m") else {
        return;
    };
    write(sb.project.path(), "hello.txt", "hello from the project\n");

    // Too little space for core-tools' compiled artifact (~1 MB), enough
    // for the audit log: the cache write fails and must give its space back.
    let filler = disk.fill("filler", 256 * 1024);
    let out = read_file(&sb);
    let (stdout, stderr) = text(&out);
    println!("nearly full disk:\n{stderr}");
    assert!(
        out.status.success(),
        "the call works without the cache: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("hello from the project"), "{stdout}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(temporaries(&sb), Vec::<PathBuf>::new());
    assert!(artifacts(&sb).is_empty(), "{:?}", artifacts(&sb));

    // A full disk. A command writing a new file fails, names the cause and
    // leaves no partial file.
    let full = disk.fill("filler-2", 0);
    let late_keys = sb.home.path().join("late-keys");
    let out = sb.agent(&[
        "keys",
        "generate",
        "--name",
        "late",
        "--out",
        &late_keys.display().to_string(),
    ]);
    let (_, stderr) = text(&out);
    println!("keys generate on a full disk:\n{stderr}");
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(
        files_under(&late_keys),
        Vec::<PathBuf>::new(),
        "no half-written key"
    );

    // Calls go on while the audit log's last block has room; once it is
    // full, the grant cannot be audited and the call is refused, saying why.
    let mut refused = None;
    for _ in 0..40 {
        let out = read_file(&sb);
        if !out.status.success() {
            refused = Some(out);
            break;
        }
    }
    let out = refused.expect("a call is refused once the audit log cannot grow");
    let (stdout, stderr) = text(&out);
    println!("full disk:\n{stdout}\n{stderr}");
    assert!(
        stderr.contains("the audit log could not be written")
            && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert_eq!(temporaries(&sb), Vec::<PathBuf>::new());

    // Space freed: the agent works again, caches core-tools, and the audit
    // chain is intact.
    std::fs::remove_file(&filler).expect("freeing space");
    std::fs::remove_file(&full).expect("freeing space");
    for _ in 0..2 {
        assert!(ok(&read_file(&sb)).contains("hello from the project"));
    }
    assert_eq!(artifacts(&sb).len(), 1, "{:?}", artifacts(&sb));
    assert!(ok(&sb.agent(&["audit", "verify"])).contains("hash chain intact"));
    assert_eq!(temporaries(&sb), Vec::<PathBuf>::new());
}

#[test]
fn an_install_on_a_full_disk_says_no_space_left_and_leaves_nothing() {
    let sb = sandbox();
    let Some(disk) = Tmpfs::mount(sb.home.path(), "16m") else {
        return;
    };
    // A local index with rust-hello, outside the full filesystem.
    let outside = tempfile::tempdir().expect("tmp");
    let s = |p: &Path| p.to_str().expect("utf8 path").to_string();
    let keys = outside.path().join("keys");
    let index = outside.path().join("index");
    ok(&sb.agent(&[
        "keys",
        "generate",
        "--name",
        "publisher",
        "--out",
        &s(&keys),
        "--trust",
    ]));
    ok(&sb.agent(&["registry", "init", &s(&index)]));
    let example = agent_tests::workspace().join("sdk-guest-examples/rust-hello");
    ok(&sb.agent(&[
        "registry",
        "publish",
        &s(&agent_tests::build_guest("rust-hello")),
        "--manifest",
        &s(&example.join("SKILL.yaml")),
        "--key",
        &s(&keys.join("publisher.key")),
        "--index",
        &s(&index),
        "--expires",
        "365d",
    ]));
    // The store exists before the disk fills (`skill list` opens it).
    ok(&sb.agent(&["skill", "list"]));

    let filler = disk.fill("filler", 32 * 1024);
    let out = sb.agent(&["skill", "install", "rust-hello", "--index", &s(&index)]);
    let (stdout, stderr) = text(&out);
    println!("install on a full disk:\n{stdout}\n{stderr}");
    assert_eq!(code(&out), 1, "{stdout}\n{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    assert!(!stderr.contains("not a valid .tar.gz"), "{stderr}");
    let user_skills = sb.paths().user_skills_dir();
    let left: Vec<_> = std::fs::read_dir(&user_skills)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "nothing is left in {}: {left:?}",
        user_skills.display()
    );

    std::fs::remove_file(&filler).expect("freeing space");
    ok(&sb.agent(&["skill", "install", "rust-hello", "--index", &s(&index)]));
    assert!(ok(&sb.agent(&["skill", "list"])).contains("rust-hello"));
}

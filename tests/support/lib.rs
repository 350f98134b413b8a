//! Test support: build real guest components from source, lay out skill
//! directories, run the real `agent` binary in a hermetic home.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use agent_trust::SecretKey;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// Builds wasm32-wasip2 guest packages of this workspace (cached in
/// `target/guests`) and returns the path of `<stem>.wasm` for the first.
///
/// # Panics
/// When cargo fails: the test cannot run without its component.
pub fn build_guest(package: &str) -> PathBuf {
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let target = workspace().join("target").join("guests");
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(workspace())
        .args([
            "build",
            "--quiet",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "guest",
            "-p",
            package,
            "--target-dir",
        ])
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .status()
        .expect("running cargo to build a guest");
    assert!(status.success(), "building guest {package} failed");
    let stem = package.replace('-', "_");
    let path = target
        .join("wasm32-wasip2")
        .join("guest")
        .join(format!("{stem}.wasm"));
    assert!(path.exists(), "{} missing after build", path.display());
    path
}

/// The bytes of a built guest.
pub fn guest_bytes(package: &str) -> Vec<u8> {
    std::fs::read(build_guest(package)).expect("reading guest")
}

/// Writes a skill directory: `SKILL.yaml` and `skill.wasm` (signed with
/// `key` when given, over the component, `SKILL.yaml` and those of the files
/// the manifest names that exist already; a test that writes them later
/// calls [`sign_skill_dir`] again). Returns the directory.
pub fn write_skill(
    dir: &Path,
    manifest: &str,
    component: &[u8],
    key: Option<&SecretKey>,
) -> PathBuf {
    std::fs::create_dir_all(dir).expect("mkdir skill");
    std::fs::write(dir.join("SKILL.yaml"), manifest).expect("write manifest");
    std::fs::write(dir.join("skill.wasm"), component).expect("write component");
    if let Some(k) = key {
        sign_skill_dir(dir, k);
    }
    dir.to_path_buf()
}

/// Signs the skill in `dir` in place, as `agent skill sign` does: the
/// component `SKILL.yaml` names, `SKILL.yaml` and every file it names that
/// exists.
///
/// A manifest the host refuses (a test of that refusal) cannot name its
/// files: `skill.wasm` is then signed over `SKILL.yaml` alone — loading
/// stops at the manifest before the signature counts.
pub fn sign_skill_dir(dir: &Path, key: &SecretKey) {
    let (files, component) = match agent_manifest::Manifest::load_dir(dir) {
        Ok(manifest) => {
            let files: Vec<(String, Vec<u8>)> = manifest
                .signed_files()
                .into_iter()
                .filter_map(|rel| {
                    agent_trust::read_skill_file(dir, &rel)
                        .ok()
                        .map(|bytes| (rel, bytes))
                })
                .collect();
            let component = manifest.component_path(dir).expect("a component to sign");
            (files, component)
        }
        Err(_) => {
            let yaml = std::fs::read(dir.join("SKILL.yaml")).expect("read SKILL.yaml");
            (
                vec![("SKILL.yaml".to_string(), yaml)],
                dir.join("skill.wasm"),
            )
        }
    };
    let bytes = std::fs::read(&component).expect("read component");
    let signed = agent_trust::sign(&bytes, &files, key.signing_key()).expect("sign");
    std::fs::write(&component, signed).expect("write signed component");
}

/// `component` signed in agent 0.1.0's format (format byte 1: the
/// component's digest only, no manifest), as 0.1.0-era installs carry it.
pub fn sign_legacy_v1(component: &[u8], key: &SecretKey) -> Vec<u8> {
    use ed25519_dalek::Signer;
    let unsigned = agent_trust::split(component).expect("wasm").unsigned;
    let mut message = b"agent-skill-signature-v1".to_vec();
    message.extend_from_slice(&agent_trust::sha256(unsigned));
    let signature = key.signing_key().sign(&message);
    let mut payload = vec![agent_trust::signature::FORMAT_V1];
    payload.extend_from_slice(key.public().as_bytes());
    payload.extend_from_slice(&signature.to_bytes());
    agent_trust::signature::append_section(unsigned, &payload)
}

/// A minimal tool-skill manifest for `component: skill.wasm`.
pub fn tool_manifest(name: &str, extra: &str) -> String {
    format!(
        "name: {name}\nversion: 0.1.0\ndescription: test skill {name}\ntypes: [tool]\nimplementation:\n  component: skill.wasm\n{extra}"
    )
}

/// A hermetic environment: `AGENT_HOME` and a project directory.
pub struct Sandbox {
    /// Becomes `AGENT_HOME`.
    pub home: tempfile::TempDir,
    /// The project the agent runs in.
    pub project: tempfile::TempDir,
    /// The `agent` binary [`Sandbox::agent`] runs (`CARGO_BIN_EXE_agent` in
    /// the CLI suite); `None` for tests that drive the crates directly.
    pub binary: Option<PathBuf>,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    /// Fresh directories.
    pub fn new() -> Sandbox {
        Sandbox {
            home: tempfile::tempdir().expect("home"),
            project: tempfile::tempdir().expect("project"),
            binary: None,
        }
    }

    /// Fresh directories, running `binary` for [`Sandbox::agent`].
    pub fn with_binary(binary: impl Into<PathBuf>) -> Sandbox {
        Sandbox {
            binary: Some(binary.into()),
            ..Sandbox::new()
        }
    }

    /// The agent's paths in this sandbox.
    pub fn paths(&self) -> agent_store::AgentPaths {
        agent_store::AgentPaths::at(self.home.path())
    }

    /// Generates a key, trusts it, and returns it.
    pub fn trusted_key(&self) -> SecretKey {
        let key = SecretKey::generate().expect("key");
        let mut store =
            agent_trust::TrustStore::load(&self.paths().trusted_keys_dir()).expect("store");
        store.trust(key.public(), "test publisher").expect("trust");
        key
    }

    /// Runs the real `agent` binary with this sandbox as home and the
    /// project as working directory (non-interactive, like CI).
    pub fn agent(&self, args: &[&str]) -> Output {
        self.agent_cmd(args).output().expect("running agent")
    }

    /// A command for the real binary, to add stdin or env before running.
    pub fn agent_cmd(&self, args: &[&str]) -> Command {
        let binary = self
            .binary
            .as_ref()
            .expect("this sandbox has no agent binary: use Sandbox::with_binary");
        let mut cmd = Command::new(binary);
        cmd.args(args)
            .current_dir(self.project.path())
            .env("AGENT_HOME", self.home.path())
            .env("CI", "true")
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG");
        cmd
    }
}

/// stdout and stderr of a finished command, for assertion messages.
pub fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}
pub mod mcp_http;
pub mod model_server;
pub mod wiki_check;
pub mod wiki_project;

/// Copies directory `from` into `to`, recursively (created as needed).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read_dir").flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// Writes an executable script at `path` without this process ever holding
/// a writable descriptor of it: `install`, a child process, writes the file.
///
/// A script written here with `std::fs::write` and run at once can fail with
/// "Text file busy" (ETXTBSY): another test thread that forks while the
/// descriptor is open keeps a copy of it until its child calls exec.
///
/// # Panics
/// When the file cannot be written: the test cannot run without it.
pub fn write_executable(path: &Path, text: &str) {
    let name = path.file_name().expect("script name").to_string_lossy();
    let staging = path.with_file_name(format!(".{name}.staging"));
    std::fs::write(&staging, text).expect("write script");
    let status = Command::new("install")
        .arg("-m")
        .arg("755")
        .arg(&staging)
        .arg(path)
        .status()
        .expect("run install (coreutils)");
    assert!(status.success(), "install {}: {status}", path.display());
    std::fs::remove_file(&staging).expect("remove staging copy");
}

/// The built-in skill `name` as the binary loads it (manifest, embedded
/// files, signed component), with `origin`.
///
/// # Panics
/// When there is no such built-in or its manifest does not parse.
pub fn builtin_package(name: &str, origin: agent_runtime::Origin) -> agent_runtime::SkillPackage {
    let b = agent_builtins::all()
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("{name} is not built in"));
    agent_runtime::SkillPackage::in_memory(
        &format!("<built-in>/{name}/SKILL.yaml"),
        b.manifest,
        b.named_files()
            .map(|(p, bytes)| (p.to_string(), std::sync::Arc::from(bytes)))
            .collect(),
        Some(agent_runtime::ComponentBytes::Deflated(b.component)),
        origin,
    )
    .unwrap_or_else(|e| panic!("the built-in {name}: {e}"))
}

/// An artifact cache in `dir` whose sealing key is the file `<dir>.key`,
/// next to it and outside it (as the binary keeps the key in its data
/// directory, outside the cache).
pub fn component_cache(dir: impl Into<PathBuf>) -> agent_runtime::CacheConfig {
    let dir: PathBuf = dir.into();
    let mut key = dir.clone().into_os_string();
    key.push(".key");
    agent_runtime::CacheConfig {
        dir,
        key_file: PathBuf::from(key),
    }
}

/// The byte range of the section `name` (`.text`: the native code) in a
/// little-endian ELF64 file such as a compiled artifact; `None` when the
/// bytes are not such a file or have no such section.
pub fn elf_section(bytes: &[u8], name: &str) -> Option<std::ops::Range<usize>> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    let u64_at = |at: usize| {
        let v = u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?);
        usize::try_from(v).ok()
    };
    // ELF magic, 64-bit, little-endian.
    if bytes.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let shoff = u64_at(0x28)?;
    let shentsize = usize::from(u16_at(0x3a)?);
    let shnum = usize::from(u16_at(0x3c)?);
    let shstrndx = usize::from(u16_at(0x3e)?);
    let header = |i: usize| shoff + i * shentsize;
    let strtab = u64_at(header(shstrndx) + 24)?;
    (0..shnum).find_map(|i| {
        let h = header(i);
        let name_at = strtab + usize::try_from(u32_at(h)?).ok()?;
        let rest = bytes.get(name_at..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        if &rest[..end] != name.as_bytes() {
            return None;
        }
        let (offset, size) = (u64_at(h + 24)?, u64_at(h + 32)?);
        (offset + size <= bytes.len()).then_some(offset..offset + size)
    })
}

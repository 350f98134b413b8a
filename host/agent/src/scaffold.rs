//! `agent skill create`: templates for a tool skill in Rust or JavaScript
//! that build on this machine.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::cli::{Lang, exit};

/// The WIT package, embedded so JavaScript skills are self-contained.
const WIT_FILES: &[(&str, &str)] = &[
    ("types.wit", include_str!("../../../wit/types.wit")),
    ("imports.wit", include_str!("../../../wit/imports.wit")),
    ("exports.wit", include_str!("../../../wit/exports.wit")),
    ("worlds.wit", include_str!("../../../wit/worlds.wit")),
];

/// Where this binary's SDK was when it was built.
const BUILT_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdk-rust");

pub fn create(name: &str, lang: Lang, parent: Option<&Path>, sdk: Option<&Path>) -> Result<u8> {
    if !agent_manifest::is_skill_name(name) {
        bail!(
            "skill name `{name}`: use lowercase letters, digits and single hyphens (e.g. `my-skill`)"
        );
    }
    let parent = match parent {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir().context("reading the current directory")?,
    };
    let dir = parent.join(name);
    if dir.exists() {
        bail!(
            "{} already exists; choose another name or --dir",
            dir.display()
        );
    }
    let stem = name.replace('-', "_");
    let files = match lang {
        Lang::Rust => rust_files(name, &stem, sdk)?,
        Lang::Js => js_files(name, &stem),
    };
    for (rel, content) in &files {
        let path = dir.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
        }
        std::fs::write(&path, content).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "created {} ({} tool skill)",
        dir.display(),
        match lang {
            Lang::Rust => "Rust",
            Lang::Js => "JavaScript",
        }
    );
    println!("next:");
    println!("  cd {}", dir.display());
    match lang {
        Lang::Rust => println!("  cargo build --target wasm32-wasip2 --release"),
        Lang::Js => println!("  npm install && node build.mjs"),
    }
    println!(
        "  agent skill sign . --key ~/.config/agent/keys/default.key   # `agent keys generate --trust` first"
    );
    println!("  agent skill test .");
    println!("  agent skill call . hello --input '{{\"name\":\"world\"}}'");
    Ok(exit::OK)
}

fn manifest(name: &str, component: &str) -> String {
    format!(
        "name: {name}\nversion: 0.1.0\ndescription: {name}, a tool skill\ntypes: [tool]\n\
         # Add what the code needs, e.g. file:read, shell:exec (with `exec: [git]`).\npermissions: []\n\
         implementation:\n  component: {component}\ntools:\n  - name: hello\n    description: Greet someone by name.\n    input_schema_file: schemas/hello.json\n"
    )
}

const HELLO_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "name": { "type": "string", "description": "Who to greet" }
  },
  "required": ["name"],
  "additionalProperties": false
}
"#;

fn rust_files(name: &str, stem: &str, sdk: Option<&Path>) -> Result<Vec<(String, String)>> {
    let sdk: PathBuf = match sdk {
        Some(p) => p.to_path_buf(),
        None => PathBuf::from(BUILT_SDK),
    };
    let sdk = sdk.canonicalize().with_context(|| {
        format!(
            "agent's Rust SDK was not found at {}; pass --sdk PATH to a checkout's sdk-rust directory",
            sdk.display()
        )
    })?;
    if !sdk.join("Cargo.toml").is_file() {
        bail!(
            "--sdk {}: no Cargo.toml there (expected agent's sdk-rust directory)",
            sdk.display()
        );
    }
    let cargo = format!(
        r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
agent-skill-sdk = {{ path = "{sdk}" }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"

[profile.release]
opt-level = "s"
lto = true
codegen-units = 1
strip = false

# A skill builds on its own, even inside another workspace.
[workspace]
"#,
        sdk = sdk.display()
    );
    let lib = r#"//! A tool skill: `hello {name}`.

use agent_skill_sdk::{ToolError, Toolbox};
use serde::Deserialize;

#[derive(Deserialize)]
struct Hello {
    name: String,
}

fn hello(input: Hello) -> Result<String, ToolError> {
    match input.name.trim() {
        "" => Err(ToolError::invalid_input("`name` is empty")),
        name => Ok(format!("Hello, {name}!")),
    }
}

fn tools() -> Toolbox {
    Toolbox::new().tool(
        "hello",
        "Greet someone by name.",
        include_str!("../schemas/hello.json"),
        hello,
    )
}

agent_skill_sdk::export_tools!(tools);
"#;
    Ok(vec![
        ("Cargo.toml".into(), cargo),
        ("src/lib.rs".into(), lib.into()),
        ("schemas/hello.json".into(), HELLO_SCHEMA.into()),
        (
            "SKILL.yaml".into(),
            manifest(name, &format!("target/wasm32-wasip2/release/{stem}.wasm")),
        ),
        (".gitignore".into(), "/target\n".into()),
    ])
}

fn js_files(name: &str, stem: &str) -> Vec<(String, String)> {
    let world = format!(
        "package local:{name}@0.1.0;\n\n\
         /// What this skill imports and exports. Import only what the code uses:\n\
         /// each capability import needs its permission in SKILL.yaml\n\
         /// (exec: shell:exec, http: net:fetch, llm: llm:call, git: git:read...).\n\
         world {name} {{\n    import agent:skill/log@0.1.0;\n    export agent:skill/tool@0.1.0;\n}}\n"
    );
    let package = format!(
        r#"{{
  "name": "{name}",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "scripts": {{ "build": "node build.mjs" }},
  "devDependencies": {{ "componentize-qjs": "~0.4.5" }}
}}
"#
    );
    let build = format!(
        r#"#!/usr/bin/env node
// Builds dist/{stem}.wasm from src/skill.js with componentize-qjs (QuickJS).
import {{ mkdir, readFile, writeFile }} from "node:fs/promises";
import {{ dirname, join }} from "node:path";
import {{ fileURLToPath }} from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const entry = join(here, "src", "skill.js");
let componentize;
try {{
  ({{ componentize }} = await import("componentize-qjs"));
}} catch (e) {{
  console.error(`error: componentize-qjs is missing; run \`npm install\` first (${{e.message}})`);
  process.exit(2);
}}
const result = await componentize({{
  witPath: join(here, "wit"),
  world: "{name}",
  jsSource: await readFile(entry, "utf8"),
  jsPath: entry,
  moduleRoot: join(here, "src"),
  sync: true,
}});
const component = result.component ?? result;
const out = join(here, "dist", "{stem}.wasm");
await mkdir(dirname(out), {{ recursive: true }});
await writeFile(out, component);
console.log(`built ${{out}} (${{component.length}} bytes)`);
"#
    );
    let skill = format!(
        r#"// {name}: a tool skill in JavaScript.
// Return a string for success; throw {{ tag, val }} (a skill-error case) for errors.
import {{ log }} from "agent:skill/log@0.1.0";

const HELLO_SCHEMA = {schema};

export const tool = {{
  listTools() {{
    return [
      {{
        name: "hello",
        description: "Greet someone by name.",
        inputSchema: JSON.stringify(HELLO_SCHEMA),
        requiresApproval: false,
      }},
    ];
  }},
  callTool(name, input) {{
    let args;
    try {{
      args = JSON.parse(input);
    }} catch (e) {{
      throw {{ tag: "invalid-input", val: `input is not JSON: ${{e}}` }};
    }}
    if (name !== "hello") throw {{ tag: "not-found", val: `no tool ${{name}}` }};
    const who = typeof args.name === "string" ? args.name.trim() : "";
    if (!who) throw {{ tag: "invalid-input", val: "`name` is empty" }};
    log("debug", `greeting ${{who}}`);
    return `Hello, ${{who}}!`;
  }},
}};
"#,
        schema = HELLO_SCHEMA.trim()
    );
    let mut files = vec![
        ("package.json".into(), package),
        ("build.mjs".into(), build),
        ("src/skill.js".into(), skill),
        (format!("wit/{name}.wit"), world),
        ("schemas/hello.json".into(), HELLO_SCHEMA.into()),
        (
            "SKILL.yaml".into(),
            manifest(name, &format!("dist/{stem}.wasm")),
        ),
        (".gitignore".into(), "node_modules/\ndist/\n".into()),
    ];
    for (file, text) in WIT_FILES {
        files.push((format!("wit/deps/agent-skill/{file}"), (*text).to_string()));
    }
    files
}

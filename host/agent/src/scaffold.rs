//! `agent skill create`: a new skill of any type in Rust, JavaScript, Go or
//! Python, from the templates under host/agent/templates (embedded by
//! build.rs) plus what is the same in every language (manifest, schema, WIT).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use agent_runtime::contract::LATEST;

use crate::cli::{Lang, ScaffoldType, UsageError, exit};

include!(concat!(env!("OUT_DIR"), "/templates.rs"));

/// The latest WIT package (the repository's `wit/`), embedded so JavaScript,
/// Go and Python skills carry their own copy of the contract they are built
/// against (written by `agent skill create`, and by `agent skill build` when
/// missing).
pub(crate) const WIT_FILES: &[(&str, &str)] = &[
    ("types.wit", include_str!("../../../wit/types.wit")),
    ("imports.wit", include_str!("../../../wit/imports.wit")),
    ("exports.wit", include_str!("../../../wit/exports.wit")),
    ("worlds.wit", include_str!("../../../wit/worlds.wit")),
];

/// Where this binary's SDK was when it was built.
const BUILT_SDK: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../sdk-rust");

pub fn create(
    name: &str,
    kind: ScaffoldType,
    lang: Lang,
    parent: Option<&Path>,
    sdk: Option<&Path>,
) -> Result<u8> {
    if !agent_manifest::is_skill_name(name) {
        return Err(UsageError(format!(
            "skill name `{name}`: use lowercase letters, digits and single hyphens (e.g. `my-skill`)"
        ))
        .into());
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
    let sdk = match lang {
        Lang::Rust => Some(rust_sdk(sdk)?),
        _ => None,
    };
    let files = files(name, &stem, kind, lang, sdk.as_deref())?;
    for (rel, content) in &files {
        let path = dir.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).with_context(|| format!("creating {}", p.display()))?;
        }
        std::fs::write(&path, content).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "created {} (a {} {} skill)",
        dir.display(),
        lang.display(),
        kind.as_str()
    );
    let missing = crate::build::toolchain(lang, &dir);
    if !missing.is_empty() {
        println!("first install what building it needs:");
        for m in &missing {
            println!("  {}    # {}", m.install, m.what);
        }
    }
    println!("next:");
    println!("  agent keys generate --trust        # once: your signing key");
    println!("  agent skill build {}", dir.display());
    println!("  agent skill test {}", dir.display());
    match kind {
        ScaffoldType::Tool => println!(
            "  agent skill call {} hello --input '{{\"name\":\"world\"}}'",
            dir.display()
        ),
        ScaffoldType::Workflow => println!(
            "  agent workflow run word-count --skills {} --input '{{\"text\":\"one two\"}}'",
            dir.display()
        ),
        ScaffoldType::SecurityRule => {
            println!("  agent security-audit --skills {} .", dir.display())
        }
        ScaffoldType::Prompt | ScaffoldType::Transform => {
            println!("  agent run --skills {} \"hello\"", dir.display())
        }
    }
    Ok(exit::OK)
}

/// Every file of a new skill: the templates of `lang` (common, then the
/// type's), then what is the same in every language: the manifest, the tool
/// schema, and for JavaScript, Go and Python the WIT world and package.
fn files(
    name: &str,
    stem: &str,
    kind: ScaffoldType,
    lang: Lang,
    sdk: Option<&Path>,
) -> Result<Vec<(String, String)>> {
    let sdk = sdk.map(|p| p.display().to_string()).unwrap_or_default();
    let fill = |text: &str| {
        text.replace("{{name}}", name)
            .replace("{{contract}}", agent_runtime::contract::LATEST.as_str())
            .replace("{{stem}}", stem)
            .replace("{{sdk}}", &sdk)
    };
    let mut files = Vec::new();
    for part in ["common", kind.as_str()] {
        let prefix = format!("{}/{part}/", lang.as_str());
        for (path, text) in TEMPLATES {
            if let Some(rel) = path.strip_prefix(&prefix) {
                files.push((rel.to_string(), fill(text)));
            }
        }
    }
    if !files
        .iter()
        .any(|(rel, _)| !rel.starts_with('.') && !rel.ends_with("gitignore"))
    {
        bail!(
            "this agent binary has no {} template for a {} skill",
            lang.display(),
            kind.as_str()
        );
    }
    files.push(("SKILL.yaml".into(), manifest(name, stem, kind)));
    if kind == ScaffoldType::Tool {
        files.push(("schemas/hello.json".into(), HELLO_SCHEMA.into()));
    }
    if lang != Lang::Rust {
        files.push(("wit/world.wit".into(), world(name, kind)));
        for (file, text) in WIT_FILES {
            files.push((format!("wit/deps/agent-skill/{file}"), (*text).to_string()));
        }
    }
    Ok(files)
}

/// The skill's own world: the `log` import (every template logs) and the
/// export of its type. Capability imports are added here by the author,
/// each with its permission in SKILL.yaml.
fn world(name: &str, kind: ScaffoldType) -> String {
    format!(
        "package local:{name}@0.1.0;\n\n\
         /// What this skill imports and exports. Import only what the code uses:\n\
         /// each capability import needs its permission in SKILL.yaml\n\
         /// (exec: shell:exec, http: net:fetch, llm: llm:call, git: git:read, ...).\n\
         world {name} {{\n    import {};\n    export {};\n}}\n",
        LATEST.interface("log"),
        LATEST.interface(kind.interface())
    )
}

fn manifest(name: &str, stem: &str, kind: ScaffoldType) -> String {
    let head = format!(
        "name: {name}\nversion: 0.1.0\ndescription: {name}, a {} skill\ntypes: [{}]\n\
         # Add what the code needs, e.g. file:read, or shell:exec with `exec: [git]`.\n\
         permissions: []\n\nimplementation:\n  component: dist/{stem}.wasm\n",
        kind.as_str(),
        kind.as_str()
    );
    let tail = match kind {
        ScaffoldType::Tool => {
            "\ntools:\n  - name: hello\n    description: Greet someone by name.\n    \
             input_schema_file: schemas/hello.json\n    requires_approval: false\n"
        }
        ScaffoldType::Prompt => {
            "\n# When the skill joins a run (any of these; none: only with --skills).\n\
             triggers:\n  keywords: [\"guidelines\"]\n\nprompt:\n  max_context_tokens: 500\n"
        }
        ScaffoldType::SecurityRule => {
            "\nsecurity_rules:\n  scanners:\n    - name: hardcoded-password\n      \
             description: Passwords written into source or configuration\n"
        }
        ScaffoldType::Workflow | ScaffoldType::Transform => "",
    };
    format!("{head}{tail}")
}

/// The `hello` tool's input schema (every language's tool template returns
/// this same value from `list-tools`).
const HELLO_SCHEMA: &str = r#"{
  "type": "object",
  "properties": {
    "name": { "type": "string", "description": "Who to greet" }
  },
  "required": ["name"],
  "additionalProperties": false
}
"#;

fn rust_sdk(sdk: Option<&Path>) -> Result<PathBuf> {
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
    Ok(sdk)
}

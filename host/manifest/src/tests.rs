//! Tests of the whole manifest: the specification's example, and every
//! rejection with its exact field, line and message.

use std::path::{Path, PathBuf};

use semver::{Version, VersionReq};

use crate::*;

const FILE: &str = "skills/demo/SKILL.yaml";

/// A valid tool skill of six lines: text appended to it starts on line 7.
const BASE: &str = "name: demo
version: 0.1.0
description: A demo skill
types: [tool]
implementation:
  component: demo.wasm
";

fn parse(text: &str) -> Result<Manifest, ManifestError> {
    Manifest::parse(text, Path::new(FILE))
}

fn with(extra: &str) -> String {
    format!("{BASE}{extra}")
}

#[track_caller]
fn check(text: &str, line: Option<usize>, field: &str, message: &str) {
    let err = parse(text).expect_err("the manifest should be rejected");
    assert_eq!(err.kind, ErrorKind::Invalid, "{err}");
    assert_eq!(err.file, PathBuf::from(FILE));
    assert_eq!(err.field.as_deref(), Some(field), "{err}");
    assert_eq!(err.message, message, "{err}");
    assert_eq!(err.line, line, "{err}");
}

fn kubernetes_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kubernetes")
}

fn paths(list: &[&str]) -> Vec<PathBuf> {
    list.iter().map(PathBuf::from).collect()
}

// ---------------------------------------------------------------- the example

#[test]
fn kubernetes_example_parses_with_every_field() {
    let m = Manifest::load_dir(&kubernetes_dir()).unwrap();
    assert_eq!(m.name, "kubernetes");
    assert_eq!(m.version, Version::new(1, 2, 0));
    assert_eq!(
        m.description,
        "Kubernetes operations, troubleshooting, and best practices"
    );
    assert_eq!(m.author.as_deref(), Some("community"));
    assert_eq!(m.license.as_deref(), Some("MIT"));
    assert_eq!(
        m.homepage.as_deref(),
        Some("https://github.com/aiagent-skills/kubernetes")
    );
    assert_eq!(
        m.types,
        [
            SkillType::Tool,
            SkillType::Prompt,
            SkillType::SecurityRule,
            SkillType::Workflow
        ]
    );
    assert_eq!(
        m.triggers,
        Triggers {
            files: [
                "*.yaml",
                "Dockerfile",
                "k8s/",
                "helm/",
                "kustomization.yaml"
            ]
            .map(String::from)
            .to_vec(),
            keywords: ["kubernetes", "k8s", "kubectl", "pod", "deployment", "helm"]
                .map(String::from)
                .to_vec(),
            modes: vec![Mode::Interactive, Mode::Headless, Mode::Wiki],
            languages: vec!["yaml".to_string(), "dockerfile".to_string()],
        }
    );
    assert_eq!(
        m.permissions,
        [
            Permission::ShellExec,
            Permission::FileRead,
            Permission::NetFetch,
            Permission::EnvRead
        ]
    );
    assert_eq!(m.exec, ["kubectl", "helm"]);
    assert_eq!(
        m.hosts.iter().map(ToString::to_string).collect::<Vec<_>>(),
        [
            "https://kubernetes.default.svc",
            "https://*.k8s.example.com:6443"
        ]
    );
    assert_eq!(m.env, ["KUBECONFIG"]);
    assert_eq!(
        m.dependencies,
        [Dependency {
            name: "docker".into(),
            version: VersionReq::parse(">=1.0.0").unwrap(),
            optional: true,
        }]
    );
    assert_eq!(
        m.implementation,
        Some(Implementation {
            component: PathBuf::from("kubernetes.wasm")
        })
    );
    assert_eq!(
        m.prompt,
        Some(PromptConfig {
            system_prompt_file: Some(PathBuf::from("prompts/system.md")),
            context_files: paths(&[
                "prompts/troubleshooting.md",
                "prompts/best-practices.md",
                "prompts/security.md"
            ]),
            max_context_tokens: 4000,
        })
    );
    assert_eq!(
        m.tools,
        [
            ToolDecl {
                name: "kubectl_get".into(),
                description: "Get Kubernetes resources".into(),
                input_schema_file: Some(PathBuf::from("schemas/kubectl_get.json")),
                requires_approval: false,
                files: ToolFiles::Read,
                platforms: vec![],
            },
            ToolDecl {
                name: "kubectl_apply".into(),
                description: "Apply a Kubernetes manifest".into(),
                input_schema_file: Some(PathBuf::from("schemas/kubectl_apply.json")),
                requires_approval: true,
                files: ToolFiles::Write,
                platforms: vec![],
            },
            ToolDecl {
                name: "kubectl_logs".into(),
                description: "Get container logs from a pod".into(),
                input_schema_file: Some(PathBuf::from("schemas/kubectl_logs.json")),
                requires_approval: false,
                files: ToolFiles::Read,
                platforms: vec![],
            },
        ]
    );
    assert_eq!(
        m.security_rules,
        Some(SecurityRules {
            sast_rules_file: Some(PathBuf::from("rules/sast.yaml")),
            scanners: vec![ScannerDecl {
                name: "k8s-manifest-scanner".into(),
                description: Some("Privileged pods, missing resource limits, host mounts".into()),
            }],
            overrides_file: Some(PathBuf::from("rules/overrides.yaml")),
        })
    );
    assert_eq!(
        m.wiki,
        Some(Wiki {
            sections: vec![WikiSection {
                title: "Kubernetes Architecture".into(),
                template: Some(PathBuf::from("wiki/k8s-architecture.md")),
                analyzer: Some("k8s-wiki".into()),
            }],
            diagrams: vec![WikiDiagram {
                kind: "deployment-topology".into(),
                template: PathBuf::from("wiki/deployment-diagram.mermaid.tmpl"),
            }],
            classifiers: Vec::new(),
        })
    );
    assert_eq!(
        m.compatibility,
        Compatibility {
            agent_version: Some(VersionReq::parse(">=0.1.0").unwrap()),
            platforms: vec![Platform::Linux, Platform::Darwin],
        }
    );

    assert!(m.declares(Permission::NetFetch));
    assert!(!m.declares(Permission::FileWrite));
    assert!(m.has_type(SkillType::SecurityRule));
    assert!(!m.has_type(SkillType::Transform));
    assert!(!m.exec_unrestricted());
    assert!(m.warnings().is_empty());
    assert!(m.allows_program("kubectl"));
    assert!(!m.allows_program("/usr/bin/kubectl"));
    assert!(!m.allows_program("sh"));
    assert!(m.allows_host("https", "kubernetes.default.svc", None));
    assert!(m.allows_host("https", "prod.k8s.example.com", Some(6443)));
    assert!(!m.allows_host("https", "prod.k8s.example.com", None));
    assert!(!m.allows_host("https", "example.com", None));
    assert!(m.allows_env("KUBECONFIG"));
    assert!(!m.allows_env("HOME"));
    assert_eq!(
        m.tool("kubectl_apply").map(|t| t.requires_approval),
        Some(true)
    );
    assert!(m.tool("kubectl_delete").is_none());
    assert_eq!(
        m.component_path(Path::new("/skills/kubernetes")),
        Some(PathBuf::from("/skills/kubernetes/kubernetes.wasm"))
    );
}

#[test]
fn from_file_and_load_dir_agree() {
    let dir = kubernetes_dir();
    let a = Manifest::from_file(&dir.join(MANIFEST_FILE)).unwrap();
    let b = Manifest::load_dir(&dir).unwrap();
    assert_eq!(a, b);
}

#[test]
fn serializes_to_json_in_manifest_spelling() {
    let m = Manifest::load_dir(&kubernetes_dir()).unwrap();
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json["name"], "kubernetes");
    assert_eq!(json["version"], "1.2.0");
    assert_eq!(
        json["types"],
        serde_json::json!(["tool", "prompt", "security-rule", "workflow"])
    );
    assert_eq!(
        json["permissions"],
        serde_json::json!(["shell:exec", "file:read", "net:fetch", "env:read"])
    );
    assert_eq!(json["hosts"][1], "https://*.k8s.example.com:6443");
    assert_eq!(json["dependencies"][0]["version"], ">=1.0.0");
    assert_eq!(json["implementation"]["component"], "kubernetes.wasm");
    assert_eq!(
        json["triggers"]["modes"],
        serde_json::json!(["interactive", "headless", "wiki"])
    );
    assert_eq!(json["wiki"]["diagrams"][0]["type"], "deployment-topology");
    assert_eq!(
        json["compatibility"]["platforms"],
        serde_json::json!(["linux", "darwin"])
    );
    assert_eq!(json["compatibility"]["agent_version"], ">=0.1.0");
}

#[test]
fn optional_fields_take_their_defaults() {
    let m = parse(&with(
        "dependencies:
  - name: docker
tools:
  - name: t
    description: d
",
    ))
    .unwrap();
    assert_eq!(m.author, None);
    assert!(m.triggers.is_empty());
    assert!(m.permissions.is_empty());
    assert_eq!(m.dependencies[0].version, VersionReq::STAR);
    assert!(!m.dependencies[0].optional);
    assert!(!m.tools[0].requires_approval);
    assert_eq!(m.tools[0].input_schema_file, None);
    assert_eq!(m.prompt, None);
    assert_eq!(m.compatibility, Compatibility::default());

    let prompt = parse(
        "name: ddd-expert
version: 1.0.0
description: Domain-Driven Design expertise
types: [prompt]
permissions: []
prompt:
  system_prompt_file: prompts/system.md
",
    )
    .unwrap();
    assert_eq!(
        prompt.prompt.map(|p| p.max_context_tokens),
        Some(DEFAULT_MAX_CONTEXT_TOKENS)
    );
    assert_eq!(prompt.implementation, None);
}

#[test]
fn null_values_count_as_absent() {
    let m = parse(&with("permissions:\nauthor: ~\n")).unwrap();
    assert!(m.permissions.is_empty());
    assert_eq!(m.author, None);
}

// ---------------------------------------------------------------- file and YAML errors

#[test]
fn display_reads_like_a_compiler_diagnostic() {
    let text = "name: k8s
version: 1.0.0
description: Kubernetes
types: [tool]
implementation:
  component: k8s.wasm
exec: [kubectl]
#
#
#
#
#
permissions:
  - file:read
  - shell:execute
";
    let err = Manifest::parse(text, Path::new("skills/k8s/SKILL.yaml")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "skills/k8s/SKILL.yaml:15: field `permissions[1]`: unknown permission `shell:execute` (expected one of: file:read, file:write, shell:exec, net:fetch, llm:call, git:read, git:write, env:read, env:write, skill:invoke)"
    );
}

#[test]
fn a_missing_file_is_an_io_error() {
    let dir = kubernetes_dir().join("no-such-skill");
    let err = Manifest::load_dir(&dir).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Io);
    assert_eq!(err.file, dir.join("SKILL.yaml"));
    assert_eq!(err.line, None);
    assert_eq!(err.field, None);
    assert!(
        err.message.starts_with("cannot read the manifest: "),
        "{err}"
    );
}

#[test]
fn invalid_utf8_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(MANIFEST_FILE);
    std::fs::write(&path, b"name: demo\nversion: 0.1.0\ndescription: caf\xe9\n").unwrap();
    let err = Manifest::from_file(&path).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Syntax);
    assert_eq!(err.line, Some(3));
    assert_eq!(err.message, "the manifest is not valid UTF-8");
}

#[test]
fn an_oversized_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(MANIFEST_FILE);
    let mut text = with("");
    text.push_str(&"#".repeat(MAX_MANIFEST_BYTES as usize));
    std::fs::write(&path, text).unwrap();
    let err = Manifest::from_file(&path).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Io);
    assert_eq!(err.message, "the manifest is larger than 1048576 bytes");
}

#[test]
fn a_yaml_syntax_error_names_its_line() {
    let err = parse(&with("tools:\n  - name: a\n   description: b\n")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Syntax);
    assert_eq!(err.field, None);
    assert_eq!(err.line, Some(9));
    assert_eq!(
        err.to_string(),
        "skills/demo/SKILL.yaml:9: YAML syntax error at column 15: while parsing a block collection, did not find expected '-' indicator"
    );
}

#[test]
fn an_empty_manifest_says_what_it_needs() {
    let err = parse("# nothing here\n").unwrap_err();
    assert_eq!(err.kind, ErrorKind::Syntax);
    assert_eq!(
        err.to_string(),
        "skills/demo/SKILL.yaml: the manifest is empty (expected a mapping with at least name, version, description and types)"
    );
}

#[test]
fn the_root_must_be_a_mapping() {
    let err = parse("- name: demo\n").unwrap_err();
    assert_eq!(err.kind, ErrorKind::Invalid);
    assert_eq!(
        err.to_string(),
        "skills/demo/SKILL.yaml:1: expected a mapping of manifest fields (name, version, description, types, ...), found a list"
    );
}

#[test]
fn a_second_document_is_refused() {
    let err = parse(&with("---\nname: other\n")).unwrap_err();
    assert_eq!(err.kind, ErrorKind::Syntax);
    assert_eq!(err.line, Some(7));
    assert_eq!(
        err.message,
        "a second YAML document (`---`); a manifest holds exactly one"
    );
}

// ---------------------------------------------------------------- keys

#[test]
fn an_unknown_top_level_key_names_its_line() {
    check(
        &with("author: me\nentry_point: skill.star\n"),
        Some(8),
        "entry_point",
        "unknown field `entry_point` (expected one of: name, version, description, author, license, homepage, types, triggers, permissions, exec, exec_timeout, hosts, env, dependencies, implementation, prompt, tools, security_rules, wiki, compatibility, constraints)",
    );
}

#[test]
fn an_unknown_nested_key_names_its_path_and_line() {
    check(
        &with(
            "tools:\n  - name: a\n    description: b\n  - name: c\n    description: d\n    approval: true\n",
        ),
        Some(12),
        "tools[1].approval",
        "unknown field `approval` (expected one of: name, description, input_schema_file, requires_approval, files, platforms)",
    );
    check(
        &with("triggers:\n  file: ['*.rs']\n"),
        Some(8),
        "triggers.file",
        "unknown field `file` (expected one of: files, keywords, modes, languages)",
    );
}

#[test]
fn a_duplicate_key_is_refused() {
    check(
        &with("license: MIT\nlicense: Apache-2.0\n"),
        Some(8),
        "license",
        "duplicate key `license` (first given at line 7)",
    );
}

#[test]
fn a_starlark_backend_is_explained() {
    check(
        "name: demo
version: 0.1.0
description: A demo skill
types: [tool]
implementation:
  backend: starlark
  entrypoint: skill.star
",
        Some(6),
        "implementation.backend",
        "`backend` is not supported: skills are WebAssembly components, there is no starlark, process or plugin backend; set `implementation.component` to the skill's `.wasm` file, relative to the skill directory",
    );
    check(
        "name: demo
version: 0.1.0
description: A demo skill
types: [tool]
implementation:
  entrypoint: skill.star
",
        Some(6),
        "implementation.entrypoint",
        "`entrypoint` is not supported: skills are WebAssembly components, there is no starlark, process or plugin backend; set `implementation.component` to the skill's `.wasm` file, relative to the skill directory",
    );
}

#[test]
fn a_scanner_entrypoint_is_explained() {
    check(
        "name: hipaa
version: 1.0.0
description: HIPAA rules
types: [security-rule]
security_rules:
  scanners:
    - name: phi-detector
      entrypoint: scanners/phi-detector.star
",
        Some(8),
        "security_rules.scanners[0].entrypoint",
        "`entrypoint` is not supported: scanners are exported by the skill's WebAssembly component (the `scanner` interface); give each scanner a `name` and `description` and set `implementation.component`",
    );
}

#[test]
fn values_of_the_wrong_shape_are_refused() {
    check(
        &with("author:\n  - a\n"),
        Some(7),
        "author",
        "expected a string, found a list",
    );
    check(
        &with("tools: {}\n"),
        Some(7),
        "tools",
        "expected a list, found a mapping",
    );
    check(
        &with("prompt: yes\n"),
        Some(7),
        "prompt",
        "expected a mapping with keys system_prompt_file, context_files, max_context_tokens, found `yes`",
    );
}

// ---------------------------------------------------------------- identity

#[test]
fn the_name_must_be_lowercase_with_single_hyphens() {
    let message = |n: &str| {
        format!(
            "`{n}` is not a valid skill name (expected lowercase letters, digits and single hyphens, e.g. `kubernetes` or `apple-dev`)"
        )
    };
    for bad in ["Kubernetes", "apple--dev", "apple_dev", "-apple", "apple-"] {
        check(
            &BASE.replace("name: demo", &format!("name: {bad}")),
            Some(1),
            "name",
            &message(bad),
        );
    }
    let long = "a".repeat(65);
    check(
        &BASE.replace("name: demo", &format!("name: {long}")),
        Some(1),
        "name",
        &format!("`{long}` is 65 characters long; a skill name has at most 64"),
    );
    assert!(parse(&BASE.replace("name: demo", &format!("name: {}", "a".repeat(64)))).is_ok());
}

#[test]
fn required_fields_are_named_when_missing() {
    check(
        &BASE.replace("name: demo\n", ""),
        None,
        "name",
        "is missing (expected the skill's name, e.g. `kubernetes`)",
    );
    check(
        &BASE.replace("types: [tool]\n", ""),
        None,
        "types",
        "is missing (expected a list of skill types: tool, prompt, workflow, security-rule, transform)",
    );
    check(
        &BASE.replace("description: A demo skill", "description:"),
        Some(3),
        "description",
        "has no value (expected one line saying what the skill does)",
    );
}

#[test]
fn the_version_must_be_semver() {
    check(
        &BASE.replace("version: 0.1.0", "version: 1.2"),
        Some(2),
        "version",
        "`1.2` is not a semantic version (expected MAJOR.MINOR.PATCH such as `1.2.0`): unexpected end of input while parsing minor version number",
    );
}

#[test]
fn the_description_is_one_non_empty_line() {
    check(
        &BASE.replace("description: A demo skill", "description: '  '"),
        Some(3),
        "description",
        "must not be empty (expected one line saying what the skill does)",
    );
    check(
        &BASE.replace(
            "description: A demo skill",
            "description: |\n  two\n  lines",
        ),
        Some(3),
        "description",
        "must be a single line (expected one line saying what the skill does)",
    );
    let folded = parse(&BASE.replace(
        "description: A demo skill",
        "description: >\n  folded\n  text",
    ))
    .unwrap();
    assert_eq!(folded.description, "folded text");
}

#[test]
fn the_homepage_must_be_a_url() {
    check(
        &with("homepage: github.com/x\n"),
        Some(7),
        "homepage",
        "`github.com/x` is not a URL (expected an http or https URL)",
    );
}

// ---------------------------------------------------------------- types

#[test]
fn types_are_known_unique_and_not_empty() {
    check(
        &BASE.replace("types: [tool]", "types: []"),
        Some(4),
        "types",
        "must list at least one skill type (expected one or more of: tool, prompt, workflow, security-rule, transform, hook)",
    );
    check(
        &BASE.replace("types: [tool]", "types:\n  - tool\n  - tools"),
        Some(6),
        "types[1]",
        "unknown skill type `tools` (expected one of: tool, prompt, workflow, security-rule, transform, hook)",
    );
    check(
        &BASE.replace("types: [tool]", "types:\n  - tool\n  - tool"),
        Some(6),
        "types[1]",
        "duplicate skill type `tool` (first listed at line 5)",
    );
}

/// Contract 0.2.0: a skill that only listens to lifecycle hooks declares
/// `types: [hook]` — no prompt file, no other type to pose as — and, like
/// every component type, needs its component.
#[test]
fn a_hook_skill_stands_alone() {
    let m = parse(&BASE.replace("types: [tool]", "types: [hook]")).expect("a hook skill");
    assert_eq!(m.types, [SkillType::Hook]);
    assert_eq!(SkillType::Hook.interface(), "hooks");
    check(
        "name: demo\nversion: 0.1.0\ndescription: A demo skill\ntypes: [hook]\n",
        Some(4),
        "types[0]",
        "type `hook` needs `implementation.component`: the WebAssembly component that exports the `hooks` interface",
    );
}

#[test]
fn each_type_needs_what_serves_it() {
    let no_impl = "name: demo\nversion: 0.1.0\ndescription: A demo skill\n";
    check(
        &format!("{no_impl}types: [tool]\n"),
        Some(4),
        "types[0]",
        "type `tool` needs `implementation.component`: the WebAssembly component that exports the `tool` interface",
    );
    check(
        &format!("{no_impl}types: [prompt, transform]\nprompt:\n  system_prompt_file: p.md\n"),
        Some(4),
        "types[1]",
        "type `transform` needs `implementation.component`: the WebAssembly component that exports the `transform` interface",
    );
    check(
        &format!("{no_impl}types:\n  - prompt\nprompt:\n  context_files: [a.md]\n"),
        Some(5),
        "types[0]",
        "type `prompt` needs `prompt.system_prompt_file`, or an `implementation.component` that exports the `prompt` interface",
    );
    check(
        &format!("{no_impl}types: [security-rule]\n"),
        Some(4),
        "types[0]",
        "type `security-rule` needs a `security_rules` section with a `sast_rules_file` or `scanners`",
    );
    check(
        &format!(
            "{no_impl}types: [security-rule]\nsecurity_rules:\n  scanners:\n    - name: phi\n"
        ),
        Some(6),
        "security_rules.scanners",
        "scanners are exported by the skill's WebAssembly component (the `scanner` interface); set `implementation.component`",
    );
    let declarative = parse(&format!(
        "{no_impl}types: [security-rule]\nsecurity_rules:\n  sast_rules_file: rules/sast.yaml\n"
    ))
    .unwrap();
    assert_eq!(declarative.implementation, None);
}

#[test]
fn sections_need_their_type() {
    check(
        &(BASE.replace("types: [tool]", "types: [workflow]")
            + "tools:\n  - name: a\n    description: b\n"),
        Some(7),
        "tools",
        "a `tools` section needs type `tool` in `types`; add it or remove the section",
    );
    check(
        &with("prompt:\n  system_prompt_file: p.md\n"),
        Some(7),
        "prompt",
        "a `prompt` section needs type `prompt` in `types`; add it or remove the section",
    );
    check(
        &with("security_rules:\n  sast_rules_file: r.yaml\n"),
        Some(7),
        "security_rules",
        "a `security_rules` section needs type `security-rule` in `types`; add it or remove the section",
    );
}

// ---------------------------------------------------------------- permissions and scopes

#[test]
fn permissions_are_known_and_unique() {
    check(
        &with("permissions:\n  - file:read\n  - file:read\n"),
        Some(9),
        "permissions[1]",
        "duplicate permission `file:read` (first listed at line 8)",
    );
    check(
        &with("permissions: [file:read, network]\n"),
        Some(7),
        "permissions[1]",
        "unknown permission `network` (expected one of: file:read, file:write, shell:exec, net:fetch, llm:call, git:read, git:write, env:read, env:write, skill:invoke)",
    );
}

#[test]
fn exec_lists_programs_and_needs_shell_exec() {
    check(
        &with("permissions: [shell:exec]\nexec:\n  - kubectl\n  - ./run.sh\n"),
        Some(10),
        "exec[1]",
        "`./run.sh` is not a program name (expected a bare name looked up on PATH, such as `kubectl` or `clang-format`, without `/`, whitespace or shell metacharacters; or an absolute path such as `/usr/bin/xcrun`)",
    );
    check(
        &with("permissions: [shell:exec]\nexec: [\"kubectl; rm -rf /\"]\n"),
        Some(8),
        "exec[0]",
        "`kubectl; rm -rf /` is not a program name (expected a bare name looked up on PATH, such as `kubectl` or `clang-format`, without `/`, whitespace or shell metacharacters; or an absolute path such as `/usr/bin/xcrun`)",
    );
    check(
        &with("permissions: [shell:exec]\nexec: [git, git]\n"),
        Some(8),
        "exec[1]",
        "duplicate program `git` (first listed at line 8)",
    );
    check(
        &with("permissions: [file:read]\nexec: [kubectl]\n"),
        Some(8),
        "exec",
        "listing programs needs the `shell:exec` permission; add it to `permissions` or remove `exec`",
    );
    let abs = parse(&with(
        "permissions: [shell:exec]\nexec: [/usr/bin/xcrun, swift]\n",
    ))
    .unwrap();
    assert_eq!(abs.exec, ["/usr/bin/xcrun", "swift"]);
}

#[test]
fn shell_exec_without_exec_is_allowed_but_flagged() {
    let m = parse(&with("permissions: [shell:exec, file:write]\n")).unwrap();
    assert!(m.exec_unrestricted());
    assert!(m.allows_program("anything"));
    assert_eq!(
        m.warnings(),
        [
            "skill `demo` declares shell:exec without an `exec` list, so it may run any program",
            "skill `demo` may both change files and run programs in the project",
        ]
    );
    let none = parse(BASE).unwrap();
    assert!(!none.exec_unrestricted());
    assert!(!none.allows_program("git"));
}

#[test]
fn hosts_are_origin_patterns_and_go_with_net_fetch() {
    check(
        &with(
            "permissions: [net:fetch]\nhosts:\n  - https://api.example.com\n  - https://api.example.com/v1\n",
        ),
        Some(10),
        "hosts[1]",
        "`https://api.example.com/v1` has more than an origin (a path, query, user info or whitespace); expected scheme://host[:port], e.g. `https://api.example.com` or `https://*.example.org:8443`",
    );
    check(
        &with("permissions: [net:fetch]\nhosts: [\"https://*.com\"]\n"),
        Some(8),
        "hosts[0]",
        "`https://*.com` is too broad: a `*.` wildcard must be followed by at least two labels, e.g. `*.example.org`",
    );
    check(
        &with(
            "permissions: [net:fetch]\nhosts: [\"https://A.example.com\", \"https://a.example.com:443\"]\n",
        ),
        Some(8),
        "hosts[1]",
        "duplicate host `https://a.example.com:443` (first listed at line 8)",
    );
    check(
        &with("hosts: [\"https://api.example.com\"]\n"),
        Some(7),
        "hosts",
        "listing hosts needs the `net:fetch` permission; add it to `permissions` or remove `hosts`",
    );
    check(
        &with("permissions:\n  - llm:call\n  - net:fetch\n"),
        Some(9),
        "permissions[1]",
        "`net:fetch` needs a `hosts` list: the origins the skill may call, e.g. `hosts: [\"https://api.example.com\"]`",
    );
}

#[test]
fn env_names_variables_and_goes_with_env_permissions() {
    check(
        &with("permissions: [env:read]\nenv: [KUBECONFIG, MY-VAR]\n"),
        Some(8),
        "env[1]",
        "`MY-VAR` is not a valid environment variable name (expected letters, digits and `_`, not starting with a digit, e.g. `KUBECONFIG`)",
    );
    check(
        &with("env: [KUBECONFIG]\n"),
        Some(7),
        "env",
        "listing environment variables needs the `env:read` or `env:write` permission; add one to `permissions` or remove `env`",
    );
    check(
        &with("permissions: [env:write]\n"),
        Some(7),
        "permissions[0]",
        "`env:write` needs an `env` list: the variables it covers, e.g. `env: [KUBECONFIG]`",
    );
    let m = parse(&with(
        "permissions: [env:write, shell:exec]\nenv: [GOFLAGS]\n",
    ))
    .unwrap();
    assert!(m.allows_env("GOFLAGS"));
}

// ---------------------------------------------------------------- triggers

#[test]
fn triggers_are_validated() {
    check(
        &with("triggers:\n  files: ['*.rs', 'src/[a']\n"),
        Some(8),
        "triggers.files[1]",
        "`src/[a` is not a valid glob: unclosed character class; missing ']'",
    );
    check(
        &with("triggers:\n  modes:\n    - interactive\n    - ci\n"),
        Some(10),
        "triggers.modes[1]",
        "unknown mode `ci` (expected one of: interactive, headless, wiki, security-audit)",
    );
    check(
        &with("triggers:\n  modes: [wiki, wiki]\n"),
        Some(8),
        "triggers.modes[1]",
        "duplicate mode `wiki` (first listed at line 8)",
    );
    check(
        &with("triggers:\n  keywords: [k8s, '']\n"),
        Some(8),
        "triggers.keywords[1]",
        "must not be empty (expected a word that activates the skill)",
    );
    check(
        &with("triggers:\n  languages:\n    -\n"),
        Some(9),
        "triggers.languages[0]",
        "expected a string, found nothing",
    );
    let m = parse(&with(
        "triggers:\n  modes: [security-audit]\n  languages: [swift]\n",
    ))
    .unwrap();
    assert_eq!(m.triggers.modes, [Mode::SecurityAudit]);
}

// ---------------------------------------------------------------- dependencies

#[test]
fn dependencies_are_validated() {
    check(
        &with("dependencies:\n  - name: Docker\n"),
        Some(8),
        "dependencies[0].name",
        "`Docker` is not a valid skill name (expected lowercase letters, digits and single hyphens, e.g. `kubernetes` or `apple-dev`)",
    );
    check(
        &with("dependencies:\n  - name: docker\n    version: '>=1.0.0 <2'\n"),
        Some(9),
        "dependencies[0].version",
        "`>=1.0.0 <2` is not a version requirement (expected e.g. `>=1.0.0` or `^2.1`): expected comma after patch version number, found '<'",
    );
    check(
        &with("dependencies:\n  - name: demo\n"),
        Some(8),
        "dependencies[0].name",
        "a skill cannot depend on itself (`demo`)",
    );
    check(
        &with(
            "dependencies:\n  - name: docker\n  - name: helm\n  - name: docker\n    optional: true\n",
        ),
        Some(10),
        "dependencies[2].name",
        "duplicate dependency `docker` (first listed at line 8)",
    );
    check(
        &with("dependencies:\n  - name: docker\n    optional: 'yes'\n"),
        Some(9),
        "dependencies[0].optional",
        "expected true or false, found the string `yes`",
    );
    check(
        &with("dependencies:\n  - version: '1'\n"),
        Some(8),
        "dependencies[0].name",
        "is missing (expected the name of the skill depended on)",
    );
}

// ---------------------------------------------------------------- tools

#[test]
fn a_tools_files_decide_its_mount_and_write_needs_approval() {
    let m = parse(&with(
        "tools:\n  - name: a\n    description: x\n    requires_approval: true\n    files: none\n  - name: b\n    description: y\n",
    ))
    .unwrap();
    assert_eq!(m.tools[0].files, ToolFiles::None);
    assert_eq!(m.tools[1].files, ToolFiles::Read);
    check(
        &with("tools:\n  - name: a\n    description: x\n    files: write\n"),
        Some(10),
        "tools[0].files",
        "`files: write` needs `requires_approval: true` (a tool that may change files asks first)",
    );
    check(
        &with("tools:\n  - name: a\n    description: x\n    files: all\n"),
        Some(10),
        "tools[0].files",
        "expected one of none, read, write, found `all`",
    );
}

#[test]
fn tools_are_validated() {
    check(
        &with("tools:\n  - name: kubectl-get\n    description: d\n"),
        Some(8),
        "tools[0].name",
        "`kubectl-get` is not a valid tool name (expected a lowercase letter followed by lowercase letters, digits and underscores, e.g. `kubectl_get`)",
    );
    check(
        &with(
            "tools:\n  - name: a\n    description: x\n  - name: b\n    description: y\n  - name: a\n    description: z\n",
        ),
        Some(12),
        "tools[2].name",
        "duplicate tool `a` (first listed at line 8)",
    );
    check(
        &with("tools:\n  - name: a\n    description: ''\n"),
        Some(9),
        "tools[0].description",
        "must not be empty (expected what the tool does)",
    );
    check(
        &with("tools:\n  - name: a\n"),
        Some(8),
        "tools[0].description",
        "is missing (expected what the tool does)",
    );
    check(
        &with("tools:\n  - name: a\n    description: b\n    requires_approval: 1\n"),
        Some(10),
        "tools[0].requires_approval",
        "expected true or false, found `1`",
    );
}

// ---------------------------------------------------------------- paths

#[test]
fn every_file_path_stays_inside_the_skill_directory() {
    let abs = |p: &str| {
        format!(
            "`{p}` is an absolute path (expected a path relative to the skill directory, e.g. `prompts/system.md`)"
        )
    };
    let up = |p: &str| {
        format!(
            "`{p}` leaves the skill directory (`..` is not allowed; expected a path relative to the skill directory)"
        )
    };
    check(
        &BASE.replace("component: demo.wasm", "component: ../other/demo.wasm"),
        Some(6),
        "implementation.component",
        &up("../other/demo.wasm"),
    );
    check(
        &BASE.replace("component: demo.wasm", "component: /opt/demo.wasm"),
        Some(6),
        "implementation.component",
        &abs("/opt/demo.wasm"),
    );
    check(
        &with("tools:\n  - name: a\n    description: b\n    input_schema_file: /etc/passwd\n"),
        Some(10),
        "tools[0].input_schema_file",
        &abs("/etc/passwd"),
    );
    let prompt_base = BASE.replace("types: [tool]", "types: [tool, prompt]");
    check(
        &format!("{prompt_base}prompt:\n  system_prompt_file: /p.md\n"),
        Some(8),
        "prompt.system_prompt_file",
        &abs("/p.md"),
    );
    check(
        &format!(
            "{prompt_base}prompt:\n  system_prompt_file: p.md\n  context_files:\n    - a.md\n    - x/../../b.md\n"
        ),
        Some(11),
        "prompt.context_files[1]",
        &up("x/../../b.md"),
    );
    let rules_base = BASE.replace("types: [tool]", "types: [tool, security-rule]");
    check(
        &format!("{rules_base}security_rules:\n  sast_rules_file: C:\\rules.yaml\n"),
        Some(8),
        "security_rules.sast_rules_file",
        &abs("C:\\rules.yaml"),
    );
    check(
        &format!(
            "{rules_base}security_rules:\n  sast_rules_file: r.yaml\n  overrides_file: ../o.yaml\n"
        ),
        Some(9),
        "security_rules.overrides_file",
        &up("../o.yaml"),
    );
    check(
        &with("wiki:\n  sections:\n    - title: T\n      template: /t.md\n"),
        Some(10),
        "wiki.sections[0].template",
        &abs("/t.md"),
    );
    check(
        &with("wiki:\n  diagrams:\n    - type: topology\n      template: ../d.tmpl\n"),
        Some(10),
        "wiki.diagrams[0].template",
        &up("../d.tmpl"),
    );
}

#[test]
fn the_component_is_a_wasm_file() {
    check(
        &BASE.replace("component: demo.wasm", "component: skill.star"),
        Some(6),
        "implementation.component",
        "`skill.star` is not a `.wasm` file (expected the path of the skill's WebAssembly component, e.g. `skill.wasm`)",
    );
}

// ---------------------------------------------------------------- prompt, wiki, compatibility

#[test]
fn max_context_tokens_is_a_positive_number() {
    let base = BASE.replace("types: [tool]", "types: [tool, prompt]");
    check(
        &format!("{base}prompt:\n  system_prompt_file: p.md\n  max_context_tokens: 0\n"),
        Some(9),
        "prompt.max_context_tokens",
        "must be greater than 0 (expected the token budget of this skill's prompt content, e.g. 4000)",
    );
    check(
        &format!("{base}prompt:\n  system_prompt_file: p.md\n  max_context_tokens: -5\n"),
        Some(9),
        "prompt.max_context_tokens",
        "expected a whole number, found `-5`",
    );
    check(
        &format!("{base}prompt:\n  system_prompt_file: p.md\n  max_context_tokens: 99999999999\n"),
        Some(9),
        "prompt.max_context_tokens",
        "`99999999999` is too large (expected a whole number up to 4294967295)",
    );
}

#[test]
fn wiki_classifiers_are_parsed_and_validated() {
    let m = parse(&with(
        "wiki:\n  classifiers:\n    - pattern: \"gen/**\"\n      class: generated\n    - pattern: \"**/*_spec.rb\"\n      class: test\n",
    ))
    .expect("manifest");
    let wiki = m.wiki.expect("wiki");
    assert_eq!(
        wiki.classifiers,
        vec![
            WikiClassifier {
                pattern: "gen/**".into(),
                class: WikiFileClass::Generated,
            },
            WikiClassifier {
                pattern: "**/*_spec.rb".into(),
                class: WikiFileClass::Test,
            },
        ]
    );
    check(
        &with("wiki:\n  classifiers:\n    - pattern: \"gen/**\"\n      class: vendored\n"),
        Some(10),
        "wiki.classifiers[0].class",
        "`vendored` is not a file class (expected one of: source, test, config, docs, generated)",
    );
    check(
        &with("wiki:\n  classifiers:\n    - pattern: \"gen/[a\"\n      class: generated\n"),
        Some(9),
        "wiki.classifiers[0].pattern",
        "`gen/[a` is not a valid glob: unclosed character class; missing ']'",
    );
    check(
        &with("wiki:\n  classifiers:\n    - class: test\n"),
        Some(9),
        "wiki.classifiers[0].pattern",
        "is missing (expected a glob of project files, relative to the project root, e.g. `gen/**`)",
    );
}

#[test]
fn wiki_entries_are_validated() {
    check(
        &with("wiki:\n  sections:\n    - title: Architecture\n"),
        Some(9),
        "wiki.sections[0]",
        "a wiki section needs a `template`, an `analyzer` or both",
    );
    check(
        &with("wiki:\n  sections:\n    - title: A\n      analyzer: analyzers/k8s-wiki.star\n"),
        Some(10),
        "wiki.sections[0].analyzer",
        "`analyzers/k8s-wiki.star` is not a valid analyzer (the name of a workflow of this skill) (expected lowercase letters, digits, `-` and `_`, at most 64 characters, e.g. `k8s-wiki`)",
    );
    check(
        &with(
            "wiki:\n  sections:\n    - title: A\n      template: a.md\n    - title: B\n      analyzer: b\n",
        ),
        Some(12),
        "wiki.sections[1].analyzer",
        "an analyzer names a workflow exported by this skill's component; add type `workflow` to `types`",
    );
    check(
        &with("wiki:\n  diagrams:\n    - template: d.tmpl\n"),
        Some(9),
        "wiki.diagrams[0].type",
        "is missing (expected the diagram's kind, e.g. `deployment-topology`)",
    );
}

#[test]
fn platforms_and_agent_version_are_validated() {
    check(
        &with("compatibility:\n  platforms: [linux, macos]\n"),
        Some(8),
        "compatibility.platforms[1]",
        "unknown platform `macos` (expected one of: linux, darwin, windows)",
    );
    check(
        &with("compatibility:\n  agent_version: 'at least 1'\n"),
        Some(8),
        "compatibility.agent_version",
        "`at least 1` is not a version requirement (expected e.g. `>=1.0.0`): unexpected character 'a' while parsing major version number",
    );
}

#[test]
fn compatibility_checks_version_and_platform() {
    let m = parse(&with(
        "compatibility:\n  agent_version: '>=1.0.0'\n  platforms: [darwin]\n",
    ))
    .unwrap();
    assert_eq!(
        m.check_compatibility(&Version::new(1, 4, 0), "darwin"),
        Ok(())
    );
    assert_eq!(
        m.check_compatibility(&Version::new(1, 4, 0), "macos"),
        Ok(())
    );
    assert_eq!(
        m.check_compatibility(&Version::new(0, 9, 0), "darwin"),
        Err(
            "skill `demo` 0.1.0 requires agent version >=1.0.0, but this is agent 0.9.0"
                .to_string()
        )
    );
    assert_eq!(
        m.check_compatibility(&Version::new(1, 0, 0), "linux"),
        Err("skill `demo` 0.1.0 supports only darwin, not linux".to_string())
    );
    let any = parse(BASE).unwrap();
    assert_eq!(
        any.check_compatibility(&Version::new(0, 0, 1), "freebsd"),
        Ok(())
    );
}

#[test]
fn resolve_path_stays_under_the_skill_directory() {
    let m = parse(BASE).unwrap();
    let dir = Path::new("/skills/demo");
    assert_eq!(
        m.resolve_path(dir, Path::new("schemas/a.json")),
        PathBuf::from("/skills/demo/schemas/a.json")
    );
    assert_eq!(
        m.resolve_path(dir, Path::new("./prompts/../x.md")),
        PathBuf::from("/skills/demo/prompts/x.md")
    );
    assert_eq!(
        m.resolve_path(dir, Path::new("/etc/passwd")),
        PathBuf::from("/skills/demo/etc/passwd")
    );
}

#[test]
fn skill_types_modes_and_platforms_round_trip() {
    for t in SkillType::ALL {
        assert_eq!(t.as_str().parse::<SkillType>(), Ok(t));
    }
    for m in Mode::ALL {
        assert_eq!(m.as_str().parse::<Mode>(), Ok(m));
    }
    for p in Platform::ALL {
        assert_eq!(p.as_str().parse::<Platform>(), Ok(p));
        assert_eq!(Platform::from_os(p.as_str()), Some(p));
    }
    assert_eq!(SkillType::SecurityRule.interface(), "scanner");
    assert_eq!(Platform::from_os("macos"), Some(Platform::Darwin));
    assert_eq!(Platform::from_os("freebsd"), None);
}

// ---------------------------------------------------------------- constraints

#[test]
fn constraints_section_parses() {
    let m = parse(&with(
        "constraints:
  priority: -3
  allowed_tools: [read_file, search]
  forbidden_tools: [exec]
  max_steps: 5
  max_duration: 5m
  context:
    review_mode: \"true\"
",
    ))
    .unwrap();
    let c = m.constraints.unwrap();
    assert_eq!(c.priority, -3);
    assert_eq!(
        c.allowed_tools,
        Some(vec!["read_file".to_string(), "search".to_string()])
    );
    assert_eq!(c.forbidden_tools, vec!["exec".to_string()]);
    assert_eq!(c.max_steps, Some(5));
    assert_eq!(c.max_duration, Some(std::time::Duration::from_secs(300)));
    assert_eq!(c.context, vec![("review_mode".into(), "true".into())]);
    assert_eq!(parse(BASE).unwrap().constraints, None);
}

#[test]
fn constraints_errors_name_the_field() {
    check(
        &with("constraints:\n  priority: high\n"),
        Some(8),
        "constraints.priority",
        "`high` is not a whole number (expected e.g. 10 or -5)",
    );
    check(
        &with("constraints:\n  max_duration: soon\n"),
        Some(8),
        "constraints.max_duration",
        "`soon` is not a duration (expected e.g. `30s`, `5m`, `1h` or `500ms`)",
    );
    check(
        &with("constraints:\n  max_steps: 0\n"),
        Some(8),
        "constraints.max_steps",
        "must be at least 1",
    );
    check(
        &with("constraints:\n  forbidden_tools: [exec, exec]\n"),
        Some(8),
        "constraints.forbidden_tools[1]",
        "duplicate forbidden tool `exec` (first listed at line 8)",
    );
    check(
        &with("constraints:\n  max_turns: 3\n"),
        Some(8),
        "constraints.max_turns",
        "unknown field `max_turns` (expected one of: priority, allowed_tools, forbidden_tools, max_steps, max_duration, context)",
    );
}

#[test]
fn env_write_refuses_loader_and_search_path_variables_with_the_line() {
    check(
        &with("permissions: [shell:exec, env:write]\nenv: [KUBECONFIG, LD_PRELOAD]\n"),
        Some(8),
        "env[1]",
        "`LD_PRELOAD` cannot be passed to programs with `env:write`: it makes the dynamic loader load or look up native code; remove it from `env` (loader, search-path and start-up variables are refused, see docs/permissions.md)",
    );
    check(
        &with("permissions: [shell:exec, env:write]\nenv: [PATH]\n"),
        Some(8),
        "env[0]",
        "`PATH` cannot be passed to programs with `env:write`: it changes which program a name runs; remove it from `env` (loader, search-path and start-up variables are refused, see docs/permissions.md)",
    );
    // Reading them is another matter: env:read alone may name PATH.
    let m = parse(&with("permissions: [env:read]\nenv: [PATH, HOME]\n")).expect("env:read");
    assert_eq!(m.env, ["PATH", "HOME"]);
}

#[test]
fn exec_timeout_is_a_bounded_duration_that_needs_shell_exec() {
    let m = parse(&with("permissions: [shell:exec]\nexec_timeout: 10s\n")).expect("valid");
    assert_eq!(m.exec_timeout, Some(std::time::Duration::from_secs(10)));
    assert_eq!(parse(BASE).expect("valid").exec_timeout, None);
    check(
        &with("permissions: [shell:exec]\nexec_timeout: 5m\n"),
        Some(8),
        "exec_timeout",
        "`5m` is longer than the host's maximum for a program (120 s)",
    );
    check(
        &with("permissions: [shell:exec]\nexec_timeout: soon\n"),
        Some(8),
        "exec_timeout",
        "`soon` is not a duration (expected a duration such as `500ms`, `10s` or `2m`)",
    );
    check(
        &with("permissions: [file:read]\nexec_timeout: 10s\n"),
        Some(8),
        "exec_timeout",
        "a program time limit needs the `shell:exec` permission; add it to `permissions` or remove `exec_timeout`",
    );
}

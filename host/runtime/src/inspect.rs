//! What a component imports and exports, and what that means: which
//! permission each import needs, which skill type each export serves.

use agent_manifest::capability::{InterfaceNeed, interface_need};
use agent_manifest::{Manifest, Permission, SkillType};
use serde::Serialize;
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::contract::{self, LATEST, Version};

/// What an import requires of the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum ImportNeed {
    /// Always available (log, project, config, syntax, WASI basics).
    Nothing,
    /// Needs this permission declared.
    Permission(Permission),
    /// Never linked by this host (`wasi:sockets`, `wasi:http`).
    Forbidden(String),
    /// Not provided by this host at all.
    Unknown(String),
}

/// One import with what it needs.
#[derive(Debug, Clone, Serialize)]
pub struct ImportInfo {
    /// Full import name, e.g. `agent:skill/exec@0.2.0`.
    pub name: String,
    /// What it requires.
    pub need: ImportNeed,
}

/// The agent exports a component can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExportKind {
    /// `agent:skill/tool`
    Tool,
    /// `agent:skill/prompt`
    Prompt,
    /// `agent:skill/workflow`
    Workflow,
    /// `agent:skill/scanner`
    Scanner,
    /// `agent:skill/transform`
    Transform,
    /// `agent:skill/hooks`
    Hooks,
}

impl ExportKind {
    /// The interface name without package and version.
    pub fn interface(self) -> &'static str {
        match self {
            ExportKind::Tool => "tool",
            ExportKind::Prompt => "prompt",
            ExportKind::Workflow => "workflow",
            ExportKind::Scanner => "scanner",
            ExportKind::Transform => "transform",
            ExportKind::Hooks => "hooks",
        }
    }

    /// The full export name in the latest contract.
    pub fn export_name(self) -> String {
        self.export_name_in(LATEST)
    }

    /// The full export name in contract `version`.
    pub fn export_name_in(self, version: Version) -> String {
        version.interface(self.interface())
    }

    /// The manifest type this export serves. `hooks` serves type `hook`, but
    /// any other skill may export it too (see [`check`]).
    pub fn skill_type(self) -> SkillType {
        match self {
            ExportKind::Tool => SkillType::Tool,
            ExportKind::Prompt => SkillType::Prompt,
            ExportKind::Workflow => SkillType::Workflow,
            ExportKind::Scanner => SkillType::SecurityRule,
            ExportKind::Transform => SkillType::Transform,
            ExportKind::Hooks => SkillType::Hook,
        }
    }

    /// The export a manifest type requires.
    pub fn for_type(t: SkillType) -> ExportKind {
        match t {
            SkillType::Tool => ExportKind::Tool,
            SkillType::Prompt => ExportKind::Prompt,
            SkillType::Workflow => ExportKind::Workflow,
            SkillType::SecurityRule => ExportKind::Scanner,
            SkillType::Transform => ExportKind::Transform,
            SkillType::Hook => ExportKind::Hooks,
        }
    }

    const ALL: [ExportKind; 6] = [
        ExportKind::Tool,
        ExportKind::Prompt,
        ExportKind::Workflow,
        ExportKind::Scanner,
        ExportKind::Transform,
        ExportKind::Hooks,
    ];
}

/// A component's interface, classified.
#[derive(Debug, Clone, Serialize)]
pub struct ComponentInfo {
    /// Every import with what it needs.
    pub imports: Vec<ImportInfo>,
    /// Recognised agent exports.
    pub exports: Vec<ExportKind>,
    /// Exports this host does not understand (listed by `inspect`).
    pub other_exports: Vec<String>,
    /// The contract version the component was built against (`None` when
    /// it neither imports nor exports anything of `agent:skill`, or names
    /// only versions this host does not link).
    pub contract: Option<Version>,
    /// Every supported version named by an import or export, when more than
    /// one: a component is bound to one contract.
    pub mixed: Vec<Version>,
}

impl ComponentInfo {
    /// Reads a compiled component's imports and exports.
    pub fn of(component: &Component, engine: &Engine) -> ComponentInfo {
        let ty = component.component_type();
        let imports = ty
            .imports(engine)
            .map(|(name, _)| ImportInfo {
                name: name.to_string(),
                need: classify_import(name),
            })
            .collect();
        let mut exports = Vec::new();
        let mut other_exports = Vec::new();
        let mut versions: Vec<Version> = Vec::new();
        for (name, _) in ty.exports(engine) {
            let found = contract::split_name(name).and_then(|(iface, number)| {
                let version = Version::parse(number)?;
                let kind = ExportKind::ALL
                    .into_iter()
                    .find(|k| k.interface() == iface)?;
                Some((kind, version))
            });
            match found {
                Some((kind, version)) => {
                    exports.push(kind);
                    versions.push(version);
                }
                None => other_exports.push(name.to_string()),
            }
        }
        let mut info = ComponentInfo {
            imports,
            exports,
            other_exports,
            contract: None,
            mixed: Vec::new(),
        };
        versions.extend(info.imports.iter().filter_map(|i| {
            let (_, number) = contract::split_name(&i.name)?;
            Version::parse(number)
        }));
        versions.sort();
        versions.dedup();
        info.contract = versions.first().copied();
        if versions.len() > 1 {
            info.mixed = versions;
        }
        info
    }

    /// The full name of export `kind` in this component's contract.
    pub fn export_name(&self, kind: ExportKind) -> String {
        kind.export_name_in(self.contract.unwrap_or(LATEST))
    }

    /// The permissions the imports need, sorted and deduplicated.
    pub fn needed_permissions(&self) -> Vec<Permission> {
        let mut perms: Vec<Permission> = self
            .imports
            .iter()
            .filter_map(|i| match i.need {
                ImportNeed::Permission(p) => Some(p),
                _ => None,
            })
            .collect();
        perms.sort();
        perms.dedup();
        perms
    }

    /// Whether the component imports the WASI filesystem (so file
    /// permissions can take effect).
    pub fn uses_filesystem(&self) -> bool {
        self.imports
            .iter()
            .any(|i| i.name.starts_with("wasi:filesystem/"))
    }
}

/// Classifies one import name.
pub fn classify_import(name: &str) -> ImportNeed {
    if let Some((iface, number)) = contract::split_name(name) {
        let Some(version) = Version::parse(number) else {
            return ImportNeed::Unknown(unsupported_version(number));
        };
        // What each interface needs is a row of the capability table.
        return match interface_need(iface) {
            InterfaceNeed::Nothing => ImportNeed::Nothing,
            InterfaceNeed::Permission(p) => ImportNeed::Permission(p),
            InterfaceNeed::Unknown => {
                ImportNeed::Unknown(format!("no interface `{iface}` in {version}"))
            }
        };
    }
    if name.starts_with("wasi:sockets/") {
        return ImportNeed::Forbidden(
            "raw network access is never linked; use the `http` import with net:fetch".into(),
        );
    }
    if name.starts_with("wasi:http/") {
        return ImportNeed::Forbidden(
            "wasi:http is never linked; use the agent `http` import with net:fetch".into(),
        );
    }
    let wasi_ok = [
        "wasi:io/",
        "wasi:clocks/",
        "wasi:random/",
        "wasi:cli/",
        "wasi:filesystem/",
    ];
    if wasi_ok.iter().any(|p| name.starts_with(p)) {
        let version = name.split_once('@').map(|(_, v)| v).unwrap_or("");
        if version.starts_with("0.2.") {
            return ImportNeed::Nothing;
        }
        return ImportNeed::Unknown(format!(
            "WASI version {version} is not supported (this host links WASI 0.2)"
        ));
    }
    ImportNeed::Unknown("not provided by this host".into())
}

/// Why a contract version is refused, naming the ones this host links.
fn unsupported_version(number: &str) -> String {
    format!(
        "built against {}@{}, which this host does not link; it supports {} (rebuild the skill against one of them)",
        contract::PACKAGE,
        if number.is_empty() { "?" } else { number },
        contract::supported_list()
    )
}

/// A reason the component does not fit its manifest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Mismatch {
    /// An import needs a permission the manifest does not declare.
    #[error(
        "the component imports `{import}`, which needs permission `{permission}`, but SKILL.yaml does not declare it (add `{permission}` to `permissions`, or remove the import)"
    )]
    UndeclaredImport {
        /// The import name.
        import: String,
        /// The permission it needs.
        permission: Permission,
    },
    /// An import this host never links.
    #[error("the component imports `{import}`, which this host never provides: {reason}")]
    ForbiddenImport {
        /// The import name.
        import: String,
        /// Why.
        reason: String,
    },
    /// An import this host does not know.
    #[error("the component imports `{import}`: {reason}")]
    UnknownImport {
        /// The import name.
        import: String,
        /// Why.
        reason: String,
    },
    /// An `agent:skill` export of a contract version this host does not link.
    #[error("the component exports `{export}`: {reason}")]
    UnknownExport {
        /// The export name.
        export: String,
        /// Why.
        reason: String,
    },
    /// Imports and exports name more than one contract version.
    #[error(
        "the component mixes contract versions ({versions}); build it against one version of agent:skill"
    )]
    MixedContract {
        /// The versions, e.g. `agent:skill@0.1.0, agent:skill@0.2.0`.
        versions: String,
    },
    /// A declared type whose export is missing.
    #[error("SKILL.yaml declares type `{skill_type}` but the component does not export `{export}`")]
    MissingExport {
        /// The manifest type.
        skill_type: String,
        /// The export it needs.
        export: String,
    },
    /// An export whose type is not declared.
    #[error(
        "the component exports `{export}` but SKILL.yaml's `types` does not include `{skill_type}`"
    )]
    UndeclaredExport {
        /// The export.
        export: String,
        /// The type it serves.
        skill_type: String,
    },
}

/// Checks imports against declared permissions, then exports against the
/// manifest's types. Returns every mismatch, imports first.
pub fn check(info: &ComponentInfo, manifest: &Manifest) -> Vec<Mismatch> {
    let mut problems = Vec::new();
    for import in &info.imports {
        match &import.need {
            ImportNeed::Nothing => {}
            ImportNeed::Permission(p) => {
                if !manifest.declares(*p) {
                    problems.push(Mismatch::UndeclaredImport {
                        import: import.name.clone(),
                        permission: *p,
                    });
                }
            }
            ImportNeed::Forbidden(reason) => problems.push(Mismatch::ForbiddenImport {
                import: import.name.clone(),
                reason: reason.clone(),
            }),
            ImportNeed::Unknown(reason) => problems.push(Mismatch::UnknownImport {
                import: import.name.clone(),
                reason: reason.clone(),
            }),
        }
    }
    for name in &info.other_exports {
        if let Some((_, number)) = contract::split_name(name)
            && Version::parse(number).is_none()
        {
            problems.push(Mismatch::UnknownExport {
                export: name.clone(),
                reason: unsupported_version(number),
            });
        }
    }
    if !info.mixed.is_empty() {
        problems.push(Mismatch::MixedContract {
            versions: info
                .mixed
                .iter()
                .map(Version::to_string)
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    for t in &manifest.types {
        let kind = ExportKind::for_type(*t);
        // A prompt may come from a file, security rules from a rules file
        // (apple-dev: tools and prompts in the component, rules beside it).
        let satisfied_by_file = (*t == SkillType::Prompt
            && manifest
                .prompt
                .as_ref()
                .is_some_and(|p| p.system_prompt_file.is_some()))
            || (*t == SkillType::SecurityRule
                && manifest
                    .security_rules
                    .as_ref()
                    .is_some_and(|r| r.sast_rules_file.is_some()));
        if !info.exports.contains(&kind) && !satisfied_by_file {
            problems.push(Mismatch::MissingExport {
                skill_type: t.to_string(),
                export: info.export_name(kind),
            });
        }
    }
    for kind in &info.exports {
        // Any skill may export `hooks` alongside its own types.
        if *kind == ExportKind::Hooks {
            continue;
        }
        let t = kind.skill_type();
        if !manifest.types.contains(&t) {
            problems.push(Mismatch::UndeclaredExport {
                export: info.export_name(*kind),
                skill_type: t.to_string(),
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{SUPPORTED, V0_1_0};

    #[test]
    fn imports_map_to_permissions_in_every_supported_version() {
        for v in SUPPORTED {
            assert_eq!(
                classify_import(&v.interface("exec")),
                ImportNeed::Permission(Permission::ShellExec)
            );
            assert_eq!(
                classify_import(&v.interface("git-write")),
                ImportNeed::Permission(Permission::GitWrite)
            );
            assert_eq!(classify_import(&v.interface("log")), ImportNeed::Nothing);
        }
        assert_eq!(
            classify_import(&V0_1_0.interface("log")),
            ImportNeed::Nothing
        );
        assert_eq!(
            classify_import("wasi:filesystem/types@0.2.6"),
            ImportNeed::Nothing
        );
        assert!(matches!(
            classify_import("wasi:sockets/tcp@0.2.6"),
            ImportNeed::Forbidden(_)
        ));
        assert!(matches!(
            classify_import("wasi:http/outgoing-handler@0.2.6"),
            ImportNeed::Forbidden(_)
        ));
        assert!(matches!(
            classify_import("acme:thing/x"),
            ImportNeed::Unknown(_)
        ));
    }

    #[test]
    fn an_unknown_contract_version_is_refused_naming_the_supported_ones() {
        let ImportNeed::Unknown(why) = classify_import("agent:skill/exec@0.3.0") else {
            panic!("0.3.0 must be unknown");
        };
        assert_eq!(
            why,
            "built against agent:skill@0.3.0, which this host does not link; it supports agent:skill@0.1.0, agent:skill@0.2.0 (rebuild the skill against one of them)"
        );
    }
}

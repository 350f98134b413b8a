//! Loading a skill: read, verify the signature, compile (or load the cached
//! artifact), check imports against permissions and exports against types,
//! and prepare an `InstancePre`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_manifest::{Manifest, ManifestError};
use agent_trust::{KeyId, PublicKey, TrustError, TrustStore};
use serde::Serialize;
use wasmtime::component::InstancePre;

use crate::Runtime;
use crate::bindings::{
    HooksIndices, PromptIndices, ScannerIndices, ToolIndices, TransformIndices, WorkflowIndices,
};
use crate::cache::CacheOutcome;
use crate::component_bytes::ComponentBytes;
use crate::inspect::{self, ComponentInfo, ExportKind, Mismatch};
use crate::memo::Identity;
use crate::state::{HostState, SkillScope};

/// Where a skill was found. Later sources override earlier ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// Compiled into the binary.
    Builtin,
    /// `~/.config/agent/skills/`.
    User,
    /// The project's `.agent/skills/`.
    Project,
    /// Named with `--skills` on the command line.
    CommandLine,
    /// A path given to `skill test`, `inspect` or `call`.
    Path,
}

impl Origin {
    /// Lower-case name for listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Builtin => "builtin",
            Origin::User => "user",
            Origin::Project => "project",
            Origin::CommandLine => "command-line",
            Origin::Path => "path",
        }
    }

    /// Whether `--allow-unsigned` may apply (local development paths only).
    pub fn is_local_development(self) -> bool {
        matches!(self, Origin::Project | Origin::CommandLine | Origin::Path)
    }
}

/// A skill as found on disk (or in the binary), not yet verified.
#[derive(Debug, Clone)]
pub struct SkillPackage {
    /// The parsed manifest.
    pub manifest: Manifest,
    /// The exact `SKILL.yaml` bytes `manifest` was parsed from (what the
    /// signature covers and stored grants are bound to).
    pub manifest_bytes: Arc<[u8]>,
    /// The skill's directory (`None` for built-ins).
    pub dir: Option<PathBuf>,
    /// The files the manifest names, for a skill without a directory
    /// (built-ins): path relative to the skill, bytes.
    pub embedded: Vec<(String, Arc<[u8]>)>,
    /// The component bytes (`None` for a prompt-only skill); a built-in's
    /// stay compressed until something needs them.
    pub component: Option<ComponentBytes>,
    /// Where it was found.
    pub origin: Origin,
    /// The file `component` was read from and its identity while it was
    /// read (for the memo of verified digests; `None` for built-ins, or when
    /// the file changed while being read).
    component_file: Option<(PathBuf, Identity)>,
    /// What the build checked and compiled (built-ins only; see
    /// [`SkillPackage::with_prebuilt`]).
    prebuilt: Option<Prebuilt>,
}

/// The bytes of `path` and the identity of the file they were read from
/// (`None` when it changed while being read, or off Unix).
fn read_with_identity(path: &Path) -> std::io::Result<(Vec<u8>, Option<Identity>)> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let before = Identity::of(&file.metadata()?);
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let after = Identity::of(&file.metadata()?);
    Ok((bytes, before.filter(|_| before == after)))
}

/// What the build of the binary did to a built-in: checked its signature
/// (the digest it covers) and, when not cross-compiling, compiled it with
/// the runtime's engine configuration. Bytes in the binary are trusted as
/// the binary is: whoever could change them could change the verifier.
#[derive(Debug, Clone, Copy)]
pub struct Prebuilt {
    /// SHA-256 of the component's unsigned bytes, as the build verified it.
    pub digest: agent_trust::Digest,
    /// The native code of the component (`Component::serialize` format),
    /// zlib-compressed; inflated when a load takes it (a cache miss).
    pub precompiled: Option<&'static [u8]>,
}

impl SkillPackage {
    /// Reads `dir/SKILL.yaml` and the component it names.
    ///
    /// # Errors
    /// A manifest error naming file, field and line, or a read error naming
    /// the component file.
    pub fn from_dir(dir: &Path, origin: Origin) -> Result<SkillPackage, LoadError> {
        let (manifest, manifest_bytes) =
            Manifest::from_file_with_bytes(&dir.join(agent_manifest::MANIFEST_FILE))
                .map_err(LoadError::Manifest)?;
        let (component, component_file) = match &manifest.implementation {
            Some(imp) => {
                let path = dir.join(&imp.component);
                let (bytes, identity) =
                    read_with_identity(&path).map_err(|error| LoadError::Read {
                        skill: manifest.name.clone(),
                        path: path.clone(),
                        error,
                    })?;
                (
                    Some(ComponentBytes::from(bytes)),
                    identity.map(|id| (path, id)),
                )
            }
            None => (None, None),
        };
        Ok(SkillPackage {
            manifest,
            manifest_bytes: Arc::from(manifest_bytes),
            dir: Some(dir.to_path_buf()),
            embedded: Vec::new(),
            component,
            component_file,
            origin,
            prebuilt: None,
        })
    }

    /// A skill held in memory (the built-ins): its `SKILL.yaml` text, the
    /// files it names and its component. `label` names it in errors.
    ///
    /// # Errors
    /// A manifest error naming `label`.
    pub fn in_memory(
        label: &str,
        manifest_text: &str,
        embedded: Vec<(String, Arc<[u8]>)>,
        component: Option<ComponentBytes>,
        origin: Origin,
    ) -> Result<SkillPackage, LoadError> {
        let manifest =
            Manifest::parse(manifest_text, Path::new(label)).map_err(LoadError::Manifest)?;
        Ok(SkillPackage {
            manifest,
            manifest_bytes: Arc::from(manifest_text.as_bytes()),
            dir: None,
            embedded,
            component,
            component_file: None,
            origin,
            prebuilt: None,
        })
    }

    /// Marks a built-in as checked (and perhaps compiled) by the build of
    /// this binary: loading it then neither hashes its component nor its
    /// files again, and uses the precompiled code when the engine accepts
    /// it (compiling the component otherwise). Ignored for any origin but
    /// [`Origin::Builtin`], and without a built-in key in the trust policy.
    pub fn with_prebuilt(mut self, prebuilt: Prebuilt) -> SkillPackage {
        self.prebuilt = Some(prebuilt);
        self
    }

    /// What the build checked and compiled, if this is a built-in marked so.
    pub fn prebuilt(&self) -> Option<Prebuilt> {
        self.prebuilt
    }

    /// The build's products, when they apply (see [`SkillPackage::with_prebuilt`]).
    fn prebuilt_for(&self, trust: &TrustPolicy) -> Option<(Prebuilt, PublicKey)> {
        match (self.origin, self.prebuilt, trust.builtin_key) {
            (Origin::Builtin, Some(p), Some(key)) => Some((p, key)),
            _ => None,
        }
    }

    /// Hex SHA-256 of the manifest bytes.
    pub fn manifest_digest(&self) -> String {
        hex::encode(agent_trust::sha256(&self.manifest_bytes))
    }

    /// The current bytes of a file of this skill (`path` relative to it),
    /// for signature checks: `SKILL.yaml` is the parsed bytes; other files
    /// come from the directory (no symbolic links, regular files only) or,
    /// for built-ins, from memory.
    fn signed_file(&self, path: &str) -> Result<Vec<u8>, String> {
        if path == agent_manifest::MANIFEST_FILE {
            return Ok(self.manifest_bytes.to_vec());
        }
        match &self.dir {
            Some(dir) => agent_trust::read_skill_file(dir, path),
            None => self
                .embedded
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, b)| b.to_vec())
                .ok_or_else(|| "is not embedded in the binary".to_string()),
        }
    }
}

/// Which keys the host trusts, and whether unsigned local skills may load.
#[derive(Debug, Clone)]
pub struct TrustPolicy {
    /// The user's trusted publisher keys.
    pub store: TrustStore,
    /// The key that signed the built-ins (trusted for built-ins only).
    pub builtin_key: Option<PublicKey>,
    /// `--allow-unsigned`: load unsigned skills from local development paths.
    pub allow_unsigned: bool,
}

/// Who signed a loaded skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "status", content = "key")]
pub enum Signer {
    /// Verified signature by this key.
    Key(String),
    /// The built-ins' key.
    Builtin(String),
    /// Loaded unsigned under `--allow-unsigned`.
    Unsigned,
    /// A prompt-only skill without a component.
    NoComponent,
}

/// Why a skill could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// SKILL.yaml is invalid.
    #[error(transparent)]
    Manifest(ManifestError),
    /// A file could not be read.
    #[error("skill `{skill}`: reading {path}: {error}")]
    Read {
        /// Skill name.
        skill: String,
        /// The file.
        path: PathBuf,
        /// The error (in the message, so not also a `source`: printed once).
        error: std::io::Error,
    },
    /// The signature check failed.
    #[error("skill `{skill}` refused: {source}")]
    Signature {
        /// Skill name.
        skill: String,
        /// Why.
        source: TrustError,
    },
    /// `--allow-unsigned` was given for a skill that is not a local path.
    #[error(
        "skill `{skill}` is unsigned; --allow-unsigned applies only to local development paths (project skills, --skills and paths), not to {origin} skills"
    )]
    UnsignedNotAllowed {
        /// Skill name.
        skill: String,
        /// Its origin.
        origin: &'static str,
    },
    /// The component does not fit its manifest.
    #[error("skill `{skill}` refused: {}", .problems.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "))]
    Mismatch {
        /// Skill name.
        skill: String,
        /// Every problem found (imports first).
        problems: Vec<Mismatch>,
    },
    /// The component needs a component but has none.
    #[error(
        "skill `{skill}`: SKILL.yaml has no `implementation.component`, which types {types} need"
    )]
    NoComponent {
        /// Skill name.
        skill: String,
        /// The types needing one.
        types: String,
    },
    /// Compilation or linking failed.
    #[error("skill `{skill}`: {message}")]
    Compile {
        /// Skill name.
        skill: String,
        /// The engine's message.
        message: String,
    },
}

#[derive(Clone, Default)]
pub(crate) struct ExportIndices {
    pub tool: Option<ToolIndices>,
    pub prompt: Option<PromptIndices>,
    pub workflow: Option<WorkflowIndices>,
    pub scanner: Option<ScannerIndices>,
    pub transform: Option<TransformIndices>,
    pub hooks: Option<HooksIndices>,
}

/// A verified, checked skill, ready to instantiate.
pub struct Skill {
    /// The manifest.
    pub manifest: Manifest,
    /// Where it was found.
    pub origin: Origin,
    /// Its directory (`None` for built-ins).
    pub dir: Option<PathBuf>,
    /// The files its manifest names, for a skill without a directory
    /// (built-ins; verified with it): path relative to the skill, bytes.
    pub embedded: Vec<(String, Arc<[u8]>)>,
    /// Who signed it.
    pub signer: Signer,
    /// Hex SHA-256 of the component's unsigned bytes.
    pub digest: Option<String>,
    /// Hex SHA-256 of the `SKILL.yaml` bytes it was loaded from; stored
    /// grants apply only to this manifest.
    pub manifest_digest: String,
    /// Imports and exports (when it has a component).
    pub info: Option<ComponentInfo>,
    /// Whether the compiled artifact came from the cache.
    pub cache: Option<CacheOutcome>,
    pub(crate) scope: Arc<SkillScope>,
    pub(crate) pre: Option<InstancePre<HostState>>,
    pub(crate) exports: ExportIndices,
}

impl std::fmt::Debug for Skill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skill")
            .field("name", &self.manifest.name)
            .field("origin", &self.origin)
            .field("signer", &self.signer)
            .finish_non_exhaustive()
    }
}

impl Skill {
    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    /// A file embedded with a built-in (`path` relative to the skill, as
    /// its manifest names it); `None` for a skill with a directory.
    pub fn embedded_file(&self, path: &str) -> Option<&[u8]> {
        self.embedded
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, b)| &b[..])
    }

    /// Whether the component exports `kind`.
    pub fn exports(&self, kind: ExportKind) -> bool {
        self.info
            .as_ref()
            .is_some_and(|i| i.exports.contains(&kind))
    }
}

/// What a signature check found, before anything is compiled.
pub(crate) struct SignatureOutcome {
    pub signer: Signer,
    pub digest: agent_trust::Digest,
}

/// A prompt-only skill (no component) is valid only when every type it
/// declares can do without one.
fn check_prompt_only(pkg: &SkillPackage) -> Result<(), LoadError> {
    let needs: Vec<String> = pkg
        .manifest
        .types
        .iter()
        .filter(|t| {
            !(**t == agent_manifest::SkillType::Prompt
                && pkg
                    .manifest
                    .prompt
                    .as_ref()
                    .is_some_and(|p| p.system_prompt_file.is_some()))
        })
        .map(|t| t.to_string())
        .collect();
    if needs.is_empty() {
        return Ok(());
    }
    Err(LoadError::NoComponent {
        skill: pkg.manifest.name.clone(),
        types: needs.join(", "),
    })
}

/// Checks what can be checked without compiling: a prompt-only skill's
/// types, or the component's signature (and the files it covers). What
/// `agent skill list` shows; [`Runtime::load`] runs the same checks first.
///
/// # Errors
/// A [`LoadError`] naming the skill and what to do.
pub fn verify(pkg: &SkillPackage, trust: &TrustPolicy) -> Result<Signer, LoadError> {
    match &pkg.component {
        None => check_prompt_only(pkg).map(|()| Signer::NoComponent),
        Some(bytes) => check_signature(pkg, bytes, trust, agent_trust::sha256).map(|s| s.signer),
    }
}

pub(crate) fn check_signature(
    pkg: &SkillPackage,
    component: &ComponentBytes,
    trust: &TrustPolicy,
    digest_of: impl FnOnce(&[u8]) -> agent_trust::Digest,
) -> Result<SignatureOutcome, LoadError> {
    let name = &pkg.manifest.name;
    if let Some((prebuilt, key)) = pkg.prebuilt_for(trust) {
        return Ok(SignatureOutcome {
            signer: Signer::Builtin(key.id().to_string()),
            digest: prebuilt.digest,
        });
    }
    let builtin_key = if pkg.origin == Origin::Builtin {
        trust.builtin_key
    } else {
        None
    };
    let trusted = |k: &PublicKey| builtin_key.as_ref() == Some(k) || trust.store.is_trusted(k);
    let bytes = component.get().map_err(|e| inflate_error(name, &e))?;
    let bytes = &*bytes;
    match agent_trust::verify_with_digest(bytes, trusted, digest_of) {
        Ok(v) => {
            v.statement
                .check_files(&pkg.manifest.signed_files(), |p| pkg.signed_file(p))
                .map_err(|source| LoadError::Signature {
                    skill: name.clone(),
                    source,
                })?;
            let signer = if builtin_key.is_some_and(|b| b.id() == v.key_id) {
                Signer::Builtin(v.key_id.to_string())
            } else {
                Signer::Key(v.key_id.to_string())
            };
            Ok(SignatureOutcome {
                signer,
                digest: v.digest,
            })
        }
        Err(TrustError::Unsigned) if trust.allow_unsigned => {
            if !pkg.origin.is_local_development() {
                return Err(LoadError::UnsignedNotAllowed {
                    skill: name.clone(),
                    origin: pkg.origin.as_str(),
                });
            }
            Ok(SignatureOutcome {
                signer: Signer::Unsigned,
                digest: agent_trust::sha256(bytes),
            })
        }
        Err(source) => Err(LoadError::Signature {
            skill: name.clone(),
            source,
        }),
    }
}

/// A built-in whose embedded component does not inflate: the binary is
/// damaged.
pub(crate) fn inflate_error(skill: &str, e: &std::io::Error) -> LoadError {
    LoadError::Compile {
        skill: skill.to_string(),
        message: format!(
            "the component embedded in this binary does not decompress ({e}): the binary is \
             damaged; reinstall agent"
        ),
    }
}

impl Runtime {
    /// Verifies, compiles (or loads from cache), checks and prepares a skill.
    ///
    /// Checks run in this order and stop at the first failure: the
    /// signature; the component's imports against the declared permissions;
    /// its exports against the manifest's `types`.
    ///
    /// # Errors
    /// A [`LoadError`] naming the skill and what to do.
    pub fn load(&self, pkg: SkillPackage, trust: &TrustPolicy) -> Result<Skill, LoadError> {
        let manifest_digest = pkg.manifest_digest();
        let scope = Arc::new(SkillScope {
            name: pkg.manifest.name.clone(),
            permissions: pkg.manifest.permissions.clone(),
            exec: pkg.manifest.exec.clone(),
            hosts: pkg.manifest.hosts.clone(),
            env: pkg.manifest.env.clone(),
            exec_timeout: pkg.manifest.exec_timeout,
            manifest_digest: manifest_digest.clone(),
        });
        let Some(bytes) = pkg.component.clone() else {
            check_prompt_only(&pkg)?;
            return Ok(Skill {
                manifest: pkg.manifest,
                origin: pkg.origin,
                dir: pkg.dir,
                embedded: pkg.embedded,
                signer: Signer::NoComponent,
                digest: None,
                manifest_digest,
                info: None,
                cache: None,
                scope,
                pre: None,
                exports: ExportIndices::default(),
            });
        };

        let sig = check_signature(&pkg, &bytes, trust, |unsigned| {
            self.cache
                .component_digest(pkg.component_file.as_ref(), unsigned)
        })?;
        let digest_hex = hex::encode(sig.digest);
        let name = pkg.manifest.name.clone();
        let compile_err = |e: anyhow::Error| LoadError::Compile {
            skill: name.clone(),
            message: format!("{e:#}"),
        };
        let precompiled = pkg.prebuilt_for(trust).and_then(|(p, _)| p.precompiled);
        let (component, outcome) = self
            .cache
            .load_or_build(&self.engine, &bytes, precompiled, &digest_hex)
            .map_err(compile_err)?;
        tracing::debug!("skill {name}: component {outcome:?}");

        let info = ComponentInfo::of(&component, &self.engine);
        let problems = inspect::check(&info, &pkg.manifest);
        if !problems.is_empty() {
            return Err(LoadError::Mismatch {
                skill: name.clone(),
                problems,
            });
        }
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| compile_err(anyhow::Error::from(e).context("linking the component")))?;
        // Exports are recognised only in a supported version, so a
        // component with exports has a contract.
        let version = info.contract.unwrap_or(crate::contract::LATEST);
        let idx_err = |e: wasmtime::Error| {
            compile_err(
                anyhow::Error::from(e).context(format!("an export does not match {version}")),
            )
        };
        let mut exports = ExportIndices::default();
        for kind in &info.exports {
            match kind {
                ExportKind::Tool => {
                    exports.tool = Some(ToolIndices::new(&pre, version).map_err(idx_err)?)
                }
                ExportKind::Prompt => {
                    exports.prompt = Some(PromptIndices::new(&pre, version).map_err(idx_err)?)
                }
                ExportKind::Workflow => {
                    exports.workflow = Some(WorkflowIndices::new(&pre, version).map_err(idx_err)?)
                }
                ExportKind::Scanner => {
                    exports.scanner = Some(ScannerIndices::new(&pre, version).map_err(idx_err)?)
                }
                ExportKind::Transform => {
                    exports.transform = Some(TransformIndices::new(&pre, version).map_err(idx_err)?)
                }
                ExportKind::Hooks => {
                    exports.hooks = Some(HooksIndices::new(&pre, version).map_err(idx_err)?)
                }
            }
        }
        Ok(Skill {
            manifest: pkg.manifest,
            origin: pkg.origin,
            dir: pkg.dir,
            embedded: pkg.embedded,
            signer: sig.signer,
            digest: Some(digest_hex),
            manifest_digest,
            info: Some(info),
            cache: Some(outcome),
            scope,
            pre: Some(pre),
            exports,
        })
    }

    /// Inspects a component without checking it against a manifest: its
    /// imports, exports and signature status (for `agent skill inspect`).
    ///
    /// # Errors
    /// When the bytes do not compile.
    pub fn inspect_component(
        &self,
        bytes: &[u8],
        trust: &TrustPolicy,
        origin: Origin,
    ) -> anyhow::Result<(ComponentInfo, Result<KeyId, TrustError>)> {
        let builtin_key = if origin == Origin::Builtin {
            trust.builtin_key
        } else {
            None
        };
        let sig = agent_trust::verify(bytes, |k| {
            builtin_key.as_ref() == Some(k) || trust.store.is_trusted(k)
        })
        .map(|v| v.key_id);
        let digest = match agent_trust::split(bytes) {
            Ok(s) => agent_trust::sha256(s.unsigned),
            Err(_) => agent_trust::sha256(bytes),
        };
        let (component, _) =
            self.cache
                .load_or_compile(&self.engine, bytes, &hex::encode(digest))?;
        Ok((ComponentInfo::of(&component, &self.engine), sig))
    }
}

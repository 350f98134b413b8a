//! The on-disk cache of compiled components, each artifact sealed (see
//! [`crate::seal`]) and checked before wasmtime maps it, unless the memo of
//! verified files (see [`crate::memo`]) shows it is the very file checked
//! before.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::component_bytes::{self, ComponentBytes};
use crate::memo::{Identity, Memo};
use crate::seal::SealKey;

/// Where the artifact cache lives and the file of the key that seals it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheConfig {
    /// The artifacts (disposable; created on first write).
    pub dir: PathBuf,
    /// The sealing key (created on first use, mode 0600). Keep it outside
    /// `dir`, where only the user writes: whoever can write it can make
    /// the host run native code of their choosing.
    pub key_file: PathBuf,
}

/// Where compiled artifacts are kept: `<dir>/<sha256>-<engine key>.sealed.cwasm`.
///
/// The key covers the component's SHA-256 (of its unsigned bytes), the
/// wasmtime version and the engine's configuration and target (wasmtime's
/// own compatibility hash), so an artifact is never used by an engine that
/// could not run it. Each artifact ends with an HMAC-SHA256 under the key in
/// [`CacheConfig::key_file`] over that digest, the engine key and the
/// artifact; it is read into memory and its tag checked before wasmtime
/// deserialises it.
#[derive(Debug, Clone)]
pub struct ComponentCache {
    config: Option<CacheConfig>,
    engine_key: String,
    key: Arc<Mutex<Option<Arc<SealKey>>>>,
    /// Artifacts whose seal was checked.
    artifacts: Arc<Mutex<Option<Memo>>>,
    /// Component files hashed (the value: hex SHA-256 of the unsigned part).
    components: Arc<Mutex<Option<Memo>>>,
}

/// How a component was obtained, for benchmarks, `--verbose` and the audit
/// log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from the on-disk cache, its seal checked.
    Hit,
    /// A built-in's code, precompiled when the binary was built (not in
    /// the cache yet: written to it now).
    Precompiled,
    /// Compiled now and written to the cache.
    Compiled,
    /// Compiled now because the cached artifact was rejected; the artifact
    /// was replaced. Embedders audit this: it may mean tampering.
    Recompiled(Rejection),
    /// Compiled now; no cache configured (or its key is unavailable).
    Uncached,
}

/// Why a cached artifact was not used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Its seal does not match: it was changed after this host wrote it, or
    /// was not written under this user's key.
    BadSeal,
    /// Its seal matches but wasmtime refused it.
    Unloadable,
    /// It could not be read.
    Unreadable,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Rejection::BadSeal => {
                "its seal does not match (changed after it was written, or not written by this host)"
            }
            Rejection::Unloadable => "the engine refused it",
            Rejection::Unreadable => "it could not be read",
        })
    }
}

impl ComponentCache {
    /// A cache as `config` says, or no cache for `None`.
    pub fn new(engine: &Engine, config: Option<CacheConfig>) -> ComponentCache {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let engine_key = format!(
            "wasmtime48-{}-{:016x}",
            std::env::consts::ARCH,
            hasher.finish()
        );
        ComponentCache {
            config,
            engine_key,
            key: Arc::default(),
            artifacts: Arc::default(),
            components: Arc::default(),
        }
    }

    /// The artifact path for a component digest.
    pub fn artifact_path(&self, digest_hex: &str) -> Option<PathBuf> {
        self.config.as_ref().map(|c| {
            c.dir
                .join(format!("{digest_hex}-{}.sealed.cwasm", self.engine_key))
        })
    }

    /// The sealing key, read or created on first use (retried after a
    /// failure: a full disk may have been cleared since).
    fn key(&self, config: &CacheConfig) -> Result<Arc<SealKey>> {
        let mut slot = self.key.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(key) = slot.as_ref() {
            return Ok(Arc::clone(key));
        }
        let key = Arc::new(
            SealKey::load_or_create(&config.key_file)
                .context("the component cache's key is unavailable")?,
        );
        *slot = Some(Arc::clone(&key));
        Ok(key)
    }

    /// Loads the compiled component for `bytes` (whose verified digest is
    /// `digest_hex`) from the cache, or compiles and caches it.
    ///
    /// An artifact whose seal does not match, or that cannot be loaded, is
    /// discarded and replaced ([`CacheOutcome::Recompiled`]). Failing to
    /// write the cache, or to create its key, is not an error (a warning is
    /// logged); a failed write leaves no temporary file.
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        bytes: &[u8],
        digest_hex: &str,
    ) -> Result<(Component, CacheOutcome)> {
        let bytes = ComponentBytes::Plain(Arc::from(bytes));
        self.load_or_build(engine, &bytes, None, digest_hex)
    }

    /// [`ComponentCache::load_or_compile`], taking the code from
    /// `precompiled` (a built-in's, compiled when the binary was built)
    /// instead of compiling when the cache has no usable artifact and the
    /// engine accepts that code. The cache then holds it as it holds any
    /// compiled component.
    pub(crate) fn load_or_build(
        &self,
        engine: &Engine,
        bytes: &ComponentBytes,
        precompiled: Option<&[u8]>,
        digest_hex: &str,
    ) -> Result<(Component, CacheOutcome)> {
        let (Some(config), Some(path)) = (&self.config, self.artifact_path(digest_hex)) else {
            return Ok((build(engine, bytes, precompiled)?.0, CacheOutcome::Uncached));
        };
        let key = match self.key(config) {
            Ok(key) => key,
            Err(e) => {
                tracing::warn!("compiling without the cache: {e:#}");
                return Ok((build(engine, bytes, precompiled)?.0, CacheOutcome::Uncached));
            }
        };
        let rejected = match self.lookup(engine, &key, &path, digest_hex) {
            Ok(component) => return Ok((component, CacheOutcome::Hit)),
            Err(rejected) => rejected,
        };
        if let Some(why) = rejected {
            tracing::warn!("discarding cached artifact {}: {why}", path.display());
            let _ = std::fs::remove_file(&path);
        }
        let (component, from_build) = build(engine, bytes, precompiled)?;
        let sealed = Sealed {
            key: &key,
            digest_hex,
            engine_key: &self.engine_key,
        };
        if let Err(e) = write_artifact(&path, &component, &sealed) {
            tracing::warn!(
                "could not cache compiled component at {}: {e:#}",
                path.display()
            );
        }
        let outcome = match (rejected, from_build) {
            (Some(why), _) => CacheOutcome::Recompiled(why),
            (None, true) => CacheOutcome::Precompiled,
            (None, false) => CacheOutcome::Compiled,
        };
        Ok((component, outcome))
    }

    /// The cached artifact at `path`, or why there is none to use (`None`:
    /// absent). A file the memo shows was checked before, unchanged since,
    /// is mapped; any other is read into memory, its seal checked, and then
    /// deserialised (and remembered in the memo).
    fn lookup(
        &self,
        engine: &Engine,
        key: &SealKey,
        path: &Path,
        digest_hex: &str,
    ) -> Result<Component, Option<Rejection>> {
        let mut file = match File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(None),
            Err(e) => {
                tracing::warn!("cannot read cached artifact {}: {e}", path.display());
                return Err(Some(Rejection::Unreadable));
            }
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let identity = file.metadata().ok().and_then(|m| Identity::of(&m));
        if let Some(component) =
            identity.and_then(|id| self.map_if_memoized(engine, key, &file, &name, id))
        {
            return Ok(component);
        }
        let mut sealed = Vec::new();
        if let Err(e) = file.read_to_end(&mut sealed) {
            tracing::warn!("cannot read cached artifact {}: {e}", path.display());
            return Err(Some(Rejection::Unreadable));
        }
        let Some(artifact) = key.open(digest_hex, &self.engine_key, &sealed) else {
            self.with_memo(&self.artifacts, key, |memo| memo.forget(&name));
            return Err(Some(Rejection::BadSeal));
        };
        // SAFETY: the bytes are in memory (nothing can change them between
        // the check and their use) and carry a tag under this user's key
        // over the verified component's digest and this engine's key: this
        // host compiled them from that component. wasmtime checks the header
        // against this engine's version and configuration.
        match unsafe { Component::deserialize(engine, artifact) } {
            Ok(component) => {
                if let Some(id) = identity.filter(|id| crate::memo::settled(*id)) {
                    self.with_memo(&self.artifacts, key, |memo| {
                        memo.record(&name, id, "sealed", key, &self.engine_key)
                    });
                }
                Ok(component)
            }
            Err(e) => {
                tracing::warn!("cannot load cached artifact {}: {e}", path.display());
                Err(Some(Rejection::Unloadable))
            }
        }
    }

    /// Maps `file` when the memo holds it with identity `id`.
    fn map_if_memoized(
        &self,
        engine: &Engine,
        key: &SealKey,
        file: &File,
        name: &str,
        id: Identity,
    ) -> Option<Component> {
        if !self.with_memo(&self.artifacts, key, |memo| memo.get(name, id).is_some()) {
            return None;
        }
        let open = crate::memo::path_of_open(file)?;
        // SAFETY: the file open as `file` has the identity it had when its
        // seal was checked (see `crate::memo` for why that means its bytes
        // are the ones checked), and `open` names that open file, not the
        // artifact's path, which may have been replaced since.
        match unsafe { Component::deserialize_file(engine, &open) } {
            Ok(component) => {
                tracing::debug!("mapped the memoized artifact {name}");
                Some(component)
            }
            Err(e) => {
                tracing::debug!("mapping the memoized artifact {name} failed ({e:#}); checking it");
                None
            }
        }
    }

    /// Runs `f` on `memo` (one of this cache's), read on first use.
    fn with_memo<R>(
        &self,
        memo: &Mutex<Option<Memo>>,
        key: &SealKey,
        f: impl FnOnce(&mut Memo) -> R,
    ) -> R {
        let kind = if std::ptr::eq(memo, &*self.artifacts) {
            "artifacts"
        } else {
            "components"
        };
        let mut slot = memo.lock().unwrap_or_else(PoisonError::into_inner);
        let memo = slot.get_or_insert_with(|| {
            let key_file = self
                .config
                .as_ref()
                .map_or(Path::new("component-cache.key"), |c| c.key_file.as_path());
            Memo::load(key_file, kind, key, &self.engine_key)
        });
        f(memo)
    }

    /// The SHA-256 of `unsigned`, the unsigned part of the component read
    /// from `file` (its path and the identity of the descriptor it was read
    /// through): remembered from an earlier load while the file keeps that
    /// identity, else computed (and remembered once the file has settled).
    /// Without a cache (or its key) it is always computed.
    pub(crate) fn component_digest(
        &self,
        file: Option<&(PathBuf, Identity)>,
        unsigned: &[u8],
    ) -> agent_trust::Digest {
        let (Some((path, id)), Some(config)) = (file, &self.config) else {
            return agent_trust::sha256(unsigned);
        };
        let Ok(key) = self.key(config) else {
            return agent_trust::sha256(unsigned);
        };
        let name = hex::encode(agent_trust::sha256(path.as_os_str().as_encoded_bytes()));
        let remembered = self.with_memo(&self.components, &key, |memo| {
            memo.get(&name, *id)
                .and_then(|hex_digest| hex::decode(hex_digest).ok())
                .and_then(|d| <agent_trust::Digest>::try_from(d.as_slice()).ok())
        });
        if let Some(digest) = remembered {
            return digest;
        }
        let digest = agent_trust::sha256(unsigned);
        if crate::memo::settled(*id) {
            self.with_memo(&self.components, &key, |memo| {
                memo.record(&name, *id, &hex::encode(digest), &key, &self.engine_key)
            });
        }
        digest
    }
}

/// The component from `precompiled` when the engine accepts it (`true`),
/// else compiled from `bytes` (`false`).
/// The component from the build's native code (zlib-compressed in the
/// binary) when the engine accepts it, else compiled from `bytes`.
fn build(
    engine: &Engine,
    bytes: &ComponentBytes,
    precompiled: Option<&[u8]>,
) -> Result<(Component, bool)> {
    if let Some(packed) = precompiled {
        match component_bytes::inflate(packed) {
            // SAFETY: `native` is part of this binary: `Engine::precompile_component`
            // of this wasmtime version wrote it when the binary was built, from
            // the component whose signature the build checked. Whoever could
            // alter it could alter the verifier as well. wasmtime checks its
            // header against this engine's version, configuration and processor.
            Ok(native) => match unsafe { Component::deserialize(engine, &native) } {
                Ok(component) => return Ok((component, true)),
                Err(e) => tracing::info!(
                    "the code precompiled by the build does not fit this engine ({e:#}); \
                     compiling the component"
                ),
            },
            Err(e) => tracing::info!(
                "the code precompiled by the build does not decompress ({e}); compiling the \
                 component"
            ),
        }
    }
    let bytes = bytes
        .get()
        .context("the component embedded in this binary does not decompress: reinstall agent")?;
    Ok((compile(engine, &bytes)?, false))
}

fn compile(engine: &Engine, bytes: &[u8]) -> Result<Component> {
    Component::new(engine, bytes)
        .map_err(anyhow::Error::from)
        .context("compiling the component (is it a wasm32-wasip2 component?)")
}

/// What an artifact is sealed with.
struct Sealed<'a> {
    key: &'a SealKey,
    digest_hex: &'a str,
    engine_key: &'a str,
}

/// Writes the sealed artifact to a temporary file in the cache directory and
/// renames it into place. The temporary file is removed on every error path
/// (a full disk must not stay full).
fn write_artifact(path: &Path, component: &Component, sealed: &Sealed<'_>) -> Result<()> {
    let dir = path.parent().context("cache path has no parent")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let artifact = component.serialize().map_err(anyhow::Error::from)?;
    let tag = sealed
        .key
        .tag(sealed.digest_hex, sealed.engine_key, &artifact);
    let mut tmp = tempfile::Builder::new()
        .prefix(".artifact-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(&artifact)
        .and_then(|()| tmp.write_all(&tag))
        .and_then(|()| tmp.flush())
        .with_context(|| format!("writing {}", tmp.path().display()))?;
    tmp.persist(path)
        .map_err(|e| e.error)
        .with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

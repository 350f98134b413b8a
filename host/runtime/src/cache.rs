//! The on-disk cache of compiled components, each artifact sealed (see
//! [`crate::seal`]) and checked before wasmtime maps it.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context, Result};
use wasmtime::Engine;
use wasmtime::component::Component;

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
}

/// How a component was obtained, for benchmarks, `--verbose` and the audit
/// log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from the on-disk cache, its seal checked.
    Hit,
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
        let (Some(config), Some(path)) = (&self.config, self.artifact_path(digest_hex)) else {
            return Ok((compile(engine, bytes)?, CacheOutcome::Uncached));
        };
        let key = match self.key(config) {
            Ok(key) => key,
            Err(e) => {
                tracing::warn!("compiling without the cache: {e:#}");
                return Ok((compile(engine, bytes)?, CacheOutcome::Uncached));
            }
        };
        let rejected = match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                tracing::warn!("cannot read cached artifact {}: {e}", path.display());
                Some(Rejection::Unreadable)
            }
            Ok(sealed) => match key.open(digest_hex, &self.engine_key, &sealed) {
                None => Some(Rejection::BadSeal),
                Some(artifact) => {
                    // SAFETY: the bytes are in memory (nothing can change
                    // them between the check and their use) and carry a tag
                    // under this user's key over the verified component's
                    // digest and this engine's key: this host compiled them
                    // from that component. wasmtime checks the header
                    // against this engine's version and configuration.
                    match unsafe { Component::deserialize(engine, artifact) } {
                        Ok(component) => return Ok((component, CacheOutcome::Hit)),
                        Err(e) => {
                            tracing::warn!("cannot load cached artifact {}: {e}", path.display());
                            Some(Rejection::Unloadable)
                        }
                    }
                }
            },
        };
        if let Some(why) = rejected {
            tracing::warn!("discarding cached artifact {}: {why}", path.display());
            let _ = std::fs::remove_file(&path);
        }
        let component = compile(engine, bytes)?;
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
        let outcome = rejected.map_or(CacheOutcome::Compiled, CacheOutcome::Recompiled);
        Ok((component, outcome))
    }
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

//! The seal on compiled artifacts: an HMAC-SHA256 under a per-user key kept
//! outside the cache directory.
//!
//! A compiled artifact is native code that wasmtime maps and runs without
//! checking it, so the cache must prove that an artifact is one this host
//! wrote for these verified component bytes. Every artifact ends with a tag
//! over the component's digest, the engine key and the artifact; the key is
//! 32 random bytes in a file (mode 0600) the cache directory does not hold.
//! Someone who can write the cache but not the key can only make the host
//! recompile.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

/// Bytes of the key and of a tag.
pub(crate) const KEY_LEN: usize = 32;
/// Bytes of a tag (HMAC-SHA256).
pub(crate) const TAG_LEN: usize = 32;

const BLOCK: usize = 64;
const DOMAIN: &[u8] = b"agent component cache v1\0";

/// HMAC-SHA256 (RFC 2104) of the concatenation of `parts`.
fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; TAG_LEN] {
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let mut inner = Sha256::new();
    inner.update(pad(0x36));
    for part in parts {
        inner.update(part);
    }
    let mut outer = Sha256::new();
    outer.update(pad(0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// The secret key that seals artifacts.
pub(crate) struct SealKey([u8; KEY_LEN]);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

impl SealKey {
    /// Reads the key at `path`, creating it (32 random bytes, mode 0600,
    /// atomically: concurrent processes end up with the same key) when it
    /// does not exist, and replacing it when it is not 32 bytes.
    pub(crate) fn load_or_create(path: &Path) -> Result<SealKey> {
        match std::fs::read(path) {
            Ok(bytes) => match <[u8; KEY_LEN]>::try_from(bytes.as_slice()) {
                Ok(key) => return Ok(SealKey(key)),
                Err(_) => {
                    tracing::warn!(
                        "the component cache key {} is {} bytes, not {KEY_LEN}: replacing it \
                         (cached components are recompiled)",
                        path.display(),
                        bytes.len()
                    );
                    return create(path, Replace::Yes);
                }
            },
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        }
        create(path, Replace::No)
    }

    /// The tag of an artifact compiled from the component `digest_hex` for
    /// the engine `engine_key`.
    pub(crate) fn tag(&self, digest_hex: &str, engine_key: &str, artifact: &[u8]) -> [u8; TAG_LEN] {
        let len = |s: &str| (s.len() as u64).to_le_bytes();
        hmac_sha256(
            &self.0,
            &[
                DOMAIN,
                &len(digest_hex),
                digest_hex.as_bytes(),
                &len(engine_key),
                engine_key.as_bytes(),
                artifact,
            ],
        )
    }

    /// Splits a sealed file into its artifact when its tag is right
    /// (compared in constant time); `None` otherwise.
    pub(crate) fn open<'a>(
        &self,
        digest_hex: &str,
        engine_key: &str,
        sealed: &'a [u8],
    ) -> Option<&'a [u8]> {
        let split = sealed.len().checked_sub(TAG_LEN)?;
        let (artifact, tag) = sealed.split_at(split);
        let expected = self.tag(digest_hex, engine_key, artifact);
        let diff = expected
            .iter()
            .zip(tag)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        (diff == 0).then_some(artifact)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Replace {
    Yes,
    No,
}

/// Writes a new random key to a temporary file next to `path` and moves it
/// into place: without replacing a key another process created meanwhile
/// (whose key is then used), or replacing a damaged one.
fn create(path: &Path, replace: Replace) -> Result<SealKey> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(&dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    let mut key = [0u8; KEY_LEN];
    getrandom::fill(&mut key)
        .map_err(|e| anyhow::anyhow!("the system random source failed: {e}"))?;
    // Mode 0600; removed on every error path when dropped.
    let mut tmp = tempfile::Builder::new()
        .prefix(".component-cache-key-")
        .tempfile_in(&dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(&key)
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", tmp.path().display()))?;
    match replace {
        Replace::Yes => {
            tmp.persist(path)
                .map_err(|e| e.error)
                .with_context(|| format!("replacing {}", path.display()))?;
            Ok(SealKey(key))
        }
        Replace::No => match tmp.persist_noclobber(path) {
            Ok(_) => Ok(SealKey(key)),
            Err(e) if e.error.kind() == io::ErrorKind::AlreadyExists => {
                drop(e.file);
                let bytes =
                    std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
                <[u8; KEY_LEN]>::try_from(bytes.as_slice())
                    .map(SealKey)
                    .map_err(|_| {
                        anyhow::anyhow!(
                            "{} is {} bytes, not {KEY_LEN}: delete it (a new key is created \
                             and cached components are recompiled)",
                            path.display(),
                            bytes.len()
                        )
                    })
            }
            Err(e) => Err(e.error).with_context(|| format!("creating {}", path.display())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 (a short key) and test case 6 (a key longer than a block).
        let tag = hmac_sha256(b"Jefe", &[b"what do ya want ", b"for nothing?"]);
        assert_eq!(
            hex::encode(tag),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let tag = hmac_sha256(
            &[0xaa; 131],
            &[b"Test Using Larger Than Block-Size Key - Hash Key First"],
        );
        assert_eq!(
            hex::encode(tag),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_sealed_artifact_opens_only_unchanged_under_its_key_digest_and_engine() {
        let dir = tempfile::tempdir().unwrap();
        let key = SealKey::load_or_create(&dir.path().join("k")).unwrap();
        let mut sealed = b"native code".to_vec();
        sealed.extend_from_slice(&key.tag("d1", "e1", b"native code"));
        assert_eq!(key.open("d1", "e1", &sealed), Some(&b"native code"[..]));
        assert_eq!(key.open("d2", "e1", &sealed), None, "another component");
        assert_eq!(key.open("d1", "e2", &sealed), None, "another engine");
        let other = SealKey::load_or_create(&dir.path().join("other")).unwrap();
        assert_eq!(other.open("d1", "e1", &sealed), None, "another key");
        sealed[3] ^= 1;
        assert_eq!(key.open("d1", "e1", &sealed), None, "a flipped bit");
        assert_eq!(key.open("d1", "e1", &sealed[..10]), None, "too short");
    }

    #[test]
    fn the_key_is_created_once_private_and_replaced_when_damaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data").join("component-cache.key");
        let first = SealKey::load_or_create(&path).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), first.0);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "the key is private");
        }
        let again = SealKey::load_or_create(&path).unwrap();
        assert_eq!(again.0, first.0, "the same key on the next start");
        std::fs::write(&path, b"short").unwrap();
        let replaced = SealKey::load_or_create(&path).unwrap();
        assert_ne!(replaced.0, first.0);
        assert_eq!(std::fs::read(&path).unwrap(), replaced.0);
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["component-cache.key"], "no temporary file left");
    }
}

//! Ed25519 keys, their text files, and the user's set of trusted keys.
//!
//! Files (one line each, documented in `docs/signatures.md`):
//! - secret key: `agent-secret-key-v1 <base64 32-byte seed>` (mode 0600)
//! - public key: `agent-public-key-v1 <base64 32-byte key> [comment]`
//!
//! A key's id is the first 16 hex digits of the SHA-256 of its public key.

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use ed25519_dalek::SigningKey;

use crate::{TrustError, sha256};

const SECRET_TAG: &str = "agent-secret-key-v1";
const PUBLIC_TAG: &str = "agent-public-key-v1";

/// A short, stable identifier of a public key (16 hex digits).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(pub String);

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An ed25519 public key.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PublicKey([u8; 32]);

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PublicKey({})", self.id())
    }
}

impl PublicKey {
    /// Wraps raw key bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        PublicKey(bytes)
    }

    /// The raw key bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The key's id.
    pub fn id(&self) -> KeyId {
        KeyId(hex::encode(&sha256(&self.0)[..8]))
    }

    /// The key as base64, as written in public key files.
    pub fn to_base64(&self) -> String {
        B64.encode(self.0)
    }

    /// The one-line public key file content.
    pub fn to_file_line(&self, comment: &str) -> String {
        if comment.is_empty() {
            format!("{PUBLIC_TAG} {}\n", self.to_base64())
        } else {
            format!("{PUBLIC_TAG} {} {comment}\n", self.to_base64())
        }
    }

    /// Parses a public key file's text, or a bare base64 key. Returns the
    /// key and its comment (empty when none).
    ///
    /// # Errors
    /// [`TrustError::Key`] describing what is wrong.
    pub fn parse(text: &str) -> Result<(PublicKey, String), TrustError> {
        let line = text.trim();
        let mut parts = line.splitn(3, char::is_whitespace);
        let first = parts.next().unwrap_or_default();
        let (b64, comment) = if first == PUBLIC_TAG {
            (
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default().trim().to_string(),
            )
        } else if first == SECRET_TAG {
            return Err(TrustError::Key(
                "this is a secret key; pass the `.pub` file instead".into(),
            ));
        } else {
            (first, String::new())
        };
        let bytes = B64
            .decode(b64)
            .map_err(|e| TrustError::Key(format!("public key is not valid base64: {e}")))?;
        let bytes: [u8; 32] = bytes.try_into().map_err(|v: Vec<u8>| {
            TrustError::Key(format!("public key must be 32 bytes, found {}", v.len()))
        })?;
        Ok((PublicKey(bytes), comment))
    }
}

/// An ed25519 secret key.
pub struct SecretKey(SigningKey);

impl SecretKey {
    /// Generates a new key from the operating system's random source.
    ///
    /// # Errors
    /// [`TrustError::Key`] when no randomness is available.
    pub fn generate() -> Result<SecretKey, TrustError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)
            .map_err(|e| TrustError::Key(format!("no random source for key generation: {e}")))?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// The signing key.
    pub fn signing_key(&self) -> &SigningKey {
        &self.0
    }

    /// The matching public key.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key().to_bytes())
    }

    /// The secret key file content.
    pub fn to_file_line(&self) -> String {
        format!("{SECRET_TAG} {}\n", B64.encode(self.0.to_bytes()))
    }

    /// Parses a secret key file's text.
    ///
    /// # Errors
    /// [`TrustError::Key`] describing what is wrong.
    pub fn parse(text: &str) -> Result<SecretKey, TrustError> {
        let mut parts = text.split_whitespace();
        match parts.next() {
            Some(SECRET_TAG) => {}
            Some(PUBLIC_TAG) => {
                return Err(TrustError::Key(
                    "this is a public key; signing needs the secret key file".into(),
                ));
            }
            _ => {
                return Err(TrustError::Key(format!(
                    "not an agent secret key (expected a line starting with `{SECRET_TAG}`)"
                )));
            }
        }
        let bytes = B64
            .decode(parts.next().unwrap_or_default())
            .map_err(|e| TrustError::Key(format!("secret key is not valid base64: {e}")))?;
        let seed: [u8; 32] = bytes.try_into().map_err(|v: Vec<u8>| {
            TrustError::Key(format!("secret key must be 32 bytes, found {}", v.len()))
        })?;
        Ok(SecretKey(SigningKey::from_bytes(&seed)))
    }

    /// Reads a secret key file.
    ///
    /// # Errors
    /// [`TrustError::Io`] or [`TrustError::Key`], naming the file.
    pub fn read(path: &Path) -> Result<SecretKey, TrustError> {
        let text = fs::read_to_string(path).map_err(|e| TrustError::io(path, e))?;
        SecretKey::parse(&text).map_err(|e| TrustError::Key(format!("{}: {e}", path.display())))
    }

    /// Writes `NAME.key` (mode 0600) and `NAME.pub` into `dir`; refuses to
    /// overwrite an existing key. Returns both paths.
    ///
    /// # Errors
    /// [`TrustError::Io`] naming the file, or [`TrustError::Key`] when a key
    /// of that name exists.
    pub fn write_pair(&self, dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), TrustError> {
        fs::create_dir_all(dir).map_err(|e| TrustError::io(dir, e))?;
        let secret = dir.join(format!("{name}.key"));
        let public = dir.join(format!("{name}.pub"));
        if secret.exists() || public.exists() {
            return Err(TrustError::Key(format!(
                "a key named `{name}` already exists in {}; choose another --name",
                dir.display()
            )));
        }
        // On a failure (a full disk) nothing is left: a half-written pair
        // would block the next attempt with "already exists".
        write_private(&secret, self.to_file_line().as_bytes())?;
        if let Err(e) = fs::write(&public, self.public().to_file_line(name)) {
            let _ = fs::remove_file(&public);
            let _ = fs::remove_file(&secret);
            return Err(TrustError::io(&public, e));
        }
        Ok((secret, public))
    }
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<(), TrustError> {
    use std::io::Write;
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(path).map_err(|e| TrustError::io(path, e))?;
    file.write_all(bytes).map_err(|e| {
        // Created here: a partial file is removed.
        let _ = fs::remove_file(path);
        TrustError::io(path, e)
    })
}

/// A trusted key with the name it was trusted under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedKey {
    /// The key.
    pub key: PublicKey,
    /// The comment or name given when it was trusted.
    pub name: String,
    /// The file it is stored in.
    pub path: PathBuf,
}

/// The user's trusted publisher keys: one `<key id>.pub` file each in a
/// directory (`~/.config/agent/trusted-keys/`).
#[derive(Debug, Clone)]
pub struct TrustStore {
    dir: PathBuf,
    keys: Vec<TrustedKey>,
}

impl TrustStore {
    /// Loads every key file in `dir` (a missing directory is an empty store).
    ///
    /// # Errors
    /// [`TrustError::Io`] or [`TrustError::Key`] naming a broken key file.
    pub fn load(dir: &Path) -> Result<TrustStore, TrustError> {
        let mut keys = Vec::new();
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TrustStore {
                    dir: dir.to_path_buf(),
                    keys,
                });
            }
            Err(e) => return Err(TrustError::io(dir, e)),
        };
        for entry in entries {
            let path = entry.map_err(|e| TrustError::io(dir, e))?.path();
            if path.extension().and_then(|e| e.to_str()) != Some("pub") {
                continue;
            }
            let text = fs::read_to_string(&path).map_err(|e| TrustError::io(&path, e))?;
            let (key, name) = PublicKey::parse(&text)
                .map_err(|e| TrustError::Key(format!("{}: {e}", path.display())))?;
            keys.push(TrustedKey { key, name, path });
        }
        keys.sort_by_key(|k| k.key.id());
        Ok(TrustStore {
            dir: dir.to_path_buf(),
            keys,
        })
    }

    /// The trusted keys, sorted by id.
    pub fn keys(&self) -> &[TrustedKey] {
        &self.keys
    }

    /// Whether `key` is trusted.
    pub fn is_trusted(&self, key: &PublicKey) -> bool {
        self.keys.iter().any(|k| k.key == *key)
    }

    /// Adds a key (idempotent). Returns whether it was new.
    ///
    /// # Errors
    /// [`TrustError::Io`] naming the file.
    pub fn trust(&mut self, key: PublicKey, name: &str) -> Result<bool, TrustError> {
        if self.is_trusted(&key) {
            return Ok(false);
        }
        fs::create_dir_all(&self.dir).map_err(|e| TrustError::io(&self.dir, e))?;
        let path = self.dir.join(format!("{}.pub", key.id()));
        fs::write(&path, key.to_file_line(name)).map_err(|e| TrustError::io(&path, e))?;
        self.keys.push(TrustedKey {
            key,
            name: name.to_string(),
            path,
        });
        Ok(true)
    }

    /// Removes the key whose id starts with `id_prefix` (at least 4 digits).
    ///
    /// # Errors
    /// [`TrustError::Key`] when no key or several keys match.
    pub fn untrust(&mut self, id_prefix: &str) -> Result<TrustedKey, TrustError> {
        if id_prefix.len() < 4 {
            return Err(TrustError::Key(
                "give at least 4 digits of the key id".into(),
            ));
        }
        let matching: Vec<usize> = (0..self.keys.len())
            .filter(|i| self.keys[*i].key.id().0.starts_with(id_prefix))
            .collect();
        match matching.as_slice() {
            [i] => {
                let removed = self.keys.remove(*i);
                fs::remove_file(&removed.path).map_err(|e| TrustError::io(&removed.path, e))?;
                Ok(removed)
            }
            [] => Err(TrustError::Key(format!(
                "no trusted key id starts with `{id_prefix}` (see `agent keys list`)"
            ))),
            _ => Err(TrustError::Key(format!(
                "several trusted keys start with `{id_prefix}`; give more digits"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_round_trip() {
        let key = SecretKey::generate().expect("key");
        let parsed = SecretKey::parse(&key.to_file_line()).expect("parse");
        assert_eq!(parsed.public(), key.public());
        let (public, comment) = PublicKey::parse(&key.public().to_file_line("alice")).expect("pub");
        assert_eq!(public, key.public());
        assert_eq!(comment, "alice");
        assert_eq!(key.public().id().0.len(), 16);
    }

    #[test]
    fn mixing_up_key_files_is_explained() {
        let key = SecretKey::generate().expect("key");
        let err = SecretKey::parse(&key.public().to_file_line(""))
            .err()
            .expect("error");
        assert!(err.to_string().contains("public key"), "{err}");
        let err = PublicKey::parse(&key.to_file_line()).unwrap_err();
        assert!(err.to_string().contains("secret key"), "{err}");
        assert!(PublicKey::parse("agent-public-key-v1 AAAA").is_err());
    }

    #[test]
    fn trust_store_trusts_lists_and_untrusts() {
        let dir = std::env::temp_dir().join(format!("agent-trust-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let key = SecretKey::generate().expect("key");
        let mut store = TrustStore::load(&dir).expect("load");
        assert!(!store.is_trusted(&key.public()));
        assert!(store.trust(key.public(), "alice").expect("trust"));
        assert!(!store.trust(key.public(), "alice").expect("again"));
        let reloaded = TrustStore::load(&dir).expect("reload");
        assert!(reloaded.is_trusted(&key.public()));
        assert_eq!(reloaded.keys()[0].name, "alice");
        let mut reloaded = reloaded;
        assert!(reloaded.untrust("zz").is_err());
        reloaded
            .untrust(&key.public().id().0[..6])
            .expect("untrust");
        assert!(
            !TrustStore::load(&dir)
                .expect("load")
                .is_trusted(&key.public())
        );
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn write_pair_refuses_to_overwrite() {
        let dir = std::env::temp_dir().join(format!("agent-keypair-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let key = SecretKey::generate().expect("key");
        let (secret, _) = key.write_pair(&dir, "me").expect("write");
        assert_eq!(
            SecretKey::read(&secret).expect("read").public(),
            key.public()
        );
        assert!(key.write_pair(&dir, "me").is_err());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&secret).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let _ = fs::remove_dir_all(&dir);
    }
}

//! `agent-trust`: digests, ed25519 component signatures and keys.
//!
//! Every component the host loads — built-ins included — is verified with
//! [`verify`] before it is compiled or its cached artifact is used. The
//! signature format is described in [`signature`] and `docs/signatures.md`.
#![deny(missing_docs)]

pub mod keys;
pub mod signature;
pub mod statement;

use std::path::{Path, PathBuf};

pub use keys::{KeyId, PublicKey, SecretKey, TrustStore, TrustedKey};
pub use signature::{SignatureBlock, Verified, sign, split, verify, verify_with_digest};
pub use statement::{SignedFile, Statement, read_skill_file};

/// A SHA-256 digest.
pub type Digest = [u8; 32];

/// SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> Digest {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// Why a key or signature operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The component carries no signature.
    #[error(
        "the component is not signed (sign it with `agent skill sign PATH --key FILE`; for local development only, `--allow-unsigned`)"
    )]
    Unsigned,
    /// Signed by a key the user does not trust.
    #[error(
        "the component is signed by key {key_id}, which you do not trust (trust its publisher with `agent keys trust FILE.pub`)"
    )]
    UntrustedKey {
        /// The signer's key id.
        key_id: KeyId,
    },
    /// The signature does not match the bytes.
    #[error(
        "the signature (key {key_id}) does not match the component: it was changed after signing or signed with another key"
    )]
    BadSignature {
        /// The key id named in the signature block.
        key_id: KeyId,
    },
    /// Signed in agent 0.1.0's format, which covers the component only.
    #[error(
        "it was signed (key {key_id}) in the old format of agent 0.1.0, which does not cover SKILL.yaml or the files it names; re-install it (`agent skill install SOURCE`) or re-sign it (`agent skill sign DIR --key FILE`)"
    )]
    LegacyFormat {
        /// The signer's key id.
        key_id: KeyId,
    },
    /// A file the signature covers changed (or is gone).
    #[error(
        "{path} changed after it was signed ({now}); re-install the skill (`agent skill install SOURCE`) or re-sign it with `agent skill sign DIR --key FILE`"
    )]
    FileChanged {
        /// The file, relative to the skill directory.
        path: String,
        /// What is wrong with it now.
        now: String,
    },
    /// The manifest names a file the signature does not cover.
    #[error(
        "SKILL.yaml names {path}, which the signature does not cover; re-sign the skill with `agent skill sign DIR --key FILE`"
    )]
    NotCovered {
        /// The file, relative to the skill directory.
        path: String,
    },
    /// Not a wasm binary, or a broken signature section.
    #[error("malformed component: {0}")]
    Malformed(String),
    /// A key file or key value is wrong.
    #[error("{0}")]
    Key(String),
    /// Reading or writing a file failed.
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error (shown in the message, so not also a `source`, which
        /// would print it twice in an error chain).
        error: std::io::Error,
    },
}

impl TrustError {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> TrustError {
        TrustError::Io {
            path: path.to_path_buf(),
            error,
        }
    }
}

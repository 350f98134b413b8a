//! Component signatures carried in a custom section.
//!
//! Format (documented in `docs/signatures.md`):
//! - The signature lives in a custom section named [`SECTION_NAME`] that must
//!   be the **last** section of the component (or core module) binary.
//! - Its payload is a format byte (`2`), the signer's 32-byte ed25519 public
//!   key, the 64-byte ed25519 signature and the [`Statement`]: the SHA-256 of
//!   every byte of the binary that precedes the signature section, and the
//!   path and SHA-256 of `SKILL.yaml` and of every file it names.
//! - The signed message is [`CONTEXT`] followed by the statement's bytes.
//!
//! Anything appended after the signature, a second signature section, a
//! changed byte before it or a changed covered file makes verification fail.
//! Format `1` (agent 0.1.0: 97 bytes, the component's digest only) is
//! recognised and refused with [`TrustError::LegacyFormat`].

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};

use crate::keys::{KeyId, PublicKey};
use crate::statement::Statement;
use crate::{Digest, TrustError, sha256};

/// Name of the custom section holding the signature.
pub const SECTION_NAME: &str = "agent-signature";
/// Domain-separation prefix of the signed message.
pub const CONTEXT: &[u8] = b"agent-skill-signature-v2";
/// The format byte of agent 0.1.0's component-only signatures.
pub const FORMAT_V1: u8 = 1;
/// The format byte of signatures covering the manifest too.
pub const FORMAT_V2: u8 = 2;
const V1_PAYLOAD_LEN: usize = 1 + 32 + 64;

/// A parsed signature block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureBlock {
    /// The signer's public key.
    pub key: PublicKey,
    /// The ed25519 signature bytes.
    pub signature: [u8; 64],
    /// What it covers; `None` for a format-1 (agent 0.1.0) signature, which
    /// covered the component only and is refused.
    pub statement: Option<Statement>,
}

/// What a successful verification established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The key that signed.
    pub key_id: KeyId,
    /// SHA-256 of the unsigned component bytes.
    pub digest: Digest,
    /// The signed file list; the caller checks the files with
    /// [`Statement::check_files`].
    pub statement: Statement,
}

/// A binary split into its unsigned part and its signature, if any.
#[derive(Debug)]
pub struct Split<'a> {
    /// The bytes the signature covers (the whole binary when unsigned).
    pub unsigned: &'a [u8],
    /// The signature block, when present.
    pub block: Option<SignatureBlock>,
}

fn read_leb_u32(bytes: &[u8], pos: &mut usize) -> Result<u32, TrustError> {
    let mut result: u64 = 0;
    let mut shift = 0;
    loop {
        let byte = *bytes
            .get(*pos)
            .ok_or_else(|| TrustError::Malformed("truncated section header".into()))?;
        *pos += 1;
        result |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 28 {
            return Err(TrustError::Malformed(
                "section size is not a valid u32".into(),
            ));
        }
    }
    u32::try_from(result).map_err(|_| TrustError::Malformed("section size overflows".into()))
}

fn write_leb_u32(out: &mut Vec<u8>, mut value: u32) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
}

/// Splits a wasm binary into the bytes a signature covers and the signature.
///
/// # Errors
/// [`TrustError::Malformed`] when the bytes are not a wasm binary, a section
/// runs past the end, a signature section is not last, or there are two.
pub fn split(bytes: &[u8]) -> Result<Split<'_>, TrustError> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(TrustError::Malformed(
            "not a WebAssembly binary (bad magic number)".into(),
        ));
    }
    let mut pos = 8;
    let mut found: Option<(usize, SignatureBlock)> = None;
    while pos < bytes.len() {
        let section_start = pos;
        if found.is_some() {
            return Err(TrustError::Malformed(format!(
                "data after the `{SECTION_NAME}` section (it must be the last section)"
            )));
        }
        let id = bytes[pos];
        pos += 1;
        let size = read_leb_u32(bytes, &mut pos)? as usize;
        let end = pos
            .checked_add(size)
            .filter(|end| *end <= bytes.len())
            .ok_or_else(|| {
                TrustError::Malformed("a section runs past the end of the file".into())
            })?;
        if id == 0 {
            let mut p = pos;
            let name_len = read_leb_u32(bytes, &mut p)? as usize;
            let name_end = p
                .checked_add(name_len)
                .filter(|e| *e <= end)
                .ok_or_else(|| {
                    TrustError::Malformed("custom section name runs past its section".into())
                })?;
            if &bytes[p..name_end] == SECTION_NAME.as_bytes() {
                found = Some((section_start, parse_payload(&bytes[name_end..end])?));
            }
        }
        pos = end;
    }
    Ok(match found {
        Some((start, block)) => Split {
            unsigned: &bytes[..start],
            block: Some(block),
        },
        None => Split {
            unsigned: bytes,
            block: None,
        },
    })
}

fn parse_payload(payload: &[u8]) -> Result<SignatureBlock, TrustError> {
    let format = payload.first().copied();
    let known = match format {
        Some(FORMAT_V1) => payload.len() == V1_PAYLOAD_LEN,
        Some(FORMAT_V2) => payload.len() > V1_PAYLOAD_LEN,
        _ => false,
    };
    if !known {
        return Err(TrustError::Malformed(format!(
            "`{SECTION_NAME}` section has an unknown format (expected format {FORMAT_V2}, or format {FORMAT_V1} of {V1_PAYLOAD_LEN} bytes)"
        )));
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(&payload[1..33]);
    let mut signature = [0u8; 64];
    signature.copy_from_slice(&payload[33..V1_PAYLOAD_LEN]);
    let statement = match format {
        Some(FORMAT_V2) => Some(Statement::parse(&payload[V1_PAYLOAD_LEN..])?),
        _ => None,
    };
    Ok(SignatureBlock {
        key: PublicKey::from_bytes(key),
        signature,
        statement,
    })
}

fn message(statement: &Statement) -> Vec<u8> {
    let mut m = CONTEXT.to_vec();
    m.extend_from_slice(&statement.encode());
    m
}

/// Signs a skill: its component (or core module) and `files`, the path
/// (relative to the skill directory) and bytes of `SKILL.yaml` and of every
/// file it names, replacing any previous signature of the component.
///
/// # Errors
/// [`TrustError::Malformed`] when `bytes` is not a wasm binary, a path is
/// not a plain relative path, or `SKILL.yaml` is not among `files`.
pub fn sign(
    bytes: &[u8],
    files: &[(String, Vec<u8>)],
    key: &SigningKey,
) -> Result<Vec<u8>, TrustError> {
    let unsigned = split(bytes)?.unsigned;
    let statement = Statement::new(unsigned, files)?;
    let signature: Signature = key.sign(&message(&statement));

    let encoded = statement.encode();
    let mut payload = Vec::with_capacity(V1_PAYLOAD_LEN + encoded.len());
    payload.push(FORMAT_V2);
    payload.extend_from_slice(key.verifying_key().as_bytes());
    payload.extend_from_slice(&signature.to_bytes());
    payload.extend_from_slice(&encoded);
    Ok(append_section(unsigned, &payload))
}

/// `unsigned` followed by a signature section holding `payload`.
pub fn append_section(unsigned: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut section = Vec::new();
    write_leb_u32(&mut section, SECTION_NAME.len() as u32);
    section.extend_from_slice(SECTION_NAME.as_bytes());
    section.extend_from_slice(payload);

    let mut out = Vec::with_capacity(unsigned.len() + section.len() + 6);
    out.extend_from_slice(unsigned);
    out.push(0);
    write_leb_u32(&mut out, section.len() as u32);
    out.extend_from_slice(&section);
    out
}

/// Verifies a signed binary against a set of trusted keys: the signature
/// over its statement and that the statement's component digest is the
/// digest of these bytes. The files the statement lists are checked by the
/// caller with [`Statement::check_files`] (they live outside the binary).
///
/// `is_trusted` is asked about the signer's key first: an untrusted signer
/// is refused even when the signature is valid.
///
/// # Errors
/// - [`TrustError::Unsigned`]: no signature section.
/// - [`TrustError::LegacyFormat`]: an agent 0.1.0 signature, which does not
///   cover the manifest.
/// - [`TrustError::UntrustedKey`]: signed by a key the user does not trust.
/// - [`TrustError::BadSignature`]: the signature does not match the bytes
///   (changed after signing, or the key in the block is not the signer).
/// - [`TrustError::Malformed`]: not a wasm binary or a broken section.
pub fn verify(
    bytes: &[u8],
    is_trusted: impl Fn(&PublicKey) -> bool,
) -> Result<Verified, TrustError> {
    verify_with_digest(bytes, is_trusted, sha256)
}

/// [`verify`], with the SHA-256 of the unsigned bytes computed by
/// `digest_of` (given exactly those bytes): a caller that already knows the
/// digest of these very bytes (the runtime's memo of verified files) passes
/// it instead of hashing again. `digest_of` must return their SHA-256; a
/// wrong answer is a wrong verification.
///
/// # Errors
/// As [`verify`].
pub fn verify_with_digest(
    bytes: &[u8],
    is_trusted: impl Fn(&PublicKey) -> bool,
    digest_of: impl FnOnce(&[u8]) -> Digest,
) -> Result<Verified, TrustError> {
    let split = split(bytes)?;
    let block = split.block.ok_or(TrustError::Unsigned)?;
    let key_id = block.key.id();
    let Some(statement) = block.statement else {
        return Err(TrustError::LegacyFormat { key_id });
    };
    if !is_trusted(&block.key) {
        return Err(TrustError::UntrustedKey { key_id });
    }
    let bad = || TrustError::BadSignature {
        key_id: key_id.clone(),
    };
    let verifying = VerifyingKey::from_bytes(block.key.as_bytes()).map_err(|_| bad())?;
    let signature = Signature::from_bytes(&block.signature);
    verifying
        .verify(&message(&statement), &signature)
        .map_err(|_| bad())?;
    let digest = digest_of(split.unsigned);
    if digest != statement.component {
        return Err(bad());
    }
    Ok(Verified {
        key_id,
        digest,
        statement,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::SecretKey;

    // The smallest valid component: header only.
    const EMPTY_COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

    fn files() -> Vec<(String, Vec<u8>)> {
        vec![("SKILL.yaml".into(), b"name: x\n".to_vec())]
    }

    /// Offset of the signature payload (the format byte) in a signed binary.
    fn payload_at(signed: &[u8]) -> usize {
        let name = SECTION_NAME.as_bytes();
        let at = signed
            .windows(name.len())
            .rposition(|w| w == name)
            .expect("section name");
        at + name.len()
    }

    fn module_with_custom(name: &str) -> Vec<u8> {
        let mut m = b"\0asm\x01\x00\x00\x00".to_vec();
        let mut section = Vec::new();
        write_leb_u32(&mut section, name.len() as u32);
        section.extend_from_slice(name.as_bytes());
        section.extend_from_slice(b"payload");
        m.push(0);
        write_leb_u32(&mut m, section.len() as u32);
        m.extend_from_slice(&section);
        m
    }

    #[test]
    fn sign_then_verify_round_trips() {
        let key = SecretKey::generate().expect("key");
        let signed = sign(EMPTY_COMPONENT, &files(), key.signing_key()).expect("sign");
        let v = verify(&signed, |k| *k == key.public()).expect("verify");
        assert_eq!(v.key_id, key.public().id());
        assert_eq!(v.digest, sha256(EMPTY_COMPONENT));
    }

    #[test]
    fn re_signing_replaces_the_old_signature() {
        let a = SecretKey::generate().expect("key");
        let b = SecretKey::generate().expect("key");
        let once = sign(EMPTY_COMPONENT, &files(), a.signing_key()).expect("sign");
        let twice = sign(&once, &files(), b.signing_key()).expect("sign");
        assert_eq!(twice.len(), once.len());
        assert_eq!(split(&twice).expect("split").unsigned, EMPTY_COMPONENT);
        assert!(verify(&twice, |k| *k == b.public()).is_ok());
    }

    #[test]
    fn flipped_byte_is_refused() {
        let key = SecretKey::generate().expect("key");
        let signed = sign(&module_with_custom("x"), &files(), key.signing_key()).expect("sign");
        let mut tampered = signed.clone();
        tampered[12] ^= 1; // inside the first custom section's name/payload
        let err = verify(&tampered, |k| *k == key.public()).unwrap_err();
        assert!(matches!(err, TrustError::BadSignature { .. }), "{err}");
    }

    #[test]
    fn swapped_key_is_refused() {
        let signer = SecretKey::generate().expect("key");
        let other = SecretKey::generate().expect("key");
        let mut signed = sign(EMPTY_COMPONENT, &files(), signer.signing_key()).expect("sign");
        // Put the other (trusted) key in the block: the signature no longer matches.
        let key_at = payload_at(&signed) + 1;
        signed[key_at..key_at + 32].copy_from_slice(other.public().as_bytes());
        let err = verify(&signed, |k| *k == other.public()).unwrap_err();
        assert!(matches!(err, TrustError::BadSignature { .. }), "{err}");
    }

    #[test]
    fn untrusted_and_unsigned_are_refused() {
        let key = SecretKey::generate().expect("key");
        let signed = sign(EMPTY_COMPONENT, &files(), key.signing_key()).expect("sign");
        assert!(matches!(
            verify(&signed, |_| false),
            Err(TrustError::UntrustedKey { .. })
        ));
        assert!(matches!(
            verify(EMPTY_COMPONENT, |_| true),
            Err(TrustError::Unsigned)
        ));
    }

    #[test]
    fn a_changed_statement_is_a_bad_signature() {
        let key = SecretKey::generate().expect("key");
        let signed = sign(EMPTY_COMPONENT, &files(), key.signing_key()).expect("sign");
        let other = sign(
            EMPTY_COMPONENT,
            &[("SKILL.yaml".into(), b"name: y\n".to_vec())],
            key.signing_key(),
        )
        .expect("sign");
        // Graft the statement of `other` under the signature of `signed`.
        let at = payload_at(&signed) + V1_PAYLOAD_LEN;
        let mut tampered = signed[..at].to_vec();
        tampered.extend_from_slice(&other[at..]);
        let err = verify(&tampered, |_| true).unwrap_err();
        assert!(matches!(err, TrustError::BadSignature { .. }), "{err}");
    }

    #[test]
    fn a_format_1_signature_is_refused_as_legacy() {
        let key = SecretKey::generate().expect("key");
        let mut digest_msg = b"agent-skill-signature-v1".to_vec();
        digest_msg.extend_from_slice(&sha256(EMPTY_COMPONENT));
        let sig = key.signing_key().sign(&digest_msg);
        let mut payload = vec![FORMAT_V1];
        payload.extend_from_slice(key.public().as_bytes());
        payload.extend_from_slice(&sig.to_bytes());
        let old = append_section(EMPTY_COMPONENT, &payload);
        let err = verify(&old, |_| true).unwrap_err();
        assert!(matches!(err, TrustError::LegacyFormat { .. }), "{err}");
        assert!(err.to_string().contains("agent skill sign"), "{err}");
    }

    #[test]
    fn data_after_the_signature_is_refused() {
        let key = SecretKey::generate().expect("key");
        let mut signed = sign(EMPTY_COMPONENT, &files(), key.signing_key()).expect("sign");
        signed.extend_from_slice(&module_with_custom("late")[8..]);
        let err = verify(&signed, |_| true).unwrap_err();
        assert!(err.to_string().contains("last section"), "{err}");
    }

    #[test]
    fn garbage_is_malformed() {
        assert!(matches!(
            verify(b"hello world", |_| true),
            Err(TrustError::Malformed(_))
        ));
        let mut truncated = module_with_custom("x");
        truncated.truncate(truncated.len() - 2);
        assert!(matches!(split(&truncated), Err(TrustError::Malformed(_))));
    }
}

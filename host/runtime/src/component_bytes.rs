//! A skill's component bytes: read from its file, or — a built-in's —
//! embedded zlib-compressed in the binary and inflated only when something
//! needs them (a compile on a cache miss, a signature check without the
//! build's key). Discovery and listing never inflate: every session finds
//! every built-in, and most sessions compile none of them.

use std::io::Read;
use std::sync::Arc;

/// The bytes of a component.
#[derive(Debug, Clone)]
pub enum ComponentBytes {
    /// In memory as they are (a skill read from its directory).
    Plain(Arc<[u8]>),
    /// zlib-compressed, part of this binary (a built-in).
    Deflated(&'static [u8]),
}

impl ComponentBytes {
    /// The component itself, inflated when it is stored compressed.
    ///
    /// # Errors
    /// Compressed bytes that do not inflate (a corrupted binary).
    pub fn get(&self) -> Result<Arc<[u8]>, std::io::Error> {
        match self {
            ComponentBytes::Plain(bytes) => Ok(bytes.clone()),
            ComponentBytes::Deflated(packed) => inflate(packed).map(Arc::from),
        }
    }

    /// How many bytes are held, compressed or not (for size reports).
    pub fn stored_len(&self) -> usize {
        match self {
            ComponentBytes::Plain(bytes) => bytes.len(),
            ComponentBytes::Deflated(packed) => packed.len(),
        }
    }
}

impl From<Arc<[u8]>> for ComponentBytes {
    fn from(bytes: Arc<[u8]>) -> ComponentBytes {
        ComponentBytes::Plain(bytes)
    }
}

impl From<Vec<u8>> for ComponentBytes {
    fn from(bytes: Vec<u8>) -> ComponentBytes {
        ComponentBytes::Plain(Arc::from(bytes))
    }
}

/// zlib-decompresses `packed` (a built-in's component or native code).
///
/// # Errors
/// Bytes that are not a complete zlib stream.
pub fn inflate(packed: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::with_capacity(packed.len() * 3);
    flate2::read::ZlibDecoder::new(packed).read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn deflate(bytes: &[u8]) -> &'static [u8] {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(bytes).unwrap();
        Vec::leak(z.finish().unwrap())
    }

    #[test]
    fn deflated_bytes_inflate_to_the_component() {
        let component = b"\0asm component bytes, repeated, repeated, repeated".to_vec();
        let packed = ComponentBytes::Deflated(deflate(&component));
        assert_eq!(&*packed.get().unwrap(), &component[..]);
        let plain = ComponentBytes::from(component.clone());
        assert_eq!(&*plain.get().unwrap(), &component[..]);
        assert_eq!(plain.stored_len(), component.len());
    }

    #[test]
    fn bytes_that_are_not_zlib_are_an_error_not_a_panic() {
        assert!(ComponentBytes::Deflated(b"\0asm not zlib").get().is_err());
        let mut truncated = deflate(&[7u8; 4096]).to_vec();
        truncated.truncate(truncated.len() / 2);
        assert!(inflate(&truncated).is_err());
    }
}

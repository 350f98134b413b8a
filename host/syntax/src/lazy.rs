//! Grammars loaded on first use (Linux): `build.rs` compiled each grammar
//! into a shared object and embedded it zlib-compressed with its SHA-256.
//! The first time a grammar is asked for, its bytes are decompressed, their
//! digest is checked, and the object is loaded from an in-memory file
//! (memfd) with `dlopen`; the language stays loaded for the process's life.
//! A binary that never parses Swift never decompresses it.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::sync::OnceLock;

use sha2::Digest as _;
use tree_sitter::Language;
use tree_sitter_language::LanguageFn;

include!(concat!(env!("OUT_DIR"), "/grammars.rs"));

/// One slot per embedded grammar, filled on first use.
static LOADED: [OnceLock<Result<Language, String>>; EMBEDDED.len()] =
    [const { OnceLock::new() }; EMBEDDED.len()];

/// The grammar `name` (a canonical name of [`crate::languages`]), loaded
/// once per process. `None` for a name that is not embedded.
///
/// # Errors
/// The reason the embedded grammar could not be loaded (a corrupted
/// binary, or a system that refuses in-memory files or `dlopen`).
pub(crate) fn language(name: &str) -> Option<Result<Language, String>> {
    let i = EMBEDDED.iter().position(|(n, ..)| *n == name)?;
    let (_, symbol, digest, packed) = EMBEDDED[i];
    Some(
        LOADED[i]
            .get_or_init(|| {
                load(symbol, &digest, packed)
                    .map_err(|e| format!("loading the {name} grammar embedded in the binary: {e}"))
            })
            .clone(),
    )
}

/// Decompresses, checks and loads one grammar.
fn load(symbol: &str, digest: &[u8; 32], packed: &[u8]) -> Result<Language, String> {
    let object = inflate(packed)?;
    check_digest(&object, digest)?;
    let file = rustix::fs::memfd_create(symbol, rustix::fs::MemfdFlags::CLOEXEC)
        .map_err(|e| format!("creating an in-memory file: {e}"))?;
    std::fs::File::from(file.try_clone().map_err(|e| e.to_string())?)
        .write_all(&object)
        .map_err(|e| format!("writing the in-memory file: {e}"))?;
    let path = format!("/proc/self/fd/{}\0", file.as_raw_fd());
    // SAFETY: `path` is NUL-terminated. The object is the grammar this
    // binary's build compiled (its digest was just checked); it has no
    // initialisers beyond the C runtime's.
    let handle = unsafe { libc::dlopen(path.as_ptr().cast(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(format!("dlopen: {}", dl_error()));
    }
    // The file stays open for the process's life: the loader knows a loaded
    // object by its path, and a closed descriptor's number (so its path)
    // would be reused by the next grammar, which dlopen would then take for
    // this one. One descriptor per grammar used, at most eleven.
    std::mem::forget(file);
    let name = format!("{symbol}\0");
    // SAFETY: `handle` is a live handle (never closed: the language's
    // tables must outlive every parser), `name` is NUL-terminated.
    let function = unsafe { libc::dlsym(handle, name.as_ptr().cast()) };
    if function.is_null() {
        return Err(format!("dlsym {symbol}: {}", dl_error()));
    }
    // SAFETY: the symbol is the grammar's generated language function,
    // `const TSLanguage *tree_sitter_NAME(void)`, as tree-sitter generates
    // it; `LanguageFn` wraps exactly that signature.
    let language_fn = unsafe {
        LanguageFn::from_raw(std::mem::transmute::<
            *mut libc::c_void,
            unsafe extern "C" fn() -> *const (),
        >(function))
    };
    Ok(Language::new(language_fn))
}

/// zlib-decompresses `packed`.
pub(crate) fn inflate(packed: &[u8]) -> Result<Vec<u8>, String> {
    let mut object = Vec::new();
    flate2::read::ZlibDecoder::new(packed)
        .read_to_end(&mut object)
        .map_err(|e| format!("decompressing: {e}"))?;
    Ok(object)
}

/// Refuses bytes whose SHA-256 is not `digest`.
pub(crate) fn check_digest(object: &[u8], digest: &[u8; 32]) -> Result<(), String> {
    let actual: [u8; 32] = sha2::Sha256::digest(object).into();
    if &actual != digest {
        return Err(format!(
            "its SHA-256 is {}, the build recorded {}: the binary is corrupted; reinstall it",
            hex(&actual),
            hex(digest)
        ));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `dlerror()`'s message.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until
    // the next dl* call on this thread; it is copied at once.
    unsafe {
        let message = libc::dlerror();
        if message.is_null() {
            "unknown error".to_string()
        } else {
            std::ffi::CStr::from_ptr(message)
                .to_string_lossy()
                .into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every bundled grammar is embedded, and loads as itself: each is
    /// loaded from its own in-memory file (a reused descriptor number made
    /// every grammar after the first resolve to the first one).
    #[test]
    fn every_grammar_loads_as_itself() {
        let mut kinds = std::collections::BTreeMap::new();
        for name in crate::languages() {
            let language = language(name)
                .unwrap_or_else(|| panic!("{name} is not embedded"))
                .unwrap_or_else(|e| panic!("{e}"));
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&language).expect("a usable grammar");
            kinds.insert(*name, language.node_kind_count());
        }
        let distinct: std::collections::BTreeSet<_> = kinds.values().collect();
        assert_eq!(
            distinct.len(),
            kinds.len(),
            "grammars are distinct: {kinds:?}"
        );
        // Asked again, the same loaded grammar answers.
        let again = language("swift").expect("swift").expect("loads");
        assert_eq!(again.node_kind_count(), kinds["swift"]);
    }

    /// The bytes are checked before they are loaded: a flipped byte is a
    /// corrupted binary, said so, and nothing is loaded.
    #[test]
    fn a_grammar_whose_digest_differs_is_refused() {
        let (_, symbol, digest, packed) = EMBEDDED[0];
        let mut object = inflate(packed).expect("inflates");
        check_digest(&object, &digest).expect("the embedded bytes match");
        object[100] ^= 1;
        let err = check_digest(&object, &digest).unwrap_err();
        assert!(
            err.contains("the binary is corrupted; reinstall it"),
            "{err}"
        );
        let err = load(symbol, &[0; 32], packed).unwrap_err();
        assert!(err.starts_with("its SHA-256 is "), "{err}");
        assert!(inflate(b"not zlib").is_err());
    }

    /// What the binary carries instead of the grammars' tables and lexers.
    #[test]
    fn the_embedded_grammars_are_compressed() {
        for (name, _, _, packed) in EMBEDDED {
            let object = inflate(packed).expect("inflates");
            assert!(
                packed.len() * 3 < object.len(),
                "{name}: {} bytes compressed from {}",
                packed.len(),
                object.len()
            );
        }
    }
}

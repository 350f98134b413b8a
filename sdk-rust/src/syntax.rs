//! Source parsing with tree-sitter, run by the host. No permission needed:
//! the host only sees the text passed in.

use crate::Error;
use crate::host::syntax as imp;

pub use crate::host::syntax::{Capture, QueryMatch};

/// Languages the host has grammars for.
pub fn languages() -> Vec<String> {
    imp::languages()
}

/// Parses `source` as `language` and runs the tree-sitter `query` on it.
///
/// # Errors
///
/// [`Error`] when the language is unknown or the query is invalid.
pub fn query(language: &str, source: &str, query: &str) -> Result<Vec<QueryMatch>, Error> {
    imp::query(language, source, query).map_err(|e| Error::from_wit("syntax", e))
}

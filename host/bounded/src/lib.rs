//! Limits checked before any YAML or JSON the agent reads is parsed.
//!
//! Parsers build trees, and trees are walked and dropped recursively: a
//! 200 KB file of nested lists used to overflow the stack (exit 134) after
//! seconds and hundreds of megabytes. Every YAML and JSON document the
//! product reads — skill manifests, policy and capability files,
//! `.security.yaml`, registry indexes, lockfiles, OSV answers, model tool
//! arguments, hook outputs, stored records — goes through this crate first.
//!
//! A check does three things, in this order, and costs one pass without
//! recursion:
//!
//! 1. refuses text larger than [`Limits::max_bytes`];
//! 2. refuses nesting deeper than [`Limits::max_depth`] (YAML: block and flow
//!    collections, counted on the event stream; JSON: brackets outside
//!    strings), naming the line and column where the limit was crossed;
//! 3. for YAML, refuses aliases that together stand for more than
//!    [`Limits::max_alias_nodes`] nodes (the "billion laughs"), and counts an
//!    alias's depth where it is used.
//!
//! Then [`parse_yaml`] / [`parse_json`] hand the text to `serde_yaml` /
//! `serde_json`; code that walks YAML events itself calls [`check_yaml`]
//! first.
//!
//! # Example
//!
//! ```
//! use agent_bounded::{Limits, parse_json};
//! let deep = "[".repeat(10_000);
//! let err = parse_json::<serde_json::Value>(&deep, "args.json", Limits::DATA).unwrap_err();
//! assert!(err.to_string().contains("limit of 128 levels"), "{err}");
//! ```

pub mod duration;
mod json;
mod yaml;

use std::fmt;

pub use duration::{BareNumber, DurationError, format_duration, parse_duration};
pub use json::check_json;
pub use yaml::check_yaml;

/// How much of a document the agent accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest text, in bytes.
    pub max_bytes: usize,
    /// Deepest nesting of collections (a flat list is depth 1).
    pub max_depth: usize,
    /// Most nodes that YAML aliases may stand for, all aliases together.
    pub max_alias_nodes: u64,
}

impl Limits {
    /// Hand-written configuration: `SKILL.yaml`, policy and `--capabilities`
    /// files, `.security.yaml` and its rule files.
    pub const CONFIG: Limits = Limits {
        max_bytes: 1 << 20,
        max_depth: 64,
        max_alias_nodes: 100_000,
    };

    /// Generated data read as a whole: lockfiles, registry indexes, OSV
    /// answers, model stream chunks. The depth is serde_json's own recursion
    /// limit.
    pub const DATA: Limits = Limits {
        max_bytes: 64 << 20,
        max_depth: 128,
        max_alias_nodes: 1_000_000,
    };

    /// JSON that is kept inside other records: model tool arguments, tool
    /// and workflow inputs, hook-rewritten inputs, input schemas. Half of
    /// [`Limits::DATA`]'s depth, so that a session record wrapping it stays
    /// readable.
    pub const MESSAGE: Limits = Limits {
        max_bytes: 16 << 20,
        max_depth: 64,
        max_alias_nodes: 0,
    };
}

/// Which limit a document crossed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exceeded {
    /// The text is `bytes` long, more than `max`.
    Size {
        /// The text's length.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// Collections nest deeper than `max`.
    Depth {
        /// The limit.
        max: usize,
    },
    /// Aliases stand for more than `max` nodes.
    Aliases {
        /// The limit.
        max: u64,
    },
}

/// A document refused before parsing: where it came from, where it crossed
/// which limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitError {
    /// The file or stream, as given by the caller.
    pub origin: String,
    /// `"YAML"` or `"JSON"`.
    pub format: &'static str,
    /// 1-based line where the limit was crossed (1 for [`Exceeded::Size`]).
    pub line: usize,
    /// 1-based column where the limit was crossed (1 for [`Exceeded::Size`]).
    pub column: usize,
    /// The limit crossed.
    pub exceeded: Exceeded,
}

impl LimitError {
    /// Line and column where the limit was crossed; `None` for a size limit,
    /// which concerns the whole text.
    pub fn position(&self) -> Option<(usize, usize)> {
        match self.exceeded {
            Exceeded::Size { .. } => None,
            _ => Some((self.line, self.column)),
        }
    }

    /// The reason without origin and position, for callers whose errors
    /// carry those in their own fields.
    pub fn reason(&self) -> String {
        let format = self.format;
        match &self.exceeded {
            Exceeded::Size { bytes, max } => format!(
                "{format} of {bytes} bytes is larger than the limit of {}; shorten or split it",
                bytes_text(*max)
            ),
            Exceeded::Depth { max } => format!(
                "{format} nested deeper than the limit of {max} levels; flatten the document"
            ),
            Exceeded::Aliases { max } => format!(
                "{format} aliases stand for more than the limit of {max} nodes; \
                 write the repeated values out or use fewer aliases"
            ),
        }
    }
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.exceeded {
            Exceeded::Size { .. } => write!(f, "{}: {}", self.origin, self.reason()),
            _ => write!(
                f,
                "{}: line {}, column {}: {}",
                self.origin,
                self.line,
                self.column,
                self.reason()
            ),
        }
    }
}

impl std::error::Error for LimitError {}

fn bytes_text(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// A document that was refused by a limit, or that the parser refused.
#[derive(Debug)]
pub enum Error<E> {
    /// Over a limit; the parser never saw it.
    Limit(LimitError),
    /// The parser's own error (syntax, wrong shape).
    Parse(E),
}

impl<E: fmt::Display> fmt::Display for Error<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Limit(e) => e.fmt(f),
            Error::Parse(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for Error<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Limit(_) => None,
            Error::Parse(e) => e.source(),
        }
    }
}

impl<E> From<LimitError> for Error<E> {
    fn from(e: LimitError) -> Self {
        Error::Limit(e)
    }
}

/// Checks `text` against `limits`, then deserializes it with `serde_yaml`.
///
/// # Errors
/// [`Error::Limit`] naming `origin`, the line and the limit; [`Error::Parse`]
/// with serde_yaml's error.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: impl fmt::Display,
    limits: Limits,
) -> Result<T, Error<serde_yaml::Error>> {
    check_yaml(text, origin, limits)?;
    serde_yaml::from_str(text).map_err(Error::Parse)
}

/// Checks `text` against `limits`, then deserializes it with `serde_json`.
///
/// # Errors
/// [`Error::Limit`] naming `origin`, the line and the limit; [`Error::Parse`]
/// with serde_json's error.
pub fn parse_json<T: serde::de::DeserializeOwned>(
    text: &str,
    origin: impl fmt::Display,
    limits: Limits,
) -> Result<T, Error<serde_json::Error>> {
    parse_json_slice(text.as_bytes(), origin, limits)
}

/// [`parse_json`] for bytes.
///
/// # Errors
/// See [`parse_json`].
pub fn parse_json_slice<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    origin: impl fmt::Display,
    limits: Limits,
) -> Result<T, Error<serde_json::Error>> {
    check_json(bytes, origin, limits)?;
    serde_json::from_slice(bytes).map_err(Error::Parse)
}

/// The size check both formats start with.
fn check_size(
    len: usize,
    origin: &dyn fmt::Display,
    format: &'static str,
    limits: Limits,
) -> Result<(), LimitError> {
    if len > limits.max_bytes {
        return Err(LimitError {
            origin: origin.to_string(),
            format,
            line: 1,
            column: 1,
            exceeded: Exceeded::Size {
                bytes: len,
                max: limits.max_bytes,
            },
        });
    }
    Ok(())
}

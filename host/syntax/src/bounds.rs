//! What one query may cost the host: time (a deadline the parser and the query cursor
//! check while they work), result size (captured text counted before it is copied) and
//! the shape of the query text (its nesting, checked before tree-sitter's recursive
//! query parser sees it).

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use crate::SyntaxError;

/// Largest source accepted, bytes.
pub const MAX_SOURCE_BYTES: usize = 8 * 1024 * 1024;
/// Most matches one query may return; more is an error rather than a silent cut.
pub const MAX_MATCHES: usize = 100_000;
/// Most captures one query may return (over all its matches).
pub const MAX_CAPTURES: usize = 400_000;
/// Longest query text accepted, bytes.
pub const MAX_QUERY_BYTES: usize = 256 * 1024;
/// Deepest nesting of `(...)` and `[...]` in a query text (tree-sitter parses queries
/// recursively: a deeper query could exhaust the host thread's stack).
pub const MAX_QUERY_DEPTH: usize = 64;
/// Most nodes (`(...)`, `[...]` and string literals) in one query text: compiling a query
/// takes time that grows with the square of its patterns and alternatives, and cannot be
/// stopped, so its size is capped before it is compiled.
pub const MAX_QUERY_NODES: usize = 1024;
/// Result bytes allowed when the caller sets none (see [`Bounds::result_bytes`]).
pub const DEFAULT_RESULT_BYTES: usize = 64 * 1024 * 1024;
/// What one capture costs besides its text: the host's struct and name, the guest's record.
pub const CAPTURE_OVERHEAD: usize = 128;
/// What one match costs besides its captures.
pub const MATCH_OVERHEAD: usize = 32;

/// The limits one [`crate::query_bounded`] call runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// When parsing and matching must be done; `None` for no time limit.
    pub deadline: Option<Instant>,
    /// Most bytes the answer may take: every capture's text plus [`CAPTURE_OVERHEAD`]
    /// per capture and [`MATCH_OVERHEAD`] per match. Counted before a text is copied,
    /// so the host never holds more than this for one query.
    pub result_bytes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            deadline: None,
            result_bytes: DEFAULT_RESULT_BYTES,
        }
    }
}

impl Bounds {
    /// `result_bytes` for a guest with `memory` bytes of linear memory: a quarter of
    /// it (the answer is copied into the guest, which needs room for its own work too),
    /// and never more than [`DEFAULT_RESULT_BYTES`].
    pub fn for_guest_memory(memory: usize, deadline: Option<Instant>) -> Bounds {
        Bounds {
            deadline,
            result_bytes: (memory / 4).min(DEFAULT_RESULT_BYTES),
        }
    }
}

/// A deadline watch for tree-sitter's progress callbacks: answers `Break` once the
/// deadline has passed and remembers that it did.
pub(crate) struct Clock {
    started: Instant,
    deadline: Option<Instant>,
    expired: bool,
}

impl Clock {
    pub(crate) fn new(deadline: Option<Instant>) -> Clock {
        Clock {
            started: Instant::now(),
            deadline,
            expired: false,
        }
    }

    /// Whether the work may go on.
    pub(crate) fn tick(&mut self) -> ControlFlow<()> {
        match self.deadline {
            Some(d) if Instant::now() >= d => {
                self.expired = true;
                ControlFlow::Break(())
            }
            _ => ControlFlow::Continue(()),
        }
    }

    /// Whether a callback stopped the work.
    pub(crate) fn expired(&self) -> bool {
        self.expired
    }

    /// The refusal for work stopped at the deadline during `stage`.
    pub(crate) fn timed_out(&self, stage: &'static str) -> SyntaxError {
        let allowed = self
            .deadline
            .map(|d| d.saturating_duration_since(self.started))
            .unwrap_or_default();
        SyntaxError::TimedOut {
            stage,
            allowed: Duration::from_millis(allowed.as_millis() as u64),
        }
    }
}

/// The answer's running cost against [`Bounds::result_bytes`], [`MAX_MATCHES`] and
/// [`MAX_CAPTURES`].
pub(crate) struct Budget {
    limit: usize,
    bytes: usize,
    matches: usize,
    captures: usize,
}

impl Budget {
    pub(crate) fn new(limit: usize) -> Budget {
        Budget {
            limit,
            bytes: 0,
            matches: 0,
            captures: 0,
        }
    }

    /// Charges one match with `captures` captures whose texts are `text_bytes` long.
    pub(crate) fn charge(&mut self, captures: usize, text_bytes: usize) -> Result<(), SyntaxError> {
        self.matches += 1;
        if self.matches > MAX_MATCHES {
            return Err(too_large(
                "matches",
                "matches",
                MAX_MATCHES + 1,
                MAX_MATCHES,
            ));
        }
        self.captures += captures;
        if self.captures > MAX_CAPTURES {
            return Err(too_large(
                "captures",
                "captures",
                self.captures,
                MAX_CAPTURES,
            ));
        }
        self.bytes = self
            .bytes
            .saturating_add(MATCH_OVERHEAD)
            .saturating_add(captures * CAPTURE_OVERHEAD)
            .saturating_add(text_bytes);
        if self.bytes > self.limit {
            return Err(too_large("result", "bytes", self.bytes, self.limit));
        }
        Ok(())
    }
}

pub(crate) fn too_large(
    what: &'static str,
    unit: &'static str,
    size: usize,
    limit: usize,
) -> SyntaxError {
    SyntaxError::TooLarge {
        what,
        unit,
        size,
        limit,
    }
}

/// The shape of a query text, read before tree-sitter compiles it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// The deepest nesting of `(` and `[`.
    pub(crate) depth: usize,
    /// Nodes: every `(` (not a `(#predicate`), `[` and string literal.
    pub(crate) nodes: usize,
}

/// The [`Shape`] of query `text`, outside string literals and `;` comments.
pub(crate) fn query_shape(text: &str) -> Shape {
    let mut depth = 0usize;
    let mut shape = Shape { depth: 0, nodes: 0 };
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                shape.nodes += 1;
                // A string literal: skip to its closing quote, honouring `\` escapes.
                while let Some(s) = chars.next() {
                    match s {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
            }
            ';' => {
                for s in chars.by_ref() {
                    if s == '\n' {
                        break;
                    }
                }
            }
            '(' | '[' => {
                depth += 1;
                shape.depth = shape.depth.max(depth);
                if !(c == '(' && chars.peek() == Some(&'#')) {
                    shape.nodes += 1;
                }
            }
            ')' | ']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    shape
}

#[cfg(test)]
#[path = "bounds_tests.rs"]
mod tests;

//! tree-sitter parsing and queries over the grammars bundled with the host.
//!
//! This is what the `syntax` capability import answers with, and what the security engine's
//! declarative tree-sitter rules run on.
//!
//! - Compiled queries are cached process-wide, keyed by (language, query text).
//! - Parsers are kept per thread and per language; the last tree each thread parsed is kept
//!   too, so several queries over the same source parse it once.
//! - The text predicates `#eq?`, `#not-eq?`, `#match?`, `#not-match?`, `#any-of?`,
//!   `#not-any-of?` (and their `any-` forms) are applied while matching; `#set!`, `#is?` and
//!   `#is-not?` are accepted and ignored; any other predicate is refused as a bad query rather
//!   than silently ignored.
//! - Positions are 1-based lines and 1-based byte columns; the end is just past the last
//!   character.
//! - Every query runs within [`Bounds`]: parsing and matching stop at a deadline
//!   (tree-sitter's progress callbacks), the answer's size is counted before any text is
//!   copied, and the query text's size, nesting and node count are capped before it is
//!   compiled (before tree-sitter's recursive query parser sees it). Every limit is an error
//!   naming it, never a silent cut.

mod bounds;
#[cfg(lazy_grammars)]
mod lazy;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use streaming_iterator::StreamingIterator;
use tree_sitter::{
    Language, ParseOptions, Parser, Query, QueryCursor, QueryCursorOptions, QueryErrorKind, Tree,
};

pub use bounds::{
    Bounds, CAPTURE_OVERHEAD, DEFAULT_RESULT_BYTES, MATCH_OVERHEAD, MAX_CAPTURES, MAX_MATCHES,
    MAX_QUERY_BYTES, MAX_QUERY_DEPTH, MAX_QUERY_NODES, MAX_SOURCE_BYTES,
};
use bounds::{Budget, Clock, too_large};

/// Compiled queries kept; the cache is emptied when it would grow past this.
const QUERY_CACHE_CAP: usize = 4096;
/// Bytes of query text the cache keeps (a hostile caller sending many large distinct
/// queries must not grow it without bound); emptied when it would grow past this.
const QUERY_CACHE_BYTES: usize = 16 * 1024 * 1024;

const LANGUAGES: &[&str] = &[
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "java",
    "rust",
    "swift",
    "ruby",
    "c",
    "cpp",
    "objective-c",
    "php",
];

/// Names of the bundled grammars.
pub fn languages() -> &'static [&'static str] {
    LANGUAGES
}

/// The grammar for a file, by its extension (case-insensitive); `None` for anything else.
pub fn language_for_path(path: &str) -> Option<&'static str> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let (_, ext) = name.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    Some(match ext.as_str() {
        "py" | "pyi" => "python",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "tsx",
        "go" => "go",
        "java" => "java",
        "rs" => "rust",
        "swift" => "swift",
        "rb" => "ruby",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        // Objective-C and Objective-C++ sources; a `.h` header stays C (it
        // cannot be told apart from a C header by its name).
        "m" | "mm" => "objective-c",
        "php" | "phtml" => "php",
        _ => return None,
    })
}

/// The canonical name and grammar of `name`.
///
/// # Errors
/// A name that is not bundled; an embedded grammar that does not load
/// (see `lazy.rs`).
fn grammar(name: &str) -> Result<(&'static str, Language), SyntaxError> {
    // `objc` is the grammar crate's own name for the language.
    let name = if name == "objc" { "objective-c" } else { name };
    let canonical = LANGUAGES
        .iter()
        .find(|l| **l == name)
        .copied()
        .ok_or_else(|| unknown(name))?;
    load_grammar(canonical)
        .map(|language| (canonical, language))
        .map_err(|reason| SyntaxError::Grammar {
            language: canonical.to_string(),
            reason,
        })
}

/// On Linux the grammars are embedded compressed and loaded on first use
/// (`lazy.rs`, `build.rs`).
#[cfg(lazy_grammars)]
fn load_grammar(name: &'static str) -> Result<Language, String> {
    lazy::language(name).unwrap_or_else(|| Err(format!("the {name} grammar is not embedded")))
}

/// Elsewhere the grammar crates' static libraries are linked.
#[cfg(not(lazy_grammars))]
fn load_grammar(name: &'static str) -> Result<Language, String> {
    let f = match name {
        "python" => tree_sitter_python::LANGUAGE,
        "javascript" => tree_sitter_javascript::LANGUAGE,
        "typescript" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT,
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX,
        "go" => tree_sitter_go::LANGUAGE,
        "java" => tree_sitter_java::LANGUAGE,
        "rust" => tree_sitter_rust::LANGUAGE,
        "swift" => tree_sitter_swift::LANGUAGE,
        "ruby" => tree_sitter_ruby::LANGUAGE,
        "c" => tree_sitter_c::LANGUAGE,
        "cpp" => tree_sitter_cpp::LANGUAGE,
        "objective-c" => tree_sitter_objc::LANGUAGE,
        "php" => tree_sitter_php::LANGUAGE_PHP,
        _ => return Err(format!("the {name} grammar is not bundled")),
    };
    Ok(Language::new(f))
}

/// One captured node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// Capture name without `@`.
    pub name: String,
    /// The node's source text.
    pub text: String,
    /// Byte offset of the first byte.
    pub start_byte: u32,
    /// Byte offset just past the node.
    pub end_byte: u32,
    /// 1-based line of the first character.
    pub start_line: u32,
    /// 1-based column (bytes) of the first character.
    pub start_column: u32,
    /// 1-based line just past the last character.
    pub end_line: u32,
    /// 1-based column (bytes) just past the last character.
    pub end_column: u32,
}

/// One match of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryMatch {
    /// Index of the pattern (in the query text) that matched.
    pub pattern: u32,
    /// The captured nodes, in the order tree-sitter reports them.
    pub captures: Vec<Capture>,
}

/// Why a query could not be answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    /// No bundled grammar has this name.
    #[error("unknown language {name:?}; known languages: {}", known.join(", "))]
    UnknownLanguage {
        /// The name asked for.
        name: String,
        /// The bundled grammars.
        known: Vec<String>,
    },
    /// The query does not compile (the message carries tree-sitter's line, column and kind).
    #[error("{message}")]
    BadQuery {
        /// What is wrong and where.
        message: String,
    },
    /// The source, the query or the answer is over a limit.
    #[error("{what}: {size} {unit}, over the limit of {limit} {unit}")]
    TooLarge {
        /// `source`, `query`, `query nesting`, `query nodes`, `matches`, `captures`
        /// or `result`.
        what: &'static str,
        /// `bytes`, `levels`, `nodes`, `matches` or `captures`.
        unit: &'static str,
        /// The size seen (for `matches`, the limit + 1: counting stops there).
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Parsing or matching was stopped at the deadline.
    #[error("the {stage} was stopped at its deadline, after {allowed:?}")]
    TimedOut {
        /// `parse` or `query`.
        stage: &'static str,
        /// The time it was given (from the start of the query to the deadline).
        allowed: std::time::Duration,
    },
    /// The bundled grammar could not be loaded (a corrupted binary, or a
    /// system that refuses loading it from memory).
    #[error("{reason}")]
    Grammar {
        /// The language.
        language: String,
        /// Why, naming the grammar.
        reason: String,
    },
    /// tree-sitter could not parse the source (cancelled or no grammar set).
    #[error("could not parse the {language} source")]
    Parse {
        /// The language.
        language: String,
    },
}

fn unknown(name: &str) -> SyntaxError {
    SyntaxError::UnknownLanguage {
        name: name.to_string(),
        known: LANGUAGES.iter().map(|s| (*s).to_string()).collect(),
    }
}

type QueryCache = HashMap<&'static str, HashMap<String, Arc<Query>>>;

fn query_cache() -> &'static Mutex<QueryCache> {
    static CACHE: OnceLock<Mutex<QueryCache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Counts of compilations, for tests and diagnostics.
static COMPILED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many queries were compiled in this process (cache misses).
pub fn queries_compiled() -> u64 {
    COMPILED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The compiled query for (`language`, `text`), from the cache or compiled now.
fn compiled(
    language: &'static str,
    grammar: &Language,
    text: &str,
) -> Result<Arc<Query>, SyntaxError> {
    {
        let cache = query_cache().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(q) = cache.get(language).and_then(|m| m.get(text)) {
            return Ok(q.clone());
        }
    }
    // Compile outside the lock: two threads may both compile the same query once.
    let query = Arc::new(compile(language, grammar, text)?);
    COMPILED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut cache = query_cache().lock().unwrap_or_else(PoisonError::into_inner);
    let (count, bytes) = cache
        .values()
        .flat_map(HashMap::keys)
        .fold((0, 0), |(n, b), k| (n + 1, b + k.len()));
    if count >= QUERY_CACHE_CAP || bytes + text.len() > QUERY_CACHE_BYTES {
        cache.clear();
    }
    cache
        .entry(language)
        .or_default()
        .insert(text.to_string(), query.clone());
    Ok(query)
}

fn compile(language: &str, grammar: &Language, text: &str) -> Result<Query, SyntaxError> {
    let shape = bounds::query_shape(text);
    if shape.depth > MAX_QUERY_DEPTH {
        return Err(too_large(
            "query nesting",
            "levels",
            shape.depth,
            MAX_QUERY_DEPTH,
        ));
    }
    if shape.nodes > MAX_QUERY_NODES {
        return Err(too_large(
            "query nodes",
            "nodes",
            shape.nodes,
            MAX_QUERY_NODES,
        ));
    }
    let query = Query::new(grammar, text).map_err(|e| {
        let kind = match e.kind {
            QueryErrorKind::Syntax => "syntax error",
            QueryErrorKind::NodeType => "unknown node type",
            QueryErrorKind::Field => "unknown field",
            QueryErrorKind::Capture => "unknown capture",
            QueryErrorKind::Predicate => "bad predicate",
            QueryErrorKind::Structure => "impossible pattern",
            QueryErrorKind::Language => "language mismatch",
        };
        SyntaxError::BadQuery {
            message: format!(
                "invalid {language} query at line {}, column {} ({kind}): {}",
                e.row + 1,
                e.column + 1,
                e.message.trim()
            ),
        }
    })?;
    for pattern in 0..query.pattern_count() {
        if let Some(p) = query.general_predicates(pattern).first() {
            return Err(SyntaxError::BadQuery {
                message: format!(
                    "invalid {language} query: pattern {pattern} uses the unsupported predicate \
                     #{}; supported: #eq?, #not-eq?, #match?, #not-match?, #any-of?, \
                     #not-any-of? (and their any- forms), #set!, #is?, #is-not?",
                    p.operator
                ),
            });
        }
    }
    Ok(query)
}

/// The last tree a thread parsed, with the source it came from.
struct LastTree {
    language: &'static str,
    source: String,
    tree: Tree,
}

thread_local! {
    static PARSERS: RefCell<HashMap<&'static str, Parser>> = RefCell::new(HashMap::new());
    static LAST: RefCell<Option<LastTree>> = const { RefCell::new(None) };
}

/// Parses `source` (reusing this thread's parser, and its last tree when the source is the
/// same), stopping at `clock`'s deadline.
fn parse(
    language: &'static str,
    grammar: &Language,
    source: &str,
    clock: &mut Clock,
) -> Result<Tree, SyntaxError> {
    let cached = LAST.with_borrow(|last| {
        last.as_ref()
            .filter(|l| l.language == language && l.source == source)
            .map(|l| l.tree.clone())
    });
    if let Some(tree) = cached {
        return Ok(tree);
    }
    let tree = PARSERS.with_borrow_mut(|parsers| {
        let parser = match parsers.entry(language) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let mut p = Parser::new();
                p.set_language(grammar).map_err(|_| SyntaxError::Parse {
                    language: language.to_string(),
                })?;
                e.insert(p)
            }
        };
        let bytes = source.as_bytes();
        let mut progress = |_: &tree_sitter::ParseState| clock.tick();
        let tree = parser.parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(ParseOptions::new().progress_callback(&mut progress)),
        );
        match tree {
            Some(tree) => Ok(tree),
            None => {
                // A stopped parse would resume on the next call: start afresh instead.
                parser.reset();
                Err(if clock.expired() {
                    clock.timed_out("parse")
                } else {
                    SyntaxError::Parse {
                        language: language.to_string(),
                    }
                })
            }
        }
    })?;
    LAST.set(Some(LastTree {
        language,
        source: source.to_string(),
        tree: tree.clone(),
    }));
    Ok(tree)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Parses `source` as `language` and runs the tree-sitter `query` on it, within the
/// default [`Bounds`] (no deadline).
///
/// # Errors
/// See [`query_bounded`].
pub fn query(language: &str, source: &str, query: &str) -> Result<Vec<QueryMatch>, SyntaxError> {
    query_bounded(language, source, query, &Bounds::default())
}

/// Parses `source` as `language` and runs the tree-sitter `query` on it, within `bounds`.
///
/// # Errors
/// An unknown language; a query that does not compile (or uses an unsupported predicate);
/// a source over [`MAX_SOURCE_BYTES`], a query over [`MAX_QUERY_BYTES`],
/// [`MAX_QUERY_DEPTH`] or [`MAX_QUERY_NODES`]; an answer over [`MAX_MATCHES`],
/// [`MAX_CAPTURES`] or `bounds.result_bytes`; parsing or matching past `bounds.deadline`.
pub fn query_bounded(
    language: &str,
    source: &str,
    query: &str,
    bounds: &Bounds,
) -> Result<Vec<QueryMatch>, SyntaxError> {
    let (language, grammar) = grammar(language)?;
    if source.len() > MAX_SOURCE_BYTES {
        return Err(too_large("source", "bytes", source.len(), MAX_SOURCE_BYTES));
    }
    if query.len() > MAX_QUERY_BYTES {
        return Err(too_large("query", "bytes", query.len(), MAX_QUERY_BYTES));
    }
    let mut clock = Clock::new(bounds.deadline);
    let compiled = compiled(language, &grammar, query)?;
    if clock.tick().is_break() {
        return Err(clock.timed_out("query"));
    }
    let tree = parse(language, &grammar, source, &mut clock)?;
    let names = compiled.capture_names();
    let bytes = source.as_bytes();
    let mut budget = Budget::new(bounds.result_bytes);
    let mut out = Vec::new();
    {
        let mut cursor = QueryCursor::new();
        let mut progress = |_: &tree_sitter::QueryCursorState| clock.tick();
        let mut matches = cursor.matches_with_options(
            &compiled,
            tree.root_node(),
            bytes,
            QueryCursorOptions::new().progress_callback(&mut progress),
        );
        while let Some(m) = matches.next() {
            let text_bytes = m.captures().iter().map(|c| c.node.byte_range().len()).sum();
            budget.charge(m.captures().len(), text_bytes)?;
            let captures = m
                .captures()
                .iter()
                .map(|c| {
                    let node = c.node;
                    let (start, end) = (node.start_position(), node.end_position());
                    let range = node.byte_range();
                    Capture {
                        name: names[c.index as usize].to_string(),
                        text: String::from_utf8_lossy(&bytes[range.clone()]).into_owned(),
                        start_byte: to_u32(range.start),
                        end_byte: to_u32(range.end),
                        start_line: to_u32(start.row + 1),
                        start_column: to_u32(start.column + 1),
                        end_line: to_u32(end.row + 1),
                        end_column: to_u32(end.column + 1),
                    }
                })
                .collect();
            out.push(QueryMatch {
                pattern: to_u32(m.pattern_index),
                captures,
            });
        }
    }
    // A halted cursor ends its matches early: that is an error, not a shorter answer.
    if clock.expired() {
        return Err(clock.timed_out("query"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;

/// The tree-sitter crate the grammars are built for, so that callers walking a [`parse_tree`]
/// result use the same version.
pub use tree_sitter;

/// Parses `source` as `language` and returns the syntax tree (the security engine's taint
/// analysis walks it directly). Uses this thread's parser; no deadline.
///
/// # Errors
/// An unknown language, a source over [`MAX_SOURCE_BYTES`], a grammar that does not load or
/// a parse that fails.
pub fn parse_tree(language: &str, source: &str) -> Result<Tree, SyntaxError> {
    let (language, grammar) = grammar(language)?;
    if source.len() > MAX_SOURCE_BYTES {
        return Err(too_large("source", "bytes", source.len(), MAX_SOURCE_BYTES));
    }
    let mut clock = Clock::new(None);
    parse(language, &grammar, source, &mut clock)
}

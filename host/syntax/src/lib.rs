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

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use streaming_iterator::StreamingIterator;
use tree_sitter::{Language, Parser, Query, QueryCursor, QueryErrorKind, Tree};

/// Largest source accepted, bytes.
pub const MAX_SOURCE_BYTES: usize = 8 * 1024 * 1024;
/// Most matches one query may return; more is an error rather than a silent cut.
pub const MAX_MATCHES: usize = 100_000;
/// Longest query text accepted, bytes.
pub const MAX_QUERY_BYTES: usize = 256 * 1024;
/// Compiled queries kept; the cache is emptied when it would grow past this.
const QUERY_CACHE_CAP: usize = 4096;

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
        _ => return None,
    })
}

/// The canonical name and grammar of `name`; `None` when it is not bundled.
fn grammar(name: &str) -> Option<(&'static str, Language)> {
    let (canonical, f) = match name {
        "python" => ("python", tree_sitter_python::LANGUAGE),
        "javascript" => ("javascript", tree_sitter_javascript::LANGUAGE),
        "typescript" => ("typescript", tree_sitter_typescript::LANGUAGE_TYPESCRIPT),
        "tsx" => ("tsx", tree_sitter_typescript::LANGUAGE_TSX),
        "go" => ("go", tree_sitter_go::LANGUAGE),
        "java" => ("java", tree_sitter_java::LANGUAGE),
        "rust" => ("rust", tree_sitter_rust::LANGUAGE),
        "swift" => ("swift", tree_sitter_swift::LANGUAGE),
        "ruby" => ("ruby", tree_sitter_ruby::LANGUAGE),
        "c" => ("c", tree_sitter_c::LANGUAGE),
        "cpp" => ("cpp", tree_sitter_cpp::LANGUAGE),
        _ => return None,
    };
    Some((canonical, Language::new(f)))
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
    /// The source (or the query, or its result) is over a limit.
    #[error("{what} is {size} bytes or items, over the limit of {limit}")]
    TooLarge {
        /// `source`, `query` or `matches`.
        what: &'static str,
        /// The size seen (bytes; for `matches`, the limit + 1).
        size: usize,
        /// The limit.
        limit: usize,
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
    if cache.values().map(HashMap::len).sum::<usize>() >= QUERY_CACHE_CAP {
        cache.clear();
    }
    cache
        .entry(language)
        .or_default()
        .insert(text.to_string(), query.clone());
    Ok(query)
}

fn compile(language: &str, grammar: &Language, text: &str) -> Result<Query, SyntaxError> {
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

/// Parses `source` (reusing this thread's parser, and its last tree when the source is the same).
fn parse(language: &'static str, grammar: &Language, source: &str) -> Result<Tree, SyntaxError> {
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
        parser.parse(source, None).ok_or(SyntaxError::Parse {
            language: language.to_string(),
        })
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

/// Parses `source` as `language` and runs the tree-sitter `query` on it.
///
/// # Errors
/// An unknown language, a query that does not compile (or uses an unsupported predicate),
/// a source over [`MAX_SOURCE_BYTES`] or more than [`MAX_MATCHES`] matches.
pub fn query(language: &str, source: &str, query: &str) -> Result<Vec<QueryMatch>, SyntaxError> {
    let (language, grammar) = grammar(language).ok_or_else(|| unknown(language))?;
    if source.len() > MAX_SOURCE_BYTES {
        return Err(SyntaxError::TooLarge {
            what: "source",
            size: source.len(),
            limit: MAX_SOURCE_BYTES,
        });
    }
    if query.len() > MAX_QUERY_BYTES {
        return Err(SyntaxError::TooLarge {
            what: "query",
            size: query.len(),
            limit: MAX_QUERY_BYTES,
        });
    }
    let compiled = compiled(language, &grammar, query)?;
    let tree = parse(language, &grammar, source)?;
    let names = compiled.capture_names();
    let bytes = source.as_bytes();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&compiled, tree.root_node(), bytes);
    let mut out = Vec::new();
    while let Some(m) = matches.next() {
        if out.len() == MAX_MATCHES {
            return Err(SyntaxError::TooLarge {
                what: "matches",
                size: MAX_MATCHES + 1,
                limit: MAX_MATCHES,
            });
        }
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
    Ok(out)
}

#[cfg(test)]
mod tests;

//! A YAML document read into a small tree whose nodes remember their line,
//! so that every validation error can point at the offending line.
//!
//! Built from yaml-rust2's event parser, after `agent_bounded` has checked
//! the text's size, nesting depth and alias expansion. Aliases are expanded
//! (with a bound on the total number of nodes) and mapping keys must be
//! strings.

use std::collections::HashMap;

use agent_bounded::Limits;
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// Deepest nesting of lists and mappings accepted.
pub(crate) const MAX_DEPTH: usize = 32;
/// Most nodes a document may expand to (aliases included).
pub(crate) const MAX_NODES: usize = 100_000;

/// The limits checked before a manifest is parsed: configuration's, with the
/// manifest's own depth and node count.
const LIMITS: Limits = Limits {
    max_depth: MAX_DEPTH,
    max_alias_nodes: MAX_NODES as u64,
    ..Limits::CONFIG
};

/// One YAML node and the line it starts on.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Node {
    /// 1-based line of the node's first character.
    pub line: usize,
    /// What the node holds.
    pub kind: Kind,
}

/// The content of a [`Node`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// An empty value, `~` or `null`.
    Null,
    /// A scalar. `plain` is false for quoted, block and tagged scalars,
    /// which are always strings.
    Scalar {
        /// The scalar's text.
        text: String,
        /// Whether it was written plain (unquoted, untagged).
        plain: bool,
    },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order.
    Map(Vec<Entry>),
}

impl Kind {
    /// How the value reads in an error message: "a list", "a string `x`"...
    pub(crate) fn describe(&self) -> String {
        match self {
            Kind::Null => "nothing".to_string(),
            Kind::Scalar { text, plain } => {
                let mut shown: String = text.chars().take(40).collect();
                if shown.len() < text.len() {
                    shown.push('…');
                }
                let shown = shown.escape_debug();
                if *plain {
                    format!("`{shown}`")
                } else {
                    format!("the string `{shown}`")
                }
            }
            Kind::Seq(_) => "a list".to_string(),
            Kind::Map(_) => "a mapping".to_string(),
        }
    }
}

/// One `key: value` pair of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    /// The key.
    pub key: String,
    /// 1-based line of the key.
    pub line: usize,
    /// The value.
    pub value: Node,
}

/// Why a text is not one usable YAML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct YamlError {
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl YamlError {
    fn at(mark: Marker, message: impl Into<String>) -> Self {
        YamlError {
            line: Some(mark.line()),
            message: message.into(),
        }
    }
}

enum Frame {
    Seq {
        line: usize,
        anchor: usize,
        items: Vec<Node>,
    },
    Map {
        line: usize,
        anchor: usize,
        entries: Vec<Entry>,
        key: Option<(String, usize)>,
    },
}

struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    nodes: usize,
    root: Option<Node>,
}

const NULLS: [&str; 5] = ["", "~", "null", "Null", "NULL"];

fn scalar_kind(text: String, style: TScalarStyle, tag: Option<&Tag>) -> Kind {
    let null_tag = tag.is_some_and(|t| {
        (t.handle == "!!" || t.handle == "tag:yaml.org,2002:") && t.suffix == "null"
    });
    let plain = style == TScalarStyle::Plain && tag.is_none();
    if null_tag || (plain && NULLS.contains(&text.as_str())) {
        Kind::Null
    } else {
        Kind::Scalar { text, plain }
    }
}

fn size(node: &Node) -> usize {
    match &node.kind {
        Kind::Null | Kind::Scalar { .. } => 1,
        Kind::Seq(items) => 1 + items.iter().map(size).sum::<usize>(),
        Kind::Map(entries) => 1 + entries.iter().map(|e| 1 + size(&e.value)).sum::<usize>(),
    }
}

impl Builder {
    fn count(&mut self, n: usize, mark: Marker) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(YamlError::at(
                mark,
                format!("the document expands to more than {MAX_NODES} nodes"),
            ));
        }
        Ok(())
    }

    fn open(&mut self, mark: Marker) -> Result<(), YamlError> {
        self.count(1, mark)
    }

    fn push(&mut self, node: Node, anchor: usize) -> Result<(), YamlError> {
        if anchor != 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut() {
            None => {
                self.root = Some(node);
                Ok(())
            }
            Some(Frame::Seq { items, .. }) => {
                items.push(node);
                Ok(())
            }
            Some(Frame::Map { entries, key, .. }) => match key.take() {
                Some((key, line)) => {
                    entries.push(Entry {
                        key,
                        line,
                        value: node,
                    });
                    Ok(())
                }
                None => match node.kind {
                    Kind::Scalar { text, .. } => {
                        *key = Some((text, node.line));
                        Ok(())
                    }
                    other => Err(YamlError {
                        line: Some(node.line),
                        message: format!(
                            "mapping keys must be strings, found {}",
                            other.describe().replace('`', "")
                        ),
                    }),
                },
            },
        }
    }

    fn alias(&mut self, id: usize, mark: Marker) -> Result<(), YamlError> {
        let Some(node) = self.anchors.get(&id) else {
            return Err(YamlError::at(mark, "alias to an unknown anchor"));
        };
        let mut node = node.clone();
        self.count(size(&node), mark)?;
        node.line = mark.line();
        self.push(node, 0)
    }
}

/// The line of an empty value (`key:` or `-` with nothing after it). The
/// parser marks such a value at the token that follows it, often on a later
/// line; the value belongs to the last line with content up to that mark.
fn empty_value_line(lines: &[&str], mark: Marker) -> usize {
    let mut line = mark.line();
    if let Some(text) = line.checked_sub(1).and_then(|i| lines.get(i)) {
        // What precedes the mark on its line, without the `-` of the next
        // list item (the parser marks an empty item at the token after it).
        let before: String = text.chars().take(mark.col()).collect();
        if !before
            .trim_matches(|c: char| c.is_whitespace() || c == '-')
            .is_empty()
        {
            return line;
        }
    }
    while line > 1 {
        line -= 1;
        let text = lines.get(line - 1).map_or("", |t| t.trim());
        if !text.is_empty() && !text.starts_with('#') {
            return line;
        }
    }
    mark.line()
}

/// Parse `text` as one YAML document. `Ok(None)` means the text holds no
/// document at all (empty, or only comments).
pub(crate) fn parse_document(text: &str) -> Result<Option<Node>, YamlError> {
    // Depth and alias expansion are checked before any tree is built.
    agent_bounded::check_yaml(text, "the manifest", LIMITS).map_err(|e| YamlError {
        line: e.position().map(|p| p.0),
        message: e.reason(),
    })?;
    let lines: Vec<&str> = text.lines().collect();
    let mut parser = Parser::new_from_str(text);
    let mut b = Builder {
        stack: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        root: None,
    };
    let mut documents = 0usize;
    loop {
        let (event, mark) = parser.next_token().map_err(|e| YamlError {
            line: Some(e.marker().line()),
            message: format!(
                "YAML syntax error at column {}: {}",
                e.marker().col() + 1,
                e.info()
            ),
        })?;
        match event {
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError::at(
                        mark,
                        "a second YAML document (`---`); a manifest holds exactly one",
                    ));
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                b.count(1, mark)?;
                let line = if text.is_empty() && style == TScalarStyle::Plain {
                    empty_value_line(&lines, mark)
                } else {
                    mark.line()
                };
                let kind = scalar_kind(text, style, tag.as_ref());
                b.push(Node { line, kind }, anchor)?;
            }
            Event::Alias(id) => b.alias(id, mark)?,
            Event::SequenceStart(anchor, _) => {
                b.open(mark)?;
                b.stack.push(Frame::Seq {
                    line: mark.line(),
                    anchor,
                    items: Vec::new(),
                });
            }
            Event::MappingStart(anchor, _) => {
                b.open(mark)?;
                b.stack.push(Frame::Map {
                    line: mark.line(),
                    anchor,
                    entries: Vec::new(),
                    key: None,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (node, anchor) = match b.stack.pop() {
                    Some(Frame::Seq {
                        line,
                        anchor,
                        items,
                    }) => (
                        Node {
                            line,
                            kind: Kind::Seq(items),
                        },
                        anchor,
                    ),
                    Some(Frame::Map {
                        line,
                        anchor,
                        entries,
                        ..
                    }) => (
                        Node {
                            line,
                            kind: Kind::Map(entries),
                        },
                        anchor,
                    ),
                    None => return Err(YamlError::at(mark, "unbalanced YAML collection end")),
                };
                b.push(node, anchor)?;
            }
        }
    }
    Ok(b.root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(line: usize, text: &str) -> Node {
        Node {
            line,
            kind: Kind::Scalar {
                text: text.to_string(),
                plain: true,
            },
        }
    }

    #[test]
    fn nodes_remember_their_lines() {
        let doc = parse_document("# comment\nname: x\nlist:\n  - a\n  - b\nempty:\n")
            .unwrap()
            .unwrap();
        let Kind::Map(entries) = doc.kind else {
            panic!("not a map")
        };
        assert_eq!(entries[0].key, "name");
        assert_eq!(entries[0].line, 2);
        assert_eq!(entries[0].value, scalar(2, "x"));
        assert_eq!(entries[1].line, 3);
        assert_eq!(
            entries[1].value,
            Node {
                line: 4,
                kind: Kind::Seq(vec![scalar(4, "a"), scalar(5, "b")])
            }
        );
        assert_eq!(entries[2].key, "empty");
        assert_eq!(entries[2].value.kind, Kind::Null);
    }

    #[test]
    fn empty_values_take_the_line_of_their_key_or_dash() {
        let doc = parse_document("a:\n# note\n\nb:\n  -\n  - x\nc: {d: }\ne:\n  - \n")
            .unwrap()
            .unwrap();
        let Kind::Map(entries) = doc.kind else {
            panic!("not a map")
        };
        assert_eq!(
            entries[0].value,
            Node {
                line: 1,
                kind: Kind::Null
            }
        );
        let Kind::Seq(items) = &entries[1].value.kind else {
            panic!("not a list")
        };
        assert_eq!(
            items[0],
            Node {
                line: 5,
                kind: Kind::Null
            }
        );
        let Kind::Map(inner) = &entries[2].value.kind else {
            panic!("not a map")
        };
        assert_eq!(
            inner[0].value,
            Node {
                line: 7,
                kind: Kind::Null
            }
        );
        let Kind::Seq(items) = &entries[3].value.kind else {
            panic!("not a list")
        };
        assert_eq!(
            items[0],
            Node {
                line: 9,
                kind: Kind::Null
            }
        );
    }

    #[test]
    fn quoted_scalars_are_not_plain() {
        let doc = parse_document("a: 'true'\nb: true\nc: \"~\"\n")
            .unwrap()
            .unwrap();
        let Kind::Map(entries) = doc.kind else {
            panic!("not a map")
        };
        assert_eq!(
            entries[0].value.kind,
            Kind::Scalar {
                text: "true".into(),
                plain: false
            }
        );
        assert_eq!(
            entries[1].value.kind,
            Kind::Scalar {
                text: "true".into(),
                plain: true
            }
        );
        assert_eq!(
            entries[2].value.kind,
            Kind::Scalar {
                text: "~".into(),
                plain: false
            }
        );
    }

    #[test]
    fn aliases_expand_and_take_the_alias_line() {
        let doc = parse_document("a: &x [1, 2]\nb: *x\n").unwrap().unwrap();
        let Kind::Map(entries) = doc.kind else {
            panic!("not a map")
        };
        assert_eq!(
            entries[1].value,
            Node {
                line: 2,
                kind: Kind::Seq(vec![scalar(1, "1"), scalar(1, "2")])
            }
        );
    }

    #[test]
    fn an_alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..8 {
            let p = i - 1;
            text.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let err = parse_document(&text).unwrap_err();
        assert_eq!(
            err.message,
            "YAML aliases stand for more than the limit of 100000 nodes; \
             write the repeated values out or use fewer aliases"
        );
    }

    #[test]
    fn a_200_kb_manifest_of_nested_lists_is_refused_before_a_tree_is_built() {
        let text = format!("name: x\ntypes:\n  {}tool\n", "- ".repeat(100_000));
        let started = std::time::Instant::now();
        let err = parse_document(&text).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(err.line, Some(3));
        assert_eq!(
            err.message,
            "YAML nested deeper than the limit of 32 levels; flatten the document"
        );
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("a: {}{}\n", "[".repeat(40), "]".repeat(40));
        let err = parse_document(&text).unwrap_err();
        assert_eq!(err.line, Some(1));
        assert_eq!(
            err.message,
            "YAML nested deeper than the limit of 32 levels; flatten the document"
        );
    }

    #[test]
    fn syntax_errors_carry_their_line() {
        let err = parse_document("name: x\nfoo: [a, b\nbar: 1\n").unwrap_err();
        assert_eq!(err.line, Some(3));
        assert_eq!(
            err.message,
            "YAML syntax error at column 4: illegal placement of ':' indicator"
        );
    }

    #[test]
    fn a_second_document_is_refused() {
        let err = parse_document("a: 1\n---\nb: 2\n").unwrap_err();
        assert_eq!(err.line, Some(2));
    }

    #[test]
    fn non_string_keys_are_refused() {
        let err = parse_document("? [a, b]\n: c\n").unwrap_err();
        assert_eq!(err.message, "mapping keys must be strings, found a list");
    }

    #[test]
    fn empty_text_has_no_document() {
        assert_eq!(parse_document("").unwrap(), None);
        assert_eq!(parse_document("# only a comment\n").unwrap(), None);
    }
}

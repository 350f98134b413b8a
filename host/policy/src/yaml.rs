//! A minimal YAML tree that remembers the line of every node, for error messages.

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A YAML node and the line (1-based) it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Node {
    pub(crate) line: usize,
    pub(crate) kind: Kind,
}

/// The shape of a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A scalar; `plain` when it was written without quotes.
    Scalar { value: String, plain: bool },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in document order.
    Map(Vec<(Node, Node)>),
    /// An alias (`*name`); not supported by the formats that use this module.
    Alias,
}

impl Node {
    /// Whether this is a null (`~`, `null` or nothing, unquoted).
    pub(crate) fn is_null(&self) -> bool {
        matches!(&self.kind, Kind::Scalar { value, plain: true }
            if value.is_empty() || value == "~" || value == "null" || value == "Null" || value == "NULL")
    }
}

/// A syntax error: line (1-based), column (1-based), message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SyntaxError {
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) message: String,
}

enum Frame {
    Seq(usize, Vec<Node>),
    Map(usize, Vec<(Node, Node)>, Option<Node>),
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    root: Option<Node>,
}

impl Builder {
    fn push(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => {
                if self.root.is_none() {
                    self.root = Some(node);
                }
            }
            Some(Frame::Seq(_, items)) => items.push(node),
            Some(Frame::Map(_, entries, pending)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => entries.push((key, node)),
            },
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let line = mark.line();
        match ev {
            Event::Scalar(value, style, _, _) => self.push(Node {
                line,
                kind: Kind::Scalar {
                    value,
                    plain: style == TScalarStyle::Plain,
                },
            }),
            Event::Alias(_) => self.push(Node {
                line,
                kind: Kind::Alias,
            }),
            Event::SequenceStart(_, _) => self.stack.push(Frame::Seq(line, Vec::new())),
            Event::MappingStart(_, _) => self.stack.push(Frame::Map(line, Vec::new(), None)),
            Event::SequenceEnd | Event::MappingEnd => {
                let node = match self.stack.pop() {
                    Some(Frame::Seq(line, items)) => Node {
                        line,
                        kind: Kind::Seq(items),
                    },
                    Some(Frame::Map(line, entries, _)) => Node {
                        line,
                        kind: Kind::Map(entries),
                    },
                    None => return,
                };
                self.push(node);
            }
            Event::Nothing
            | Event::StreamStart
            | Event::StreamEnd
            | Event::DocumentStart
            | Event::DocumentEnd => {}
        }
    }
}

/// Parses the first document of `text`; `None` when there is none (an empty or comment-only
/// file).
pub(crate) fn parse(text: &str) -> Result<Option<Node>, SyntaxError> {
    let mut builder = Builder::default();
    Parser::new_from_str(text)
        .load(&mut builder, false)
        .map_err(|e| SyntaxError {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        })?;
    Ok(builder.root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(n: &Node) -> (&str, usize) {
        match &n.kind {
            Kind::Scalar { value, .. } => (value.as_str(), n.line),
            other => panic!("not a scalar: {other:?}"),
        }
    }

    #[test]
    fn lines_are_one_based_and_follow_the_document() {
        let root = parse("# c\nallow: [file:read, \"shell:exec:git\"]\nskills:\n  a:\n    - x\n")
            .unwrap()
            .unwrap();
        let Kind::Map(entries) = &root.kind else {
            panic!("{root:?}")
        };
        assert_eq!(scalar(&entries[0].0), ("allow", 2));
        let Kind::Seq(items) = &entries[0].1.kind else {
            panic!()
        };
        assert_eq!(scalar(&items[0]), ("file:read", 2));
        assert_eq!(scalar(&items[1]), ("shell:exec:git", 2));
        let Kind::Map(skills) = &entries[1].1.kind else {
            panic!()
        };
        assert_eq!(scalar(&skills[0].0), ("a", 4));
        let Kind::Seq(items) = &skills[0].1.kind else {
            panic!()
        };
        assert_eq!(scalar(&items[0]), ("x", 5));
    }

    #[test]
    fn empty_document_and_syntax_errors() {
        assert_eq!(parse("# only a comment\n").unwrap(), None);
        let err = parse("a: [b\nc: d\n").unwrap_err();
        assert!(err.line >= 1, "{err:?}");
        assert!(!err.message.is_empty());
    }

    #[test]
    fn nulls() {
        let root = parse("a:\nb: ~\nc: \"~\"\n").unwrap().unwrap();
        let Kind::Map(e) = &root.kind else { panic!() };
        assert!(e[0].1.is_null());
        assert!(e[1].1.is_null());
        assert!(!e[2].1.is_null());
    }
}

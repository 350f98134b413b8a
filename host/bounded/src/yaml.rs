//! YAML: nesting depth and alias expansion, counted on yaml-rust2's event
//! stream. The event parser keeps its state in vectors, not on the call
//! stack, and the scan stops at the first event over a limit, so a hostile
//! document costs at most `max_depth` levels of parsing before it is refused.

use std::collections::HashMap;
use std::fmt;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::Marker;

use crate::{Exceeded, LimitError, Limits, check_size};

/// An open collection.
struct Open {
    /// Its anchor id (0: none).
    anchor: usize,
    /// Expanded nodes counted before it opened.
    nodes_before: u64,
    /// Deepest level below it (0: no collection inside).
    height: usize,
}

/// What an anchored node stands for when an alias repeats it.
#[derive(Clone, Copy)]
struct Anchored {
    nodes: u64,
    height: usize,
}

/// Refuses `text` when it is larger than `limits.max_bytes`, when its
/// collections nest deeper than `limits.max_depth` (an alias counts with the
/// depth of what it repeats), or when its aliases together stand for more than
/// `limits.max_alias_nodes` nodes. Syntax is left to the parser that reads the
/// text next: at the first syntax error the scan stops and accepts what it saw
/// (serde_yaml keeps its own limits of 128 levels and of alias repetition
/// behind this), except yaml-rust2's own stop at 255 open flow collections,
/// which is a depth over any limit here.
///
/// # Errors
/// A [`LimitError`] naming `origin`, the line and column of the node that
/// crossed the limit, and the limit.
pub fn check_yaml(text: &str, origin: impl fmt::Display, limits: Limits) -> Result<(), LimitError> {
    check_size(text.len(), &origin, "YAML", limits)?;
    let refuse = |mark: Marker, exceeded: Exceeded| LimitError {
        origin: origin.to_string(),
        format: "YAML",
        line: mark.line(),
        column: mark.col() + 1,
        exceeded,
    };
    let mut parser = Parser::new_from_str(text);
    let mut open: Vec<Open> = Vec::new();
    let mut anchors: HashMap<usize, Anchored> = HashMap::new();
    let mut nodes: u64 = 0;
    let mut alias_nodes: u64 = 0;
    loop {
        let (event, mark) = match parser.next_token() {
            Ok(next) => next,
            // yaml-rust2 stops at 255 open flow collections (`[[[[…`),
            // before the first of them becomes an event.
            Err(e) if e.info() == "recursion limit exceeded" => {
                let max = limits.max_depth;
                return Err(refuse(*e.marker(), Exceeded::Depth { max }));
            }
            Err(_) => return Ok(()),
        };
        // The height of a finished node, for its parent.
        let done: Option<usize> = match event {
            Event::StreamEnd => return Ok(()),
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                open.push(Open {
                    anchor,
                    nodes_before: nodes,
                    height: 0,
                });
                nodes += 1;
                if open.len() > limits.max_depth {
                    return Err(refuse(
                        mark,
                        Exceeded::Depth {
                            max: limits.max_depth,
                        },
                    ));
                }
                None
            }
            Event::SequenceEnd | Event::MappingEnd => open.pop().map(|o| {
                let height = o.height + 1;
                if o.anchor != 0 {
                    let nodes = nodes - o.nodes_before;
                    anchors.insert(o.anchor, Anchored { nodes, height });
                }
                height
            }),
            Event::Scalar(_, _, anchor, _) => {
                nodes += 1;
                if anchor != 0 {
                    anchors.insert(
                        anchor,
                        Anchored {
                            nodes: 1,
                            height: 0,
                        },
                    );
                }
                Some(0)
            }
            Event::Alias(id) => {
                let repeated = anchors.get(&id).copied().unwrap_or(Anchored {
                    nodes: 1,
                    height: 0,
                });
                nodes = nodes.saturating_add(repeated.nodes);
                alias_nodes = alias_nodes.saturating_add(repeated.nodes);
                if alias_nodes > limits.max_alias_nodes {
                    return Err(refuse(
                        mark,
                        Exceeded::Aliases {
                            max: limits.max_alias_nodes,
                        },
                    ));
                }
                if open.len() + repeated.height > limits.max_depth {
                    return Err(refuse(
                        mark,
                        Exceeded::Depth {
                            max: limits.max_depth,
                        },
                    ));
                }
                Some(repeated.height)
            }
            Event::Nothing | Event::StreamStart | Event::DocumentStart | Event::DocumentEnd => None,
        };
        if let (Some(height), Some(parent)) = (done, open.last_mut()) {
            parent.height = parent.height.max(height);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn limits(depth: usize, aliases: u64) -> Limits {
        Limits {
            max_bytes: 64 << 20,
            max_depth: depth,
            max_alias_nodes: aliases,
        }
    }

    #[test]
    fn block_nesting_at_the_limit_is_accepted_one_more_is_refused_where_it_starts() {
        let ok = "a:\n  b:\n    - 1\n";
        assert!(check_yaml(ok, "x.yaml", limits(3, 0)).is_ok());
        let deep = "a:\n  b:\n    - - 1\n";
        let err = check_yaml(deep, "x.yaml", limits(3, 0)).unwrap_err();
        assert_eq!(err.exceeded, Exceeded::Depth { max: 3 });
        assert_eq!((err.line, err.column), (3, 7));
        assert_eq!(
            err.to_string(),
            "x.yaml: line 3, column 7: YAML nested deeper than the limit of 3 levels; \
             flatten the document"
        );
    }

    #[test]
    fn flow_nesting_counts_and_brackets_in_quoted_or_block_scalars_do_not() {
        assert!(check_yaml("a: [[x]]\n", "x.yaml", limits(2, 0)).is_err());
        let text = "a: '[[[[[['\nb: \"{{{{{\"\nc: |\n  [[[[[[[[\n  - - - - -\n";
        assert!(check_yaml(text, "x.yaml", limits(1, 0)).is_ok());
    }

    #[test]
    fn an_alias_counts_with_the_depth_of_what_it_repeats() {
        let text = "a: &deep [[[1]]]\nb: [*deep]\n";
        // The mapping, b's list, and the three levels the alias repeats.
        assert!(check_yaml(text, "x.yaml", limits(5, 100)).is_ok());
        let err = check_yaml(text, "x.yaml", limits(4, 100)).unwrap_err();
        assert_eq!(err.exceeded, Exceeded::Depth { max: 4 });
        assert_eq!(err.line, 2);
    }

    #[test]
    fn a_billion_laughs_is_refused_at_the_alias_that_crosses_the_limit() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
            .iter()
            .zip(["b", "c", "d", "e", "f", "g", "h", "i", "j"])
        {
            let items = vec![format!("*{prev}"); 10].join(", ");
            text.push_str(&format!("{name}: &{name} [{items}]\n"));
        }
        let started = Instant::now();
        let err = check_yaml(&text, "laughs.yaml", Limits::CONFIG).unwrap_err();
        assert_eq!(err.exceeded, Exceeded::Aliases { max: 100_000 });
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(
            err.to_string()
                .contains("aliases stand for more than the limit of 100000 nodes"),
            "{err}"
        );
    }

    #[test]
    fn a_200_kb_document_of_nested_lists_is_refused_in_well_under_a_second() {
        for deep in ["[".repeat(200_000), "- ".repeat(100_000) + "x\n", {
            let mut s = String::new();
            // 1,000 levels, each indented one more space: 500 KB.
            for i in 0..1_000 {
                s.push_str(&" ".repeat(i));
                s.push_str("-\n");
            }
            s
        }] {
            let started = Instant::now();
            let err = check_yaml(&deep, "deep.yaml", Limits::CONFIG).unwrap_err();
            assert_eq!(err.exceeded, Exceeded::Depth { max: 64 });
            assert!(started.elapsed() < Duration::from_secs(1));
        }
    }

    #[test]
    fn a_syntax_error_is_left_to_the_parser() {
        assert!(check_yaml("a: [1, 2\n", "x.yaml", Limits::CONFIG).is_ok());
    }
}

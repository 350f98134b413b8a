//! The bounds of one query: time, answer size, query shape.

use std::time::{Duration, Instant};

use super::{Shape, query_shape};
use crate::{Bounds, MAX_QUERY_DEPTH, MAX_QUERY_NODES, SyntaxError, query, query_bounded};

fn lines(n: usize) -> String {
    (0..n)
        .map(|i| format!("value_{i} = compute(a{i}, b{i}, [c, d, e], {{'k': {i}}})\n"))
        .collect()
}

fn within(seconds: f64) -> Bounds {
    Bounds {
        deadline: Some(Instant::now() + Duration::from_secs_f64(seconds)),
        ..Bounds::default()
    }
}

#[test]
fn a_busy_query_stops_at_the_deadline_with_an_error() {
    let src = lines(240);
    let start = Instant::now();
    let e = query_bounded("python", &src, "((_) @c . (_)* @d)", &within(0.5)).unwrap_err();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(2), "took {took:?}");
    assert!(
        matches!(e, SyntaxError::TimedOut { stage: "query", .. }),
        "{e:?}"
    );
    assert!(
        e.to_string()
            .starts_with("the query was stopped at its deadline, after "),
        "{e}"
    );
}

#[test]
fn a_long_parse_stops_at_the_deadline_and_the_parser_starts_afresh() {
    // A large source with a deadline already past: the parse is stopped...
    let big = lines(60_000);
    let e = query_bounded(
        "python",
        &big,
        "(identifier) @i",
        &Bounds {
            deadline: Some(Instant::now()),
            ..Bounds::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, SyntaxError::TimedOut { .. }), "{e:?}");
    // ...and the next parse on this thread is a whole one, not the stopped one resumed.
    let found = query("python", "x = 1\n", "(identifier) @i").unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].captures[0].text, "x");
}

#[test]
fn the_answer_is_counted_before_its_text_is_copied() {
    let src = format!("x = \"{}\"\n", "a".repeat(1000));
    let bounds = Bounds {
        deadline: None,
        result_bytes: 2000,
    };
    // One match: 32 + 128 + 1002 bytes: within 2000.
    let one = query_bounded("python", &src, "(string) @s", &bounds).unwrap();
    assert_eq!(one.len(), 1);
    // Two patterns, two matches of the same string: 2 × (32 + 128 + 1002) = 2324 bytes.
    let e = query_bounded("python", &src, "(string) @s (string) @t", &bounds).unwrap_err();
    assert_eq!(
        e.to_string(),
        "result: 2324 bytes, over the limit of 2000 bytes"
    );
}

#[test]
fn the_guest_bounds_are_a_quarter_of_its_memory_at_most_64_mib() {
    assert_eq!(
        Bounds::for_guest_memory(64 * 1024 * 1024, None).result_bytes,
        16 * 1024 * 1024
    );
    assert_eq!(
        Bounds::for_guest_memory(4 * 1024 * 1024 * 1024, None).result_bytes,
        64 * 1024 * 1024
    );
}

#[test]
fn deep_queries_are_refused_before_tree_sitter_parses_them() {
    let deep = format!(
        "{}identifier{} @i",
        "(".repeat(100_000),
        ")".repeat(100_000)
    );
    let e = query("python", "x\n", &deep).unwrap_err();
    assert_eq!(
        e.to_string(),
        "query nesting: 100000 levels, over the limit of 64 levels"
    );
    let ok = format!(
        "{}(identifier) @i{}",
        "[".repeat(MAX_QUERY_DEPTH - 1),
        "]".repeat(MAX_QUERY_DEPTH - 1)
    );
    assert_eq!(query("python", "x\n", &ok).unwrap().len(), 1);
}

#[test]
fn the_shape_is_counted_outside_strings_and_comments() {
    let shape = |depth, nodes| Shape { depth, nodes };
    // The predicate is not a node; the string is one.
    assert_eq!(
        query_shape(r#"(call (identifier) @f (#eq? @f "((((\"(("))"#),
        shape(2, 3)
    );
    assert_eq!(query_shape("; ((((((((\n(identifier) @i"), shape(1, 1));
    assert_eq!(query_shape("[(a) (b (c))]"), shape(3, 4));
}

#[test]
fn queries_of_too_many_nodes_are_refused_before_they_are_compiled() {
    let many = "(identifier) @i\n".repeat(MAX_QUERY_NODES + 1);
    let start = Instant::now();
    let e = query("python", "x\n", &many).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "query nodes: {} nodes, over the limit of {MAX_QUERY_NODES} nodes",
            MAX_QUERY_NODES + 1
        )
    );
    assert!(
        start.elapsed() < Duration::from_millis(100),
        "{:?}",
        start.elapsed()
    );
    let most = "(identifier) @i\n".repeat(MAX_QUERY_NODES);
    assert_eq!(
        query("python", "x\n", &most).unwrap().len(),
        MAX_QUERY_NODES
    );
}

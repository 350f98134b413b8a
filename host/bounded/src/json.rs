//! JSON: bracket depth outside strings, in one pass over the bytes.

use std::fmt;

use crate::{Exceeded, LimitError, Limits, check_size};

/// Refuses `bytes` when it is larger than `limits.max_bytes` or its arrays
/// and objects nest deeper than `limits.max_depth`. Syntax is left to the
/// parser: this pass only counts brackets outside strings.
///
/// # Errors
/// A [`LimitError`] naming `origin`, the line and column of the bracket that
/// crossed the limit, and the limit.
pub fn check_json(
    bytes: &[u8],
    origin: impl fmt::Display,
    limits: Limits,
) -> Result<(), LimitError> {
    check_size(bytes.len(), &origin, "JSON", limits)?;
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (at, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limits.max_depth {
                    let (line, column) = position(bytes, at);
                    return Err(LimitError {
                        origin: origin.to_string(),
                        format: "JSON",
                        line,
                        column,
                        exceeded: Exceeded::Depth {
                            max: limits.max_depth,
                        },
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// 1-based line and column (in characters) of byte `at`.
fn position(bytes: &[u8], at: usize) -> (usize, usize) {
    let before = &bytes[..at];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(depth: usize) -> Limits {
        Limits {
            max_bytes: 1 << 20,
            max_depth: depth,
            max_alias_nodes: 10,
        }
    }

    #[test]
    fn nesting_at_the_limit_is_accepted_one_more_is_refused_at_its_bracket() {
        assert!(check_json(br#"{"a": [[1]]}"#, "x.json", small(3)).is_ok());
        let err = check_json(b"{\"a\":\n  [[[1]]]}", "x.json", small(3)).unwrap_err();
        assert_eq!((err.line, err.column), (2, 5));
        assert_eq!(err.exceeded, Exceeded::Depth { max: 3 });
        assert_eq!(
            err.to_string(),
            "x.json: line 2, column 5: JSON nested deeper than the limit of 3 levels; \
             flatten the document"
        );
    }

    #[test]
    fn brackets_inside_strings_do_not_count_escaped_quotes_do_not_end_them() {
        let text = br#"{"k": "[[[[[[ \" {{{{{{ \\", "v": [1]}"#;
        assert!(check_json(text, "x.json", small(2)).is_ok());
    }

    #[test]
    fn text_over_the_size_limit_is_refused_before_it_is_read() {
        let limits = Limits {
            max_bytes: 4,
            ..small(8)
        };
        let err = check_json(b"[1, 2]", "big.json", limits).unwrap_err();
        assert_eq!(err.exceeded, Exceeded::Size { bytes: 6, max: 4 });
        assert_eq!(
            err.to_string(),
            "big.json: JSON of 6 bytes is larger than the limit of 4 bytes; shorten or split it"
        );
    }

    #[test]
    fn a_deep_document_is_refused_quickly_and_serde_json_never_sees_it() {
        let deep = "[".repeat(5_000_000);
        let started = std::time::Instant::now();
        let err =
            crate::parse_json::<serde_json::Value>(&deep, "deep.json", Limits::DATA).unwrap_err();
        assert!(matches!(err, crate::Error::Limit(_)), "{err}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }
}

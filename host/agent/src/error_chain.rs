//! How the binary prints an error: the message and its causes on one line, as `{:#}` does,
//! but never a cause twice. Many error types put their cause in their own message *and* return
//! it as their `source`, so `{:#}` printed it twice ("…: stream did not contain valid UTF-8:
//! stream did not contain valid UTF-8"); this is the one place that cannot happen.

/// `error`, then each cause after `: `, leaving out a cause whose text is already printed
/// (the message ends with it or contains it) and replacing the last part when a cause repeats
/// it with more detail.
pub fn chain_line(error: &anyhow::Error) -> String {
    join_causes(error.chain().map(ToString::to_string))
}

/// [`chain_line`] over the texts of an error and its causes, outermost first.
fn join_causes(texts: impl IntoIterator<Item = String>) -> String {
    let mut line = String::new();
    // Where the part added last starts in `line`.
    let mut last_start = 0;
    for text in texts {
        let text = text.trim();
        if text.is_empty() || line.contains(text) {
            continue;
        }
        if !line.is_empty() && text.contains(&line[last_start..]) {
            // The cause says what the last part said and more: keep only the cause.
            line.truncate(last_start);
        } else if !line.is_empty() {
            line.push_str(": ");
        }
        last_start = line.len();
        line.push_str(text);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt;

    fn join(parts: &[&str]) -> String {
        join_causes(parts.iter().map(ToString::to_string))
    }

    /// An error that puts its cause in its message and also returns it as its source, the
    /// pattern that printed causes twice.
    #[derive(Debug)]
    struct ReadError {
        path: &'static str,
        source: std::io::Error,
    }

    impl fmt::Display for ReadError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "cannot read {}: {}", self.path, self.source)
        }
    }

    impl std::error::Error for ReadError {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_printed_once() {
        let source = std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        );
        let e = anyhow::Error::new(ReadError {
            path: "config.toml",
            source,
        });
        // What `{:#}` prints, and what the binary prints instead.
        assert_eq!(
            format!("{e:#}"),
            "cannot read config.toml: stream did not contain valid UTF-8: stream did not contain valid UTF-8"
        );
        assert_eq!(
            chain_line(&e),
            "cannot read config.toml: stream did not contain valid UTF-8"
        );
        // Context added on top keeps its place.
        let e = e.context("loading the configuration");
        assert_eq!(
            chain_line(&e),
            "loading the configuration: cannot read config.toml: stream did not contain valid UTF-8"
        );
    }

    #[test]
    fn distinct_causes_are_all_kept_in_order() {
        assert_eq!(join(&["a", "b", "c"]), "a: b: c");
        assert_eq!(join(&["only"]), "only");
        assert_eq!(join(&[]), "");
    }

    #[test]
    fn repeats_are_dropped_wherever_they_are_in_the_message() {
        // Identical neighbours, a suffix, a cause quoted in the middle, a repeat further down.
        assert_eq!(join(&["x", "x"]), "x");
        assert_eq!(
            join(&["open db: io failed", "io failed"]),
            "open db: io failed"
        );
        assert_eq!(
            join(&["audit log L is damaged: bad hash; run rotate", "bad hash"]),
            "audit log L is damaged: bad hash; run rotate"
        );
        assert_eq!(join(&["a: b", "c", "b"]), "a: b: c");
        assert_eq!(join(&["ctx", "", "  ", "cause"]), "ctx: cause");
    }

    #[test]
    fn a_cause_that_repeats_the_last_part_with_more_replaces_it() {
        assert_eq!(
            join(&[
                "loading",
                "disk error",
                "disk error: no space left on device"
            ]),
            "loading: disk error: no space left on device"
        );
        assert_eq!(join(&["a", "a (os error 2)"]), "a (os error 2)");
    }
}

//! Small text helpers shared by the tools.

use std::path::Path;

/// How many leading bytes are checked for a NUL to call a file binary (what
/// git and ripgrep look at, give or take).
pub const SNIFF_BYTES: usize = 8 * 1024;

/// Whether `head` (a file's first bytes) looks binary: it contains a NUL.
pub fn looks_binary(head: &[u8]) -> bool {
    head[..head.len().min(SNIFF_BYTES)].contains(&0)
}

/// `path` relative to `root`, `/`-separated, `.` for the root itself: how
/// paths are shown to the model.
pub fn rel(root: &Path, path: &Path) -> String {
    match path.strip_prefix(root) {
        Ok(r) if r.as_os_str().is_empty() => ".".to_string(),
        Ok(r) => r
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.display().to_string(),
    }
}

/// A byte count for people: `512 B`, `1.5 KiB`, `3.0 MiB`.
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    // Precision loss is irrelevant for one decimal of output.
    #[allow(clippy::cast_precision_loss)]
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// Cuts `line` to at most `max` characters, marking the cut.
pub fn clip(line: &str, max: usize) -> String {
    match line.char_indices().nth(max) {
        None => line.to_string(),
        Some((at, _)) => format!("{}… [line cut at {max} characters]", &line[..at]),
    }
}

/// `n` followed by `one` or `many`: `1 match`, `3 matches`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_means_a_nul_in_the_head() {
        assert!(looks_binary(b"abc\0def"));
        assert!(!looks_binary(b"plain text\n"));
        let mut late = vec![b'a'; SNIFF_BYTES];
        late.push(0);
        assert!(!looks_binary(&late));
    }

    #[test]
    fn relative_paths() {
        let root = Path::new("/project");
        assert_eq!(rel(root, Path::new("/project/src/a.rs")), "src/a.rs");
        assert_eq!(rel(root, Path::new("/project")), ".");
    }

    #[test]
    fn sizes() {
        assert_eq!(human_size(0), "0 B");
        assert_eq!(human_size(1023), "1023 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(3 * 1024 * 1024), "3.0 MiB");
    }

    #[test]
    fn clipping_counts_characters() {
        assert_eq!(clip("héllo", 10), "héllo");
        assert_eq!(clip("héllo", 2), "hé… [line cut at 2 characters]");
        assert_eq!(count(1, "match", "matches"), "1 match");
        assert_eq!(count(2, "match", "matches"), "2 matches");
    }
}

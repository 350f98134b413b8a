//! A unified diff (`git diff` output) parsed into files, hunks and lines,
//! with the line numbers of the new version; the added lines are the ones a
//! review's findings anchor to.

use agent_security::DiffScope;

/// What a line of a hunk is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Unchanged (a ` ` line).
    Context,
    /// Added (`+`).
    Added,
    /// Removed (`-`).
    Removed,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkLine {
    /// What it is.
    pub kind: LineKind,
    /// Its 1-based line in the new version (`None` for a removed line).
    pub new_line: Option<u32>,
    /// The text without the marker.
    pub text: String,
}

/// One `@@ -a,b +c,d @@` hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// First line of the new version it covers.
    pub new_start: u32,
    /// The lines, in order.
    pub lines: Vec<HunkLine>,
}

impl Hunk {
    /// The added lines' numbers.
    pub fn added(&self) -> impl Iterator<Item = u32> + '_ {
        self.lines
            .iter()
            .filter(|l| l.kind == LineKind::Added)
            .filter_map(|l| l.new_line)
    }

    /// The first and last line of the new version the hunk shows.
    pub fn new_span(&self) -> (u32, u32) {
        let mut lines = self.lines.iter().filter_map(|l| l.new_line);
        let first = lines.next().unwrap_or(self.new_start);
        let last = lines.next_back().unwrap_or(first);
        (first, last)
    }
}

/// One file of the diff.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilePatch {
    /// Its path in the new version (the old one when deleted).
    pub path: String,
    /// Deleted by the change: nothing to anchor to.
    pub deleted: bool,
    /// A binary file: no hunks.
    pub binary: bool,
    /// The hunks.
    pub hunks: Vec<Hunk>,
}

impl FilePatch {
    /// The number of added lines.
    pub fn added_count(&self) -> usize {
        self.hunks.iter().map(|h| h.added().count()).sum()
    }
}

/// Parses `git diff` output. Lines it does not understand (`index`, mode
/// changes, renames' headers) are skipped.
pub fn parse_patch(patch: &str) -> Vec<FilePatch> {
    let mut files: Vec<FilePatch> = Vec::new();
    let mut next_new: u32 = 0;
    let mut in_hunk = false;
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            in_hunk = false;
            // `a/x b/x`: the new path is the second half; `+++` corrects it.
            let path = rest
                .rsplit_once(" b/")
                .map(|(_, b)| b.to_string())
                .unwrap_or_default();
            files.push(FilePatch {
                path: unquote(&path),
                ..FilePatch::default()
            });
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if !in_hunk || line.starts_with("@@") {
            if let Some(rest) = line.strip_prefix("+++ ") {
                if rest != "/dev/null" {
                    file.path = unquote(rest.strip_prefix("b/").unwrap_or(rest));
                }
            } else if line.starts_with("deleted file mode") {
                file.deleted = true;
            } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
                file.binary = true;
            } else if let Some(rest) = line.strip_prefix("@@ ") {
                let start = rest
                    .split_whitespace()
                    .find_map(|t| t.strip_prefix('+'))
                    .and_then(|spec| spec.split(',').next())
                    .and_then(|s| s.parse::<u32>().ok());
                if let Some(start) = start {
                    file.hunks.push(Hunk {
                        new_start: start,
                        lines: Vec::new(),
                    });
                    next_new = start.max(1);
                    in_hunk = true;
                }
            }
            continue;
        }
        let Some(hunk) = file.hunks.last_mut() else {
            continue;
        };
        let (kind, text) = match line.as_bytes().first() {
            Some(b'+') => (LineKind::Added, &line[1..]),
            Some(b'-') => (LineKind::Removed, &line[1..]),
            Some(b' ') => (LineKind::Context, &line[1..]),
            Some(b'\\') => continue, // "\ No newline at end of file"
            None => (LineKind::Context, ""),
            _ => {
                // The next file's header or something unknown: the hunk is over.
                in_hunk = false;
                continue;
            }
        };
        let new_line = match kind {
            LineKind::Removed => None,
            _ => {
                let n = next_new;
                next_new += 1;
                Some(n)
            }
        };
        hunk.lines.push(HunkLine {
            kind,
            new_line,
            text: text.to_string(),
        });
    }
    files
}

/// The scope of `files`: every file still present, and per file the ranges
/// of added lines (context lines are not changes).
pub fn scope(files: &[FilePatch]) -> DiffScope {
    let mut scope = DiffScope::default();
    for f in files.iter().filter(|f| !f.deleted) {
        scope.files.insert(f.path.clone());
        let mut ranges: Vec<(u32, u32)> = Vec::new();
        for n in f.hunks.iter().flat_map(Hunk::added) {
            match ranges.last_mut() {
                Some((_, end)) if *end + 1 == n => *end = n,
                _ => ranges.push((n, n)),
            }
        }
        if !ranges.is_empty() {
            scope.lines.insert(f.path.clone(), ranges);
        }
    }
    scope
}

/// Undoes git's C-style quoting of unusual paths (`"a\tb"`), enough for
/// the common escapes.
fn unquote(p: &str) -> String {
    let Some(inner) = p.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return p.to_string();
    };
    let inner = inner.strip_prefix("b/").unwrap_or(inner);
    inner
        .replace("\\t", "\t")
        .replace("\\n", "\n")
        .replace("\\\"", "\"")
        .replace("\\\\", "\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATCH: &str = "\
diff --git a/src/app.py b/src/app.py
index 1111111..2222222 100644
--- a/src/app.py
+++ b/src/app.py
@@ -1,4 +1,5 @@
 import os
+import sqlite3
 
 def run(q):
-    return q
+    cur = db.execute(\"SELECT * FROM t WHERE id=\" + q)
+    return cur
@@ -20,2 +21,3 @@ def other():
     a = 1
+    b = 2
     return a
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
diff --git a/img.png b/img.png
new file mode 100644
Binary files /dev/null and b/img.png differ
";

    #[test]
    fn files_hunks_and_new_line_numbers() {
        let files = parse_patch(PATCH);
        assert_eq!(files.len(), 3);
        let app = &files[0];
        assert_eq!(app.path, "src/app.py");
        assert_eq!(app.hunks.len(), 2);
        assert_eq!(app.hunks[0].added().collect::<Vec<_>>(), vec![2, 5, 6]);
        assert_eq!(app.hunks[0].new_span(), (1, 6));
        assert_eq!(app.hunks[1].added().collect::<Vec<_>>(), vec![22]);
        assert_eq!(app.added_count(), 4);
        assert!(files[1].deleted);
        assert_eq!(files[1].path, "old.txt");
        assert!(files[2].binary);
        assert_eq!(files[2].path, "img.png");
    }

    #[test]
    fn the_scope_is_the_added_lines_only() {
        let s = scope(&parse_patch(PATCH));
        assert_eq!(s.lines["src/app.py"], vec![(2, 2), (5, 6), (22, 22)]);
        assert!(s.contains("src/app.py", 5));
        assert!(
            !s.contains("src/app.py", 4),
            "a context line is not a change"
        );
        assert!(
            !s.files.contains("old.txt"),
            "a deleted file has nothing to anchor to"
        );
        assert!(s.files.contains("img.png"));
    }
}

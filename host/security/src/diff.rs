//! Diff scope: the files changed between two revisions and the changed line
//! ranges in each (`git diff --name-only A..B`, `git diff -U0 A..B`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

/// Changed files and, per file, the changed (added or modified) line ranges
/// on the `head` side, inclusive and 1-based.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffScope {
    /// Every file that differs (and still exists at `head`).
    pub files: BTreeSet<String>,
    /// Changed line ranges per file.
    pub lines: BTreeMap<String, Vec<(u32, u32)>>,
}

impl DiffScope {
    /// Whether `line` of `file` changed. Line 0 (the file as a whole)
    /// counts as changed when the file changed.
    pub fn contains(&self, file: &str, line: u32) -> bool {
        if !self.files.contains(file) {
            return false;
        }
        if line == 0 {
            return true;
        }
        self.lines
            .get(file)
            .is_some_and(|r| r.iter().any(|&(a, b)| a <= line && line <= b))
    }

    /// Whether any line in `start..=end` of `file` changed.
    pub fn overlaps(&self, file: &str, start: u32, end: u32) -> bool {
        if !self.files.contains(file) {
            return false;
        }
        if start == 0 {
            return true;
        }
        let end = end.max(start);
        self.lines
            .get(file)
            .is_some_and(|r| r.iter().any(|&(a, b)| a <= end && start <= b))
    }
}

fn git(root: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["-c", "core.quotePath=false"])
        .args(args)
        .output()
        .context("running git (is it installed?)")?;
    if !out.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    String::from_utf8(out.stdout).context("git printed something that is not UTF-8")
}

/// Checks a revision argument: no option injection, no empty strings.
fn check_rev(rev: &str) -> anyhow::Result<()> {
    if rev.is_empty() || rev.starts_with('-') || rev.contains("..") {
        bail!("`{rev}` is not a revision");
    }
    Ok(())
}

/// Computes the diff scope between `base` and `head` in the repository at `root`.
///
/// # Errors
/// When git fails (not a repository, unknown revision) or a revision looks
/// like an option.
pub fn diff_scope(root: &Path, base: &str, head: &str) -> anyhow::Result<DiffScope> {
    check_rev(base)?;
    check_rev(head)?;
    let range = format!("{base}..{head}");
    let names = git(
        root,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--diff-filter=d",
            "--name-only",
            &range,
            "--",
        ],
    )?;
    let patch = git(
        root,
        &[
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--diff-filter=d",
            "-U0",
            &range,
            "--",
        ],
    )?;
    let mut scope = parse_hunks(&patch);
    for n in names.lines().filter(|l| !l.is_empty()) {
        scope.files.insert(n.to_string());
    }
    Ok(scope)
}

/// Parses `git diff -U0` output: `+++ b/<path>` headers and
/// `@@ -a,b +c,d @@` hunks (`d` defaults to 1; `d == 0` adds no lines).
pub fn parse_hunks(patch: &str) -> DiffScope {
    let mut scope = DiffScope::default();
    let mut current: Option<String> = None;
    for line in patch.lines() {
        if let Some(rest) = line.strip_prefix("+++ ") {
            current = if rest == "/dev/null" {
                None
            } else {
                let p = rest.strip_prefix("b/").unwrap_or(rest);
                let p = unquote(p);
                scope.files.insert(p.clone());
                Some(p)
            };
            continue;
        }
        let Some(rest) = line.strip_prefix("@@ ") else {
            continue;
        };
        let Some(file) = &current else { continue };
        let Some(plus) = rest.split_whitespace().find(|t| t.starts_with('+')) else {
            continue;
        };
        let spec = &plus[1..];
        let (start, count) = match spec.split_once(',') {
            Some((s, c)) => (s.parse::<u32>().ok(), c.parse::<u32>().ok()),
            None => (spec.parse::<u32>().ok(), Some(1)),
        };
        let (Some(start), Some(count)) = (start, count) else {
            continue;
        };
        if count == 0 {
            continue;
        }
        scope
            .lines
            .entry(file.clone())
            .or_default()
            .push((start, start + count - 1));
    }
    scope
}

/// Undoes git's C-style quoting of unusual paths (`"a\tb"`).
fn unquote(p: &str) -> String {
    let Some(inner) = p.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return p.to_string();
    };
    let inner = inner.strip_prefix("b/").unwrap_or(inner);
    let mut out = Vec::new();
    let bytes = inner.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            let c = bytes[i + 1];
            match c {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'"' => out.push(b'"'),
                b'\\' => out.push(b'\\'),
                b'0'..=b'7' if i + 4 <= bytes.len() => {
                    let oct = std::str::from_utf8(&bytes[i + 1..i + 4])
                        .ok()
                        .and_then(|s| u8::from_str_radix(s, 8).ok());
                    if let Some(v) = oct {
                        out.push(v);
                        i += 4;
                        continue;
                    }
                    out.push(c);
                }
                _ => out.push(c),
            }
            i += 2;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_zero_context_hunks() {
        let patch = "diff --git a/app.py b/app.py\nindex 1..2 100644\n--- a/app.py\n+++ b/app.py\n@@ -3,0 +4,2 @@ def f():\n+x = 1\n+y = 2\n@@ -10 +12 @@\n-a\n+b\n@@ -20,3 +22,0 @@\n-gone\ndiff --git a/new.js b/new.js\nnew file mode 100644\n--- /dev/null\n+++ b/new.js\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\ndiff --git a/old.txt b/old.txt\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
        let s = parse_hunks(patch);
        assert_eq!(s.lines["app.py"], vec![(4, 5), (12, 12)]);
        assert_eq!(s.lines["new.js"], vec![(1, 3)]);
        assert!(!s.files.contains("old.txt"));
        assert!(s.contains("app.py", 5));
        assert!(!s.contains("app.py", 6));
        assert!(!s.contains("app.py", 22));
        assert!(s.contains("app.py", 0));
        assert!(s.overlaps("app.py", 1, 4));
        assert!(!s.contains("other.py", 1));
    }

    #[test]
    fn unquotes_paths() {
        assert_eq!(unquote("\"b/a\\tb.py\""), "a\tb.py");
        assert_eq!(unquote("\"b/caf\\303\\251.py\""), "café.py");
        assert_eq!(unquote("plain.py"), "plain.py");
    }

    #[test]
    fn refuses_option_like_revisions() {
        assert!(check_rev("--output=x").is_err());
        assert!(check_rev("").is_err());
        assert!(check_rev("HEAD~1").is_ok());
    }

    #[test]
    fn real_repository() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let run = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(root)
                .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
                .args(args)
                .output()
                .unwrap();
            assert!(
                ok.status.success(),
                "{}",
                String::from_utf8_lossy(&ok.stderr)
            );
        };
        run(&["init", "-q"]);
        std::fs::write(root.join("a.py"), "one\ntwo\nthree\n").unwrap();
        run(&["add", "."]);
        run(&["commit", "-q", "-m", "1"]);
        std::fs::write(root.join("a.py"), "one\nTWO\nthree\nfour\n").unwrap();
        std::fs::write(root.join("b.py"), "new\n").unwrap();
        run(&["add", "."]);
        run(&["commit", "-q", "-m", "2"]);
        let s = diff_scope(root, "HEAD~1", "HEAD").unwrap();
        assert_eq!(
            s.files.iter().cloned().collect::<Vec<_>>(),
            vec!["a.py".to_string(), "b.py".to_string()]
        );
        assert_eq!(s.lines["a.py"], vec![(2, 2), (4, 4)]);
        assert_eq!(s.lines["b.py"], vec![(1, 1)]);
    }
}

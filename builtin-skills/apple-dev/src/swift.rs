//! `swift_build`, `swift_test`, `swift_resolve`: SwiftPM through the exec
//! import (macOS and Linux). `swift_add_dep` is in [`crate::package`].

use agent_skill_sdk::ToolError;
use serde::Deserialize;

use crate::{check, run};

/// Appendix G's input of `swift_build` and `swift_test`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwiftInput {
    pub package_path: Option<String>,
    pub configuration: Option<String>,
    pub target: Option<String>,
    #[serde(default)]
    pub extra_args: Vec<String>,
}

/// `swift_resolve`'s input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveInput {
    pub package_path: Option<String>,
}

/// Options `extra_args` may hold, and whether each takes a value.
const EXTRA: &[(&str, bool)] = &[
    ("--parallel", false),
    ("--verbose", false),
    ("-v", false),
    ("--enable-code-coverage", false),
    ("--build-tests", false),
    ("--filter", true),
    ("--skip", true),
    ("-Xswiftc", true),
];
/// What `-Xswiftc` may pass on to the compiler.
const SWIFTC: &[&str] = &[
    "-warnings-as-errors",
    "-strict-concurrency=complete",
    "-strict-concurrency=targeted",
    "-enable-testing",
];

fn package_args(path: Option<&str>) -> Result<Vec<String>, ToolError> {
    let path = check::project_path("package_path", path.unwrap_or("."))?;
    Ok(if path == "." {
        Vec::new()
    } else {
        vec!["--package-path".to_string(), path]
    })
}

fn extra(args: &[String]) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let Some((_, takes_value)) = EXTRA.iter().find(|(o, _)| o == a) else {
            return Err(ToolError::invalid_input(format!(
                "extra_args entry `{a}` is refused: allowed are {}",
                EXTRA.iter().map(|(o, _)| *o).collect::<Vec<_>>().join(", ")
            )));
        };
        out.push(a.clone());
        if *takes_value {
            let Some(value) = args.get(i + 1) else {
                return Err(ToolError::invalid_input(format!(
                    "extra_args: `{a}` needs a value after it"
                )));
            };
            if a == "-Xswiftc" {
                if !SWIFTC.contains(&value.as_str()) {
                    return Err(ToolError::invalid_input(format!(
                        "extra_args: `-Xswiftc {value}` is refused: allowed are {}",
                        SWIFTC.join(", ")
                    )));
                }
            } else {
                check::name(a, value)?;
            }
            out.push(value.clone());
            i += 1;
        }
        i += 1;
    }
    Ok(out)
}

/// `swift build` or `swift test`'s argument vector.
pub fn argv(input: &SwiftInput, subcommand: &str) -> Result<Vec<String>, ToolError> {
    let mut args = vec![subcommand.to_string()];
    args.extend(package_args(input.package_path.as_deref())?);
    match input.configuration.as_deref() {
        None | Some("debug") => {}
        Some("release") => args.extend(["-c".to_string(), "release".to_string()]),
        Some(other) => {
            return Err(ToolError::invalid_input(format!(
                "configuration `{other}` is refused: expected debug or release"
            )));
        }
    }
    if let Some(target) = &input.target {
        check::name("target", target)?;
        // `swift test` has no --target: a test target's name filters its tests.
        let option = if subcommand == "test" {
            "--filter"
        } else {
            "--target"
        };
        args.extend([option.to_string(), target.clone()]);
    }
    args.extend(extra(&input.extra_args)?);
    Ok(args)
}

pub fn build(input: SwiftInput) -> Result<String, ToolError> {
    run::build("swift", argv(&input, "build")?, None)
}

pub fn test(input: SwiftInput) -> Result<String, ToolError> {
    run::build("swift", argv(&input, "test")?, None)
}

pub fn resolve(input: ResolveInput) -> Result<String, ToolError> {
    let mut args = vec!["package".to_string()];
    args.extend(package_args(input.package_path.as_deref())?);
    args.push("resolve".to_string());
    let out = run::plain("swift", args.clone(), None)?;
    Ok(format!(
        "$ {}\n{}",
        run::shown("swift", &args),
        if out.trim().is_empty() {
            "dependencies resolved (Package.resolved is up to date)\n".to_string()
        } else {
            out
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swift_argument_vectors() {
        let input: SwiftInput = serde_json::from_str(
            r#"{"package_path": "Pkg", "configuration": "release", "target": "Core", "extra_args": ["--parallel", "-Xswiftc", "-warnings-as-errors"]}"#,
        )
        .unwrap();
        assert_eq!(
            argv(&input, "build").unwrap().join(" "),
            "build --package-path Pkg -c release --target Core --parallel -Xswiftc -warnings-as-errors"
        );
        let bad: SwiftInput =
            serde_json::from_str(r#"{"extra_args": ["--scratch-path", "/tmp"]}"#).unwrap();
        assert!(argv(&bad, "build").is_err());
        let bad: SwiftInput = serde_json::from_str(r#"{"target": "--disable-sandbox"}"#).unwrap();
        assert!(argv(&bad, "build").is_err());
        let bad: SwiftInput =
            serde_json::from_str(r#"{"extra_args": ["-Xswiftc", "-load-plugin-library"]}"#)
                .unwrap();
        assert!(argv(&bad, "build").is_err());
    }
}

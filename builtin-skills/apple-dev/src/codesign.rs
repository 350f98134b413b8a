//! `codesign_info`, `codesign_verify` and the allowlisted `xcrun` dispatch.

use agent_skill_sdk::ToolError;
use serde::Deserialize;

use crate::{check, run};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InfoInput {
    pub query: String,
    pub app_path: Option<String>,
    pub team_id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyInput {
    pub app_path: String,
    pub deep: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XcrunInput {
    pub tool: String,
    #[serde(default)]
    pub args: Vec<String>,
}

fn app(path: Option<&str>, query: &str) -> Result<String, ToolError> {
    let path = path.ok_or_else(|| {
        ToolError::invalid_input(format!("`app_path` is required for the {query} query"))
    })?;
    check::project_path_with("app_path", path, ".app")
}

/// The program and argument vector of a `codesign_info` query.
pub fn info_argv(input: &InfoInput) -> Result<(&'static str, Vec<String>), ToolError> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match input.query.as_str() {
        "identities" => Ok(("security", v(&["find-identity", "-v", "-p", "codesigning"]))),
        "profiles" => {
            // The provisioning profile embedded in the app, decoded.
            let app = app(input.app_path.as_deref(), "profiles")?;
            Ok((
                "security",
                vec![
                    "cms".into(),
                    "-D".into(),
                    "-i".into(),
                    format!("{app}/embedded.mobileprovision"),
                ],
            ))
        }
        "entitlements" => {
            let app = app(input.app_path.as_deref(), "entitlements")?;
            let mut args = v(&["--display", "--entitlements", "-", "--xml"]);
            args.push(app);
            Ok(("codesign", args))
        }
        other => Err(ToolError::invalid_input(format!(
            "query `{other}` is refused: expected identities, profiles or entitlements"
        ))),
    }
}

pub fn info(input: InfoInput) -> Result<String, ToolError> {
    if let Some(team) = &input.team_id {
        check::team_id(team)?;
    }
    let (program, args) = info_argv(&input)?;
    let shown = run::shown(program, &args);
    let out = run::run(program, &args, None)?;
    if !out.success() {
        return Err(ToolError::failed(format!(
            "`{shown}` failed: {}",
            run::tail(out.stderr.trim())
        )));
    }
    let mut text = out.stdout;
    if let Some(team) = &input.team_id {
        let needle = format!("({team})");
        text = text
            .lines()
            .filter(|l| l.contains(&needle) || l.contains("valid identities found"))
            .collect::<Vec<_>>()
            .join("\n");
    }
    // codesign prints the entitlements on stdout, its notes on stderr.
    Ok(format!("$ {shown}\n{}", run::tail(text.trim_end())))
}

pub fn verify(input: VerifyInput) -> Result<String, ToolError> {
    let app = check::project_path_with("app_path", &input.app_path, ".app")?;
    let mut args = vec!["--verify".to_string()];
    if input.deep.unwrap_or(true) {
        args.push("--deep".into());
    }
    args.extend(["--strict".into(), "--verbose=2".into(), app.clone()]);
    let shown = run::shown("codesign", &args);
    let out = run::run("codesign", &args, None)?;
    let verdict = if out.success() {
        format!("the signature of {app} is valid")
    } else {
        format!("the signature of {app} is NOT valid")
    };
    Ok(format!(
        "$ {shown}\n{verdict}\n{}",
        run::tail(out.stderr.trim_end())
    ))
}

/// Developer tools `xcrun` may run, and for `simctl` its subcommands.
pub const XCRUN_TOOLS: &[&str] = &[
    "simctl",
    "xcresulttool",
    "lipo",
    "dwarfdump",
    "atos",
    "otool",
    "nm",
    "size",
    "swift-demangle",
    "plutil",
];
pub const SIMCTL_SUBCOMMANDS: &[&str] = &[
    "list",
    "boot",
    "shutdown",
    "install",
    "launch",
    "terminate",
    "io",
    "get_app_container",
    "listapps",
    "openurl",
    "status_bar",
    "ui",
];

/// The checked argument vector of an `xcrun` call: the tool from the
/// allowlist first (so nothing can become an option of xcrun itself), every
/// path-like argument inside the project.
pub fn xcrun_argv(input: &XcrunInput) -> Result<Vec<String>, ToolError> {
    if !XCRUN_TOOLS.contains(&input.tool.as_str()) {
        return Err(ToolError::invalid_input(format!(
            "xcrun tool `{}` is refused: allowed are {}",
            input.tool,
            XCRUN_TOOLS.join(", ")
        )));
    }
    if input.tool == "simctl" {
        let sub = input.args.first().map(String::as_str).unwrap_or("");
        if !SIMCTL_SUBCOMMANDS.contains(&sub) {
            return Err(ToolError::invalid_input(format!(
                "simctl subcommand `{sub}` is refused: allowed are {}",
                SIMCTL_SUBCOMMANDS.join(", ")
            )));
        }
    }
    for a in &input.args {
        if a.chars().any(char::is_control) {
            return Err(ToolError::invalid_input(format!(
                "argument `{a}` is refused: it contains control characters"
            )));
        }
        // A path (or an option's `=path`) must stay inside the project.
        let value = a.split_once('=').map_or(a.as_str(), |(_, v)| v);
        if value.starts_with('/') || value.starts_with('~') || value.split('/').any(|p| p == "..") {
            return Err(ToolError::invalid_input(format!(
                "argument `{a}` is refused: paths must be relative and stay inside the project"
            )));
        }
    }
    let mut args = vec![input.tool.clone()];
    args.extend(input.args.iter().cloned());
    Ok(args)
}

pub fn xcrun(input: XcrunInput) -> Result<String, ToolError> {
    let args = xcrun_argv(&input)?;
    let shown = run::shown("xcrun", &args);
    let out = run::plain("xcrun", args, None)?;
    Ok(format!("$ {shown}\n{out}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xcrun_is_limited_to_its_allowlist() {
        let call = |tool: &str, args: &[&str]| {
            xcrun_argv(&XcrunInput {
                tool: tool.into(),
                args: args.iter().map(|s| s.to_string()).collect(),
            })
        };
        assert_eq!(
            call("xcresulttool", &["get", "--path", "build/R.xcresult"]).unwrap(),
            ["xcresulttool", "get", "--path", "build/R.xcresult"]
        );
        assert!(call("-sdk", &[]).is_err());
        assert!(call("notarytool", &["submit"]).is_err());
        assert!(call("simctl", &["spawn", "booted", "sh"]).is_err());
        assert!(call("simctl", &["erase", "all"]).is_err());
        assert!(call("xcresulttool", &["get", "--path=/etc/x"]).is_err());
        assert!(call("lipo", &["-info", "../outside"]).is_err());
    }
}

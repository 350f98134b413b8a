//! `xcode_build`, `xcode_test`, `xcode_archive`, `xcode_clean`: xcodebuild
//! with checked arguments, its log parsed.

use agent_skill_sdk::ToolError;
use serde::Deserialize;

use crate::{check, run};

/// The default destination (Appendix G).
pub const DEFAULT_DESTINATION: &str = "platform=iOS Simulator,name=iPhone 16";
/// An archive is for devices: its default destination.
pub const ARCHIVE_DESTINATION: &str = "generic/platform=iOS";

/// Appendix G's input of the four xcodebuild tools.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct XcodeInput {
    pub workspace: Option<String>,
    pub project: Option<String>,
    pub scheme: String,
    pub destination: Option<String>,
    pub configuration: Option<String>,
    #[serde(default)]
    pub extra_args: Vec<String>,
}

/// An xcodebuild action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Build,
    Test,
    Archive,
    Clean,
}

impl Action {
    fn word(self) -> &'static str {
        match self {
            Action::Build => "build",
            Action::Test => "test",
            Action::Archive => "archive",
            Action::Clean => "clean",
        }
    }
}

/// xcodebuild's argument vector for `action`, every value checked.
pub fn argv(input: &XcodeInput, action: Action) -> Result<Vec<String>, ToolError> {
    let mut args = Vec::new();
    match (&input.workspace, &input.project) {
        (Some(_), Some(_)) => {
            return Err(ToolError::invalid_input(
                "give either `workspace` or `project`, not both",
            ));
        }
        (Some(w), None) => {
            let w = check::project_path_with("workspace", w, ".xcworkspace")?;
            args.extend(["-workspace".to_string(), w]);
        }
        (None, Some(p)) => {
            let p = check::project_path_with("project", p, ".xcodeproj")?;
            args.extend(["-project".to_string(), p]);
        }
        (None, None) => {}
    }
    check::name("scheme", &input.scheme)?;
    args.extend(["-scheme".to_string(), input.scheme.clone()]);
    let configuration = input.configuration.as_deref().unwrap_or(match action {
        Action::Archive => "Release",
        _ => "Debug",
    });
    if !matches!(configuration, "Debug" | "Release") {
        return Err(ToolError::invalid_input(format!(
            "configuration `{configuration}` is refused: expected Debug or Release"
        )));
    }
    args.extend(["-configuration".to_string(), configuration.to_string()]);
    if action != Action::Clean {
        let destination = input.destination.as_deref().unwrap_or(match action {
            Action::Archive => ARCHIVE_DESTINATION,
            _ => DEFAULT_DESTINATION,
        });
        check::destination(destination)?;
        args.extend(["-destination".to_string(), destination.to_string()]);
    }
    if action == Action::Archive {
        args.extend([
            "-archivePath".to_string(),
            format!("build/{}.xcarchive", input.scheme),
        ]);
    }
    for setting in &input.extra_args {
        check::build_setting(setting)?;
        args.push(setting.clone());
    }
    args.push(action.word().to_string());
    Ok(args)
}

fn xcodebuild(input: XcodeInput, action: Action) -> Result<String, ToolError> {
    let args = argv(&input, action)?;
    run::build("xcodebuild", args, None)
}

pub fn build(input: XcodeInput) -> Result<String, ToolError> {
    xcodebuild(input, Action::Build)
}

pub fn test(input: XcodeInput) -> Result<String, ToolError> {
    xcodebuild(input, Action::Test)
}

pub fn archive(input: XcodeInput) -> Result<String, ToolError> {
    xcodebuild(input, Action::Archive)
}

pub fn clean(input: XcodeInput) -> Result<String, ToolError> {
    xcodebuild(input, Action::Clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(json: &str) -> XcodeInput {
        serde_json::from_str(json).expect("input")
    }

    #[test]
    fn the_argument_vector_is_exact() {
        let args = argv(
            &input(r#"{"project": "./App.xcodeproj", "scheme": "App", "extra_args": ["CODE_SIGNING_ALLOWED=NO"]}"#),
            Action::Build,
        )
        .unwrap();
        assert_eq!(
            args,
            [
                "-project",
                "App.xcodeproj",
                "-scheme",
                "App",
                "-configuration",
                "Debug",
                "-destination",
                DEFAULT_DESTINATION,
                "CODE_SIGNING_ALLOWED=NO",
                "build"
            ]
        );
        let args = argv(&input(r#"{"scheme": "App"}"#), Action::Archive).unwrap();
        assert_eq!(
            args.join(" "),
            "-scheme App -configuration Release -destination generic/platform=iOS \
             -archivePath build/App.xcarchive archive"
        );
    }

    #[test]
    fn injection_is_refused() {
        for bad in [
            r#"{"scheme": "-showBuildSettings"}"#,
            r#"{"scheme": "App", "extra_args": ["-derivedDataPath", "/tmp"]}"#,
            r#"{"scheme": "App", "project": "../Other.xcodeproj"}"#,
            r#"{"scheme": "App", "destination": "platform=iOS Simulator,name=x,-quiet=1"}"#,
        ] {
            assert!(argv(&input(bad), Action::Build).is_err(), "{bad}");
        }
    }
}

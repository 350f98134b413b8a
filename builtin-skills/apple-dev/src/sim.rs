//! The simulator tools: `xcrun simctl …` with checked arguments.

use agent_skill_sdk::ToolError;
use serde::Deserialize;
use serde_json::Value;

use crate::{check, run};

/// `sim_list`'s input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    pub runtime: Option<String>,
    pub state: Option<String>,
}

/// A device by name or UDID (default: the booted one).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Device {
    pub device_name: Option<String>,
    pub device_udid: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstallInput {
    pub device_name: Option<String>,
    pub device_udid: Option<String>,
    pub app_path: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchInput {
    pub device_name: Option<String>,
    pub device_udid: Option<String>,
    pub bundle_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotInput {
    pub device_name: Option<String>,
    pub device_udid: Option<String>,
    pub output_path: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogInput {
    pub device_name: Option<String>,
    pub device_udid: Option<String>,
    pub predicate: Option<String>,
    pub last_minutes: Option<u32>,
}

/// The device argument simctl takes: a UDID, a name, or `booted`.
pub fn device(name: Option<&str>, udid: Option<&str>) -> Result<String, ToolError> {
    match (name, udid) {
        (Some(_), Some(_)) => Err(ToolError::invalid_input(
            "give either `device_name` or `device_udid`, not both",
        )),
        (None, Some(u)) => {
            check::udid(u)?;
            Ok(u.to_string())
        }
        (Some(n), None) => {
            check::name("device_name", n)?;
            Ok(n.to_string())
        }
        (None, None) => Ok("booted".to_string()),
    }
}

fn simctl(args: &[&str]) -> Vec<String> {
    std::iter::once("simctl")
        .chain(args.iter().copied())
        .map(str::to_string)
        .collect()
}

/// `iOS 18.0` from `com.apple.CoreSimulator.SimRuntime.iOS-18-0`.
pub fn runtime_name(key: &str) -> String {
    let short = key.rsplit('.').next().unwrap_or(key);
    match short.split_once('-') {
        Some((os, version)) => format!("{os} {}", version.replace('-', ".")),
        None => short.to_string(),
    }
}

/// One line per available device of `simctl list devices --json`.
pub fn summarize(json: &Value, input: &ListInput) -> String {
    let mut lines = Vec::new();
    if let Some(runtimes) = json["devices"].as_object() {
        for (key, devices) in runtimes {
            let runtime = runtime_name(key);
            if input.runtime.as_ref().is_some_and(|r| *r != runtime) {
                continue;
            }
            for d in devices.as_array().into_iter().flatten() {
                if d["isAvailable"] == false {
                    continue;
                }
                let state = d["state"].as_str().unwrap_or("?");
                if input.state.as_ref().is_some_and(|s| s != state) {
                    continue;
                }
                lines.push(format!(
                    "{} ({}) {state} — {runtime}",
                    d["name"].as_str().unwrap_or("?"),
                    d["udid"].as_str().unwrap_or("?")
                ));
            }
        }
    }
    if lines.is_empty() {
        return "no simulator matches".to_string();
    }
    lines.push(format!("{} simulator(s)", lines.len()));
    lines.join("\n")
}

pub fn list(input: ListInput) -> Result<String, ToolError> {
    let args = simctl(&["list", "devices", "--json"]);
    let out = run::plain("xcrun", args, None)?;
    let json: Value = serde_json::from_str(&out)
        .map_err(|e| ToolError::failed(format!("simctl printed no JSON: {e}")))?;
    Ok(summarize(&json, &input))
}

fn simple(action: &str, device: String, done: &str) -> Result<String, ToolError> {
    let args = simctl(&[action, &device]);
    let shown = run::shown("xcrun", &args);
    let out = run::plain("xcrun", args, None)?;
    Ok(format!("$ {shown}\n{done}\n{out}").trim_end().to_string())
}

pub fn boot(input: Device) -> Result<String, ToolError> {
    let d = device(input.device_name.as_deref(), input.device_udid.as_deref())?;
    simple("boot", d.clone(), &format!("booted {d}"))
}

pub fn shutdown(input: Device) -> Result<String, ToolError> {
    let d = device(input.device_name.as_deref(), input.device_udid.as_deref())?;
    simple("shutdown", d.clone(), &format!("shut down {d}"))
}

pub fn install(input: InstallInput) -> Result<String, ToolError> {
    let d = device(input.device_name.as_deref(), input.device_udid.as_deref())?;
    let app = check::project_path_with("app_path", &input.app_path, ".app")?;
    let args = simctl(&["install", &d, &app]);
    let shown = run::shown("xcrun", &args);
    run::plain("xcrun", args, None)?;
    Ok(format!("$ {shown}\ninstalled {app} on {d}"))
}

pub fn launch(input: LaunchInput) -> Result<String, ToolError> {
    let d = device(input.device_name.as_deref(), input.device_udid.as_deref())?;
    check::bundle_id(&input.bundle_id)?;
    let args = simctl(&["launch", &d, &input.bundle_id]);
    let shown = run::shown("xcrun", &args);
    let out = run::plain("xcrun", args, None)?;
    Ok(format!("$ {shown}\n{}", out.trim_end()))
}

pub fn screenshot(input: ScreenshotInput) -> Result<String, ToolError> {
    let d = device(input.device_name.as_deref(), input.device_udid.as_deref())?;
    let path = check::project_path_with(
        "output_path",
        input
            .output_path
            .as_deref()
            .unwrap_or("simulator-screenshot.png"),
        ".png",
    )?;
    let args = simctl(&["io", &d, "screenshot", &path]);
    let shown = run::shown("xcrun", &args);
    run::plain("xcrun", args, None)?;
    Ok(format!("$ {shown}\nsaved the screenshot to {path}"))
}

pub fn log(input: LogInput) -> Result<String, ToolError> {
    let d = device(input.device_name.as_deref(), input.device_udid.as_deref())?;
    let minutes = input.last_minutes.unwrap_or(5);
    if !(1..=1440).contains(&minutes) {
        return Err(ToolError::invalid_input(
            "last_minutes must be between 1 and 1440",
        ));
    }
    let last = format!("{minutes}m");
    let mut args = simctl(&[
        "spawn", &d, "log", "show", "--style", "compact", "--last", &last,
    ]);
    if let Some(p) = &input.predicate {
        check::not_a_flag("predicate", p)?;
        if p.chars().any(char::is_control) || p.trim().is_empty() {
            return Err(ToolError::invalid_input(
                "predicate is refused: it is empty or has control characters",
            ));
        }
        args.extend(["--predicate".to_string(), p.clone()]);
    }
    run::plain("xcrun", args, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_summarised_and_filtered() {
        let json: Value = serde_json::from_str(
            r#"{"devices": {
                "com.apple.CoreSimulator.SimRuntime.iOS-18-0": [
                    {"name": "iPhone 16", "udid": "5A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B", "state": "Booted", "isAvailable": true},
                    {"name": "iPhone 16 Pro", "udid": "6A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B", "state": "Shutdown", "isAvailable": true}
                ],
                "com.apple.CoreSimulator.SimRuntime.watchOS-11-0": [
                    {"name": "Apple Watch Series 10", "udid": "7A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B", "state": "Shutdown", "isAvailable": false}
                ]}}"#,
        )
        .unwrap();
        let booted = ListInput {
            runtime: Some("iOS 18.0".into()),
            state: Some("Booted".into()),
        };
        assert_eq!(
            summarize(&json, &booted),
            "iPhone 16 (5A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B) Booted — iOS 18.0\n1 simulator(s)"
        );
        assert!(device(Some("--set"), None).is_err());
        assert!(device(None, Some("booted; rm")).is_err());
    }
}

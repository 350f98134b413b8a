//! Every value that reaches a program's command line is checked here first:
//! nothing the model gives can start with `-` and become a flag, paths stay
//! inside the project, destinations follow xcodebuild's grammar.

use agent_skill_sdk::ToolError;

fn refuse(what: &str, value: &str, rule: &str) -> ToolError {
    ToolError::invalid_input(format!("{what} `{value}` is refused: {rule}"))
}

/// Refuses a value that would be read as an option.
pub fn not_a_flag(what: &str, value: &str) -> Result<(), ToolError> {
    if value.starts_with('-') {
        return Err(refuse(
            what,
            value,
            "it starts with `-` and would be read as an option",
        ));
    }
    Ok(())
}

fn no_control(what: &str, value: &str) -> Result<(), ToolError> {
    if value.chars().any(char::is_control) {
        return Err(refuse(what, value, "it contains control characters"));
    }
    Ok(())
}

/// A name (scheme, target, device): not empty, not a flag, no control
/// characters, at most 200 characters.
pub fn name(what: &str, value: &str) -> Result<(), ToolError> {
    if value.trim().is_empty() || value.len() > 200 {
        return Err(refuse(what, value, "it must be 1 to 200 characters"));
    }
    not_a_flag(what, value)?;
    no_control(what, value)?;
    if value.contains('/') {
        return Err(refuse(what, value, "a name has no `/`"));
    }
    Ok(())
}

/// A path inside the project, relative, `/`-separated: no absolute path, no
/// `..` component, not a flag. Returns it without `./` prefixes.
pub fn project_path(what: &str, value: &str) -> Result<String, ToolError> {
    if value.is_empty() {
        return Err(refuse(what, value, "it is empty"));
    }
    not_a_flag(what, value)?;
    no_control(what, value)?;
    if value.starts_with('/') || value.starts_with('~') || value.contains('\\') {
        return Err(refuse(
            what,
            value,
            "give a path relative to the project root (it must stay inside the project)",
        ));
    }
    let parts: Vec<&str> = value
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return Err(refuse(
            what,
            value,
            "`..` leaves the project (paths must stay inside it)",
        ));
    }
    if parts.is_empty() {
        return Ok(".".to_string());
    }
    Ok(parts.join("/"))
}

/// A path with a required extension (`.xcodeproj`, `.app`, …).
pub fn project_path_with(what: &str, value: &str, extension: &str) -> Result<String, ToolError> {
    let path = project_path(what, value)?;
    if !path.ends_with(extension) {
        return Err(refuse(
            what,
            value,
            &format!("expected a `{extension}` path"),
        ));
    }
    Ok(path)
}

const PLATFORMS: &[&str] = &[
    "iOS Simulator",
    "iOS",
    "macOS",
    "tvOS Simulator",
    "tvOS",
    "watchOS Simulator",
    "watchOS",
    "visionOS Simulator",
    "visionOS",
    "DriverKit",
];
const DESTINATION_KEYS: &[&str] = &["platform", "name", "OS", "id", "arch", "variant"];

/// An xcodebuild destination: `key=value` pairs separated by `,`, keys from
/// xcodebuild's set (`platform`, `name`, `OS`, `id`, `arch`, `variant`),
/// `platform` required and one of Apple's, e.g.
/// `platform=iOS Simulator,name=iPhone 16,OS=18.0`. `generic/platform=iOS`
/// is accepted too.
pub fn destination(value: &str) -> Result<(), ToolError> {
    let rule = "expected `platform=iOS Simulator,name=iPhone 16[,OS=18.0]` (keys platform, name, \
                OS, id, arch, variant; platform one of iOS Simulator, iOS, macOS, tvOS, watchOS, \
                visionOS and their simulators)";
    not_a_flag("destination", value)?;
    no_control("destination", value)?;
    let mut platform = None;
    for pair in value.split(',') {
        let Some((key, val)) = pair.split_once('=') else {
            return Err(refuse("destination", value, rule));
        };
        let key = key.strip_prefix("generic/").unwrap_or(key);
        if !DESTINATION_KEYS.contains(&key)
            || val.is_empty()
            || val.contains('=')
            || val.starts_with('-')
        {
            return Err(refuse("destination", value, rule));
        }
        if key == "OS" && !(val == "latest" || val.chars().all(|c| c.is_ascii_digit() || c == '.'))
        {
            return Err(refuse("destination", value, rule));
        }
        if key == "platform" {
            platform = Some(val);
        }
    }
    match platform {
        Some(p) if PLATFORMS.contains(&p) => Ok(()),
        _ => Err(refuse("destination", value, rule)),
    }
}

/// An `extra_args` entry of xcodebuild: a build setting `NAME=value` only
/// (`NAME` of letters, digits and `_`), never an option or an action.
pub fn build_setting(value: &str) -> Result<(), ToolError> {
    let rule = "only build settings `NAME=value` are accepted (e.g. CODE_SIGNING_ALLOWED=NO), \
                never options or actions";
    not_a_flag("extra_args entry", value)?;
    no_control("extra_args entry", value)?;
    match value.split_once('=') {
        Some((key, _))
            if !key.is_empty()
                && key.as_bytes()[0].is_ascii_alphabetic()
                && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
        {
            Ok(())
        }
        _ => Err(refuse("extra_args entry", value, rule)),
    }
}

/// A simulator UDID (`8-4-4-4-12` hexadecimal).
pub fn udid(value: &str) -> Result<(), ToolError> {
    let groups: Vec<&str> = value.split('-').collect();
    let ok = groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(())
    } else {
        Err(refuse(
            "device_udid",
            value,
            "expected a UDID such as 5A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B",
        ))
    }
}

/// A bundle identifier: reverse-DNS letters, digits, `-` and `.`.
pub fn bundle_id(value: &str) -> Result<(), ToolError> {
    let ok = !value.is_empty()
        && value.len() <= 255
        && value.as_bytes()[0].is_ascii_alphabetic()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(refuse(
            "bundle_id",
            value,
            "expected a bundle identifier such as com.example.MyApp",
        ))
    }
}

/// A team ID: ten upper-case letters or digits.
pub fn team_id(value: &str) -> Result<(), ToolError> {
    if value.len() == 10
        && value
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    {
        Ok(())
    } else {
        Err(refuse(
            "team_id",
            value,
            "expected ten upper-case letters or digits, e.g. ABCDE12345",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_escapes_are_refused() {
        assert!(name("scheme", "-quiet").is_err());
        assert!(name("scheme", "My App").is_ok());
        assert!(project_path("project", "../x.xcodeproj").is_err());
        assert!(project_path("project", "/etc/passwd").is_err());
        assert!(project_path("project", "a/../../b").is_err());
        assert_eq!(
            project_path("p", "./App/App.xcodeproj").unwrap(),
            "App/App.xcodeproj"
        );
        assert!(build_setting("-derivedDataPath").is_err());
        assert!(build_setting("archive").is_err());
        assert!(build_setting("CODE_SIGNING_ALLOWED=NO").is_ok());
    }

    #[test]
    fn destinations_follow_the_grammar() {
        assert!(destination("platform=iOS Simulator,name=iPhone 16").is_ok());
        assert!(destination("platform=iOS Simulator,name=iPhone 16,OS=18.0").is_ok());
        assert!(destination("generic/platform=iOS").is_ok());
        assert!(destination("platform=macOS,arch=arm64").is_ok());
        assert!(destination("name=iPhone 16").is_err());
        assert!(destination("platform=Android").is_err());
        assert!(destination("platform=iOS,name=x,-resultBundlePath=/tmp").is_err());
        assert!(destination("platform=iOS Simulator,OS=18; rm").is_err());
    }
}

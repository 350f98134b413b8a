//! Tools that read project files (no program runs): `xcode_parse_log` and
//! `xcode_project_info`.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};

use agent_skill_sdk::{ToolError, fs};
use serde::Deserialize;
use serde_json::json;

use crate::{check, run};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParseLogInput {
    pub path: String,
    #[serde(default)]
    pub junit: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectInfoInput {
    pub project: Option<String>,
}

/// `xcode_parse_log`: the log streamed through the parser (any size), or
/// xcresulttool JSON.
pub fn parse_log(input: ParseLogInput) -> Result<String, ToolError> {
    let rel = check::project_path("path", &input.path)?;
    let path = fs::project_path(&rel)?;
    let file = std::fs::File::open(&path).map_err(|e| fs::io_error(&e, &path, fs::Access::Read))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let starts_json = reader
        .fill_buf()
        .map_err(|e| fs::io_error(&e, &path, fs::Access::Read))?
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        == Some(&b'{');
    let options = run::options();
    let report = if starts_json {
        let mut text = String::new();
        reader
            .read_to_string(&mut text)
            .map_err(|e| fs::io_error(&e, &path, fs::Access::Read))?;
        xcode_log::xcresult::parse_xcresult(&text, options)
            .map_err(|e| ToolError::invalid_input(format!("{rel}: {e:?}")))?
    } else {
        xcode_log::parse_reader(reader, options)
            .map_err(|e| fs::io_error(&e, &path, fs::Access::Read))?
    };
    let mut answer = json!({ "path": rel });
    if let (Some(a), serde_json::Value::Object(p)) = (answer.as_object_mut(), run::parsed(&report))
    {
        a.extend(p);
    }
    if input.junit {
        answer["junit"] = json!(xcode_log::junit::junit(&rel, &report.tests));
    }
    serde_json::to_string_pretty(&answer).map_err(|e| ToolError::failed(e.to_string()))
}

/// What a `.pbxproj` declares: native targets (with product type) and
/// build configuration names.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Pbxproj {
    pub targets: Vec<(String, String)>,
    pub configurations: BTreeSet<String>,
}

fn section<'a>(text: &'a str, isa: &str) -> &'a str {
    let begin = format!("/* Begin {isa} section */");
    let end = format!("/* End {isa} section */");
    text.find(&begin)
        .and_then(|b| {
            let rest = &text[b + begin.len()..];
            rest.find(&end).map(|e| &rest[..e])
        })
        .unwrap_or("")
}

fn value_of<'a>(object: &'a str, key: &str) -> Option<&'a str> {
    let prefix = format!("{key} = ");
    object.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix(prefix.as_str())?;
        let end = rest.rfind(';')?;
        Some(rest[..end].trim().trim_matches('"'))
    })
}

/// Parses the old-style property list of a `project.pbxproj` far enough for
/// targets and configurations (objects are `ID /* name */ = { … };`).
pub fn parse_pbxproj(text: &str) -> Pbxproj {
    let mut out = Pbxproj::default();
    for object in section(text, "PBXNativeTarget").split("};") {
        if let Some(name) = value_of(object, "name") {
            let kind = value_of(object, "productType")
                .unwrap_or("")
                .trim_start_matches("com.apple.product-type.")
                .to_string();
            out.targets.push((name.to_string(), kind));
        }
    }
    for object in section(text, "XCBuildConfiguration").split("};") {
        if let Some(name) = value_of(object, "name") {
            out.configurations.insert(name.to_string());
        }
    }
    out
}

fn find_project() -> Result<String, ToolError> {
    let root = fs::project_root()?;
    let mut found: Vec<String> = std::fs::read_dir(&root)
        .map_err(|e| fs::io_error(&e, &root, fs::Access::Read))?
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".xcodeproj"))
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(ToolError::not_found(
            "no .xcodeproj at the project root: give `project`",
        )),
        _ => Err(ToolError::invalid_input(format!(
            "several projects at the root ({}): give `project`",
            found.join(", ")
        ))),
    }
}

/// The host's platform as it tells every call (`AGENT_HOST_PLATFORM`).
pub fn on_macos() -> bool {
    std::env::var("AGENT_HOST_PLATFORM").is_ok_and(|p| p == "darwin")
}

/// `xcode_project_info`: on macOS what `xcodebuild -list -json` says
/// (schemes Xcode would create included); elsewhere targets and
/// configurations from the `.pbxproj`, schemes from
/// `xcshareddata/xcschemes` (and the user's own schemes).
pub fn project_info(input: ProjectInfoInput) -> Result<String, ToolError> {
    if on_macos() {
        return xcodebuild_list(input.project.as_deref());
    }
    let project = match &input.project {
        Some(p) => check::project_path_with("project", p, ".xcodeproj")?,
        None => find_project()?,
    };
    let pbx = fs::read_to_string(&format!("{project}/project.pbxproj"))?;
    let parsed = parse_pbxproj(&pbx);
    let mut schemes = BTreeSet::new();
    let mut dirs = vec![fs::project_path(&format!(
        "{project}/xcshareddata/xcschemes"
    ))?];
    if let Ok(users) = std::fs::read_dir(fs::project_path(&format!("{project}/xcuserdata"))?) {
        dirs.extend(
            users
                .filter_map(Result::ok)
                .map(|u| u.path().join("xcschemes")),
        );
    }
    for dir in dirs {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            if let Some(name) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".xcscheme"))
            {
                schemes.insert(name.to_string());
            }
        }
    }
    let autocreated = schemes.is_empty();
    if autocreated {
        // Without saved schemes Xcode creates one per target.
        schemes.extend(parsed.targets.iter().map(|(n, _)| n.clone()));
    }
    let answer = json!({
        "project": project,
        "targets": parsed.targets.iter().map(|(n, k)| json!({"name": n, "type": k})).collect::<Vec<_>>(),
        "configurations": parsed.configurations,
        "schemes": schemes,
        "schemes_autocreated": autocreated,
        "source": "project.pbxproj and xcschemes",
    });
    serde_json::to_string_pretty(&answer).map_err(|e| ToolError::failed(e.to_string()))
}

/// `xcodebuild -list -json [-project P]`, its JSON answered with the source.
fn xcodebuild_list(project: Option<&str>) -> Result<String, ToolError> {
    let mut args = vec!["-list".to_string(), "-json".to_string()];
    if let Some(p) = project {
        args.extend([
            "-project".to_string(),
            check::project_path_with("project", p, ".xcodeproj")?,
        ]);
    }
    let out = run::plain("xcodebuild", args, None)?;
    let listed: serde_json::Value = serde_json::from_str(&out)
        .map_err(|e| ToolError::failed(format!("xcodebuild -list -json printed no JSON: {e}")))?;
    let p = &listed["project"];
    let answer = json!({
        "project": p["name"],
        "targets": p["targets"],
        "configurations": p["configurations"],
        "schemes": p["schemes"],
        "source": "xcodebuild -list -json",
    });
    serde_json::to_string_pretty(&answer).map_err(|e| ToolError::failed(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_configurations_come_from_the_pbxproj() {
        let text = r#"
/* Begin PBXNativeTarget section */
		8D1107260486CEB800E47090 /* Demo */ = {
			isa = PBXNativeTarget;
			buildConfigurationList = C01FCF4A08A954540054247B /* Build configuration list for PBXNativeTarget "Demo" */;
			name = Demo;
			productName = Demo;
			productType = "com.apple.product-type.application";
		};
		8D1107260486CEB800E47091 /* DemoTests */ = {
			isa = PBXNativeTarget;
			name = DemoTests;
			productType = "com.apple.product-type.bundle.unit-test";
		};
/* End PBXNativeTarget section */
/* Begin XCBuildConfiguration section */
		C01FCF4B08A954540054247B /* Debug */ = {
			isa = XCBuildConfiguration;
			buildSettings = {
				PRODUCT_NAME = Demo;
			};
			name = Debug;
		};
		C01FCF4C08A954540054247B /* Release */ = {
			isa = XCBuildConfiguration;
			name = Release;
		};
/* End XCBuildConfiguration section */
"#;
        let p = parse_pbxproj(text);
        assert_eq!(
            p.targets,
            [
                ("Demo".to_string(), "application".to_string()),
                ("DemoTests".to_string(), "bundle.unit-test".to_string())
            ]
        );
        assert_eq!(
            p.configurations.into_iter().collect::<Vec<_>>(),
            ["Debug", "Release"]
        );
    }
}

//! Per-tool platform gating (`tools[].platforms`).
//!
//! A tool that names platforms (e.g. apple-dev's `xcode_build` with
//! `platforms: [darwin]`) runs only there: elsewhere the host does not offer
//! it to the model, and a direct call answers [`refusal`]'s one sentence
//! instead of instantiating the component. The rule lives here, once; the
//! tool list (`agent_core::collect_tools`) and the runtime's `call_tool`
//! both ask [`runs_here`].
//!
//! Test-only: in a debug build, `AGENT_TEST_PLATFORM=darwin|linux|windows`
//! stands in for the machine's platform, so the test suite can exercise the
//! macOS path on Linux with fake programs. A release build ignores it.

use crate::{Manifest, Platform, ToolDecl};

/// The variable a debug build reads in place of the machine's platform.
pub const TEST_PLATFORM_VAR: &str = "AGENT_TEST_PLATFORM";

/// The variable every call's guest environment holds: [`host_platform`]'s
/// manifest spelling (`darwin`, `linux`, `windows`), so that a tool offered
/// everywhere can choose its way (apple-dev's `xcode_project_info`).
pub const GUEST_PLATFORM_ENV: &str = "AGENT_HOST_PLATFORM";

/// The platform tools are gated against: the machine's, or in a debug build
/// [`TEST_PLATFORM_VAR`]'s when set to a platform name.
pub fn host_platform() -> Option<Platform> {
    #[cfg(debug_assertions)]
    if let Some(p) = std::env::var(TEST_PLATFORM_VAR)
        .ok()
        .and_then(|v| Platform::from_os(&v))
    {
        return Some(p);
    }
    Platform::current()
}

/// Whether `tool` runs on `host`: it names no platform, or names `host`.
pub fn runs_here(tool: &ToolDecl, host: Option<Platform>) -> bool {
    tool.platforms.is_empty() || host.is_some_and(|h| tool.platforms.contains(&h))
}

fn platform_name(p: Platform) -> &'static str {
    match p {
        Platform::Darwin => "macOS",
        Platform::Linux => "Linux",
        Platform::Windows => "Windows",
    }
}

/// The one sentence a call of `tool` answers on a platform it does not run
/// on: what it needs, and which of the skill's tools work here. `None` when
/// the tool runs here (or the manifest does not declare it).
pub fn refusal(manifest: &Manifest, tool: &str, host: Option<Platform>) -> Option<String> {
    let decl = manifest.tool(tool)?;
    if runs_here(decl, host) {
        return None;
    }
    let needs = decl
        .platforms
        .iter()
        .map(|p| platform_name(*p))
        .collect::<Vec<_>>()
        .join(" or ");
    let here = host.map_or("this platform", platform_name);
    let working: Vec<&str> = manifest
        .tools
        .iter()
        .filter(|t| runs_here(t, host))
        .map(|t| t.name.as_str())
        .collect();
    let still = if working.is_empty() {
        format!("none of {}'s tools run on {here}", manifest.name)
    } else {
        format!("on {here} {} offers {}", manifest.name, working.join(", "))
    };
    Some(format!(
        "`{tool}` needs {needs} ({}), so it is not available on {here}; {still}.",
        decl.description.trim_end_matches('.')
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest::parse(
            "name: apple\nversion: 1.0.0\ndescription: d\ntypes: [tool]\n\
             implementation:\n  component: a.wasm\n\
             tools:\n  - name: xcode_build\n    description: \"Build with xcodebuild (Xcode)\"\n    platforms: [darwin]\n\
             \x20 - name: swift_build\n    description: Build a Swift package\n",
            std::path::Path::new("SKILL.yaml"),
        )
        .expect("manifest")
    }

    #[test]
    fn a_darwin_only_tool_is_refused_elsewhere_with_what_still_works() {
        let m = manifest();
        assert_eq!(m.tool("xcode_build").unwrap().platforms, [Platform::Darwin]);
        assert_eq!(refusal(&m, "xcode_build", Some(Platform::Darwin)), None);
        assert_eq!(refusal(&m, "swift_build", Some(Platform::Linux)), None);
        assert_eq!(
            refusal(&m, "xcode_build", Some(Platform::Linux)).as_deref(),
            Some(
                "`xcode_build` needs macOS (Build with xcodebuild (Xcode)), so it is not \
                 available on Linux; on Linux apple offers swift_build."
            )
        );
    }

    #[test]
    fn an_unknown_platform_is_refused_with_the_valid_ones() {
        let err = Manifest::parse(
            "name: apple\nversion: 1.0.0\ndescription: d\ntypes: [tool]\n\
             implementation:\n  component: a.wasm\n\
             tools:\n  - name: xcode_build\n    description: d\n    platforms: [macos]\n",
            std::path::Path::new("SKILL.yaml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("tools[0].platforms[0]"), "{err}");
        assert!(err.contains("darwin"), "{err}");
    }
}

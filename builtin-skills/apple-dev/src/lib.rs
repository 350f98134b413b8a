//! `apple-dev`: the built-in Apple development skill (spec §4.11, FR-6).
//!
//! - Tools (`tool` export): xcodebuild (`xcode_build`, `xcode_test`,
//!   `xcode_archive`, `xcode_clean`), simulators (`sim_*`), SwiftPM
//!   (`swift_build`, `swift_test`, `swift_resolve`, `swift_add_dep`), code
//!   signing (`codesign_info`, `codesign_verify`), an allowlisted `xcrun`,
//!   and two offered everywhere that read files (`xcode_project_info`,
//!   which on macOS asks `xcodebuild -list -json` instead, and
//!   `xcode_parse_log`). Programs run only through the host's `exec`
//!   import, as argument vectors; [`check`] refuses every value that could
//!   become an option, leave the project, or is not a valid destination.
//!   Build and test output goes through the `xcode-log` parser.
//! - Prompt (`prompt` export): Apple platform guidance ([`prompt`]).
//!
//! Platform gating is the host's: the manifest names `platforms: [darwin]`
//! on the tools that need Xcode, and elsewhere the host neither offers nor
//! runs them.

pub mod check;
pub mod codesign;
pub mod inspect;
pub mod package;
pub mod prompt;
pub mod run;
pub mod sim;
pub mod swift;
pub mod xcode;

use agent_skill_sdk::{Tool, Toolbox};

/// Every tool, with the manifest's names, descriptions and schemas.
pub fn tools() -> Toolbox {
    Toolbox::new()
        .tool("xcode_build", "Build an Xcode project or workspace with xcodebuild (needs Xcode); returns the parsed errors and warnings", include_str!("../schemas/xcodebuild.json"), xcode::build)
        .tool("xcode_test", "Run an Xcode scheme's tests with xcodebuild (needs Xcode); returns test results and failures", include_str!("../schemas/xcodebuild.json"), xcode::test)
        .add_tool(Tool::new("xcode_archive", "Archive a scheme for distribution with xcodebuild (needs Xcode and code signing)", include_str!("../schemas/xcodebuild.json"), xcode::archive).requires_approval(true))
        .tool("xcode_clean", "Clean a scheme's build products with xcodebuild (needs Xcode)", include_str!("../schemas/xcodebuild.json"), xcode::clean)
        .tool("xcode_project_info", "Targets, schemes and build configurations of an Xcode project (xcodebuild -list -json on macOS, its .pbxproj and scheme files elsewhere)", include_str!("../schemas/xcode_project_info.json"), inspect::project_info)
        .tool("xcode_parse_log", "Parse an xcodebuild or swift build/test log (or xcresulttool JSON) into errors, warnings and test results", include_str!("../schemas/xcode_parse_log.json"), inspect::parse_log)
        .tool("sim_list", "List iOS/watchOS/tvOS simulators and their states (xcrun simctl, needs Xcode)", include_str!("../schemas/sim_list.json"), sim::list)
        .tool("sim_boot", "Boot a simulator by name or UDID (xcrun simctl, needs Xcode)", include_str!("../schemas/sim_device.json"), sim::boot)
        .tool("sim_shutdown", "Shut a simulator down by name or UDID (xcrun simctl, needs Xcode)", include_str!("../schemas/sim_device.json"), sim::shutdown)
        .tool("sim_install", "Install an .app bundle on a booted simulator (xcrun simctl, needs Xcode)", include_str!("../schemas/sim_install.json"), sim::install)
        .tool("sim_launch", "Launch an app by bundle identifier on a booted simulator (xcrun simctl, needs Xcode)", include_str!("../schemas/sim_launch.json"), sim::launch)
        .tool("sim_screenshot", "Save a PNG screenshot of a booted simulator into the project (xcrun simctl, needs Xcode)", include_str!("../schemas/sim_screenshot.json"), sim::screenshot)
        .tool("sim_log", "Recent log messages of a simulator, optionally filtered by an NSPredicate (xcrun simctl spawn log show, needs Xcode)", include_str!("../schemas/sim_log.json"), sim::log)
        .tool("swift_build", "Build a Swift package with swift build (macOS and Linux); returns the parsed errors and warnings", include_str!("../schemas/swift_build.json"), swift::build)
        .tool("swift_test", "Run a Swift package's tests with swift test (macOS and Linux); returns test results and failures", include_str!("../schemas/swift_build.json"), swift::test)
        .tool("swift_resolve", "Resolve a Swift package's dependencies with swift package resolve (macOS and Linux)", include_str!("../schemas/swift_resolve.json"), swift::resolve)
        .add_tool(Tool::new("swift_add_dep", "Add a package dependency to Package.swift (shows the diff)", include_str!("../schemas/swift_add_dep.json"), package::add_dep).requires_approval(true))
        .tool("codesign_info", "Code-signing identities, provisioning profiles, or an app's entitlements (security, codesign; needs macOS)", include_str!("../schemas/codesign_info.json"), codesign::info)
        .tool("codesign_verify", "Verify the code signature of a built .app bundle (codesign --verify; needs macOS)", include_str!("../schemas/codesign_verify.json"), codesign::verify)
        .tool("xcrun", "Run an allowlisted Xcode developer tool through xcrun (simctl, xcresulttool, …; needs Xcode)", include_str!("../schemas/xcrun.json"), codesign::xcrun)
}

agent_skill_sdk::export_tools!(tools);
use prompt::Prompt;
agent_skill_sdk::wit::prompt_skill::export!(Prompt);

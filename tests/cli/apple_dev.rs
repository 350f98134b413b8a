//! The built-in `apple-dev` skill (issue 19, items 1, 2, 3, 6) through the
//! real binary: fake `xcodebuild`, `xcrun`, `swift`, `codesign` and
//! `security` first on PATH record their argument vectors and replay
//! real-format output (the xcode-log parser's fixtures: Xcode 15/16 and
//! Swift 5.10/6 logs, colour codes included). Checked: the exact argv, the
//! parsed answer, the refusal without a grant, flag injection refused before
//! anything runs, the platform gating off macOS (one sentence; the SwiftPM
//! tools still work) and, with the debug-only `AGENT_TEST_PLATFORM=darwin`,
//! the macOS path; in `agent run`, activation by trigger, the prompt
//! fragments and the tools in the model's request, the parsed build errors
//! in the tool result, and approval for `xcode_archive`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use agent_tests::model_server::{Wire, jsonl};
use agent_tests::{Sandbox, text, workspace, write_executable};
use serde_json::{Value, json};

use super::example_kubernetes::{Model, model_args};
use super::skills::system;
use super::{code, ok, sandbox, write};

/// The programs apple-dev may run; each gets a fake.
const PROGRAMS: &[&str] = &[
    "xcodebuild",
    "xcrun",
    "swift",
    "codesign",
    "security",
    "plutil",
];

/// A file outside the project: a package checkout DerivedData compiles.
const DERIVED_DATA_FILE: &str = "/Users/dev/Library/Developer/Xcode/DerivedData/Demo-fgzbrdqgmhtsyhbkcbqjmxbiwpwq/SourcePackages/checkouts/swift-collections/Sources/DequeModule/Deque.swift";

/// A warning in that file, as swift-frontend prints it during the build.
const DERIVED_DATA_WARNING: &str = "/Users/dev/Library/Developer/Xcode/DerivedData/Demo-fgzbrdqgmhtsyhbkcbqjmxbiwpwq/SourcePackages/checkouts/swift-collections/Sources/DequeModule/Deque.swift:88:10: warning: 'withUnsafeMutableBufferPointer' is deprecated: renamed to 'withContiguousMutableStorageIfAvailable'\n";

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        workspace()
            .join("builtin-skills/xcode-log/tests/data")
            .join(name),
    )
    .expect("fixture")
}

/// A sandbox with fake Apple programs in `bin/`: each appends
/// `name [arg] [arg]…` to `calls.log` and prints `bin/<name>.out` (stdout),
/// `bin/<name>.err` (stderr), exiting with `bin/<name>.code` (default 0).
struct Apple {
    sb: Sandbox,
    bin: tempfile::TempDir,
    /// `Some("darwin")`: the debug build's stand-in for macOS.
    platform: Option<&'static str>,
}

impl Apple {
    fn new(platform: Option<&'static str>) -> Apple {
        let sb = sandbox();
        let bin = tempfile::tempdir().expect("bin");
        for program in PROGRAMS {
            let script = format!(
                r#"#!/bin/sh
# A fake {program}: records its argument vector, replays real-format output.
d='{dir}'
{{ printf '%s' '{program}'; for a in "$@"; do printf ' [%s]' "$a"; done; echo; }} >> "$d/calls.log"
[ -f "$d/{program}.out" ] && cat "$d/{program}.out"
[ -f "$d/{program}.err" ] && cat "$d/{program}.err" >&2
exit "$(cat "$d/{program}.code" 2>/dev/null || echo 0)"
"#,
                dir = bin.path().display()
            );
            let path = bin.path().join(program);
            write_executable(&path, &script);
        }
        Apple { sb, bin, platform }
    }

    /// What `program` prints and its exit code, for the next calls.
    fn replay(&self, program: &str, stdout: &str, stderr: &str, exit: i32) {
        write(self.bin.path(), &format!("{program}.out"), stdout);
        write(self.bin.path(), &format!("{program}.err"), stderr);
        write(
            self.bin.path(),
            &format!("{program}.code"),
            &exit.to_string(),
        );
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![self.bin.path().to_path_buf()];
        dirs.extend(std::env::split_paths(&path));
        let mut cmd = self.sb.agent_cmd(args);
        cmd.env("PATH", std::env::join_paths(dirs).expect("PATH"));
        match self.platform {
            Some(p) => cmd.env("AGENT_TEST_PLATFORM", p),
            None => cmd.env_remove("AGENT_TEST_PLATFORM"),
        };
        cmd
    }

    /// `agent skill call apple-dev TOOL --input INPUT [extra…]`.
    fn call(&self, tool: &str, input: &Value, extra: &[&str]) -> Output {
        let input = input.to_string();
        let mut args = vec!["skill", "call", "apple-dev", tool, "--input", &input];
        args.extend_from_slice(extra);
        self.cmd(&args).output().expect("running agent")
    }

    /// The argument vectors run so far.
    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.bin.path().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

fn answer(out: &Output) -> Value {
    serde_json::from_str(&ok(out)).unwrap_or_else(|e| panic!("not JSON ({e}): {:?}", text(out)))
}

const XCODEBUILD: [&str; 2] = ["--allow", "shell:exec:xcodebuild"];

/// The gating sentence on this Linux host.
const OFF_MACOS: &str = "error: apple-dev.xcode_build failed: `xcode_build` needs macOS (Build \
    an Xcode project or workspace with xcodebuild (needs Xcode); returns the parsed errors and \
    warnings), so it is not available on Linux; on Linux apple-dev offers xcode_project_info, \
    xcode_parse_log, swift_build, swift_test, swift_resolve, swift_add_dep.\n";

#[test]
fn apple_dev_off_macos_answers_one_sentence_and_swift_tools_still_work() {
    let a = Apple::new(None);
    a.replay("xcodebuild", "** BUILD SUCCEEDED **\n", "", 0);

    // Xcode tools: one sentence, exit 1, and xcodebuild never ran, even granted.
    let out = a.call("xcode_build", &json!({"scheme": "Demo"}), &XCODEBUILD);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert_eq!(text(&out).1, OFF_MACOS);
    let out = a.call("sim_list", &json!({}), &["--allow", "shell:exec:xcrun"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .starts_with("error: apple-dev.sim_list failed: `sim_list` needs macOS"),
        "{:?}",
        text(&out)
    );
    assert!(a.calls().is_empty(), "{:?}", a.calls());

    // swift_build runs the (fake) swift and answers its parsed log.
    a.replay("swift", &fixture("swift-build-failed.log"), "", 1);
    let out = a.call(
        "swift_build",
        &json!({"configuration": "release", "target": "DemoKit"}),
        &["--allow", "shell:exec:swift"],
    );
    let v = answer(&out);
    assert_eq!(
        a.calls(),
        ["swift [build] [-c] [release] [--target] [DemoKit]"]
    );
    assert_eq!(v["command"], "swift build -c release --target DemoKit");
    assert_eq!(v["exit_code"], 1);
    assert_eq!(v["succeeded"], false);
    assert_eq!(v["summary"]["build"], "failed", "{v:#}");
    let first = &v["findings"][0];
    assert_eq!(
        first["location"]["file"], "/home/dev/DemoKit/Sources/DemoKit/Formatter.swift",
        "{v:#}"
    );
    assert_eq!(first["location"]["start_line"], 12, "{v:#}");
    assert!(
        first["title"]
            .as_str()
            .unwrap_or_default()
            .contains("cannot convert value of type 'Int' to expected argument type 'String'"),
        "{first:#}"
    );

    // swift_test: Swift Testing and XCTest results on Linux.
    a.replay("swift", &fixture("swift-test-linux.log"), "", 1);
    let out = a.call("swift_test", &json!({}), &["--allow", "shell:exec:swift"]);
    let v = answer(&out);
    assert_eq!(a.calls().last().map(String::as_str), Some("swift [test]"));
    assert!(v["summary"]["tests_failed"].as_u64() >= Some(1), "{v:#}");
    assert!(
        !v["failed_tests"].as_array().expect("failed").is_empty(),
        "{v:#}"
    );

    // Flag injection: refused before swift runs.
    let before = a.calls().len();
    let out = a.call(
        "swift_build",
        &json!({"target": "--disable-sandbox"}),
        &["--allow", "shell:exec:swift"],
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains(
            "target `--disable-sandbox` is refused: it starts with `-` and would be read as an option"
        ),
        "{:?}",
        text(&out)
    );
    assert_eq!(a.calls().len(), before);
}

#[test]
fn swift_tools_without_swift_say_how_to_install_it() {
    let a = Apple::new(None);
    let empty = tempfile::tempdir().expect("empty PATH");
    let out =
        a.sb.agent_cmd(&[
            "skill",
            "call",
            "apple-dev",
            "swift_build",
            "--input",
            "{}",
            "--allow",
            "shell:exec:swift",
        ])
        .env("PATH", empty.path())
        .output()
        .expect("agent");
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains(
            "swift is not installed (or not on PATH): install a Swift toolchain from https://www.swift.org/install/"
        ),
        "{:?}",
        text(&out)
    );
}

#[test]
fn xcode_tools_on_macos_run_xcodebuild_with_checked_arguments() {
    let a = Apple::new(Some("darwin"));
    let p = a.sb.project.path().to_path_buf();
    // The log names files under the project, as a real build there would,
    // and one outside it: a package checkout compiled in DerivedData.
    let log = fixture("xcodebuild-build-failed.log")
        .replace("/Users/dev/Demo", &p.display().to_string())
        + DERIVED_DATA_WARNING;
    a.replay("xcodebuild", &log, "", 65);
    let input = json!({
        "project": "Demo.xcodeproj",
        "scheme": "Demo",
        "destination": "platform=iOS Simulator,name=iPhone 16,OS=18.0",
        "extra_args": ["CODE_SIGNING_ALLOWED=NO"]
    });

    // Without the grant: denied (exit 4), nothing ran.
    let out = a.call("xcode_build", &input, &[]);
    assert_eq!(code(&out), 4, "{:?}", text(&out));
    assert!(text(&out).1.contains("shell:exec"), "{:?}", text(&out));
    assert!(a.calls().is_empty(), "{:?}", a.calls());

    // Granted: the exact argv, and the parsed errors (colour codes gone).
    let v = answer(&a.call("xcode_build", &input, &XCODEBUILD));
    assert_eq!(
        a.calls(),
        [
            "xcodebuild [-project] [Demo.xcodeproj] [-scheme] [Demo] [-configuration] [Debug] \
          [-destination] [platform=iOS Simulator,name=iPhone 16,OS=18.0] \
          [CODE_SIGNING_ALLOWED=NO] [build]"
        ]
    );
    assert_eq!(v["exit_code"], 65);
    assert_eq!(v["summary"]["build"], "failed", "{v:#}");
    let findings = v["findings"].as_array().expect("findings");
    // Paths inside the project are project-relative (the host tells the
    // guest the project's path although the tool has no mount); paths
    // outside it (DerivedData, SDK headers) stay as the build printed them.
    let view = findings
        .iter()
        .find(|f| f["location"]["file"] == "Demo/ContentView.swift")
        .unwrap_or_else(|| panic!("no ContentView.swift finding: {v:#}"));
    assert_eq!(view["location"]["start_line"], 14);
    assert_eq!(view["location"]["start_column"], 13);
    assert!(
        findings
            .iter()
            .any(|f| f["location"]["file"] == "Demo.xcodeproj"),
        "the project-level warning: {v:#}"
    );
    let files: Vec<&str> = findings
        .iter()
        .filter_map(|f| f["location"]["file"].as_str())
        .collect();
    assert!(
        files.contains(&DERIVED_DATA_FILE),
        "outside the project: kept absolute: {files:?}"
    );
    let root = p.display().to_string();
    assert!(
        !files.iter().any(|f| f.starts_with(&root)),
        "no absolute path inside the project is left: {files:?}"
    );
    assert!(
        !v.to_string().contains("\\u001b["),
        "colour codes left: {v:#}"
    );

    // Injection and escapes: refused, xcodebuild not run.
    for (bad, why) in [
        (
            json!({"scheme": "-showBuildSettings"}),
            "scheme `-showBuildSettings` is refused",
        ),
        (
            json!({"scheme": "Demo", "extra_args": ["-derivedDataPath", "/tmp/x"]}),
            "extra_args entry `-derivedDataPath` is refused",
        ),
        (
            json!({"scheme": "Demo", "project": "../Other/Other.xcodeproj"}),
            "project `../Other/Other.xcodeproj` is refused: `..` leaves the project",
        ),
        (
            json!({"scheme": "Demo", "destination": "platform=iOS Simulator,name=x,-quiet=1"}),
            "destination `platform=iOS Simulator,name=x,-quiet=1` is refused",
        ),
    ] {
        let out = a.call("xcode_build", &bad, &XCODEBUILD);
        assert_eq!(code(&out), 1, "{bad}: {:?}", text(&out));
        assert!(text(&out).1.contains(why), "{bad}: {:?}", text(&out));
    }
    assert_eq!(a.calls().len(), 1, "{:?}", a.calls());

    // xcode_test: XCTest results with the failure's location (relative).
    let log = fixture("xcodebuild-xctest.log").replace("/Users/dev/Demo", &p.display().to_string());
    a.replay("xcodebuild", &log, "", 65);
    let v = answer(&a.call("xcode_test", &json!({"scheme": "Demo"}), &XCODEBUILD));
    assert_eq!(
        a.calls().last().map(String::as_str),
        Some(
            "xcodebuild [-scheme] [Demo] [-configuration] [Debug] [-destination] \
             [platform=iOS Simulator,name=iPhone 16] [test]"
        )
    );
    assert_eq!(v["summary"]["tests_failed"], 1, "{v:#}");
    assert_eq!(v["summary"]["tests_skipped"], 1, "{v:#}");
    assert_eq!(v["failed_tests"].as_array().map(Vec::len), Some(1), "{v:#}");
    assert_eq!(
        v["failed_tests"][0]["failures"][0]["file"], "DemoTests/DemoTests.swift",
        "{v:#}"
    );
    assert!(
        v["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["location"]["file"] == "DemoTests/DemoTests.swift"),
        "{v:#}"
    );

    // xcode_clean: no destination.
    a.replay("xcodebuild", "** CLEAN SUCCEEDED **\n", "", 0);
    let v = answer(&a.call(
        "xcode_clean",
        &json!({"workspace": "Demo.xcworkspace", "scheme": "Demo"}),
        &XCODEBUILD,
    ));
    assert_eq!(
        a.calls().last().map(String::as_str),
        Some(
            "xcodebuild [-workspace] [Demo.xcworkspace] [-scheme] [Demo] [-configuration] [Debug] [clean]"
        )
    );
    assert_eq!(v["summary"]["build"], "succeeded", "{v:#}");
}

#[test]
fn simulator_codesign_and_xcrun_tools_on_macos() {
    let a = Apple::new(Some("darwin"));
    let xcrun = ["--allow", "shell:exec:xcrun"];
    a.replay(
        "xcrun",
        r#"{
  "devices" : {
    "com.apple.CoreSimulator.SimRuntime.iOS-18-0" : [
      {
        "lastBootedAt" : "2026-11-20T09:12:44Z",
        "dataPath" : "/Users/dev/Library/Developer/CoreSimulator/Devices/5A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B/data",
        "logPath" : "/Users/dev/Library/Logs/CoreSimulator/5A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B",
        "udid" : "5A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B",
        "isAvailable" : true,
        "deviceTypeIdentifier" : "com.apple.CoreSimulator.SimDeviceType.iPhone-16",
        "state" : "Booted",
        "name" : "iPhone 16"
      },
      {
        "udid" : "9F0E1D2C-3B4A-4958-8776-655443322110",
        "isAvailable" : true,
        "deviceTypeIdentifier" : "com.apple.CoreSimulator.SimDeviceType.iPhone-16-Pro",
        "state" : "Shutdown",
        "name" : "iPhone 16 Pro"
      }
    ]
  }
}
"#,
        "",
        0,
    );
    let out = a.call("sim_list", &json!({"state": "Booted"}), &xcrun);
    assert_eq!(
        ok(&out),
        "iPhone 16 (5A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B) Booted — iOS 18.0\n1 simulator(s)\n"
    );
    assert_eq!(a.calls(), ["xcrun [simctl] [list] [devices] [--json]"]);

    a.replay("xcrun", "com.example.Demo: 4242\n", "", 0);
    let out = a.call(
        "sim_launch",
        &json!({"device_name": "iPhone 16", "bundle_id": "com.example.Demo"}),
        &xcrun,
    );
    ok(&out);
    assert_eq!(
        a.calls().last().map(String::as_str),
        Some("xcrun [simctl] [launch] [iPhone 16] [com.example.Demo]")
    );
    // A device "name" that is an option, an install path outside the project,
    // an xcrun tool off the allowlist: refused, nothing more ran.
    let before = a.calls().len();
    for (tool, input, why) in [
        (
            "sim_boot",
            json!({"device_name": "--set"}),
            "device_name `--set` is refused",
        ),
        (
            "sim_install",
            json!({"app_path": "/tmp/Evil.app"}),
            "app_path `/tmp/Evil.app` is refused",
        ),
        (
            "xcrun",
            json!({"tool": "notarytool", "args": ["submit"]}),
            "xcrun tool `notarytool` is refused",
        ),
        (
            "xcrun",
            json!({"tool": "simctl", "args": ["spawn", "booted", "sh"]}),
            "simctl subcommand `spawn` is refused",
        ),
    ] {
        let out = a.call(tool, &input, &xcrun);
        assert_eq!(code(&out), 1, "{tool}: {:?}", text(&out));
        assert!(text(&out).1.contains(why), "{tool}: {:?}", text(&out));
    }
    assert_eq!(a.calls().len(), before);

    // codesign_verify reads codesign's verdict from its stderr.
    a.replay(
        "codesign",
        "",
        "build/Demo.app: valid on disk\nbuild/Demo.app: satisfies its Designated Requirement\n",
        0,
    );
    let out = a.call(
        "codesign_verify",
        &json!({"app_path": "build/Demo.app"}),
        &["--allow", "shell:exec:codesign"],
    );
    assert_eq!(
        ok(&out),
        "$ codesign --verify --deep --strict --verbose=2 build/Demo.app\n\
         the signature of build/Demo.app is valid\n\
         build/Demo.app: valid on disk\n\
         build/Demo.app: satisfies its Designated Requirement\n"
    );
    a.replay(
        "security",
        "  1) 0123456789ABCDEF0123456789ABCDEF01234567 \"Apple Development: Dev Example (ABCDE12345)\"\n  2) 89ABCDEF0123456789ABCDEF0123456789ABCDEF \"Apple Development: Other (ZZZZZ99999)\"\n     2 valid identities found\n",
        "",
        0,
    );
    let out = a.call(
        "codesign_info",
        &json!({"query": "identities", "team_id": "ABCDE12345"}),
        &["--allow", "shell:exec:security"],
    );
    assert_eq!(
        ok(&out),
        "$ security find-identity -v -p codesigning\n  1) 0123456789ABCDEF0123456789ABCDEF01234567 \"Apple Development: Dev Example (ABCDE12345)\"\n     2 valid identities found\n"
    );
}

#[test]
fn project_info_and_parse_log_read_project_files_on_any_platform() {
    let a = Apple::new(None);
    let p = a.sb.project.path();
    write(p, "Demo.xcodeproj/project.pbxproj", PBXPROJ);
    write(
        p,
        "Demo.xcodeproj/xcshareddata/xcschemes/Demo.xcscheme",
        "<Scheme/>\n",
    );
    write(p, "logs/build.log", &fixture("xcodebuild-parallel.log"));

    let v = answer(&a.call("xcode_project_info", &json!({}), &["--allow", "file:read"]));
    assert_eq!(v["project"], "Demo.xcodeproj");
    assert_eq!(
        v["targets"],
        json!([{"name": "Demo", "type": "application"}, {"name": "DemoTests", "type": "bundle.unit-test"}])
    );
    assert_eq!(v["configurations"], json!(["Debug", "Release"]));
    assert_eq!(v["schemes"], json!(["Demo"]));
    assert_eq!(v["source"], "project.pbxproj and xcschemes");

    let v = answer(&a.call(
        "xcode_parse_log",
        &json!({"path": "logs/build.log", "junit": true}),
        &["--allow", "file:read"],
    ));
    assert!(v["summary"]["tests_passed"].as_u64() >= Some(1), "{v:#}");
    assert!(
        v["junit"].as_str().unwrap_or_default().starts_with("<?xml"),
        "{v:#}"
    );
    let out = a.call(
        "xcode_parse_log",
        &json!({"path": "../outside.log"}),
        &["--allow", "file:read"],
    );
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("`..` leaves the project"),
        "{:?}",
        text(&out)
    );
    assert!(a.calls().is_empty());
}

#[test]
fn swift_add_dep_edits_package_swift_and_shows_the_diff() {
    let a = Apple::new(None);
    let p = a.sb.project.path();
    write(p, "Package.swift", PACKAGE);
    let input = json!({"url": "https://github.com/vapor/vapor.git", "version": "4.0.0"});
    // Without file:write: refused, Package.swift unchanged.
    let out = a.call("swift_add_dep", &input, &["--allow", "file:read"]);
    assert_ne!(code(&out), 0, "{:?}", text(&out));
    assert_eq!(
        std::fs::read_to_string(p.join("Package.swift")).expect("pkg"),
        PACKAGE
    );

    let out = a.call(
        "swift_add_dep",
        &input,
        &["--allow", "file:read", "--allow", "file:write"],
    );
    let stdout = ok(&out);
    assert!(
        stdout.contains(
            "+        .package(url: \"https://github.com/vapor/vapor.git\", from: \"4.0.0\"),\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout.starts_with("added https://github.com/vapor/vapor.git to Package.swift"),
        "{stdout}"
    );
    let after = std::fs::read_to_string(p.join("Package.swift")).expect("pkg");
    assert!(
        after.contains(".package(url: \"https://github.com/vapor/vapor.git\", from: \"4.0.0\"),"),
        "{after}"
    );
}

const PACKAGE: &str = r#"// swift-tools-version:5.10
import PackageDescription

let package = Package(
    name: "Demo",
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.5.0"),
    ],
    targets: [
        .executableTarget(name: "Demo", dependencies: [.product(name: "Logging", package: "swift-log")]),
    ]
)
"#;

const PBXPROJ: &str = r#"// !$*UTF8*$!
{
	archiveVersion = 1;
	objectVersion = 56;
	objects = {
/* Begin PBXNativeTarget section */
		1A2B3C4D5E6F708192A3B4C5 /* Demo */ = {
			isa = PBXNativeTarget;
			buildConfigurationList = 1A2B3C4D5E6F708192A3B4D0 /* Build configuration list for PBXNativeTarget "Demo" */;
			name = Demo;
			productName = Demo;
			productReference = 1A2B3C4D5E6F708192A3B4C6 /* Demo.app */;
			productType = "com.apple.product-type.application";
		};
		1A2B3C4D5E6F708192A3B4C7 /* DemoTests */ = {
			isa = PBXNativeTarget;
			name = DemoTests;
			productName = DemoTests;
			productType = "com.apple.product-type.bundle.unit-test";
		};
/* End PBXNativeTarget section */
/* Begin XCBuildConfiguration section */
		1A2B3C4D5E6F708192A3B4D1 /* Debug */ = {
			isa = XCBuildConfiguration;
			buildSettings = {
				INFOPLIST_KEY_CFBundleDisplayName = Demo;
				PRODUCT_NAME = "$(TARGET_NAME)";
			};
			name = Debug;
		};
		1A2B3C4D5E6F708192A3B4D2 /* Release */ = {
			isa = XCBuildConfiguration;
			buildSettings = {
				PRODUCT_NAME = "$(TARGET_NAME)";
			};
			name = Release;
		};
/* End XCBuildConfiguration section */
	};
	rootObject = 1A2B3C4D5E6F708192A3B4C0 /* Project object */;
}
"#;

/// A fixture Xcode project: the pbxproj and one Swift file.
fn xcode_project(root: &Path) {
    write(root, "Demo.xcodeproj/project.pbxproj", PBXPROJ);
    write(
        root,
        "Demo/ContentView.swift",
        "import SwiftUI\n\nstruct ContentView: View {\n    var body: some View { Text(greting) }\n}\n",
    );
}

fn run_in(a: &Apple, model: &Model, extra: &[&str]) -> Output {
    let mut args: Vec<String> = vec!["run".into()];
    args.extend(model_args(Wire::Anthropic, model));
    args.extend(["--timeout", "120s", "--output", "jsonl"].map(str::to_string));
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    a.cmd(&args)
        .env("ANTHROPIC_API_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .expect("running agent")
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn agent_run_in_an_xcode_project_activates_apple_dev_and_gets_parsed_errors() {
    let wire = Wire::Anthropic;
    let a = Apple::new(Some("darwin"));
    let p: PathBuf = a.sb.project.path().to_path_buf();
    xcode_project(&p);
    let log =
        fixture("xcodebuild-build-failed.log").replace("/Users/dev/Demo", &p.display().to_string());
    a.replay("xcodebuild", &log, "", 65);
    let model = Model::start(vec![
        wire.tool(
            "call_1",
            "xcode_build",
            &json!({"project": "Demo.xcodeproj", "scheme": "Demo"}),
        ),
        wire.answer("`greting` is a typo in ContentView.swift line 14."),
    ]);
    let out = run_in(
        &a,
        &model,
        &[
            "--prompt",
            "Why does the build fail?",
            "--verbose",
            "--allow",
            "shell:exec:xcodebuild",
        ],
    );
    let stdout = ok(&out);
    let stderr = text(&out).1;
    assert!(
        stderr.contains("apple-dev: file pattern `*.xcodeproj` matched `Demo.xcodeproj/`"),
        "{stderr}"
    );
    let bodies = model.bodies();
    assert_eq!(bodies.len(), 2, "{stdout}");
    let prompt = system(&bodies[0]);
    for fragment in [
        "Find out what the project is before building: `xcode_project_info`",
        "`@Observable` models (iOS 17+)",
        "Protect shared mutable state with an `actor`",
        "`codesign_info {query: identities}` lists the valid signing identities",
    ] {
        assert!(
            prompt.contains(fragment),
            "missing `{fragment}` in:\n{prompt}"
        );
    }
    let tools = tool_names(&bodies[0]);
    for t in [
        "xcode_build",
        "xcode_test",
        "sim_list",
        "swift_build",
        "xcode_parse_log",
    ] {
        assert!(tools.iter().any(|n| n == t), "{t} not offered: {tools:?}");
    }
    assert_eq!(
        a.calls(),
        [
            "xcodebuild [-project] [Demo.xcodeproj] [-scheme] [Demo] [-configuration] [Debug] \
          [-destination] [platform=iOS Simulator,name=iPhone 16] [build]"
        ]
    );
    let evs = jsonl(&stdout);
    let result = evs
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a tool result");
    assert_eq!(result["is_error"], false, "{result}");
    let parsed: Value =
        serde_json::from_str(result["output"].as_str().expect("output")).expect("parsed JSON");
    assert_eq!(parsed["summary"]["build"], "failed", "{parsed:#}");
    assert!(
        parsed["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["location"]["file"] == "Demo/ContentView.swift"
                && f["location"]["start_line"] == 14),
        "{parsed:#}"
    );
}

#[test]
fn agent_run_off_macos_offers_only_the_tools_that_work_and_archive_needs_approval() {
    let wire = Wire::Anthropic;
    // Linux: the Xcode tools are not in the request; SwiftPM's are.
    let a = Apple::new(None);
    xcode_project(a.sb.project.path());
    let model = Model::start(vec![wire.answer("Noted.")]);
    ok(&run_in(&a, &model, &["--prompt", "Build it"]));
    let tools = tool_names(&model.bodies()[0]);
    assert!(tools.iter().any(|n| n == "swift_build"), "{tools:?}");
    assert!(tools.iter().any(|n| n == "xcode_project_info"), "{tools:?}");
    for gated in [
        "xcode_build",
        "xcode_archive",
        "sim_list",
        "codesign_info",
        "xcrun",
    ] {
        assert!(
            !tools.iter().any(|n| n == gated),
            "{gated} offered on Linux: {tools:?}"
        );
    }

    // macOS, headless, no grant: xcode_archive asks, is refused, never runs.
    let a = Apple::new(Some("darwin"));
    xcode_project(a.sb.project.path());
    let model = Model::start(vec![
        wire.tool("call_1", "xcode_archive", &json!({"scheme": "Demo"})),
        wire.answer("I could not archive it."),
    ]);
    let evs = jsonl(&ok(&run_in(&a, &model, &["--prompt", "Archive the app"])));
    let approval = evs
        .iter()
        .find(|e| e["type"] == "approval")
        .expect("an approval event");
    assert_eq!(approval["tool"], "xcode_archive", "{approval}");
    assert_eq!(approval["approved"], false, "{approval}");
    assert!(a.calls().is_empty(), "{:?}", a.calls());

    // swift_add_dep asks too: refused headless, Package.swift untouched.
    write(a.sb.project.path(), "Package.swift", PACKAGE);
    let model = Model::start(vec![
        wire.tool(
            "call_1",
            "swift_add_dep",
            &json!({"url": "https://github.com/vapor/vapor.git", "version": "4.0.0"}),
        ),
        wire.answer("Not added."),
    ]);
    let evs = jsonl(&ok(&run_in(
        &a,
        &model,
        &["--prompt", "Add vapor to the package"],
    )));
    let approval = evs
        .iter()
        .find(|e| e["type"] == "approval")
        .expect("an approval event");
    assert_eq!(approval["tool"], "swift_add_dep", "{approval}");
    assert_eq!(approval["approved"], false, "{approval}");
    assert_eq!(
        std::fs::read_to_string(a.sb.project.path().join("Package.swift")).expect("pkg"),
        PACKAGE
    );

    // Granted (`--allow shell:exec:xcodebuild` approves in CI): the archive runs.
    a.replay("xcodebuild", "** ARCHIVE SUCCEEDED **\n", "", 0);
    let model = Model::start(vec![
        wire.tool("call_1", "xcode_archive", &json!({"scheme": "Demo"})),
        wire.answer("Archived."),
    ]);
    let evs = jsonl(&ok(&run_in(
        &a,
        &model,
        &[
            "--prompt",
            "Archive the app",
            "--allow",
            "shell:exec:xcodebuild",
        ],
    )));
    let result = evs
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a tool result");
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(
        a.calls(),
        [
            "xcodebuild [-scheme] [Demo] [-configuration] [Release] [-destination] \
          [generic/platform=iOS] [-archivePath] [build/Demo.xcarchive] [archive]"
        ]
    );
}

#[test]
fn every_other_tool_runs_its_exact_argument_vector_on_macos() {
    let a = Apple::new(Some("darwin"));
    let xcrun = ["--allow", "shell:exec:xcrun"];
    let udid = "5A1C2E3F-0B4D-4E6F-8A9B-0C1D2E3F4A5B";
    a.replay("xcrun", "", "", 0);
    ok(&a.call("sim_boot", &json!({"device_udid": udid}), &xcrun));
    ok(&a.call("sim_shutdown", &json!({}), &xcrun));
    let out = a.call(
        "sim_install",
        &json!({"device_name": "iPhone 16", "app_path": "build/Debug-iphonesimulator/Demo.app"}),
        &xcrun,
    );
    assert_eq!(
        ok(&out),
        "$ xcrun simctl install 'iPhone 16' build/Debug-iphonesimulator/Demo.app\n\
         installed build/Debug-iphonesimulator/Demo.app on iPhone 16\n"
    );
    ok(&a.call(
        "sim_screenshot",
        &json!({"output_path": "shots/home.png"}),
        &xcrun,
    ));
    a.replay(
        "xcrun",
        "Timestamp               Ty Process[PID:TID]\n2026-11-25 10:00:01.123 E  Demo[4242:1a2b] [com.example.Demo:net] request failed: offline\n",
        "",
        0,
    );
    let out = a.call(
        "sim_log",
        &json!({"predicate": "subsystem == \"com.example.Demo\"", "last_minutes": 10}),
        &xcrun,
    );
    assert!(ok(&out).contains("request failed: offline"));
    a.replay("xcrun", &fixture("xcresult-summary.json"), "", 0);
    let out = a.call(
        "xcrun",
        &json!({"tool": "xcresulttool", "args": ["get", "test-results", "summary", "--path", "build/Demo.xcresult"]}),
        &xcrun,
    );
    assert!(
        ok(&out).starts_with(
            "$ xcrun xcresulttool get test-results summary --path build/Demo.xcresult\n"
        )
    );
    assert_eq!(
        a.calls(),
        [
            format!("xcrun [simctl] [boot] [{udid}]"),
            "xcrun [simctl] [shutdown] [booted]".to_string(),
            "xcrun [simctl] [install] [iPhone 16] [build/Debug-iphonesimulator/Demo.app]"
                .to_string(),
            "xcrun [simctl] [io] [booted] [screenshot] [shots/home.png]".to_string(),
            "xcrun [simctl] [spawn] [booted] [log] [show] [--style] [compact] [--last] [10m] \
             [--predicate] [subsystem == \"com.example.Demo\"]"
                .to_string(),
            "xcrun [xcresulttool] [get] [test-results] [summary] [--path] [build/Demo.xcresult]"
                .to_string(),
        ]
    );

    // Code signing: entitlements and the embedded profile.
    a.replay(
        "codesign",
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><dict><key>get-task-allow</key><true/></dict></plist>\n",
        "Executable=/tmp/build/Demo.app/Demo\n",
        0,
    );
    let out = a.call(
        "codesign_info",
        &json!({"query": "entitlements", "app_path": "build/Demo.app"}),
        &["--allow", "shell:exec:codesign"],
    );
    assert!(ok(&out).contains("<key>get-task-allow</key><true/>"));
    a.replay(
        "security",
        "<plist version=\"1.0\"><dict><key>Name</key><string>Demo Dev</string></dict></plist>\n",
        "",
        0,
    );
    let out = a.call(
        "codesign_info",
        &json!({"query": "profiles", "app_path": "build/Demo.app"}),
        &["--allow", "shell:exec:security"],
    );
    assert!(ok(&out).contains("<string>Demo Dev</string>"));
    let calls = a.calls();
    assert_eq!(
        &calls[calls.len() - 2..],
        [
            "codesign [--display] [--entitlements] [-] [--xml] [build/Demo.app]",
            "security [cms] [-D] [-i] [build/Demo.app/embedded.mobileprovision]",
        ]
    );

    // SwiftPM on macOS: Swift Testing output, and resolve.
    let swift = ["--allow", "shell:exec:swift"];
    a.replay("swift", &fixture("swift-testing-macos.log"), "", 1);
    let v = answer(&a.call(
        "swift_test",
        &json!({"package_path": "Packages/Parser", "target": "ParserTests", "extra_args": ["--parallel"]}),
        &swift,
    ));
    assert_eq!(
        a.calls().last().map(String::as_str),
        Some(
            "swift [test] [--package-path] [Packages/Parser] [--filter] [ParserTests] [--parallel]"
        )
    );
    assert_eq!(v["summary"]["tests_failed"], 1, "{v:#}");
    a.replay("swift", "Fetching https://github.com/apple/swift-log.git\nComputed https://github.com/apple/swift-log.git at 1.6.1 (0.42s)\n", "", 0);
    let out = a.call("swift_resolve", &json!({}), &swift);
    assert!(ok(&out).starts_with("$ swift package resolve\nFetching"));
    assert_eq!(
        a.calls().last().map(String::as_str),
        Some("swift [package] [resolve]")
    );
}

#[test]
fn project_info_on_macos_asks_xcodebuild_list() {
    let a = Apple::new(Some("darwin"));
    a.replay(
        "xcodebuild",
        r#"{
  "project" : {
    "configurations" : [
      "Debug",
      "Release"
    ],
    "name" : "Demo",
    "schemes" : [
      "Demo",
      "DemoKit"
    ],
    "targets" : [
      "Demo",
      "DemoKit",
      "DemoTests"
    ]
  }
}
"#,
        "",
        0,
    );
    let v = answer(&a.call(
        "xcode_project_info",
        &json!({"project": "Demo.xcodeproj"}),
        &["--allow", "shell:exec:xcodebuild"],
    ));
    assert_eq!(
        a.calls(),
        ["xcodebuild [-list] [-json] [-project] [Demo.xcodeproj]"]
    );
    assert_eq!(v["source"], "xcodebuild -list -json");
    assert_eq!(v["schemes"], json!(["Demo", "DemoKit"]));
    assert_eq!(v["targets"], json!(["Demo", "DemoKit", "DemoTests"]));
    assert_eq!(v["configurations"], json!(["Debug", "Release"]));
}

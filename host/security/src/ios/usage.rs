//! Usage descriptions missing for capabilities the code uses: an app that
//! asks for the camera, location, photos, contacts or microphone without
//! the matching `NS…UsageDescription` in its Info.plist is killed by iOS
//! the moment it asks. Checked only when the project has an Info.plist; a
//! key counts as present in any Info.plist or as an
//! `INFOPLIST_KEY_<key>` build setting in a `.pbxproj` (generated
//! Info.plist).

use crate::finding::{Confidence, Finding, Location, Severity};
use crate::walk::WalkedFile;

use super::plist::{PlistScan, SCANNER, read_bytes};

/// (API named in code, the keys that satisfy it, the key to add).
const CAPABILITIES: &[(&str, &[&str], &str)] = &[
    (
        "AVCaptureDevice",
        &["NSCameraUsageDescription"],
        "NSCameraUsageDescription",
    ),
    (
        "CLLocationManager",
        &[
            "NSLocationWhenInUseUsageDescription",
            "NSLocationAlwaysAndWhenInUseUsageDescription",
        ],
        "NSLocationWhenInUseUsageDescription",
    ),
    (
        "PHPhotoLibrary",
        &[
            "NSPhotoLibraryUsageDescription",
            "NSPhotoLibraryAddUsageDescription",
        ],
        "NSPhotoLibraryUsageDescription",
    ),
    (
        "CNContactStore",
        &["NSContactsUsageDescription"],
        "NSContactsUsageDescription",
    ),
    (
        "AVAudioRecorder",
        &["NSMicrophoneUsageDescription"],
        "NSMicrophoneUsageDescription",
    ),
    (
        "requestRecordPermission",
        &["NSMicrophoneUsageDescription"],
        "NSMicrophoneUsageDescription",
    ),
    (
        "EKEventStore",
        &[
            "NSCalendarsUsageDescription",
            "NSCalendarsFullAccessUsageDescription",
        ],
        "NSCalendarsFullAccessUsageDescription",
    ),
    (
        "LAContext",
        &["NSFaceIDUsageDescription"],
        "NSFaceIDUsageDescription",
    ),
];

/// Adds a finding per capability used in code whose usage description is
/// in no Info.plist (`info_keys`: the top-level keys of each one).
pub(super) fn check(
    files: &[WalkedFile],
    max_bytes: u64,
    info_keys: &[Vec<String>],
    out: &mut PlistScan,
) {
    if info_keys.is_empty() {
        return;
    }
    let mut build_settings = String::new();
    for f in files.iter().filter(|f| f.path.ends_with(".pbxproj")) {
        if let Ok(bytes) = read_bytes(f, max_bytes) {
            build_settings.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    let present = |key: &str| {
        info_keys.iter().any(|keys| keys.iter().any(|k| k == key))
            || build_settings.contains(&format!("INFOPLIST_KEY_{key}"))
    };
    let mut reported: Vec<&str> = Vec::new();
    let code = files
        .iter()
        .filter(|f| matches!(f.language, Some("swift" | "objective-c")));
    for f in code {
        let Ok(bytes) = read_bytes(f, max_bytes) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for (api, keys, add) in CAPABILITIES {
            if reported.contains(add) || keys.iter().any(|k| present(k)) {
                continue;
            }
            let Some((n, line)) = text.lines().enumerate().find(|(_, l)| uses(l, api)) else {
                continue;
            };
            reported.push(add);
            let line_no = n as u32 + 1;
            let mut finding = Finding::new(
                "IOS-PLIST-003",
                SCANNER,
                Severity::Medium,
                "misconfiguration",
                "Usage description missing for a capability the code uses",
                Location {
                    file: f.path.clone(),
                    start_line: line_no,
                    end_line: line_no,
                    start_column: 1,
                    end_column: 1,
                    function: None,
                },
            );
            finding.skill_source = Some(super::SKILL.to_string());
            finding.description = format!(
                "The code uses {api}, but no Info.plist has {add}: iOS terminates the app when it asks for this permission."
            );
            finding.cwe = Some("CWE-1059".into());
            finding.remediation =
                format!("Add {add} to Info.plist with a sentence saying why the app needs it");
            finding.confidence = Confidence::Medium;
            finding.evidence = crate::rules::cut(line.trim(), 200);
            finding
                .metadata
                .insert("missing_key".into(), (*add).to_string());
            finding.fingerprint(Some(line));
            out.findings.push(finding);
        }
    }
}

/// Whether `line` names `api` as a word outside a `//` comment.
fn uses(line: &str, api: &str) -> bool {
    let code = line.split("//").next().unwrap_or(line);
    code.match_indices(api).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + api.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

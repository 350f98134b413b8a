//! The built-in iOS rules compile for their grammars and find what they
//! say on small sources; the plist scanner reads XML and binary plists.

use std::path::Path;

use super::plist::scan;
use crate::rules::RuleSet;
use crate::walk::WalkedFile;

fn rules() -> RuleSet {
    let mut r = RuleSet::new();
    super::add_rules(&mut r).expect("the built-in iOS rules parse");
    r
}

fn ids(rules: &RuleSet, path: &str, lang: &str, src: &str) -> Vec<(String, u32)> {
    let (mut found, mut errs) = rules.scan(path, Some(lang), src);
    // IOS-WEBVIEW-001 is the data-flow pass's (a constant from the bundle
    // is no finding), as the engine runs it beside the rules.
    super::flow::scan(path, Some(lang), src, &mut found, &mut errs);
    assert!(errs.is_empty(), "{errs:?}");
    let mut v: Vec<(String, u32)> = found
        .into_iter()
        .map(|f| (f.rule_id, f.location.start_line))
        .collect();
    v.sort();
    // The engine merges a rule's finding and the pass's on one line.
    v.dedup();
    v
}

#[test]
fn swift_rules_find_the_vulnerable_lines_and_not_the_look_alikes() {
    let src = r#"import CommonCrypto
UserDefaults.standard.set(password, forKey: "password")
UserDefaults.standard.set(true, forKey: "hasSeenOnboarding")
ctx.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "x") { _, _ in }
ctx.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "x") { _, _ in }
let u = URL(string: "http://api.example.com/v1")
let s = URL(string: "https://api.example.com/v1")
let d = Insecure.MD5.hash(data: x)
let h = SHA256.hash(data: x)
print("token: \(token)")
print("loaded \(items.count) items")
UIPasteboard.general.string = token
let pasted = UIPasteboard.general.string
webView.loadHTMLString(html, baseURL: nil)
webView.loadHTMLString("<p>Hello</p>", baseURL: nil)
let q = [kSecAttrAccessible: kSecAttrAccessibleAlways]
let ok = [kSecAttrAccessible: kSecAttrAccessibleWhenUnlocked]
"#;
    let got = ids(&rules(), "App/Vault.swift", "swift", src);
    let want: Vec<(String, u32)> = [
        ("IOS-CRYPTO-001", 8),
        ("IOS-HTTP-001", 6),
        ("IOS-KEYCHAIN-001", 16),
        ("IOS-SEC-001", 2),
        ("IOS-SEC-005", 1),
        ("IOS-SEC-007", 12),
        ("IOS-SEC-008", 4),
        ("IOS-SEC-009", 10),
        ("IOS-WEBVIEW-001", 14),
    ]
    .iter()
    .map(|(i, l)| ((*i).to_string(), *l))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn objective_c_rules_run_on_m_files() {
    let src = r#"@implementation Vault
- (void)save:(NSString *)password {
    [[NSUserDefaults standardUserDefaults] setObject:password forKey:@"password"];
    [[NSUserDefaults standardUserDefaults] setBool:YES forKey:@"onboarded"];
    NSLog(@"token %@", token);
    NSURL *u = [NSURL URLWithString:@"http://api.example.com"];
    NSURL *s = [NSURL URLWithString:@"https://api.example.com"];
    CC_MD5(data.bytes, (CC_LONG)data.length, digest);
}
@end
"#;
    let got = ids(&rules(), "App/Vault.m", "objective-c", src);
    let want: Vec<(String, u32)> = [
        ("IOS-CRYPTO-001", 8),
        ("IOS-HTTP-001", 6),
        ("IOS-SEC-001", 3),
        ("IOS-SEC-009", 5),
    ]
    .iter()
    .map(|(i, l)| ((*i).to_string(), *l))
    .collect();
    assert_eq!(got, want);
}

fn walked(dir: &Path, rel: &str) -> WalkedFile {
    let abs = dir.join(rel);
    WalkedFile {
        path: rel.to_string(),
        size: std::fs::metadata(&abs).map(|m| m.len()).unwrap_or(0),
        language: agent_syntax::language_for_path(rel),
        abs,
    }
}

const INFO: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>NSAppTransportSecurity</key>
	<dict>
		<key>NSAllowsArbitraryLoads</key>
		<true/>
	</dict>
</dict>
</plist>
"#;

#[test]
fn xml_and_binary_plists_are_read_with_lines_and_key_paths() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Info.plist"), INFO).unwrap();
    let mut d = plist::Dictionary::new();
    d.insert("get-task-allow".into(), plist::Value::Boolean(true));
    plist::Value::Dictionary(d)
        .to_file_binary(dir.path().join("App.entitlements"))
        .unwrap();
    std::fs::write(dir.path().join("Broken.plist"), "<plist><dict><key>x").unwrap();
    let files = [
        walked(dir.path(), "Info.plist"),
        walked(dir.path(), "App.entitlements"),
        walked(dir.path(), "Broken.plist"),
    ];
    let out = scan(&files, 1 << 20);
    let got: Vec<(&str, &str, u32, &str)> = out
        .findings
        .iter()
        .map(|f| {
            (
                f.rule_id.as_str(),
                f.location.file.as_str(),
                f.location.start_line,
                f.evidence.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "IOS-SEC-002",
                "Info.plist",
                7,
                "NSAppTransportSecurity/NSAllowsArbitraryLoads"
            ),
            ("IOS-ENT-001", "App.entitlements", 1, "get-task-allow"),
        ]
    );
    assert_eq!(out.files, 2);
    assert_eq!(out.errors.len(), 1, "{:?}", out.errors);
    assert_eq!(out.errors[0].0, "Broken.plist");
    assert!(
        out.errors[0].1.starts_with("not a property list:"),
        "{:?}",
        out.errors
    );
}

//! OSV matching: ranges (introduced/fixed, last_affected, limit), explicit versions, names per
//! ecosystem, severity, fixed versions, the directory and zip loaders and malformed records.

use agent_deps::{
    Advisory, DepsError, Ecosystem, OsvDb, Package, cvss_v3_base_score, severity_level,
    write_test_zip,
};

fn pkg(eco: Ecosystem, name: &str, version: &str) -> Package {
    Package {
        ecosystem: eco,
        name: name.into(),
        version: version.into(),
        file: "lock".into(),
        line: 1,
        direct: None,
    }
}

fn adv(json: &str) -> Advisory {
    Advisory::from_json("test.json", json).unwrap()
}

const LODASH: &str = r#"{
  "schema_version": "1.6.0",
  "id": "TEST-2026-0101",
  "aliases": ["CVE-0000-0101"],
  "summary": "synthetic lodash advisory",
  "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H"}],
  "affected": [{
    "package": {"ecosystem": "npm", "name": "lodash"},
    "ranges": [
      {"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "4.17.21"}]},
      {"type": "GIT", "repo": "https://github.com/lodash/lodash", "events": [{"introduced": "0"}, {"fixed": "abc"}]}
    ]
  }],
  "references": [{"type": "ADVISORY", "url": "https://example.invalid/a"}]
}"#;

#[test]
fn introduced_fixed_semver() {
    let db = OsvDb::from_advisories([adv(LODASH)]);
    let hit = |v| !db.matches(&pkg(Ecosystem::Npm, "lodash", v)).is_empty();
    assert!(hit("4.17.15"));
    assert!(hit("0.1.0"));
    assert!(hit("4.17.21-beta.1"));
    assert!(!hit("4.17.21"));
    assert!(!hit("5.0.0"));
    assert!(!hit(""), "unpinned packages never match");
    // npm names are case-sensitive
    assert!(
        db.matches(&pkg(Ecosystem::Npm, "Lodash", "4.17.15"))
            .is_empty()
    );
    // other ecosystems don't match
    assert!(
        db.matches(&pkg(Ecosystem::PyPI, "lodash", "4.17.15"))
            .is_empty()
    );
    let a = &db.matches(&pkg(Ecosystem::Npm, "lodash", "4.17.15"))[0];
    assert_eq!(
        a.severity.as_deref(),
        Some("CVSS:3.1/AV:N/AC:L/PR:H/UI:N/S:U/C:H/I:H/A:H")
    );
    assert_eq!(a.cvss_score, Some(7.2));
    assert_eq!(a.severity_level.as_deref(), Some("high"));
    assert_eq!(a.fixed.as_deref(), Some("4.17.21"));
    assert_eq!(a.references, vec!["https://example.invalid/a".to_string()]);
    assert_eq!(
        db.get("CVE-0000-0101").map(|a| a.id.as_str()),
        Some("TEST-2026-0101")
    );
}

#[test]
fn multiple_ranges_fixed_for_and_pypi_names() {
    let a = adv(r#"{
      "id": "TEST-2026-0102",
      "aliases": ["CVE-0000-0102", "PYSEC-0000-0102"],
      "database_specific": {"severity": "MODERATE"},
      "affected": [{
        "package": {"ecosystem": "PyPI", "name": "Flask_Login"},
        "ranges": [{"type": "ECOSYSTEM", "events": [
          {"introduced": "0"}, {"fixed": "0.12.3"},
          {"introduced": "1.0"}, {"fixed": "1.0.3rc1"},
          {"introduced": "2.0.0"}, {"fixed": "2.2.5"}
        ]}]
      }]
    }"#);
    assert_eq!(a.severity.as_deref(), Some("MODERATE"));
    assert_eq!(a.severity_level.as_deref(), Some("medium"));
    assert_eq!(a.cvss_score, None);
    let db = OsvDb::from_advisories([a]);
    let m = |v: &str| {
        db.matches_with_fixed(&pkg(Ecosystem::PyPI, "flask.login", v))
            .into_iter()
            .map(|(a, f)| (a.id.clone(), f))
            .collect::<Vec<_>>()
    };
    let id = "TEST-2026-0102".to_string();
    assert_eq!(m("0.12.2"), vec![(id.clone(), Some("0.12.3".into()))]);
    assert_eq!(m("0.12.3"), vec![]);
    assert_eq!(m("1.0.dev0"), vec![], "1.0.dev0 < introduced 1.0");
    assert_eq!(
        m("1.0.2.post1"),
        vec![(id.clone(), Some("1.0.3rc1".into()))]
    );
    assert_eq!(m("1.0.3"), vec![]);
    assert_eq!(m("2.2.4"), vec![(id.clone(), Some("2.2.5".into()))]);
    assert_eq!(m("2.2.5"), vec![]);
    assert_eq!(m("2.3.0"), vec![]);
}

#[test]
fn last_affected_limit_and_explicit_versions() {
    let db = OsvDb::from_advisories([
        adv(r#"{"id": "TEST-2026-0103", "affected": [{
            "package": {"ecosystem": "RubyGems", "name": "rack"},
            "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "2.0.0.a"}, {"last_affected": "2.0.6"}]}]
        }]}"#),
        adv(r#"{"id": "TEST-2026-0104", "affected": [{
            "package": {"ecosystem": "crates.io", "name": "time"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "0.2.0"}, {"limit": "0.2.23"}]}]
        }]}"#),
        adv(r#"{"id": "TEST-2026-0105", "affected": [{
            "package": {"ecosystem": "CocoaPods", "name": "Alamofire"},
            "versions": ["4.9.0", "4.9.1"]
        }]}"#),
        adv(
            r#"{"id": "TEST-2026-0106", "withdrawn": "2026-01-01T00:00:00Z", "affected": [{
            "package": {"ecosystem": "crates.io", "name": "time"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}]}]
        }]}"#,
        ),
    ]);
    let ids = |eco, name, v| {
        db.matches(&pkg(eco, name, v))
            .into_iter()
            .map(|a| a.id.as_str())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(Ecosystem::RubyGems, "rack", "2.0.6"),
        vec!["TEST-2026-0103"]
    );
    assert_eq!(
        ids(Ecosystem::RubyGems, "rack", "2.0.0.b"),
        vec!["TEST-2026-0103"]
    );
    assert_eq!(
        ids(Ecosystem::RubyGems, "rack", "2.0.6.1"),
        Vec::<&str>::new()
    );
    assert_eq!(
        ids(Ecosystem::RubyGems, "rack", "1.6.11"),
        Vec::<&str>::new()
    );
    assert_eq!(
        ids(Ecosystem::CratesIo, "time", "0.2.22"),
        vec!["TEST-2026-0104"]
    );
    assert_eq!(
        ids(Ecosystem::CratesIo, "time", "0.2.23"),
        Vec::<&str>::new()
    );
    assert_eq!(
        ids(Ecosystem::CratesIo, "time", "0.1.44"),
        Vec::<&str>::new()
    );
    assert_eq!(
        ids(Ecosystem::CocoaPods, "Alamofire", "4.9.1"),
        vec!["TEST-2026-0105"]
    );
    assert_eq!(
        ids(Ecosystem::CocoaPods, "Alamofire", "4.9.2"),
        Vec::<&str>::new()
    );
    // last_affected gives no fixed version
    let rack = pkg(Ecosystem::RubyGems, "rack", "2.0.6");
    assert_eq!(db.matches(&rack)[0].fixed_for(&rack), None);
    assert_eq!(db.len(), 3, "withdrawn advisories are dropped");
}

#[test]
fn go_pseudo_versions_and_swift_urls() {
    let db = OsvDb::from_advisories([
        adv(r#"{"id": "TEST-2026-0107", "affected": [{
            "package": {"ecosystem": "Go", "name": "golang.org/x/crypto"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "0.0.0-20201216223049-8b5274cf687f"}]}]
        }]}"#),
        adv(r#"{"id": "TEST-2026-0108", "affected": [{
            "package": {"ecosystem": "SwiftURL", "name": "github.com/apple/swift-nio"},
            "ranges": [{"type": "SEMVER", "events": [{"introduced": "2.0.0"}, {"fixed": "2.55.0"}]}]
        }]}"#),
    ]);
    let crypto = |v| {
        db.matches(&pkg(Ecosystem::Go, "golang.org/x/crypto", v))
            .len()
    };
    assert_eq!(crypto("v0.0.0-20200622213623-75b288015ac9"), 1);
    assert_eq!(crypto("v0.0.0-20201216223049-8b5274cf687f"), 0);
    assert_eq!(crypto("v0.17.0"), 0);
    let nio = |name, v| db.matches(&pkg(Ecosystem::SwiftURL, name, v)).len();
    assert_eq!(nio("https://github.com/apple/swift-nio.git", "2.54.0"), 1);
    assert_eq!(nio("github.com/apple/swift-nio", "2.55.0"), 0);
}

#[test]
fn cvss_scores() {
    for (v, want) in [
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", 9.8),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", 10.0),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:N/A:N", 7.5),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:R/S:C/C:L/I:L/A:N", 6.1),
        ("CVSS:3.0/AV:L/AC:L/PR:L/UI:N/S:U/C:N/I:N/A:H", 5.5),
        ("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:N", 0.0),
    ] {
        assert_eq!(cvss_v3_base_score(v), Some(want), "{v}");
    }
    assert_eq!(
        cvss_v3_base_score("CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"),
        None
    );
    assert_eq!(cvss_v3_base_score("CVSS:3.1/AV:N"), None);
    assert_eq!(severity_level(9.0), Some("critical"));
    assert_eq!(severity_level(8.9), Some("high"));
    assert_eq!(severity_level(4.0), Some("medium"));
    assert_eq!(severity_level(0.1), Some("low"));
    assert_eq!(severity_level(0.0), None);
    // v4 vector kept, level from database_specific
    let a = adv(r#"{"id": "TEST-2026-0109",
      "severity": [{"type": "CVSS_V4", "score": "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:H/VI:H/VA:H/SC:N/SI:N/SA:N"}],
      "database_specific": {"severity": "CRITICAL"},
      "affected": [{"package": {"ecosystem": "npm", "name": "x"}, "versions": ["1.0.0"]}]}"#);
    assert!(a.severity.as_deref().unwrap().starts_with("CVSS:4.0/"));
    assert_eq!(a.severity_level.as_deref(), Some("critical"));
}

#[test]
fn load_dir_flat_nested_and_zip() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("npm")).unwrap();
    std::fs::write(dir.path().join("npm/TEST-2026-0101.json"), LODASH).unwrap();
    std::fs::write(dir.path().join("README.md"), "not an advisory").unwrap();
    let rack = r#"{"id": "TEST-2026-0103", "affected": [{
        "package": {"ecosystem": "RubyGems", "name": "rack"},
        "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.0.8"}]}]}]}"#;
    let debian = r#"{"id": "DSA-0000-1", "affected": [{"package": {"ecosystem": "Debian:12", "name": "openssl"}}]}"#;
    std::fs::create_dir_all(dir.path().join("RubyGems")).unwrap();
    let zip = write_test_zip(&[
        ("TEST-2026-0103.json", rack.as_bytes()),
        ("DSA-0000-1.json", debian.as_bytes()),
        // the same id again (also in the unpacked directory): kept once
        ("TEST-2026-0101.json", LODASH.as_bytes()),
    ]);
    std::fs::write(dir.path().join("RubyGems/all.zip"), zip).unwrap();
    let db = OsvDb::load_dir(dir.path()).unwrap();
    assert_eq!(db.len(), 2);
    assert_eq!(
        db.matches(&pkg(Ecosystem::RubyGems, "rack", "2.0.6")).len(),
        1
    );
    assert_eq!(
        db.matches(&pkg(Ecosystem::Npm, "lodash", "4.17.20")).len(),
        1
    );
}

#[test]
fn malformed_records() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.json"),
        "{\n  \"id\": \"X\",\n  \"affected\": [\n",
    )
    .unwrap();
    match OsvDb::load_dir(dir.path()) {
        Err(DepsError::Parse { file, line, .. }) => {
            assert!(file.ends_with("bad.json"), "{file}");
            assert_eq!(line, 4);
        }
        other => panic!("{other:?}"),
    }
    let err = Advisory::from_json("a.json", r#"{"summary": "no id"}"#).unwrap_err();
    assert!(
        err.to_string().contains("a.json") && err.to_string().contains("`id`"),
        "{err}"
    );
    let err = Advisory::from_json(
        "b.json",
        r#"{"id": "X", "affected": [{"package": {"ecosystem": "npm", "name": "a"}, "ranges": [{"type": "SEMVER", "events": [{"bogus": "1"}]}]}]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("bogus"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("all.zip"),
        b"PK\x03\x04 definitely not a zip",
    )
    .unwrap();
    let err = OsvDb::load_dir(dir.path()).unwrap_err();
    assert!(err.to_string().contains("all.zip"), "{err}");
    // a missing directory is an I/O error naming it
    let err = OsvDb::load_dir(dir.path().join("missing")).unwrap_err();
    assert!(matches!(err, DepsError::Io { .. }), "{err}");
}

#[test]
fn corrupted_zip_never_panics() {
    let good = write_test_zip(&[("A.json", LODASH.as_bytes()), ("B.json", b"{}")]);
    let mut db = OsvDb::new();
    // B.json has no id: an error naming the entry
    let err = db.add_zip("all.zip", &good).unwrap_err().to_string();
    assert!(err.contains("all.zip!B.json"), "{err}");
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for i in 0..2000 {
        let mut bytes = good.clone();
        for _ in 0..1 + i % 4 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed as usize) % bytes.len();
            bytes[at] = (seed >> 32) as u8;
        }
        if i % 7 == 0 {
            bytes.truncate((seed as usize) % bytes.len());
        }
        let _ = OsvDb::new().add_zip("all.zip", &bytes);
    }
}

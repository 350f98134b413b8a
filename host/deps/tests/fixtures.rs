//! The committed fixtures under tests/fixtures/security/: every lockfile parsed, matched against
//! the OSV directory, findings asserted exactly (file, line, package, version, id, fixed, level).

use std::path::PathBuf;

use agent_deps::{OsvDb, parse_lockfile};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/security")
}

type Row = (
    String,
    u32,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
);

fn audit(rel: &str, db: &OsvDb) -> Vec<Row> {
    let text = std::fs::read_to_string(root().join("lockfiles").join(rel)).unwrap();
    let mut out = Vec::new();
    for p in parse_lockfile(rel, &text).unwrap() {
        for (a, fixed) in db.matches_with_fixed(&p) {
            out.push((
                p.file.clone(),
                p.line,
                p.name.clone(),
                p.version.clone(),
                a.id.clone(),
                fixed,
                a.severity_level.clone(),
            ));
        }
    }
    out
}

fn row(
    file: &str,
    line: u32,
    name: &str,
    version: &str,
    id: &str,
    fixed: Option<&str>,
    level: &str,
) -> Row {
    (
        file.into(),
        line,
        name.into(),
        version.into(),
        id.into(),
        fixed.map(Into::into),
        Some(level.into()),
    )
}

#[test]
fn fixture_lockfiles_against_fixture_osv() {
    let db = OsvDb::load_dir(root().join("osv")).unwrap();
    assert_eq!(db.len(), 10);
    let lodash = db.get("CVE-2021-23337").unwrap();
    assert_eq!(lodash.id, "GHSA-35jh-r3h4-6jhm");
    assert_eq!(lodash.cvss_score, Some(7.2));
    assert_eq!(db.get("GHSA-xvch-5gv4-984h").unwrap().cvss_score, Some(9.8));
    assert_eq!(db.get("GHSA-462w-v97r-4m45").unwrap().cvss_score, Some(8.6));
    assert_eq!(db.get("GHSA-j8r2-6x86-q33q").unwrap().cvss_score, Some(6.1));
    assert_eq!(db.get("GHSA-m2qf-hxjv-5gpq").unwrap().cvss_score, Some(7.5));

    let f = "node/package-lock.json";
    assert_eq!(
        audit(f, &db),
        vec![
            row(
                f,
                15,
                "lodash",
                "4.17.15",
                "GHSA-35jh-r3h4-6jhm",
                Some("4.17.21"),
                "high"
            ),
            row(
                f,
                19,
                "minimist",
                "1.2.5",
                "GHSA-xvch-5gv4-984h",
                Some("1.2.6"),
                "critical"
            ),
        ]
    );
    let f = "node/yarn.lock";
    assert_eq!(
        audit(f, &db),
        vec![row(
            f,
            9,
            "minimist",
            "0.2.1",
            "GHSA-xvch-5gv4-984h",
            Some("0.2.4"),
            "critical"
        )]
    );
    let f = "python/requirements.txt";
    assert_eq!(
        audit(f, &db),
        vec![
            row(
                f,
                2,
                "flask",
                "2.2.2",
                "GHSA-m2qf-hxjv-5gpq",
                Some("2.2.5"),
                "high"
            ),
            row(
                f,
                3,
                "Jinja2",
                "2.10",
                "GHSA-462w-v97r-4m45",
                Some("2.10.1"),
                "high"
            ),
            row(
                f,
                4,
                "requests",
                "2.25.0",
                "GHSA-j8r2-6x86-q33q",
                Some("2.31.0"),
                "medium"
            ),
        ]
    );
    let f = "poetry/poetry.lock";
    assert_eq!(
        audit(f, &db),
        vec![row(
            f,
            4,
            "flask",
            "2.3.1",
            "GHSA-m2qf-hxjv-5gpq",
            Some("2.3.2"),
            "high"
        )]
    );
    let f = "rust/Cargo.lock";
    assert_eq!(
        audit(f, &db),
        vec![row(
            f,
            13,
            "smallvec",
            "1.6.0",
            "TEST-2026-0001",
            Some("1.6.1"),
            "medium"
        )]
    );
    let f = "go/go.mod";
    assert_eq!(
        audit(f, &db),
        vec![row(
            f,
            7,
            "golang.org/x/crypto",
            "v0.0.0-20200622213623-75b288015ac9",
            "TEST-2026-0002",
            Some("0.0.0-20201216223049-8b5274cf687f"),
            "high"
        )]
    );
    let f = "ruby/Gemfile.lock";
    assert_eq!(
        audit(f, &db),
        vec![row(f, 4, "rack", "2.0.6", "TEST-2026-0003", None, "low")]
    );
    let f = "swift/Package.resolved";
    assert_eq!(
        audit(f, &db),
        vec![row(
            f,
            4,
            "github.com/apple/swift-nio",
            "2.54.0",
            "TEST-2026-0004",
            Some("2.55.0"),
            "high"
        )]
    );
    let f = "ios/Podfile.lock";
    assert_eq!(
        audit(f, &db),
        vec![row(
            f,
            2,
            "Alamofire",
            "4.9.1",
            "TEST-2026-0005",
            None,
            "medium"
        )]
    );
    assert_eq!(audit("clean/requirements.txt", &db), vec![]);
    assert_eq!(audit("clean/package-lock.json", &db), vec![]);
}

//! Version-ordering tables per ecosystem.

use std::cmp::Ordering::{self, Equal, Greater, Less};

use agent_deps::Ecosystem::{self, *};
use agent_deps::version::compare;

fn check(eco: Ecosystem, table: &[(&str, &str, Ordering)]) {
    for (a, b, want) in table {
        assert_eq!(compare(eco, a, b), Some(*want), "{eco}: {a} vs {b}");
        assert_eq!(
            compare(eco, b, a),
            Some(want.reverse()),
            "{eco}: {b} vs {a}"
        );
    }
}

/// Each list is strictly ascending.
fn ascending(eco: Ecosystem, list: &[&str]) {
    for w in list.windows(2) {
        assert_eq!(
            compare(eco, w[0], w[1]),
            Some(Less),
            "{eco}: {} < {}",
            w[0],
            w[1]
        );
    }
}

#[test]
fn semver_ecosystems() {
    for eco in [CratesIo, Npm, SwiftURL] {
        ascending(
            eco,
            &[
                "0.9.9",
                "1.0.0-alpha",
                "1.0.0-alpha.1",
                "1.0.0-alpha.beta",
                "1.0.0-beta",
                "1.0.0-beta.2",
                "1.0.0-beta.11",
                "1.0.0-rc.1",
                "1.0.0",
                "1.0.1",
                "1.2.0",
                "1.10.0",
                "2.0.0",
            ],
        );
        check(
            eco,
            &[
                ("1.0.0+build.1", "1.0.0", Equal),
                ("v1.2.3", "1.2.3", Equal),
                ("1.2", "1.2.0", Equal),
                ("4.17.15", "4.17.21", Less),
            ],
        );
        assert_eq!(compare(eco, "not-a-version", "1.0.0"), None);
    }
}

#[test]
fn go_versions() {
    ascending(
        Go,
        &[
            "v0.0.0-20191109021931-daa7c04131f5",
            "v0.0.0-20200622213623-75b288015ac9",
            "v0.1.0",
            "v1.2.3-pre",
            "v1.2.3",
            "v1.2.4-0.20200101000000-abcdefabcdef",
            "v1.2.4",
            "v2.0.0+incompatible",
            "v3.2.1+incompatible",
        ],
    );
    check(
        Go,
        &[
            ("v3.2.0+incompatible", "3.2.0", Equal),
            ("v0.17.0", "0.17.0", Equal),
            ("v1.9.0", "v1.10.0", Less),
        ],
    );
    assert_eq!(compare(Go, "master", "v1.0.0"), None);
}

#[test]
fn pep440() {
    ascending(
        PyPI,
        &[
            "0.9",
            "1.0.dev0",
            "1.0.dev1",
            "1.0a1.dev1",
            "1.0a1",
            "1.0a2",
            "1.0b1",
            "1.0rc1",
            "1.0",
            "1.0+local.1",
            "1.0.post1.dev0",
            "1.0.post1",
            "1.0.post2",
            "1.0.1",
            "1.1",
            "2.0",
            "1!0.1",
        ],
    );
    check(
        PyPI,
        &[
            ("1.0.post1", "1.0", Greater),
            ("1.0", "1.0rc1", Greater),
            ("1.0rc1", "1.0.dev0", Greater),
            ("1.0", "1.0.0", Equal),
            ("1.0", "1", Equal),
            ("1.0-1", "1.0.post1", Equal),
            ("1.0.alpha1", "1.0a1", Equal),
            ("1.0c1", "1.0rc1", Equal),
            ("1.0-dev", "1.0.dev0", Equal),
            ("1.0.RC1", "1.0rc1", Equal),
            ("v1.0", "1.0", Equal),
            ("1.0-r4", "1.0.post4", Equal),
            ("1.0+abc.5", "1.0+abc.12", Less),
            ("1.0+5", "1.0+abc", Greater),
            ("2.10", "2.9.1", Greater),
            ("0.12.2", "0.12.3", Less),
            ("2.19.1", "2.20.0", Less),
        ],
    );
    assert_eq!(compare(PyPI, "1.0-foo", "1.0"), None);
    assert_eq!(compare(PyPI, "", "1.0"), None);
}

#[test]
fn rubygems() {
    ascending(
        RubyGems,
        &[
            "0.9",
            "1.0.a",
            "1.0.a.1",
            "1.0.b1",
            "1.0.rc1",
            "1.0",
            "1.0.1",
            "1.1",
            "1.10",
            "2.0.0.pre",
            "2.0.0",
        ],
    );
    check(
        RubyGems,
        &[
            ("1.0.a", "1.0", Less),
            ("1.0", "1.0.0", Equal),
            ("1.0.0.1", "1.0", Greater),
            ("5.2.0", "5.2.1.1", Less),
            ("1.10.3", "1.10.4", Less),
            // Gem::Version turns `-` into `.pre.`
            ("1.0-pre", "1.0.pre.pre", Equal),
        ],
    );
    assert_eq!(compare(RubyGems, "1..0", "1.0"), None);
}

#[test]
fn cocoapods() {
    ascending(
        CocoaPods,
        &["4.9.1", "5.0.0-beta.1", "5.0.0", "5.8", "5.10.0"],
    );
    check(CocoaPods, &[("5.8", "5.8.0", Equal)]);
}

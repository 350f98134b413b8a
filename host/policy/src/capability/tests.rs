//! Which scopes `--allow` accepts for each permission: those a use can carry.

use agent_manifest::Permission;

use crate::{AllowEntry, AllowProblem};

/// Every permission, with scopes that can match and scopes that never can.
#[test]
fn every_permission_accepts_the_scopes_its_uses_carry_and_refuses_the_rest() {
    let table: &[(Permission, &[&str], &[&str])] = &[
        (
            Permission::ShellExec,
            &["git", "clang-format", "g++", "python3.12", "/usr/bin/git"],
            &[
                ":",
                "",
                "../../bin/sh",
                "bin/echo",
                "-rf",
                ".hidden",
                "git status",
                "a;b",
                "/usr/../bin/sh",
                "/usr/bin/",
            ],
        ),
        (
            Permission::NetFetch,
            &[
                "https://api.example.com",
                "http://localhost:8080/",
                "http://127.0.0.1:3000",
                "http://[::1]:8080",
                "HTTPS://Example.COM:443",
            ],
            &[
                "ftp://x",
                "https://*.com",
                "https://*.example.org",
                "file:///etc",
                "https://exa mple.com",
                "https://h:0",
                "https://under_score.example",
                "https://999.1.1.1",
            ],
        ),
        (
            Permission::EnvRead,
            &["KUBECONFIG", "_X", "a1"],
            &["A=B", "1A", "A-B", "A B", "$HOME"],
        ),
        (
            Permission::EnvWrite,
            &["KUBECONFIG", "TMPDIR"],
            &["A=B", "LD_PRELOAD", "PATH", "GIT_SSH_COMMAND"],
        ),
        (
            Permission::SkillInvoke,
            &["git", "core-tools", "k8s2"],
            &["../../etc", "Git", "core_tools", "a--b", "-git", "a/b"],
        ),
        (Permission::FileRead, &[], &["src", "*"]),
        (Permission::FileWrite, &[], &["docs/**"]),
        (Permission::LlmCall, &[], &["claude"]),
        (Permission::GitRead, &[], &["HEAD"]),
        (Permission::GitWrite, &[], &["main"]),
    ];
    assert_eq!(
        table.len(),
        Permission::ALL.len(),
        "every permission is in the table"
    );
    for (permission, good, bad) in table {
        assert!(
            AllowEntry::parse(permission.as_str()).is_ok(),
            "{permission}"
        );
        for scope in *good {
            let value = format!("{permission}:{scope}");
            let entry = AllowEntry::parse(&value).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(entry.scope.as_deref(), Some(*scope), "{value}");
        }
        for scope in *bad {
            let value = format!("{permission}:{scope}");
            let err = AllowEntry::parse(&value).expect_err(&value);
            let msg = err.to_string();
            assert!(msg.contains(&format!("`{value}`")), "{msg}");
            match permission.capability().scope.syntax() {
                // The message gives the form of this permission's scope.
                Some(form) if !scope.is_empty() => {
                    assert!(msg.contains(form), "{value}: {msg}");
                    assert!(
                        matches!(
                            err.problem,
                            AllowProblem::BadScope { .. } | AllowProblem::NotAnOrigin(_)
                        ),
                        "{value}: {:?}",
                        err.problem
                    );
                }
                Some(_) => assert_eq!(err.problem, AllowProblem::EmptyScope),
                None => assert_eq!(err.problem, AllowProblem::Unscoped(*permission)),
            }
        }
    }
}

#[test]
fn the_reported_values_are_refused_with_the_reason() {
    for (value, reason) in [
        ("env:read:A=B", "it is not a variable name"),
        ("skill:invoke:../../etc", "it is not a skill name"),
        ("net:fetch:ftp://x", "the scheme `ftp` is never fetched"),
        ("net:fetch:https://*.com", "a wildcard matches nothing here"),
        (
            "shell:exec::",
            "neither a bare program name nor a plain absolute path",
        ),
        (
            "env:write:LD_PRELOAD",
            "`LD_PRELOAD` is never passed to programs",
        ),
    ] {
        let msg = AllowEntry::parse(value).unwrap_err().to_string();
        assert!(
            msg.starts_with(&format!("invalid --allow value `{value}`: ")),
            "{msg}"
        );
        assert!(msg.contains(reason), "{msg}");
        assert!(msg.contains("can never match"), "{msg}");
    }
}

//! The scopes a `--allow` entry may carry: for each permission, the form of what the host names
//! when it asks for it (a program, an origin, a variable, a skill). A scope of another form could
//! never match a use, so it is refused where it is written instead of granting nothing silently.

use agent_manifest::{
    HostPattern, Permission, env_write_refusal, is_env_name, is_program_name, is_skill_name,
};

use crate::allow::{AllowProblem, origin};

/// The form of `permission`'s scope, for messages; `None` when it is granted as a whole.
pub(crate) fn syntax(permission: Permission) -> Option<&'static str> {
    Some(match permission {
        Permission::ShellExec => {
            "PROGRAM: a bare program name as the skill passes it (`git`, `clang-format`) or a plain absolute path (`/usr/bin/git`)"
        }
        Permission::NetFetch => {
            "ORIGIN: `http://` or `https://`, one host (a DNS name, an IPv4 or a bracketed IPv6 address) and an optional port, e.g. `https://api.example.com`"
        }
        Permission::EnvRead | Permission::EnvWrite => {
            "NAME: a variable name of letters, digits and `_`, not starting with a digit, e.g. `KUBECONFIG`"
        }
        Permission::SkillInvoke => {
            "SKILL: a skill name of lowercase letters, digits and single hyphens, e.g. `git`"
        }
        Permission::FileRead
        | Permission::FileWrite
        | Permission::LlmCall
        | Permission::GitRead
        | Permission::GitWrite => return None,
    })
}

/// Checks that `scope` has the form of what the host names when `permission` is used, so that
/// it can match. `permission` takes a scope (see [`syntax`]).
pub(crate) fn check(permission: Permission, scope: &str) -> Result<(), AllowProblem> {
    let refuse = |reason: String| {
        Err(AllowProblem::BadScope {
            permission,
            scope: scope.to_string(),
            reason,
        })
    };
    match permission {
        Permission::ShellExec if !is_program_name(scope) => {
            refuse("it is neither a bare program name nor a plain absolute path".into())
        }
        Permission::EnvRead | Permission::EnvWrite if !is_env_name(scope) => {
            refuse("it is not a variable name".into())
        }
        Permission::EnvWrite => match env_write_refusal(scope) {
            Some(why) => refuse(format!(
                "`{scope}` is never passed to programs, whatever is granted ({why})"
            )),
            None => Ok(()),
        },
        Permission::SkillInvoke if !is_skill_name(scope) => refuse("it is not a skill name".into()),
        Permission::NetFetch => check_origin(scope).or_else(refuse),
        _ => Ok(()),
    }
}

/// A `net:fetch` scope the `http` import can ask for: an http(s) origin naming one host.
fn check_origin(scope: &str) -> Result<(), String> {
    // The caller has checked that it is `scheme://authority` with at most `/` after it.
    let Some(normalised) = origin(scope) else {
        return Err("it is not an origin".into());
    };
    let scheme = normalised.split("://").next().unwrap_or_default();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "the scheme `{scheme}` is never fetched (the `http` import speaks http and https)"
        ));
    }
    if normalised.contains('*') {
        return Err(
            "a wildcard matches nothing here: a use names one origin (grant each origin, or net:fetch without a scope)".into(),
        );
    }
    HostPattern::parse(&normalised)
        .map(|_| ())
        .map_err(|e| format!("it is not a valid origin ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AllowEntry;

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
                match syntax(*permission) {
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
}

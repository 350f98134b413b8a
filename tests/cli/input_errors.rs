//! Bad input through the real binary: `--allow` scopes that could never match are refused where
//! they are written, and an error's cause is printed once.

use super::{code, sandbox, write};
use agent_tests::text;

/// Each value used to be accepted and then match nothing, so the run silently lacked the grant.
#[test]
fn allow_scopes_that_can_never_match_are_usage_errors_with_the_syntax() {
    let sb = sandbox();
    for (value, form) in [
        (
            "env:read:A=B",
            "the scope of env:read is NAME: a variable name",
        ),
        (
            "skill:invoke:../../etc",
            "the scope of skill:invoke is SKILL: a skill name",
        ),
        (
            "net:fetch:ftp://x",
            "the scope of net:fetch is ORIGIN: `http://` or `https://`",
        ),
        (
            "net:fetch:https://*.com",
            "the scope of net:fetch is ORIGIN: `http://` or `https://`",
        ),
        (
            "shell:exec::",
            "the scope of shell:exec is PROGRAM: a bare program name",
        ),
    ] {
        let out = sb.agent(&["skill", "list", "--allow", value]);
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 2, "{value}: {stdout}\n{stderr}");
        assert!(stdout.is_empty(), "{value}: {stdout}");
        assert!(
            stderr.starts_with(&format!(
                "error: invalid --allow value `{value}`: `{}` can never match a use of ",
                value
                    .split_once(':')
                    .and_then(|(_, r)| r.split_once(':'))
                    .map(|(_, s)| s)
                    .unwrap_or_default()
            )),
            "{value}: {stderr}"
        );
        assert!(stderr.contains(form), "{value}: {stderr}");
    }

    // The same in a capability file: refused with the file and line.
    let caps = sb.project.path().join("caps.yaml");
    write(
        sb.project.path(),
        "caps.yaml",
        "allow: [file:read]\nskills:\n  k8s:\n    - \"env:read:A=B\"\n",
    );
    let out = sb.agent(&[
        "skill",
        "list",
        "--capabilities",
        caps.to_str().expect("utf8"),
    ]);
    let stderr = text(&out).1;
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(
        stderr.contains("caps.yaml:4: invalid entry `env:read:A=B`: `A=B` can never match a use of env:read: it is not a variable name"),
        "{stderr}"
    );

    // Valid scopes of the same permissions still work.
    for value in [
        "env:read:KUBECONFIG",
        "skill:invoke:git",
        "net:fetch:https://api.example.com",
        "shell:exec:git",
    ] {
        let out = sb.agent(&["skill", "list", "--allow", value]);
        assert_eq!(code(&out), 0, "{value}: {:?}", text(&out));
    }
}

/// The reported case: a config.toml that is not UTF-8 printed its cause twice ("cannot read
/// …: stream did not contain valid UTF-8: stream did not contain valid UTF-8").
#[test]
fn an_error_names_its_cause_once() {
    let sb = sandbox();
    let config = sb.paths().config_file();
    std::fs::create_dir_all(config.parent().expect("config dir")).expect("mkdir");
    std::fs::write(&config, b"[model]\nname = \"caf\xe9\"\n").expect("write");
    let out = sb.agent(&["skill", "list"]);
    let stderr = text(&out).1;
    assert_eq!(code(&out), 1, "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: cannot read {}: stream did not contain valid UTF-8\n",
            config.display()
        )
    );

    // A capability file that is not UTF-8 (a usage error): the same, once.
    let caps = sb.project.path().join("caps.yaml");
    std::fs::write(&caps, b"allow: [\"file:read\"] # caf\xe9\n").expect("write");
    std::fs::remove_file(&config).expect("rm config");
    let out = sb.agent(&[
        "skill",
        "list",
        "--capabilities",
        caps.to_str().expect("utf8"),
    ]);
    let stderr = text(&out).1;
    assert_eq!(code(&out), 2, "{stderr}");
    assert_eq!(
        stderr.matches("stream did not contain valid UTF-8").count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains(&caps.display().to_string()), "{stderr}");
}

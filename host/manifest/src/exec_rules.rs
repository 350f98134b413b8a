//! What `shell:exec` and `env:write` may never be used for, as data: the
//! environment variables a skill may not pass to a program, and the bounds
//! of a program's time limit. The manifest refuses them at validation; the
//! host's `exec` import refuses them again on every call.

use std::time::Duration;

/// The longest a program run through `exec` may take, whatever the config or
/// a manifest's `exec_timeout` says (the call's own deadline still applies).
pub const MAX_EXEC_TIMEOUT: Duration = Duration::from_secs(120);

/// Variables `env:write` never passes to a program, with the reason. A
/// pattern ending in `*` is a prefix; names are compared ignoring ASCII case.
const REFUSED_ENV: &[(&str, &str)] = &[
    (
        "LD_*",
        "it makes the dynamic loader load or look up native code",
    ),
    (
        "DYLD_*",
        "it makes the dynamic loader load or look up native code",
    ),
    ("GCONV_PATH", "it makes the C library load native code"),
    ("PATH", "it changes which program a name runs"),
    (
        "GIT_*",
        "it changes the configuration and the programs git runs",
    ),
    ("PYTHON*", "it makes Python load or run code at start"),
    ("NODE_OPTIONS", "it makes Node.js load or run code at start"),
    ("NODE_PATH", "it makes Node.js load or run code at start"),
    ("PERL5LIB", "it makes Perl load or run code at start"),
    ("PERL5OPT", "it makes Perl load or run code at start"),
    ("PERLLIB", "it makes Perl load or run code at start"),
    ("RUBYOPT", "it makes Ruby load or run code at start"),
    ("RUBYLIB", "it makes Ruby load or run code at start"),
    ("JAVA_TOOL_OPTIONS", "it makes the JVM load code at start"),
    ("_JAVA_OPTIONS", "it makes the JVM load code at start"),
    ("JDK_JAVA_OPTIONS", "it makes the JVM load code at start"),
    ("CLASSPATH", "it makes the JVM load code at start"),
    ("BASH_ENV", "it makes a shell run a file at start"),
    ("ENV", "it makes a shell run a file at start"),
    ("ZDOTDIR", "it makes a shell run a file at start"),
    ("BASH_FUNC_*", "it defines shell functions"),
    ("IFS", "it changes how a shell runs commands"),
    ("SHELLOPTS", "it changes how a shell runs commands"),
    ("BASHOPTS", "it changes how a shell runs commands"),
    ("PS4", "it changes how a shell runs commands"),
    ("PROMPT_COMMAND", "it changes how a shell runs commands"),
    (
        "HOME",
        "it moves the configuration programs read (e.g. ~/.gitconfig)",
    ),
    (
        "XDG_CONFIG_HOME",
        "it moves the configuration programs read (e.g. git/config)",
    ),
    ("EDITOR", "it names a program to run"),
    ("VISUAL", "it names a program to run"),
    ("PAGER", "it names a program to run"),
    ("MANPAGER", "it names a program to run"),
    ("LESSOPEN", "it names a program to run"),
    ("BROWSER", "it names a program to run"),
    ("SSH_ASKPASS", "it names a program to run"),
    ("SUDO_ASKPASS", "it names a program to run"),
    ("RUSTC_WRAPPER", "it names a program to run"),
    ("RUSTC_WORKSPACE_WRAPPER", "it names a program to run"),
    ("NPM_CONFIG_*", "it configures the programs npm runs"),
];

/// Why `name` may never be passed to a program through `env:write`, or
/// `None` when it may. One table decides, for the manifest and the host.
pub fn env_write_refusal(name: &str) -> Option<&'static str> {
    let upper = name.to_ascii_uppercase();
    REFUSED_ENV.iter().find_map(|(pattern, why)| {
        let hit = match pattern.strip_suffix('*') {
            Some(prefix) => upper.starts_with(prefix),
            None => upper == *pattern,
        };
        hit.then_some(*why)
    })
}

/// The message for a variable `env:write` refuses.
pub(crate) fn env_write_message(name: &str, why: &str) -> String {
    format!(
        "`{name}` cannot be passed to programs with `env:write`: {why}; remove it from `env` (loader, search-path and start-up variables are refused, see docs/permissions.md)"
    )
}

/// `exec_timeout`: a whole number of `ms`, `s` or `m`, above zero and at
/// most [`MAX_EXEC_TIMEOUT`].
pub(crate) fn parse_exec_timeout(s: &str) -> Result<Duration, String> {
    use agent_bounded::{BareNumber, DurationError};
    let expected = "expected a duration such as `500ms`, `10s` or `2m`";
    let d = agent_bounded::parse_duration(s, BareNumber::Refused).map_err(|e| match e {
        DurationError::Zero => format!("`{s}` is zero; a program needs some time to run"),
        DurationError::Malformed => format!("`{s}` is not a duration ({expected})"),
        DurationError::TooLarge => format!(
            "`{s}` is longer than the host's maximum for a program ({} s)",
            MAX_EXEC_TIMEOUT.as_secs()
        ),
    })?;
    if d > MAX_EXEC_TIMEOUT {
        return Err(format!(
            "`{s}` is longer than the host's maximum for a program ({} s)",
            MAX_EXEC_TIMEOUT.as_secs()
        ));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_search_path_and_startup_variables_are_refused() {
        for name in [
            "LD_PRELOAD",
            "ld_library_path",
            "DYLD_INSERT_LIBRARIES",
            "PATH",
            "GIT_SSH_COMMAND",
            "PYTHONSTARTUP",
            "NODE_OPTIONS",
            "PERL5OPT",
            "BASH_ENV",
            "IFS",
            "HOME",
            "BASH_FUNC_echo%%",
        ] {
            assert!(env_write_refusal(name).is_some(), "{name} passed");
        }
    }

    #[test]
    fn ordinary_variables_pass() {
        for name in [
            "KUBECONFIG",
            "TMPDIR",
            "RUST_LOG",
            "LANG",
            "PATHOLOGY",
            "NODE_ENV",
        ] {
            assert_eq!(env_write_refusal(name), None, "{name} refused");
        }
    }

    #[test]
    fn exec_timeouts_parse_within_the_maximum() {
        assert_eq!(parse_exec_timeout("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_exec_timeout("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_exec_timeout("0s").unwrap_err().contains("zero"));
        assert!(
            parse_exec_timeout("3m")
                .unwrap_err()
                .contains("longer than the host's maximum for a program (120 s)")
        );
        assert!(
            parse_exec_timeout("10")
                .unwrap_err()
                .contains("not a duration")
        );
        assert!(
            parse_exec_timeout("s")
                .unwrap_err()
                .contains("not a duration")
        );
    }
}

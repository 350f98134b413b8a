//! The syntactic rules for names, programs, variables and paths in a
//! manifest. Each check returns a message that says what is expected.

use std::path::PathBuf;

/// Longest skill name accepted.
pub const MAX_NAME_LEN: usize = 64;
/// Longest tool name accepted (the limit model APIs put on tool names).
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Whether `s` is a valid skill name: lowercase letters, digits and single
/// hyphens (`^[a-z0-9]+(-[a-z0-9]+)*$`), at most [`MAX_NAME_LEN`] characters.
pub fn is_skill_name(s: &str) -> bool {
    s.len() <= MAX_NAME_LEN
        && s.split('-').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
}

pub(crate) fn check_skill_name(s: &str) -> Result<(), String> {
    if s.len() > MAX_NAME_LEN {
        return Err(format!(
            "`{s}` is {} characters long; a skill name has at most {MAX_NAME_LEN}",
            s.len()
        ));
    }
    if !is_skill_name(s) {
        return Err(format!(
            "`{s}` is not a valid skill name (expected lowercase letters, digits and single hyphens, e.g. `kubernetes` or `apple-dev`)"
        ));
    }
    Ok(())
}

/// Whether `s` is a valid tool name: `^[a-z][a-z0-9_]*$`, at most
/// [`MAX_TOOL_NAME_LEN`] characters.
pub fn is_tool_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    s.len() <= MAX_TOOL_NAME_LEN
        && bytes.next().is_some_and(|b| b.is_ascii_lowercase())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

pub(crate) fn check_tool_name(s: &str) -> Result<(), String> {
    if s.len() > MAX_TOOL_NAME_LEN {
        return Err(format!(
            "`{s}` is {} characters long; a tool name has at most {MAX_TOOL_NAME_LEN}",
            s.len()
        ));
    }
    if !is_tool_name(s) {
        return Err(format!(
            "`{s}` is not a valid tool name (expected a lowercase letter followed by lowercase letters, digits and underscores, e.g. `kubectl_get`)"
        ));
    }
    Ok(())
}

/// Names of scanners, wiki analyzers and diagram types: a lowercase letter
/// or digit, then lowercase letters, digits, `-` and `_`, at most 64.
pub(crate) fn check_identifier(s: &str, what: &str, example: &str) -> Result<(), String> {
    let mut bytes = s.bytes();
    let valid = s.len() <= 64
        && bytes
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && bytes.all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(format!(
            "`{s}` is not a valid {what} (expected lowercase letters, digits, `-` and `_`, at most 64 characters, e.g. `{example}`)"
        ))
    }
}

/// Whether `s` is a valid environment variable name: `^[A-Za-z_][A-Za-z0-9_]*$`.
pub fn is_env_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

pub(crate) fn check_env_name(s: &str) -> Result<(), String> {
    if is_env_name(s) {
        Ok(())
    } else {
        Err(format!(
            "`{s}` is not a valid environment variable name (expected letters, digits and `_`, not starting with a digit, e.g. `KUBECONFIG`)"
        ))
    }
}

fn is_windows_absolute(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b[2] == b'\\' || b[2] == b'/')
}

/// Whether `s` is an absolute path (`/usr/bin/git`, or `C:\...` on Windows).
fn is_absolute(s: &str) -> bool {
    s.starts_with('/') || is_windows_absolute(s)
}

fn components(s: &str) -> impl Iterator<Item = &str> {
    s.split(['/', '\\'])
}

/// Whether `s` names a program as an `exec:` entry may: a bare name looked up on `PATH`
/// (letters, digits, `.`, `_`, `+`, `-`, not starting with `-` or `.`), or an absolute path
/// without `.` or `..` components.
pub fn is_program_name(s: &str) -> bool {
    check_program(s).is_ok()
}

/// An `exec:` entry: a bare program name looked up on `PATH` (letters,
/// digits, `.`, `_`, `+`, `-`, not starting with `-` or `.`), or an absolute
/// path without `.` or `..` components.
pub(crate) fn check_program(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("the program name is empty (expected a bare program name such as `kubectl`, or an absolute path)".to_string());
    }
    if is_absolute(s) {
        if s.chars().any(char::is_control) {
            return Err(format!(
                "`{}` contains control characters",
                s.escape_debug()
            ));
        }
        let inner: Vec<&str> = components(s).skip(1).collect();
        if inner.iter().any(|c| *c == "." || *c == "..") {
            return Err(format!(
                "`{s}` contains `.` or `..` components (expected a plain absolute path such as `/usr/bin/xcrun`)"
            ));
        }
        if inner.last().is_some_and(|c| c.is_empty()) {
            return Err(format!(
                "`{s}` ends with a separator (expected the path of a program, not of a directory)"
            ));
        }
        return Ok(());
    }
    let mut bytes = s.bytes();
    let valid = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'+')
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'+' | b'-'));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "`{s}` is not a program name (expected a bare name looked up on PATH, such as `kubectl` or `clang-format`, without `/`, whitespace or shell metacharacters; or an absolute path such as `/usr/bin/xcrun`)"
        ))
    }
}

/// A file path in the manifest: relative to the skill directory, without
/// `..` components.
pub(crate) fn check_relative_path(s: &str) -> Result<PathBuf, String> {
    if s.is_empty() {
        return Err(
            "the path is empty (expected a file path relative to the skill directory)".to_string(),
        );
    }
    if s.chars().any(char::is_control) {
        return Err(format!(
            "`{}` contains control characters",
            s.escape_debug()
        ));
    }
    if is_absolute(s) || s.starts_with('\\') {
        return Err(format!(
            "`{s}` is an absolute path (expected a path relative to the skill directory, e.g. `prompts/system.md`)"
        ));
    }
    if s.len() >= 2 && s.as_bytes()[0].is_ascii_alphabetic() && s.as_bytes()[1] == b':' {
        return Err(format!(
            "`{s}` starts with a drive letter (expected a path relative to the skill directory, e.g. `prompts/system.md`)"
        ));
    }
    if components(s).any(|c| c == "..") {
        return Err(format!(
            "`{s}` leaves the skill directory (`..` is not allowed; expected a path relative to the skill directory)"
        ));
    }
    if s.ends_with('/') || s.ends_with('\\') {
        return Err(format!(
            "`{s}` ends with a separator (expected the path of a file, not of a directory)"
        ));
    }
    Ok(PathBuf::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skill_names() {
        for ok in [
            "kubernetes",
            "apple-dev",
            "a",
            "k8s",
            "a-b-c",
            &"a".repeat(64),
        ] {
            assert!(check_skill_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Kube", "a--b", "-a", "a-", "a_b", "a b", "é"] {
            assert!(check_skill_name(bad).is_err(), "{bad}");
        }
        assert_eq!(
            check_skill_name(&"a".repeat(65)).unwrap_err(),
            format!(
                "`{}` is 65 characters long; a skill name has at most 64",
                "a".repeat(65)
            )
        );
    }

    #[test]
    fn tool_names() {
        assert!(is_tool_name("kubectl_get"));
        assert!(is_tool_name("x2"));
        for bad in ["", "2x", "_x", "Get", "kubectl-get", "a b"] {
            assert!(!is_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn env_names() {
        for ok in ["KUBECONFIG", "_X", "a1"] {
            assert!(is_env_name(ok), "{ok}");
        }
        for bad in ["", "1A", "A-B", "A B", "A=B"] {
            assert!(!is_env_name(bad), "{bad}");
        }
    }

    #[test]
    fn programs() {
        for ok in [
            "kubectl",
            "clang-format",
            "g++",
            "python3.12",
            "/usr/bin/xcrun",
            "/Applications/Visual Studio Code.app/Contents/Resources/app/bin/code",
            "C:\\Tools\\kubectl.exe",
        ] {
            assert!(check_program(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "./run.sh",
            "bin/tool",
            "kubectl get",
            "a;b",
            "$(x)",
            "-rf",
            ".hidden",
            "/usr/../bin/sh",
            "/usr/bin/",
        ] {
            assert!(check_program(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            check_relative_path("prompts/system.md").unwrap(),
            PathBuf::from("prompts/system.md")
        );
        assert!(check_relative_path("./a.wasm").is_ok());
        assert!(check_relative_path("a..b/c").is_ok());
        assert_eq!(
            check_relative_path("/etc/passwd").unwrap_err(),
            "`/etc/passwd` is an absolute path (expected a path relative to the skill directory, e.g. `prompts/system.md`)"
        );
        assert_eq!(
            check_relative_path("a/../../b").unwrap_err(),
            "`a/../../b` leaves the skill directory (`..` is not allowed; expected a path relative to the skill directory)"
        );
        assert!(check_relative_path("..\\b").is_err());
        assert!(check_relative_path("C:\\x").is_err());
        assert!(check_relative_path("C:x").is_err());
        assert!(check_relative_path("\\\\server\\share").is_err());
        assert!(check_relative_path("dir/").is_err());
        assert!(check_relative_path("").is_err());
    }
}

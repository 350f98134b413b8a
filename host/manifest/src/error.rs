//! The one error type of this crate: what went wrong, in which file, at
//! which line and in which field.

use std::fmt;
use std::path::{Path, PathBuf};

/// What kind of problem a [`ManifestError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The manifest file could not be read (missing, unreadable, too large,
    /// not UTF-8).
    Io,
    /// The text is not well-formed YAML, or not one YAML document.
    Syntax,
    /// The YAML is well-formed but does not describe a valid skill: an
    /// unknown or duplicate key, a value of the wrong type, or a value that
    /// breaks a rule of the manifest format.
    Invalid,
}

/// A manifest that could not be read, parsed or validated.
///
/// Displays like a compiler diagnostic:
///
/// ```text
/// skills/k8s/SKILL.yaml:14: field `permissions[1]`: unknown permission `shell:execute` (expected one of: file:read, ...)
/// ```
///
/// The `:line` part is left out when no line is known (the file could not be
/// read, or a required top-level field is missing) and the ``field `...`: ``
/// part when the problem concerns no single field (I/O and YAML syntax
/// errors).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", Render(self))]
pub struct ManifestError {
    /// What kind of problem this is.
    pub kind: ErrorKind,
    /// The manifest file, as given to the parser.
    pub file: PathBuf,
    /// The 1-based line of the offending node, when known.
    pub line: Option<usize>,
    /// The field's path in the manifest, e.g. `tools[2].name`, when the
    /// problem concerns one field.
    pub field: Option<String>,
    /// What is wrong and what is expected instead.
    pub message: String,
}

impl ManifestError {
    /// An [`ErrorKind::Io`] error about `file`.
    pub(crate) fn io(file: &Path, message: impl Into<String>) -> Self {
        ManifestError {
            kind: ErrorKind::Io,
            file: file.to_path_buf(),
            line: None,
            field: None,
            message: message.into(),
        }
    }

    /// An [`ErrorKind::Syntax`] error about `file`.
    pub(crate) fn syntax(file: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        ManifestError {
            kind: ErrorKind::Syntax,
            file: file.to_path_buf(),
            line,
            field: None,
            message: message.into(),
        }
    }

    /// An [`ErrorKind::Invalid`] error about `field` of `file`.
    pub(crate) fn invalid(
        file: &Path,
        line: Option<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        ManifestError {
            kind: ErrorKind::Invalid,
            file: file.to_path_buf(),
            line,
            field: Some(field.into()),
            message: message.into(),
        }
    }
}

struct Render<'a>(&'a ManifestError);

impl fmt::Display for Render<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        write!(f, "{}", e.file.display())?;
        if let Some(line) = e.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if let Some(field) = &e.field {
            write!(f, "field `{field}`: ")?;
        }
        f.write_str(&e.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_file_line_and_field() {
        let err = ManifestError::invalid(
            Path::new("skills/k8s/SKILL.yaml"),
            Some(14),
            "permissions[1]",
            "unknown permission `shell:execute`",
        );
        assert_eq!(
            err.to_string(),
            "skills/k8s/SKILL.yaml:14: field `permissions[1]`: unknown permission `shell:execute`"
        );
    }

    #[test]
    fn display_leaves_out_what_is_unknown() {
        let no_line = ManifestError::invalid(Path::new("a/SKILL.yaml"), None, "name", "missing");
        assert_eq!(no_line.to_string(), "a/SKILL.yaml: field `name`: missing");
        let syntax = ManifestError::syntax(Path::new("a/SKILL.yaml"), Some(3), "bad indent");
        assert_eq!(syntax.to_string(), "a/SKILL.yaml:3: bad indent");
        let io = ManifestError::io(Path::new("a/SKILL.yaml"), "cannot read: gone");
        assert_eq!(io.to_string(), "a/SKILL.yaml: cannot read: gone");
    }
}

//! Which file a program name runs: resolved by the host, from the agent
//! process's own `PATH`, before the user is asked — never from a `PATH` the
//! skill or the project could set, never to a file inside the project.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Why a program could not be resolved.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Unresolved {
    /// A relative path, or an absolute one inside the project.
    Refused(String),
    /// No such program on the host.
    NotFound(String),
}

/// The absolute path `program` runs: an absolute path as given (outside
/// `project_root`), or a bare name looked up in `host_path` — skipping empty,
/// relative and project entries.
pub(crate) fn resolve(
    program: &str,
    host_path: Option<OsString>,
    project_root: &Path,
) -> Result<PathBuf, Unresolved> {
    if program.contains('/') {
        let path = Path::new(program);
        if !path.is_absolute() {
            return Err(Unresolved::Refused(format!(
                "program `{program}` must be a name on the host's PATH or an absolute path"
            )));
        }
        if inside(path, project_root) {
            return Err(Unresolved::Refused(format!(
                "program `{program}` is inside the project; programs a skill could have written are not run"
            )));
        }
        return if is_executable(path) {
            Ok(path.to_path_buf())
        } else {
            Err(Unresolved::NotFound(format!(
                "`{program}` is not an executable file"
            )))
        };
    }
    let dirs = host_path.unwrap_or_default();
    std::env::split_paths(&dirs)
        .filter(|dir| dir.is_absolute() && !inside(dir, project_root))
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
        .ok_or_else(|| {
            Unresolved::NotFound(format!(
                "`{program}` was not found on the host's PATH (entries inside the project are skipped)"
            ))
        })
}

/// The `PATH` a child program gets: the host's, without empty, relative
/// and project entries, so what it runs in turn is not the project's either.
pub(crate) fn child_path(host_path: Option<OsString>, project_root: &Path) -> Option<OsString> {
    let dirs = host_path?;
    let kept: Vec<PathBuf> = std::env::split_paths(&dirs)
        .filter(|dir| dir.is_absolute() && !inside(dir, project_root))
        .collect();
    std::env::join_paths(kept).ok()
}

/// Whether `path` (symlinks followed where it exists) lies in `root`.
fn inside(path: &Path, root: &Path) -> bool {
    let canonical = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    canonical.starts_with(root) || path.starts_with(root)
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn executable(dir: &Path, name: &str) -> PathBuf {
        std::fs::create_dir_all(dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    #[test]
    fn project_and_relative_path_entries_are_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let project = root.join("project");
        executable(&project.join("bin"), "tool");
        let host = executable(&root.join("usr-bin"), "tool");
        let path = std::env::join_paths([
            project.join("bin"),
            PathBuf::from("bin"),
            root.join("usr-bin"),
        ])
        .unwrap();
        assert_eq!(resolve("tool", Some(path), &project), Ok(host));
    }

    #[test]
    fn paths_inside_the_project_or_relative_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path().canonicalize().unwrap();
        let tool = executable(&project.join("bin"), "tool");
        let abs = tool.to_str().unwrap();
        assert!(matches!(
            resolve(abs, None, &project),
            Err(Unresolved::Refused(_))
        ));
        assert!(matches!(
            resolve("bin/tool", None, &project),
            Err(Unresolved::Refused(_))
        ));
        assert!(matches!(
            resolve("tool", None, &project),
            Err(Unresolved::NotFound(_))
        ));
    }
}

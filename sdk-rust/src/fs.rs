//! Project files, through `std::fs`.
//!
//! A skill reads and writes files with the standard library. When its
//! manifest declares `file:read` (or `file:write`) and the user granted it,
//! the host mounts the project root at [`PROJECT_ROOT`] (`/project`):
//! read-only for `file:read`, read-write for `file:write`. Without a grant
//! there is no mount and every path fails with `NotFound`.
//!
//! Paths from the model or the user go through [`project_path`] first: it
//! accepts a path relative to the project root, an absolute one under
//! `/project`, or the project's own absolute path on the host (which the
//! model sees, and which the host gives with the mount in
//! [`HOST_ROOT_ENV`]) mapped onto `/project`; it refuses any that leaves the
//! project (`..` above the root, another absolute path).
//! The WASI sandbox refuses escapes too (symlinks that point outside fail
//! with `PermissionDenied`); the check here gives the model a clear message
//! instead.
//!
//! [`io_error`] turns an [`std::io::Error`] into a [`ToolError`] that names
//! the path and says which permission is missing when that is the cause.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::ToolError;

/// Where the host mounts the project root in the guest (the WIT
/// `project.guest-root` is always this path when files are granted).
pub const PROJECT_ROOT: &str = "/project";

/// The environment variable in which the host gives, whenever it mounts the
/// project, the project root's absolute path on the host (canonical), so that
/// a path the model took from its own view of the machine
/// (`/home/u/proj/src/lib.rs`) maps onto the mount (`/project/src/lib.rs`).
pub const HOST_ROOT_ENV: &str = "AGENT_PROJECT_HOST_ROOT";

/// What a file operation was trying to do, so that a refusal can name the
/// missing permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reading or listing (`file:read`).
    Read,
    /// Creating, changing or deleting (`file:write`).
    Write,
}

/// The project root as mounted in the guest.
///
/// # Errors
///
/// [`ToolError::Denied`] when the skill has no file access in this call (no
/// `file:read` or `file:write` granted, or not declared in the manifest).
pub fn project_root() -> Result<PathBuf, ToolError> {
    crate::project::guest_root().ok_or_else(no_file_access)
}

/// Resolves a user-given path to where it is in the guest: a relative path
/// (`src/main.rs`, `./src`, `.`, or empty for the root) is taken from the
/// project root, an absolute one must be under `/project` or under the
/// project's path on the host ([`HOST_ROOT_ENV`]), which maps onto it.
///
/// # Errors
///
/// [`ToolError::Denied`] when the skill has no file access in this call;
/// [`ToolError::InvalidInput`] when the path leaves the project.
///
/// # Example
///
/// ```no_run
/// # fn main() -> Result<(), agent_skill_sdk::ToolError> {
/// let path = agent_skill_sdk::fs::project_path("src/lib.rs")?;
/// assert_eq!(path, std::path::Path::new("/project/src/lib.rs"));
/// # Ok(()) }
/// ```
pub fn project_path(user_path: &str) -> Result<PathBuf, ToolError> {
    let root = project_root()?;
    resolve(&root, user_path)
}

/// Resolves `user_path` against `root`, the part of [`project_path`] that
/// takes the mount point as a parameter.
///
/// `.` components are dropped and `..` components are applied lexically; a
/// `..` that would go above `root` is refused, as is an absolute path that
/// is under neither `root` nor the host's project path ([`HOST_ROOT_ENV`],
/// when the host gave it).
///
/// # Errors
///
/// [`ToolError::InvalidInput`] when the path leaves the project or is not
/// valid UTF-8.
pub fn resolve(root: &Path, user_path: &str) -> Result<PathBuf, ToolError> {
    let parts = normalize(root, host_root().as_deref(), user_path)?;
    let mut path = root.to_path_buf();
    path.extend(parts);
    Ok(path)
}

/// Resolves `user_path` like [`resolve`] and returns it relative to `root`,
/// `/`-separated, `.` for the root itself: the form to show in answers and
/// to pass to the host (e.g. an `exec` working directory).
///
/// # Errors
///
/// As [`resolve`].
pub fn relative(root: &Path, user_path: &str) -> Result<String, ToolError> {
    let parts = normalize(root, host_root().as_deref(), user_path)?;
    if parts.is_empty() {
        Ok(".".to_string())
    } else {
        Ok(parts.join("/"))
    }
}

/// `path` (a guest path under [`PROJECT_ROOT`]) as the project-relative,
/// `/`-separated text to show the model; `.` for the root. A path outside
/// the root is shown as it is.
pub fn display(path: &Path) -> String {
    match path.strip_prefix(PROJECT_ROOT) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => path.display().to_string(),
    }
}

/// Reads a project file as UTF-8 text (invalid bytes replaced).
///
/// # Errors
///
/// As [`project_path`], and [`io_error`] when the file cannot be read.
pub fn read_to_string(user_path: &str) -> Result<String, ToolError> {
    let path = project_path(user_path)?;
    let bytes = std::fs::read(&path).map_err(|e| io_error(&e, &path, Access::Read))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Writes a project file, creating its parent directories; returns the
/// number of bytes written.
///
/// # Errors
///
/// As [`project_path`], and [`io_error`] when the file cannot be written
/// (a read-only mount means `file:write` was not granted).
pub fn write(user_path: &str, contents: impl AsRef<[u8]>) -> Result<usize, ToolError> {
    let path = project_path(user_path)?;
    let contents = contents.as_ref();
    write_creating_parents(&path, contents)?;
    Ok(contents.len())
}

/// Writes `contents` to `path` (a resolved guest path), creating the
/// missing parent directories.
///
/// The parents are created only when the first write finds them missing:
/// on a read-only mount even a `create_dir_all` of existing directories is
/// refused, and the error must name the file, not its directory.
///
/// # Errors
///
/// [`io_error`] for the file or the directory that could not be written.
pub fn write_creating_parents(path: &Path, contents: &[u8]) -> Result<(), ToolError> {
    match std::fs::write(path, contents) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io_error(&e, parent, Access::Write))?;
            }
            std::fs::write(path, contents).map_err(|e| io_error(&e, path, Access::Write))
        }
        other => other.map_err(|e| io_error(&e, path, Access::Write)),
    }
}

/// Turns an I/O error on `path` into a [`ToolError`] for the model: a
/// missing file becomes [`ToolError::NotFound`], a refusal becomes
/// [`ToolError::Denied`] naming the permission (`file:write` on a read-only
/// mount, `file:read` when nothing is mounted), the rest
/// [`ToolError::Failed`].
pub fn io_error(error: &io::Error, path: &Path, access: Access) -> ToolError {
    // Only a `NotFound` can mean "nothing is mounted"; ask the host only then.
    let mounted = error.kind() != io::ErrorKind::NotFound
        || !path.starts_with(PROJECT_ROOT)
        || crate::project::guest_root().is_some();
    describe(
        error.kind(),
        &error.to_string(),
        Some(&display(path)),
        Some(access),
        mounted,
    )
}

/// The message for an I/O error when the caller knows neither the path nor
/// the kind of access (`?` on a bare [`io::Error`]).
pub(crate) fn describe_io_error(
    kind: io::ErrorKind,
    detail: &str,
    path: Option<&str>,
    access: Option<Access>,
) -> ToolError {
    describe(kind, detail, path, access, true)
}

/// The pure part of [`io_error`]; `mounted` says whether the project is
/// mounted in this call.
fn describe(
    kind: io::ErrorKind,
    detail: &str,
    path: Option<&str>,
    access: Option<Access>,
    mounted: bool,
) -> ToolError {
    let what = path.map_or_else(|| "the file".to_string(), |p| format!("`{p}`"));
    match kind {
        io::ErrorKind::NotFound if !mounted => no_file_access(),
        io::ErrorKind::NotFound => ToolError::NotFound(format!("{what} does not exist")),
        io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem => match access {
            Some(Access::Write) => ToolError::Denied(format!(
                "cannot write {what}: write access was not granted (the skill needs the \
                 `file:write` permission), or the path leads outside the project through a \
                 symlink"
            )),
            Some(Access::Read) => ToolError::Denied(format!(
                "cannot read {what}: it leads outside the project (through a symlink) or is \
                 not readable"
            )),
            None => ToolError::Denied(format!(
                "access to {what} was refused: file access was not granted, or the path leads \
                 outside the project"
            )),
        },
        io::ErrorKind::IsADirectory => ToolError::InvalidInput(format!("{what} is a directory")),
        io::ErrorKind::NotADirectory => {
            ToolError::InvalidInput(format!("a component of {what} is not a directory"))
        }
        io::ErrorKind::AlreadyExists => ToolError::Failed(format!("{what} already exists")),
        _ => ToolError::Failed(match path {
            Some(_) => format!("{what}: {detail}"),
            None => detail.to_string(),
        }),
    }
}

/// The error when nothing is mounted.
fn no_file_access() -> ToolError {
    ToolError::Denied(
        "file access was not granted: the skill needs the `file:read` permission (or \
         `file:write` to change files) declared in its manifest and granted by the user"
            .to_string(),
    )
}

/// The project's path on the host, when the host gave it ([`HOST_ROOT_ENV`]).
fn host_root() -> Option<PathBuf> {
    std::env::var_os(HOST_ROOT_ENV)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

/// The path's components below `root`, after applying `.` and `..`. An
/// absolute path is taken below `host_root` (the project's path on the host)
/// or below `root` (the mount), whole components only: `/home/u/proj2` is
/// not under `/home/u/proj`.
fn normalize(
    root: &Path,
    host_root: Option<&Path>,
    user_path: &str,
) -> Result<Vec<String>, ToolError> {
    let path = Path::new(user_path);
    let rest = if path.has_root() {
        host_root
            .and_then(|h| path.strip_prefix(h).ok())
            .or_else(|| path.strip_prefix(root).ok())
            .ok_or_else(|| {
                let under = match host_root {
                    Some(h) => format!(
                        "{} (or {}, the same directory)",
                        h.display(),
                        root.display()
                    ),
                    None => root.display().to_string(),
                };
                ToolError::InvalidInput(format!(
                    "`{user_path}` is outside the project: use a path relative to the project \
                     root, or an absolute path under {under}"
                ))
            })?
    } else {
        path
    };
    let mut parts: Vec<String> = Vec::new();
    for component in rest.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Err(ToolError::InvalidInput(format!(
                        "`{user_path}` leaves the project: `..` goes above the project root"
                    )));
                }
            }
            Component::Normal(name) => match name.to_str() {
                Some(name) => parts.push(name.to_string()),
                None => {
                    return Err(ToolError::InvalidInput(format!(
                        "`{user_path}` is not valid UTF-8"
                    )));
                }
            },
            Component::RootDir | Component::Prefix(_) => {
                return Err(ToolError::InvalidInput(format!(
                    "`{user_path}` is not a project path"
                )));
            }
        }
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> &'static Path {
        Path::new(PROJECT_ROOT)
    }

    fn ok(p: &str) -> String {
        resolve(root(), p)
            .map(|p| p.display().to_string())
            .unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    fn err(p: &str) -> String {
        match resolve(root(), p) {
            Ok(path) => panic!("{p} resolved to {}", path.display()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn relative_paths_are_taken_from_the_root() {
        assert_eq!(ok("src/main.rs"), "/project/src/main.rs");
        assert_eq!(ok("./src//main.rs"), "/project/src/main.rs");
        assert_eq!(ok("src/../Cargo.toml"), "/project/Cargo.toml");
        assert_eq!(ok("."), "/project");
        assert_eq!(ok(""), "/project");
    }

    /// The model passes the host's absolute path of a project file (Claude Code's own Read
    /// tool requires absolute paths): it maps onto the mount. Everything else stays refused:
    /// a sibling directory sharing the prefix, `..` out of the host path, other paths.
    #[test]
    fn the_hosts_absolute_path_of_the_project_maps_onto_the_mount() {
        let host = Some(Path::new("/home/u/proj"));
        let map = |p: &str| {
            normalize(root(), host, p)
                .map(|parts| parts.join("/"))
                .map_err(|e| e.to_string())
        };
        assert_eq!(map("/home/u/proj/probe.txt").as_deref(), Ok("probe.txt"));
        assert_eq!(
            map("/home/u/proj/src/./a/../lib.rs").as_deref(),
            Ok("src/lib.rs")
        );
        assert_eq!(map("/home/u/proj").as_deref(), Ok(""));
        assert_eq!(map("/home/u/proj/").as_deref(), Ok(""));
        assert_eq!(map("/project/src/lib.rs").as_deref(), Ok("src/lib.rs"));
        assert_eq!(map("src/lib.rs").as_deref(), Ok("src/lib.rs"));
        let refused = map("/home/u/proj2/x").expect_err("sibling prefix");
        assert!(refused.contains("outside the project"), "{refused}");
        assert!(refused.contains("/home/u/proj (or /project"), "{refused}");
        assert!(
            map("/home/u/proj/../proj2/x")
                .expect_err("..")
                .contains("leaves the project")
        );
        assert!(
            map("/home/u/other.txt")
                .expect_err("other")
                .contains("outside the project")
        );
        assert!(
            map("/etc/passwd")
                .expect_err("etc")
                .contains("outside the project")
        );
        // Without the host's path, only the mount is absolute.
        assert!(
            normalize(root(), None, "/home/u/proj/probe.txt")
                .expect_err("no host root")
                .to_string()
                .contains("outside the project")
        );
    }

    #[test]
    fn absolute_paths_must_be_under_the_root() {
        assert_eq!(ok("/project/src/lib.rs"), "/project/src/lib.rs");
        assert_eq!(ok("/project"), "/project");
        assert!(err("/etc/passwd").contains("outside the project"));
        assert!(err("/projectx/a").contains("outside the project"));
    }

    #[test]
    fn dot_dot_above_the_root_is_refused() {
        assert!(err("../secret").contains("leaves the project"));
        assert!(err("src/../../secret").contains("leaves the project"));
        assert!(err("/project/../etc/passwd").contains("leaves the project"));
        assert_eq!(ok("a/b/../../c"), "/project/c");
    }

    #[test]
    fn relative_form_is_slash_separated() {
        assert_eq!(
            relative(root(), "/project/src/./x/").ok().as_deref(),
            Some("src/x")
        );
        assert_eq!(relative(root(), "").ok().as_deref(), Some("."));
    }

    #[test]
    fn display_strips_the_mount_point() {
        assert_eq!(display(Path::new("/project/src/lib.rs")), "src/lib.rs");
        assert_eq!(display(Path::new("/project")), ".");
        assert_eq!(display(Path::new("/tmp/x")), "/tmp/x");
    }

    #[test]
    fn io_errors_name_the_missing_permission() {
        let e = describe(
            io::ErrorKind::NotFound,
            "",
            Some("a.txt"),
            Some(Access::Read),
            false,
        );
        assert!(
            matches!(&e, ToolError::Denied(m) if m.contains("`file:read`")),
            "{e}"
        );
        let e = describe(
            io::ErrorKind::NotFound,
            "",
            Some("a.txt"),
            Some(Access::Read),
            true,
        );
        assert_eq!(e, ToolError::NotFound("`a.txt` does not exist".into()));
        let e = describe(
            io::ErrorKind::PermissionDenied,
            "",
            Some("a"),
            Some(Access::Write),
            true,
        );
        assert!(
            matches!(&e, ToolError::Denied(m) if m.contains("`file:write`")),
            "{e}"
        );
        let e = describe(
            io::ErrorKind::PermissionDenied,
            "",
            Some("a"),
            Some(Access::Read),
            true,
        );
        assert!(
            matches!(&e, ToolError::Denied(m) if m.contains("outside the project")),
            "{e}"
        );
    }
}

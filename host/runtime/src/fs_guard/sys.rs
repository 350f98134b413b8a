//! Path resolution for the guard (Linux: `openat2(RESOLVE_BENEATH)` and
//! `/proc/self/fd`). Other platforms refuse: the guard fails closed.

use std::io;
use std::path::{Path, PathBuf};

/// What a path names, pinned by an `O_PATH` handle.
pub(crate) struct Resolved {
    /// The handle (no read or write access; cannot block).
    pub(crate) fd: std::os::fd::OwnedFd,
    /// Its real host path.
    pub(crate) real: PathBuf,
    /// Its type.
    pub(crate) kind: Kind,
}

/// A file's type, as the guard cares about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only when not followed).
    Symlink,
    /// A FIFO, socket or device: the name for messages.
    Other(&'static str),
}

/// The entry a path names without following its last component: its real
/// parent directory (pinned) and its name.
pub(crate) struct Entry {
    /// The parent directory handle (`O_PATH`).
    pub(crate) parent: std::os::fd::OwnedFd,
    /// The last component.
    pub(crate) name: String,
    /// `parent`'s real path joined with `name`.
    pub(crate) real: PathBuf,
}

/// Splits `path` into its parent (`.` when none) and last component.
/// `None` when the last component is `.`, `..` or empty.
fn split(path: &str) -> Option<(&str, &str)> {
    let trimmed = path.trim_end_matches('/');
    let (parent, name) = match trimmed.rsplit_once('/') {
        Some(("", name)) => ("/", name),
        Some((parent, name)) => (parent, name),
        None => (".", trimmed),
    };
    if name.is_empty() || name == "." || name == ".." {
        return None;
    }
    Some((parent, name))
}

#[cfg(target_os = "linux")]
mod imp {
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::path::PathBuf;

    use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

    use super::{Entry, Kind, Resolved, split};

    /// The real path of an open descriptor.
    pub(crate) fn fd_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
    }

    fn beneath(dir: BorrowedFd<'_>, path: &str, flags: OFlags) -> io::Result<OwnedFd> {
        let path = if path.is_empty() { "." } else { path };
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        let mut tries = 0;
        loop {
            match rustix::fs::openat2(dir, path, flags, Mode::empty(), resolve) {
                Err(rustix::io::Errno::AGAIN) if tries < 8 => tries += 1,
                Err(rustix::io::Errno::XDEV) => {
                    return Err(io::Error::from_raw_os_error(libc_eperm()));
                }
                other => return other.map_err(io::Error::from),
            }
        }
    }

    /// EPERM, the code cap-std gives for a path that leaves its directory.
    fn libc_eperm() -> i32 {
        rustix::io::Errno::PERM.raw_os_error()
    }

    fn kind(fd: BorrowedFd<'_>) -> io::Result<Kind> {
        let st = rustix::fs::fstat(fd)?;
        Ok(match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            FileType::Fifo => Kind::Other("FIFO (named pipe)"),
            FileType::Socket => Kind::Other("socket"),
            FileType::CharacterDevice => Kind::Other("character device"),
            FileType::BlockDevice => Kind::Other("block device"),
            FileType::Unknown => Kind::Other("file of unknown type"),
        })
    }

    /// Resolves `path` beneath `dir` into an `O_PATH` handle; `None` when
    /// it does not exist.
    pub(crate) fn resolve(
        dir: BorrowedFd<'_>,
        path: &str,
        follow: bool,
    ) -> io::Result<Option<Resolved>> {
        let mut flags = OFlags::PATH | OFlags::CLOEXEC;
        if !follow {
            flags |= OFlags::NOFOLLOW;
        }
        let fd = match beneath(dir, path, flags) {
            Ok(fd) => fd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let kind = kind(fd.as_fd())?;
        let real = fd_path(fd.as_fd())?;
        Ok(Some(Resolved { fd, real, kind }))
    }

    /// The entry `path` names beneath `dir`, its last component not
    /// followed. For paths ending in `.` or `..` the entry is the directory
    /// they resolve to (its name empty).
    pub(crate) fn entry(dir: BorrowedFd<'_>, path: &str) -> io::Result<Entry> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        match split(path) {
            Some((parent, name)) => {
                let parent = beneath(dir, parent, flags)?;
                let real = fd_path(parent.as_fd())?.join(name);
                Ok(Entry {
                    parent,
                    name: name.to_string(),
                    real,
                })
            }
            None => {
                let fd = beneath(dir, path, flags)?;
                let real = fd_path(fd.as_fd())?;
                Ok(Entry {
                    parent: fd,
                    name: String::new(),
                    real,
                })
            }
        }
    }

    fn access(read: bool, write: bool) -> OFlags {
        match (read, write) {
            (_, false) => OFlags::RDONLY,
            (false, true) => OFlags::WRONLY,
            (true, true) => OFlags::RDWR,
        }
    }

    /// Opens what `resolved` pins (a regular file or directory) with real
    /// access, without resolving any path again.
    pub(crate) fn reopen(
        resolved: &Resolved,
        read: bool,
        write: bool,
        truncate: bool,
    ) -> io::Result<std::fs::File> {
        use std::os::fd::AsRawFd;
        let mut flags = OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        match resolved.kind {
            Kind::Dir => flags |= OFlags::RDONLY | OFlags::DIRECTORY,
            Kind::File => {
                flags |= access(read, write);
                if truncate {
                    flags |= OFlags::TRUNC;
                }
            }
            _ => return Err(io::Error::from(io::ErrorKind::InvalidInput)),
        }
        let proc = format!("/proc/self/fd/{}", resolved.fd.as_raw_fd());
        let fd = rustix::fs::open(proc.as_str(), flags, Mode::empty())?;
        // The handle pinned this inode; make sure the open did too.
        let want = rustix::fs::fstat(resolved.fd.as_fd())?;
        let got = rustix::fs::fstat(fd.as_fd())?;
        if (want.st_dev, want.st_ino) != (got.st_dev, got.st_ino) {
            return Err(io::Error::other("the file changed while it was opened"));
        }
        Ok(std::fs::File::from(fd))
    }

    /// Creates (or, without `exclusive`, opens) the regular file `name` in
    /// the pinned directory `parent`, never following a symlink there.
    pub(crate) fn create(
        parent: BorrowedFd<'_>,
        name: &str,
        exclusive: bool,
        read: bool,
        truncate: bool,
    ) -> io::Result<(std::fs::File, Kind)> {
        let mut flags = OFlags::CREATE
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY
            | OFlags::NONBLOCK
            | access(read, true);
        if exclusive {
            flags |= OFlags::EXCL;
        }
        if truncate {
            flags |= OFlags::TRUNC;
        }
        let fd = rustix::fs::openat(parent, name, flags, Mode::from_raw_mode(0o666))?;
        let kind = kind(fd.as_fd())?;
        Ok((std::fs::File::from(fd), kind))
    }

    /// Opens `path` for reading only if it is a regular file, without
    /// blocking on a FIFO or device.
    pub(crate) fn open_regular(path: &std::path::Path) -> io::Result<std::fs::File> {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        let fd = rustix::fs::open(path, flags, Mode::empty())?;
        match kind(fd.as_fd())? {
            Kind::File => Ok(std::fs::File::from(fd)),
            Kind::Other(what) => Err(io::Error::other(format!(
                "{} is a {what}, not a regular file",
                path.display()
            ))),
            _ => Err(io::Error::other(format!(
                "{} is not a regular file",
                path.display()
            ))),
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::os::fd::BorrowedFd;
    use std::path::PathBuf;

    use super::{Entry, Resolved};

    fn unsupported() -> io::Error {
        io::Error::new(
            io::ErrorKind::Unsupported,
            "the filesystem guard needs Linux",
        )
    }
    pub(crate) fn fd_path(_: BorrowedFd<'_>) -> io::Result<PathBuf> {
        Err(unsupported())
    }
    pub(crate) fn resolve(_: BorrowedFd<'_>, _: &str, _: bool) -> io::Result<Option<Resolved>> {
        Err(unsupported())
    }
    pub(crate) fn entry(_: BorrowedFd<'_>, _: &str) -> io::Result<Entry> {
        Err(unsupported())
    }
    pub(crate) fn reopen(_: &Resolved, _: bool, _: bool, _: bool) -> io::Result<std::fs::File> {
        Err(unsupported())
    }
    pub(crate) fn create(
        _: BorrowedFd<'_>,
        _: &str,
        _: bool,
        _: bool,
        _: bool,
    ) -> io::Result<(std::fs::File, super::Kind)> {
        Err(unsupported())
    }
    pub(crate) fn open_regular(path: &std::path::Path) -> io::Result<std::fs::File> {
        let f = std::fs::File::open(path)?;
        if f.metadata()?.is_file() {
            Ok(f)
        } else {
            Err(io::Error::other(format!(
                "{} is not a regular file",
                path.display()
            )))
        }
    }
}

pub(crate) use imp::{create, entry, fd_path, reopen, resolve};

/// Opens `path` for reading only if it is a regular file: a FIFO, socket or
/// device in its place is refused without blocking (Linux: `O_NONBLOCK`,
/// then `fstat` on the opened descriptor). For host code that reads project
/// files on a skill's behalf (the security scanner).
///
/// # Errors
/// I/O errors, and an error naming the path when it is not a regular file.
pub fn open_regular(path: &Path) -> io::Result<std::fs::File> {
    imp::open_regular(path)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_names_the_last_component() {
        assert_eq!(split("a/b"), Some(("a", "b")));
        assert_eq!(split("b"), Some((".", "b")));
        assert_eq!(split("a/b/"), Some(("a", "b")));
        assert_eq!(split("/b"), Some(("/", "b")));
        assert_eq!(split("a/.."), None);
        assert_eq!(split("."), None);
        assert_eq!(split(""), None);
    }
}

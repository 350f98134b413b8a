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
    /// The path ended in `/`: it names a directory.
    pub(crate) dir_only: bool,
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

    use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags, Timestamps};
    use rustix::io::Errno;

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
                    dir_only: path.ends_with('/'),
                })
            }
            None => {
                let fd = beneath(dir, path, flags)?;
                let real = fd_path(fd.as_fd())?;
                Ok(Entry {
                    parent: fd,
                    name: String::new(),
                    real,
                    dir_only: true,
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

    // Changes, each made on the entry's pinned parent with its last
    // component only: no path is resolved again between the guard's check
    // and the change, and a symlink in the last component is never
    // followed. `.` and `..` (an empty name) are never acted on.

    /// The name to act on; for `.` and `..` the error `dot` (the kernel's
    /// for that operation on `.`).
    fn last(entry: &Entry, dot: Errno) -> io::Result<&str> {
        if entry.name.is_empty() {
            return Err(dot.into());
        }
        Ok(&entry.name)
    }

    /// Whether `name` in `dir` is a directory itself (not followed).
    fn is_dir(dir: BorrowedFd<'_>, name: &str) -> io::Result<bool> {
        let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(FileType::from_raw_mode(st.st_mode) == FileType::Directory)
    }

    /// A path ending in `/` must name a directory (ENOTDIR otherwise).
    fn dir_if_slashed(entry: &Entry, name: &str) -> io::Result<()> {
        if entry.dir_only && !is_dir(entry.parent.as_fd(), name)? {
            return Err(Errno::NOTDIR.into());
        }
        Ok(())
    }

    /// A new link or symlink cannot have a name ending in `/`: EEXIST when
    /// something is there, ENOENT otherwise.
    fn no_slash_for_new(entry: &Entry, name: &str) -> io::Result<()> {
        if entry.dir_only {
            let exists = rustix::fs::statat(&entry.parent, name, AtFlags::SYMLINK_NOFOLLOW);
            return Err(exists.map_or_else(|e| e, |_| Errno::EXIST).into());
        }
        Ok(())
    }

    /// `mkdirat` (mode 0777, as wasmtime-wasi).
    pub(crate) fn mkdir(entry: &Entry) -> io::Result<()> {
        let name = last(entry, Errno::EXIST)?;
        let mode = Mode::from_raw_mode(0o777);
        Ok(rustix::fs::mkdirat(&entry.parent, name, mode)?)
    }

    /// `unlinkat(AT_REMOVEDIR)`.
    pub(crate) fn rmdir(entry: &Entry) -> io::Result<()> {
        let name = last(entry, Errno::INVAL)?;
        Ok(rustix::fs::unlinkat(
            &entry.parent,
            name,
            AtFlags::REMOVEDIR,
        )?)
    }

    /// `unlinkat` of a file or symlink.
    pub(crate) fn unlink(entry: &Entry) -> io::Result<()> {
        let name = last(entry, Errno::ISDIR)?;
        dir_if_slashed(entry, name)?;
        Ok(rustix::fs::unlinkat(&entry.parent, name, AtFlags::empty())?)
    }

    /// `renameat`; a `/` at the end of either path asks for a directory.
    pub(crate) fn rename(old: &Entry, new: &Entry) -> io::Result<()> {
        let old_name = last(old, Errno::BUSY)?;
        let new_name = last(new, Errno::BUSY)?;
        if (old.dir_only || new.dir_only) && !is_dir(old.parent.as_fd(), old_name)? {
            return Err(Errno::NOTDIR.into());
        }
        Ok(rustix::fs::renameat(
            &old.parent,
            old_name,
            &new.parent,
            new_name,
        )?)
    }

    /// `linkat` without following `old`.
    pub(crate) fn link(old: &Entry, new: &Entry) -> io::Result<()> {
        let old_name = last(old, Errno::PERM)?;
        let new_name = last(new, Errno::EXIST)?;
        dir_if_slashed(old, old_name)?;
        no_slash_for_new(new, new_name)?;
        Ok(rustix::fs::linkat(
            &old.parent,
            old_name,
            &new.parent,
            new_name,
            AtFlags::empty(),
        )?)
    }

    /// `symlinkat(target, parent, name)`.
    pub(crate) fn symlink(target: &str, link: &Entry) -> io::Result<()> {
        let name = last(link, Errno::EXIST)?;
        no_slash_for_new(link, name)?;
        Ok(rustix::fs::symlinkat(target, &link.parent, name)?)
    }

    /// `utimensat(AT_SYMLINK_NOFOLLOW)` on the entry itself (a symlink's
    /// own times); for `.` and `..` the pinned directory.
    pub(crate) fn set_times_nofollow(entry: &Entry, times: &Timestamps) -> io::Result<()> {
        if entry.name.is_empty() {
            return set_times_pinned(entry.parent.as_fd(), times);
        }
        dir_if_slashed(entry, &entry.name)?;
        let flags = AtFlags::SYMLINK_NOFOLLOW;
        Ok(rustix::fs::utimensat(
            &entry.parent,
            entry.name.as_str(),
            times,
            flags,
        )?)
    }

    /// `utimensat` on what `fd` (an `O_PATH` handle) pins, through its
    /// `/proc/self/fd` link, as cap-std does for `O_PATH` handles.
    pub(crate) fn set_times_pinned(fd: BorrowedFd<'_>, times: &Timestamps) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
        let cwd = rustix::fs::CWD;
        Ok(rustix::fs::utimensat(
            cwd,
            proc.as_str(),
            times,
            AtFlags::empty(),
        )?)
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

    use rustix::fs::Timestamps;

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
    pub(crate) fn mkdir(_: &Entry) -> io::Result<()> {
        Err(unsupported())
    }
    pub(crate) fn rmdir(_: &Entry) -> io::Result<()> {
        Err(unsupported())
    }
    pub(crate) fn unlink(_: &Entry) -> io::Result<()> {
        Err(unsupported())
    }
    pub(crate) fn rename(_: &Entry, _: &Entry) -> io::Result<()> {
        Err(unsupported())
    }
    pub(crate) fn link(_: &Entry, _: &Entry) -> io::Result<()> {
        Err(unsupported())
    }
    pub(crate) fn symlink(_: &str, _: &Entry) -> io::Result<()> {
        Err(unsupported())
    }
    pub(crate) fn set_times_nofollow(_: &Entry, _: &Timestamps) -> io::Result<()> {
        Err(unsupported())
    }
    pub(crate) fn set_times_pinned(_: BorrowedFd<'_>, _: &Timestamps) -> io::Result<()> {
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

pub(crate) use imp::{
    create, entry, fd_path, link, mkdir, rename, reopen, resolve, rmdir, set_times_nofollow,
    set_times_pinned, symlink, unlink,
};

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

    #[cfg(target_os = "linux")]
    #[test]
    fn changes_act_on_the_pinned_parent_and_never_through_the_last_component() {
        use std::os::fd::AsFd;
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = std::fs::File::open(tmp.path()).expect("root");
        let root = root.as_fd();
        std::fs::create_dir_all(tmp.path().join("real/sub")).expect("mkdir");
        std::fs::create_dir(tmp.path().join("protected")).expect("mkdir");
        std::fs::write(tmp.path().join("protected/f"), "keep").expect("write");
        std::os::unix::fs::symlink("protected", tmp.path().join("link")).expect("symlink");
        use rustix::io::Errno;
        let errno = |r: std::io::Result<()>| Errno::from_io_error(&r.expect_err("must fail"));
        let e = |p: &str| super::entry(root, p).expect("entry");

        // `.` and `..` are never acted on.
        assert_eq!(errno(super::mkdir(&e("real/."))), Some(Errno::EXIST));
        assert_eq!(errno(super::rmdir(&e("real/sub/.."))), Some(Errno::INVAL));
        assert_eq!(errno(super::unlink(&e("."))), Some(Errno::ISDIR));
        assert!(tmp.path().join("real/sub").is_dir());
        // A symlink in the last component is acted on itself, not followed.
        assert_eq!(errno(super::rmdir(&e("link"))), Some(Errno::NOTDIR));
        assert_eq!(errno(super::unlink(&e("link/"))), Some(Errno::NOTDIR));
        let epoch = rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        let times = rustix::fs::Timestamps {
            last_access: epoch,
            last_modification: epoch,
        };
        let before = std::fs::metadata(tmp.path().join("protected")).expect("stat");
        assert_eq!(
            errno(super::set_times_nofollow(&e("link/"), &times)),
            Some(Errno::NOTDIR)
        );
        super::set_times_nofollow(&e("link"), &times).expect("the symlink's own times");
        let after = std::fs::metadata(tmp.path().join("protected")).expect("stat");
        assert_eq!(before.modified().ok(), after.modified().ok());
        super::unlink(&e("link")).expect("unlink the symlink");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join("protected/f")).expect("kept"),
            "keep"
        );
    }

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

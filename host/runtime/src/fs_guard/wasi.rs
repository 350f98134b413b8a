//! `wasi:filesystem/types` for skills: wasmtime-wasi's implementation with
//! the guard's checks in front of every call that names a path. Opens and
//! changes (create-directory, rename, unlink, remove-directory, link,
//! symlink, set-times) are done by the guard itself on the handles its
//! check pinned, so what was checked is what is changed: nothing resolves
//! the path again, and a directory swapped for a symlink after the check
//! changes nothing.

use std::os::fd::AsFd;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rustix::fs::{Timespec, Timestamps};

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::OpenMode;
use wasmtime_wasi::filesystem::{Descriptor, Dir, File, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{FsError, FsResult};
use wasmtime_wasi_io::streams::{DynInputStream, DynOutputStream};

use super::sys::{self, Kind};
use super::{FsGuard, Intent, Refusal};

/// Whether file operations run on the calling thread. They may: the guard
/// refuses everything that could block indefinitely (FIFOs, sockets,
/// devices) before any blocking call, and a hand-off to tokio's blocking
/// pool per operation costs far more than the operation.
pub(crate) const BLOCKING_ON_CALLER: bool = true;

/// Marker for the linker: `wasi:filesystem/types` through the guard.
pub(crate) struct GuardedFs;

impl HasData for GuardedFs {
    type Data<'a> = GuardedFsView<'a>;
}

/// wasmtime-wasi's filesystem view, and the guard in front of it.
pub(crate) struct GuardedFsView<'a> {
    pub(crate) inner: WasiFilesystemCtxView<'a>,
    pub(crate) guard: &'a FsGuard,
}

/// What a checked path names: its target pinned (followed, existing), or
/// the entry itself in its pinned parent.
enum Checked {
    Target(sys::Resolved),
    Entry(sys::Entry),
}

/// An OS error as wasmtime-wasi reports it (its own conversion).
fn io_error(e: std::io::Error) -> FsError {
    ErrorCode::from(e).into()
}

/// `utimensat`'s times for WASI's, converted as wasmtime-wasi converts
/// them (`now` is the host's clock now, out-of-range times overflow).
fn timestamps(atim: types::NewTimestamp, mtim: types::NewTimestamp) -> FsResult<Timestamps> {
    fn one(t: types::NewTimestamp) -> Result<Timespec, ErrorCode> {
        let since_epoch = match t {
            types::NewTimestamp::NoChange => {
                return Ok(Timespec {
                    tv_sec: 0,
                    tv_nsec: rustix::fs::UTIME_OMIT,
                });
            }
            types::NewTimestamp::Now => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_err(|_| ErrorCode::Overflow)?,
            types::NewTimestamp::Timestamp(t) => std::time::Duration::new(
                t.seconds
                    .checked_add(u64::from(t.nanoseconds / 1_000_000_000))
                    .ok_or(ErrorCode::Overflow)?,
                t.nanoseconds % 1_000_000_000,
            ),
        };
        Ok(Timespec {
            tv_sec: since_epoch
                .as_secs()
                .try_into()
                .map_err(|_| ErrorCode::Overflow)?,
            tv_nsec: since_epoch.subsec_nanos().into(),
        })
    }
    Ok(Timestamps {
        last_access: one(atim)?,
        last_modification: one(mtim)?,
    })
}

fn code(refusal: &Refusal) -> ErrorCode {
    match refusal {
        Refusal::AgentState(_) | Refusal::NotRegular(_) => ErrorCode::Access,
        Refusal::GitMetadata | Refusal::SkillsDir | Refusal::AgentDir => ErrorCode::ReadOnly,
        Refusal::SymlinkOutside(_) | Refusal::SymlinkIntoAgentState(_) => ErrorCode::NotPermitted,
    }
}

impl GuardedFsView<'_> {
    fn dir(&self, fd: &Resource<Descriptor>) -> FsResult<Dir> {
        match self.inner.table.get(fd)? {
            Descriptor::Dir(d) => Ok(d.clone()),
            Descriptor::File(_) => Err(ErrorCode::NotDirectory.into()),
        }
    }

    fn refuse<T>(&self, real: &Path, intent: Intent, refusal: Refusal) -> FsResult<T> {
        self.guard.audit(real, intent, &refusal);
        Err(code(&refusal).into())
    }

    fn allow(&self, real: &Path, intent: Intent) -> FsResult<()> {
        match self.guard.policy.check(real, intent) {
            Ok(()) => Ok(()),
            Err(r) => self.refuse(real, intent, r),
        }
    }

    /// Checks the entry `path` names in `fd` (last component not followed).
    fn check_entry(
        &self,
        fd: &Resource<Descriptor>,
        path: &str,
        intent: Intent,
    ) -> FsResult<sys::Entry> {
        let dir = self.dir(fd)?;
        let entry = sys::entry(dir.dir.as_fd(), path).map_err(io_error)?;
        self.allow(&entry.real, intent)?;
        Ok(entry)
    }

    /// Checks what `path` names in `fd`, following its last component when
    /// `follow` and it exists.
    fn check_path(
        &self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
        intent: Intent,
    ) -> FsResult<Checked> {
        if follow {
            let dir = self.dir(fd)?;
            if let Some(r) = sys::resolve(dir.dir.as_fd(), path, true).map_err(io_error)? {
                self.allow(&r.real, intent)?;
                return Ok(Checked::Target(r));
            }
        }
        self.check_entry(fd, path, intent).map(Checked::Entry)
    }

    /// wasmtime-wasi's rule for changes: the mount must be writable.
    fn writable(&self, fd: &Resource<Descriptor>) -> FsResult<Dir> {
        let dir = self.dir(fd)?;
        if dir.perms.write_not_permitted() {
            return Err(ErrorCode::NotPermitted.into());
        }
        Ok(dir)
    }

    /// [`Self::writable`] for both directories of a rename or link, which
    /// must also have the same permissions (wasmtime-wasi's rule).
    fn both_writable(&self, a: &Resource<Descriptor>, b: &Resource<Descriptor>) -> FsResult<()> {
        let (a, b) = (self.writable(a)?, self.writable(b)?);
        if a.perms != b.perms {
            return Err(ErrorCode::NotPermitted.into());
        }
        Ok(())
    }

    /// Checks a descriptor's own host path.
    fn check_descriptor(&self, fd: &Resource<Descriptor>, intent: Intent) -> FsResult<()> {
        let real = match self.inner.table.get(fd)? {
            Descriptor::Dir(d) => sys::fd_path(d.dir.as_fd()),
            Descriptor::File(f) => sys::fd_path(f.file.as_fd()),
        }
        .map_err(io_error)?;
        self.allow(&real, intent)
    }

    async fn guarded_open(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        use types::{DescriptorFlags as D, OpenFlags as O};
        let dir = self.dir(&fd)?;
        let create = oflags.contains(O::CREATE);
        let truncate = oflags.contains(O::TRUNCATE);
        let mut mode = OpenMode::empty();
        if create || truncate || flags.contains(D::WRITE) {
            mode |= OpenMode::WRITE;
        }
        if flags.contains(D::READ) || !flags.contains(D::WRITE) {
            mode |= OpenMode::READ;
        }
        if flags.contains(D::FILE_INTEGRITY_SYNC)
            || flags.contains(D::DATA_INTEGRITY_SYNC)
            || flags.contains(D::REQUESTED_WRITE_SYNC)
        {
            return Err(ErrorCode::Unsupported.into());
        }
        if oflags.contains(O::DIRECTORY) && (create || truncate || oflags.contains(O::EXCLUSIVE)) {
            return Err(ErrorCode::Invalid.into());
        }
        let write = mode.contains(OpenMode::WRITE);
        if dir.perms.write_not_permitted() && write {
            return Err(ErrorCode::NotPermitted.into());
        }
        let intent = if write { Intent::Write } else { Intent::Read };
        let read = mode.contains(OpenMode::READ);
        let follow = path_flags.contains(types::PathFlags::SYMLINK_FOLLOW);

        let resolved = sys::resolve(dir.dir.as_fd(), &path, follow).map_err(io_error)?;
        let descriptor = match resolved {
            Some(r) => {
                self.allow(&r.real, intent)?;
                if create && oflags.contains(O::EXCLUSIVE) {
                    return Err(ErrorCode::Exist.into());
                }
                match r.kind {
                    Kind::Dir if write => return Err(ErrorCode::IsDirectory.into()),
                    Kind::File if oflags.contains(O::DIRECTORY) => {
                        return Err(ErrorCode::NotDirectory.into());
                    }
                    Kind::Symlink => return Err(ErrorCode::Loop.into()),
                    Kind::Other(what) => {
                        return self.refuse(&r.real, intent, Refusal::NotRegular(what));
                    }
                    Kind::Dir | Kind::File => {}
                }
                let opened = sys::reopen(&r, read, write, truncate).map_err(io_error)?;
                if r.kind == Kind::Dir {
                    Descriptor::Dir(Dir::new(opened, dir.perms, mode, BLOCKING_ON_CALLER))
                } else {
                    Descriptor::File(File::new(opened, dir.perms, mode, BLOCKING_ON_CALLER))
                }
            }
            None if !create => return Err(ErrorCode::NoEntry.into()),
            None => {
                let entry = self.check_entry(&fd, &path, Intent::Write)?;
                if entry.name.is_empty() {
                    return Err(ErrorCode::Invalid.into());
                }
                let exclusive = oflags.contains(O::EXCLUSIVE);
                let (file, kind) =
                    sys::create(entry.parent.as_fd(), &entry.name, exclusive, read, truncate)
                        .map_err(io_error)?;
                if let Kind::Other(what) = kind {
                    return self.refuse(&entry.real, intent, Refusal::NotRegular(what));
                }
                Descriptor::File(File::new(file, dir.perms, mode, BLOCKING_ON_CALLER))
            }
        };
        Ok(self.inner.table.push(descriptor)?)
    }
}

impl types::Host for GuardedFsView<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.inner, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        types::Host::filesystem_error_code(&mut self.inner, err)
    }
}

impl HostDescriptor for GuardedFsView<'_> {
    async fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        self.inner.advise(fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync_data(fd).await
    }

    async fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorFlags> {
        self.inner.get_flags(fd).await
    }

    async fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorType> {
        self.inner.get_type(fd).await
    }

    async fn set_size(&mut self, fd: Resource<Descriptor>, size: types::Filesize) -> FsResult<()> {
        // Only descriptors opened for writing can change size, and the guard
        // never opens a protected file for writing.
        self.inner.set_size(fd, size).await
    }

    async fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.check_descriptor(&fd, Intent::Write)?;
        self.inner.set_times(fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.inner.read(fd, len, offset).await
    }

    async fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        self.inner.write(fd, buf, offset).await
    }

    async fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<types::DirectoryEntryStream>> {
        self.inner.read_directory(fd).await
    }

    async fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync(fd).await
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let entry = self.check_entry(&fd, &path, Intent::Write)?;
        self.writable(&fd)?;
        sys::mkdir(&entry).map_err(io_error)
    }

    async fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorStat> {
        self.inner.stat(fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        let follow = path_flags.contains(types::PathFlags::SYMLINK_FOLLOW);
        self.check_path(&fd, &path, follow, Intent::Read)?;
        self.inner.stat_at(fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        let follow = path_flags.contains(types::PathFlags::SYMLINK_FOLLOW);
        let checked = self.check_path(&fd, &path, follow, Intent::Write)?;
        let times = timestamps(atim, mtim)?;
        self.writable(&fd)?;
        match checked {
            Checked::Target(target) => sys::set_times_pinned(target.fd.as_fd(), &times),
            // Followed, and nothing (or a dangling symlink) is there.
            Checked::Entry(_) if follow => return Err(ErrorCode::NoEntry.into()),
            Checked::Entry(entry) => sys::set_times_nofollow(&entry, &times),
        }
        .map_err(io_error)
    }

    async fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        // A hard link to a protected file would make it writable elsewhere.
        let old = self.check_entry(&fd, &old_path, Intent::Write)?;
        let new = self.check_entry(&new_descriptor, &new_path, Intent::Replace)?;
        self.both_writable(&fd, &new_descriptor)?;
        if old_path_flags.contains(types::PathFlags::SYMLINK_FOLLOW) {
            return Err(ErrorCode::Invalid.into());
        }
        sys::link(&old, &new).map_err(io_error)
    }

    async fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        self.guarded_open(fd, path_flags, path, oflags, flags).await
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        HostDescriptor::drop(&mut self.inner, fd)
    }

    async fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        self.check_entry(&fd, &path, Intent::Read)?;
        self.inner.readlink_at(fd, path).await
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let entry = self.check_entry(&fd, &path, Intent::Replace)?;
        self.writable(&fd)?;
        sys::rmdir(&entry).map_err(io_error)
    }

    async fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let old = self.check_entry(&fd, &old_path, Intent::Replace)?;
        let new = self.check_entry(&new_fd, &new_path, Intent::Replace)?;
        self.both_writable(&fd, &new_fd)?;
        sys::rename(&old, &new).map_err(io_error)
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        let link = self.check_entry(&fd, &dest_path, Intent::Replace)?;
        let resolved = match link.real.parent() {
            Some(parent) if !Path::new(&src_path).is_absolute() => {
                let policy = &self.guard.policy;
                let rel = parent.strip_prefix(policy.root()).unwrap_or(Path::new(""));
                let within = rel.join(&src_path);
                let root = std::fs::File::open(policy.root()).map_err(io_error)?;
                match sys::resolve(root.as_fd(), &within.to_string_lossy(), true) {
                    Ok(found) => found.map(|r| r.real),
                    Err(e) if e.raw_os_error() == Some(rustix_eperm()) => {
                        return self.refuse(
                            &link.real,
                            Intent::Write,
                            Refusal::SymlinkOutside(src_path),
                        );
                    }
                    Err(_) => None,
                }
            }
            _ => None,
        };
        if let Err(r) = self
            .guard
            .policy
            .check_symlink(&link.real, &src_path, resolved.as_deref())
        {
            return self.refuse(&link.real, Intent::Write, r);
        }
        self.writable(&fd)?;
        sys::symlink(&src_path, &link).map_err(io_error)
    }

    async fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let entry = self.check_entry(&fd, &path, Intent::Replace)?;
        self.writable(&fd)?;
        sys::unlink(&entry).map_err(io_error)
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynInputStream>> {
        self.inner.read_via_stream(fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.inner.write_via_stream(fd, offset)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.inner.append_via_stream(fd)
    }

    async fn is_same_object(
        &mut self,
        a: Resource<Descriptor>,
        b: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        self.inner.is_same_object(a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<types::MetadataHashValue> {
        self.inner.metadata_hash(fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        // Not guarded: a hash of device and inode numbers reveals nothing,
        // and wasi-libc's `readdir` asks it for every entry it lists.
        self.inner.metadata_hash_at(fd, path_flags, path).await
    }
}

/// The error code the guard's resolution gives for a path leaving its
/// directory.
fn rustix_eperm() -> i32 {
    rustix::io::Errno::PERM.raw_os_error()
}

impl HostDirectoryEntryStream for GuardedFsView<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        self.inner.read_directory_entry(stream).await
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}

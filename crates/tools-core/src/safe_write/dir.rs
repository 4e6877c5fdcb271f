//! Directory handles reached from the workspace root one component at a time.
//!
//! Every folder on the way to a file is opened with `openat(…, O_PATH | O_NOFOLLOW |
//! O_DIRECTORY)` relative to the folder before it, starting at the root (`O_PATH` needs only
//! search permission, as a path lookup does). A folder that was swapped for a
//! symbolic link after the jail checked the path (to the outside or anywhere else) makes
//! the open fail instead of being followed; every later step (stat, temp file, rename,
//! unlink) happens relative to the handle, so no path is looked up twice.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path};

use super::FileError;

/// What is at a name inside a folder (`lstat`, never following a link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A regular file.
    File,
    /// A folder.
    Directory,
    /// A symbolic link.
    Symlink,
    /// A FIFO, socket or device, named for messages.
    Special(&'static str),
}

/// `lstat` facts about an entry.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub kind: EntryKind,
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
    pub nlink: u64,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
}

impl Entry {
    pub(crate) fn from_stat(st: &libc::stat) -> Entry {
        let fmt = st.st_mode & libc::S_IFMT;
        let kind = match fmt {
            libc::S_IFREG => EntryKind::File,
            libc::S_IFDIR => EntryKind::Directory,
            libc::S_IFLNK => EntryKind::Symlink,
            libc::S_IFIFO => EntryKind::Special("FIFO (named pipe)"),
            libc::S_IFSOCK => EntryKind::Special("socket"),
            libc::S_IFCHR => EntryKind::Special("character device"),
            libc::S_IFBLK => EntryKind::Special("block device"),
            _ => EntryKind::Special("special file"),
        };
        Entry {
            kind,
            mode: st.st_mode & 0o7777,
            uid: st.st_uid,
            gid: st.st_gid,
            nlink: st.st_nlink,
            dev: st.st_dev,
            ino: st.st_ino,
            size: u64::try_from(st.st_size).unwrap_or(0),
        }
    }
}

/// An open folder of the workspace.
#[derive(Debug)]
pub(crate) struct Dir {
    fd: OwnedFd,
}

fn c_name(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the name contains a NUL byte"))
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

impl Dir {
    fn open_path(path: &Path) -> io::Result<Dir> {
        let c = c_name(path.as_os_str())?;
        // SAFETY: `c` is a valid NUL-terminated string; the returned fd is owned below.
        let fd = check(unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: `fd` was just returned by a successful open and is owned by nobody else.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn open_child(&self, name: &OsStr) -> io::Result<Dir> {
        let c = c_name(name)?;
        // SAFETY: valid fd and NUL-terminated name; the fd returned is owned below.
        let fd = check(unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: `fd` was just returned by a successful openat.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn make_child(&self, name: &OsStr) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: valid fd and NUL-terminated name. The umask applies to 0o777, as for mkdir.
        match check(unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), 0o777) }) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// `lstat` of `name` in this folder; `None` when nothing is there.
    pub(crate) fn entry(&self, name: &OsStr) -> io::Result<Option<Entry>> {
        let c = c_name(name)?;
        let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: valid fd, name and out-pointer; `st` is read only after success.
        let r = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                st.as_mut_ptr(),
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::NotFound {
                Ok(None)
            } else {
                Err(e)
            };
        }
        // SAFETY: fstatat succeeded, so `st` is initialised.
        let st = unsafe { st.assume_init() };
        Ok(Some(Entry::from_stat(&st)))
    }

    /// Opens `name` with `flags` plus `O_NOFOLLOW | O_CLOEXEC | O_NOCTTY`; `mode` is used
    /// only when `flags` creates the file.
    pub(crate) fn open_file(
        &self,
        name: &OsStr,
        flags: libc::c_int,
        mode: u32,
    ) -> io::Result<File> {
        let c = c_name(name)?;
        let flags = flags | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY;
        // SAFETY: valid fd and name; the variadic mode is passed as c_uint as open(2) expects.
        let fd = check(unsafe {
            libc::openat(self.fd.as_raw_fd(), c.as_ptr(), flags, mode as libc::c_uint)
        })?;
        // SAFETY: `fd` was just returned by a successful openat.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Whether this process may write the file `name` (its effective ids, `faccessat`).
    pub(crate) fn may_write(&self, name: &OsStr) -> io::Result<bool> {
        let c = c_name(name)?;
        // SAFETY: valid fd and name.
        let r = unsafe {
            libc::faccessat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                libc::W_OK,
                libc::AT_EACCESS,
            )
        };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EACCES) | Some(libc::EROFS) | Some(libc::EPERM) => Ok(false),
            _ => Err(e),
        }
    }

    /// Renames `from` to `to`, both in this folder (replacing `to`, never following it).
    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (f, t) = (c_name(from)?, c_name(to)?);
        let fd = self.fd.as_raw_fd();
        // SAFETY: valid fd and names.
        check(unsafe { libc::renameat(fd, f.as_ptr(), fd, t.as_ptr()) }).map(|_| ())
    }

    /// Removes the file `name` of this folder (a link itself, never its target).
    pub(crate) fn unlink(&self, name: &OsStr) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: valid fd and name.
        check(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), 0) }).map(|_| ())
    }

    /// Flushes the folder itself, so a rename or unlink survives a crash. The handle only
    /// locates the folder (`O_PATH`), so the folder is opened for reading to be flushed.
    pub(crate) fn sync(&self) -> io::Result<()> {
        let dot = c_name(OsStr::new("."))?;
        // SAFETY: valid fd and name; the fd returned is owned below.
        let fd = check(unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                dot.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: `fd` was just returned by a successful openat.
        let dir = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: valid fd.
        check(unsafe { libc::fsync(dir.as_raw_fd()) }).map(|_| ())
    }
}

/// `fstat` of an open file.
pub(crate) fn entry_of(file: &File) -> io::Result<Entry> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: valid fd and out-pointer; read only after success.
    check(unsafe { libc::fstat(file.as_raw_fd(), st.as_mut_ptr()) })?;
    // SAFETY: fstat succeeded.
    let st = unsafe { st.assume_init() };
    Ok(Entry::from_stat(&st))
}

/// Gives an open file an owner (best effort: only a privileged process may give a file
/// away) and then a mode (after the owner, because a change of owner clears set-id bits).
pub(crate) fn set_owner_and_mode(
    file: &File,
    owner: Option<(u32, u32)>,
    mode: u32,
) -> io::Result<()> {
    let fd = file.as_raw_fd();
    if let Some((uid, gid)) = owner {
        // SAFETY: valid fd. EPERM is expected for an unprivileged process and ignored.
        let _ = unsafe { libc::fchown(fd, uid, gid) };
    }
    // SAFETY: valid fd.
    check(unsafe { libc::fchmod(fd, mode as libc::mode_t) }).map(|_| ())
}

/// Opens the folder that holds `path` (absolute, inside `root`), walking from `root` with
/// `O_NOFOLLOW` on every component; with `create`, missing folders are made on the way.
/// Returns the folder and the file's name in it.
pub(crate) fn open_parent(
    root: &Path,
    path: &Path,
    create: bool,
) -> Result<(Dir, OsString), FileError> {
    let rel = path.strip_prefix(root).map_err(|_| FileError::Outside)?;
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => names.push(n.to_os_string()),
            Component::CurDir => {}
            _ => return Err(FileError::Outside),
        }
    }
    let Some(file_name) = names.pop() else {
        return Err(FileError::Directory);
    };
    let mut dir = Dir::open_path(root)?;
    let mut walked = std::path::PathBuf::new();
    for name in &names {
        walked.push(name);
        let opened = match dir.open_child(name) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {
                dir.make_child(name)?;
                // The new folder's name must survive a power loss with the file put in it.
                dir.sync()?;
                dir.open_child(name)
            }
            other => other,
        };
        dir = match opened {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(FileError::NotFound),
            // ELOOP: the component is a symbolic link; ENOTDIR: it is something else.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR)) => {
                let shown = walked.display().to_string();
                return Err(match dir.entry(name).ok().flatten().map(|e| e.kind) {
                    Some(EntryKind::Symlink) | None => FileError::PathSwapped(shown),
                    Some(_) => FileError::NotAFolder(shown),
                });
            }
            Err(e) => return Err(FileError::Io(e)),
        };
    }
    Ok((dir, file_name))
}

//! Directory handles reached from the workspace root one component at a time, on Unix.
//!
//! Every folder on the way to a file is opened with `openat(…, O_NOFOLLOW | O_DIRECTORY)`
//! relative to the folder before it, starting at the root. On Linux the handle is `O_PATH`
//! (it needs only search permission, as a path lookup does); elsewhere `O_PATH` does not
//! exist and the folder is opened for reading. A folder that was swapped for a symbolic link
//! after the jail checked the path (to the outside or anywhere else) makes the open fail
//! instead of being followed; every later step (stat, temp file, rename, unlink) happens
//! relative to the handle, so no path is looked up twice.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::platform::entry::{Entry, EntryKind};

/// How a folder handle of the walk is opened: only to locate it where the OS allows that.
#[cfg(target_os = "linux")]
const LOCATE_DIR: libc::c_int = libc::O_PATH;
#[cfg(not(target_os = "linux"))]
const LOCATE_DIR: libc::c_int = libc::O_RDONLY;

// The field types of `stat` differ by OS (`st_mode` is 16 bits on macOS, `st_nlink` too),
// so the widening below is a no-op on some and needed on others.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn entry_from_stat(st: &libc::stat) -> Entry {
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
        mode: u32::from(st.st_mode & 0o7777),
        uid: st.st_uid,
        gid: st.st_gid,
        nlink: st.st_nlink as u64,
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
        size: u64::try_from(st.st_size).unwrap_or(0),
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
    /// Opens the folder at `path` (the workspace root) as the walk's starting point.
    pub(crate) fn open_path(path: &Path) -> io::Result<Dir> {
        let c = c_name(path.as_os_str())?;
        // SAFETY: `c` is a valid NUL-terminated string; the returned fd is owned below.
        let fd = check(unsafe {
            libc::open(c.as_ptr(), LOCATE_DIR | libc::O_DIRECTORY | libc::O_CLOEXEC)
        })?;
        // SAFETY: `fd` was just returned by a successful open and is owned by nobody else.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Opens the folder `name` of this folder, never following a link.
    pub(crate) fn open_child(&self, name: &OsStr) -> io::Result<Dir> {
        let c = c_name(name)?;
        // SAFETY: valid fd and NUL-terminated name; the fd returned is owned below.
        let fd = check(unsafe {
            libc::openat(
                self.fd.as_raw_fd(),
                c.as_ptr(),
                LOCATE_DIR | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        })?;
        // SAFETY: `fd` was just returned by a successful openat.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Makes the folder `name` here (nothing when it exists).
    pub(crate) fn make_child(&self, name: &OsStr) -> io::Result<()> {
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
        Ok(Some(entry_from_stat(&st)))
    }

    /// Opens the existing file `name` for reading, never following a link, never waiting
    /// (a FIFO swapped in after the caller's check does not block the open).
    pub(crate) fn open_read(&self, name: &OsStr) -> io::Result<File> {
        self.open_file(name, libc::O_RDONLY | libc::O_NONBLOCK, 0)
    }

    /// Opens the existing file `name` for reading and writing, as [`Dir::open_read`].
    pub(crate) fn open_read_write(&self, name: &OsStr) -> io::Result<File> {
        self.open_file(name, libc::O_RDWR | libc::O_NONBLOCK, 0)
    }

    /// Creates the file `name` with `mode` (before the umask); fails when anything,
    /// a link included, already has that name.
    pub(crate) fn create_new(&self, name: &OsStr, mode: u32) -> io::Result<File> {
        self.open_file(name, libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL, mode)
    }

    /// Opens `name` with `flags` plus `O_NOFOLLOW | O_CLOEXEC | O_NOCTTY`; `mode` is used
    /// only when `flags` creates the file.
    fn open_file(&self, name: &OsStr, flags: libc::c_int, mode: u32) -> io::Result<File> {
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

    /// Flushes the folder itself, so a rename or unlink survives a crash. The handle may
    /// only locate the folder (`O_PATH`), so the folder is opened for reading to be flushed.
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

/// Whether opening a folder of the walk failed because the name is a symbolic link
/// (`ELOOP`) or not a folder at all (`ENOTDIR`).
pub(crate) fn is_link_or_not_folder(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::ENOTDIR))
}

/// Why `name` cannot be a file's name here: never on Unix, where every name but `/` and
/// NUL (which never reach a single component) is a file's own.
pub(crate) fn reserved_name(_name: &OsStr) -> Option<&'static str> {
    None
}

/// `fstat` of an open file.
pub(crate) fn entry_of(file: &File) -> io::Result<Entry> {
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: valid fd and out-pointer; read only after success.
    check(unsafe { libc::fstat(file.as_raw_fd(), st.as_mut_ptr()) })?;
    // SAFETY: fstat succeeded.
    let st = unsafe { st.assume_init() };
    Ok(entry_from_stat(&st))
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

//! The jailed folder walk on Windows: every folder on the way to a file is opened from the
//! root one name at a time, never through a link or junction, and held open so it stays
//! where the walk found it.
//!
//! Each folder is opened with `FILE_FLAG_OPEN_REPARSE_POINT` (a symbolic link or junction is
//! opened itself, never followed) and refused unless it is a plain folder. Its handle is
//! held without `FILE_SHARE_DELETE`, so while the walk holds it the folder cannot be renamed,
//! removed or swapped for a link, and Windows refuses to rename a folder above an open one:
//! the path the walk checked keeps naming the folder it opened. Every name inside is then
//! used under that path, with the last component itself never followed (files opened with
//! `FILE_FLAG_OPEN_REPARSE_POINT` and checked after the open, links removed or replaced as
//! links). Names Windows would read as something else are refused before any call: the
//! reserved device names (`CON`, `NUL`, `aux.txt`, `COM1`…), names ending in a dot or space
//! (which Windows strips) and names with `:` (an alternate data stream) or another character
//! Windows forbids.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};

use windows_sys::Win32::Foundation::{
    ERROR_ACCESS_DENIED, ERROR_DIRECTORY, ERROR_REPARSE_POINT_ENCOUNTERED, ERROR_SHARING_VIOLATION,
};
use windows_sys::Win32::Storage::FileSystem::{
    BY_HANDLE_FILE_INFORMATION, FILE_ATTRIBUTE_DEVICE, FILE_ATTRIBUTE_DIRECTORY,
    FILE_ATTRIBUTE_READONLY, FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_BACKUP_SEMANTICS,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_LIST_DIRECTORY, FILE_READ_ATTRIBUTES, FILE_SHARE_DELETE,
    FILE_SHARE_READ, FILE_SHARE_WRITE, GetFileInformationByHandle,
};

use crate::platform::entry::{Entry, EntryKind};

/// How long a rename over a file that a reader holds open is tried again.
const RENAME_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// Device names Windows resolves in every folder, with or without an extension.
const RESERVED: [&str; 24] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9", "CONIN$",
    "CONOUT$",
];

/// Why `name` cannot be a file's name on Windows, or `None` when it can.
pub(crate) fn reserved_name(name: &OsStr) -> Option<&'static str> {
    let name = name.to_string_lossy();
    let stem = name.split('.').next().unwrap_or("").trim_end_matches(' ');
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(stem)) {
        return Some("is a device name Windows reserves in every folder");
    }
    if name.ends_with('.') || name.ends_with(' ') {
        return Some("ends in a dot or space, which Windows strips (it would name another file)");
    }
    if name.contains(':') {
        return Some("contains `:`, which Windows reads as an alternate data stream");
    }
    if name
        .chars()
        .any(|c| matches!(c, '<' | '>' | '"' | '|' | '?' | '*') || u32::from(c) < 32)
    {
        return Some("contains a character Windows forbids in file names");
    }
    None
}

/// The error for a name [`reserved_name`] refuses.
fn refused(name: &OsStr) -> io::Result<()> {
    match reserved_name(name) {
        Some(why) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` {why}", name.to_string_lossy()),
        )),
        None => Ok(()),
    }
}

/// The handle's facts: attributes, names, volume and file index, size.
fn information(file: &File) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    let mut info = BY_HANDLE_FILE_INFORMATION::default();
    // SAFETY: a valid open handle and a valid out-buffer.
    if unsafe { GetFileInformationByHandle(file.as_raw_handle(), &raw mut info) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

fn entry_from_information(info: &BY_HANDLE_FILE_INFORMATION) -> Entry {
    let attrs = info.dwFileAttributes;
    let kind = if attrs & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        // Symbolic links, junctions and every other reparse point: never followed.
        EntryKind::Symlink
    } else if attrs & FILE_ATTRIBUTE_DIRECTORY != 0 {
        EntryKind::Directory
    } else if attrs & FILE_ATTRIBUTE_DEVICE != 0 {
        EntryKind::Special("device")
    } else {
        EntryKind::File
    };
    Entry {
        kind,
        mode: if attrs & FILE_ATTRIBUTE_READONLY != 0 {
            0o444
        } else {
            0o666
        },
        uid: 0,
        gid: 0,
        nlink: u64::from(info.nNumberOfLinks),
        dev: u64::from(info.dwVolumeSerialNumber),
        ino: (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
        size: (u64::from(info.nFileSizeHigh) << 32) | u64::from(info.nFileSizeLow),
    }
}

/// Opens what is at `path` itself (a link is not followed), folders included.
fn open_itself(path: &Path, options: &mut OpenOptions, flags: u32) -> io::Result<File> {
    options
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS | flags)
        .open(path)
}

/// An open folder of the workspace: its path and a handle that keeps it there.
#[derive(Debug)]
pub(crate) struct Dir {
    path: PathBuf,
    _held: File,
}

/// Opens the folder at `path` for the walk, held without delete sharing; `follow` says
/// whether a link at `path` itself is followed (only for the root, which the user chose).
fn hold_folder(path: &Path, follow: bool) -> io::Result<Dir> {
    let mut o = OpenOptions::new();
    o.access_mode(FILE_LIST_DIRECTORY | FILE_READ_ATTRIBUTES)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE);
    let held = if follow {
        o.custom_flags(FILE_FLAG_BACKUP_SEMANTICS).open(path)?
    } else {
        open_itself(path, &mut o, 0)?
    };
    let info = information(&held)?;
    if info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(io::Error::from_raw_os_error(
            ERROR_REPARSE_POINT_ENCOUNTERED as i32,
        ));
    }
    if info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY == 0 {
        return Err(io::Error::from_raw_os_error(ERROR_DIRECTORY as i32));
    }
    Ok(Dir {
        path: path.to_path_buf(),
        _held: held,
    })
}

impl Dir {
    /// Opens the folder at `path` (the workspace root) as the walk's starting point.
    pub(crate) fn open_path(path: &Path) -> io::Result<Dir> {
        hold_folder(path, true)
    }

    /// The path of `name` in this folder, once the name is one Windows reads as itself.
    fn child(&self, name: &OsStr) -> io::Result<PathBuf> {
        refused(name)?;
        Ok(self.path.join(name))
    }

    /// Opens the folder `name` of this folder, never following a link or junction.
    pub(crate) fn open_child(&self, name: &OsStr) -> io::Result<Dir> {
        hold_folder(&self.child(name)?, false)
    }

    /// Makes the folder `name` here (nothing when it exists).
    pub(crate) fn make_child(&self, name: &OsStr) -> io::Result<()> {
        match std::fs::create_dir(self.child(name)?) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
            other => other,
        }
    }

    /// What is at `name` in this folder (a link itself); `None` when nothing is there.
    pub(crate) fn entry(&self, name: &OsStr) -> io::Result<Option<Entry>> {
        let path = self.child(name)?;
        let mut o = OpenOptions::new();
        o.access_mode(FILE_READ_ATTRIBUTES)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE);
        match open_itself(&path, &mut o, 0) {
            Ok(f) => Ok(Some(entry_from_information(&information(&f)?))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Opens the existing file `name` for reading, never following a link (the caller
    /// checks what was opened with [`entry_of`]).
    pub(crate) fn open_read(&self, name: &OsStr) -> io::Result<File> {
        open_itself(&self.child(name)?, OpenOptions::new().read(true), 0)
    }

    /// Opens the existing file `name` for reading and writing, as [`Dir::open_read`].
    pub(crate) fn open_read_write(&self, name: &OsStr) -> io::Result<File> {
        open_itself(
            &self.child(name)?,
            OpenOptions::new().read(true).write(true),
            0,
        )
    }

    /// Creates the file `name`; fails when anything, a link included, already has that
    /// name. Windows has no mode bits: the mode is not used.
    pub(crate) fn create_new(&self, name: &OsStr, _mode: u32) -> io::Result<File> {
        open_itself(
            &self.child(name)?,
            OpenOptions::new().write(true).create_new(true),
            0,
        )
    }

    /// Whether the file `name` may be written: not marked read-only.
    pub(crate) fn may_write(&self, name: &OsStr) -> io::Result<bool> {
        Ok(self.entry(name)?.is_some_and(|e| e.mode & 0o222 != 0))
    }

    /// Renames `from` to `to`, both in this folder (replacing `to`, a link itself when it
    /// is one). Where the system cannot replace a file that is open (Windows before its
    /// POSIX rename semantics, Wine), a reader holding `to` for an instant makes the rename
    /// fail with "access denied": it is tried again for up to two seconds, as Windows
    /// programs do for the same reason.
    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        let (from, to) = (self.child(from)?, self.child(to)?);
        let start = std::time::Instant::now();
        loop {
            match std::fs::rename(&from, &to) {
                Err(e)
                    if e.raw_os_error().is_some_and(|c| {
                        c == ERROR_ACCESS_DENIED as i32 || c == ERROR_SHARING_VIOLATION as i32
                    }) && start.elapsed() < RENAME_PATIENCE =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                other => return other,
            }
        }
    }

    /// Removes the file `name` of this folder (a link itself, never its target).
    pub(crate) fn unlink(&self, name: &OsStr) -> io::Result<()> {
        std::fs::remove_file(self.child(name)?)
    }

    /// A folder cannot be opened as a file to be flushed on Windows; NTFS journals its own
    /// names, so a rename is durable once it returns.
    pub(crate) fn sync(&self) -> io::Result<()> {
        Ok(())
    }
}

/// Whether opening a folder of the walk failed because the name is a link or junction, or
/// not a folder at all.
pub(crate) fn is_link_or_not_folder(e: &io::Error) -> bool {
    e.raw_os_error()
        .is_some_and(|c| c == ERROR_REPARSE_POINT_ENCOUNTERED as i32 || c == ERROR_DIRECTORY as i32)
}

/// What the open `file` is.
pub(crate) fn entry_of(file: &File) -> io::Result<Entry> {
    Ok(entry_from_information(&information(file)?))
}

/// Windows has no numeric owners; the mode keeps only whether the file is read-only.
pub(crate) fn set_owner_and_mode(
    file: &File,
    _owner: Option<(u32, u32)>,
    mode: u32,
) -> io::Result<()> {
    let mut perms = file.metadata()?.permissions();
    perms.set_readonly(mode & 0o222 == 0);
    file.set_permissions(perms)
}

//! The jailed folder walk on Windows: not built yet. Every entry point answers that it is
//! unsupported, naming what is missing, so a write is refused with a clear reason rather
//! than made through a walk that could follow a junction out of the workspace.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::Path;

use crate::platform::entry::Entry;

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "the jailed file writer (a folder walk that never follows a link or junction) is not \
         supported on Windows yet",
    )
}

/// An open folder of the workspace (never made on Windows yet).
#[derive(Debug)]
pub(crate) struct Dir {
    _never: (),
}

impl Dir {
    /// Unsupported on Windows yet.
    pub(crate) fn open_path(_path: &Path) -> io::Result<Dir> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn open_child(&self, _name: &OsStr) -> io::Result<Dir> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn make_child(&self, _name: &OsStr) -> io::Result<()> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn entry(&self, _name: &OsStr) -> io::Result<Option<Entry>> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn open_read(&self, _name: &OsStr) -> io::Result<File> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn open_read_write(&self, _name: &OsStr) -> io::Result<File> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn create_new(&self, _name: &OsStr, _mode: u32) -> io::Result<File> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn may_write(&self, _name: &OsStr) -> io::Result<bool> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn rename(&self, _from: &OsStr, _to: &OsStr) -> io::Result<()> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn unlink(&self, _name: &OsStr) -> io::Result<()> {
        Err(unsupported())
    }
    /// Unsupported on Windows yet.
    pub(crate) fn sync(&self) -> io::Result<()> {
        Err(unsupported())
    }
}

/// Whether opening a folder of the walk failed because the name is a link or not a folder
/// (never: the walk is unsupported).
pub(crate) fn is_link_or_not_folder(_e: &io::Error) -> bool {
    false
}

/// Unsupported on Windows yet.
pub(crate) fn entry_of(_file: &File) -> io::Result<Entry> {
    Err(unsupported())
}

/// Unsupported on Windows yet.
pub(crate) fn set_owner_and_mode(
    _file: &File,
    _owner: Option<(u32, u32)>,
    _mode: u32,
) -> io::Result<()> {
    Err(unsupported())
}

//! The one way agent-tools reads and writes workspace files.
//!
//! Every tool that changes files (`write`, `edit`, `apply_patch`, `resolve`, `lsp_rename`)
//! goes through here, so the guarantees are written down once:
//!
//! - **Jailed all the way down.** The path must be one the [`Workspace`] resolved. Each
//!   folder on the way is opened from the root with `O_NOFOLLOW`, and the file itself is
//!   opened or replaced relative to that folder handle, never through a symbolic link: a link
//!   planted after the jail checked the path, or a folder swapped for a link to the outside,
//!   is refused instead of followed.
//! - **Only regular files.** A FIFO, socket or device is refused before it is opened
//!   (`lstat`, then an `O_NONBLOCK | O_NOFOLLOW` open re-checked with `fstat`), so reading a
//!   FIFO never blocks and never streams forever.
//! - **Atomic replacement.** New content goes to a temp file in the same folder, created
//!   `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC` under an unpredictable, recognisable name
//!   (`.agent-tools-<24 hex digits>-<name>.tmp`), flushed with `fsync`, renamed over the
//!   file, and the folder is flushed too (as is the parent of every folder made on the way),
//!   so a write that answers success survives a power loss. The temp file is removed on
//!   every error path and held under `flock` while it exists, so the next start removes only
//!   those a dead run left ([`remove_leftover_temp_files`]).
//! - **Metadata kept.** A replaced file keeps its mode and (where the process may set it) its
//!   owner. A new file follows the umask like `touch` does (`0666 & !umask`).
//! - **Hard links are never split.** A file with more than one name is rewritten in place
//!   (under the caller's path lock, with its old content put back if the write fails), so
//!   every name still shows the same content, as editors such as vim do for linked files.
//!   A crash in the middle of that write leaves it partly written; in a change to several
//!   files the journal's recovery recognises that state as its own and finishes or undoes
//!   it in place, keeping the link. A single file killed mid-way stays partly written.
//! - **Read-only files are refused** with a clear error instead of being replaced.
//!
//! Callers serialise writes to one path with [`crate::PathLocks`]; several files are written
//! all or nothing with [`apply_all_or_nothing`].

mod apply;
mod dir;
mod leftovers;

use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;

pub use apply::{FileChange, MAX_UNDO_BYTES, WriteFault, apply_all_or_nothing};
use dir::{Dir, EntryKind, entry_of, open_parent, set_owner_and_mode};
pub use leftovers::{TEMP_PREFIX, is_temp_name, remove_leftover_temp_files};

use crate::random_name::random_hex;
use crate::{ToolError, Workspace};

/// Why a file could not be read or written. The text reads after the file's name:
/// "`src/a.py` is read-only (mode 0444); …".
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Nothing is at the path (or a folder on the way is missing).
    #[error("does not exist")]
    NotFound,
    /// The path is a folder.
    #[error("is a folder, not a file")]
    Directory,
    /// A FIFO, socket or device: never opened for reading or writing.
    #[error("is a {0}, not a regular file; only regular files can be read or written")]
    NotRegular(&'static str),
    /// The file itself became a symbolic link after the path was checked.
    #[error(
        "is a symbolic link that was not there when the path was checked; nothing was read or written"
    )]
    Symlink,
    /// A folder on the way is no longer a real folder of the workspace.
    #[error(
        "cannot be reached: `{0}` on its way is no longer a folder of the workspace (it was replaced, \
         perhaps by a symbolic link); nothing was read or written"
    )]
    PathSwapped(String),
    /// A component on the way is a file, not a folder.
    #[error("cannot be reached: `{0}` on its way is a file, not a folder")]
    NotAFolder(String),
    /// The file has no write permission.
    #[error(
        "is read-only (mode {0:04o}); it was left unchanged — change its permissions first if it really should be edited"
    )]
    ReadOnly(u32),
    /// The file's mode allows writing, but not by this process (another owner or group).
    #[error(
        "is not writable by this process (mode {0:04o}, owned by another user or group); it was left unchanged"
    )]
    NotWritable(u32),
    /// The file is larger than the caller's cap.
    #[error("is {size} bytes, over the {cap} byte cap")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// The file was replaced by another one between two steps of the same operation.
    #[error("was replaced by another file while it was being accessed; nothing was written")]
    Replaced,
    /// A name on the path is one this OS reads as something else (on Windows a device
    /// name such as `CON` or `aux.txt`, a trailing dot, a `:`).
    #[error("cannot be used: `{0}` {1}; nothing was read or written")]
    ReservedName(String, &'static str),
    /// The path is not inside the workspace root.
    #[error("is outside the workspace")]
    Outside,
    /// Any other I/O failure.
    #[error("could not be accessed: {0}")]
    Io(#[from] io::Error),
}

impl FileError {
    /// The error for the model about the file shown as `shown`: what the file is gets
    /// "invalid arguments (`path`)", a race gets "rejected", the rest "internal".
    pub fn for_file(&self, shown: &str) -> ToolError {
        let msg = format!("`{shown}` {self}");
        match self {
            FileError::NotFound
            | FileError::Directory
            | FileError::NotRegular(_)
            | FileError::NotAFolder(_)
            | FileError::ReadOnly(_)
            | FileError::NotWritable(_)
            | FileError::TooLarge { .. }
            | FileError::ReservedName(..)
            | FileError::Outside => ToolError::invalid("path", msg),
            FileError::Symlink | FileError::PathSwapped(_) | FileError::Replaced => {
                ToolError::rejected(msg)
            }
            FileError::Io(_) => ToolError::internal(msg),
        }
    }
}

/// What a rewrite of a file keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    /// Permission bits (`0o7777`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Number of names (hard links) the file has.
    pub links: u64,
}

/// A regular file's content and metadata, read in one open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileContent {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The metadata.
    pub meta: FileMeta,
}

/// What [`write_file`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    /// The file did not exist before.
    pub created: bool,
    /// The file had several names and was rewritten in place.
    pub in_place: bool,
}

/// Reads the regular file at `path` (resolved by `ws`), at most `max_bytes`.
pub fn read_file(ws: &Workspace, path: &Path, max_bytes: u64) -> Result<FileContent, FileError> {
    let (dir, name) = open_parent(ws.root(), path, false)?;
    let entry = regular_entry(&dir, &name)?.ok_or(FileError::NotFound)?;
    if entry.size > max_bytes {
        return Err(FileError::TooLarge {
            size: entry.size,
            cap: max_bytes,
        });
    }
    // O_NONBLOCK: if a FIFO was swapped in after the lstat, the open does not wait for a
    // writer; the fstat below then refuses it.
    let file = dir.open_read(&name)?;
    let now = entry_of(&file)?;
    if now.kind != EntryKind::File || (now.dev, now.ino) != (entry.dev, entry.ino) {
        return Err(FileError::Replaced);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(now.size).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    let size = bytes.len() as u64;
    if size > max_bytes {
        return Err(FileError::TooLarge {
            size,
            cap: max_bytes,
        });
    }
    Ok(FileContent {
        bytes,
        meta: meta_of(&now),
    })
}

/// [`read_file`], with `None` when nothing is at the path.
pub fn read_file_if_exists(
    ws: &Workspace,
    path: &Path,
    max_bytes: u64,
) -> Result<Option<FileContent>, FileError> {
    match read_file(ws, path, max_bytes) {
        Ok(c) => Ok(Some(c)),
        Err(FileError::NotFound) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes `content` to `path` (resolved by `ws`): a new file follows the umask, an existing
/// one keeps its mode and owner. Missing parent folders are created. The caller holds the
/// path's lock.
pub fn write_file(ws: &Workspace, path: &Path, content: &[u8]) -> Result<Written, FileError> {
    write_file_as(ws, path, content, None)
}

/// [`write_file`], giving the file `meta`'s mode and owner instead (a file moved to a new
/// name keeps its mode; a restored file gets its old metadata back).
pub fn write_file_as(
    ws: &Workspace,
    path: &Path,
    content: &[u8],
    meta: Option<FileMeta>,
) -> Result<Written, FileError> {
    keep_pre_image(ws, path);
    let written = replace_file(ws, path, content, meta);
    ws.pre_write_images().after_write(path);
    written
}

/// Keeps what `path` holds now for a write observer that asked for pre-images (see the
/// `pre_write` module); a file that cannot be read as a regular file is not kept.
fn keep_pre_image(ws: &Workspace, path: &Path) {
    ws.pre_write_images().before_write(path, || {
        match read_file_if_exists(ws, path, crate::pre_write::MAX_PRE_IMAGE_BYTES) {
            Ok(c) => Ok(c.map(|c| c.bytes)),
            Err(_) => Err(()),
        }
    });
}

fn replace_file(
    ws: &Workspace,
    path: &Path,
    content: &[u8],
    meta: Option<FileMeta>,
) -> Result<Written, FileError> {
    let (dir, name) = open_parent(ws.root(), path, true)?;
    let existing = regular_entry(&dir, &name)?;
    if let Some(e) = &existing {
        check_writable(&dir, &name, e.mode)?;
        if e.nlink > 1 {
            write_in_place(&dir, &name, e, content)?;
            return Ok(Written {
                created: false,
                in_place: true,
            });
        }
    }
    // The metadata the new inode gets: explicit, else the replaced file's, else the umask's.
    let keep = meta.or(existing.as_ref().map(meta_of));
    let create_mode = if keep.is_some() { 0o600 } else { 0o666 };
    let mut temp = TempFile::create(&dir, &name, create_mode)?;
    temp.file.write_all(content)?;
    if let Some(m) = keep {
        set_owner_and_mode(&temp.file, Some((m.uid, m.gid)), m.mode)?;
    }
    temp.file.sync_all()?;
    crate::journal::crash_point();
    dir.rename(&temp.name, &name)?;
    temp.persisted = true;
    sync_after_rename(&dir, path);
    Ok(Written {
        created: existing.is_none(),
        in_place: false,
    })
}

/// Removes the regular file at `path` (resolved by `ws`). The caller holds the path's lock.
pub fn remove_file(ws: &Workspace, path: &Path) -> Result<(), FileError> {
    keep_pre_image(ws, path);
    let removed = unlink_file(ws, path);
    ws.pre_write_images().after_write(path);
    removed
}

fn unlink_file(ws: &Workspace, path: &Path) -> Result<(), FileError> {
    let (dir, name) = open_parent(ws.root(), path, false)?;
    let entry = regular_entry(&dir, &name)?.ok_or(FileError::NotFound)?;
    check_writable(&dir, &name, entry.mode)?;
    dir.unlink(&name)?;
    sync_after_rename(&dir, path);
    Ok(())
}

/// Flushes the folder after the file's name changed. The change has happened whatever
/// this returns, so a failure is logged rather than reported as a failed write (which
/// would make a caller believe the file was left as it was).
fn sync_after_rename(dir: &Dir, path: &Path) {
    if let Err(e) = dir.sync() {
        tracing::warn!(path = %path.display(), error = %e, "could not flush the folder after writing");
    }
}

/// The lstat of `name` when it is a regular file, `None` when absent, else the error that
/// says what it is.
fn regular_entry(dir: &Dir, name: &std::ffi::OsStr) -> Result<Option<dir::Entry>, FileError> {
    let Some(entry) = dir.entry(name)? else {
        return Ok(None);
    };
    match entry.kind {
        EntryKind::File => Ok(Some(entry)),
        EntryKind::Directory => Err(FileError::Directory),
        EntryKind::Symlink => Err(FileError::Symlink),
        EntryKind::Special(what) => Err(FileError::NotRegular(what)),
    }
}

fn meta_of(e: &dir::Entry) -> FileMeta {
    FileMeta {
        mode: e.mode,
        uid: e.uid,
        gid: e.gid,
        links: e.nlink,
    }
}

/// A file nobody may write is refused even for a process that could replace it anyway
/// (root, or the owner of the folder): its mode says it is not meant to change.
fn check_writable(dir: &Dir, name: &std::ffi::OsStr, mode: u32) -> Result<(), FileError> {
    if mode & 0o222 == 0 {
        return Err(FileError::ReadOnly(mode));
    }
    // An unprivileged process must also have write permission itself.
    if !crate::platform::is_superuser() && !dir.may_write(name)? {
        return Err(FileError::NotWritable(mode));
    }
    Ok(())
}

/// Rewrites a file that has several names through one of them, so all names keep sharing
/// it. Its old content is put back if the write fails.
fn write_in_place(
    dir: &Dir,
    name: &std::ffi::OsStr,
    entry: &dir::Entry,
    content: &[u8],
) -> Result<(), FileError> {
    let mut file = dir.open_read_write(name)?;
    let now = entry_of(&file)?;
    if now.kind != EntryKind::File || (now.dev, now.ino) != (entry.dev, entry.ino) {
        return Err(FileError::Replaced);
    }
    let mut old = Vec::new();
    file.read_to_end(&mut old)?;
    let overwrite = |file: &mut File, bytes: &[u8]| -> io::Result<()> {
        file.seek(io::SeekFrom::Start(0))?;
        // In two halves, with the crash tests' step between them: the state a writer
        // killed part way leaves, which the journal's recovery must recognise as ours.
        let (first, rest) = bytes.split_at(bytes.len() / 2);
        file.write_all(first)?;
        crate::journal::crash_point();
        file.write_all(rest)?;
        file.set_len(bytes.len() as u64)?;
        file.sync_all()
    };
    if let Err(e) = overwrite(&mut file, content) {
        return Err(match overwrite(&mut file, &old) {
            Ok(()) => FileError::Io(io::Error::new(
                e.kind(),
                format!("{e} (its old content was written back)"),
            )),
            Err(e2) => FileError::Io(io::Error::new(
                e.kind(),
                format!("{e}, and writing its old content back failed too: {e2}"),
            )),
        });
    }
    Ok(())
}

/// A temp file beside the target, removed on drop unless renamed into place.
struct TempFile<'a> {
    dir: &'a Dir,
    name: std::ffi::OsString,
    file: File,
    persisted: bool,
}

/// How many unpredictable names are tried before giving up (each try fails only when
/// something already has that name).
const TEMP_NAME_TRIES: usize = 16;

impl<'a> TempFile<'a> {
    fn create(dir: &'a Dir, target: &std::ffi::OsStr, mode: u32) -> io::Result<TempFile<'a>> {
        // Keep the temp name under NAME_MAX whatever the target's length.
        let stem: Vec<u8> = crate::platform::os_str_bytes(target)
            .iter()
            .take(100)
            .copied()
            .collect();
        let mut last = None;
        for _ in 0..TEMP_NAME_TRIES {
            let mut name = format!("{TEMP_PREFIX}{}-", random_hex()).into_bytes();
            name.extend_from_slice(&stem);
            name.extend_from_slice(b".tmp");
            let name = crate::platform::os_string_from_bytes(name);
            match dir.create_new(&name, mode) {
                Ok(file) => {
                    let temp = TempFile {
                        dir,
                        name,
                        file,
                        persisted: false,
                    };
                    // Locked while it exists: a starting run removes only unlocked ones. One
                    // that removed this file before we got the lock leaves it nameless; then
                    // another name is tried.
                    if leftovers::lock_and_check_linked(&temp.file)? {
                        return Ok(temp);
                    }
                    last = Some(io::Error::other("a temp file was removed as it was made"));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no free temp file name")))
    }
}

impl Drop for TempFile<'_> {
    fn drop(&mut self) {
        if !self.persisted {
            let _ = self.dir.unlink(&self.name);
        }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_windows;

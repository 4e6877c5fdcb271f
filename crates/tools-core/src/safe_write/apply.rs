//! Several file changes applied all or nothing.
//!
//! Before the first byte is written, every target is read (content and metadata) and
//! checked: a file that cannot be changed (read-only, not a regular file, behind a swapped
//! folder) refuses the whole change. Then the changes are made in order; if one fails, every
//! change already made is undone in reverse order: a replaced file gets its old content,
//! mode and owner back, a created file is removed, a deleted file is recreated with its old
//! mode. The caller holds the path locks of every target for the whole call.
//!
//! A change to more than one file is written ahead to the workspace's journal (see
//! [`crate::journal`]) before the first file is touched, so a crash in the middle is rolled
//! forward or back by the next run that opens the workspace.

use std::io;
use std::path::{Path, PathBuf};

use std::borrow::Cow;

use super::{FileContent, FileError, read_file_if_exists, remove_file, write_file_as};
use crate::journal::{Entry, Journal, NewState, OldState, crash_point};
use crate::{PathGuard, ToolError, Workspace};

/// The largest file a multi-file change keeps a copy of for its undo.
pub const MAX_UNDO_BYTES: u64 = 256 * 1024 * 1024;

/// One planned change to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// Write `content` at `path` (creating parent folders).
    Write {
        /// Absolute path, resolved by the workspace jail.
        path: PathBuf,
        /// The new bytes.
        content: Vec<u8>,
        /// The mode to give the file; `None` keeps an existing file's mode and gives a new
        /// one the umask's (`Some` for a file moved from another name).
        mode: Option<u32>,
    },
    /// Delete `path`.
    Delete {
        /// Absolute path, resolved by the workspace jail.
        path: PathBuf,
    },
}

impl FileChange {
    /// The file this change touches.
    pub fn path(&self) -> &Path {
        match self {
            FileChange::Write { path, .. } | FileChange::Delete { path } => path,
        }
    }
}

/// A test seam: called with the index of each change just before it is made; an error
/// fails that change as a real write failure would.
pub type WriteFault<'a> = &'a dyn Fn(usize, &FileChange) -> io::Result<()>;

/// Applies every change or none (see the module docs), with `guard` holding every target's
/// lock. Returns the paths changed, in order. Errors name files as `ws` displays them.
pub fn apply_all_or_nothing(
    ws: &Workspace,
    guard: &PathGuard,
    changes: &[FileChange],
    fault: Option<WriteFault<'_>>,
) -> Result<Vec<PathBuf>, ToolError> {
    let shown = |p: &Path| ws.display(p);
    for c in changes {
        if !guard.covers(c.path()) {
            return Err(ToolError::internal(format!(
                "`{}` was to be written without holding its write lock; nothing was changed",
                shown(c.path())
            )));
        }
    }
    let mut before: Vec<Option<FileContent>> = Vec::with_capacity(changes.len());
    for c in changes {
        let old = read_file_if_exists(ws, c.path(), MAX_UNDO_BYTES)
            .map_err(|e| unchanged(&e, &shown(c.path())))?;
        if let Some(old) = &old
            && old.meta.mode & 0o222 == 0
        {
            return Err(unchanged(
                &FileError::ReadOnly(old.meta.mode),
                &shown(c.path()),
            ));
        }
        before.push(old);
    }
    // One file is replaced atomically on its own; several need the journal.
    let journal = if changes.len() > 1 {
        let entries = journal_entries(ws, changes, &before)?;
        let j = Journal::begin(ws.root(), &entries)?;
        crash_point();
        Some(j)
    } else {
        None
    };
    let finish = || {
        if let Some(j) = journal {
            crash_point();
            j.finish();
        }
    };
    for (i, c) in changes.iter().enumerate() {
        let made = match fault.map(|f| f(i, c)).unwrap_or(Ok(())) {
            Err(e) => Err(FileError::Io(e)),
            Ok(()) => match c {
                FileChange::Write {
                    path,
                    content,
                    mode,
                } => {
                    let meta = mode.map(|m| super::FileMeta {
                        mode: m,
                        uid: crate::platform::effective_ids().0,
                        gid: crate::platform::effective_ids().1,
                        links: 1,
                    });
                    write_file_as(ws, path, content, meta).map(|_| ())
                }
                FileChange::Delete { path } => remove_file(ws, path),
            },
        };
        if let Err(e) = made {
            let not_restored = undo(ws, &changes[..i], &before[..i]);
            // The answer below says exactly what the files hold; nothing is left to recover.
            finish();
            let what = format!("writing `{}` failed: {e}", shown(c.path()));
            return Err(if not_restored.is_empty() {
                ToolError::internal(format!(
                    "{what}; the {i} file(s) already written were restored, so no file was changed"
                ))
            } else {
                ToolError::internal(format!(
                    "{what}; restoring the files already written failed for {} — they hold the new content",
                    not_restored.join(", ")
                ))
            });
        }
        crash_point();
    }
    finish();
    Ok(changes.iter().map(|c| c.path().to_path_buf()).collect())
}

/// The journal's record of `changes`, borrowing their contents and the copies in `before`.
fn journal_entries<'a>(
    ws: &Workspace,
    changes: &'a [FileChange],
    before: &'a [Option<FileContent>],
) -> Result<Vec<Entry<'a>>, ToolError> {
    changes
        .iter()
        .zip(before)
        .map(|(c, old)| {
            let rel = c.path().strip_prefix(ws.root()).map_err(|_| {
                ToolError::internal(format!(
                    "`{}` is outside the workspace; no file was changed",
                    c.path().display()
                ))
            })?;
            let old = match old {
                None => OldState::Absent,
                Some(o) => OldState::Present {
                    mode: o.meta.mode,
                    uid: o.meta.uid,
                    gid: o.meta.gid,
                    bytes: Cow::Borrowed(&o.bytes),
                },
            };
            let new = match c {
                FileChange::Write { content, mode, .. } => NewState::Write {
                    mode: *mode,
                    bytes: Cow::Borrowed(content),
                },
                FileChange::Delete { .. } => NewState::Delete,
            };
            Ok(Entry {
                rel: Cow::Borrowed(rel),
                old,
                new,
            })
        })
        .collect()
}

fn unchanged(e: &FileError, shown: &str) -> ToolError {
    let t = e.for_file(shown);
    let add = |m: String| format!("{m}; no file was changed");
    match t {
        ToolError::InvalidArguments { field, message } => ToolError::InvalidArguments {
            field,
            message: add(message),
        },
        ToolError::Rejected(m) => ToolError::Rejected(add(m)),
        ToolError::Internal(m) => ToolError::Internal(add(m)),
        other => other,
    }
}

/// Undoes `done` (in reverse) from the copies in `before`; returns the files it could not
/// restore, each with why.
fn undo(ws: &Workspace, done: &[FileChange], before: &[Option<FileContent>]) -> Vec<String> {
    let mut failed = Vec::new();
    for (c, old) in done.iter().zip(before).rev() {
        let r = match old {
            Some(old) => write_file_as(ws, c.path(), &old.bytes, Some(old.meta)).map(|_| ()),
            None => match remove_file(ws, c.path()) {
                Err(FileError::NotFound) => Ok(()),
                other => other,
            },
        };
        if let Err(e) = r {
            failed.push(format!("`{}` ({e})", ws.display(c.path())));
        }
    }
    failed
}

//! The write-ahead journal that makes a multi-file change all or nothing across a crash.
//!
//! Before the first file of a change to several files is replaced, the whole change is
//! recorded in one journal file outside the checkout, in the user's state folder
//! (`$XDG_STATE_HOME/agent-tools/journal/<workspace key>/`, else `~/.local/state/…`; the
//! OS's own folder on macOS and Windows, see [`crate::platform::user_folder`]): every
//! path, the content and mode it holds before, and the content it gets. The journal is
//! flushed (the file and its folder) before any file is touched and removed once the last
//! file is in place. The writer holds an exclusive `flock` on its journal the whole time, so
//! a journal whose lock can be taken belongs to a run that died. The next run that opens the
//! workspace recovers it ([`recover`]): it rolls the change forward when every file holds its
//! old or its new content, and back otherwise, leaving a file changed by hand since as it is.
//!
//! The file format (little-endian) is the magic line, the workspace root, the entries, and a
//! SHA-256 of everything before it; a journal cut short by a crash while it was being written
//! fails that check and is simply dropped (no file had been touched yet).

mod crash;
pub(crate) mod format;

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

pub use crash::{CRASH_AT_ENV, crash_point};
pub(crate) use format::{Entry, NewState, OldState};

use crate::ToolError;

/// Where the journals of the workspace at `root` (canonical) live: the tools' state folder's
/// `journal` ([`crate::platform::user_folder`]). `None` when no state folder can be named
/// (on Linux: no `XDG_STATE_HOME` and no `HOME`).
pub fn journal_dir(root: &Path) -> Option<PathBuf> {
    let base = crate::platform::user_folder(crate::platform::UserFolder::State)?;
    Some(base.join("journal").join(workspace_key(root)))
}

/// A folder name for `root`: its last component (for a person looking) and a hash of the
/// whole path (so two checkouts of the same name never share journals).
fn workspace_key(root: &Path) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(crate::platform::os_str_bytes(root.as_os_str()));
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{}", hex::encode(&digest[..12]))
}

/// Creates `dir` and its parents, readable by this user only (0700 for the folders made).
pub(crate) fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    crate::platform::create_private_dir_all(dir)
}

/// Flushes the folder `dir` so a new or removed name in it survives a power loss.
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    crate::platform::sync_dir(dir)
}

/// Takes `file`'s lock (`flock` on Unix) exclusively; `wait` false returns `Ok(false)` when
/// someone holds it.
pub(crate) fn lock_exclusive(file: &File, wait: bool) -> io::Result<bool> {
    crate::platform::lock_exclusive(file, wait)
}

/// Whether `file` still has a name (a recovery may have removed it before we locked it).
pub(crate) fn still_linked(file: &File) -> io::Result<bool> {
    Ok(crate::platform::link_count(file)? > 0)
}

/// An unfinished change recorded on disk and locked by this process. [`Journal::finish`]
/// removes it; dropping it without finishing leaves it for the next start to recover.
#[derive(Debug)]
pub(crate) struct Journal {
    path: PathBuf,
    /// Holds the `flock` that tells a recovering run this change is still being made.
    _file: File,
}

/// How many fresh names are tried when a recovering run removed the one we made.
const NAME_TRIES: usize = 8;

impl Journal {
    /// Records `entries` for the workspace at `root` and flushes them; no file of the
    /// workspace may be touched before this returns.
    pub(crate) fn begin(root: &Path, entries: &[Entry<'_>]) -> Result<Journal, ToolError> {
        let failed = |what: String| {
            ToolError::internal(format!(
                "could not record the change in the journal ({what}); no file was changed"
            ))
        };
        let dir = journal_dir(root).ok_or_else(|| {
            failed("none of XDG_STATE_HOME, HOME and LOCALAPPDATA names a state folder".into())
        })?;
        Self::begin_in(&dir, root, entries)
    }

    /// [`Journal::begin`] in the journal folder `dir`.
    pub(crate) fn begin_in(
        dir: &Path,
        root: &Path,
        entries: &[Entry<'_>],
    ) -> Result<Journal, ToolError> {
        let failed = |what: String| {
            ToolError::internal(format!(
                "could not record the change in the journal ({what}); no file was changed"
            ))
        };
        let dir = dir.to_path_buf();
        ensure_private_dir(&dir).map_err(|e| failed(format!("{}: {e}", dir.display())))?;
        let bytes = format::encode(root, entries);
        for _ in 0..NAME_TRIES {
            let path = dir.join(format!(
                "{}-{}.journal",
                std::process::id(),
                crate::random_name::random_hex()
            ));
            let made = crate::platform::private_file_options()
                .write(true)
                .create_new(true)
                .open(&path);
            let mut file = match made {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                // An idle folder removed by a run that just closed: make it again.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    ensure_private_dir(&dir)
                        .map_err(|e| failed(format!("{}: {e}", dir.display())))?;
                    continue;
                }
                Err(e) => return Err(failed(format!("{}: {e}", path.display()))),
            };
            let written = (|| -> io::Result<bool> {
                lock_exclusive(&file, true)?;
                if !still_linked(&file)? {
                    return Ok(false);
                }
                file.write_all(&bytes)?;
                file.sync_all()?;
                sync_dir(&dir)?;
                Ok(true)
            })();
            match written {
                Ok(true) => return Ok(Journal { path, _file: file }),
                Ok(false) => continue,
                Err(e) => {
                    let _ = std::fs::remove_file(&path);
                    return Err(failed(format!("{}: {e}", path.display())));
                }
            }
        }
        Err(failed(
            "no fresh journal name could be made in the state folder".into(),
        ))
    }

    /// Removes the journal: every file is in place (or every change was undone). A
    /// failure is logged: the files are right either way, and a journal left behind is
    /// rolled forward as a no-op by the next start.
    ///
    /// A folder left empty goes too (a change made without a run, as a library caller
    /// makes it, has no run marker to clean up after it); `rmdir` removes only an empty
    /// folder, so a live run's marker or another change's journal keeps it, and a writer
    /// that made the folder just before finds it gone and makes it again.
    pub(crate) fn finish(self) {
        let Journal { path, _file: file } = self;
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::warn!(journal = %path.display(), error = %e, "could not remove a finished journal");
        }
        // Closed before its folder is removed: on Windows a removed file that is still open
        // keeps its name (and so its folder) until its last handle closes.
        drop(file);
        if let Some(dir) = path.parent() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

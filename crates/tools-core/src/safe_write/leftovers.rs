//! The safe writer's temp files: their recognisable name, the lock each holds while it
//! exists, and the clean-up of those a dead run left in the workspace.
//!
//! A temp file is `.agent-tools-<24 hex digits>-<target name>.tmp`, made beside its target
//! and locked (`flock`) by the process writing it. A starting run that learns a run died
//! (while opening the workspace) walks the workspace and removes every file with that
//! exact shape of name whose lock it can take: a live writer's temp file is locked, and a
//! file of the user's never has that name by accident. The removal happens under the lock,
//! and a writer checks after locking that its file still has a name, so the two never race.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::path::Path;

use super::dir::{EntryKind, entry_of, open_parent};
use crate::Workspace;
use crate::journal::{lock_exclusive, still_linked};

/// How every temp file of the safe writer begins.
pub const TEMP_PREFIX: &str = ".agent-tools-";

/// The most folder entries the clean-up looks at, so a start in a huge tree stays bounded.
const MAX_ENTRIES_WALKED: usize = 500_000;

/// Whether `name` has the exact shape of the safe writer's temp files.
pub fn is_temp_name(name: &OsStr) -> bool {
    let b = crate::platform::os_str_bytes(name);
    let Some(rest) = b.strip_prefix(TEMP_PREFIX.as_bytes()) else {
        return false;
    };
    rest.len() > 24 + 1 + 4
        && rest[..24]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
        && rest[24] == b'-'
        && rest.ends_with(b".tmp")
}

/// Takes `file`'s lock (waiting for a clean-up that holds it) and says whether the file
/// still has a name.
pub(super) fn lock_and_check_linked(file: &File) -> io::Result<bool> {
    lock_exclusive(file, true)?;
    still_linked(file)
}

/// Removes the temp files dead runs left anywhere in `ws` (not under `.git`, never through
/// a symbolic link) and returns how many. Failures are logged and skipped.
pub fn remove_leftover_temp_files(ws: &Workspace) -> usize {
    let mut stack = vec![ws.root().to_path_buf()];
    let mut walked = 0usize;
    let mut removed = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(items) = std::fs::read_dir(&dir) else {
            continue;
        };
        for item in items.flatten() {
            walked += 1;
            if walked > MAX_ENTRIES_WALKED {
                tracing::warn!(
                    "stopped looking for leftover temp files after {MAX_ENTRIES_WALKED} entries"
                );
                return removed;
            }
            let Ok(kind) = item.file_type() else { continue };
            let name = item.file_name();
            if kind.is_dir() {
                if name != ".git" {
                    stack.push(item.path());
                }
            } else if kind.is_file() && is_temp_name(&name) {
                match remove_if_unlocked(ws, &item.path()) {
                    Ok(true) => removed += 1,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::warn!(path = %item.path().display(), error = %e, "could not remove a leftover temp file")
                    }
                }
            }
        }
    }
    removed
}

/// Removes the temp file at `path` when no live writer holds it.
fn remove_if_unlocked(ws: &Workspace, path: &Path) -> io::Result<bool> {
    let (dir, name) = open_parent(ws.root(), path, false).map_err(io::Error::other)?;
    let file = match dir.open_read(&name) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if entry_of(&file)?.kind != EntryKind::File || !lock_exclusive(&file, false)? {
        return Ok(false);
    }
    dir.unlink(&name)?;
    dir.sync()?;
    Ok(true)
}

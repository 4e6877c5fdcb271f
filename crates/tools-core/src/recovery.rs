//! What a run does when it opens a workspace: finish or undo the changes a killed run left
//! half made, remove the temp files it left, and mark itself alive.
//!
//! Every live run holds an exclusive `flock` on a marker file in the workspace's journal
//! folder, and every change being made holds one on its journal. A lock that can be taken
//! therefore belongs to a process that is gone. Recovery itself runs under a folder-wide lock
//! (`recover.lock`), so two runs never recover the same journal at once; a journal whose
//! writer is alive (another session or process on the same workspace) is left alone.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::Workspace;
use crate::journal::format::{self, DecodeError, Entry, NewState, OldState};
use crate::journal::{ensure_private_dir, journal_dir, lock_exclusive, still_linked, sync_dir};
use crate::safe_write::{
    FileMeta, MAX_UNDO_BYTES, read_file_if_exists, remove_file, remove_leftover_temp_files,
    write_file_as,
};

/// This run's mark in the journal folder: held locked while the run lives, removed when it
/// ends. A mark left unlocked tells the next start that a run died without cleaning up.
#[derive(Debug)]
pub struct RunMarker {
    /// `None` once abandoned (a test playing a killed run).
    path: Option<PathBuf>,
    /// Held (and locked) for the run's life; closed once the mark is removed.
    file: Option<File>,
}

impl RunMarker {
    /// Lets go of the lock but leaves the mark, as a killed run does.
    #[cfg(test)]
    pub(crate) fn abandon(mut self) {
        self.path = None;
    }
}

impl Drop for RunMarker {
    fn drop(&mut self) {
        if let Some(p) = &self.path {
            let _ = std::fs::remove_file(p);
            // Closed before the folder is checked: on Windows the removed mark keeps its
            // name until its last handle closes.
            self.file.take();
            if let Some(dir) = p.parent() {
                let _ = remove_if_idle(dir);
            }
        }
    }
}

/// Removes the workspace's journal folder when nothing but its lock file is left (no live
/// run, no journal), so workspaces opened once leave nothing in the state folder. Done
/// under the folder's lock; a run that opened the lock file meanwhile sees it unlinked once
/// it gets the lock and starts over ([`lock_folder`]).
fn remove_if_idle(dir: &Path) -> bool {
    let lock_path = dir.join(LOCK_NAME);
    let Ok(Some(lock)) = open_if_unlocked(&lock_path) else {
        return false;
    };
    let only_lock = std::fs::read_dir(dir)
        .map(|items| {
            items
                .flatten()
                .all(|i| i.file_name() == std::ffi::OsStr::new(LOCK_NAME))
        })
        .unwrap_or(false);
    let unlinked = only_lock && std::fs::remove_file(&lock_path).is_ok();
    // Closed before the folder is removed: on Windows a removed file that is still open
    // keeps its name (and so its folder) until its last handle closes. A run that takes the
    // lock meanwhile finds it unlinked and starts over, as above.
    drop(lock);
    unlinked && std::fs::remove_dir(dir).is_ok()
}

const LOCK_NAME: &str = "recover.lock";

/// Creates the folder and takes its lock, starting over when an idle folder was removed
/// under us.
fn lock_folder(dir: &Path) -> std::io::Result<File> {
    let mut last = None;
    for _ in 0..8 {
        ensure_private_dir(dir)?;
        match open_locked(&dir.join(LOCK_NAME), true) {
            Ok(f) if still_linked(&f)? => return Ok(f),
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("the journal folder kept vanishing")))
}

/// Recovers what killed runs left in `ws` (see the module docs) and marks this run alive.
/// Returns one line for the run's first answer when something was recovered, and the
/// marker to keep for the run's life. Problems with the state folder itself are logged and
/// yield no marker: the workspace still opens.
pub fn open_workspace(ws: &Workspace) -> (Option<String>, Option<RunMarker>) {
    let Some(dir) = journal_dir(ws.root()) else {
        return (None, None);
    };
    let found = open_workspace_in(ws, &dir);
    // Once per process is enough: a run that ends removes its own idle folder, so only
    // folders of runs that ended before that rule existed (or were killed between two
    // steps of it) are left for a sweep to find.
    static SWEPT: std::sync::Once = std::sync::Once::new();
    if let Some(all) = dir.parent() {
        SWEPT.call_once(|| {
            let removed = remove_idle_folders(all);
            if removed > 0 {
                tracing::info!(folder = %all.display(), removed, "removed idle journal folders of other workspaces");
            }
        });
    }
    found
}

/// Removes every workspace folder under `all` (the state folder's `journal` folder) that
/// holds nothing but an unlocked `recover.lock`, or nothing at all: what a run on a
/// workspace that is never opened again leaves behind. A folder with a journal (a change to
/// recover when its workspace is opened), a run marker (live, or dead and telling the next
/// start to look for temp files) or anything else stays, as does anything whose name is not
/// a workspace key or that is not a plain folder. Returns how many folders went.
pub(crate) fn remove_idle_folders(all: &Path) -> usize {
    let Ok(items) = std::fs::read_dir(all) else {
        return 0;
    };
    let mut removed = 0;
    for item in items.flatten() {
        let is_dir = item.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || !is_workspace_key(&item.file_name()) {
            continue;
        }
        let dir = item.path();
        // An empty folder (its lock went, the folder did not): `rmdir` takes only an empty
        // one, and a run that made it just now makes it again ([`lock_folder`]).
        if std::fs::remove_dir(&dir).is_ok() || remove_if_idle(&dir) {
            removed += 1;
        }
    }
    removed
}

/// Whether `name` has the shape [`crate::journal::journal_dir`] gives a workspace's folder:
/// a name part, a dash, 24 lowercase hex digits.
fn is_workspace_key(name: &std::ffi::OsStr) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    name.rsplit_once('-').is_some_and(|(_, hash)| {
        hash.len() == 24
            && hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// [`open_workspace`] with the journal folder `dir`.
pub(crate) fn open_workspace_in(ws: &Workspace, dir: &Path) -> (Option<String>, Option<RunMarker>) {
    match recover_in(ws, dir) {
        Ok(found) => found,
        Err(e) => {
            tracing::warn!(folder = %dir.display(), error = %e, "could not check for unfinished changes");
            (None, None)
        }
    }
}

fn recover_in(ws: &Workspace, dir: &Path) -> std::io::Result<(Option<String>, Option<RunMarker>)> {
    let lock = lock_folder(dir)?;
    let mut dead_runs = 0usize;
    let mut journals = Vec::new();
    for item in std::fs::read_dir(dir)? {
        let item = item?;
        let name = item.file_name();
        let path = item.path();
        let name = name.to_string_lossy();
        if name.ends_with(".live") {
            if let Some(f) = open_if_unlocked(&path)? {
                let _ = std::fs::remove_file(&path);
                drop(f);
                dead_runs += 1;
            }
        } else if name.ends_with(".journal") {
            let modified = item.metadata()?.modified()?;
            journals.push((modified, path));
        }
    }
    // Oldest first: two changes left by two killed runs are replayed in the order made.
    journals.sort();
    let mut lines = Vec::new();
    let mut recovered_any = false;
    for (_, path) in journals {
        let Some(file) = open_if_unlocked(&path)? else {
            continue;
        };
        let bytes = std::fs::read(&path)?;
        match format::decode(&bytes) {
            Err(DecodeError::Incomplete) => {
                // Cut short while it was written: no file had been touched yet.
                std::fs::remove_file(&path)?;
            }
            Err(e @ DecodeError::Malformed(_)) => lines.push(format!(
                "a journal of an unfinished change could not be read ({e}) and was left at {}",
                path.display()
            )),
            Ok(d) if d.root != ws.root() => {
                tracing::warn!(journal = %path.display(), "a journal for another workspace root; left alone");
            }
            Ok(d) => {
                recovered_any = true;
                let outcome = settle(ws, &d.entries);
                if outcome.failed.is_empty() {
                    std::fs::remove_file(&path)?;
                }
                lines.push(outcome.line(d.entries.len(), &path));
            }
        }
        drop(file);
    }
    if recovered_any || !lines.is_empty() {
        sync_dir(dir)?;
    }
    if dead_runs > 0 || recovered_any {
        let removed = remove_leftover_temp_files(ws);
        if removed > 0 {
            lines.push(format!(
                "removed {removed} temp file{} a killed run left in the workspace",
                plural(removed)
            ));
        }
    }
    let marker = make_marker(dir)?;
    drop(lock);
    let notice =
        (!lines.is_empty()).then(|| format!("Recovered after a crash: {}.", lines.join("; ")));
    if let Some(n) = &notice {
        tracing::warn!(workspace = %ws.root().display(), "{n}");
    }
    Ok((notice, Some(marker)))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Opens (creating) `path` and takes its lock, waiting when `wait`.
fn open_locked(path: &Path, wait: bool) -> std::io::Result<File> {
    let f = crate::platform::private_file_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    lock_exclusive(&f, wait)?;
    Ok(f)
}

/// `path` opened and locked when nobody holds its lock (its owner is gone); `None` while
/// a live process holds it or when it vanished meanwhile.
fn open_if_unlocked(path: &Path) -> std::io::Result<Option<File>> {
    let f = match crate::platform::probe_file_options().open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !f.metadata()?.is_file() || !lock_exclusive(&f, false)? || !still_linked(&f)? {
        return Ok(None);
    }
    Ok(Some(f))
}

fn make_marker(dir: &Path) -> std::io::Result<RunMarker> {
    let path = dir.join(format!(
        "{}-{}.live",
        std::process::id(),
        crate::random_name::random_hex()
    ));
    let file = crate::platform::private_file_options()
        .write(true)
        .create_new(true)
        .open(&path)?;
    lock_exclusive(&file, true)?;
    Ok(RunMarker {
        path: Some(path),
        file: Some(file),
    })
}

/// What one file holds now, measured against the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Now {
    Old,
    New,
    /// A file with several names, killed while it was rewritten in place (see
    /// [`half_written_in_place`]): ours, neither old nor new, and put right either way.
    HalfWritten,
    /// Neither: changed by hand since (or unreadable).
    Other,
}

fn now_of(ws: &Workspace, e: &Entry<'_>) -> Now {
    let path = ws.root().join(&e.rel);
    let current = match read_file_if_exists(ws, &path, MAX_UNDO_BYTES) {
        Ok(c) => c,
        Err(_) => return Now::Other,
    };
    let links = current.as_ref().map_or(0, |c| c.meta.links);
    let current = current.map(|c| c.bytes);
    let is_new = match (&e.new, &current) {
        (NewState::Delete, None) => true,
        (NewState::Write { bytes, .. }, Some(c)) => bytes.as_ref() == c.as_slice(),
        _ => false,
    };
    let is_old = match (&e.old, &current) {
        (OldState::Absent, None) => true,
        (OldState::Present { bytes, .. }, Some(c)) => bytes.as_ref() == c.as_slice(),
        _ => false,
    };
    let half = || match (&e.old, &e.new, &current) {
        (OldState::Present { bytes: old, .. }, NewState::Write { bytes: new, .. }, Some(c)) => {
            links > 1 && half_written_in_place(c, old, new)
        }
        _ => false,
    };
    match (is_old, is_new) {
        (_, true) => Now::New,
        (true, false) => Now::Old,
        (false, false) if half() => Now::HalfWritten,
        (false, false) => Now::Other,
    }
}

/// Whether `now` is what rewriting `old` in place with `new` leaves when the writer dies
/// part way: the first `k` bytes of `new` over `old` (for some `k` up to `new`'s length),
/// the rest of `old` after them, not yet cut to the new length. A file with several names
/// is rewritten in place so that every name keeps sharing it (see
/// [`crate::safe_write`]), so only such a file can be found like this; one edited by hand
/// almost never has this exact shape.
fn half_written_in_place(now: &[u8], old: &[u8], new: &[u8]) -> bool {
    if now.len() < old.len() {
        return false;
    }
    let same_start = now.iter().zip(new).take_while(|(a, b)| a == b).count();
    if now.len() > old.len() {
        // Written past the old end: all of it is a start of `new`.
        return same_start == now.len();
    }
    // Same length as `old`: where the old tail that is still there begins.
    let same_end = now
        .iter()
        .zip(old)
        .rev()
        .take_while(|(a, b)| a == b)
        .count();
    now.len() - same_end <= same_start
}

/// What recovering one journal did.
#[derive(Debug, Default)]
struct Outcome {
    forward: bool,
    changed: usize,
    left: Vec<String>,
    failed: Vec<String>,
}

impl Outcome {
    fn line(&self, files: usize, journal: &Path) -> String {
        let head = format!(
            "an unfinished change of {files} file{} left by a killed run",
            plural(files)
        );
        let mut line = if self.forward {
            format!(
                "{head} was completed ({} file{} written; every file now holds its new content)",
                self.changed,
                plural(self.changed)
            )
        } else {
            format!(
                "{head} was undone ({} file{} put back as before)",
                self.changed,
                plural(self.changed)
            )
        };
        if !self.left.is_empty() {
            line.push_str(&format!(
                ", leaving as they are the files changed since: {}",
                self.left.join(", ")
            ));
        }
        if !self.failed.is_empty() {
            line.push_str(&format!(
                "; these could not be put right and the journal was kept at {}: {}",
                journal.display(),
                self.failed.join(", ")
            ));
        }
        line
    }
}

/// Rolls the change forward when every file holds its old or new content, else back.
fn settle(ws: &Workspace, entries: &[Entry<'_>]) -> Outcome {
    let states: Vec<Now> = entries.iter().map(|e| now_of(ws, e)).collect();
    let mut out = Outcome {
        forward: !states.contains(&Now::Other),
        ..Outcome::default()
    };
    for (e, now) in entries.iter().zip(&states) {
        let path = ws.root().join(&e.rel);
        let shown = format!("`{}`", ws.display(&path));
        let done = match (out.forward, now) {
            (true, Now::Old | Now::HalfWritten) => apply_new(ws, &path, &e.new),
            (false, Now::New | Now::HalfWritten) => restore_old(ws, &path, &e.old),
            (false, Now::Other) => {
                out.left.push(shown);
                continue;
            }
            _ => continue,
        };
        match done {
            Ok(()) => out.changed += 1,
            Err(why) => out.failed.push(format!("{shown} ({why})")),
        }
    }
    out
}

fn apply_new(ws: &Workspace, path: &Path, new: &NewState<'_>) -> Result<(), String> {
    match new {
        NewState::Delete => remove_file(ws, path).map_err(|e| e.to_string()),
        NewState::Write { mode, bytes } => {
            let meta = mode.map(|m| FileMeta {
                mode: m,
                uid: crate::platform::effective_ids().0,
                gid: crate::platform::effective_ids().1,
                links: 1,
            });
            write_file_as(ws, path, bytes, meta)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    }
}

fn restore_old(ws: &Workspace, path: &Path, old: &OldState<'_>) -> Result<(), String> {
    match old {
        OldState::Absent => match remove_file(ws, path) {
            Ok(()) | Err(crate::safe_write::FileError::NotFound) => Ok(()),
            Err(e) => Err(e.to_string()),
        },
        OldState::Present {
            mode,
            uid,
            gid,
            bytes,
        } => write_file_as(
            ws,
            path,
            bytes,
            Some(FileMeta {
                mode: *mode,
                uid: *uid,
                gid: *gid,
                links: 1,
            }),
        )
        .map(|_| ())
        .map_err(|e| e.to_string()),
    }
}

#[cfg(test)]
mod tests;

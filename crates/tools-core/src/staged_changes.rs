//! Staged changes: what `ast_edit`, a `preview: true` write, edit or patch, or a previewed
//! rename proposes, and `resolve` accepts or discards. One store per run
//! ([`StagedChanges::for_run`]), so one `resolve` serves every tool that stages.
//!
//! A staged change records, per file, the SHA-256 of the content it was computed from (or
//! that the file did not exist) and the new content. `accept` takes the run's write locks
//! of every file, then re-resolves each path through the workspace jail (a folder swapped
//! for a symlink since staging is refused) and re-reads it; one mismatch rejects the whole
//! change and writes nothing. Then the files are written through
//! [`crate::safe_write::apply_all_or_nothing`]: each atomically, keeping its mode, and if a
//! write fails part-way the files already written get their old content and mode back.
//! [`WriteFaults`] is the seam where tests inject a failure.
//!
//! Bounds per run: at most [`StagedChanges::set_limits`]'s count of changes pending at once
//! and its bytes of new content held; past either, staging is refused until something is
//! resolved.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::safe_write::{self, FileChange, MAX_UNDO_BYTES};
use crate::{PathLocks, Run, ToolError, Workspace};

/// Changes pending at once per run, unless a family sets its own limit.
pub const DEFAULT_MAX_PENDING: usize = 16;
/// Bytes of new content all pending changes may hold together, unless set otherwise.
pub const DEFAULT_MAX_BYTES: usize = 256 << 20;

/// Where `resolve accept` can be made to fail on purpose, to test its undo: called just
/// before each file of an accepted change is written; an error fails that write exactly as
/// a full disk would. [`NoWriteFaults`] is the default.
pub trait WriteFaults: Send + Sync {
    /// Fails the write of `path` when it returns an error.
    fn before_write(&self, path: &Path) -> std::io::Result<()>;
}

/// Never fails a write.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoWriteFaults;

impl WriteFaults for NoWriteFaults {
    fn before_write(&self, _path: &Path) -> std::io::Result<()> {
        Ok(())
    }
}

/// The SHA-256 of `bytes`, hex.
pub fn content_hash(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// One file of a staged change.
#[derive(Debug, Clone)]
pub struct StagedFile {
    /// Absolute path.
    pub path: PathBuf,
    /// SHA-256 of the content the change was computed from; `None` when the file did not
    /// exist then (and must still not exist when the change is accepted).
    pub hash: Option<String>,
    /// The new content; `None` deletes the file.
    pub new_text: Option<String>,
    /// Replacements in this file (0 where the tool does not count them).
    pub replacements: usize,
    /// The mode to give the file when written; `None` keeps an existing file's mode (a file
    /// moved by a patch carries its old mode here).
    pub mode: Option<u32>,
}

/// A staged change, not yet written.
#[derive(Debug, Clone)]
pub struct StagedChange {
    /// `edit_N` (ast_edit) or `change_N` (previews).
    pub id: String,
    /// The tool that staged it, named in messages (`ast_edit`, `write`, …).
    pub origin: String,
    /// Files in path order.
    pub files: Vec<StagedFile>,
}

impl StagedChange {
    fn bytes(&self) -> usize {
        self.files
            .iter()
            .map(|f| f.new_text.as_ref().map_or(0, String::len))
            .sum()
    }
}

#[derive(Default)]
struct Inner {
    next: u64,
    pending: BTreeMap<String, StagedChange>,
    resolved: HashMap<String, String>,
    max_pending: Option<usize>,
    max_bytes: Option<usize>,
}

/// One run's staged changes.
#[derive(Default)]
pub struct StagedChanges {
    inner: Mutex<Inner>,
}

/// What `accept` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// The tool that staged the change.
    pub origin: String,
    /// Files written (or deleted), in order.
    pub written: Vec<PathBuf>,
    /// Files deleted, in order.
    pub deleted: Vec<PathBuf>,
    /// Replacements applied.
    pub replacements: usize,
}

impl StagedChanges {
    /// The run's store (one per run, created on first use with the default bounds).
    pub fn for_run(run: &Run) -> Arc<StagedChanges> {
        run.state(StagedChanges::default)
    }

    /// A store with the given bounds (tests; a run's store is [`StagedChanges::for_run`]).
    pub fn with_limits(max_pending: usize, max_bytes: usize) -> Self {
        let s = StagedChanges::default();
        s.set_limits(max_pending, max_bytes);
        s
    }

    /// Sets the bounds (a family's configuration, e.g. `[ast] max_pending_edits`).
    pub fn set_limits(&self, max_pending: usize, max_bytes: usize) {
        if let Ok(mut g) = self.inner.lock() {
            g.max_pending = Some(max_pending);
            g.max_bytes = Some(max_bytes);
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Inner>, ToolError> {
        self.inner
            .lock()
            .map_err(|_| ToolError::internal("the staged-change store lock is poisoned"))
    }

    /// Stages `files` on behalf of `origin`, naming it `{prefix}_N`; refuses when the
    /// bounds are reached.
    pub fn stage(
        &self,
        origin: &str,
        prefix: &str,
        files: Vec<StagedFile>,
    ) -> Result<String, ToolError> {
        let mut store = self.lock()?;
        let max_pending = store.max_pending.unwrap_or(DEFAULT_MAX_PENDING);
        let max_bytes = store.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        if store.pending.len() >= max_pending {
            let ids: Vec<_> = store.pending.keys().cloned().collect();
            return Err(ToolError::rejected(format!(
                "{} staged changes are already pending (the limit per run is {max_pending}): {}. \
                 Call resolve with action \"accept\" or \"discard\" on one of them first.",
                ids.len(),
                ids.join(", ")
            )));
        }
        let held: usize = store.pending.values().map(StagedChange::bytes).sum();
        let new: usize = files
            .iter()
            .map(|f| f.new_text.as_ref().map_or(0, String::len))
            .sum();
        if held + new > max_bytes {
            return Err(ToolError::rejected(format!(
                "staging this change would hold {} bytes of new content, over the per-run limit of {max_bytes} bytes; \
                 resolve pending changes or make this one smaller",
                held + new,
            )));
        }
        store.next += 1;
        let id = format!("{prefix}_{}", store.next);
        store.pending.insert(
            id.clone(),
            StagedChange {
                id: id.clone(),
                origin: origin.to_string(),
                files,
            },
        );
        Ok(id)
    }

    fn take(&self, id: &str) -> Result<StagedChange, ToolError> {
        let mut store = self.lock()?;
        if let Some(change) = store.pending.remove(id) {
            return Ok(change);
        }
        if let Some(how) = store.resolved.get(id) {
            return Err(ToolError::rejected(format!(
                "`{id}` was already {how}; stage the change again"
            )));
        }
        let pending: Vec<_> = store.pending.keys().cloned().collect();
        Err(ToolError::invalid(
            "edit_id",
            format!(
                "no staged change `{id}` in this run; pending: {}",
                if pending.is_empty() {
                    "none".to_string()
                } else {
                    pending.join(", ")
                }
            ),
        ))
    }

    fn mark(&self, id: &str, how: &str) {
        if let Ok(mut store) = self.lock() {
            store.resolved.insert(id.to_string(), how.to_string());
        }
    }

    /// Drops a pending change.
    pub fn discard(&self, id: &str) -> Result<StagedChange, ToolError> {
        let change = self.take(id)?;
        self.mark(id, "discarded");
        Ok(change)
    }

    /// The files a pending change writes, as proposed contents (for a preview of its
    /// diagnostics); deletions are left out. Empty when `id` is not pending.
    pub fn proposed(&self, id: &str) -> Vec<crate::ProposedFile> {
        let Ok(g) = self.lock() else {
            return Vec::new();
        };
        g.pending
            .get(id)
            .map(|c| {
                c.files
                    .iter()
                    .filter_map(|f| {
                        f.new_text.as_ref().map(|t| crate::ProposedFile {
                            path: f.path.clone(),
                            text: t.clone(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The files of a pending change, if `id` is pending.
    fn paths_of(&self, id: &str) -> Result<Option<Vec<PathBuf>>, ToolError> {
        let g = self.lock()?;
        Ok(g.pending
            .get(id)
            .map(|e| e.files.iter().map(|f| f.path.clone()).collect()))
    }

    /// Writes a pending change, all or nothing, holding `locks` for every file it writes.
    /// Files are named as `ws` displays them.
    pub fn accept(
        &self,
        id: &str,
        ws: &Workspace,
        locks: &Arc<PathLocks>,
        faults: &dyn WriteFaults,
    ) -> Result<Accepted, ToolError> {
        let display = |p: &Path| ws.display(p);
        // Lock first (the change stays pending if the wait runs out), then take it.
        let guard = match self.paths_of(id)? {
            Some(paths) => Some(locks.lock(paths)?),
            None => None,
        };
        let change = self.take(id)?;
        let Some(guard) = guard else {
            return Err(ToolError::internal(format!(
                "`{id}` was staged while its files were being locked; call resolve again"
            )));
        };
        // 1. Every file must still be where and what the change was computed from.
        let mut changed = Vec::new();
        for f in &change.files {
            if let Err(e) = ws.confirm_resolved(&f.path) {
                changed.push(format!("{} ({e})", display(&f.path)));
                continue;
            }
            match (
                safe_write::read_file_if_exists(ws, &f.path, MAX_UNDO_BYTES),
                &f.hash,
            ) {
                (Ok(Some(now)), Some(h)) if content_hash(&now.bytes) == *h => {}
                (Ok(None), None) => {}
                (Ok(Some(_)), Some(_)) => {
                    changed.push(format!("{} (content changed)", display(&f.path)))
                }
                (Ok(Some(_)), None) => {
                    changed.push(format!("{} (created since)", display(&f.path)))
                }
                (Ok(None), Some(_)) => {
                    changed.push(format!("{} (deleted since)", display(&f.path)))
                }
                (Err(e), _) => changed.push(format!(
                    "{} (cannot be read: {})",
                    display(&f.path),
                    e.for_file(&display(&f.path))
                )),
            }
        }
        if !changed.is_empty() {
            self.mark(id, "rejected because files changed after staging");
            return Err(ToolError::rejected(format!(
                "`{id}` was not applied: {} file(s) changed since it was staged: {}. \
                 Nothing was written. Run {} again to stage the change against the current files.",
                changed.len(),
                crate::text::cap_list(changed.iter(), 20)
                    .shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                change.origin
            )));
        }
        // 2. Write all or nothing; a failure part-way restores what was already written.
        let changes: Vec<FileChange> = change
            .files
            .iter()
            .map(|f| match &f.new_text {
                Some(text) => FileChange::Write {
                    path: f.path.clone(),
                    content: text.clone().into_bytes(),
                    mode: f.mode,
                },
                None => FileChange::Delete {
                    path: f.path.clone(),
                },
            })
            .collect();
        let fault = |_: usize, c: &FileChange| faults.before_write(c.path());
        if let Err(e) = safe_write::apply_all_or_nothing(ws, &guard, &changes, Some(&fault)) {
            self.mark(id, "rejected after a failed write");
            return Err(match e {
                ToolError::Internal(m) => ToolError::internal(format!("`{id}`: {m}")),
                other => other,
            });
        }
        drop(guard);
        self.mark(id, "accepted");
        Ok(Accepted {
            origin: change.origin.clone(),
            written: change.files.iter().map(|f| f.path.clone()).collect(),
            deleted: change
                .files
                .iter()
                .filter(|f| f.new_text.is_none())
                .map(|f| f.path.clone())
                .collect(),
            replacements: change.files.iter().map(|f| f.replacements).sum(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    struct FailOn(std::sync::atomic::AtomicUsize, usize);
    #[cfg(unix)]
    impl WriteFaults for FailOn {
        fn before_write(&self, _path: &Path) -> std::io::Result<()> {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            if n == self.1 {
                return Err(std::io::Error::other("injected failure"));
            }
            Ok(())
        }
    }

    fn staged(dir: &Path, names: &[&str]) -> Vec<StagedFile> {
        names
            .iter()
            .map(|n| {
                let p = dir.join(n);
                std::fs::write(&p, format!("old {n}\n")).unwrap();
                StagedFile {
                    hash: Some(content_hash(format!("old {n}\n").as_bytes())),
                    path: p,
                    new_text: Some(format!("new {n}\n")),
                    replacements: 1,
                    mode: None,
                }
            })
            .collect()
    }

    #[test]
    fn bounded_and_ids_are_sequential() {
        let d = tempfile::tempdir().unwrap();
        let s = StagedChanges::with_limits(2, 1 << 20);
        assert_eq!(
            s.stage("ast_edit", "edit", staged(d.path(), &["a"]))
                .unwrap(),
            "edit_1"
        );
        assert_eq!(
            s.stage("write", "change", staged(d.path(), &["b"]))
                .unwrap(),
            "change_2"
        );
        assert!(matches!(
            s.stage("ast_edit", "edit", staged(d.path(), &["c"])),
            Err(ToolError::Rejected(_))
        ));
        s.discard("edit_1").unwrap();
        assert_eq!(
            s.stage("ast_edit", "edit", staged(d.path(), &["c"]))
                .unwrap(),
            "edit_3"
        );
        assert!(
            s.discard("edit_1")
                .unwrap_err()
                .to_string()
                .contains("already discarded")
        );
        assert!(matches!(
            s.discard("edit_9"),
            Err(ToolError::InvalidArguments { .. })
        ));
        let tiny = StagedChanges::with_limits(5, 4);
        assert!(tiny.stage("x", "edit", staged(d.path(), &["d"])).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_file_whose_name_is_not_utf8_is_written_byte_exactly() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let s = StagedChanges::with_limits(4, 1 << 20);
        let odd = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
        let p = ws.root().join(odd);
        std::fs::write(&p, "old\n").unwrap();
        let mut files = staged(ws.root(), &["plain.py"]);
        files.push(StagedFile {
            path: p.clone(),
            hash: Some(content_hash(b"old\n")),
            new_text: Some("new\n".into()),
            replacements: 1,
            mode: None,
        });
        let id = s.stage("ast_edit", "edit", files).unwrap();
        let locks = Arc::new(PathLocks::default());
        s.accept(&id, &ws, &locks, &NoWriteFaults).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        assert_eq!(
            std::fs::read_to_string(ws.root().join("plain.py")).unwrap(),
            "new plain.py\n"
        );
        let mut names: Vec<Vec<u8>> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().as_bytes().to_vec())
            .collect();
        names.sort();
        assert_eq!(names, vec![b"caf\xe9.py".to_vec(), b"plain.py".to_vec()]);
    }

    #[cfg(unix)]
    #[test]
    fn failed_write_restores_everything() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let s = StagedChanges::with_limits(4, 1 << 20);
        let id = s
            .stage("ast_edit", "edit", staged(ws.root(), &["a", "b", "c"]))
            .unwrap();
        let a = ws.root().join("a");
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o750)).unwrap();
        let locks = Arc::new(PathLocks::default());
        let w = FailOn(0.into(), 2);
        let e = s.accept(&id, &ws, &locks, &w).unwrap_err();
        assert!(e.to_string().contains("restored"), "{e}");
        for n in ["a", "b", "c"] {
            assert_eq!(
                std::fs::read_to_string(ws.root().join(n)).unwrap(),
                format!("old {n}\n")
            );
        }
        assert_eq!(
            std::fs::metadata(&a).unwrap().permissions().mode() & 0o7777,
            0o750
        );
        // No temp files left behind.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 3);
        // Staged again and accepted: every file written, the mode kept.
        let id = s
            .stage("ast_edit", "edit", staged(ws.root(), &["a", "b", "c"]))
            .unwrap();
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o750)).unwrap();
        s.accept(&id, &ws, &locks, &NoWriteFaults).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a\n");
        assert_eq!(
            std::fs::metadata(&a).unwrap().permissions().mode() & 0o7777,
            0o750
        );
    }

    #[test]
    fn a_new_file_must_still_be_absent_and_any_change_rejects_the_whole_change() {
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let s = StagedChanges::default();
        let locks = Arc::new(PathLocks::default());
        let mut files = staged(ws.root(), &["a"]);
        files.push(StagedFile {
            path: ws.root().join("new.txt"),
            hash: None,
            new_text: Some("fresh\n".into()),
            replacements: 0,
            mode: None,
        });
        let id = s.stage("write", "change", files.clone()).unwrap();
        std::fs::write(ws.root().join("new.txt"), "someone else\n").unwrap();
        let e = s.accept(&id, &ws, &locks, &NoWriteFaults).unwrap_err();
        assert!(e.to_string().contains("new.txt (created since)"), "{e}");
        assert!(e.to_string().contains("Run write again"), "{e}");
        assert_eq!(
            std::fs::read_to_string(ws.root().join("a")).unwrap(),
            "old a\n"
        );
        std::fs::remove_file(ws.root().join("new.txt")).unwrap();
        let id = s.stage("write", "change", files).unwrap();
        let done = s.accept(&id, &ws, &locks, &NoWriteFaults).unwrap();
        assert_eq!(done.written.len(), 2);
        assert_eq!(
            std::fs::read_to_string(ws.root().join("new.txt")).unwrap(),
            "fresh\n"
        );
    }
}

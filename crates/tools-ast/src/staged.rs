//! Staged edits: what `ast_edit` proposes and `resolve` accepts or discards.
//!
//! A staged edit records, per file, the SHA-256 of the content it was computed from and the
//! new content. `accept` takes the run's write locks of every file, then re-resolves each
//! path through the workspace jail (a folder swapped for a symlink since staging is
//! refused) and re-reads it; one mismatch rejects the whole edit and writes nothing. Then
//! the files are written through [`tools_core::safe_write::apply_all_or_nothing`]: each
//! atomically, keeping its mode, and if a write fails part-way the files already written
//! get their old content and mode back. [`WriteFaults`] is the seam where tests inject a
//! failure.
//!
//! Bounds per run: at most [`crate::AstConfig::max_pending_edits`] edits pending at once and
//! [`crate::AstConfig::max_staged_bytes`] of new content held; past either, `ast_edit` is
//! refused until something is resolved.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use tools_core::safe_write::{self, FileChange, MAX_UNDO_BYTES};
use tools_core::{PathLocks, ToolError, Workspace};

/// Where `resolve accept` can be made to fail on purpose, to test its undo: called just
/// before each file of an accepted edit is written; an error fails that write exactly as a
/// full disk would. [`NoWriteFaults`] is the default.
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

/// One file of a staged edit.
#[derive(Debug, Clone)]
pub struct StagedFile {
    /// Absolute path.
    pub path: PathBuf,
    /// SHA-256 of the content the edit was computed from.
    pub hash: String,
    /// The new content.
    pub new_text: String,
    /// Replacements in this file.
    pub replacements: usize,
}

/// A staged change, not yet written.
#[derive(Debug, Clone)]
pub struct StagedEdit {
    /// `edit_N`.
    pub id: String,
    /// Files in path order.
    pub files: Vec<StagedFile>,
}

impl StagedEdit {
    fn bytes(&self) -> usize {
        self.files.iter().map(|f| f.new_text.len()).sum()
    }
}

#[derive(Default)]
struct Inner {
    next: u64,
    pending: BTreeMap<String, StagedEdit>,
    resolved: HashMap<String, &'static str>,
}

/// One run's staged edits.
pub struct EditStore {
    inner: Mutex<Inner>,
    max_pending: usize,
    max_bytes: usize,
}

/// What `accept` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    /// Files written, in order.
    pub written: Vec<PathBuf>,
    /// Replacements applied.
    pub replacements: usize,
}

impl EditStore {
    /// A store with the given bounds.
    pub fn new(max_pending: usize, max_bytes: usize) -> Self {
        EditStore {
            inner: Mutex::new(Inner::default()),
            max_pending,
            max_bytes,
        }
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Inner>, ToolError> {
        self.inner
            .lock()
            .map_err(|_| ToolError::internal("the staged-edit store lock is poisoned"))
    }

    /// Stages `files` and returns the new edit's id, or refuses when the bounds are reached.
    pub fn stage(&self, files: Vec<StagedFile>) -> Result<String, ToolError> {
        let mut store = self.lock()?;
        if store.pending.len() >= self.max_pending {
            let ids: Vec<_> = store.pending.keys().cloned().collect();
            return Err(ToolError::rejected(format!(
                "{} staged edits are already pending (the limit per run is {}): {}. \
                 Call resolve with action \"accept\" or \"discard\" on one of them first.",
                ids.len(),
                self.max_pending,
                ids.join(", ")
            )));
        }
        let held: usize = store.pending.values().map(StagedEdit::bytes).sum();
        let new: usize = files.iter().map(|f| f.new_text.len()).sum();
        if held + new > self.max_bytes {
            return Err(ToolError::rejected(format!(
                "staging this change would hold {} bytes of new content, over the per-run limit of {} bytes; \
                 resolve pending edits or narrow `path`",
                held + new,
                self.max_bytes
            )));
        }
        store.next += 1;
        let id = format!("edit_{}", store.next);
        store.pending.insert(
            id.clone(),
            StagedEdit {
                id: id.clone(),
                files,
            },
        );
        Ok(id)
    }

    fn take(&self, id: &str) -> Result<StagedEdit, ToolError> {
        let mut store = self.lock()?;
        if let Some(edit) = store.pending.remove(id) {
            return Ok(edit);
        }
        if let Some(how) = store.resolved.get(id) {
            return Err(ToolError::rejected(format!(
                "`{id}` was already {how}; stage the change again with ast_edit"
            )));
        }
        let pending: Vec<_> = store.pending.keys().cloned().collect();
        Err(ToolError::invalid(
            "edit_id",
            format!(
                "no staged edit `{id}` in this run; pending: {}",
                if pending.is_empty() {
                    "none".to_string()
                } else {
                    pending.join(", ")
                }
            ),
        ))
    }

    fn mark(&self, id: &str, how: &'static str) {
        if let Ok(mut store) = self.lock() {
            store.resolved.insert(id.to_string(), how);
        }
    }

    /// Drops a pending edit.
    pub fn discard(&self, id: &str) -> Result<StagedEdit, ToolError> {
        let edit = self.take(id)?;
        self.mark(id, "discarded");
        Ok(edit)
    }

    /// The files of a pending edit, if `id` is pending.
    fn paths_of(&self, id: &str) -> Result<Option<Vec<PathBuf>>, ToolError> {
        let g = self.lock()?;
        Ok(g.pending
            .get(id)
            .map(|e| e.files.iter().map(|f| f.path.clone()).collect()))
    }

    /// Writes a pending edit, all or nothing, holding `locks` for every file it writes.
    /// Files are named as `ws` displays them.
    pub fn accept(
        &self,
        id: &str,
        ws: &Workspace,
        locks: &Arc<PathLocks>,
        faults: &dyn WriteFaults,
    ) -> Result<Accepted, ToolError> {
        let display = |p: &Path| ws.display(p);
        // Lock first (the edit stays pending if the wait runs out), then take it.
        let guard = match self.paths_of(id)? {
            Some(paths) => Some(locks.lock(paths)?),
            None => None,
        };
        let edit = self.take(id)?;
        let Some(guard) = guard else {
            return Err(ToolError::internal(format!(
                "`{id}` was staged while its files were being locked; call resolve again"
            )));
        };
        // 1. Every file must still be where and what the edit was computed from.
        let mut changed = Vec::new();
        for f in &edit.files {
            if let Err(e) = ws.confirm_resolved(&f.path) {
                changed.push(format!("{} ({e})", display(&f.path)));
                continue;
            }
            match safe_write::read_file(ws, &f.path, MAX_UNDO_BYTES) {
                Ok(now) if content_hash(&now.bytes) == f.hash => {}
                Ok(_) => changed.push(format!("{} (content changed)", display(&f.path))),
                Err(e) => changed.push(format!(
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
                 Nothing was written. Run ast_edit again to stage the change against the current files.",
                changed.len(),
                tools_core::text::cap_list(changed.iter(), 20)
                    .shown
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        // 2. Write all or nothing; a failure part-way restores what was already written.
        let changes: Vec<FileChange> = edit
            .files
            .iter()
            .map(|f| FileChange::Write {
                path: f.path.clone(),
                content: f.new_text.clone().into_bytes(),
                mode: None,
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
            written: edit.files.iter().map(|f| f.path.clone()).collect(),
            replacements: edit.files.iter().map(|f| f.replacements).sum(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct FailOn(std::sync::atomic::AtomicUsize, usize);
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
                    hash: content_hash(format!("old {n}\n").as_bytes()),
                    path: p,
                    new_text: format!("new {n}\n"),
                    replacements: 1,
                }
            })
            .collect()
    }

    #[test]
    fn bounded_and_ids_are_sequential() {
        let d = tempfile::tempdir().unwrap();
        let s = EditStore::new(2, 1 << 20);
        assert_eq!(s.stage(staged(d.path(), &["a"])).unwrap(), "edit_1");
        assert_eq!(s.stage(staged(d.path(), &["b"])).unwrap(), "edit_2");
        assert!(matches!(
            s.stage(staged(d.path(), &["c"])),
            Err(ToolError::Rejected(_))
        ));
        s.discard("edit_1").unwrap();
        assert_eq!(s.stage(staged(d.path(), &["c"])).unwrap(), "edit_3");
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
        let tiny = EditStore::new(5, 4);
        assert!(tiny.stage(staged(d.path(), &["d"])).is_err());
    }

    #[test]
    fn failed_write_restores_everything() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let ws = Workspace::new(d.path()).unwrap();
        let s = EditStore::new(4, 1 << 20);
        let id = s.stage(staged(ws.root(), &["a", "b", "c"])).unwrap();
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
        let id = s.stage(staged(ws.root(), &["a", "b", "c"])).unwrap();
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o750)).unwrap();
        s.accept(&id, &ws, &locks, &NoWriteFaults).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "new a\n");
        assert_eq!(
            std::fs::metadata(&a).unwrap().permissions().mode() & 0o7777,
            0o750
        );
    }
}

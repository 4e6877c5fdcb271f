//! Staged edits: what `ast_edit` proposes and `resolve` accepts or discards.
//!
//! A staged edit records, per file, the SHA-256 of the content it was computed from and the
//! new content. `accept` re-reads every file first; one mismatch rejects the whole edit and
//! writes nothing. Then every file is written atomically (temp file + rename in the same
//! folder), and if a write fails part-way the files already written get their old content
//! back. Writes go through a [`FileWriter`], the seam where tests inject a failure.
//!
//! Bounds per run: at most [`crate::AstConfig::max_pending_edits`] edits pending at once and
//! [`crate::AstConfig::max_staged_bytes`] of new content held; past either, `ast_edit` is
//! refused until something is resolved.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};
use tools_core::ToolError;

/// Writes a whole file. The default is [`AtomicWriter`]; tests substitute one that fails.
pub trait FileWriter: Send + Sync {
    /// Replaces `path`'s content with `contents`, atomically or not at all.
    fn write(&self, path: &Path, contents: &[u8]) -> std::io::Result<()>;
}

/// Temp file in the same folder, permissions copied from the file it replaces, then rename.
#[derive(Debug, Default, Clone, Copy)]
pub struct AtomicWriter;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FileWriter for AtomicWriter {
    fn write(&self, path: &Path, contents: &[u8]) -> std::io::Result<()> {
        let dir = path.parent().unwrap_or(Path::new("."));
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into());
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.ast-edit-{}-{n}.tmp", std::process::id()));
        let result = (|| {
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(contents)?;
            f.sync_all()?;
            if let Ok(meta) = std::fs::metadata(path) {
                std::fs::set_permissions(&tmp, meta.permissions())?;
            }
            std::fs::rename(&tmp, path)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        result
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

    /// Writes a pending edit, all or nothing. `display` turns paths into what the model sees.
    pub fn accept(
        &self,
        id: &str,
        writer: &dyn FileWriter,
        display: &dyn Fn(&Path) -> String,
    ) -> Result<Accepted, ToolError> {
        let edit = self.take(id)?;
        // 1. Every file must still be what the edit was computed from.
        let mut originals = Vec::with_capacity(edit.files.len());
        let mut changed = Vec::new();
        for f in &edit.files {
            match std::fs::read(&f.path) {
                Ok(bytes) if content_hash(&bytes) == f.hash => originals.push(bytes),
                Ok(_) => changed.push(format!("{} (content changed)", display(&f.path))),
                Err(e) => changed.push(format!("{} (cannot be read: {e})", display(&f.path))),
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
        // 2. Write; on a failure, put back what was already written.
        let mut written: Vec<usize> = Vec::new();
        for (i, f) in edit.files.iter().enumerate() {
            if let Err(e) = writer.write(&f.path, f.new_text.as_bytes()) {
                let mut not_restored = Vec::new();
                for &j in written.iter().rev() {
                    let path = &edit.files[j].path;
                    if let Err(e2) = writer
                        .write(path, &originals[j])
                        .or_else(|_| AtomicWriter.write(path, &originals[j]))
                    {
                        not_restored.push(format!("{} ({e2})", display(path)));
                    }
                }
                self.mark(id, "rejected after a failed write");
                let restored = if not_restored.is_empty() {
                    format!(
                        "the {} file(s) already written were restored, so no file is changed",
                        written.len()
                    )
                } else {
                    format!(
                        "these files could NOT be restored and hold the new content: {}",
                        not_restored.join(", ")
                    )
                };
                return Err(ToolError::internal(format!(
                    "`{id}` failed writing {}: {e}; {restored}",
                    display(&f.path)
                )));
            }
            written.push(i);
        }
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
    impl FileWriter for FailOn {
        fn write(&self, path: &Path, contents: &[u8]) -> std::io::Result<()> {
            let n = self.0.fetch_add(1, Ordering::SeqCst) + 1;
            if n == self.1 {
                return Err(std::io::Error::other("injected failure"));
            }
            AtomicWriter.write(path, contents)
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
        let d = tempfile::tempdir().unwrap();
        let s = EditStore::new(4, 1 << 20);
        let id = s.stage(staged(d.path(), &["a", "b", "c"])).unwrap();
        let w = FailOn(0.into(), 2);
        let e = s.accept(&id, &w, &|p| p.display().to_string()).unwrap_err();
        assert!(e.to_string().contains("restored"), "{e}");
        for n in ["a", "b", "c"] {
            assert_eq!(
                std::fs::read_to_string(d.path().join(n)).unwrap(),
                format!("old {n}\n")
            );
        }
        // No temp files left behind.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 3);
    }
}

//! Atomic writes of one or many files, all or nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use tools_core::ToolError;

/// One planned change to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileChange {
    /// Write `content` at `path` (creating parent folders).
    Write {
        /// Absolute path.
        path: PathBuf,
        /// The new bytes.
        content: Vec<u8>,
    },
    /// Delete `path`.
    Delete {
        /// Absolute path.
        path: PathBuf,
    },
}

impl FileChange {
    fn path(&self) -> &Path {
        match self {
            FileChange::Write { path, .. } | FileChange::Delete { path } => path,
        }
    }
}

/// Writes `content` to `path` atomically: a temp file in the same folder, then rename.
/// An existing file keeps its permissions.
pub fn write_atomic(path: &Path, content: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".agent-tools-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(content)?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A hook that can fail the n-th write, for tests of the rollback.
pub type FailAt = Option<usize>;

/// Applies every change or none. Before anything is written the previous content of each
/// target is recorded; if a write fails part-way, every file already changed is restored
/// (and files that did not exist are removed). Returns the paths changed.
pub fn apply_all_or_nothing(changes: &[FileChange]) -> Result<Vec<PathBuf>, ToolError> {
    apply_with_injected_failure(changes, None)
}

pub(crate) fn apply_with_injected_failure(
    changes: &[FileChange],
    fail_at: FailAt,
) -> Result<Vec<PathBuf>, ToolError> {
    let mut backups: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
    for c in changes {
        let p = c.path();
        let old = match std::fs::read(p) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(ToolError::internal(format!(
                    "cannot read {}: {e}",
                    p.display()
                )));
            }
        };
        backups.push((p.to_path_buf(), old));
    }
    for (i, c) in changes.iter().enumerate() {
        let result = if fail_at == Some(i) {
            Err(std::io::Error::other("injected failure"))
        } else {
            match c {
                FileChange::Write { path, content } => write_atomic(path, content),
                FileChange::Delete { path } => std::fs::remove_file(path),
            }
        };
        if let Err(e) = result {
            let mut restore_errors = Vec::new();
            for (path, old) in backups[..i].iter().rev() {
                let r = match old {
                    Some(bytes) => write_atomic(path, bytes),
                    None => std::fs::remove_file(path).or_else(|e| {
                        if e.kind() == std::io::ErrorKind::NotFound {
                            Ok(())
                        } else {
                            Err(e)
                        }
                    }),
                };
                if let Err(re) = r {
                    restore_errors.push(format!("{}: {re}", path.display()));
                }
            }
            let mut msg = format!(
                "writing {} failed: {e}; no file was changed",
                c.path().display()
            );
            if !restore_errors.is_empty() {
                msg = format!(
                    "writing {} failed: {e}; restoring the files already written also failed for: {}",
                    c.path().display(),
                    restore_errors.join(", ")
                );
            }
            return Err(ToolError::internal(msg));
        }
    }
    Ok(changes.iter().map(|c| c.path().to_path_buf()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_part_way_restores_everything() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a");
        let b = d.path().join("b");
        let c = d.path().join("new/c");
        std::fs::write(&a, "A").unwrap();
        std::fs::write(&b, "B").unwrap();
        let changes = vec![
            FileChange::Write {
                path: a.clone(),
                content: b"A2".to_vec(),
            },
            FileChange::Write {
                path: c.clone(),
                content: b"C".to_vec(),
            },
            FileChange::Delete { path: b.clone() },
        ];
        assert!(apply_with_injected_failure(&changes, Some(2)).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "A");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "B");
        assert!(!c.exists());
        apply_all_or_nothing(&changes).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "A2");
        assert!(!b.exists());
        assert_eq!(std::fs::read_to_string(&c).unwrap(), "C");
    }
}

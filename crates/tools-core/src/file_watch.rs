//! Files changed outside the tools under one folder: a `git checkout`, a formatter, the
//! agent's shell — collected as their net change since they were last taken.
//!
//! A language server only knows what it is told. So each server's root is watched (the
//! `notify` crate; the folders `.gitignore` and friends exclude are not watched, nor `.git`,
//! `target`, `node_modules` and virtualenvs) and its changes are collected here, for the LSP
//! client of a conversation (handed to the server at its next query) and for the per-user
//! daemon (handed to a server no conversation uses, so it is not stale when the next one
//! comes).
//!
//! When watching cannot start (no inotify watches left, too many folders), [`FolderWatch::watch`]
//! answers `None` and the caller falls back to reading what it needs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use notify::event::RenameMode;
use notify::{EventKind, RecursiveMode, Watcher};

use crate::sync::lock_unpoisoned as lock;

/// Most folders watched per root; a bigger tree falls back to re-reading open documents.
pub const MAX_WATCHED_DIRS: usize = 10_000;

/// Folders never watched (besides what ignore files exclude).
const SKIPPED: [&str; 6] = [
    ".git",
    "node_modules",
    "target",
    ".venv",
    "venv",
    "__pycache__",
];

/// How a file changed, net, since the changes were last taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    /// It appeared.
    Created,
    /// Its content changed (or it was replaced).
    Changed,
    /// It went.
    Deleted,
}

type Changes = Arc<Mutex<HashMap<PathBuf, FileChange>>>;

/// The changes seen under one root since they were last taken.
pub struct FolderWatch {
    root: PathBuf,
    changes: Changes,
    // Kept for its lifetime: dropping it stops the watching.
    _watcher: notify::RecommendedWatcher,
}

impl std::fmt::Debug for FolderWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FolderWatch").finish_non_exhaustive()
    }
}

fn skipped(name: &str) -> bool {
    SKIPPED.contains(&name)
}

/// Whether `path` lies in a folder that is never watched, judged below `root` only (a
/// workspace may itself sit in a folder named `target` or `venv`).
fn in_skipped_folder(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .any(|c| skipped(&c.as_os_str().to_string_lossy()))
}

/// Records one change, merged with what the path already had since the last take, so the
/// server hears the net effect: created then changed is created; deleted then created is
/// changed (a file replaced by a rename over it, as safe writers and formatters do); created
/// then deleted is nothing at all (a temp file that came and went: rust-analyzer reloads
/// the whole workspace for a file it is told was deleted); anything else is the last kind.
fn record(changes: &Changes, path: PathBuf, kind: FileChange) {
    merge_change(&mut lock(changes), path, kind);
}

/// Merges one change of `path` into `m`, so it holds the net change since it was last
/// emptied: the rules a watch follows between two takes (created then changed is created,
/// deleted then created is changed, created then deleted is nothing), for a collector of
/// what several takes returned (the daemon keeps one per conversation).
pub fn merge_change(m: &mut HashMap<PathBuf, FileChange>, path: PathBuf, kind: FileChange) {
    let merged = match (m.get(&path), kind) {
        (Some(&FileChange::Created), FileChange::Deleted) => {
            m.remove(&path);
            return;
        }
        (Some(&FileChange::Created), FileChange::Changed) => FileChange::Created,
        (Some(&FileChange::Deleted), FileChange::Created) => FileChange::Changed,
        (_, k) => k,
    };
    m.insert(path, merged);
}

impl FolderWatch {
    /// Starts watching `root`. `None` when the platform refuses or the tree is too big.
    pub fn watch(root: &Path) -> Option<FolderWatch> {
        let changes: Changes = Arc::new(Mutex::new(HashMap::new()));
        let sink = Arc::clone(&changes);
        let base = root.to_path_buf();
        let handler = move |res: notify::Result<notify::Event>| {
            let Ok(ev) = res else {
                return;
            };
            let kind = match ev.kind {
                EventKind::Create(_) => Some(FileChange::Created),
                // inotify reports a rename three times: its source, its target, then both
                // together; the pair would undo the merging of the first two (a temp file
                // renamed into place would come back as deleted).
                EventKind::Modify(notify::event::ModifyKind::Name(RenameMode::Both)) => return,
                // A rename: each path is created or deleted depending on what is there.
                EventKind::Modify(notify::event::ModifyKind::Name(_)) => None,
                EventKind::Modify(_) => Some(FileChange::Changed),
                EventKind::Remove(_) => Some(FileChange::Deleted),
                _ => return,
            };
            for p in ev.paths {
                if in_skipped_folder(&base, &p) {
                    continue;
                }
                let k = kind.unwrap_or(if p.exists() {
                    FileChange::Created
                } else {
                    FileChange::Deleted
                });
                record(&sink, p, k);
            }
        };
        let mut watcher = notify::recommended_watcher(handler).ok()?;
        let dirs: Vec<PathBuf> = ignore::WalkBuilder::new(root)
            .filter_entry(|e| !skipped(&e.file_name().to_string_lossy()))
            .build()
            .flatten()
            .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
            .map(|e| e.into_path())
            .take(MAX_WATCHED_DIRS + 1)
            .collect();
        if dirs.len() > MAX_WATCHED_DIRS {
            tracing::debug!("{}: too many folders to watch", root.display());
            return None;
        }
        for d in &dirs {
            if let Err(e) = watcher.watch(d, RecursiveMode::NonRecursive) {
                tracing::debug!("cannot watch {}: {e}", d.display());
                return None;
            }
        }
        Some(FolderWatch {
            root: root.to_path_buf(),
            changes,
            _watcher: watcher,
        })
    }

    /// Takes the changes seen so far. Changes to `except` are dropped: a write observer
    /// tells the server about those itself, after taking the state before the write.
    /// Folders created since are watched from now on; their files are included.
    pub fn take(&mut self, except: &[PathBuf]) -> Vec<(PathBuf, FileChange)> {
        let drained: Vec<(PathBuf, FileChange)> = {
            let mut m = lock(&self.changes);
            let keep: Vec<PathBuf> = m.keys().filter(|p| except.contains(p)).cloned().collect();
            let mut out: Vec<(PathBuf, FileChange)> = m.drain().collect();
            out.retain(|(p, _)| !keep.contains(p));
            out
        };
        let mut files = Vec::new();
        for (p, k) in drained {
            if in_skipped_folder(&self.root, &p) {
                continue;
            }
            if k == FileChange::Created && p.is_dir() {
                // A folder that appeared (a checkout of another branch): watch it and report
                // the files already in it.
                for e in ignore::WalkBuilder::new(&p)
                    .filter_entry(|e| !skipped(&e.file_name().to_string_lossy()))
                    .build()
                    .flatten()
                    .take(MAX_WATCHED_DIRS)
                {
                    if e.file_type().is_some_and(|t| t.is_dir()) {
                        let _ = self._watcher.watch(e.path(), RecursiveMode::NonRecursive);
                    } else {
                        files.push((e.into_path(), FileChange::Created));
                    }
                }
            } else if !p.is_dir() {
                // Events arrive a moment after the change, and a file replaced by delete
                // and create (`git checkout`) may be taken between the two: what is on
                // disk now decides.
                let k = match (k, p.exists()) {
                    (FileChange::Deleted, true) => FileChange::Changed,
                    (_, false) => FileChange::Deleted,
                    (k, true) => k,
                };
                files.push((p, k));
            }
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_reported_by_its_net_change() {
        let c: Changes = Arc::new(Mutex::new(HashMap::new()));
        let (tmp, lib, gone) = (
            PathBuf::from("/r/.a.tmp"),
            PathBuf::from("/r/a.rs"),
            PathBuf::from("/r/b.rs"),
        );
        record(&c, tmp.clone(), FileChange::Created);
        record(&c, tmp.clone(), FileChange::Changed);
        record(&c, tmp.clone(), FileChange::Deleted);
        record(&c, lib.clone(), FileChange::Deleted);
        record(&c, lib.clone(), FileChange::Created);
        record(&c, gone.clone(), FileChange::Changed);
        record(&c, gone.clone(), FileChange::Deleted);
        let m = lock(&c);
        assert!(
            !m.contains_key(&tmp),
            "a file that came and went is not news"
        );
        assert_eq!(
            m.get(&lib),
            Some(&FileChange::Changed),
            "replaced, not created"
        );
        assert_eq!(m.get(&gone), Some(&FileChange::Deleted));
    }

    #[test]
    fn the_disk_decides_an_event_taken_between_delete_and_create() {
        // `git checkout -- f` deletes and re-creates f; taken between the two events, f
        // must not be reported deleted (an open document would be closed).
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("f.py"), "x = 1\n").unwrap();
        let mut w = FolderWatch::watch(&root).expect("watching works here");
        record(&w.changes, root.join("f.py"), FileChange::Deleted);
        record(&w.changes, root.join("gone.py"), FileChange::Changed);
        let taken = w.take(&[]);
        assert!(
            taken.contains(&(root.join("f.py"), FileChange::Changed)),
            "{taken:?}"
        );
        assert!(
            taken.contains(&(root.join("gone.py"), FileChange::Deleted)),
            "{taken:?}"
        );
    }

    #[test]
    fn a_file_renamed_into_place_reports_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "x\n").unwrap();
        let mut w = FolderWatch::watch(&root).expect("watching works here");
        // What a safe writer, an editor's atomic save or a formatter does.
        let tmp = root.join("src/.lib.rs.1234.tmp");
        std::fs::write(&tmp, "y\n").unwrap();
        std::fs::rename(&tmp, root.join("src/lib.rs")).unwrap();
        let mut seen = Vec::new();
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            seen.extend(w.take(&[]));
            if seen.iter().any(|(p, _)| p.ends_with("src/lib.rs")) {
                break;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        seen.extend(w.take(&[]));
        assert!(
            seen.iter().any(|(p, _)| p.ends_with("src/lib.rs")),
            "{seen:?}"
        );
        assert!(!seen.iter().any(|(p, _)| *p == tmp), "{seen:?}");
    }

    #[test]
    fn changes_are_collected_except_the_ones_a_write_reports() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(root.join("src/a.py"), "a = 1\n").unwrap();
        let mut w = FolderWatch::watch(&root).expect("watching works here");
        std::fs::write(root.join("src/a.py"), "a = 2\n").unwrap();
        std::fs::write(root.join("src/b.py"), "b = 1\n").unwrap();
        std::fs::write(root.join("node_modules/x/i.js"), "").unwrap();
        std::fs::create_dir_all(root.join("pkg")).unwrap();
        let mut seen = Vec::new();
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            seen.extend(w.take(&[root.join("src/b.py")]));
            if seen.iter().any(|(p, _)| p.ends_with("src/a.py")) {
                break;
            }
        }
        assert!(
            seen.iter().any(|(p, _)| p.ends_with("src/a.py")),
            "{seen:?}"
        );
        assert!(!seen.iter().any(|(p, _)| p.ends_with("b.py")), "{seen:?}");
        assert!(
            !seen
                .iter()
                .any(|(p, _)| p.starts_with(root.join("node_modules")))
        );
        // A file in a folder created after the watch began; a build folder created after it
        // (cargo's `target`) is never watched.
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let _ = w.take(&[]);
        std::fs::write(root.join("target/debug/x.rmeta"), "").unwrap();
        std::fs::write(root.join("pkg/c.py"), "c = 1\n").unwrap();
        let mut seen = Vec::new();
        for _ in 0..50 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            seen.extend(w.take(&[]));
            if seen.iter().any(|(p, _)| p.ends_with("pkg/c.py")) {
                break;
            }
        }
        assert!(
            seen.iter().any(|(p, _)| p.ends_with("pkg/c.py")),
            "{seen:?}"
        );
        assert!(
            !seen.iter().any(|(p, _)| p.starts_with(root.join("target"))),
            "{seen:?}"
        );
    }
}

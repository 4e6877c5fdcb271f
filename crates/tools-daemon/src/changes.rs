//! The files changed under a hosted server's root, as each conversation and the idle server
//! are to hear of them, from the daemon's one watch of that root.
//!
//! A conversation's client tells the server what changed outside the tools at its next query
//! (open documents first, after a write's state before was taken). In a conversation of its
//! own it watches the root itself; served by the daemon, it asks the daemon instead
//! ([`TakeFileChanges`]), so a new conversation does not walk the tree again (a large
//! repository's walk is most of a warm conversation's first answer) nor keep a second watch.
//! Each conversation has its own set of changes since its last ask; the idle set is told to
//! the server while no conversation is connected.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tools_core::{FileChange, FolderWatch, merge_change};

use crate::views::ConnId;

/// The daemon's own request, from a conversation's client to the mux (never to the server):
/// the files changed under the server's root since this conversation last asked.
#[derive(Debug)]
pub enum TakeFileChanges {}

impl lsp_types::request::Request for TakeFileChanges {
    type Params = TakeFileChangesParams;
    type Result = FileChangesTaken;
    const METHOD: &'static str = "agentTools/takeFileChanges";
}

/// What [`TakeFileChanges`] asks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TakeFileChangesParams {
    /// Files whose changes are dropped: a write observer tells the server of those itself,
    /// after taking the state before the write.
    pub except: Vec<PathBuf>,
}

/// What [`TakeFileChanges`] answers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileChangesTaken {
    /// Whether the daemon watches the root: `false` while its watch is starting or when it
    /// could not start (the client then re-reads its open documents itself).
    pub watching: bool,
    /// The net change of each file since the last ask, by path.
    pub changes: Vec<(PathBuf, FileChange)>,
}

/// One set of changes per connected conversation and one for the idle server, filled from
/// the root's watch.
#[derive(Default)]
pub(crate) struct ChangeSets {
    watch: Option<FolderWatch>,
    idle: HashMap<PathBuf, FileChange>,
    conns: HashMap<ConnId, HashMap<PathBuf, FileChange>>,
}

impl ChangeSets {
    /// The root's watch is ready (`None`: it could not start).
    pub(crate) fn watching(&mut self, watch: Option<FolderWatch>) {
        self.watch = watch;
    }

    /// A conversation connected: it starts with what the server has not been told yet.
    pub(crate) fn join(&mut self, conn: ConnId) {
        self.collect();
        self.conns.insert(conn, self.idle.clone());
    }

    /// A conversation left.
    pub(crate) fn leave(&mut self, conn: ConnId) {
        self.conns.remove(&conn);
    }

    /// What `conn` asks: its changes since it last asked, without those to `except`; `None`
    /// without a watch.
    pub(crate) fn take(
        &mut self,
        conn: ConnId,
        except: &[PathBuf],
    ) -> Option<Vec<(PathBuf, FileChange)>> {
        self.watch.as_ref()?;
        self.collect();
        let set = self.conns.get_mut(&conn)?;
        Some(sorted(set.drain().filter(|(p, _)| !except.contains(p))))
    }

    /// What the idle server has not been told (everything changed while conversations were
    /// connected too: each told it only what it asked for before it left, a repeat does no
    /// harm once none is waiting). Empty while a conversation is connected.
    pub(crate) fn take_idle(&mut self) -> Vec<(PathBuf, FileChange)> {
        self.collect();
        if !self.conns.is_empty() {
            return Vec::new();
        }
        sorted(self.idle.drain())
    }

    /// Moves what the watch saw into every set.
    fn collect(&mut self) {
        let Some(watch) = self.watch.as_mut() else {
            return;
        };
        for (path, change) in watch.take(&[]) {
            for set in self.conns.values_mut() {
                merge_change(set, path.clone(), change);
            }
            merge_change(&mut self.idle, path, change);
        }
    }
}

fn sorted(changes: impl Iterator<Item = (PathBuf, FileChange)>) -> Vec<(PathBuf, FileChange)> {
    let mut v: Vec<_> = changes.collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `conn`'s changes until `path` is among them (the watch's events arrive a moment
    /// after the change), then once more after a pause for stragglers.
    fn take_until(
        sets: &mut ChangeSets,
        conn: ConnId,
        path: &std::path::Path,
    ) -> Vec<(PathBuf, FileChange)> {
        let mut seen = Vec::new();
        for _ in 0..100 {
            seen.extend(sets.take(conn, &[]).expect("watching"));
            if seen.iter().any(|(p, _)| p == path) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        seen
    }

    #[test]
    fn each_conversation_hears_each_change_once_and_the_idle_server_after_they_left() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("a.py"), "a = 1\n").unwrap();
        let mut sets = ChangeSets::default();
        assert_eq!(
            sets.take(1, &[]),
            None,
            "no watch yet: the client reads for itself"
        );
        sets.watching(FolderWatch::watch(&root));
        sets.join(1);
        sets.join(2);
        std::fs::write(root.join("a.py"), "a = 2\n").unwrap();
        let a = root.join("a.py");
        assert_eq!(
            take_until(&mut sets, 1, &a),
            vec![(a.clone(), FileChange::Changed)]
        );
        assert_eq!(sets.take(1, &[]), Some(Vec::new()), "told once");
        // The other conversation still has it; a write observer's own file is dropped.
        std::fs::write(root.join("b.py"), "b = 1\n").unwrap();
        let b = root.join("b.py");
        take_until(&mut sets, 1, &b);
        assert_eq!(
            sets.take(2, std::slice::from_ref(&b)),
            Some(vec![(a.clone(), FileChange::Changed)])
        );
        assert!(sets.take_idle().is_empty(), "conversations are connected");
        // A conversation that joins now starts with what the server was not told.
        sets.join(3);
        assert_eq!(
            sets.take(3, &[]),
            Some(vec![
                (a.clone(), FileChange::Changed),
                (b.clone(), FileChange::Created)
            ])
        );
        for conn in [1, 2, 3] {
            sets.leave(conn);
        }
        assert_eq!(
            sets.take_idle(),
            vec![(a, FileChange::Changed), (b, FileChange::Created)]
        );
        assert!(sets.take_idle().is_empty());
        assert_eq!(
            sets.take(1, &[]),
            None,
            "a conversation that left has no set"
        );
    }
}

//! Files changed outside the tools, as the LSP client hands them to its server: the
//! folder watch of tools-core ([`tools_core::file_watch`]) with its changes named as LSP's
//! `FileChangeType`. They are handed over lazily, at the start of the next query or write
//! observation: open documents get a `didChange` (or `didClose` when deleted), other files a
//! `workspace/didChangeWatchedFiles`. That also means a query no longer re-reads every open
//! document from disk: only the ones that changed. Without a watch (none could start), the
//! client re-reads every open document before each query. A client the per-user daemon
//! serves asks the daemon for its changes instead of watching (the daemon watches each
//! server's root once, for every conversation).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use lsp_types::FileChangeType;
use tools_core::{FileChange, FolderWatch};

/// Where the changes under one server's root come from.
#[derive(Debug)]
pub enum ExternalChanges {
    /// The client's own watch of the root.
    Own(Mutex<FolderWatch>),
    /// The daemon serving the server watches the root and keeps this conversation's changes
    /// ([`tools_daemon::TakeFileChanges`]): a conversation the daemon serves walks no tree.
    FromDaemon,
}

impl ExternalChanges {
    /// Starts watching `root`. `None` when the platform refuses or the tree is too big.
    pub fn watch(root: &Path) -> Option<ExternalChanges> {
        FolderWatch::watch(root).map(|w| ExternalChanges::Own(Mutex::new(w)))
    }
}

/// Takes the changes `watch` saw so far, except those to `except` (a write observer tells
/// the server about those itself, after taking the state before the write).
pub fn take_own(watch: &Mutex<FolderWatch>, except: &[PathBuf]) -> Vec<(PathBuf, FileChangeType)> {
    as_lsp(tools_core::lock_unpoisoned(watch).take(except))
}

/// `changes` with LSP's names.
pub fn as_lsp(changes: Vec<(PathBuf, FileChange)>) -> Vec<(PathBuf, FileChangeType)> {
    changes
        .into_iter()
        .map(|(p, k)| (p, lsp_change(k)))
        .collect()
}

/// LSP's name for a change.
pub fn lsp_change(change: FileChange) -> FileChangeType {
    match change {
        FileChange::Created => FileChangeType::CREATED,
        FileChange::Changed => FileChangeType::CHANGED,
        FileChange::Deleted => FileChangeType::DELETED,
    }
}

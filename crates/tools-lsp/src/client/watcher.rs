//! Files changed outside the tools, as the LSP client hands them to its server: the
//! folder watch of tools-core ([`tools_core::file_watch`]) with its changes named as LSP's
//! `FileChangeType`. They are handed over lazily, at the start of the next query or write
//! observation: open documents get a `didChange` (or `didClose` when deleted), other files a
//! `workspace/didChangeWatchedFiles`. That also means a query no longer re-reads every open
//! document from disk: only the ones that changed. Without a watch (none could start), the
//! client re-reads every open document before each query.

use std::path::{Path, PathBuf};

use lsp_types::FileChangeType;
use tools_core::{FileChange, FolderWatch};

/// The changes seen under one server's root since they were last taken.
#[derive(Debug)]
pub struct ExternalChanges(FolderWatch);

impl ExternalChanges {
    /// Starts watching `root`. `None` when the platform refuses or the tree is too big.
    pub fn watch(root: &Path) -> Option<ExternalChanges> {
        FolderWatch::watch(root).map(ExternalChanges)
    }

    /// Takes the changes seen so far, except those to `except` (a write observer tells the
    /// server about those itself, after taking the state before the write).
    pub fn take(&mut self, except: &[PathBuf]) -> Vec<(PathBuf, FileChangeType)> {
        self.0
            .take(except)
            .into_iter()
            .map(|(p, k)| (p, lsp_change(k)))
            .collect()
    }
}

/// LSP's name for a change.
pub fn lsp_change(change: FileChange) -> FileChangeType {
    match change {
        FileChange::Created => FileChangeType::CREATED,
        FileChange::Changed => FileChangeType::CHANGED,
        FileChange::Deleted => FileChangeType::DELETED,
    }
}

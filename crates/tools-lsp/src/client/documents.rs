//! The documents a server has open: sync against the disk before every query (open,
//! change, close, the least recently used closed past the cap), previewed texts under the
//! observation lock, saves, and changes made outside the tools handed over as
//! `workspace/didChangeWatchedFiles`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tools_core::platform::path_key;
use tools_daemon::{TakeFileChanges, TakeFileChangesParams};

use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument,
};
use lsp_types::{
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, FileChangeType, FileEvent,
    TextDocumentContentChangeEvent, TextDocumentIdentifier, TextDocumentItem,
    VersionedTextDocumentIdentifier,
};

use super::{
    DocState, LspClient, MAX_WATCHED_EVENTS, OpenDoc, PREVIEW_WAIT_LIMIT, disk_stamp, path_to_uri,
};
use crate::client::watcher::{ExternalChanges, as_lsp, take_own};
use crate::error::{LspError, Result};

/// The longest the daemon takes to answer which files changed (it answers from memory; a
/// daemon this slow is stuck, and the open documents are re-read instead).
const DAEMON_ANSWER_LIMIT: Duration = Duration::from_secs(5);

impl LspClient {
    /// Whether `path` is one of the files this server reads (by its extension): another
    /// server's file (a `.svelte` component beside the `.ts` files) is never opened in it.
    pub fn reads(&self, path: &Path) -> bool {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        self.extensions.is_empty() || self.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext))
    }

    fn language_id(&self, path: &Path) -> String {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        super::language_id(&self.language_ids, ext, &self.language)
    }

    /// Brings the server's copy of `path` up to date with the disk: `didOpen` when it is not
    /// open, `didChange` (full text) when the disk differs. Closes the least recently used
    /// document when the open set is full. Waits (bounded) while a preview has proposed
    /// texts in the server, so an answer never comes from a text that is not on disk.
    pub async fn sync_file(&self, path: &Path) -> Result<DocState> {
        self.wait_preview_restored().await;
        self.sync_file_now(path).await
    }

    /// [`LspClient::sync_file`] without waiting for a preview in flight (the preview's own
    /// restore, and the observers that hold the observation lock).
    pub async fn sync_file_now(&self, path: &Path) -> Result<DocState> {
        let (text, stamp) = read_disk(path).await?;
        self.sync_text(path, text, stamp, false).await
    }

    /// Hands the server `text` as `path`'s unsaved content (`didOpen` when not open,
    /// `didChange` otherwise), without reading or touching the disk: a preview. The
    /// document stays marked as proposed until it is synced from the disk or closed.
    pub async fn propose_text(&self, path: &Path, text: String) -> Result<DocState> {
        self.replace_text(path, text, true).await
    }

    /// Puts back the text an open document had before a preview (`text`, which was the
    /// disk's then), unmarking it as proposed. Its disk stamp stays the one of that text, so
    /// if the disk changed meanwhile (a write raced the preview) the next sync sees it.
    pub async fn withdraw_proposal(&self, path: &Path, text: String) -> Result<DocState> {
        self.replace_text(path, text, false).await
    }

    async fn replace_text(&self, path: &Path, text: String, proposed: bool) -> Result<DocState> {
        // The stamp of the text the server had from the disk stays the document's: the
        // disk did not change for this, so the external change scan must not take the
        // proposed text for a stale one.
        let stamp = match self.docs.lock().await.get(&path_key(path)) {
            Some(d) => d.stamp,
            None => disk_stamp(path),
        };
        self.sync_text(path, text, stamp, proposed).await
    }

    /// Hands the server the disk's text of `path` by closing the document and opening it
    /// again at the next version, even when its text did not change (the new version tells
    /// the server's next publish of it from any earlier one); a document not open is
    /// opened. For servers that take a `didChange` for typing and hold their analysis back
    /// after it but not after an open (see `republish::reopens_written_files`); `changed`
    /// says whether the text differs from what the server had.
    pub async fn reopen_file(&self, path: &Path) -> Result<DocState> {
        self.wait_preview_restored().await;
        let (text, stamp) = read_disk(path).await?;
        let uri = path_to_uri(path)?;
        let mut docs = self.docs.lock().await;
        let Some(doc) = docs.get_mut(&path_key(path)) else {
            drop(docs);
            return self.sync_text(path, text, stamp, false).await;
        };
        let changed = doc.text != text;
        doc.version += 1;
        doc.text = text.clone();
        doc.stamp = stamp;
        doc.proposed = false;
        doc.last_used = Instant::now();
        let version = doc.version;
        drop(docs);
        self.notify::<DidCloseTextDocument>(DidCloseTextDocumentParams {
            text_document: TextDocumentIdentifier::new(uri.clone()),
        })
        .await?;
        self.notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
            text_document: TextDocumentItem::new(
                uri.clone(),
                self.language_id(path),
                version,
                text.clone(),
            ),
        })
        .await?;
        Ok(DocState {
            uri,
            version,
            text,
            changed,
        })
    }

    /// Opens `path` with `text`, which is *not* what the disk holds now: the text a file
    /// had before a write, so the server sees the state before it first. The next
    /// [`LspClient::sync_file`] sends the disk's text as a change.
    pub async fn open_with_text(&self, path: &Path, text: String) -> Result<DocState> {
        self.sync_text(path, text, None, false).await
    }

    async fn sync_text(
        &self,
        path: &Path,
        text: String,
        stamp: Option<(std::time::SystemTime, u64)>,
        proposed: bool,
    ) -> Result<DocState> {
        let uri = path_to_uri(path)?;
        let mut docs = self.docs.lock().await;
        if let Some(doc) = docs.get_mut(&path_key(path)) {
            doc.last_used = Instant::now();
            doc.stamp = stamp;
            doc.proposed = proposed;
            if doc.text == text {
                return Ok(DocState {
                    uri,
                    version: doc.version,
                    text,
                    changed: false,
                });
            }
            doc.version += 1;
            doc.text = text.clone();
            let version = doc.version;
            drop(docs);
            self.notify::<DidChangeTextDocument>(full_change(uri.clone(), version, text.clone()))
                .await?;
            return Ok(DocState {
                uri,
                version,
                text,
                changed: true,
            });
        }
        while docs.len() >= self.max_open {
            // A previewed document is never the one evicted: its restore must find it.
            let Some(oldest) = docs
                .iter()
                .filter(|(_, d)| !d.proposed)
                .min_by_key(|(_, d)| d.last_used)
                .map(|(k, d)| (k.clone(), d.path.clone()))
            else {
                break;
            };
            if let Some(evicted) = docs.remove(&oldest.0) {
                self.note_closed(evicted.version);
            }
            if let Ok(u) = path_to_uri(&oldest.1) {
                let _ = self
                    .notify::<DidCloseTextDocument>(DidCloseTextDocumentParams {
                        text_document: TextDocumentIdentifier::new(u),
                    })
                    .await;
            }
        }
        let version = self.opening_version();
        docs.insert(
            path_key(path),
            OpenDoc {
                path: path.to_path_buf(),
                version,
                text: text.clone(),
                last_used: Instant::now(),
                stamp,
                proposed,
            },
        );
        drop(docs);
        self.notify::<DidOpenTextDocument>(DidOpenTextDocumentParams {
            text_document: TextDocumentItem::new(
                uri.clone(),
                self.language_id(path),
                version,
                text.clone(),
            ),
        })
        .await?;
        Ok(DocState {
            uri,
            version,
            text,
            changed: true,
        })
    }

    /// Syncs every open document with the disk (closing those deleted), so answers about
    /// one file reflect edits made to the others. Returns the paths that changed.
    pub async fn sync_open_docs(&self) -> Result<Vec<PathBuf>> {
        self.sync_open_docs_except(&[]).await
    }

    /// [`LspClient::sync_open_docs`] leaving `except` as the server has them (a write
    /// observer syncs the written files itself, after taking the state before the write).
    pub async fn sync_open_docs_except(&self, except: &[PathBuf]) -> Result<Vec<PathBuf>> {
        self.wait_preview_restored().await;
        let paths: Vec<PathBuf> = self
            .docs
            .lock()
            .await
            .values()
            .map(|d| d.path.clone())
            .filter(|p| !except.contains(p))
            .collect();
        let mut changed = Vec::new();
        for p in paths {
            if !p.exists() {
                self.close_file(&p).await?;
                changed.push(p);
                continue;
            }
            let before = self.docs.lock().await.get(&path_key(&p)).map(|d| d.version);
            let st = self.sync_file_now(&p).await?;
            if st.changed && before.is_some() {
                changed.push(p);
            }
        }
        Ok(changed)
    }

    /// Takes the observation lock: whoever changes what the server sees and then waits for
    /// its settled state holds it throughout, so a write's observation and a preview never
    /// interleave on one server. Owned, so a preview's restore can keep it after answering.
    pub async fn observation(&self) -> tokio::sync::OwnedMutexGuard<()> {
        Arc::clone(&self.observation).lock_owned().await
    }

    /// Marks whether a preview has proposed texts in the server (see
    /// [`LspClient::sync_file`]). Turning it off also ends [`LspClient::begin_preview`]'s
    /// hold on the server's view.
    pub fn set_previewing(&self, on: bool) {
        self.previewing.send_replace(on);
        if !on {
            let hold = match self.preview_hold.lock() {
                Ok(mut h) => h.take(),
                Err(p) => p.into_inner().take(),
            };
            drop(hold);
        }
    }

    /// Marks a preview as starting: waits until no query is reading the server's view (see
    /// [`LspClient::disk_view`]; new ones wait from now on), then
    /// `set_previewing(true)`. Held until `set_previewing(false)`.
    pub async fn begin_preview(&self) {
        let hold = Arc::clone(&self.view).write_owned().await;
        match self.preview_hold.lock() {
            Ok(mut h) => *h = Some(hold),
            Err(p) => *p.into_inner() = Some(hold),
        }
        self.set_previewing(true);
    }

    /// A query's hold on the server's view of the disk: while it is held no preview puts
    /// unsaved texts in the server, so everything asked under it is answered from the
    /// disk's texts. Waits for a preview in flight to withdraw its texts (at most
    /// [`PREVIEW_WAIT_LIMIT`]; `None` past it).
    pub async fn disk_view(&self) -> Option<tokio::sync::OwnedRwLockReadGuard<()>> {
        tokio::time::timeout(PREVIEW_WAIT_LIMIT, Arc::clone(&self.view).read_owned())
            .await
            .ok()
    }

    /// Waits (at most [`PREVIEW_WAIT_LIMIT`]) until no preview has proposed texts in the
    /// server.
    async fn wait_preview_restored(&self) {
        let mut rx = self.previewing.subscribe();
        let _ = tokio::time::timeout(PREVIEW_WAIT_LIMIT, rx.wait_for(|on| !*on)).await;
    }

    /// Sends an open document again, its text unchanged, under a new version: a server that
    /// re-checks a document only when it changes (clangd does not rebuild the files that
    /// include a header whose open buffer changed) checks it again. The new version, or
    /// `None` when `path` is not open.
    pub async fn recheck(&self, path: &Path) -> Result<Option<i32>> {
        let mut docs = self.docs.lock().await;
        let Some(doc) = docs.get_mut(&path_key(path)) else {
            return Ok(None);
        };
        doc.version += 1;
        let (version, text) = (doc.version, doc.text.clone());
        drop(docs);
        let uri = path_to_uri(path)?;
        self.notify::<DidChangeTextDocument>(full_change(uri.clone(), version, text.clone()))
            .await?;
        Ok(Some(version))
    }

    /// Whether `path` is open with a proposed (previewed) text.
    pub async fn is_proposed(&self, path: &Path) -> bool {
        self.docs
            .lock()
            .await
            .get(&path_key(path))
            .is_some_and(|d| d.proposed)
    }

    /// Closes `path` if open.
    pub async fn close_file(&self, path: &Path) -> Result<()> {
        let closed = self.docs.lock().await.remove(&path_key(path));
        if let Some(closed) = closed {
            self.note_closed(closed.version);
            let uri = path_to_uri(path)?;
            self.notify::<DidCloseTextDocument>(DidCloseTextDocumentParams {
                text_document: TextDocumentIdentifier::new(uri),
            })
            .await?;
        }
        Ok(())
    }

    /// Keeps `version`, a closed document's last, below every version opened from now on.
    fn note_closed(&self, version: i32) {
        self.closed_version_floor
            .fetch_max(version, std::sync::atomic::Ordering::Relaxed);
    }

    /// The version a document is opened at: 1 until a document was closed, then past the
    /// last version of every document closed (see `closed_version_floor`).
    fn opening_version(&self) -> i32 {
        self.closed_version_floor
            .load(std::sync::atomic::Ordering::Relaxed)
            .saturating_add(1)
    }

    /// Whether `path` is open in the server.
    pub async fn is_open(&self, path: &Path) -> bool {
        self.docs.lock().await.contains_key(&path_key(path))
    }

    /// The document as the server has it now (no disk read), if it is open.
    pub async fn open_doc_state(&self, path: &Path) -> Option<DocState> {
        let docs = self.docs.lock().await;
        let d = docs.get(&path_key(path))?;
        Some(DocState {
            uri: path_to_uri(path).ok()?,
            version: d.version,
            text: d.text.clone(),
            changed: false,
        })
    }

    /// The version the server has of `path`, if it is open.
    pub async fn open_version(&self, path: &Path) -> Option<i32> {
        self.docs
            .lock()
            .await
            .get(&path_key(path))
            .map(|d| d.version)
    }

    /// The paths currently open.
    pub async fn open_paths(&self) -> Vec<PathBuf> {
        self.docs
            .lock()
            .await
            .values()
            .map(|d| d.path.clone())
            .collect()
    }

    /// Sends `didSave` (with the text when the server asks for it).
    pub async fn did_save(&self, doc: &DocState) -> Result<()> {
        let include = match &self.caps.text_document_sync {
            Some(lsp_types::TextDocumentSyncCapability::Options(o)) => match &o.save {
                Some(lsp_types::TextDocumentSyncSaveOptions::SaveOptions(s)) => {
                    s.include_text.unwrap_or(false)
                }
                Some(lsp_types::TextDocumentSyncSaveOptions::Supported(b)) => {
                    if !*b {
                        return Ok(());
                    }
                    false
                }
                None => false,
            },
            _ => false,
        };
        self.notify::<DidSaveTextDocument>(DidSaveTextDocumentParams {
            text_document: TextDocumentIdentifier::new(doc.uri.clone()),
            text: include.then(|| doc.text.clone()),
        })
        .await
    }

    /// Tells the server files changed on disk (`workspace/didChangeWatchedFiles`).
    pub async fn files_changed(&self, changes: &[(PathBuf, FileChangeType)]) -> Result<()> {
        let list: Vec<FileEvent> = changes
            .iter()
            .filter_map(|(p, k)| path_to_uri(p).ok().map(|uri| FileEvent::new(uri, *k)))
            .collect();
        if list.is_empty() {
            return Ok(());
        }
        if let Ok(mut t) = self.shared.last_disk_news.lock() {
            *t = Some(std::time::Instant::now());
        }
        self.notify::<DidChangeWatchedFiles>(DidChangeWatchedFilesParams { changes: list })
            .await
    }

    /// Hands the server what changed on disk outside the tools since the last call (see
    /// the `watcher` module), except `except` (a write observer syncs those itself): open
    /// documents get a `didChange` or are closed, every change goes out as
    /// `workspace/didChangeWatchedFiles`. Returns the open documents that changed, with the
    /// version whose publish to wait for. Without a watcher, re-reads every open document.
    /// A `Cargo.lock` the server wrote or read as it is now is left out (see
    /// `knows_lock_file`).
    pub async fn flush_external(&self, except: &[PathBuf]) -> Result<Vec<(PathBuf, i32)>> {
        self.wait_preview_restored().await;
        // A file another session wrote and is observing is its observation's to hand over.
        let mut except = except.to_vec();
        except.extend(self.claims.claimed_paths());
        let except = &except[..];
        let taken = match &self.external {
            Some(ExternalChanges::Own(watch)) => Some(take_own(watch, except)),
            Some(ExternalChanges::FromDaemon) => self.take_from_daemon(except).await,
            None => None,
        };
        let mut changed = Vec::new();
        let Some(changes) = taken else {
            for p in self.sync_open_docs_except(except).await? {
                if let Some(v) = self.open_version(&p).await {
                    changed.push((p, v));
                }
            }
            return Ok(changed);
        };
        let mut changes: Vec<(PathBuf, FileChangeType)> = changes
            .into_iter()
            .filter(|(p, k)| !self.knows_lock_file(p, *k))
            .take(MAX_WATCHED_EVENTS)
            .collect();
        // The watcher's events arrive a moment after the change: an open document whose
        // stamp differs is changed now, even if its event is still on the way.
        let stale: Vec<PathBuf> = self
            .docs
            .lock()
            .await
            .values()
            .filter(|d| !except.contains(&d.path) && disk_stamp(&d.path) != d.stamp)
            .map(|d| d.path.clone())
            .collect();
        for p in stale {
            if !changes.iter().any(|(q, _)| *q == p) {
                let kind = if p.exists() {
                    FileChangeType::CHANGED
                } else {
                    FileChangeType::DELETED
                };
                changes.push((p, kind));
            }
        }
        // An open document is the server's to take from us, not from the disk: it gets a
        // `didChange` when its text changed (nothing when we synced it already), and no
        // watched-file event, which servers ignore for open documents anyway and which
        // would only restart their quiet window.
        let mut on_disk = Vec::with_capacity(changes.len());
        for (p, k) in changes {
            if !self.is_open(&p).await {
                on_disk.push((p, k));
            } else if k == FileChangeType::DELETED || !p.exists() {
                self.close_file(&p).await?;
                on_disk.push((p, FileChangeType::DELETED));
            } else {
                let doc = self.sync_file_now(&p).await?;
                if doc.changed {
                    changed.push((p, doc.version));
                }
            }
        }
        self.files_changed(&on_disk).await?;
        Ok(changed)
    }
}

impl LspClient {
    /// This conversation's changes under the root, asked of the daemon that serves the
    /// server; `None` (re-read the open documents) while the daemon has no watch of the
    /// root or does not answer.
    async fn take_from_daemon(&self, except: &[PathBuf]) -> Option<Vec<(PathBuf, FileChangeType)>> {
        let params = TakeFileChangesParams {
            except: except.to_vec(),
        };
        match self
            .request_with::<TakeFileChanges>(params, DAEMON_ANSWER_LIMIT)
            .await
        {
            Ok(taken) if taken.watching => Some(as_lsp(taken.changes)),
            Ok(_) => None,
            Err(e) => {
                tracing::debug!("{}: no file changes from the daemon: {e}", self.server);
                None
            }
        }
    }

    /// Whether the change `kind` of `path` is a `Cargo.lock` the server wrote or read as
    /// it is now: rust-analyzer's first `cargo check` writes a missing one. Told of it, the
    /// server would load the project again and check it again from the disk — at the next
    /// write, whose text is on the disk by then: that check would put cargo's findings of
    /// the written text into the state before the write, and leave them out of its result.
    fn knows_lock_file(&self, path: &Path, kind: FileChangeType) -> bool {
        kind != FileChangeType::DELETED
            && path.file_name().is_some_and(|n| n == "Cargo.lock")
            && std::fs::metadata(path)
                .and_then(|m| m.modified())
                .is_ok_and(|at| self.shared.board.knows_lock_changed_at(at))
    }
}

/// `path`'s text as the disk has it (invalid UTF-8 replaced), with its stamp taken before
/// the read: a write racing the read leaves a stamp that differs.
async fn read_disk(path: &Path) -> Result<(String, Option<(std::time::SystemTime, u64)>)> {
    let stamp = disk_stamp(path);
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| LspError::Other(format!("cannot read {}: {e}", path.display())))?;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), stamp))
}

/// A `didChange` that sends the whole new text.
fn full_change(uri: lsp_types::Uri, version: i32, text: String) -> DidChangeTextDocumentParams {
    DidChangeTextDocumentParams {
        text_document: VersionedTextDocumentIdentifier::new(uri, version),
        content_changes: vec![TextDocumentContentChangeEvent {
            range: None,
            range_length: None,
            text,
        }],
    }
}

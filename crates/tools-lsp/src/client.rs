//! One language-server process and the conversation with it: start and `initialize`,
//! typed requests with a timeout (and `$/cancelRequest` when it runs out), the one place
//! that answers server→client requests, `$/progress` tracking so the first queries wait for
//! indexing, document sync against the disk before every query, and the diagnostics the
//! server published or answers when pulled.
//!
//! A preview hands the server proposed texts as unsaved changes ([`LspClient::propose_text`])
//! under the observation lock ([`LspClient::observation`]); until it has put the disk's
//! texts back, every sync from the disk waits, so no answer is computed from a text that is
//! not on disk.
//!
//! The framing, writer, reader task and pending-request map are tools-core's [`Transport`];
//! this module only speaks LSP on top of it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lsp_types::notification::DidChangeWatchedFiles;
use lsp_types::notification::Notification;
use lsp_types::request::Request;
use lsp_types::{
    Diagnostic, DidChangeWatchedFilesParams, FileChangeType, FileEvent, ServerCapabilities, Uri,
};
use serde_json::{Value, json};
use tokio::sync::watch;
use tools_core::Run;
use tools_core::process::{ChildProcess, Pipes, StderrLog};
use tools_core::transport::{JsonRpc, Transport, TransportError};

use crate::error::{LspError, Result};
use crate::position::Encoding;

/// Everything needed to start one server.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The language (server group), e.g. `python`.
    pub language: String,
    /// The resolved program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The project root the server serves (its working directory).
    pub root: PathBuf,
    /// The workspace root (bounds the local binary folders put on the server's `PATH`).
    pub workspace: PathBuf,
    /// Settings answered to `workspace/configuration`.
    pub settings: Value,
    /// `initializationOptions`.
    pub initialization_options: Option<Value>,
    /// Per-request timeout.
    pub request_timeout: Duration,
    /// `initialize` timeout.
    pub start_timeout: Duration,
    /// Bound on waiting for indexing progress.
    pub index_wait: Duration,
    /// Open-document cap.
    pub max_open_documents: usize,
}

use crate::diag_store::DiagnosticsStore;
pub use crate::diag_store::Published;
use crate::watcher::ExternalChanges;

struct Shared {
    server: String,
    diags: DiagnosticsStore,
    events: watch::Sender<u64>,
    progress: Mutex<HashSet<String>>,
    progress_seen: AtomicBool,
    /// How many work-done progress reports have begun so far.
    progress_begun: AtomicU64,
    /// rust-analyzer's `experimental/serverStatus`: `None` until the server sends one.
    quiescent: Mutex<Option<bool>>,
    /// When the server last published, reported progress or changed status.
    last_event: Mutex<Instant>,
    shutting_down: AtomicBool,
    settings: Value,
    folders: Value,
}

impl Shared {
    fn bump(&self) {
        if let Ok(mut t) = self.last_event.lock() {
            *t = Instant::now();
        }
        self.events.send_modify(|n| *n = n.wrapping_add(1));
    }
}

/// What a server is doing now, as far as its notifications tell.
#[derive(Debug, Clone, Copy)]
pub struct Activity {
    /// Work-done progress reports under way.
    pub progress_active: bool,
    /// How many progress reports have begun since start (compare two readings to see
    /// whether work started in between).
    pub progress_begun: u64,
    /// `experimental/serverStatus` quiescence; `None` when the server never sent it.
    pub quiescent: Option<bool>,
    /// When the server last published, reported progress or changed status.
    pub last_event: Instant,
}

struct OpenDoc {
    version: i32,
    text: String,
    last_used: Instant,
    /// The file's modification time and length when it was last read: a cheap check of
    /// whether the disk changed since, without reading it.
    stamp: Option<(std::time::SystemTime, u64)>,
    /// Whether the server has a previewed (proposed, unsaved) text instead of the disk's.
    proposed: bool,
}

fn disk_stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// The synced state of one document.
#[derive(Debug, Clone)]
pub struct DocState {
    /// Its URI.
    pub uri: Uri,
    /// The version the server has.
    pub version: i32,
    /// The text the server has (equal to the disk at sync time).
    pub text: String,
    /// Whether this sync sent anything (open or change).
    pub changed: bool,
}

/// One running language server.
pub struct LspClient {
    /// The language (server group).
    pub language: String,
    /// The server's short name (its program's file name).
    pub server: String,
    /// The project root it serves.
    pub root: PathBuf,
    /// Where its program is.
    pub program: PathBuf,
    /// The arguments it was started with.
    pub args: Vec<String>,
    /// When it was started.
    pub started: Instant,
    /// The capabilities it announced.
    pub caps: ServerCapabilities,
    /// Whether it announced `typeHierarchyProvider` (a capability lsp-types 0.97 does not
    /// decode).
    pub type_hierarchy: bool,
    /// The position encoding agreed.
    pub encoding: Encoding,
    transport: Transport,
    child: tokio::sync::Mutex<ChildProcess>,
    pid: i32,
    stderr: StderrLog,
    shared: Arc<Shared>,
    docs: tokio::sync::Mutex<HashMap<PathBuf, OpenDoc>>,
    request_timeout: Duration,
    index_wait: Duration,
    max_open: usize,
    opened_once: AtomicBool,
    external: Option<Mutex<ExternalChanges>>,
    check_after_save: AtomicBool,
    /// Held by whoever changes what the server sees and then waits for its settled state
    /// (a write's observation, a preview): two of them must never interleave.
    observation: Arc<tokio::sync::Mutex<()>>,
    /// True from the moment a preview hands the server proposed texts until the server
    /// has settled on the disk's texts again; syncs from the disk wait for it.
    previewing: watch::Sender<bool>,
}

/// The longest a sync from the disk waits for a preview in flight to restore the server's
/// view (past it, the disk wins and the preview's restore finds nothing left to undo).
pub const PREVIEW_WAIT_LIMIT: Duration = Duration::from_secs(60);

/// LSP error code: the document changed while the request was handled.
pub const CONTENT_MODIFIED: i64 = -32801;
/// LSP error code: the server cancelled the request (it will want it asked again).
pub const SERVER_CANCELLED: i64 = -32802;

/// Whether an error code means "ask again later": the server was catching up with a change
/// (rust-analyzer answers "content modified" under either code, depending on its version).
pub fn ask_again_later(code: i64) -> bool {
    code == CONTENT_MODIFIED || code == SERVER_CANCELLED
}

/// Most external changes handed to a server at once (a checkout of another branch can
/// change thousands of files; servers rescan on their own past that).
pub const MAX_WATCHED_EVENTS: usize = 2_000;

impl std::fmt::Debug for LspClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspClient")
            .field("server", &self.server)
            .field("root", &self.root)
            .field("pid", &self.pid)
            .finish_non_exhaustive()
    }
}

/// A file path as a `file://` URI.
pub fn path_to_uri(path: &Path) -> Result<Uri> {
    let url = url::Url::from_file_path(path)
        .map_err(|_| LspError::Other(format!("{} is not an absolute path", path.display())))?;
    url.as_str()
        .parse::<Uri>()
        .map_err(|e| LspError::Other(format!("bad URI {url}: {e:?}")))
}

/// The file path of a `file://` URI.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()
}

fn client_capabilities() -> Value {
    json!({
        "general": {"positionEncodings": ["utf-8", "utf-16"]},
        "window": {"workDoneProgress": true, "showMessage": {}},
        "experimental": {"serverStatusNotification": true},
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "applyEdit": true,
            "workspaceEdit": {
                "documentChanges": true,
                "resourceOperations": ["create", "rename", "delete"],
                "failureHandling": "abort"
            },
            "symbol": {"dynamicRegistration": false},
            "didChangeWatchedFiles": {"dynamicRegistration": true},
            "diagnostics": {"refreshSupport": true}
        },
        "textDocument": {
            "synchronization": {"didSave": true, "willSave": false, "dynamicRegistration": false},
            "publishDiagnostics": {"relatedInformation": true, "versionSupport": true, "codeDescriptionSupport": true},
            "diagnostic": {"dynamicRegistration": false, "relatedDocumentSupport": true},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "definition": {"linkSupport": true},
            "typeDefinition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "references": {},
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": true},
            "codeAction": {
                "codeActionLiteralSupport": {"codeActionKind": {"valueSet": [
                    "", "quickfix", "refactor", "refactor.extract", "refactor.inline",
                    "refactor.rewrite", "source", "source.organizeImports", "source.fixAll"
                ]}},
                "dataSupport": true
            },
            "rename": {"prepareSupport": true},
            "callHierarchy": {"dynamicRegistration": false},
            "typeHierarchy": {"dynamicRegistration": false}
        }
    })
}

impl LspClient {
    /// Starts the server, `initialize`s it and starts answering it. Fails with a clear error
    /// when it cannot start, exits during startup or does not answer in time.
    pub async fn start(run: &Arc<Run>, launch: Launch) -> Result<Arc<LspClient>> {
        let server = launch
            .program
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| launch.program.display().to_string());
        let mut cmd = tools_core::child_command(run, &launch.program);
        cmd.args(&launch.args).current_dir(&launch.root).env(
            "PATH",
            tools_core::discovery::ProgramSearch::for_run(run).child_path(&launch.root),
        );
        let mut child = ChildProcess::spawn(run, cmd, Pipes::StdinStdout)
            .map_err(|e| LspError::Other(e.to_string()))?;
        let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err(LspError::Other(format!(
                "{server}: no pipes to the process"
            )));
        };
        let stderr = child.stderr().clone();
        let pid = child.pid();
        let (transport, rx) = Transport::start(stdout, stdin, JsonRpc);
        let root_uri = path_to_uri(&launch.root)?;
        let folder_name = launch
            .root
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| "root".into());
        let folders = json!([{"uri": root_uri.as_str(), "name": folder_name}]);
        let (events, _) = watch::channel(0u64);
        let shared = Arc::new(Shared {
            server: server.clone(),
            diags: DiagnosticsStore::default(),
            events,
            progress: Mutex::new(HashSet::new()),
            progress_seen: AtomicBool::new(false),
            progress_begun: AtomicU64::new(0),
            quiescent: Mutex::new(None),
            last_event: Mutex::new(Instant::now()),
            shutting_down: AtomicBool::new(false),
            settings: launch.settings.clone(),
            folders: folders.clone(),
        });
        tokio::spawn(event_loop(transport.clone(), rx, Arc::clone(&shared)));

        let mut params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "agent-tools", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root_uri.as_str(),
            "rootPath": launch.root.display().to_string(),
            "workspaceFolders": folders,
            "capabilities": client_capabilities(),
        });
        if let Some(opts) = &launch.initialization_options {
            params["initializationOptions"] = opts.clone();
        }
        let started = Instant::now();
        let resp = transport
            .request(
                json!({"method": "initialize", "params": params}),
                launch.start_timeout,
            )
            .await;
        let fail = |what: String, child: &mut ChildProcess| {
            let tail = child.stderr().last_lines(8);
            let status = child.try_status();
            child.kill();
            let mut msg = format!("{server} (root {}) {what}", launch.root.display());
            if let Some(s) = status {
                msg.push_str(&format!("; it exited with {s}"));
            }
            if !tail.trim().is_empty() {
                msg.push_str(&format!("; its last stderr lines:\n{tail}"));
            }
            LspError::Other(msg)
        };
        let resp = match resp {
            Ok(r) => r,
            Err(TransportError::Timeout(d)) => {
                let mut e = fail(
                    format!("did not answer `initialize` within {}s", d.as_secs_f64()),
                    &mut child,
                );
                if let LspError::Other(m) = e {
                    e = LspError::Timeout {
                        server: m,
                        method: "initialize".into(),
                        after: d,
                    };
                }
                return Err(e);
            }
            Err(TransportError::StreamClosed) => {
                tokio::time::sleep(Duration::from_millis(100)).await;
                return Err(fail("exited during startup".into(), &mut child));
            }
            Err(TransportError::Other(m)) => return Err(fail(m, &mut child)),
        };
        if let Some(err) = resp.get("error") {
            return Err(fail(format!("refused `initialize`: {err}"), &mut child));
        }
        let result = resp.get("result").cloned().unwrap_or(Value::Null);
        let type_hierarchy = result
            .pointer("/capabilities/typeHierarchyProvider")
            .is_some_and(|v| !v.is_null() && v != &Value::Bool(false));
        let caps: ServerCapabilities = result
            .get("capabilities")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| LspError::Decode {
                server: server.clone(),
                method: "initialize".into(),
                message: e.to_string(),
            })?
            .unwrap_or_default();
        let enc_name = caps
            .position_encoding
            .as_ref()
            .map(|k| k.as_str().to_string())
            .or_else(|| {
                result
                    .get("offsetEncoding")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            });
        let encoding = match enc_name.as_deref() {
            Some("utf-8") => Encoding::Utf8,
            Some("utf-32") => Encoding::Utf32,
            _ => Encoding::Utf16,
        };
        let _ = transport
            .send(json!({"method": "initialized", "params": {}}))
            .await;
        if !launch.settings.is_null() {
            let _ = transport
                .send(json!({"method": "workspace/didChangeConfiguration", "params": {"settings": launch.settings}}))
                .await;
        }
        tracing::debug!(
            "{server} started in {:?} (pid {pid}, encoding {encoding:?})",
            started.elapsed()
        );
        // Watch the root for changes made outside the tools (a walk of the tree: off the
        // async threads).
        let watch_root = launch.root.clone();
        let external = tokio::task::spawn_blocking(move || ExternalChanges::watch(&watch_root))
            .await
            .ok()
            .flatten()
            .map(Mutex::new);
        Ok(Arc::new(LspClient {
            language: launch.language,
            server,
            root: launch.root,
            program: launch.program,
            args: launch.args,
            started,
            caps,
            type_hierarchy,
            encoding,
            transport,
            child: tokio::sync::Mutex::new(child),
            pid,
            stderr,
            shared,
            docs: tokio::sync::Mutex::new(HashMap::new()),
            request_timeout: launch.request_timeout,
            index_wait: launch.index_wait,
            max_open: launch.max_open_documents.max(1),
            opened_once: AtomicBool::new(false),
            external,
            check_after_save: AtomicBool::new(false),
            observation: Arc::new(tokio::sync::Mutex::new(())),
            previewing: watch::channel(false).0,
        }))
    }

    /// The process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether the server's output is still open.
    pub fn is_alive(&self) -> bool {
        !self.transport.is_closed()
    }

    /// The exit status (if it exited) and the last lines of stderr, for messages.
    pub async fn exit_detail(&self) -> String {
        let status = {
            let mut c = self.child.lock().await;
            let mut s = c.try_status();
            if s.is_none() && !self.is_alive() {
                // The output closed; give the process a moment to be reaped.
                s = tokio::time::timeout(Duration::from_millis(500), c.wait())
                    .await
                    .ok()
                    .and_then(|r| r.ok());
            }
            s
        };
        let tail = self.stderr.last_lines(6);
        let mut out = String::new();
        if let Some(s) = status {
            out.push_str(&format!(" ({s})"));
        }
        if !tail.trim().is_empty() {
            out.push_str(&format!("; its last stderr lines:\n{}", tail.trim_end()));
        }
        out
    }

    /// Sends a typed request and waits (the configured timeout) for its result.
    pub async fn request<R: Request>(&self, params: R::Params) -> Result<R::Result> {
        self.request_with::<R>(params, self.request_timeout).await
    }

    /// [`LspClient::request`] with an explicit timeout.
    pub async fn request_with<R: Request>(
        &self,
        params: R::Params,
        timeout: Duration,
    ) -> Result<R::Result> {
        let params = serde_json::to_value(params).map_err(|e| LspError::Other(e.to_string()))?;
        let v = self.request_raw(R::METHOD, Some(params), timeout).await?;
        serde_json::from_value(v).map_err(|e| LspError::Decode {
            server: self.server.clone(),
            method: R::METHOD.into(),
            message: e.to_string(),
        })
    }

    /// Sends a request given as JSON; returns its `result`. `params: None` omits the field
    /// (some servers reject `"params": null`).
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<Value>,
        timeout: Duration,
    ) -> Result<Value> {
        let mut msg = json!({"method": method});
        if let Some(p) = params {
            msg["params"] = p;
        }
        let pending = match self.transport.start_request(msg).await {
            Ok(p) => p,
            Err(TransportError::StreamClosed) => return Err(self.died(method).await),
            Err(e) => return Err(LspError::Other(e.to_string())),
        };
        let id = pending.id();
        match pending.wait(timeout).await {
            Ok(resp) => {
                if let Some(err) = resp.get("error") {
                    return Err(LspError::Server {
                        server: self.server.clone(),
                        method: method.into(),
                        code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                        message: err
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("(no message)")
                            .to_string(),
                    });
                }
                Ok(resp.get("result").cloned().unwrap_or(Value::Null))
            }
            Err(TransportError::Timeout(after)) => {
                let _ = self
                    .transport
                    .send(json!({"method": "$/cancelRequest", "params": {"id": id}}))
                    .await;
                Err(LspError::Timeout {
                    server: self.server.clone(),
                    method: method.into(),
                    after,
                })
            }
            Err(TransportError::StreamClosed) => Err(self.died(method).await),
            Err(e) => Err(LspError::Other(e.to_string())),
        }
    }

    async fn died(&self, method: &str) -> LspError {
        LspError::Died {
            server: self.server.clone(),
            method: method.into(),
            detail: self.exit_detail().await,
        }
    }

    /// Sends a typed notification.
    pub async fn notify<N: Notification>(&self, params: N::Params) -> Result<()> {
        let params = serde_json::to_value(params).map_err(|e| LspError::Other(e.to_string()))?;
        self.notify_raw(N::METHOD, params).await
    }

    async fn notify_raw(&self, method: &str, params: Value) -> Result<()> {
        match self
            .transport
            .send(json!({"method": method, "params": params}))
            .await
        {
            Ok(()) => Ok(()),
            Err(TransportError::StreamClosed) => Err(self.died(method).await),
            Err(e) => Err(LspError::Other(e.to_string())),
        }
    }

    /// Whether work-done progress (indexing) is under way, or the server says it is not
    /// quiescent.
    pub fn indexing(&self) -> bool {
        let a = self.activity();
        a.progress_active || a.quiescent == Some(false)
    }

    /// Whether the server has been seen to start a check (reported as progress) after a
    /// save: rust-analyzer's `cargo check`, unless turned off.
    pub fn checks_after_save(&self) -> bool {
        self.check_after_save.load(Ordering::SeqCst)
    }

    /// Records that a save was followed by a check.
    pub fn note_check_after_save(&self) {
        self.check_after_save.store(true, Ordering::SeqCst);
    }

    /// What the server is doing now.
    pub fn activity(&self) -> Activity {
        Activity {
            progress_active: self
                .shared
                .progress
                .lock()
                .map(|p| !p.is_empty())
                .unwrap_or(false),
            progress_begun: self.shared.progress_begun.load(Ordering::SeqCst),
            quiescent: self.shared.quiescent.lock().ok().and_then(|q| *q),
            last_event: self
                .shared
                .last_event
                .lock()
                .map(|t| *t)
                .unwrap_or_else(|_| Instant::now()),
        }
    }

    /// Every file's last published (or pulled) diagnostics.
    pub fn snapshot(&self) -> HashMap<PathBuf, Published> {
        self.shared.diags.snapshot()
    }

    /// Waits (bounded) until no work-done progress is under way, so a first query after
    /// start does not get an empty answer from a server still indexing. Returns whether the
    /// server is idle.
    pub async fn wait_ready(&self) -> bool {
        // Progress usually begins right after `initialized`; give it a moment to show up.
        let grace = Duration::from_millis(300);
        if !self.shared.progress_seen.load(Ordering::SeqCst) && self.started.elapsed() < grace {
            let mut rx = self.shared.events.subscribe();
            let left = grace.saturating_sub(self.started.elapsed());
            let _ = tokio::time::timeout(left, async {
                while !self.shared.progress_seen.load(Ordering::SeqCst) {
                    if rx.changed().await.is_err() {
                        break;
                    }
                }
            })
            .await;
        }
        let mut rx = self.shared.events.subscribe();
        let deadline = Instant::now() + self.index_wait;
        loop {
            if !self.indexing() || !self.is_alive() {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if tokio::time::timeout(left, rx.changed()).await.is_err() {
                return false;
            }
        }
    }

    /// After the first document is opened, servers often begin loading the project
    /// (typescript-language-server reports it only then): wait briefly for that progress
    /// to show up, then for it to end, and (push servers) for the first publish for that
    /// document, the sign it was analysed: tsserver answers a definition with the import
    /// line until then. Once per server, bounded by the indexing wait (at most 8 s).
    pub async fn settle_after_first_open(&self, doc: &DocState) {
        if self.opened_once.swap(true, Ordering::SeqCst) {
            return;
        }
        // Until the server shows progress or publishes for this document (whichever is
        // first; at most 1.5 s: some servers do neither).
        let path = uri_to_path(&doc.uri);
        let mut rx = self.shared.events.subscribe();
        let _ = tokio::time::timeout(Duration::from_millis(1500), async {
            loop {
                let published = path.as_ref().is_some_and(|p| self.published(p).is_some());
                if self.shared.progress_seen.load(Ordering::SeqCst) || published {
                    break;
                }
                if rx.changed().await.is_err() {
                    break;
                }
            }
        })
        .await;
        self.wait_ready().await;
        if !self.pulls_diagnostics()
            && let Some(path) = uri_to_path(&doc.uri)
        {
            let bound = self.index_wait.min(Duration::from_secs(8));
            let _ = self.wait_publish(&path, doc.version, 0, bound).await;
        }
    }

    fn language_id(&self, path: &Path) -> String {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        crate::table::language_id(ext, &self.language)
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
        // Stamp before reading: a write racing the read leaves a stamp that differs.
        let stamp = disk_stamp(path);
        let bytes = tokio::fs::read(path)
            .await
            .map_err(|e| LspError::Other(format!("cannot read {}: {e}", path.display())))?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
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
        let stamp = match self.docs.lock().await.get(path) {
            Some(d) => d.stamp,
            None => disk_stamp(path),
        };
        self.sync_text(path, text, stamp, proposed).await
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
        if let Some(doc) = docs.get_mut(path) {
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
            self.notify_raw(
                "textDocument/didChange",
                json!({"textDocument": {"uri": uri.as_str(), "version": version},
                       "contentChanges": [{"text": text}]}),
            )
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
                .map(|(p, _)| p.clone())
            else {
                break;
            };
            docs.remove(&oldest);
            if let Ok(u) = path_to_uri(&oldest) {
                let _ = self
                    .notify_raw(
                        "textDocument/didClose",
                        json!({"textDocument": {"uri": u.as_str()}}),
                    )
                    .await;
            }
        }
        docs.insert(
            path.to_path_buf(),
            OpenDoc {
                version: 1,
                text: text.clone(),
                last_used: Instant::now(),
                stamp,
                proposed,
            },
        );
        drop(docs);
        self.notify_raw(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri.as_str(), "languageId": self.language_id(path),
                   "version": 1, "text": text}}),
        )
        .await?;
        Ok(DocState {
            uri,
            version: 1,
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
            .keys()
            .filter(|p| !except.contains(p))
            .cloned()
            .collect();
        let mut changed = Vec::new();
        for p in paths {
            if !p.exists() {
                self.close_file(&p).await?;
                changed.push(p);
                continue;
            }
            let before = self.docs.lock().await.get(&p).map(|d| d.version);
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
    /// [`LspClient::sync_file`]).
    pub fn set_previewing(&self, on: bool) {
        self.previewing.send_replace(on);
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
        let Some(doc) = docs.get_mut(path) else {
            return Ok(None);
        };
        doc.version += 1;
        let (version, text) = (doc.version, doc.text.clone());
        drop(docs);
        let uri = path_to_uri(path)?;
        self.notify_raw(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri.as_str(), "version": version},
                   "contentChanges": [{"text": text}]}),
        )
        .await?;
        Ok(Some(version))
    }

    /// Whether `path` is open with a proposed (previewed) text.
    pub async fn is_proposed(&self, path: &Path) -> bool {
        self.docs.lock().await.get(path).is_some_and(|d| d.proposed)
    }

    /// Closes `path` if open.
    pub async fn close_file(&self, path: &Path) -> Result<()> {
        if self.docs.lock().await.remove(path).is_some() {
            let uri = path_to_uri(path)?;
            self.notify_raw(
                "textDocument/didClose",
                json!({"textDocument": {"uri": uri.as_str()}}),
            )
            .await?;
        }
        Ok(())
    }

    /// Whether `path` is open in the server.
    pub async fn is_open(&self, path: &Path) -> bool {
        self.docs.lock().await.contains_key(path)
    }

    /// The document as the server has it now (no disk read), if it is open.
    pub async fn open_doc_state(&self, path: &Path) -> Option<DocState> {
        let docs = self.docs.lock().await;
        let d = docs.get(path)?;
        Some(DocState {
            uri: path_to_uri(path).ok()?,
            version: d.version,
            text: d.text.clone(),
            changed: false,
        })
    }

    /// The version the server has of `path`, if it is open.
    pub async fn open_version(&self, path: &Path) -> Option<i32> {
        self.docs.lock().await.get(path).map(|d| d.version)
    }

    /// The paths currently open.
    pub async fn open_paths(&self) -> Vec<PathBuf> {
        self.docs.lock().await.keys().cloned().collect()
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
        let mut params = json!({"textDocument": {"uri": doc.uri.as_str()}});
        if include {
            params["text"] = Value::String(doc.text.clone());
        }
        self.notify_raw("textDocument/didSave", params).await
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
        self.notify::<DidChangeWatchedFiles>(DidChangeWatchedFilesParams { changes: list })
            .await
    }

    /// Hands the server what changed on disk outside the tools since the last call (see
    /// the `watcher` module), except `except` (a write observer syncs those itself): open
    /// documents get a `didChange` or are closed, every change goes out as
    /// `workspace/didChangeWatchedFiles`. Returns the open documents that changed, with the
    /// version whose publish to wait for. Without a watcher, re-reads every open document.
    pub async fn flush_external(&self, except: &[PathBuf]) -> Result<Vec<(PathBuf, i32)>> {
        self.wait_preview_restored().await;
        let taken = match &self.external {
            Some(w) => match w.lock() {
                Ok(mut w) => Some(w.take(except)),
                Err(p) => Some(p.into_inner().take(except)),
            },
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
        let mut changes: Vec<(PathBuf, FileChangeType)> =
            changes.into_iter().take(MAX_WATCHED_EVENTS).collect();
        // The watcher's events arrive a moment after the change: an open document whose
        // stamp differs is changed now, even if its event is still on the way.
        let stale: Vec<PathBuf> = self
            .docs
            .lock()
            .await
            .iter()
            .filter(|(p, d)| !except.contains(p) && disk_stamp(p) != d.stamp)
            .map(|(p, _)| p.clone())
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
        for (p, k) in &changes {
            if !self.is_open(p).await {
                continue;
            }
            if *k == FileChangeType::DELETED || !p.exists() {
                self.close_file(p).await?;
            } else {
                let doc = self.sync_file_now(p).await?;
                if doc.changed {
                    changed.push((p.clone(), doc.version));
                }
            }
        }
        self.files_changed(&changes).await?;
        Ok(changed)
    }

    /// Whether the server answers `textDocument/diagnostic` (pull); otherwise it pushes.
    pub fn pulls_diagnostics(&self) -> bool {
        self.caps.diagnostic_provider.is_some()
    }

    /// The publish sequence number so far (publishes after it are newer).
    pub fn publish_seq(&self) -> u64 {
        self.shared.diags.seq()
    }

    /// The last published (and pulled) diagnostics for `path`.
    pub fn published(&self, path: &Path) -> Option<Published> {
        self.shared.diags.get(path)
    }

    /// Every file's diagnostics newer than `after_seq`, by path.
    pub fn published_since(&self, after_seq: u64) -> Vec<(PathBuf, Published)> {
        self.snapshot()
            .into_iter()
            .filter(|(_, p)| p.seq > after_seq)
            .collect()
    }

    /// A receiver that changes on every publish and progress event.
    pub fn events(&self) -> watch::Receiver<u64> {
        self.shared.events.subscribe()
    }

    /// Waits up to `max` for a publish for `path` that is for `version` (or, when the server
    /// sends no versions, newer than `after_seq`). `None` when none came in time.
    pub async fn wait_publish(
        &self,
        path: &Path,
        version: i32,
        after_seq: u64,
        max: Duration,
    ) -> Option<Published> {
        let mut rx = self.events();
        let deadline = Instant::now() + max;
        loop {
            if let Some(p) = self.published(path)
                && p.seq > after_seq
                && p.version.is_none_or(|v| v >= version)
            {
                return Some(p);
            }
            if !self.is_alive() {
                return None;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, rx.changed()).await.is_err() {
                return None;
            }
        }
    }

    /// Pulls diagnostics for `path` (`textDocument/diagnostic`).
    pub async fn pull_diagnostics(&self, doc: &DocState) -> Result<Vec<Diagnostic>> {
        let params = json!({"textDocument": {"uri": doc.uri.as_str()}});
        // A server still catching up with a change answers "content modified" or
        // "server cancelled" (rust-analyzer under load): ask again, a few times.
        let mut tries = 0;
        let v = loop {
            let r = self
                .request_raw(
                    "textDocument/diagnostic",
                    Some(params.clone()),
                    self.request_timeout,
                )
                .await;
            match r {
                Err(LspError::Server { code, .. }) if ask_again_later(code) && tries < 8 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                other => break other?,
            }
        };
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("full");
        let path = uri_to_path(&doc.uri);
        if kind == "unchanged" {
            return Ok(path
                .and_then(|p| self.published(&p))
                .map(|p| p.items)
                .unwrap_or_default());
        }
        let items: Vec<Diagnostic> = v
            .get("items")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(|e| LspError::Decode {
                server: self.server.clone(),
                method: "textDocument/diagnostic".into(),
                message: e.to_string(),
            })?
            .unwrap_or_default();
        let Some(p) = path else {
            return Ok(items);
        };
        self.shared
            .diags
            .record_pull(p.clone(), Some(doc.version), items);
        self.shared.bump();
        // Both sources: a server that also pushes (rust-analyzer's `cargo check`) keeps those.
        Ok(self.published(&p).map(|x| x.items).unwrap_or_default())
    }

    /// Shuts the server down: `shutdown`, `exit`, close its stdin, then kill its group after
    /// a short grace. Idempotent.
    pub async fn shutdown(&self) {
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        if self.is_alive() {
            let _ = self
                .request_raw("shutdown", None, Duration::from_secs(2))
                .await;
            let _ = self.transport.send(json!({"method": "exit"})).await;
            self.transport.close_writer().await;
        }
        let mut c = self.child.lock().await;
        c.shutdown(Duration::from_millis(1500)).await;
    }

    /// Kills the server's process group at once (for tests and for `reload` of a hung server).
    pub async fn kill(&self) {
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        self.child.lock().await.kill();
    }
}

/// Reads everything the server sends that is not a response: answers its requests (all in
/// this one place) and records its notifications. Ends when the server's output closes.
async fn event_loop(
    transport: Transport,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Value>,
    shared: Arc<Shared>,
) {
    while let Some(msg) = rx.recv().await {
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            continue;
        };
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        if let Some(id) = msg.get("id").cloned() {
            let reply = match answer_server_request(method, &params, &shared) {
                Ok(result) => json!({"id": id, "result": result}),
                Err((code, message)) => {
                    json!({"id": id, "error": {"code": code, "message": message}})
                }
            };
            let _ = transport.send(reply).await;
            continue;
        }
        match method {
            "textDocument/publishDiagnostics" => record_publish(&params, &shared),
            "experimental/serverStatus" => record_status(&params, &shared),
            "$/progress" => record_progress(&params, &shared),
            _ => {}
        }
    }
    // Wake every waiter: the server is gone.
    shared.bump();
}

/// The answer to one server→client request: `Ok(result)` or `Err((code, message))`.
/// Unknown methods get MethodNotFound, so a server waiting on a reply never hangs.
fn answer_server_request(
    method: &str,
    params: &Value,
    shared: &Shared,
) -> std::result::Result<Value, (i64, String)> {
    if shared.shutting_down.load(Ordering::SeqCst) {
        // After shutdown, answer null: some servers treat an error reply as fatal.
        return Ok(Value::Null);
    }
    match method {
        "workspace/configuration" => {
            let items = params
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Ok(Value::Array(
                items
                    .iter()
                    .map(|it| {
                        lookup_setting(&shared.settings, it.get("section").and_then(Value::as_str))
                    })
                    .collect(),
            ))
        }
        "window/workDoneProgress/create" => Ok(Value::Null),
        "client/registerCapability"
        | "client/unregisterCapability"
        | "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/codeLens/refresh"
        | "window/showDocument" => Ok(Value::Null),
        "window/showMessageRequest" => Ok(Value::Null),
        "workspace/workspaceFolders" => Ok(shared.folders.clone()),
        "workspace/applyEdit" => Ok(json!({
            "applied": false,
            "failureReason": "this client applies edits only through its own tools (lsp_rename)"
        })),
        _ => {
            tracing::debug!("{}: unknown server request {method}", shared.server);
            Err((-32601, format!("method not found: {method}")))
        }
    }
}

fn lookup_setting(settings: &Value, section: Option<&str>) -> Value {
    let Some(section) = section.filter(|s| !s.is_empty()) else {
        return settings.clone();
    };
    let mut cur = settings;
    for part in section.split('.') {
        match cur.get(part) {
            Some(v) => cur = v,
            None => return Value::Null,
        }
    }
    cur.clone()
}

fn record_publish(params: &Value, shared: &Shared) {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return;
    };
    let Some(path) = url::Url::parse(uri)
        .ok()
        .and_then(|u| u.to_file_path().ok())
    else {
        return;
    };
    let items: Vec<Diagnostic> = params
        .get("diagnostics")
        .cloned()
        .and_then(|d| serde_json::from_value(d).ok())
        .unwrap_or_default();
    let version = params
        .get("version")
        .and_then(Value::as_i64)
        .map(|v| v as i32);
    shared.diags.record_push(path, version, items);
    shared.bump();
}

fn record_progress(params: &Value, shared: &Shared) {
    let token = match params.get("token") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => return,
    };
    let kind = params
        .get("value")
        .and_then(|v| v.get("kind"))
        .and_then(Value::as_str)
        .unwrap_or("");
    if let Ok(mut p) = shared.progress.lock() {
        match kind {
            "begin" => {
                p.insert(token);
                shared.progress_seen.store(true, Ordering::SeqCst);
                shared.progress_begun.fetch_add(1, Ordering::SeqCst);
            }
            "end" => {
                p.remove(&token);
            }
            _ => {}
        }
    }
    shared.bump();
}

/// rust-analyzer's status: `quiescent` is false while it loads the workspace, builds
/// dependencies' metadata or primes caches.
fn record_status(params: &Value, shared: &Shared) {
    let quiescent = params
        .get("quiescent")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if let Ok(mut q) = shared.quiescent.lock() {
        *q = Some(quiescent);
    }
    shared.bump();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_lookup_by_dotted_section() {
        let s = json!({"python": {"analysis": {"typeCheckingMode": "strict"}}});
        assert_eq!(
            lookup_setting(&s, Some("python.analysis")),
            json!({"typeCheckingMode": "strict"})
        );
        assert_eq!(lookup_setting(&s, Some("gopls")), Value::Null);
        assert_eq!(lookup_setting(&Value::Null, Some("x")), Value::Null);
    }

    #[test]
    fn uri_round_trip_with_spaces_and_non_ascii() {
        let p = PathBuf::from("/tmp/a dir/é.py");
        let u = path_to_uri(&p).unwrap();
        assert!(u.as_str().starts_with("file:///tmp/a%20dir/"));
        assert_eq!(uri_to_path(&u), Some(p));
    }
}

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
//! this module only speaks LSP on top of it, one job per file: `start` (process and
//! `initialize`), `rpc` (requests, notifications, shutdown), `documents` (the document
//! store), `diagnostics` (the diagnostics store's view and pulls), `readiness` (progress and
//! indexing waits) and `server_messages` (what the server sends unasked); beneath them
//! `diag_store` (what the server published), `watcher` (files changed outside the tools)
//! and `position` (columns in characters against the server's position encoding);
//! `write_claims` keeps one session's write out of another's view while it is observed.
//!
//! The bottom of the crate: it may use `error` and tools-core, nothing else of this crate.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use lsp_types::{ServerCapabilities, Uri};
use serde_json::Value;
use tokio::sync::watch;
use tools_core::transport::Transport;

use crate::client::position::Encoding;
use crate::client::server_process::ServerProcess;
use crate::error::{LspError, Result};

pub(crate) mod analysis_pace;
pub(crate) mod diag_store;
mod diagnostics;
mod documents;
pub(crate) mod position;
mod progress;
mod readiness;
mod rpc;
mod server_messages;
mod server_process;
mod start;
pub(crate) mod watcher;
mod write_claims;

pub use write_claims::{WriteClaim, WriteClaims};

/// Everything needed to start one server.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The language (server group), e.g. `python`.
    pub language: String,
    /// File extension → `languageId` sent in `didOpen` (ASCII case ignored); an extension
    /// not listed is sent as `language`.
    pub language_ids: Vec<(String, String)>,
    /// The file extensions the server reads (ASCII case ignored); empty: any.
    pub extensions: Vec<String>,
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
    /// The files writes of any session claim now: left alone by syncs from the disk.
    pub claims: Arc<WriteClaims>,
}

/// How long a created progress token that has not begun counts as work under way: a
/// server that creates tokens it never uses must not look busy for ever.
pub const ANNOUNCED_PROGRESS_LIFETIME: Duration = Duration::from_secs(2);

/// How long a created progress token that has not begun is remembered at all (see
/// [`LspClient::announced_not_begun`]).
pub const ANNOUNCED_TOKEN_KEPT: Duration = Duration::from_secs(600);

/// The LSP `languageId` of files with extension `ext` (ASCII case ignored) under
/// `language_ids` (extension → id), `language` when the extension is not listed.
pub(crate) fn language_id(language_ids: &[(String, String)], ext: &str, language: &str) -> String {
    language_ids
        .iter()
        .find(|(e, _)| e.eq_ignore_ascii_case(ext))
        .map(|(_, id)| id.clone())
        .unwrap_or_else(|| language.to_string())
}

use crate::client::diag_store::DiagnosticsStore;
pub use crate::client::diag_store::{Burst, Published};
use crate::client::watcher::ExternalChanges;

struct Shared {
    server: String,
    diags: DiagnosticsStore,
    events: watch::Sender<u64>,
    progress: Mutex<HashSet<String>>,
    /// What the work under way is, as the server reports it (title, message, percentage).
    board: progress::ProgressBoard,
    /// Tokens the server created (`window/workDoneProgress/create`) and has not begun yet,
    /// with when: pyright creates one in the same breath as it publishes the first part of a
    /// pass that goes on, and begins it only after our reply.
    announced: Mutex<HashMap<String, Instant>>,
    progress_seen: AtomicBool,
    /// How many work-done progress reports have begun so far.
    progress_begun: AtomicU64,
    /// rust-analyzer's `experimental/serverStatus`: `None` until the server sends one.
    quiescent: Mutex<Option<bool>>,
    /// Whether the server's first load of the project is over: work it begins later (an
    /// analysis after a change) does not hold queries.
    loaded: AtomicBool,
    /// Whether pyright (or basedpyright) has said it found its project's source files: until
    /// then its program holds only the open documents, and a references search answers
    /// from those alone.
    files_found: AtomicBool,
    /// Whether the per-user daemon has sent the diagnostics its warm server published
    /// before this client joined (`tools_daemon::DiagnosticsReplayed`).
    diagnostics_replayed: AtomicBool,
    /// When the server last published, reported progress or changed status.
    last_event: Mutex<Instant>,
    /// When we last told the server something (a document or file change, a save): it is
    /// not settled before it has had its quiet window after that.
    last_told: Mutex<Instant>,
    /// When we last told the server of files changed on disk
    /// (`workspace/didChangeWatchedFiles`).
    last_disk_news: Mutex<Option<Instant>>,
    /// When we last sent it anything (a request or a notification): how long it has been
    /// of no use, for stopping an idle companion.
    last_sent: Mutex<Instant>,
    shutting_down: AtomicBool,
    settings: Value,
    folders: Value,
}

impl Shared {
    /// The state of a server just started: nothing published, no progress seen.
    fn new(server: String, settings: Value, folders: Value) -> Shared {
        let (events, _) = watch::channel(0u64);
        Shared {
            server,
            diags: DiagnosticsStore::default(),
            events,
            progress: Mutex::new(HashSet::new()),
            board: Default::default(),
            announced: Mutex::new(HashMap::new()),
            progress_seen: AtomicBool::new(false),
            progress_begun: AtomicU64::new(0),
            quiescent: Mutex::new(None),
            loaded: AtomicBool::new(false),
            files_found: AtomicBool::new(false),
            diagnostics_replayed: AtomicBool::new(false),
            last_event: Mutex::new(Instant::now()),
            last_told: Mutex::new(Instant::now()),
            last_disk_news: Mutex::new(None),
            last_sent: Mutex::new(Instant::now()),
            shutting_down: AtomicBool::new(false),
            settings,
            folders,
        }
    }

    /// Whether the server reports loading the project now: work-done progress under way
    /// that is neither background indexing nor a check, or rust-analyzer's status not
    /// quiescent while no background work explains it.
    fn loading_reported(&self) -> bool {
        let board = &self.board;
        let quiescent = self.quiescent.lock().ok().and_then(|q| *q);
        board.any(progress::WorkKind::Loading)
            || (quiescent == Some(false)
                && !board.any(progress::WorkKind::Indexing)
                && !board.any(progress::WorkKind::Checking))
    }

    /// Records that the first load is over once work has begun and none of it loads the
    /// project any more (nor is a token announced a moment ago still to begin).
    fn note_loaded_if_over(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        if self.loaded.load(SeqCst) || self.progress_begun.load(SeqCst) == 0 {
            return;
        }
        let announced = self.announced.lock().is_ok_and(|a| {
            a.values()
                .any(|at| at.elapsed() < ANNOUNCED_PROGRESS_LIFETIME)
        });
        if !announced && !self.loading_reported() {
            tracing::debug!(server = %self.server, "first load of the project over");
            self.loaded.store(true, SeqCst);
        }
    }

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
    /// Work-done progress reports under way, or announced (a token created in the last
    /// `ANNOUNCED_PROGRESS_LIFETIME` and not begun yet).
    pub progress_active: bool,
    /// How many progress reports have begun since start (compare two readings to see
    /// whether work started in between).
    pub progress_begun: u64,
    /// `experimental/serverStatus` quiescence; `None` when the server never sent it.
    pub quiescent: Option<bool>,
    /// When the server last published, reported progress or changed status.
    pub last_event: Instant,
    /// When we last sent it a notification that changes what it sees.
    pub last_told: Instant,
    /// When we last told it of files changed on disk, if ever: it reacts in its own time
    /// (pyright after a back-off), and only by publishing what changed.
    pub last_disk_news: Option<Instant>,
}

struct OpenDoc {
    /// The path as it was opened (the table's key is its [`tools_core::platform::path_key`]).
    path: PathBuf,
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
    process: tokio::sync::Mutex<ServerProcess>,
    /// How the per-user daemon serves it, when it does.
    served: Option<tools_daemon::Serving>,
    pid: i32,
    shared: Arc<Shared>,
    /// The open documents, by [`tools_core::platform::path_key`] of their paths (one
    /// document for a file a server names in another case where case is ignored).
    docs: tokio::sync::Mutex<HashMap<PathBuf, OpenDoc>>,
    /// The highest version any document had when it was closed: a document opened (again)
    /// goes past it, so a publish of a closed document's old text still on its way never
    /// carries the version of its new text. One number rather than one per closed file.
    closed_version_floor: std::sync::atomic::AtomicI32,
    request_timeout: Duration,
    index_wait: Duration,
    max_open: usize,
    language_ids: Vec<(String, String)>,
    extensions: Vec<String>,
    opened_once: AtomicBool,
    external: Option<ExternalChanges>,
    check_after_save: AtomicBool,
    /// Whether the server has been seen settled once since its start: until then its first
    /// analysis (workspace load, indexing) may still be on its way.
    first_analysis_done: AtomicBool,
    /// Whether the run's start started it (`start_at_run_start`), not a call that needed it.
    started_with_the_run: AtomicBool,
    /// Held by whoever changes what the server sees and then waits for its settled state
    /// (a write's observation, a preview): two of them must never interleave.
    observation: Arc<tokio::sync::Mutex<()>>,
    /// True from the moment a preview hands the server proposed texts until the server
    /// has settled on the disk's texts again; syncs from the disk wait for it.
    previewing: watch::Sender<bool>,
    /// Queries read the server's view of the disk under this lock (shared); a preview takes
    /// it whole before it proposes texts and gives it back when they are withdrawn, so a
    /// query of another session sharing the server never gets an answer computed from a
    /// preview's unsaved text.
    view: Arc<tokio::sync::RwLock<()>>,
    /// The preview's hold on `view`, from [`LspClient::begin_preview`] until
    /// `set_previewing(false)`.
    preview_hold: Mutex<Option<tokio::sync::OwnedRwLockWriteGuard<()>>>,
    /// Files written by a session whose diagnostics are being taken (see `write_claims`).
    claims: Arc<WriteClaims>,
    /// How long the server took, in milliseconds, from receiving the last observed write
    /// to its settled diagnostics of it (`u64::MAX`: no write observed yet).
    last_verdict_ms: AtomicU64,
}

/// The longest a sync from the disk waits for a preview in flight to restore the server's
/// view (past it, the disk wins and the preview's restore finds nothing left to undo).
pub const PREVIEW_WAIT_LIMIT: Duration = Duration::from_secs(60);

/// LSP error code: the document changed while the request was handled.
pub const CONTENT_MODIFIED: i64 = lsp_types::error_codes::CONTENT_MODIFIED;
/// LSP error code: the server cancelled the request (it will want it asked again).
pub const SERVER_CANCELLED: i64 = lsp_types::error_codes::SERVER_CANCELLED;
/// LSP error code: the client cancelled the request (`$/cancelRequest`).
pub const REQUEST_CANCELLED: i64 = lsp_types::error_codes::REQUEST_CANCELLED;
/// JSON-RPC error code: the method is not one the receiver knows.
pub const METHOD_NOT_FOUND: i64 = -32601;

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

/// A file path as a `file://` URI, by the platform layer's one conversion (a Windows drive
/// letter in upper case, a share as the host, every unsafe byte of a name encoded).
pub fn path_to_uri(path: &Path) -> Result<Uri> {
    let url =
        tools_core::platform::path_to_file_uri(path).map_err(|e| LspError::Other(e.to_string()))?;
    url.as_str()
        .parse::<Uri>()
        .map_err(|e| LspError::Other(format!("bad URI {url}: {e:?}")))
}

/// The file path of a `file://` URI, by the platform layer's one conversion: whatever a
/// server encodes (`%61` for `a`, `c%3A` for a drive) names the same path. `None` for a URI
/// that names no file of this system (another scheme, a host on Unix).
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    tools_core::platform::file_uri_to_path(uri.as_str()).ok()
}

/// Takes in what a server sent unasked, message by message, as the client's reader does,
/// with no server behind it: for the fuzz targets of the repository's `fuzz/` folder (the
/// `testing` feature). Returns the replies the client would send and the files with
/// diagnostics recorded.
#[cfg(any(test, feature = "testing"))]
pub fn take_in_server_messages<'a>(
    messages: impl IntoIterator<Item = &'a Value>,
    settings: Value,
) -> (Vec<Value>, usize) {
    let shared = Shared::new("fuzzed".into(), settings, Value::Null);
    let replies = messages
        .into_iter()
        .filter_map(|m| server_messages::handle_message(m, &shared))
        .collect();
    (replies, shared.diags.snapshot().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_round_trip_with_spaces_and_non_ascii() {
        let p = PathBuf::from("/tmp/a dir/é.py");
        let u = path_to_uri(&p).unwrap();
        assert!(u.as_str().starts_with("file:///tmp/a%20dir/"));
        assert_eq!(uri_to_path(&u), Some(p));
    }

    #[test]
    fn what_a_server_sends_unasked_is_answered_once_per_request_and_recorded() {
        let messages = [
            serde_json::json!({"jsonrpc": "2.0", "id": 7, "method": "workspace/configuration",
                "params": {"items": [{"section": "python.analysis"}, {"section": "nope"}]}}),
            serde_json::json!({"jsonrpc": "2.0", "id": "x", "method": "made/up"}),
            serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                "params": {"uri": "file:///w/a.py", "diagnostics": []}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                "params": {"uri": 3, "diagnostics": "not a list"}}),
            serde_json::json!({"jsonrpc": "2.0", "id": 9}),
        ];
        let settings = serde_json::json!({"python": {"analysis": {"typeCheckingMode": "basic"}}});
        let (replies, files) = take_in_server_messages(&messages, settings);
        assert_eq!(
            replies,
            vec![
                serde_json::json!({"id": 7, "result": [{"typeCheckingMode": "basic"}, null]}),
                serde_json::json!({"id": "x", "error": {"code": METHOD_NOT_FOUND,
                    "message": "method not found: made/up"}}),
            ]
        );
        assert_eq!(files, 1, "the malformed publish is dropped whole");
    }
}

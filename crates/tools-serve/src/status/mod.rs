//! The operator's status page (`serve --status`): `GET /status` (HTML, a plain table
//! without scripting, refreshing itself with it) and `GET /status.json` (the same facts,
//! typed): the server, its sessions, the language servers the embedder shares between
//! them, the calls running now (each cancellable with `POST /status/calls/ID/cancel`), the
//! last calls that ended and the slowest tools.
//!
//! Names, sizes, durations and outcomes only: never a call's arguments or answer, a file's
//! contents, a credential or an environment value (see `board`). The page answers to the
//! credential `/mcp` accepts, whatever `metrics_public` says.

pub(crate) mod board;
pub(crate) mod page;
pub(crate) mod report;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What a language server shared by the sessions is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// Loading the project: queries would get empty answers yet.
    Loading,
    /// Indexing in the background: answers may be incomplete.
    Indexing,
    /// Answering.
    Ready,
    /// Not running (stopped, or not started again since it crashed).
    Stopped,
    /// Left down after failing too often.
    GaveUp,
}

/// One language server the embedder shares between sessions, as the status page shows it.
#[derive(Debug, Clone)]
pub struct PooledServer {
    /// The project root it serves.
    pub root: PathBuf,
    /// Its language (server group).
    pub language: String,
    /// Its program's name.
    pub server: String,
    /// Whether the runs it serves trust their workspace.
    pub trusted: bool,
    /// Its process id, while it runs.
    pub pid: Option<i32>,
    /// Resident memory of it and what it started, when readable.
    pub rss_bytes: Option<u64>,
    /// The conversation ids of the runs using it.
    pub runs: Vec<String>,
    /// What it is doing.
    pub state: ServerState,
    /// Crashes since it was last (re)started.
    pub crashes: u32,
    /// Why it last failed, if it did.
    pub last_failure: Option<String>,
    /// Its last restart (after a crash, or a reload): how long ago, and why.
    pub last_restart: Option<(Duration, String)>,
    /// How long since a run last asked for it.
    pub idle: Duration,
}

/// Lists the shared language servers (see [`crate::ServeOptions::language_servers`]).
pub type LanguageServers = Arc<dyn Fn() -> Vec<PooledServer> + Send + Sync>;

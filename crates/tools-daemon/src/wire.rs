//! What a connection to the daemon says first: one line of JSON each way, then (for a
//! server connection) the language server's own LSP stream, framed as LSP frames it.
//!
//! The first line names the daemon's build ([`build_id`]): a binary of another build is
//! answered [`Welcome::OtherBuild`] and starts a daemon of its own, and the older one drains
//! when the newer one starts.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The longest first line either side reads (a server's settings can be long, never this).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What a connection asks for.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum Hello {
    /// Serve this conversation the language server `spec` describes (started if no
    /// conversation shares one yet); the rest of the connection is its LSP stream.
    Server {
        /// The asking binary's build.
        build: String,
        /// The conversation's label (for `status`: which conversations share a server).
        conversation: String,
        /// The server.
        spec: Box<ServerSpec>,
    },
    /// The daemon's state, answered as [`DaemonStatus`].
    Status {
        /// The asking binary's build.
        build: String,
    },
    /// Stop now: every server is stopped and every conversation's connection closed.
    Stop {
        /// The asking binary's build.
        build: String,
    },
    /// A daemon of a newer build started: accept no more conversations and exit when the
    /// last one has gone.
    Drain,
}

/// Everything that starts one language server, exactly: two conversations share a server
/// only when their specs are equal, so an untrusted conversation never reaches a server
/// started with the repository's own configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, Hash)]
pub struct ServerSpec {
    /// The language (server group), for status.
    pub language: String,
    /// The resolved program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory: the project root it serves.
    pub cwd: PathBuf,
    /// Its whole environment (the conversation's environment policy already applied).
    pub env: Vec<(String, String)>,
    /// The settings it is answered for `workspace/configuration`, as JSON text.
    pub settings: String,
    /// Its `initializationOptions`, as JSON text.
    pub initialization_options: String,
    /// Whether the conversation trusts the workspace.
    pub trusted: bool,
}

impl ServerSpec {
    /// A short stable name for the spec (a digest of every field).
    pub fn key(&self) -> String {
        use sha2::Digest;
        let text = serde_json::to_string(self).unwrap_or_default();
        hex::encode(&sha2::Sha256::digest(text.as_bytes())[..8])
    }
}

/// The daemon's answer to a first line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum Welcome {
    /// The server is the connection's: its LSP stream follows.
    Serving(Serving),
    /// The daemon is of another build; start your own.
    OtherBuild {
        /// The daemon's build.
        build: String,
    },
    /// Not served, and why.
    Refused {
        /// Why, in a sentence.
        reason: String,
    },
    /// The state asked for with [`Hello::Status`].
    Status(DaemonStatus),
    /// [`Hello::Stop`] or [`Hello::Drain`] taken.
    Stopping,
}

/// How a server connection is served.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Serving {
    /// The daemon's process id.
    pub daemon_pid: u32,
    /// The server's process id.
    pub server_pid: i32,
    /// Whether the server was already running (a warm start).
    pub warm: bool,
    /// Seconds since the server started.
    pub server_age_s: f64,
    /// The other conversations it serves now.
    pub shared_with: Vec<String>,
}

/// What `agent-tools daemon status` shows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DaemonStatus {
    /// Its build.
    pub build: String,
    /// Its process id.
    pub pid: u32,
    /// Seconds since it started.
    pub age_s: f64,
    /// Whether it is draining (a newer build started).
    pub draining: bool,
    /// The servers it holds.
    pub servers: Vec<HostedStatus>,
}

/// One server the daemon holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostedStatus {
    /// The language.
    pub language: String,
    /// The program's file name.
    pub server: String,
    /// The root it serves.
    pub root: PathBuf,
    /// Whether its conversations trust the workspace.
    pub trusted: bool,
    /// Its process id.
    pub pid: i32,
    /// Seconds since it started.
    pub age_s: f64,
    /// The conversations it serves now.
    pub conversations: Vec<String>,
    /// Seconds since its last conversation left (`None` while one is connected).
    pub idle_s: Option<f64>,
}

/// This binary's build: its version and a digest of the executable's size and modification
/// time, so a rebuilt binary never talks to a daemon running the old code.
pub fn build_id() -> String {
    use sha2::Digest;
    let stamp = std::env::current_exe()
        .and_then(std::fs::metadata)
        .map(|m| {
            let mtime = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            format!("{}:{mtime}", m.len())
        })
        .unwrap_or_default();
    let digest = sha2::Sha256::digest(stamp.as_bytes());
    format!(
        "{}-{}",
        env!("CARGO_PKG_VERSION"),
        hex::encode(&digest[..4])
    )
}

/// A first line, as sent.
pub fn line_of<T: Serialize>(value: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(value).unwrap_or_default();
    line.push(b'\n');
    line
}

/// The value of a `workspace/configuration` section in `settings` (dotted path), `Null`
/// when unset: what the tools' LSP client answers, and the daemon for a server none of
/// whose conversations is connected to answer it.
pub fn setting_at(settings: &Value, section: Option<&str>) -> Value {
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

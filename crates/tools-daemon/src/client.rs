//! A conversation's side: find the daemon of this build (starting it when none serves),
//! and ask it for a server. Whatever fails here is the caller's cue to serve in-process;
//! the error says why, for its log and `doctor`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, ReadHalf, WriteHalf};
use tools_core::platform::LocalStream;

use crate::paths::{DaemonPaths, LOG_KEPT_BYTES};
use crate::wire::{DaemonStatus, Hello, MAX_LINE_BYTES, ServerSpec, Serving, Welcome, line_of};

/// Why the daemon could not serve.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// No daemon answers and none could be started.
    #[error("the agent-tools daemon could not be reached ({0})")]
    Unreachable(String),
    /// The daemon refused.
    #[error("the agent-tools daemon refused: {0}")]
    Refused(String),
    /// The daemon answered what this side does not understand.
    #[error("the agent-tools daemon answered unexpectedly: {0}")]
    Protocol(String),
}

/// A server served by the daemon: the connection (its LSP stream from here on) and how it
/// is served.
pub struct DaemonLink {
    /// The server's LSP output (buffered: bytes after the welcome line are kept).
    pub reader: BufReader<ReadHalf<LocalStream>>,
    /// The server's LSP input.
    pub writer: WriteHalf<LocalStream>,
    /// How it is served.
    pub serving: Serving,
}

/// The daemon of this binary's build, as a conversation reaches it.
#[derive(Debug, Clone)]
pub struct DaemonClient {
    build: String,
    paths: DaemonPaths,
    /// The binary that runs the daemon (`<exe> daemon serve`).
    exe: PathBuf,
    /// This conversation's label.
    conversation: String,
    /// Whether this side may start a daemon when none serves.
    may_start: bool,
}

/// How long a started daemon may take to listen.
const START_WITHIN: Duration = Duration::from_secs(5);

impl DaemonClient {
    /// The daemon of `build` with files `paths`, started (when none serves) as `exe daemon
    /// serve`, for conversation `conversation`.
    pub fn new(build: String, paths: DaemonPaths, exe: PathBuf, conversation: String) -> Self {
        DaemonClient {
            build,
            paths,
            exe,
            conversation,
            may_start: true,
        }
    }

    /// The daemon of `build` as people reach it (`daemon status`, `daemon stop`, `doctor`):
    /// asked about or stopped, never started.
    pub fn control(build: String, paths: DaemonPaths) -> Self {
        DaemonClient {
            build,
            paths,
            exe: PathBuf::new(),
            conversation: String::new(),
            may_start: false,
        }
    }

    /// Its files.
    pub fn paths(&self) -> &DaemonPaths {
        &self.paths
    }

    /// Asks for the server `spec` describes; starts the daemon first when none serves.
    pub async fn serve(&self, spec: &ServerSpec) -> Result<DaemonLink, DaemonError> {
        let stream = self.connect().await?;
        let (read, mut writer) = tokio::io::split(stream);
        let hello = Hello::Server {
            build: self.build.clone(),
            conversation: self.conversation.clone(),
            spec: Box::new(spec.clone()),
        };
        writer
            .write_all(&line_of(&hello))
            .await
            .map_err(|e| DaemonError::Unreachable(e.to_string()))?;
        let mut reader = BufReader::new(read);
        match read_welcome(&mut reader).await? {
            Welcome::Serving(serving) => Ok(DaemonLink {
                reader,
                writer,
                serving,
            }),
            Welcome::Refused { reason } => Err(DaemonError::Refused(reason)),
            other => Err(DaemonError::Protocol(format!("{other:?}"))),
        }
    }

    /// The daemon's state; `None` when none of this build runs.
    pub async fn status(&self) -> Result<Option<DaemonStatus>, DaemonError> {
        let hello = Hello::Status {
            build: self.build.clone(),
        };
        match self.ask_running(&hello).await? {
            None => Ok(None),
            Some(Welcome::Status(s)) => Ok(Some(s)),
            Some(other) => Err(DaemonError::Protocol(format!("{other:?}"))),
        }
    }

    /// Stops the daemon of this build; `false` when none runs.
    pub async fn stop(&self) -> Result<bool, DaemonError> {
        let hello = Hello::Stop {
            build: self.build.clone(),
        };
        match self.ask_running(&hello).await? {
            None => Ok(false),
            Some(Welcome::Stopping) => Ok(true),
            Some(other) => Err(DaemonError::Protocol(format!("{other:?}"))),
        }
    }

    /// The running daemon's answer to `hello` (`None` when none listens); a refusal is an
    /// error.
    async fn ask_running(&self, hello: &Hello) -> Result<Option<Welcome>, DaemonError> {
        let Ok(stream) = tools_core::platform::connect_local(&self.paths.socket).await else {
            return Ok(None);
        };
        match self.ask(stream, hello).await? {
            Welcome::Refused { reason } => Err(DaemonError::Refused(reason)),
            welcome => Ok(Some(welcome)),
        }
    }

    async fn ask(&self, stream: LocalStream, hello: &Hello) -> Result<Welcome, DaemonError> {
        let (read, mut writer) = tokio::io::split(stream);
        writer
            .write_all(&line_of(hello))
            .await
            .map_err(|e| DaemonError::Unreachable(e.to_string()))?;
        read_welcome(&mut BufReader::new(read)).await
    }

    /// A connection to the daemon, started when none listens.
    async fn connect(&self) -> Result<LocalStream, DaemonError> {
        if let Ok(s) = tools_core::platform::connect_local(&self.paths.socket).await {
            return Ok(s);
        }
        if !self.may_start {
            return Err(DaemonError::Unreachable("no daemon runs".into()));
        }
        self.start_daemon()?;
        let deadline = Instant::now() + START_WITHIN;
        let mut last = String::new();
        while Instant::now() < deadline {
            match tools_core::platform::connect_local(&self.paths.socket).await {
                Ok(s) => return Ok(s),
                Err(e) => last = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        Err(DaemonError::Unreachable(format!(
            "a daemon started but did not listen at {} within {} s: {last}; see {}",
            self.paths.socket.display(),
            START_WITHIN.as_secs(),
            self.paths.log.display()
        )))
    }

    /// Starts `exe daemon serve` on its own (its own process group, no terminal, its log
    /// in the daemon's folder). A daemon of the same build started at the same moment by
    /// another conversation loses the race to the lock and leaves.
    fn start_daemon(&self) -> Result<(), DaemonError> {
        self.paths
            .make_folder()
            .map_err(|e| DaemonError::Unreachable(e.to_string()))?;
        self.paths.set_log_aside_if_over(LOG_KEPT_BYTES);
        let log = tools_core::platform::private_file_options()
            .append(true)
            .create(true)
            .open(&self.paths.log)
            .map_err(|e| DaemonError::Unreachable(format!("{}: {e}", self.paths.log.display())))?;
        let mut cmd = std::process::Command::new(&self.exe);
        cmd.args(["daemon", "serve"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log);
        tools_core::platform::detach_from_our_group(&mut cmd);
        let mut child = cmd.spawn().map_err(|e| {
            DaemonError::Unreachable(format!("cannot start {}: {e}", self.exe.display()))
        })?;
        // Reaped when it leaves (if this conversation still runs then).
        std::thread::spawn(move || {
            let _ = child.wait();
        });
        Ok(())
    }
}

async fn read_welcome<R: tokio::io::AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> Result<Welcome, DaemonError> {
    let mut line = Vec::new();
    let read = tokio::time::timeout(
        Duration::from_secs(30),
        (&mut *reader)
            .take(MAX_LINE_BYTES as u64)
            .read_until(b'\n', &mut line),
    )
    .await;
    match read {
        Ok(Ok(0)) => {
            return Err(DaemonError::Unreachable(
                "the daemon closed the connection before answering".into(),
            ));
        }
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(DaemonError::Unreachable(e.to_string())),
        Err(_) => {
            return Err(DaemonError::Unreachable(
                "the daemon did not answer within 30 s".into(),
            ));
        }
    }
    serde_json::from_slice(&line).map_err(|e| DaemonError::Protocol(e.to_string()))
}

//! A server the daemon holds, as the daemon's registry sees it: its process, the task that
//! multiplexes it ([`crate::mux`]) and the tasks that carry each conversation's stream and
//! the server's stream as LSP frames.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tools_core::FolderWatch;
use tools_core::framing::read_frame_async;
use tools_core::process::{ChildProcess, Pipes};

use crate::lock;
use crate::mux::{Event, Mux};
use crate::outgoing::write_frames;
use crate::views::ConnId;
use crate::wire::{HostedStatus, ServerSpec};

/// A server the daemon holds, as the daemon's registry sees it.
pub(crate) struct Hosted {
    /// What started it.
    pub(crate) spec: ServerSpec,
    /// Its process id.
    pub(crate) pid: i32,
    /// When it started.
    pub(crate) started: Instant,
    events: mpsc::UnboundedSender<Event>,
    /// The conversations connected now.
    conversations: Arc<Mutex<Vec<(ConnId, String)>>>,
    /// Since when no conversation is connected (`None` while one is).
    idle_since: Arc<Mutex<Option<Instant>>>,
    /// Cancelled when the server is gone (exited or stopped).
    pub(crate) gone: CancellationToken,
}

impl Hosted {
    /// Starts the server `spec` describes and the task that multiplexes it.
    pub(crate) fn start(spec: ServerSpec) -> Result<Arc<Hosted>, String> {
        let mut cmd = tokio::process::Command::new(&spec.program);
        cmd.args(&spec.args)
            .current_dir(&spec.cwd)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)));
        let mut child = ChildProcess::spawn_unowned(cmd, Pipes::StdinStdout)
            .map_err(|e| format!("cannot start {}: {e}", spec.program.display()))?;
        let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err(format!(
                "{}: no pipes to the process",
                spec.program.display()
            ));
        };
        let pid = child.pid();
        let (events, rx) = mpsc::unbounded_channel();
        let hosted = Arc::new(Hosted {
            spec: spec.clone(),
            pid,
            started: Instant::now(),
            events: events.clone(),
            conversations: Arc::default(),
            idle_since: Arc::new(Mutex::new(Some(Instant::now()))),
            gone: CancellationToken::new(),
        });
        let (to_server, server_rx) = mpsc::unbounded_channel();
        tokio::spawn(write_frames(stdin, server_rx));
        let watch_events = events.clone();
        let root = spec.cwd.clone();
        tokio::spawn(async move {
            let watch = tokio::task::spawn_blocking(move || FolderWatch::watch(&root))
                .await
                .ok()
                .flatten();
            let _ = watch_events.send(Event::Watching(watch));
        });
        let reader_events = events;
        tokio::spawn(async move {
            read_frames(stdout, |msg| {
                reader_events.send(Event::FromServer(msg)).is_ok()
            })
            .await;
            let _ = reader_events.send(Event::ServerClosed);
        });
        let mux = Mux::new(
            serde_json::from_str(&spec.settings).unwrap_or(Value::Null),
            to_server,
        );
        let state = Arc::clone(&hosted);
        tokio::spawn(async move {
            mux.run(rx, |conn| state.left(conn)).await;
            state.gone.cancel();
            let mut child = child;
            child.shutdown(std::time::Duration::from_millis(1500)).await;
        });
        Ok(hosted)
    }

    /// Serves conversation `label` over `stream` (after its welcome was written).
    pub(crate) fn join<S>(self: &Arc<Self>, conn: ConnId, label: String, stream: S)
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (read, write) = tokio::io::split(stream);
        let (out, out_rx) = mpsc::unbounded_channel();
        lock(&self.conversations).push((conn, label.clone()));
        *lock(&self.idle_since) = None;
        let _ = self.events.send(Event::Join { conn, label, out });
        tokio::spawn(write_frames(write, out_rx));
        let events = self.events.clone();
        tokio::spawn(async move {
            read_frames(BufReader::new(read), |msg| {
                events.send(Event::FromConn { conn, msg }).is_ok()
            })
            .await;
            let _ = events.send(Event::Leave { conn });
        });
    }

    /// The labels of the conversations connected now.
    pub(crate) fn conversations(&self) -> Vec<String> {
        lock(&self.conversations)
            .iter()
            .map(|(_, l)| l.clone())
            .collect()
    }

    /// How long no conversation has been connected (`None` while one is).
    pub(crate) fn idle_for(&self) -> Option<std::time::Duration> {
        lock(&self.idle_since).map(|t| t.elapsed())
    }

    /// Stops the server: `shutdown`, `exit`, then its process tree.
    pub(crate) fn stop(&self) {
        let _ = self.events.send(Event::Stop);
    }

    /// What `status` shows of it.
    pub(crate) fn status(&self) -> HostedStatus {
        HostedStatus {
            language: self.spec.language.clone(),
            server: self
                .spec
                .program
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
            root: self.spec.cwd.clone(),
            trusted: self.spec.trusted,
            pid: self.pid,
            age_s: self.started.elapsed().as_secs_f64(),
            conversations: self.conversations(),
            idle_s: self.idle_for().map(|d| d.as_secs_f64()),
        }
    }

    /// `conn` has gone: it is no longer listed, and the server is idle when it was the last.
    pub(crate) fn left(&self, conn: ConnId) {
        let mut convs = lock(&self.conversations);
        convs.retain(|(c, _)| *c != conn);
        if convs.is_empty() {
            *lock(&self.idle_since) = Some(Instant::now());
        }
    }
}

/// Reads LSP frames from `from` and hands each decoded message to `take` until the stream
/// ends or `take` says stop.
async fn read_frames<R: AsyncRead + Unpin>(from: R, mut take: impl FnMut(Value) -> bool) {
    let mut reader = BufReader::with_capacity(64 * 1024, from);
    while let Ok(Some(body)) = read_frame_async(&mut reader).await {
        match serde_json::from_slice::<Value>(&body) {
            Ok(msg) => {
                if !take(msg) {
                    return;
                }
            }
            Err(e) => tracing::warn!("dropping an undecodable message: {e}"),
        }
    }
}

//! Progress notifications for calls whose client sent a `progressToken`.
//!
//! Tools report progress as they see fit (`eval` and `vibe_wait` report the seconds they
//! have been running); a tool that reports nothing for a while (a `debug continue` waiting
//! on a breakpoint, a language server's first start) would leave the client — or a proxy in
//! between — with a silent request that looks hung and may be timed out. So while a call
//! runs, a heartbeat sends `TOOL still running after N s` whenever the tool itself has been
//! quiet for the interval. Progress values are the seconds since the call started, and
//! only increasing values are sent, as MCP asks.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tools_core::ProgressSink;

/// How often a quiet call is reported still running, unless the server says otherwise.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);

#[derive(Debug)]
struct Sent {
    value: f64,
    at: Instant,
}

/// Sends one call's progress to the client that asked for it.
pub(crate) struct PeerProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
    started: Instant,
    last: Mutex<Sent>,
}

impl PeerProgress {
    /// A sink for the call identified by `token`, started now.
    pub(crate) fn new(peer: Peer<RoleServer>, token: ProgressToken) -> Arc<Self> {
        let now = Instant::now();
        Arc::new(PeerProgress {
            peer,
            token,
            started: now,
            last: Mutex::new(Sent {
                value: 0.0,
                at: now,
            }),
        })
    }

    /// Sends `progress` unless it does not increase on the last value sent.
    fn send(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        {
            let Ok(mut last) = self.last.lock() else {
                return;
            };
            if progress <= last.value {
                return;
            }
            *last = Sent {
                value: progress,
                at: Instant::now(),
            };
        }
        let mut param = ProgressNotificationParam::new(self.token.clone(), progress);
        if let Some(total) = total {
            param = param.with_total(total);
        }
        if let Some(message) = message {
            param = param.with_message(message);
        }
        let peer = self.peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }

    /// Sends a heartbeat every `interval` the tool stays quiet, until the guard drops.
    pub(crate) fn heartbeat(self: &Arc<Self>, tool: &str, interval: Duration) -> Heartbeat {
        let sink = Arc::clone(self);
        let tool = tool.chars().take(64).collect::<String>();
        let task = tokio::spawn(async move {
            loop {
                let quiet_since = sink
                    .last
                    .lock()
                    .map(|l| l.at)
                    .unwrap_or_else(|_| Instant::now());
                tokio::time::sleep_until((quiet_since + interval).into()).await;
                let quiet = sink.last.lock().map(|l| l.at.elapsed()).unwrap_or_default();
                if quiet >= interval {
                    let secs = sink.started.elapsed().as_secs_f64();
                    sink.send(
                        secs,
                        None,
                        Some(format!("{tool} still running after {secs:.0} s")),
                    );
                }
            }
        });
        Heartbeat(task)
    }
}

impl ProgressSink for PeerProgress {
    fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        self.send(progress, total, message);
    }
}

/// Stops a call's heartbeat when dropped (the call has answered).
pub(crate) struct Heartbeat(tokio::task::JoinHandle<()>);

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.0.abort();
    }
}

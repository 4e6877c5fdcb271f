//! The request plumbing of one server: typed requests and notifications with a timeout
//! (and `$/cancelRequest` when it runs out), the errors that say the server died, and
//! shutdown.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use lsp_types::notification::{Cancel, Exit, Notification};
use lsp_types::request::{Request, Shutdown};
use lsp_types::{CancelParams, NumberOrString};
use serde_json::{Value, json};
use tools_core::transport::TransportError;

use super::LspClient;
use crate::error::{LspError, Result};

impl LspClient {
    /// The process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether the server's output is still open.
    pub fn is_alive(&self) -> bool {
        !self.transport.is_closed()
    }

    /// The exit status (if it exited) and the last lines of stderr, for messages; for a
    /// server the daemon serves, that its connection closed.
    pub async fn exit_detail(&self) -> String {
        if let Some(s) = &self.served {
            return format!(
                " (served by the agent-tools daemon, pid {}, whose connection closed: the daemon or the server stopped)",
                s.daemon_pid
            );
        }
        let (status, tail) = {
            let mut c = self.process.lock().await;
            let mut s = c.try_status();
            if s.is_none() && !self.is_alive() {
                // The output closed; give the process a moment to be reaped.
                s = c.status_within(Duration::from_millis(500)).await;
            }
            (s, c.stderr_tail(6))
        };
        let mut out = String::new();
        if let Some(s) = status {
            out.push_str(&format!(" ({s})"));
        }
        if !tail.trim().is_empty() {
            out.push_str(&format!("; its last stderr lines:\n{}", tail.trim_end()));
        }
        out
    }

    /// How the per-user daemon serves this server (`None`: it is this process's child).
    pub fn served_by_daemon(&self) -> Option<&tools_daemon::Serving> {
        self.served.as_ref()
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
        self.note_sent();
        let pending = match self.transport.start_request(msg).await {
            Ok(p) => p,
            Err(TransportError::StreamClosed) => return Err(self.died(method).await),
            Err(e) => return Err(LspError::Other(e.to_string())),
        };
        let id = pending.id();
        tracing::trace!(target: "tools_lsp::wire", server = %self.server, "-> {method} #{id}");
        match pending.wait(timeout).await {
            Ok(resp) => {
                tracing::trace!(target: "tools_lsp::wire", server = %self.server, "<- #{id} {}", tools_core::text::shorten(&resp.to_string(), 200));
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
                    .send(json!({"method": Cancel::METHOD, "params": CancelParams {
                        id: NumberOrString::Number(id as i32),
                    }}))
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

    fn note_sent(&self) {
        if let Ok(mut t) = self.shared.last_sent.lock() {
            *t = Instant::now();
        }
    }

    /// How long since anything was sent to the server or it last published or reported
    /// work: a companion idle this long is of no use to the run at the moment.
    pub fn idle_for(&self) -> Duration {
        let sent = self.shared.last_sent.lock().map(|t| *t).ok();
        let event = self.shared.last_event.lock().map(|t| *t).ok();
        sent.into_iter()
            .chain(event)
            .map(|t| t.elapsed())
            .min()
            .unwrap_or_default()
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
        self.note_sent();
        tracing::trace!(target: "tools_lsp::wire", server = %self.server, "-> {method} {}", tools_core::text::shorten(&params.to_string(), 200));
        // A cancel or an exit changes nothing the server will report on.
        if !matches!(method, "$/cancelRequest" | "exit")
            && let Ok(mut t) = self.shared.last_told.lock()
        {
            *t = Instant::now();
        }
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

    /// Shuts the server down: `shutdown`, `exit`, close its stdin, then kill its group after
    /// a short grace. Idempotent.
    pub async fn shutdown(&self) {
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        if self.is_alive() {
            let _ = self
                .request_raw(Shutdown::METHOD, None, Duration::from_secs(2))
                .await;
            let _ = self.transport.send(json!({"method": Exit::METHOD})).await;
            self.transport.close_writer().await;
        }
        let mut c = self.process.lock().await;
        c.shutdown(Duration::from_millis(1500)).await;
    }

    /// Kills the server's process group at once (for tests and for `reload` of a hung server).
    pub async fn kill(&self) {
        self.shared.shutting_down.store(true, Ordering::SeqCst);
        self.process.lock().await.kill();
        if self.served.is_some() {
            // The daemon's server is shared: this conversation only lets go of it.
            self.transport.close_writer().await;
        }
    }
}

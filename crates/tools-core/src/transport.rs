//! One request/response transport for both LSP and DAP.
//!
//! The transport owns the framing, the writer, a reader task and the pending-request map
//! (id → oneshot). A [`Protocol`] says how ids are stamped onto requests and how incoming
//! messages are classified; tools-lsp and tools-debug build typed requests on top.
//!
//! Promises: requests time out on the caller's side and their pending entry is removed;
//! on end of stream every waiter is drained with [`TransportError::StreamClosed`] and the
//! reader stops; messages from the peer that are not responses (server→client requests,
//! notifications, events) arrive on one stream, in order.
//!
//! Writes are bounded too ([`DEFAULT_WRITE_TIMEOUT`], [`Transport::set_write_timeout`]): a
//! peer that stopped reading its stdin fills the pipe and would block the writer forever.
//! A write that times out may have left half a frame in the pipe, so the connection is
//! treated as broken from then on: every waiter is drained and every later call fails at
//! once, and the owner restarts the peer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::framing::{read_frame_async, write_frame_async};

/// How a protocol's messages look.
pub trait Protocol: Send + Sync + 'static {
    /// Whether `msg` is a response, and to which request id.
    fn response_id(&self, msg: &Value) -> Option<u64>;
    /// Writes the request id into an outgoing request (`id` for JSON-RPC, `seq` for DAP).
    fn stamp_request(&self, id: u64, msg: &mut Value);
    /// Prepares any other outgoing message (DAP stamps a `seq` on everything).
    fn stamp_other(&self, _id: u64, _msg: &mut Value) {}
}

/// JSON-RPC 2.0 as LSP speaks it: responses carry `id` and no `method`.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonRpc;

impl Protocol for JsonRpc {
    fn response_id(&self, msg: &Value) -> Option<u64> {
        if msg.get("method").is_some() {
            return None;
        }
        match msg.get("id")? {
            Value::Number(n) => n.as_u64(),
            Value::String(s) => s.parse().ok(),
            _ => None,
        }
    }
    fn stamp_request(&self, id: u64, msg: &mut Value) {
        if let Value::Object(m) = msg {
            m.insert("jsonrpc".into(), "2.0".into());
            m.insert("id".into(), id.into());
        }
    }
    fn stamp_other(&self, _id: u64, msg: &mut Value) {
        if let Value::Object(m) = msg {
            m.insert("jsonrpc".into(), "2.0".into());
        }
    }
}

/// The Debug Adapter Protocol: responses are `{"type":"response","request_seq":N}`; every
/// outgoing message gets a fresh `seq`. Never relies on the peer's `seq` being unique.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dap;

impl Protocol for Dap {
    fn response_id(&self, msg: &Value) -> Option<u64> {
        if msg.get("type").and_then(Value::as_str) != Some("response") {
            return None;
        }
        msg.get("request_seq").and_then(Value::as_u64)
    }
    fn stamp_request(&self, id: u64, msg: &mut Value) {
        if let Value::Object(m) = msg {
            m.insert("seq".into(), id.into());
            m.entry("type").or_insert("request".into());
        }
    }
    fn stamp_other(&self, id: u64, msg: &mut Value) {
        if let Value::Object(m) = msg {
            m.insert("seq".into(), id.into());
        }
    }
}

/// How long one message may take to be written before the peer counts as broken.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// No response within the wait (or the request could not even be written within the
    /// write timeout); the pending entry was removed.
    #[error("no response within {0:?}")]
    Timeout(Duration),
    /// The peer closed its end (or the process died).
    #[error("the connection to the server closed")]
    StreamClosed,
    /// Writing failed or a message could not be encoded.
    #[error("{0}")]
    Other(String),
}

/// Why a write failed.
enum WriteError {
    /// The peer did not read it within the write timeout; the connection is now broken.
    TimedOut(Duration),
    /// Anything else.
    Failed(TransportError),
}

/// `Result` with [`TransportError`].
pub type Result<T, E = TransportError> = std::result::Result<T, E>;

type Pending = Mutex<HashMap<u64, oneshot::Sender<Value>>>;

struct Inner {
    protocol: Box<dyn Protocol>,
    writer: tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>,
    pending: Pending,
    next_id: AtomicU64,
    closed: CancellationToken,
    write_timeout_ms: AtomicU64,
}

impl Inner {
    /// Marks the connection dead: waiters are woken with `StreamClosed`.
    fn break_down(&self) {
        self.closed.cancel();
        if let Ok(mut p) = self.pending.lock() {
            p.clear();
        }
    }
}

/// A connection to one peer. Cheap to clone.
#[derive(Clone)]
pub struct Transport {
    inner: Arc<Inner>,
}

/// A request that was sent and whose response has not been awaited yet (DAP's `launch`
/// must be sent, then configured, then awaited).
pub struct PendingRequest {
    id: u64,
    rx: oneshot::Receiver<Value>,
    inner: Arc<Inner>,
    /// Set when the request could not even be written in time: waiting on it is then a
    /// timeout at once.
    failed: Option<TransportError>,
}

impl PendingRequest {
    /// The request id.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// Waits up to `timeout` for the response message.
    pub async fn wait(self, timeout: Duration) -> Result<Value> {
        let PendingRequest {
            id,
            rx,
            inner,
            failed,
        } = self;
        if let Some(e) = failed {
            return Err(e);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(_)) => Err(TransportError::StreamClosed),
            Err(_) => {
                if let Ok(mut p) = inner.pending.lock() {
                    p.remove(&id);
                }
                Err(TransportError::Timeout(timeout))
            }
        }
    }
}

impl Transport {
    /// Starts the reader task over `reader`. Returns the transport and the stream of
    /// messages from the peer that are not responses.
    pub fn start<R, W, P>(
        reader: R,
        writer: W,
        protocol: P,
    ) -> (Transport, mpsc::UnboundedReceiver<Value>)
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
        P: Protocol,
    {
        let inner = Arc::new(Inner {
            protocol: Box::new(protocol),
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            closed: CancellationToken::new(),
            write_timeout_ms: AtomicU64::new(DEFAULT_WRITE_TIMEOUT.as_millis() as u64),
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let reader_inner = Arc::clone(&inner);
        tokio::spawn(async move {
            let mut reader = BufReader::with_capacity(64 * 1024, reader);
            loop {
                match read_frame_async(&mut reader).await {
                    Ok(Some(body)) => {
                        let msg: Value = match serde_json::from_slice(&body) {
                            Ok(v) => v,
                            Err(e) => {
                                tracing::warn!("dropping undecodable message: {e}");
                                continue;
                            }
                        };
                        if let Some(id) = reader_inner.protocol.response_id(&msg) {
                            let waiter = reader_inner
                                .pending
                                .lock()
                                .ok()
                                .and_then(|mut p| p.remove(&id));
                            match waiter {
                                Some(w) => {
                                    let _ = w.send(msg);
                                }
                                None => {
                                    tracing::debug!("response to unknown or timed-out request {id}")
                                }
                            }
                        } else if tx.send(msg).is_err() {
                            // Nobody listens for events any more; keep serving responses.
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!("transport read ended: {e}");
                        break;
                    }
                }
            }
            // Dropping the senders wakes every waiter with StreamClosed.
            reader_inner.break_down();
        });
        (Transport { inner }, rx)
    }

    /// Sends a request without waiting; returns a handle to await its response.
    pub async fn start_request(&self, mut msg: Value) -> Result<PendingRequest> {
        if self.inner.closed.is_cancelled() {
            return Err(TransportError::StreamClosed);
        }
        let id = self.inner.next_id.fetch_add(1, Ordering::SeqCst);
        self.inner.protocol.stamp_request(id, &mut msg);
        let (tx, rx) = oneshot::channel();
        self.inner
            .pending
            .lock()
            .map_err(|_| TransportError::Other("pending map poisoned".into()))?
            .insert(id, tx);
        let mut failed = None;
        if let Err(e) = self.write(&msg).await {
            if let Ok(mut p) = self.inner.pending.lock() {
                p.remove(&id);
            }
            match e {
                // The request is as good as sent and unanswered: its wait is the timeout.
                WriteError::TimedOut(after) => failed = Some(TransportError::Timeout(after)),
                WriteError::Failed(other) => return Err(other),
            }
        }
        Ok(PendingRequest {
            id,
            rx,
            inner: Arc::clone(&self.inner),
            failed,
        })
    }

    /// Sends a request and waits up to `timeout` for its response message.
    pub async fn request(&self, msg: Value, timeout: Duration) -> Result<Value> {
        self.start_request(msg).await?.wait(timeout).await
    }

    /// Sends a message that expects no response (a notification, or a reply to the peer).
    pub async fn send(&self, mut msg: Value) -> Result<()> {
        let id = self.inner.next_id.fetch_add(1, Ordering::SeqCst);
        self.inner.protocol.stamp_other(id, &mut msg);
        self.write(&msg).await.map_err(|e| match e {
            WriteError::TimedOut(after) => TransportError::Other(format!(
                "the server stopped reading its input: a message could not be written within {} s; \
                 the connection is closed and the server must be restarted",
                after.as_secs_f64()
            )),
            WriteError::Failed(e) => e,
        })
    }

    /// Sets how long one message may take to be written (default
    /// [`DEFAULT_WRITE_TIMEOUT`]).
    pub fn set_write_timeout(&self, timeout: Duration) {
        let ms = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        self.inner.write_timeout_ms.store(ms, Ordering::Relaxed);
    }

    async fn write(&self, msg: &Value) -> Result<(), WriteError> {
        let body = serde_json::to_vec(msg)
            .map_err(|e| WriteError::Failed(TransportError::Other(e.to_string())))?;
        let timeout = Duration::from_millis(self.inner.write_timeout_ms.load(Ordering::Relaxed));
        // The wait for the lock counts too: a writer stuck on a full pipe holds it.
        let written = tokio::time::timeout(timeout, async {
            let mut w = self.inner.writer.lock().await;
            if self.inner.closed.is_cancelled() {
                return Err(TransportError::StreamClosed);
            }
            write_frame_async(&mut *w, &body)
                .await
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset => {
                        TransportError::StreamClosed
                    }
                    _ => TransportError::Other(format!("write failed: {e}")),
                })
        })
        .await;
        match written {
            Ok(r) => r.map_err(WriteError::Failed),
            Err(_) => {
                tracing::warn!(
                    "a peer stopped reading its input; treating the connection as broken"
                );
                self.inner.break_down();
                Err(WriteError::TimedOut(timeout))
            }
        }
    }

    /// Whether the peer's stream has ended.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_cancelled()
    }

    /// Resolves when the peer's stream ends.
    pub async fn closed(&self) {
        self.inner.closed.cancelled().await
    }

    /// Closes our writing end (the peer sees end of stream on its stdin).
    pub async fn close_writer(&self) {
        use tokio::io::AsyncWriteExt;
        let mut w = self.inner.writer.lock().await;
        let _ = w.shutdown().await;
    }

    /// How many requests are waiting for a response.
    pub fn pending_count(&self) -> usize {
        self.inner.pending.lock().map(|p| p.len()).unwrap_or(0)
    }
}

/// An in-memory pair of byte streams for protocol tests: what one side writes, the other reads.
pub fn memory_pair() -> (tokio::io::DuplexStream, tokio::io::DuplexStream) {
    tokio::io::duplex(1024 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A peer that answers every request with its own method name, after `delay`.
    fn echo_peer(stream: tokio::io::DuplexStream, delay: Duration) {
        tokio::spawn(async move {
            let (r, mut w) = tokio::io::split(stream);
            let mut r = BufReader::new(r);
            while let Ok(Some(body)) = read_frame_async(&mut r).await {
                let msg: Value = serde_json::from_slice(&body).unwrap();
                if msg["method"] == "hangup" {
                    return;
                }
                tokio::time::sleep(delay).await;
                let note = json!({"jsonrpc":"2.0","method":"note","params":{}});
                write_frame_async(&mut w, &serde_json::to_vec(&note).unwrap())
                    .await
                    .unwrap();
                let reply = json!({"jsonrpc":"2.0","id":msg["id"],"result":msg["method"]});
                write_frame_async(&mut w, &serde_json::to_vec(&reply).unwrap())
                    .await
                    .unwrap();
            }
        });
    }

    #[tokio::test]
    async fn request_response_and_events() {
        let (a, b) = memory_pair();
        echo_peer(b, Duration::ZERO);
        let (r, w) = tokio::io::split(a);
        let (t, mut events) = Transport::start(r, w, JsonRpc);
        let resp = t
            .request(json!({"method":"ping"}), Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(resp["result"], "ping");
        assert_eq!(events.recv().await.unwrap()["method"], "note");
    }

    #[tokio::test]
    async fn timeout_removes_the_pending_entry() {
        let (a, b) = memory_pair();
        echo_peer(b, Duration::from_secs(3));
        let (r, w) = tokio::io::split(a);
        let (t, _events) = Transport::start(r, w, JsonRpc);
        let err = t
            .request(json!({"method":"slow"}), Duration::from_millis(50))
            .await
            .unwrap_err();
        assert_eq!(err, TransportError::Timeout(Duration::from_millis(50)));
        assert_eq!(t.pending_count(), 0);
    }

    #[tokio::test]
    async fn end_of_stream_drains_waiters() {
        let (a, b) = memory_pair();
        echo_peer(b, Duration::ZERO);
        let (r, w) = tokio::io::split(a);
        let (t, _events) = Transport::start(r, w, JsonRpc);
        let pending = t.start_request(json!({"method":"hangup"})).await.unwrap();
        let err = pending.wait(Duration::from_secs(5)).await.unwrap_err();
        assert_eq!(err, TransportError::StreamClosed);
        t.closed().await;
        assert!(t.is_closed());
        assert_eq!(
            t.request(json!({"method":"x"}), Duration::from_secs(1))
                .await
                .unwrap_err(),
            TransportError::StreamClosed
        );
    }

    #[tokio::test]
    async fn a_peer_that_stops_reading_makes_writes_time_out_and_breaks_the_connection() {
        // The peer never reads: a small pipe fills up and the writer blocks.
        let (a, _peer) = tokio::io::duplex(1024);
        let (r, w) = tokio::io::split(a);
        let (t, _events) = Transport::start(r, w, JsonRpc);
        t.set_write_timeout(Duration::from_millis(200));
        let big = "x".repeat(64 * 1024);
        let err = t
            .request(
                json!({"method":"big","params":{"text": big}}),
                Duration::from_secs(30),
            )
            .await
            .unwrap_err();
        // A request that could not be written is a timeout, as one that got no answer.
        assert_eq!(err, TransportError::Timeout(Duration::from_millis(200)));
        assert!(t.is_closed());
        assert_eq!(t.pending_count(), 0);
        // Later calls fail at once instead of queueing behind the stuck write.
        let (a, _peer) = tokio::io::duplex(1024);
        let (r, w) = tokio::io::split(a);
        let (t2, _events) = Transport::start(r, w, JsonRpc);
        t2.set_write_timeout(Duration::from_millis(100));
        let err = t2
            .send(json!({"method":"note","params":{"text": "y".repeat(64 * 1024)}}))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, TransportError::Other(m) if m.contains("stopped reading its input")),
            "{err:?}"
        );
        assert!(t2.is_closed());
        assert_eq!(
            t.send(json!({"method":"note"})).await.unwrap_err(),
            TransportError::StreamClosed
        );
    }

    #[test]
    fn dap_classifies_by_request_seq() {
        let d = Dap;
        assert_eq!(
            d.response_id(&json!({"type":"response","request_seq":4,"seq":0})),
            Some(4)
        );
        assert_eq!(d.response_id(&json!({"type":"event","seq":0})), None);
        let mut m = json!({"command":"initialize"});
        d.stamp_request(9, &mut m);
        assert_eq!(m, json!({"command":"initialize","seq":9,"type":"request"}));
    }
}

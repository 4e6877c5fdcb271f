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

/// Why a request got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TransportError {
    /// No response within the wait; the pending entry was removed.
    #[error("no response within {0:?}")]
    Timeout(Duration),
    /// The peer closed its end (or the process died).
    #[error("the connection to the server closed")]
    StreamClosed,
    /// Writing failed or a message could not be encoded.
    #[error("{0}")]
    Other(String),
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
}

impl PendingRequest {
    /// The request id.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// Waits up to `timeout` for the response message.
    pub async fn wait(self, timeout: Duration) -> Result<Value> {
        let PendingRequest { id, rx, inner } = self;
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
            reader_inner.closed.cancel();
            // Dropping the senders wakes every waiter with StreamClosed.
            if let Ok(mut p) = reader_inner.pending.lock() {
                p.clear();
            }
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
        if let Err(e) = self.write(&msg).await {
            if let Ok(mut p) = self.inner.pending.lock() {
                p.remove(&id);
            }
            return Err(e);
        }
        Ok(PendingRequest {
            id,
            rx,
            inner: Arc::clone(&self.inner),
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
        self.write(&msg).await
    }

    async fn write(&self, msg: &Value) -> Result<()> {
        let body = serde_json::to_vec(msg).map_err(|e| TransportError::Other(e.to_string()))?;
        let mut w = self.inner.writer.lock().await;
        write_frame_async(&mut *w, &body)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset => {
                    TransportError::StreamClosed
                }
                _ => TransportError::Other(format!("write failed: {e}")),
            })
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

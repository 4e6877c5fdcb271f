//! What the daemon writes to a conversation, and how: messages one by one as they come, the
//! replay of a warm server's diagnostics as frames encoded in one piece, and every write
//! carrying as many frames as are waiting.
//!
//! Why: a conversation joining a warm server on a large project (Django: 2,816 files, 12 MB
//! of publications) was sent every publication as its own message — each copied, queued,
//! encoded and written on its own, each write waking the conversation's reader — and its
//! first answer came after all of them (0.4 s on Django, of a 0.45 s first definition). They
//! are now encoded in one piece, and sent only when the conversation first reads
//! diagnostics ([`crate::replay`]).

use std::io::Write;

use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tools_core::framing::write_frame;

/// Most bytes gathered into one write (frames waiting beyond it go in the next).
const WRITE_BATCH_BYTES: usize = 256 * 1024;

/// One piece of a conversation's stream.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// A message, encoded as it is written.
    Message(Value),
    /// Frames already encoded (headers and bodies), written as they are.
    Frames(Vec<u8>),
}

impl From<Value> for Outgoing {
    fn from(msg: Value) -> Self {
        Outgoing::Message(msg)
    }
}

/// A publication of a document's diagnostics as a conversation gets it, encoded straight
/// from the server's own (no copy of its diagnostics is made).
#[derive(Serialize)]
struct Publication<'a> {
    jsonrpc: &'static str,
    method: &'static str,
    params: PublicationParams<'a>,
}

#[derive(Serialize)]
struct PublicationParams<'a> {
    uri: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i64>,
    diagnostics: &'a Value,
}

/// Appends to `frames` the frame of a `textDocument/publishDiagnostics` for `uri` with the
/// server's `diagnostics` (a JSON array, as the server sent it) at the conversation's own
/// `version` (`None`: without one).
pub(crate) fn encode_publication(
    frames: &mut Vec<u8>,
    uri: &str,
    version: Option<i64>,
    diagnostics: &Value,
) {
    let publication = Publication {
        jsonrpc: "2.0",
        method: "textDocument/publishDiagnostics",
        params: PublicationParams {
            uri,
            version,
            diagnostics,
        },
    };
    // Encoding a borrowed JSON value into memory does not fail.
    if let Ok(body) = serde_json::to_vec(&publication) {
        let _ = write_frame(frames as &mut dyn Write, &body);
    }
}

/// Writes everything `rx` brings as LSP frames until the channel closes or a write fails,
/// then shuts the writer down (the peer sees the end of its stream). What is waiting when a
/// write starts goes in that write (up to [`WRITE_BATCH_BYTES`]).
pub(crate) async fn write_frames<W: AsyncWrite + Unpin, M: Into<Outgoing>>(
    mut to: W,
    mut rx: mpsc::UnboundedReceiver<M>,
) {
    let mut batch = Vec::new();
    while let Some(first) = rx.recv().await {
        batch.clear();
        append(&mut batch, first.into());
        while batch.len() < WRITE_BATCH_BYTES
            && let Ok(next) = rx.try_recv()
        {
            append(&mut batch, next.into());
        }
        if to.write_all(&batch).await.is_err() || to.flush().await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

fn append(batch: &mut Vec<u8>, out: Outgoing) {
    match out {
        Outgoing::Message(msg) => {
            if let Ok(body) = serde_json::to_vec(&msg) {
                let _ = write_frame(batch as &mut dyn Write, &body);
            }
        }
        Outgoing::Frames(frames) if batch.is_empty() => *batch = frames,
        Outgoing::Frames(frames) => batch.extend_from_slice(&frames),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tools_core::framing::read_frame;

    fn frames_of(bytes: &[u8]) -> Vec<Value> {
        let mut r = std::io::Cursor::new(bytes);
        let mut out = Vec::new();
        while let Some(body) = read_frame(&mut r).unwrap() {
            out.push(serde_json::from_slice(&body).unwrap());
        }
        out
    }

    #[test]
    fn a_publication_is_the_servers_diagnostics_at_the_conversations_version() {
        let diagnostics = json!([{"range": {"start": {"line": 1, "character": 2},
            "end": {"line": 1, "character": 5}}, "message": "undefined name"}]);
        let mut frames = Vec::new();
        encode_publication(&mut frames, "file:///p/a.py", Some(3), &diagnostics);
        encode_publication(&mut frames, "file:///p/b.py", None, &json!([]));
        assert_eq!(
            frames_of(&frames),
            vec![
                json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                    "params": {"uri": "file:///p/a.py", "version": 3,
                        "diagnostics": diagnostics}}),
                json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                    "params": {"uri": "file:///p/b.py", "diagnostics": []}}),
            ]
        );
    }

    #[tokio::test]
    async fn messages_and_encoded_frames_reach_the_stream_in_the_order_sent() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut replay = Vec::new();
        encode_publication(&mut replay, "file:///p/a.py", None, &json!([]));
        tx.send(Outgoing::Message(json!({"id": 1, "result": null})))
            .unwrap();
        tx.send(Outgoing::Frames(replay)).unwrap();
        tx.send(Outgoing::Message(json!({"id": 2, "result": true})))
            .unwrap();
        drop(tx);
        let mut written = Vec::new();
        write_frames(&mut written, rx).await;
        assert_eq!(
            frames_of(&written),
            vec![
                json!({"id": 1, "result": null}),
                json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                    "params": {"uri": "file:///p/a.py", "diagnostics": []}}),
                json!({"id": 2, "result": true}),
            ]
        );
    }
}

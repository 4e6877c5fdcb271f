//! The mux driven by hand: a server's messages and conversations' as its task takes them.

use super::*;
use crate::outgoing::write_frames;
use tools_core::framing::read_frame;

/// What a conversation's stream has carried so far, message by message.
async fn received(rx: &mut mpsc::UnboundedReceiver<Outgoing>) -> Vec<Value> {
    let (tx, frames) = mpsc::unbounded_channel();
    while let Ok(out) = rx.try_recv() {
        let _ = tx.send(out);
    }
    drop(tx);
    let mut bytes = Vec::new();
    write_frames(&mut bytes, frames).await;
    let mut r = std::io::Cursor::new(bytes);
    let mut out = Vec::new();
    while let Some(body) = read_frame(&mut r).unwrap() {
        out.push(serde_json::from_slice(&body).unwrap());
    }
    out
}

fn publication(uri: &str, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
        "params": {"uri": uri, "diagnostics": [{"range": {"start": {"line": 0, "character": 0},
            "end": {"line": 0, "character": 1}}, "message": message}]}})
}

fn join(mux: &mut Mux, conn: ConnId) -> mpsc::UnboundedReceiver<Outgoing> {
    let (out, rx) = mpsc::unbounded_channel();
    mux.join(conn, "test", out);
    mux.take_from_conn(
        conn,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
    );
    rx
}

#[tokio::test]
async fn a_later_conversation_gets_the_diagnostics_from_before_it_joined_when_it_asks_once() {
    let (to_server, mut server) = mpsc::unbounded_channel();
    let mut mux = Mux::new(Value::Null, to_server);
    let mut first = join(&mut mux, 1);
    let init = server.try_recv().unwrap();
    mux.take_from_server(
        json!({"jsonrpc": "2.0", "id": init["id"], "result": {"capabilities": {}}}),
    );
    mux.take_from_server(publication("file:///p/old.py", "from before"));
    assert_eq!(
        received(&mut first).await,
        vec![
            json!({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}}),
            publication("file:///p/old.py", "from before"),
        ]
    );

    // A later conversation is answered at once, with nothing published before it joined.
    let mut later = join(&mut mux, 2);
    mux.take_from_server(publication("file:///p/live.py", "since it joined"));
    assert_eq!(
        received(&mut later).await,
        vec![
            json!({"jsonrpc": "2.0", "id": 1, "result": {"capabilities": {}}}),
            publication("file:///p/live.py", "since it joined"),
        ]
    );

    // Asked, the rest comes (not what it already had), then the end of the replay.
    let ask = json!({"jsonrpc": "2.0", "method": ReplayDiagnostics::METHOD});
    mux.take_from_conn(2, ask.clone());
    assert_eq!(
        received(&mut later).await,
        vec![
            publication("file:///p/old.py", "from before"),
            json!({"jsonrpc": "2.0", "method": DiagnosticsReplayed::METHOD}),
        ]
    );
    // Once per conversation.
    mux.take_from_conn(2, ask);
    assert_eq!(received(&mut later).await, Vec::<Value>::new());
}

//! The server over in-memory streams, spoken to with JSON-RPC lines as a client writes them:
//! a panicking tool is answered with an error and the server keeps serving; a client cancel
//! reaches the tool's cancellation token.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tools_core::{
    CallCtx, Config, RegistryBuilder, Run, RunOptions, Surface, Tier, Tool, ToolError, ToolOutput,
};
use tools_mcp::McpServer;

/// A test-only tool with a bug: it panics.
struct Panics;

#[tools_core::async_trait]
impl Tool for Panics {
    fn name(&self) -> &str {
        "panics"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "a tool with a bug".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, _ctx: &CallCtx, args: Value) -> Result<ToolOutput, ToolError> {
        let items: Vec<u64> = serde_json::from_value(args["items"].clone()).unwrap_or_default();
        Ok(ToolOutput::text(format!("the tenth is {}", items[9])))
    }
}

/// A test-only tool that waits until its call is cancelled, and says so.
struct WaitsForCancel(Arc<AtomicBool>);

#[tools_core::async_trait]
impl Tool for WaitsForCancel {
    fn name(&self) -> &str {
        "waits"
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "waits for its cancellation".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
        tokio::select! {
            _ = ctx.cancel.cancelled() => {
                self.0.store(true, Ordering::SeqCst);
                Err(ToolError::rejected("cancelled"))
            }
            _ = tokio::time::sleep(Duration::from_secs(120)) => Ok(ToolOutput::text("never cancelled")),
        }
    }
}

struct Client {
    to_server: DuplexStream,
    from_server: tokio::io::Lines<BufReader<DuplexStream>>,
    _dir: tempfile::TempDir,
}

impl Client {
    async fn send(&mut self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.to_server.write_all(&line).await.unwrap();
    }

    /// The answer to request `id` (other messages are skipped).
    async fn answer(&mut self, id: u64) -> Value {
        let wait = async {
            while let Some(line) = self.from_server.next_line().await.unwrap() {
                let msg: Value = serde_json::from_str(&line).unwrap();
                if msg["id"] == json!(id) {
                    return msg;
                }
            }
            panic!("the server closed before answering {id}");
        };
        tokio::time::timeout(Duration::from_secs(20), wait)
            .await
            .unwrap_or_else(|_| panic!("no answer to request {id}"))
    }
}

async fn start(tools: Vec<Arc<dyn Tool>>) -> Client {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::new(RunOptions {
        root: dir.path().into(),
        conversation_id: "mcp-test".into(),
        config: Config::empty(),
        trusted: false,
    })
    .unwrap();
    let mut builder = RegistryBuilder::new(run);
    for t in tools {
        builder = builder.tool(t);
    }
    let server = McpServer::with_registry(Surface::FULL, builder.build().unwrap());
    let (client_end, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_in) = tokio::io::duplex(1 << 20);
    tokio::spawn(server.serve_streams(server_in, server_out, std::future::pending()));
    let mut c = Client {
        to_server: client_end,
        from_server: BufReader::new(client_in).lines(),
        _dir: dir,
    };
    c.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    )
    .await;
    assert!(c.answer(1).await.get("result").is_some());
    c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    c
}

fn call(id: u64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": name, "arguments": args}})
}

#[tokio::test]
async fn a_panicking_tool_is_answered_with_an_internal_error_and_the_server_keeps_serving() {
    let seen = Arc::new(AtomicBool::new(false));
    let mut c = start(vec![Arc::new(Panics), Arc::new(WaitsForCancel(seen))]).await;
    c.send(call(2, "panics", json!({"items": [1, 2]}))).await;
    let answer = c.answer(2).await;
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    assert_eq!(result["structuredContent"]["error"]["kind"], "internal");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("panicked") && text.contains("index out of bounds"),
        "{text}"
    );
    // The next call works.
    c.send(call(
        3,
        "panics",
        json!({"items": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}),
    ))
    .await;
    let answer = c.answer(3).await;
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "the tenth is 9");
}

#[tokio::test]
async fn a_client_cancel_reaches_the_tool_s_cancellation_token() {
    let seen = Arc::new(AtomicBool::new(false));
    let mut c = start(vec![Arc::new(WaitsForCancel(seen.clone()))]).await;
    c.send(call(2, "waits", json!({}))).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!seen.load(Ordering::SeqCst));
    c.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": 2, "reason": "the user changed their mind"}}),
    )
    .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !seen.load(Ordering::SeqCst) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the tool never saw the cancel"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The server still answers.
    c.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))
        .await;
    assert!(c.answer(3).await["result"]["tools"].is_array());
}

//! The server spoken to by rmcp's own client, as a Rust agent would embed it: a client on
//! 2025-11-25 that declares the tasks extension gets a long tool's answer in place, with the
//! progress it asked for (the task result is 2026-07-28's; tests/e2e/test_tasks.py drives
//! that protocol's tasks).

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig, Implementation,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestMetaObject,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tools_core::{
    CallCtx, Config, RegistryBuilder, Run, RunOptions, Surface, Tier, Tool, ToolError, ToolOutput,
};
use tools_mcp::McpServer;

/// A test-only `eval`: reports two steps of progress, then answers `42`.
struct Cell;

#[tools_core::async_trait]
impl Tool for Cell {
    fn name(&self) -> &str {
        "eval"
    }
    fn tier(&self) -> Tier {
        Tier::Exec
    }
    fn description(&self) -> String {
        "a cell that reports its steps".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(&self, ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
        ctx.progress.report(1.0, Some(2.0), Some("step 1".into()));
        tokio::task::yield_now().await;
        ctx.progress.report(2.0, Some(2.0), Some("step 2".into()));
        Ok(ToolOutput::text("42"))
    }
}

/// An rmcp client on `version` that declares the tasks extension and records progress.
#[derive(Clone)]
struct Agent {
    version: ProtocolVersion,
    progress: Arc<Mutex<Vec<(f64, String)>>>,
}

impl ClientHandler for Agent {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("rmcp-suite", "0"),
        );
        info.protocol_version = self.version.clone();
        info
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress
            .lock()
            .unwrap()
            .push((params.progress, params.message.unwrap_or_default()));
    }
}

async fn connect(
    version: ProtocolVersion,
) -> (RunningService<RoleClient, Agent>, Agent, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let run = Run::new(RunOptions {
        root: dir.path().into(),
        conversation_id: "rmcp-client".into(),
        config: Config::empty(),
        trusted: false,
    })
    .unwrap();
    let registry = RegistryBuilder::new(run)
        .tool(Arc::new(Cell))
        .build()
        .unwrap();
    let server = McpServer::with_registry(Surface::FULL, registry);
    let (client_end, server_in) = tokio::io::duplex(1 << 20);
    let (server_out, client_in) = tokio::io::duplex(1 << 20);
    tokio::spawn(server.serve_streams(server_in, server_out, std::future::pending()));
    let agent = Agent {
        version,
        progress: Default::default(),
    };
    let client = agent.clone().serve((client_in, client_end)).await.unwrap();
    (client, agent, dir)
}

fn cell_call() -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new("eval");
    params.arguments = Some(serde_json::Map::new());
    params.meta = Some(RequestMetaObject::with_progress_token(ProgressToken(
        rmcp::model::NumberOrString::String("cell".into()),
    )));
    params
}

fn text_of(result: &rmcp::model::CallToolResult) -> Value {
    serde_json::to_value(&result.content).unwrap()
}

#[tokio::test]
async fn a_2025_11_25_client_declaring_tasks_gets_the_answer_in_place_with_progress() {
    let (client, agent, _dir) = connect(ProtocolVersion::V_2025_11_25).await;
    let response = client.peer().call_tool_once(cell_call()).await.unwrap();
    let CallToolResponse::Complete(result) = response else {
        panic!("answered with something else than the call's result: {response:?}");
    };
    assert_eq!(text_of(&result), json!([{"type": "text", "text": "42"}]));
    assert_eq!(result.is_error, Some(false));
    // Progress notifications travel ahead of the answer on the same stream.
    assert_eq!(
        *agent.progress.lock().unwrap(),
        vec![(1.0, "step 1".to_string()), (2.0, "step 2".to_string())]
    );
    client.cancel().await.unwrap();
}

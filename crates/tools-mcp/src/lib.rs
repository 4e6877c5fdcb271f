//! # tools-mcp
//!
//! Serves one run's [`Registry`], for one [`Surface`], over MCP (stdio), with rmcp. A thin
//! adapter: every call goes through the registry's guard chain exactly as an embedding
//! harness's call would.
//!
//! - `tools/list` lists exactly the surface's tools with their JSON Schemas and a tier
//!   annotation (`readOnlyHint` for read tools that start no process, `openWorldHint` for those that do, `destructiveHint` for write tools).
//! - `tools/call` maps [`tools_core::ToolOutput`] to MCP content: the text (with observer
//!   sections such as diagnostics on write appended), PNG images as image content, and the
//!   structured result as `structuredContent`. A [`tools_core::ToolError`] is a tool result
//!   with `isError: true` and the message written for the model; an unknown tool — including
//!   one hidden by the surface's tier — is a protocol error (`-32602`, as the MCP spec asks).
//! - Progress a tool reports while it runs becomes `notifications/progress` when the client
//!   sent a progress token, and a call that stays quiet is reported `still running` every
//!   [`DEFAULT_HEARTBEAT`] (the `progress` module), so clients and proxies do not time it out.
//! - `notifications/cancelled` cancels the call's token ([`tools_core::CallCtx::cancel`]);
//!   the tool is then given [`CANCEL_WIND_DOWN`] to stop cleanly (eval interrupts its cell
//!   and answers pending bridged calls as cancelled) before its future is dropped, so the
//!   next call finds the tool in a known state.
//! - With a client that declared the tasks extension, `eval`, `debug` and `vibe_wait` calls
//!   run as tasks (the `tasks` module): the call answers with a task id at once, and
//!   `tasks/get`, `tasks/update` and `tasks/cancel` poll, answer and cancel it.
//! - A tool that panics is answered with an internal error by the registry; the server keeps
//!   serving. Requests whose arguments hold text that is not Unicode (a lone surrogate
//!   escape such as `"\ud800"`, or bytes that are not UTF-8) are answered with
//!   invalid-params instead of being dropped (the `stdio` module).
//!
//! ## When the registry is built
//!
//! The registry is built on the first `tools/list` or `tools/call`, not at start-up, because
//! whether `ask_user` exists depends on the client: on handshake protocols (2025-06-18,
//! 2025-11-25) the factory receives an [`Elicitor`] when the client declared the elicitation
//! capability in `initialize`. On the newest protocol rmcp speaks (2026-07-28: no
//! `initialize`, capabilities sent with every request, no server-to-client requests) it
//! receives an elicitor when the first request's capabilities declare elicitation, and
//! questions travel by the multi-round-trip flow instead: the tool call keeps running on the
//! server, the `tools/call` answers `resultType: "input_required"` with the form and an
//! opaque `requestState` handle, and the client's retry (carrying `inputResponses` and the
//! handle) delivers the answer to the waiting call, which then completes or asks again.
//! At most [`MAX_PENDING_CALLS`] such calls wait at once; the oldest is dropped beyond that.

#![deny(clippy::print_stdout)]

mod progress;
mod stdio;
mod tasks;

pub use progress::DEFAULT_HEARTBEAT;
use progress::PeerProgress;

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ElicitRequestParams,
    ElicitResult, ElicitationAction, ElicitationSchema, ErrorCode, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::OnceCell;
use tools_core::{
    CallError, ElicitOutcome, Elicitor, Progress, Registry, Surface, Tier, ToolError, ToolOutput,
};

/// Builds the run's registry once the client is known. Receives an [`Elicitor`] when the
/// client can show forms to a human.
pub type RegistryFactory = Arc<
    dyn Fn(Option<Arc<dyn Elicitor>>) -> BoxFuture<'static, Result<Arc<Registry>, ToolError>>
        + Send
        + Sync,
>;

/// An MCP server over one run.
pub struct McpServer {
    surface: Surface,
    heartbeat: Duration,
    factory: RegistryFactory,
    registry: Arc<OnceCell<Arc<Registry>>>,
    pending: std::sync::Mutex<PendingCalls>,
    /// The calls running as tasks (see the `tasks` module).
    tasks: rmcp::task_manager::TaskManager,
}

/// How long a cancelled call is given to stop by itself before it is dropped.
pub const CANCEL_WIND_DOWN: Duration = Duration::from_secs(15);

/// How many calls may wait on an answer at once (newest protocol only).
pub const MAX_PENDING_CALLS: usize = 16;

#[derive(Default)]
struct PendingCalls {
    next: u64,
    calls: std::collections::VecDeque<(String, PendingCall)>,
}

/// One question a running call put to the client (newest protocol).
struct Question {
    message: String,
    schema: ElicitationSchema,
    answer: tokio::sync::oneshot::Sender<ElicitOutcome>,
}

/// A tool call running in the background while its question is out with the client.
struct PendingCall {
    task: tokio::task::JoinHandle<Result<ToolOutput, CallError>>,
    /// The call's own token: cancelled when the client cancels any round of it.
    cancel: tokio_util::sync::CancellationToken,
    questions: tokio::sync::mpsc::UnboundedReceiver<Question>,
    awaiting: Option<tokio::sync::oneshot::Sender<ElicitOutcome>>,
}

impl Drop for PendingCall {
    fn drop(&mut self) {
        self.task.abort();
    }
}

tokio::task_local! {
    /// Where a call running under the newest protocol sends its questions.
    static QUESTIONS: tokio::sync::mpsc::UnboundedSender<Question>;
}

/// [`Elicitor`] for the newest protocol: the question goes back to the call's own
/// `tools/call` handler, which answers the client with `input_required`.
struct RoundTripElicitor {
    version: String,
}

#[async_trait::async_trait]
impl Elicitor for RoundTripElicitor {
    fn protocol_version(&self) -> String {
        self.version.clone()
    }
    async fn elicit(
        &self,
        message: String,
        requested_schema: Value,
        timeout: Duration,
    ) -> Result<ElicitOutcome, ToolError> {
        let schema = form_schema(requested_schema)?;
        let questions = QUESTIONS.try_with(|q| q.clone()).map_err(|_| {
            ToolError::not_available("this question is not part of a client's tool call")
        })?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        questions
            .send(Question {
                message,
                schema,
                answer: tx,
            })
            .map_err(|_| ToolError::not_available("the client's call is gone"))?;
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(outcome)) => Ok(outcome),
            Ok(Err(_)) => Err(ToolError::not_available(
                "the client abandoned the question",
            )),
            Err(_) => Err(ToolError::timed_out(format!(
                "nobody answered within {} s",
                timeout.as_secs()
            ))),
        }
    }
}

impl McpServer {
    /// A server for `surface` whose registry `factory` builds on first use.
    pub fn new(surface: Surface, factory: RegistryFactory) -> Self {
        McpServer {
            surface,
            heartbeat: DEFAULT_HEARTBEAT,
            factory,
            registry: Arc::new(OnceCell::new()),
            pending: Default::default(),
            tasks: Default::default(),
        }
    }

    /// A server over an already built registry (no elicitation-dependent tools).
    pub fn with_registry(surface: Surface, registry: Arc<Registry>) -> Self {
        let cell = OnceCell::new();
        let _ = cell.set(Arc::clone(&registry));
        McpServer {
            surface,
            heartbeat: DEFAULT_HEARTBEAT,
            factory: Arc::new(move |_| Box::pin(std::future::ready(Ok(Arc::clone(&registry))))),
            registry: Arc::new(cell),
            pending: Default::default(),
            tasks: Default::default(),
        }
    }

    /// Sends a quiet call's client a `still running` progress notification every
    /// `interval` (when it sent a progress token); [`DEFAULT_HEARTBEAT`] otherwise.
    pub fn with_heartbeat(mut self, interval: Duration) -> Self {
        self.heartbeat = interval.max(Duration::from_millis(100));
        self
    }

    /// The registry, if it has been built.
    pub fn registry(&self) -> Option<&Arc<Registry>> {
        self.registry.get()
    }

    async fn registry_for(
        &self,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<&Arc<Registry>, McpError> {
        self.registry
            .get_or_try_init(|| async {
                let elicitor = client_elicitor(ctx);
                (self.factory)(elicitor).await
            })
            .await
            .map_err(|e| {
                McpError::internal_error(format!("could not start the tool run: {e}"), None)
            })
    }

    /// Serves on stdin/stdout until the client disconnects, then closes the run.
    pub async fn serve_stdio(self) -> Result<(), ToolError> {
        self.serve_stdio_until(std::future::pending()).await
    }

    /// [`McpServer::serve_stdio`], also ending when `shutdown` resolves (a signal, say):
    /// the run is closed first — every process it started is killed — then the service
    /// stops.
    pub async fn serve_stdio_until(
        self,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), ToolError> {
        let (input, output) = rmcp::transport::stdio_pipes();
        self.serve_streams(input, output, shutdown).await
    }

    /// Serves newline-delimited JSON-RPC read from `input` and written to `output` (the
    /// stdio transport, over any byte streams), until the client closes `input` or
    /// `shutdown` resolves; the run is closed either way.
    pub async fn serve_streams<R, W>(
        self,
        input: R,
        output: W,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<(), ToolError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let registry = Arc::clone(&self.registry);
        let (reader, writer, flushed) = stdio::guarded(input, output);
        tokio::pin!(shutdown);
        let service = tokio::select! {
            s = self.serve((reader, writer)) => {
                s.map_err(|e| ToolError::internal(format!("MCP handshake failed: {e}")))?
            }
            _ = &mut shutdown => {
                if let Some(reg) = registry.get() {
                    reg.run().close().await;
                }
                return Ok(());
            }
        };
        let stop = service.cancellation_token();
        let result = tokio::select! {
            r = service.waiting() => r.map(|_| ()).map_err(|e| {
                ToolError::internal(format!("MCP server ended with an error: {e}"))
            }),
            _ = &mut shutdown => {
                if let Some(reg) = registry.get() {
                    reg.run().close().await;
                }
                stop.cancel();
                return Ok(());
            }
        };
        if let Some(reg) = registry.get() {
            reg.run().close().await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), flushed).await;
        result
    }
}

fn client_elicitor(ctx: &RequestContext<RoleServer>) -> Option<Arc<dyn Elicitor>> {
    let caps = ctx.client_capabilities()?;
    let elicitation = caps.elicitation.as_ref()?;
    // Form mode is what questions need; a client declaring only URL mode cannot answer them.
    if elicitation.form.is_none() && elicitation.url.is_some() {
        return None;
    }
    let version = ctx
        .protocol_version()
        .unwrap_or(ProtocolVersion::V_2025_06_18);
    if is_round_trip_protocol(&version) {
        return Some(Arc::new(RoundTripElicitor {
            version: version.as_str().to_string(),
        }));
    }
    Some(Arc::new(PeerElicitor {
        peer: ctx.peer.clone(),
        version: version.as_str().to_string(),
    }))
}

/// The form a gate built, as the elicitation schema both elicitors send.
fn form_schema(requested_schema: Value) -> Result<ElicitationSchema, ToolError> {
    serde_json::from_value(requested_schema).map_err(|e| {
        ToolError::internal(format!(
            "the question form is not a valid elicitation schema: {e}"
        ))
    })
}

fn is_round_trip_protocol(version: &ProtocolVersion) -> bool {
    version.as_str() >= ProtocolVersion::V_2026_07_28.as_str()
}

/// The client's answer in `inputResponses` (an `ElicitResult`); anything else cancels.
fn parse_answer(answer: &Value) -> ElicitOutcome {
    match serde_json::from_value::<ElicitResult>(answer.clone()) {
        Ok(r) => elicit_outcome(r),
        Err(_) => ElicitOutcome::Cancel,
    }
}

/// What the human did, from the client's typed answer.
fn elicit_outcome(result: ElicitResult) -> ElicitOutcome {
    match result.action {
        ElicitationAction::Accept => ElicitOutcome::Accept(result.content.unwrap_or(Value::Null)),
        ElicitationAction::Decline => ElicitOutcome::Decline,
        _ => ElicitOutcome::Cancel,
    }
}

/// [`Elicitor`] over the client connection: `elicitation/create` form requests.
struct PeerElicitor {
    peer: Peer<RoleServer>,
    version: String,
}

#[async_trait::async_trait]
impl Elicitor for PeerElicitor {
    fn protocol_version(&self) -> String {
        self.version.clone()
    }
    async fn elicit(
        &self,
        message: String,
        requested_schema: Value,
        timeout: Duration,
    ) -> Result<ElicitOutcome, ToolError> {
        let schema = form_schema(requested_schema)?;
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: schema,
        };
        let result = self
            .peer
            .create_elicitation_with_timeout(params, Some(timeout))
            .await
            .map_err(|e| match e {
                rmcp::ServiceError::Timeout { .. } => {
                    ToolError::timed_out(format!("nobody answered within {} s", timeout.as_secs()))
                }
                other => ToolError::not_available(format!(
                    "the client could not show the question: {other}"
                )),
            })?;
        Ok(elicit_outcome(result))
    }
}

/// Read-tier tools that start processes: `lsp` starts language servers (and `diagnostics
/// "*"` the project's checker), `vibe_spawn` and `vibe_send` start worker CLIs.
const READ_TOOLS_THAT_START_PROCESSES: &[&str] = &["lsp", "vibe_spawn", "vibe_send"];

/// The MCP tool entry for one of ours.
fn to_mcp_tool(info: &tools_core::ToolInfo) -> Option<rmcp::model::Tool> {
    let annotations = match info.tier {
        // A read tool that starts a process (a language server, a worker CLI) is not
        // read-only in MCP's sense: it reaches beyond the conversation.
        Tier::Read if READ_TOOLS_THAT_START_PROCESSES.contains(&info.name.as_str()) => {
            ToolAnnotations::new().destructive(false).open_world(true)
        }
        Tier::Read => ToolAnnotations::new().read_only(true).destructive(false),
        Tier::Write => ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false),
        Tier::Exec => ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .open_world(true),
    };
    let Value::Object(schema) = &info.input_schema else {
        tracing::error!(
            "tool {} has an input schema that is not an object",
            info.name
        );
        return None;
    };
    let mut meta = rmcp::model::JsonObject::new();
    meta.insert("agent-tools/tier".into(), info.tier.as_str().into());
    meta.insert("agent-tools/parallelSafe".into(), info.parallel_safe.into());
    Some(
        rmcp::model::Tool::new(
            info.name.clone(),
            info.description.clone(),
            Arc::new(schema.clone()),
        )
        .with_annotations(annotations)
        .with_meta(rmcp::model::MetaObject(meta)),
    )
}

/// Maps a tool result to MCP content.
pub fn to_call_result(result: Result<ToolOutput, ToolError>) -> CallToolResult {
    match result {
        Ok(out) => {
            let mut content = vec![ContentBlock::text(out.full_text())];
            content.extend(out.images.iter().map(|img| {
                ContentBlock::image(
                    base64::engine::general_purpose::STANDARD.encode(&img.png),
                    "image/png",
                )
            }));
            let mut result = CallToolResult::success(content);
            // structuredContent must be an object.
            result.structured_content = out.full_structured().map(|s| {
                if s.is_object() {
                    s
                } else {
                    json!({ "result": s })
                }
            });
            result
        }
        Err(e) => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
            result.structured_content =
                Some(json!({"error": {"kind": e.kind(), "message": e.to_string()}}));
            result
        }
    }
}

fn finish(result: Result<ToolOutput, CallError>) -> Result<CallToolResponse, McpError> {
    match result {
        Ok(out) => Ok(to_call_result(Ok(out)).into()),
        Err(CallError::Tool(e)) => Ok(to_call_result(Err(e)).into()),
        Err(e @ CallError::UnknownTool { .. }) => Err(McpError::new(
            ErrorCode::INVALID_PARAMS,
            e.to_string(),
            None,
        )),
    }
}

impl McpServer {
    /// The newest protocol's call: run the tool in the background; a question it asks ends
    /// this round with `input_required`, and the client's retry resumes it.
    async fn call_round_trip(
        &self,
        reg: &Arc<Registry>,
        request: CallToolRequestParams,
        args: Value,
        opts: tools_core::CallOptions,
        tool_cancel: tokio_util::sync::CancellationToken,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<CallToolResponse, McpError> {
        let mut call = match &request.request_state {
            Some(handle) => {
                let found = self.pending.lock().ok().and_then(|mut p| {
                    let at = p.calls.iter().position(|(h, _)| h == handle)?;
                    p.calls.remove(at).map(|(_, c)| c)
                });
                let Some(mut call) = found else {
                    return Err(McpError::invalid_params(
                        "unknown or expired requestState; call the tool again without it",
                        None,
                    ));
                };
                let answer = request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get("question"))
                    .map(parse_answer)
                    .unwrap_or(ElicitOutcome::Cancel);
                if let Some(tx) = call.awaiting.take() {
                    let _ = tx.send(answer);
                }
                call
            }
            None => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                let reg = Arc::clone(reg);
                let surface = self.surface;
                let name = request.name.to_string();
                let task = tokio::spawn(QUESTIONS.scope(tx, async move {
                    reg.call_with(surface, &name, args, opts).await
                }));
                PendingCall {
                    task,
                    cancel: tool_cancel,
                    questions: rx,
                    awaiting: None,
                }
            }
        };
        let outcome = tokio::select! {
            r = &mut call.task => Ok(r),
            q = call.questions.recv() => Err(q),
            _ = cancel.cancelled() => {
                call.cancel.cancel();
                let _ = tokio::time::timeout(CANCEL_WIND_DOWN, &mut call.task).await;
                return finish(Err(CallError::Tool(cancelled_error())));
            }
        };
        match outcome {
            Ok(joined) => finish(joined.unwrap_or_else(|e| {
                Err(CallError::Tool(ToolError::internal(format!(
                    "the tool call failed: {e}"
                ))))
            })),
            // The task ended (dropping its question channel) before its result was polled.
            Err(None) => finish((&mut call.task).await.unwrap_or_else(|e| {
                Err(CallError::Tool(ToolError::internal(format!(
                    "the tool call failed: {e}"
                ))))
            })),
            Err(Some(question)) => {
                call.awaiting = Some(question.answer);
                let elicit =
                    rmcp::model::ElicitRequest::new(ElicitRequestParams::FormElicitationParams {
                        meta: None,
                        message: question.message,
                        requested_schema: question.schema,
                    });
                let mut requests = rmcp::model::InputRequests::new();
                requests.insert(
                    "question".to_string(),
                    rmcp::model::InputRequest::Elicitation(elicit),
                );
                let handle = {
                    let mut pending = self.pending.lock().map_err(|_| {
                        McpError::internal_error("pending-call table poisoned", None)
                    })?;
                    pending.next += 1;
                    let handle = format!("call-{}", pending.next);
                    pending.calls.push_back((handle.clone(), call));
                    while pending.calls.len() > MAX_PENDING_CALLS {
                        pending.calls.pop_front();
                    }
                    handle
                };
                Ok(rmcp::model::InputRequiredResult::new(Some(requests), Some(handle)).into())
            }
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        );
        info.server_info.name = "agent-tools".into();
        info.server_info.version = env!("CARGO_PKG_VERSION").into();
        info.instructions = Some(format!(
            "agent-tools ({} surface): language-server queries by line and symbol, structural search and staged \
             rewrite, a debugger, persistent kernels, file tools whose results include new diagnostics.",
            self.surface
        ));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let reg = self.registry_for(&ctx).await?;
        let tools = reg
            .list(self.surface)
            .iter()
            .filter_map(to_mcp_tool)
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let reg = self.registry_for(&ctx).await?;
        // Built once: the arguments move into the call (or its background task).
        let args = request
            .arguments
            .take()
            .map(Value::Object)
            .unwrap_or(Value::Null);
        if tasks::runs_as_task(&request.name)
            && request.request_state.is_none()
            && ctx
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks())
        {
            let cancel = reg.run().cancellation().child_token();
            return Ok(tasks::start(
                &self.tasks,
                Arc::clone(reg),
                self.surface,
                request.name.to_string(),
                args,
                cancel,
            )
            .into());
        }
        let sink = ctx
            .meta
            .get_progress_token()
            .map(|token| PeerProgress::new(ctx.peer.clone(), token));
        let _heartbeat = sink
            .as_ref()
            .map(|s| s.heartbeat(&request.name, self.heartbeat));
        let progress = match sink {
            Some(sink) => Progress::new(sink),
            None => Progress::none(),
        };
        let tool_cancel = reg.run().cancellation().child_token();
        let opts = tools_core::CallOptions {
            progress,
            cancel: Some(tool_cancel.clone()),
            stack: Vec::new(),
        };
        let cancel = ctx.ct.clone();
        let round_trip = ctx
            .protocol_version()
            .is_some_and(|v| is_round_trip_protocol(&v));
        let result = if round_trip {
            return self
                .call_round_trip(reg, request, args, opts, tool_cancel, cancel)
                .await;
        } else {
            let call = reg.call_with(self.surface, &request.name, args, opts);
            tokio::pin!(call);
            tokio::select! {
                r = &mut call => r,
                _ = cancel.cancelled() => {
                    // The tool sees the cancel and stops on its own terms; only a tool that
                    // ignores it is dropped mid-way.
                    tool_cancel.cancel();
                    if tokio::time::timeout(CANCEL_WIND_DOWN, &mut call).await.is_err() {
                        tracing::warn!(tool = %request.name, "a cancelled call did not stop within {CANCEL_WIND_DOWN:?}; dropping it");
                    }
                    Err(CallError::Tool(cancelled_error()))
                }
            }
        };
        finish(result)
    }
    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        self.tasks
            .get_task(&request.task_id)
            .map(rmcp::model::GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel_task(&request.task_id)
    }
}

fn cancelled_error() -> ToolError {
    ToolError::rejected("the client cancelled the call")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_maps_to_text_images_and_structured_content() {
        let mut out = ToolOutput::text("two files").with_structured(json!(["a", "b"]));
        out.images.push(tools_core::Image { png: vec![1, 2, 3] });
        let encoded = serde_json::to_value(to_call_result(Ok(out))).unwrap();
        assert_eq!(
            encoded,
            json!({
                "resultType": "complete",
                "content": [
                    {"type": "text", "text": "two files"},
                    {"type": "image", "data": "AQID", "mimeType": "image/png"},
                ],
                "structuredContent": {"result": ["a", "b"]},
                "isError": false,
            })
        );
        let encoded =
            serde_json::to_value(to_call_result(Err(ToolError::timed_out("too slow")))).unwrap();
        let text = ToolError::timed_out("too slow").to_string();
        assert_eq!(
            encoded,
            json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": text}],
                "structuredContent": {"error": {"kind": "timed_out", "message": text}},
                "isError": true,
            })
        );
    }

    #[test]
    fn a_tool_entry_carries_its_tier_as_annotations_and_meta() {
        let info = |name: &str, tier| tools_core::ToolInfo {
            name: name.into(),
            tier,
            description: "does things".into(),
            input_schema: json!({"type": "object"}),
            parallel_safe: true,
        };
        let entry = |i| serde_json::to_value(to_mcp_tool(&i).unwrap()).unwrap();
        assert_eq!(
            entry(info("write", Tier::Write)),
            json!({
                "name": "write",
                "description": "does things",
                "inputSchema": {"type": "object"},
                "annotations": {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false},
                "_meta": {"agent-tools/tier": "write", "agent-tools/parallelSafe": true},
            })
        );
        assert_eq!(
            entry(info("lsp", Tier::Read))["annotations"],
            json!({"destructiveHint": false, "openWorldHint": true})
        );
        assert_eq!(
            entry(info("ast_grep", Tier::Read))["annotations"],
            json!({"readOnlyHint": true, "destructiveHint": false})
        );
        let mut bad = info("odd", Tier::Read);
        bad.input_schema = json!(true);
        assert!(to_mcp_tool(&bad).is_none());
    }

    #[test]
    fn an_answer_that_is_not_an_elicit_result_cancels() {
        assert!(matches!(
            parse_answer(&json!({"action": "accept", "content": {"x": 1}})),
            ElicitOutcome::Accept(v) if v == json!({"x": 1})
        ));
        assert!(matches!(
            parse_answer(&json!({"action": "decline"})),
            ElicitOutcome::Decline
        ));
        assert!(matches!(
            parse_answer(&json!({"action": "shrug"})),
            ElicitOutcome::Cancel
        ));
        assert!(matches!(parse_answer(&json!(7)), ElicitOutcome::Cancel));
    }
}

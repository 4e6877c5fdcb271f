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
//! The handle is unguessable, good for one answer, bound to the caller and the call, and
//! expires with the question ([`ParkedCalls`] says how). A server that gives each request a
//! run of its own ([`McpServer::with_run_per_request`], sessionless HTTP) shares one table
//! across its handlers, and a waiting call keeps its run open until it ends.
//!
//! ## Tasks only where the protocol defines them
//!
//! A call answers with a task only on a protocol that defines the tasks extension's result
//! (2026-07-28 and later) and only for a client that declared the extension. A client on
//! 2025-11-25 that lists the extension anyway gets the call's own answer, with progress
//! notifications while it runs. A server that gives each request a run of its own shares
//! its task table across handlers, and each task answers only to its caller.

#![deny(clippy::print_stdout)]

mod elicit;
mod parked;
mod progress;
mod results;
mod round_trip;
mod stdio;
mod tasks;

use elicit::{client_elicitor, is_round_trip_protocol};
use parked::CallKey;
pub use parked::{Caller, MAX_PARKED_PER_CALLER, ParkedCalls};
pub use progress::DEFAULT_HEARTBEAT;
use progress::PeerProgress;
pub use results::to_call_result;
use results::{cancelled_error, finish, to_mcp_tool};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::OnceCell;
use tools_core::{CallError, Elicitor, Progress, Registry, Surface, ToolError};

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
    /// Calls waiting on a human's answer (newest protocol); shared by every handler of a
    /// server that gives each request a run of its own.
    parked: Arc<ParkedCalls>,
    /// Each request is served with a run of its own (sessionless HTTP).
    runs_per_request: bool,
    /// This handler's run went to a call waiting on an answer, which closes it.
    handed_off: AtomicBool,
    /// The calls running as tasks (see the `tasks` module).
    tasks: rmcp::task_manager::TaskManager,
}

/// How long a cancelled call is given to stop by itself before it is dropped.
pub const CANCEL_WIND_DOWN: Duration = Duration::from_secs(15);

impl McpServer {
    /// A server for `surface` whose registry `factory` builds on first use.
    pub fn new(surface: Surface, factory: RegistryFactory) -> Self {
        McpServer {
            surface,
            heartbeat: DEFAULT_HEARTBEAT,
            factory,
            registry: Arc::new(OnceCell::new()),
            parked: ParkedCalls::new(),
            runs_per_request: false,
            handed_off: AtomicBool::new(false),
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
            parked: ParkedCalls::new(),
            runs_per_request: false,
            handed_off: AtomicBool::new(false),
            tasks: Default::default(),
        }
    }

    /// Sends a quiet call's client a `still running` progress notification every
    /// `interval` (when it sent a progress token); [`DEFAULT_HEARTBEAT`] otherwise.
    pub fn with_heartbeat(mut self, interval: Duration) -> Self {
        self.heartbeat = interval.max(Duration::from_millis(100));
        self
    }

    /// Serves each request with a run of its own (the embedder builds one handler per
    /// request, as sessionless HTTP does), sharing `parked` with the other handlers: a call
    /// waiting on an answer, or running as a task, keeps its run open until it ends, and a
    /// later request of the same caller finds it there.
    pub fn with_run_per_request(mut self, parked: Arc<ParkedCalls>) -> Self {
        self.tasks = parked.tasks.clone();
        self.parked = parked;
        self.runs_per_request = true;
        self
    }

    /// Whether this handler's run was handed to a call that waits on an answer, which
    /// closes it when it ends: the embedder must then not close it with the handler.
    pub fn run_handed_off(&self) -> bool {
        self.handed_off.load(Ordering::SeqCst)
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
        // Built once: the arguments move into the call (or its background task).
        let args = request
            .arguments
            .take()
            .map(Value::Object)
            .unwrap_or(Value::Null);
        let round_trip = ctx
            .protocol_version()
            .is_some_and(|v| is_round_trip_protocol(&v));
        let key = CallKey {
            caller: round_trip::caller(&ctx),
            tool: request.name.to_string(),
            args,
        };
        if round_trip && let Some(handle) = &request.request_state {
            // The answer goes to the call that asked, in the run it started in.
            return self
                .resume_round_trip(
                    handle,
                    request.input_responses.as_ref(),
                    key,
                    ctx.ct.clone(),
                )
                .await;
        }
        let reg = self.registry_for(&ctx).await?;
        if round_trip
            && tasks::runs_as_task(&request.name)
            && ctx
                .client_capabilities()
                .is_some_and(|caps| caps.supports_tasks())
        {
            let cancel = reg.run().cancellation().child_token();
            // A request's own run stays open for its task, which closes it.
            if self.runs_per_request {
                self.handed_off.store(true, Ordering::SeqCst);
            }
            let created = tasks::start(
                &self.tasks,
                Arc::clone(reg),
                self.surface,
                key.tool,
                key.args,
                cancel,
                self.runs_per_request,
            );
            self.parked.own_task(&created.task.task_id, key.caller);
            return Ok(created.into());
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
        let result = if round_trip {
            return self.start_round_trip(reg, key, opts, cancel).await;
        } else {
            let call = reg.call_with(self.surface, &key.tool, key.args, opts);
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        self.parked
            .check_task(&request.task_id, &round_trip::caller(&ctx))?;
        self.tasks
            .get_task(&request.task_id)
            .map(rmcp::model::GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.parked
            .check_task(&request.task_id, &round_trip::caller(&ctx))?;
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.parked
            .check_task(&request.task_id, &round_trip::caller(&ctx))?;
        self.tasks.cancel_task(&request.task_id)
    }
}

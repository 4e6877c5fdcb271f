//! One MCP session's handler: the stdio server's [`McpServer`] over a run of its own, closed
//! when the session ends.
//!
//! rmcp builds one handler per session (and one per request on the sessionless protocol, and
//! throw-away ones to look up tool schemas), so building must be cheap: the run is only opened
//! on the session's first `tools/list` or `tools/call`, exactly as on stdio. When rmcp drops
//! the handler — the client deleted the session, it sat idle past the timeout, or the server
//! is stopping — the run is closed, which stops its servers and kills every child process.
//!
//! The newest protocol has no sessions, so a run cannot outlive one request there; it is
//! offered only when the operator asks for it (`sessionless`), since kernels, debug sessions
//! and staged edits would not persist from one call to the next. The exceptions are a call
//! waiting on a human's answer, which keeps its run until the client's retry completes it or
//! its question expires, and a call running as a task, which keeps it until the call ends
//! ([`tools_mcp::ParkedCalls`], shared by every handler of the server; both answer only to
//! the caller that started them).
//!
//! Every call is counted for `/metrics`, shown on the status page while it runs and after
//! (tool, duration, outcome, an error's first line; see `status::board`) and logged as two events, `call started` and `call
//! ended` (session, request id, tool, duration, outcome) — never its arguments: they hold
//! the user's code and data.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    GetTaskParams, GetTaskResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerConfig, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use tools_core::{Run, Surface};
use tools_mcp::{Caller, McpServer, ParkedCalls, RegistryFactory};

use crate::metrics::{Metrics, Outcome};
use crate::status::board::Board;

/// The runs that are open, across all sessions of the server.
#[derive(Debug, Default)]
pub(crate) struct OpenRuns {
    count: AtomicUsize,
    runs: Mutex<Vec<Weak<Run>>>,
}

impl OpenRuns {
    /// How many runs are open now.
    pub(crate) fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// Child processes of every open run.
    pub(crate) fn children(&self) -> usize {
        let Ok(mut runs) = self.runs.lock() else {
            return 0;
        };
        runs.retain(|r| r.upgrade().is_some_and(|r| !r.is_closed()));
        runs.iter()
            .filter_map(Weak::upgrade)
            .map(|r| r.child_count())
            .sum()
    }

    fn add(&self, run: &Arc<Run>) {
        self.count.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut runs) = self.runs.lock() {
            runs.push(Arc::downgrade(run));
        }
    }
}

/// Where every call is told of: `/metrics`' counters and the status page's board.
#[derive(Clone)]
pub(crate) struct CallWatch {
    pub(crate) metrics: Arc<Metrics>,
    pub(crate) board: Arc<Board>,
}

/// The handler rmcp runs for one session.
pub(crate) struct SessionHandler {
    server: McpServer,
    open_runs: Arc<OpenRuns>,
    watch: CallWatch,
    counted: std::sync::atomic::AtomicBool,
    sessionless: bool,
    /// The session id, learnt from the first request that names it (for the logs).
    session: OnceLock<String>,
}

impl SessionHandler {
    /// A handler for `surface` whose run `factory` opens on first use. With `sessionless`,
    /// the newest protocol (no sessions; a run per request) is offered besides the
    /// handshake versions. A quiet call is reported still running every `heartbeat`. A
    /// sessionless call's question waits in `parked`. Calls are told to `watch`.
    pub(crate) fn new(
        surface: Surface,
        factory: RegistryFactory,
        open_runs: Arc<OpenRuns>,
        watch: CallWatch,
        sessionless: bool,
        heartbeat: std::time::Duration,
        parked: Arc<ParkedCalls>,
    ) -> Self {
        SessionHandler {
            // Every round-trip call here is a sessionless request's, with a run of its own.
            server: McpServer::new(surface, factory)
                .with_heartbeat(heartbeat)
                .with_run_per_request(parked),
            open_runs,
            watch,
            counted: Default::default(),
            sessionless,
            session: OnceLock::new(),
        }
    }

    /// Notes that this session's run is open (once), and which session it serves.
    fn note_open(&self, ctx: &RequestContext<RoleServer>) {
        if self.session.get().is_none()
            && let Some(id) = session_id(ctx)
        {
            let _ = self.session.set(id);
        }
        if let Some(registry) = self.server.registry()
            && !self.counted.swap(true, Ordering::SeqCst)
        {
            self.open_runs.add(registry.run());
            if let Some(id) = self.session.get() {
                self.watch
                    .board
                    .session_run(id, registry.run().conversation_id());
            }
        }
    }

    fn session(&self) -> &str {
        self.session.get().map_or("-", String::as_str)
    }

    /// The tool's name as a metric label: a client cannot invent label values.
    fn tool_label(&self, name: &str) -> String {
        let known = self
            .server
            .registry()
            .is_some_and(|r| r.list(Surface::FULL).iter().any(|t| t.name == name));
        if known {
            name.to_string()
        } else {
            "(unknown)".to_string()
        }
    }
}

/// The MCP session id of the HTTP request behind `ctx`, if it names one.
fn session_id(ctx: &RequestContext<RoleServer>) -> Option<String> {
    let parts = ctx.extensions.get::<axum::http::request::Parts>()?;
    let id = parts.headers.get("mcp-session-id")?.to_str().ok()?;
    Some(id.chars().take(64).collect())
}

impl Drop for SessionHandler {
    fn drop(&mut self) {
        let Some(registry) = self.server.registry().cloned() else {
            return;
        };
        if self.counted.load(Ordering::SeqCst) {
            self.open_runs.count.fetch_sub(1, Ordering::SeqCst);
        }
        if self.server.run_handed_off() {
            // A call waiting on an answer holds the run and closes it when it ends.
            tracing::debug!(
                run = registry.run().conversation_id(),
                "a request's run stays open for its call's question"
            );
            return;
        }
        tracing::info!(
            session = self.session(),
            run = registry.run().conversation_id(),
            "session closed"
        );
        // Closing waits for servers to shut down; the run's own Drop still kills the
        // process groups should the runtime stop before this finishes.
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(async move {
                    registry.run().close().await;
                    tracing::debug!("a session's run is closed");
                });
            }
            Err(_) => drop(registry),
        }
    }
}

impl ServerHandler for SessionHandler {
    fn get_info(&self) -> ServerConfig {
        self.server.get_info()
    }

    /// Without `sessionless`, only the handshake versions: a client that would pick the
    /// newest protocol falls back to a session, so its kernels and staged edits persist
    /// from call to call.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        if self.sessionless {
            Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
        } else {
            Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
        }
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let result = self.server.list_tools(request, ctx.clone()).await;
        self.note_open(&ctx);
        result
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        self.server.get_task(request, with_caller(ctx)).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.server.update_task(request, with_caller(ctx)).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.server.cancel_task(request, with_caller(ctx)).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let mut ctx = with_caller(ctx);
        if let Some(id) = session_id(&ctx) {
            let _ = self.session.set(id);
        }
        // The status page cancels the call through a token of its own, below the client's:
        // a cancel from the page stops the call as the client's would, and the client
        // still gets its answer (saying so).
        let client_cancel = ctx.ct.clone();
        let page_cancel = ctx.ct.child_token();
        ctx.ct = page_cancel.clone();
        // The name as the client sent it is not trusted in a log line either.
        let name: String = request.name.chars().take(64).collect();
        let shown = self.tool_label(&name);
        let shown = if shown == "(unknown)" && self.server.registry().is_none() {
            // Before the run is open no name is known yet; a tool's name is letters,
            // digits and `_`, so nothing else is shown.
            name.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .collect()
        } else {
            shown
        };
        let mut record = CallRecord {
            handler: self,
            started: Instant::now(),
            call: ctx.id.to_string(),
            board_id: self
                .watch
                .board
                .call_started(&shown, self.session(), page_cancel.clone()),
            name,
            outcome: Outcome::Abandoned,
            error: None,
        };
        tracing::info!(
            session = self.session(),
            call = record.call,
            tool = record.name,
            "call started"
        );
        let mut result = self.server.call_tool(request, ctx.clone()).await;
        self.note_open(&ctx);
        if page_cancel.is_cancelled() && !client_cancel.is_cancelled() {
            result = Ok(operator_cancelled().into());
        }
        record.outcome = match &result {
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
                record.error = Some(
                    r.content
                        .iter()
                        .find_map(|c| c.as_text().map(|t| t.text.clone()))
                        .unwrap_or_default(),
                );
                Outcome::Error
            }
            Ok(CallToolResponse::Complete(_)) => Outcome::Ok,
            Ok(_) => Outcome::InputRequired,
            Err(e) => {
                record.error = Some(e.message.to_string());
                Outcome::ProtocolError
            }
        };
        result
    }
}

/// The answer of a call the operator cancelled from the status page: the agent reads that
/// it was not its client that gave up.
fn operator_cancelled() -> CallToolResult {
    let e = tools_core::ToolError::rejected(
        "the server's operator cancelled the call from its status page",
    );
    let mut result = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
    result.structured_content = Some(serde_json::json!({
        "error": {"kind": e.kind(), "message": e.to_string()}
    }));
    result
}

/// `ctx` with the caller the front named on the HTTP request, where the MCP server binds
/// questions and tasks to it.
fn with_caller(mut ctx: RequestContext<RoleServer>) -> RequestContext<RoleServer> {
    let caller = ctx
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned();
    if let Some(caller) = caller {
        ctx.extensions.insert(caller);
    }
    ctx
}

/// One call being answered: counted and logged when it ends, also when its future is
/// dropped before it answered (then as abandoned).
struct CallRecord<'a> {
    handler: &'a SessionHandler,
    started: Instant,
    call: String,
    /// The call's id on the status board.
    board_id: u64,
    name: String,
    outcome: Outcome,
    /// The error's text, when it failed (the board keeps its first line).
    error: Option<String>,
}

impl Drop for CallRecord<'_> {
    fn drop(&mut self) {
        let took = self.started.elapsed();
        let tool = self.handler.tool_label(&self.name);
        self.handler.watch.metrics.call(&tool, self.outcome, took);
        self.handler.watch.board.call_ended(
            self.board_id,
            &tool,
            self.outcome,
            took,
            self.error.as_deref(),
        );
        tracing::info!(
            session = self.handler.session(),
            call = self.call,
            tool = self.name,
            duration_ms = took.as_secs_f64() * 1000.0,
            outcome = self.outcome.as_str(),
            "call ended"
        );
    }
}

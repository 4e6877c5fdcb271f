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
//! and staged edits would not persist from one call to the next.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData as McpError, ServerHandler};
use tools_core::Surface;
use tools_mcp::{McpServer, RegistryFactory};

/// Counts the runs that are open, across all sessions of the server.
#[derive(Debug, Default)]
pub struct OpenRuns(AtomicUsize);

impl OpenRuns {
    /// How many runs are open now.
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// The handler rmcp runs for one session.
pub struct SessionHandler {
    server: McpServer,
    open_runs: Arc<OpenRuns>,
    counted: std::sync::atomic::AtomicBool,
    sessionless: bool,
}

impl SessionHandler {
    /// A handler for `surface` whose run `factory` opens on first use. With `sessionless`,
    /// the newest protocol (no sessions; a run per request) is offered besides the
    /// handshake versions.
    pub fn new(
        surface: Surface,
        factory: RegistryFactory,
        open_runs: Arc<OpenRuns>,
        sessionless: bool,
    ) -> Self {
        SessionHandler {
            server: McpServer::new(surface, factory),
            open_runs,
            counted: Default::default(),
            sessionless,
        }
    }

    /// Notes that this session's run is open (once).
    fn note_open(&self) {
        if self.server.registry().is_some() && !self.counted.swap(true, Ordering::SeqCst) {
            self.open_runs.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Drop for SessionHandler {
    fn drop(&mut self) {
        let Some(registry) = self.server.registry().cloned() else {
            return;
        };
        if self.counted.load(Ordering::SeqCst) {
            self.open_runs.0.fetch_sub(1, Ordering::SeqCst);
        }
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
        let result = self.server.list_tools(request, ctx).await;
        self.note_open();
        result
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let result = self.server.call_tool(request, ctx).await;
        self.note_open();
        result
    }
}

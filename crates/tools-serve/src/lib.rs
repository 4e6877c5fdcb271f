//! # tools-serve
//!
//! Serves agent-tools to many MCP clients at once over streamable HTTP (rmcp's server
//! transport). What it is for: agent platforms, parallel agents on one machine, remote MCP
//! clients. What it is not: the tools themselves or the MCP mapping of a run — every session
//! is served by `tools-mcp`'s [`tools_mcp::McpServer`] over a run the embedder's
//! [`RunFactory`] opens, the same code path as `agent-tools mcp` on stdio.
//!
//! - **One run per session.** Each MCP session (protocol versions with sessions) gets its own
//!   run — kernels, debug session, staged edits, ledger, language servers. On the newest
//!   protocol, which has no sessions, each request gets a run of its own that ends with it;
//!   that protocol is offered only on request (`sessionless`), since state would not persist.
//!   A question a sessionless call asks (`ask_user`) waits server-wide under a handle bound
//!   to the caller's credential, so the client's retry with the answer reaches it
//!   ([`tools_mcp::ParkedCalls`]).
//!   A run closes when its session is deleted, sits idle past the idle timeout (a call still
//!   being answered is not idleness), or the server stops.
//! - **Workspaces.** One workspace at `/mcp`, or several at `/w/NAME/mcp`.
//! - **Limits.** At most `max_sessions` sessions; one more is refused at once with HTTP 503
//!   and a JSON-RPC error saying so. The child-process cap of each session's run is the
//!   embedder's [`RunFactory`]'s to set (`tools_core::Run::limit_children`).
//! - **Stopping.** When the shutdown future resolves the server drains: new requests get
//!   HTTP 503, calls under way get up to `grace` to finish, then every session's run is
//!   closed (every child process killed).
//! - **Authorization** ([`AuthSettings`]): a static bearer token and/or OAuth 2.1 access tokens (JWT
//!   checked against a JWKS), with RFC 9728 metadata at
//!   `/.well-known/oauth-protected-resource`. Listening beyond loopback without it is refused.
//!   A session is bound to the credential and workspace that opened it.
//! - **Warm runs** (`warm`): runs opened ahead per workspace; a new session takes one and a
//!   replacement opens in the background (the `warm` module says what is and is not warmed).
//! - **Metrics.** `/metrics` in the Prometheus text format (sessions, calls by tool and
//!   outcome, call latency, runs, warm runs, child processes, memory), behind the same
//!   credentials as `/mcp` unless `metrics_public`.
//! - **Status page** (`status`, the `status` module): `/status` and `/status.json` show an
//!   operator the sessions, shared language servers, running and recent calls, behind the
//!   credentials of `/mcp`; a running call can be cancelled from it.
//! - **Origins** (the `origin` module): a request carrying an `Origin` header is served only
//!   when it is the server's own or listed in `allow_origins`; anything else gets 403.
//! - **Sessions required.** A request of a handshake-era protocol (2025-11-25 and before)
//!   without a session id is refused with HTTP 400 and a JSON-RPC error naming the missing
//!   `Mcp-Session-Id`, instead of being served by a run that would be thrown away with it.
//! - **Probes.** `/healthz` (the process serves), `/readyz` (it can serve its sessions: the
//!   warm runs were opened, not stopping; a server at its session limit stays ready) and
//!   `/accepting` (a new session would be accepted: ready and below the session limit).
//! - **Behind a router** that drops `Authorization` ([`ServeOptions::credential_header`]) and
//!   on pods started ahead of their session ([`CheckoutSettings`]: the first session names
//!   the repository and ref checked out before it is served).

mod auth;
mod checkout;
mod http;
mod idle;
mod jwks_url;
mod memory;
mod metrics;
mod origin;
mod session;
mod status;
mod warm;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tools_core::{Surface, ToolError};
use tools_mcp::RegistryFactory;

pub use auth::{AuthSettings, JwksSource, OAuthSettings, read_token_file};
pub use checkout::{CheckoutSettings, REF_HEADER, REPOSITORY_HEADER};
pub use status::report::{
    EndedRow, LanguageServerRow, RunningRow, ServerFacts, SessionRow, StatusReport, ToolTimes,
};
pub use status::{LanguageServers, PooledServer, ServerState};
pub use warm::WarmAhead;

/// Opens the registry factory for one session of a workspace (the embedder's way to build a
/// run, e.g. the facade's `Toolbox`).
pub type RunFactory = Arc<dyn Fn(&ServedWorkspace) -> RegistryFactory + Send + Sync>;

/// One workspace the server serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedWorkspace {
    /// Its name in the URL (`/w/NAME/mcp`), or `None` for the single workspace at `/mcp`.
    pub name: Option<String>,
    /// The workspace root.
    pub root: PathBuf,
    /// The operator trusts this workspace (`--trust`): its configuration may name programs
    /// and its own binaries, interpreters and build scripts may run in every session's run.
    pub trusted: bool,
}

impl ServedWorkspace {
    /// The MCP endpoint's path.
    pub fn path(&self) -> String {
        match &self.name {
            Some(n) => format!("/w/{n}/mcp"),
            None => "/mcp".into(),
        }
    }
}

/// Everything `serve` needs.
pub struct ServeOptions {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The workspaces; names must be unique, and a nameless one stands alone.
    pub workspaces: Vec<ServedWorkspace>,
    /// The strongest surface any session gets (a token's scopes can only lower it).
    pub surface: Surface,
    /// Sessions open at once, at most.
    pub max_sessions: usize,
    /// A session with no message for this long is closed, with its run.
    pub idle_timeout: Duration,
    /// Also offer the newest protocol, which has no sessions: each of its requests gets a
    /// run of its own, closed when the request ends.
    pub sessionless: bool,
    /// Credentials required of every client.
    pub auth: AuthSettings,
    /// A header read for the client's credential before `Authorization` (`Bearer TOKEN` or
    /// a bare token), for routers that consume `Authorization` and drop it.
    pub credential_header: Option<String>,
    /// Check out the first session's repository into the (single) workspace root before
    /// serving it.
    pub checkout: Option<CheckoutSettings>,
    /// A call that reports no progress for this long sends its client (when it gave a
    /// progress token) a `still running` notification.
    pub heartbeat: Duration,
    /// `/metrics` answers without credentials (else it asks for those of `/mcp`).
    pub metrics_public: bool,
    /// Runs kept opened ahead per workspace (for each kind of client: with and without
    /// elicitation), so a new session's first call does not wait for one to open.
    pub warm: usize,
    /// What every warm run starts before a session takes it (language servers, kernels),
    /// so the session's first `lsp` or `eval` call finds them up.
    pub warm_ahead: WarmAhead,
    /// On stop, how long calls under way may take to finish before every session is
    /// closed; new requests are refused with 503 meanwhile.
    pub grace: Duration,
    /// Origins besides the server's own whose requests are served (`--allow-origin`,
    /// `http://host:port`); a request from any other origin gets HTTP 403.
    pub allow_origins: Vec<String>,
    /// Serve the operator's status page (`/status`, `/status.json`), behind the
    /// credentials of `/mcp` whatever `metrics_public` says.
    pub status: bool,
    /// Lists the language servers shared by the sessions, for the status page.
    pub language_servers: Option<LanguageServers>,
    /// Opens a session's run.
    pub run_factory: RunFactory,
    /// How many child processes the embedder keeps for all sessions together (language
    /// servers shared by the sessions' runs): counted in `/metrics` beside the runs' own.
    pub shared_children: Option<SharedChildren>,
}

/// Counts the child processes kept across sessions (see [`ServeOptions::shared_children`]).
pub type SharedChildren = Arc<dyn Fn() -> usize + Send + Sync>;

impl ServeOptions {
    /// Options with the defaults of `agent-tools serve`: the full surface, 32 sessions, a
    /// 30-minute idle timeout, session protocols only, no credentials.
    pub fn new(
        addr: SocketAddr,
        workspaces: Vec<ServedWorkspace>,
        run_factory: RunFactory,
    ) -> Self {
        ServeOptions {
            addr,
            workspaces,
            surface: Surface::FULL,
            max_sessions: 32,
            idle_timeout: Duration::from_secs(1800),
            sessionless: false,
            auth: AuthSettings::default(),
            credential_header: None,
            checkout: None,
            grace: Duration::from_secs(30),
            warm: 0,
            warm_ahead: WarmAhead::default(),
            heartbeat: tools_mcp::DEFAULT_HEARTBEAT,
            metrics_public: false,
            allow_origins: Vec::new(),
            status: false,
            language_servers: None,
            run_factory,
            shared_children: None,
        }
    }
}

/// A server that is bound and ready to serve.
pub struct BoundServer {
    grace: Duration,
    listener: tokio::net::TcpListener,
    app: axum::Router,
    state: Arc<http::AppState>,
}

impl BoundServer {
    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, ToolError> {
        self.listener
            .local_addr()
            .map_err(|e| ToolError::internal(format!("no local address: {e}")))
    }

    /// A token that, cancelled, ends the drain at once: calls still under way are given up
    /// and every run closed (for a second SIGTERM or SIGINT from an impatient operator).
    pub fn drain_cutter(&self) -> tokio_util::sync::CancellationToken {
        self.state.cut_drain.clone()
    }

    /// Serves until `shutdown` completes, drains (new requests refused with 503, calls under
    /// way given up to the grace period), then closes every session's run.
    pub async fn run(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), ToolError> {
        let state = Arc::clone(&self.state);
        let drain_state = Arc::clone(&self.state);
        let grace = self.grace;
        // Until the drain ends the listener keeps accepting, so new requests are answered
        // with 503 instead of a refused connection.
        // Answers are small and written in pieces (headers, then SSE events); with Nagle's
        // algorithm each would wait for the client's delayed ACK, about 40 ms a call.
        let listener = axum::serve::ListenerExt::tap_io(self.listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("TCP_NODELAY not set: {e}");
            }
        });
        let served = axum::serve(listener, self.app).with_graceful_shutdown(async move {
            shutdown.await;
            drain_state.drain(grace).await;
            drain_state.cancel.cancel();
        });
        let result = served
            .await
            .map_err(|e| ToolError::internal(format!("the HTTP server failed: {e}")));
        state.close_all().await;
        result
    }
}

/// Checks the options and binds the address. Refuses to listen beyond loopback without
/// authorization.
pub async fn bind(opts: ServeOptions) -> Result<BoundServer, ToolError> {
    if !opts.addr.ip().is_loopback() && !opts.auth.required() {
        return Err(ToolError::invalid(
            "--http",
            format!(
                "{} is reachable from other machines; serving it needs authorization \
                 (--token-file, or --jwks-file or --jwks-url with --issuer and --resource). \
                 Listen on 127.0.0.1 to serve this machine alone without it.",
                opts.addr
            ),
        ));
    }
    if opts.workspaces.is_empty() {
        return Err(ToolError::invalid("--workspace", "no workspace to serve"));
    }
    if opts.max_sessions == 0 {
        return Err(ToolError::invalid(
            "--max-sessions",
            "must allow at least one session",
        ));
    }
    for (i, w) in opts.workspaces.iter().enumerate() {
        tools_core::Workspace::new(&w.root)?;
        if opts.workspaces[..i].iter().any(|o| o.path() == w.path()) {
            return Err(ToolError::invalid(
                "--workspace",
                format!("{} is served twice", w.path()),
            ));
        }
        if let Some(name) = &w.name
            && (name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
        {
            return Err(ToolError::invalid(
                "--workspace",
                format!("`{name}` is not a usable name (letters, digits, `-`, `_`, `.`)"),
            ));
        }
    }
    let listener = tokio::net::TcpListener::bind(opts.addr)
        .await
        .map_err(|e| ToolError::not_available(format!("cannot listen on {}: {e}", opts.addr)))?;
    let grace = opts.grace;
    // The origin check compares with the port actually bound (port 0 picks one).
    let mut opts = opts;
    opts.addr = listener
        .local_addr()
        .map_err(|e| ToolError::internal(format!("no local address: {e}")))?;
    let (app, state) = http::app(opts)?;
    state.auth.fetch_keys_now().await?;
    Ok(BoundServer {
        grace,
        listener,
        app,
        state,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tools_core::{RegistryBuilder, Run, RunOptions};

    fn empty_runs() -> RunFactory {
        Arc::new(|ws: &ServedWorkspace| {
            let root = ws.root.clone();
            let factory: RegistryFactory = Arc::new(move |_| {
                let root = root.clone();
                Box::pin(async move {
                    let run = Run::new(RunOptions::at(&root)?)?;
                    RegistryBuilder::new(run).build()
                })
            });
            factory
        })
    }

    fn options(addr: &str, root: &std::path::Path) -> ServeOptions {
        let mut opts = ServeOptions::new(
            addr.parse().unwrap(),
            vec![ServedWorkspace {
                name: None,
                root: root.into(),
                trusted: false,
            }],
            empty_runs(),
        );
        opts.max_sessions = 4;
        opts
    }

    #[tokio::test]
    async fn beyond_loopback_without_authorization_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = bind(options("0.0.0.0:0", dir.path())).await.err().unwrap();
        assert!(err.to_string().contains("needs authorization"), "{err}");
        let mut opts = options("0.0.0.0:0", dir.path());
        opts.auth.static_token = Some("a-long-enough-static-token".into());
        // Bound but never served: nothing is sent to this listener.
        assert!(bind(opts).await.is_ok());
    }

    #[tokio::test]
    async fn workspaces_must_be_distinct_and_well_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = options("127.0.0.1:0", dir.path());
        let named = |n: &str| ServedWorkspace {
            name: Some(n.into()),
            root: dir.path().into(),
            trusted: false,
        };
        opts.workspaces = vec![named("a"), named("a")];
        let err = bind(opts).await.err().unwrap();
        assert!(err.to_string().contains("served twice"), "{err}");
        let mut opts = options("127.0.0.1:0", dir.path());
        opts.workspaces = vec![named("../x")];
        let err = bind(opts).await.err().unwrap();
        assert!(err.to_string().contains("not a usable name"), "{err}");
        let mut opts = options("127.0.0.1:0", dir.path());
        opts.max_sessions = 0;
        assert!(bind(opts).await.is_err());
    }
}

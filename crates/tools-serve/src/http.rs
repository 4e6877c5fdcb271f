//! The HTTP front: routes, the checks every MCP request passes before rmcp's transport sees
//! it (origin, credential, session ownership, a session id where the protocol has sessions,
//! session limit), probes and the RFC 9728 metadata.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::model::ProtocolVersion;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tools_core::{Surface, ToolError};
use tools_mcp::{Caller, ParkedCalls};

use crate::auth::{Authenticator, Principal, Refusal, SCOPES, surface_rank};
use crate::checkout::WorkspaceCheckout;
use crate::idle::{Activity, Answering, BusyBody};
use crate::memory::FreedMemory;
use crate::metrics::{Gauges, Metrics};
use crate::origin::{self, OriginPolicy};
use crate::session::{CallWatch, OpenRuns, SessionHandler};
use crate::status::LanguageServers;
use crate::status::board::{Board, SessionFacts};
use crate::warm::WarmPool;
use crate::{ServeOptions, ServedWorkspace};

mod credential;
mod probes;
mod status;

type McpService = StreamableHttpService<SessionHandler, LocalSessionManager>;

/// The largest request body read (rmcp's own default bound).
const MAX_PEEKED_BODY: usize = 4 * 1024 * 1024;
/// The header rmcp uses for session ids.
const SESSION_HEADER: &str = "mcp-session-id";

/// One MCP endpoint: a workspace, with a service per surface a credential may grant.
struct Endpoint {
    workspace: ServedWorkspace,
    services: Vec<(Surface, McpService)>,
}

/// Who opened a session, where: later requests naming it must match.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SessionOwner {
    path: String,
    principal: Principal,
}

/// The state every request handler shares.
pub(crate) struct AppState {
    endpoints: HashMap<String, Endpoint>,
    sessions: Arc<LocalSessionManager>,
    owners: std::sync::Mutex<HashMap<String, SessionOwner>>,
    /// Serialises session creation so the limit cannot be overshot by a burst.
    opening: tokio::sync::Mutex<()>,
    pub(crate) auth: Authenticator,
    /// Read for the credential before `Authorization` (see `credential`).
    credential_header: Option<axum::http::HeaderName>,
    /// The checkout a first session asks for, when the server does them.
    checkout: Option<WorkspaceCheckout>,
    surface: Surface,
    max_sessions: usize,
    open_runs: Arc<OpenRuns>,
    activity: Arc<Activity>,
    /// The warm runs of each workspace.
    pools: Vec<Arc<WarmPool>>,
    /// Child processes the embedder keeps for all sessions (shared language servers).
    shared_children: Option<crate::SharedChildren>,
    metrics: Arc<Metrics>,
    /// `/metrics` answers without credentials.
    metrics_public: bool,
    /// Sessions, calls running and ended, for the status page.
    pub(crate) board: Arc<Board>,
    /// The language servers shared by the sessions, for the status page.
    language_servers: Option<LanguageServers>,
    /// Requests being answered, for the drain on stop.
    answering: Arc<Answering>,
    /// Whether closed sessions left memory to hand back (see `memory`).
    freed: FreedMemory,
    /// Cancelled when a stop begins: new requests are refused from then on while those
    /// under way finish (up to the grace period).
    pub(crate) draining: CancellationToken,
    /// Cancelled to end a drain at once (a second signal).
    pub(crate) cut_drain: CancellationToken,
    /// Cancelled when the server stops: rmcp then ends every session.
    pub(crate) cancel: CancellationToken,
}

/// Builds the router and its state.
pub(crate) fn app(opts: ServeOptions) -> Result<(Router, Arc<AppState>), ToolError> {
    let cancel = CancellationToken::new();
    let mut manager = LocalSessionManager::default();
    // Idle sessions are closed by `reap_idle`, which, unlike rmcp's keep-alive, does not
    // count a long call as idleness.
    manager.session_config.keep_alive = None;
    let sessions = Arc::new(manager);
    let open_runs = Arc::new(OpenRuns::default());
    let metrics = Arc::new(Metrics::default());
    let board = Arc::new(Board::new(opts.auth.static_token.as_deref()));
    let sessionless = opts.sessionless;
    let heartbeat = opts.heartbeat;
    let origins = Arc::new(OriginPolicy::new(opts.addr, &opts.allow_origins)?);
    // Questions of sessionless calls wait here, where the retry's own handler finds them.
    let parked = ParkedCalls::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cancel.child_token())
        .with_sse_keep_alive(Some(Duration::from_secs(15)));
    if !opts.addr.ip().is_loopback() {
        // Host checks guard loopback servers against DNS rebinding; a server reachable
        // from elsewhere is reached under names we cannot know, and its bearer
        // credential is what protects it.
        config = config.disable_allowed_hosts();
    }
    let mut endpoints = HashMap::new();
    let mut pools = Vec::new();
    for workspace in &opts.workspaces {
        let pool = WarmPool::start(
            opts.warm,
            opts.warm_ahead.clone(),
            (opts.run_factory)(workspace),
            cancel.clone(),
        );
        pools.push(Arc::clone(&pool));
        let mut services = Vec::new();
        for surface in Surface::ALL {
            if surface_rank(surface) > surface_rank(opts.surface) {
                continue;
            }
            let pool = Arc::clone(&pool);
            let runs = Arc::clone(&open_runs);
            let counters = Arc::clone(&metrics);
            let board = Arc::clone(&board);
            let parked = Arc::clone(&parked);
            let service = StreamableHttpService::new(
                move || {
                    Ok(SessionHandler::new(
                        surface,
                        pool.factory(),
                        Arc::clone(&runs),
                        CallWatch {
                            metrics: Arc::clone(&counters),
                            board: Arc::clone(&board),
                        },
                        sessionless,
                        heartbeat,
                        Arc::clone(&parked),
                    ))
                },
                Arc::clone(&sessions),
                config.clone(),
            );
            services.push((surface, service));
        }
        endpoints.insert(
            workspace.path(),
            Endpoint {
                workspace: workspace.clone(),
                services,
            },
        );
    }
    let credential_header = opts
        .credential_header
        .as_deref()
        .map(credential::parse_header_name)
        .transpose()
        .map_err(|e| ToolError::invalid("--auth-header", e))?;
    let checkout = match (opts.checkout, opts.workspaces.as_slice()) {
        (None, _) => None,
        (Some(settings), [only]) if only.name.is_none() => {
            Some(WorkspaceCheckout::new(settings, &only.root)?)
        }
        (Some(_), _) => {
            return Err(ToolError::invalid(
                "--checkout-allow",
                "checks out into the one workspace served with --root, not into --workspace NAME=DIR",
            ));
        }
    };
    let state = Arc::new(AppState {
        endpoints,
        sessions,
        owners: Default::default(),
        opening: Default::default(),
        auth: Authenticator::new(opts.auth)?,
        credential_header,
        checkout,
        surface: opts.surface,
        max_sessions: opts.max_sessions,
        open_runs,
        activity: Arc::new(Activity::default()),
        pools,
        shared_children: opts.shared_children.clone(),
        metrics,
        metrics_public: opts.metrics_public,
        board,
        language_servers: opts.language_servers.clone(),
        answering: Arc::new(Answering::default()),
        freed: FreedMemory::default(),
        draining: CancellationToken::new(),
        cut_drain: CancellationToken::new(),
        cancel,
    });
    tokio::spawn(reap_idle(Arc::clone(&state), opts.idle_timeout));
    let mut router = Router::new();
    if opts.status {
        router = router
            .route("/status", get(status::page))
            .route("/status.json", get(status::json))
            .route(
                "/status/calls/{id}/cancel",
                axum::routing::post(status::cancel),
            );
    }
    let router = router
        .route("/healthz", get(probes::healthz))
        .route("/readyz", get(probes::readyz))
        .route("/accepting", get(probes::accepting))
        .route("/metrics", get(metrics_text))
        .route(
            "/.well-known/oauth-protected-resource",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-protected-resource/{*rest}",
            get(resource_metadata),
        )
        .fallback(mcp_entry)
        .with_state(Arc::clone(&state))
        // Outermost: a foreign origin is refused before anything else looks at the request.
        .layer(axum::middleware::from_fn_with_state(origins, origin::check));
    Ok((router, state))
}

impl AppState {
    /// The ids of the sessions the transport holds open now.
    pub(crate) async fn live_session_ids(&self) -> Vec<String> {
        self.sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|k| k.to_string())
            .collect()
    }

    async fn session_count(&self) -> usize {
        self.sessions.sessions.read().await.len()
    }

    /// Closes a session (its run closes when rmcp drops its handler) and forgets it.
    async fn close_session(&self, id: &str) {
        let _ = self.sessions.close_session(&id.to_string().into()).await;
        self.activity.forget(id);
        self.board.session_closed(id);
        self.freed.session_closed();
        if let Ok(mut owners) = self.owners.lock() {
            owners.remove(id);
        }
    }

    /// Child processes of open and warm runs, and those the embedder shares.
    fn children(&self) -> usize {
        self.open_runs.children()
            + self.pools.iter().map(|p| p.children()).sum::<usize>()
            + self.shared_children.as_ref().map_or(0, |count| count())
    }

    fn owner(&self, id: &str) -> Option<SessionOwner> {
        self.owners.lock().ok()?.get(id).cloned()
    }

    /// Refuses new requests from now on and waits until no request is being answered, or
    /// `grace` has passed; says which.
    pub(crate) async fn drain(&self, grace: Duration) -> bool {
        self.draining.cancel();
        let deadline = tokio::time::Instant::now() + grace;
        let busy = self.answering.count();
        if busy > 0 {
            tracing::info!(
                calls = busy,
                grace_s = grace.as_secs_f64(),
                "stopping: waiting for the calls under way"
            );
        }
        while self.answering.count() > 0 {
            if self.cut_drain.is_cancelled() {
                tracing::warn!(
                    calls = self.answering.count(),
                    "stopping now: the drain was cut short"
                );
                return false;
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(
                    calls = self.answering.count(),
                    "stopping: the grace period ended with calls still under way"
                );
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }

    /// Ends every session and waits (bounded) for their runs to close.
    pub(crate) async fn close_all(&self) {
        self.cancel.cancel();
        let ids: Vec<_> = self
            .sessions
            .sessions
            .read()
            .await
            .keys()
            .cloned()
            .collect();
        for id in ids {
            let _ = self.sessions.close_session(&id).await;
        }
        for pool in &self.pools {
            pool.close().await;
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.open_runs.count() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Closes the sessions that sat idle past the timeout, and hands back what closed sessions
/// freed once nothing is being answered, until the server stops.
async fn reap_idle(state: Arc<AppState>, timeout: Duration) {
    let tick = (timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = state.cancel.cancelled() => return,
            _ = tokio::time::sleep(tick) => {}
        }
        for id in state.activity.idle(timeout) {
            tracing::info!(session = id, "closing an idle session");
            state.close_session(&id).await;
        }
        if state.freed.return_if_quiet(state.answering.count()) {
            tracing::debug!("returned the memory closed sessions freed");
        }
    }
}

/// `/metrics`: behind the same credentials as the MCP endpoints unless public.
async fn metrics_text(State(state): State<Arc<AppState>>, request: Request) -> Response {
    if !state.metrics_public {
        let authorization = match credential::presented(&state, request.headers()) {
            Ok(a) => a,
            Err(refusal) => return refusal_response(&state, &refusal),
        };
        if let Err(refusal) = state
            .auth
            .authenticate(authorization.as_deref(), state.surface)
            .await
        {
            return refusal_response(&state, &refusal);
        }
    }
    let gauges = Gauges {
        sessions_open: state.session_count().await,
        runs_open: state.open_runs.count(),
        warm_runs: state.pools.iter().map(|p| p.ready()).sum(),
        children: state.children(),
        requests_in_flight: state.answering.count(),
        resident_bytes: crate::metrics::resident_bytes(),
    };
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
        )],
        state.metrics.render(&gauges),
    )
        .into_response()
}

/// RFC 9728 protected-resource metadata; only served when OAuth is configured.
async fn resource_metadata(State(state): State<Arc<AppState>>) -> Response {
    let Some(oauth) = &state.auth.settings().oauth else {
        return (
            StatusCode::NOT_FOUND,
            "this server accepts no OAuth access tokens\n",
        )
            .into_response();
    };
    axum::Json(json!({
        "resource": oauth.resource,
        "authorization_servers": [oauth.issuer],
        "scopes_supported": SCOPES.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
        "bearer_methods_supported": ["header"],
        "resource_name": "agent-tools",
    }))
    .into_response()
}

/// Where clients find the metadata (RFC 9728 §3.1): the well-known path inserted between
/// the resource URI's origin and its path.
fn metadata_url(state: &AppState) -> Option<String> {
    let resource = &state.auth.settings().oauth.as_ref()?.resource;
    let after_scheme = resource.find("://")? + 3;
    let origin_end = resource[after_scheme..]
        .find('/')
        .map_or(resource.len(), |i| after_scheme + i);
    let path = resource[origin_end..].trim_end_matches('/');
    Some(format!(
        "{}/.well-known/oauth-protected-resource{path}",
        &resource[..origin_end]
    ))
}

fn refusal_response(state: &AppState, refusal: &Refusal) -> Response {
    let reason = refusal.reason.replace(['"', '\\'], "'");
    let mut challenge = String::from("Bearer ");
    if let Some(url) = metadata_url(state) {
        challenge.push_str(&format!("resource_metadata=\"{url}\", "));
    }
    challenge.push_str(&format!(
        "error=\"{}\", error_description=\"{reason}\"",
        refusal.code
    ));
    if refusal.code == "insufficient_scope" {
        challenge.push_str(&format!(", scope=\"{}\"", SCOPES[2].0));
    }
    let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::UNAUTHORIZED);
    let mut response = (
        status,
        axum::Json(json!({"error": refusal.code, "error_description": refusal.reason})),
    )
        .into_response();
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// A JSON-RPC error as an HTTP response, for refusals the MCP client should show as such.
fn jsonrpc_refusal(status: StatusCode, id: Value, message: String) -> Response {
    (
        status,
        axum::Json(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32000, "message": message},
        })),
    )
        .into_response()
}

fn not_found(message: &str) -> Response {
    (StatusCode::NOT_FOUND, format!("Not Found: {message}\n")).into_response()
}

/// Reads a POST's body (bounded) and parses it as JSON where it is; other requests pass
/// unchanged.
async fn buffered(request: Request) -> Result<(Request, Value), Response> {
    if request.method() != Method::POST {
        return Ok((request, Value::Null));
    }
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_PEEKED_BODY)
        .await
        .map_err(|e| {
            (
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "the request body could not be read (at most {MAX_PEEKED_BODY} bytes): {e}\n"
                ),
            )
                .into_response()
        })?;
    let message = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok((Request::from_parts(parts, Body::from(bytes)), message))
}

/// Every MCP request: find the endpoint, check the credential and the session, then hand it
/// to rmcp's transport for the surface the credential grants.
async fn mcp_entry(State(state): State<Arc<AppState>>, request: Request) -> Response {
    // The body is read before any refusal: answering with it unread makes the server drop
    // the connection, which a client reusing it sees as a reset instead of the answer.
    // rmcp reads whole bodies anyway, with the same bound.
    let (request, message) = match buffered(request).await {
        Ok(r) => r,
        Err(response) => return response,
    };
    let path = request.uri().path().to_string();
    let Some(endpoint) = state.endpoints.get(&path) else {
        let known: Vec<&str> = state.endpoints.keys().map(String::as_str).collect();
        return not_found(&format!(
            "no MCP endpoint at {path}; this server serves {}",
            known.join(", ")
        ));
    };
    if state.draining.is_cancelled() || state.cancel.is_cancelled() {
        let reason = "the server is stopping; open a new session on another server";
        return match message.get("id") {
            Some(id) => jsonrpc_refusal(StatusCode::SERVICE_UNAVAILABLE, id.clone(), reason.into()),
            None => (StatusCode::SERVICE_UNAVAILABLE, format!("{reason}\n")).into_response(),
        };
    }
    let authorization = match credential::presented(&state, request.headers()) {
        Ok(a) => a,
        Err(refusal) => return refusal_response(&state, &refusal),
    };
    let principal = match state
        .auth
        .authenticate(authorization.as_deref(), state.surface)
        .await
    {
        Ok(p) => p,
        Err(refusal) => {
            tracing::info!(path, reason = refusal.reason, "request refused");
            return refusal_response(&state, &refusal);
        }
    };
    let Some(service) = endpoint
        .services
        .iter()
        .find(|(s, _)| *s == principal.surface)
        .map(|(_, s)| s.clone())
    else {
        return refusal_response(
            &state,
            &Refusal {
                status: 403,
                code: "insufficient_scope",
                reason: format!("no {} surface is served here", principal.surface),
            },
        );
    };
    let session_id = request
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    // What a waiting question is bound to: this credential at this endpoint.
    let caller = Caller(format!("{path} {} {}", principal.surface, principal.id));
    let owner = SessionOwner {
        path: path.clone(),
        principal,
    };
    let mut request = request;
    request.extensions_mut().insert(caller);
    if let Some(id) = session_id {
        // A session answers only to the credential and endpoint that opened it; to anyone
        // else it does not exist.
        if state.owner(&id).as_ref() != Some(&owner) {
            return not_found("no such session for this endpoint and credential");
        }
        if let Some(version) = request
            .headers()
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok())
        {
            state.board.session_protocol(&id, version);
        }
        let method = request.method().clone();
        if method == Method::POST {
            let busy = state.activity.begin(&id);
            let answer = state.answering.begin();
            return service
                .handle(request)
                .await
                .map(|body| BusyBody::wrap(Body::new(body), Some(busy), answer));
        }
        state.activity.touch(&id);
        let mut response = service.handle(request).await.map(Body::new);
        if method == Method::DELETE {
            state.activity.forget(&id);
            state.board.session_closed(&id);
            state.freed.session_closed();
            if let Ok(mut owners) = state.owners.lock() {
                owners.remove(&id);
            }
            // The session is gone once rmcp answers; clients (the Python SDK among them)
            // expect 200 or 204 for a completed DELETE, not rmcp's 202.
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
                *response.body_mut() = Body::empty();
            }
        }
        return response;
    }
    if request.method() != Method::POST {
        return service.handle(request).await.map(Body::new);
    }
    if message.get("method").and_then(Value::as_str) != Some("initialize") {
        let version = request_protocol(&message, request.headers());
        if !is_sessionless_protocol(&version) {
            // A handshake-era request belongs to a session: served without one, its run
            // (kernels, staged edits, the ledger) would be thrown away with the answer.
            return jsonrpc_refusal(
                StatusCode::BAD_REQUEST,
                message.get("id").cloned().unwrap_or(Value::Null),
                format!(
                    "Bad Request: missing Mcp-Session-Id header; a request of protocol \
                     {version} belongs to a session: send initialize first, then send the \
                     Mcp-Session-Id its answer carries with every request"
                ),
            );
        }
        // The sessionless protocol: the request is its own run, answered in this response.
        let answer = state.answering.begin();
        return service
            .handle(request)
            .await
            .map(|body| BusyBody::wrap(Body::new(body), None, answer));
    }
    if let Some(checkout) = &state.checkout
        && let Err(refusal) = checkout.prepare(request.headers()).await
    {
        tracing::warn!(
            reason = refusal.message,
            "session refused: no workspace for it"
        );
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        return jsonrpc_refusal(refusal.status, id, refusal.message);
    }
    open_session(
        &state,
        service,
        owner,
        message,
        request,
        &endpoint.workspace,
    )
    .await
}

/// The protocol version a request without a session names: its `_meta` (newest protocol),
/// else the `MCP-Protocol-Version` header, else the transport's default (2025-03-26).
fn request_protocol(message: &Value, headers: &axum::http::HeaderMap) -> String {
    if message.get("method").and_then(Value::as_str) == Some("server/discover") {
        return ProtocolVersion::V_2026_07_28.to_string();
    }
    let from_meta = message
        .pointer("/params/_meta")
        .and_then(|m| m.get("io.modelcontextprotocol/protocolVersion"))
        .and_then(Value::as_str);
    let from_header = headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok());
    from_meta.or(from_header).map_or_else(
        || ProtocolVersion::V_2025_03_26.to_string(),
        |v| v.chars().take(32).collect(),
    )
}

/// Whether `version` is a protocol without sessions (2026-07-28 and later; dates compare
/// as text).
fn is_sessionless_protocol(version: &str) -> bool {
    version >= ProtocolVersion::V_2026_07_28.as_str()
}

/// An `initialize` without a session: refused at the limit, else served and its new session
/// bound to its opener.
async fn open_session(
    state: &AppState,
    service: McpService,
    owner: SessionOwner,
    message: Value,
    request: Request,
    workspace: &ServedWorkspace,
) -> Response {
    let _opening = state.opening.lock().await;
    let live = state.live_session_ids().await;
    if let Ok(mut owners) = state.owners.lock() {
        owners.retain(|id, _| live.contains(id));
    }
    state.board.keep_sessions(&live);
    if state.session_count().await >= state.max_sessions {
        tracing::warn!(max = state.max_sessions, "session refused: limit reached");
        state.metrics.session_refused();
        let mut response = jsonrpc_refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            message.get("id").cloned().unwrap_or(Value::Null),
            format!(
                "this server already serves its maximum of {} sessions (--max-sessions); \
                 close a session or try again later",
                state.max_sessions
            ),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    }
    let response = service.handle(request).await.map(Body::new);
    if let Some(id) = response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        tracing::info!(session = id, workspace = %workspace.root.display(), principal = owner.principal.id, "session opened");
        state.metrics.session_opened();
        if let Ok(mut owners) = state.owners.lock() {
            owners.insert(id.to_string(), owner);
        }
        state.activity.touch(id);
        state
            .board
            .session_opened(id, session_facts(&message, workspace));
    }
    response
}

/// What the status page shows of a session, from its `initialize`: the client's name and
/// version as it gave them (cut short) and the protocol it asked for, until its requests
/// name the one it speaks.
fn session_facts(message: &Value, workspace: &ServedWorkspace) -> SessionFacts {
    let text = |pointer: &str| -> String {
        message
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("-")
            .chars()
            .take(64)
            .collect()
    };
    SessionFacts {
        client_name: text("/params/clientInfo/name"),
        client_version: text("/params/clientInfo/version"),
        protocol: text("/params/protocolVersion"),
        workspace: workspace.root.display().to_string(),
        trusted: workspace.trusted,
        opened: std::time::Instant::now(),
        calls: 0,
        run: None,
    }
}

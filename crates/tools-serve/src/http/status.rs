//! The routes of the status page (`serve --status`): `GET /status`, `GET /status.json` and
//! `POST /status/calls/ID/cancel`. Each asks for the credential `/mcp` accepts — even when
//! `/metrics` is public — and foreign origins are refused before they get here, as on every
//! route; a cancel is a POST, which browsers always send with its `Origin`.

use std::collections::HashMap;
use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::{AppState, credential, refusal_response};
use crate::status::page;
use crate::status::report::{
    self, LanguageServerRow, Order, RunningRow, ServerFacts, SessionRow, StatusReport,
};

/// Refuses a request without the server's credential.
async fn authorized(state: &AppState, headers: &HeaderMap) -> Result<(), Response> {
    let authorization =
        credential::presented(state, headers).map_err(|r| refusal_response(state, &r))?;
    state
        .auth
        .authenticate(authorization.as_deref(), state.surface)
        .await
        .map(|_| ())
        .map_err(|r| refusal_response(state, &r))
}

/// `GET /status`: the page.
pub(super) async fn page(State(state): State<Arc<AppState>>, request: Request) -> Response {
    if let Err(refused) = authorized(&state, request.headers()).await {
        return refused;
    }
    let report = report(&state, Order::parse(request.uri().query())).await;
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-store")),
        ],
        page::render(&report),
    )
        .into_response()
}

/// `GET /status.json`: the same facts, typed.
pub(super) async fn json(State(state): State<Arc<AppState>>, request: Request) -> Response {
    if let Err(refused) = authorized(&state, request.headers()).await {
        return refused;
    }
    let report = report(&state, Order::parse(request.uri().query())).await;
    (
        [(header::CACHE_CONTROL, HeaderValue::from_static("no-store"))],
        axum::Json(report),
    )
        .into_response()
}

/// `POST /status/calls/ID/cancel`: cancels a running call, as its client's own cancel
/// would. A form post (the page without scripting) is sent back to the page.
pub(super) async fn cancel(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    if let Err(refused) = authorized(&state, request.headers()).await {
        return refused;
    }
    let Ok(id) = id.parse::<u64>() else {
        return (StatusCode::NOT_FOUND, "no such call\n").into_response();
    };
    let cancelled = state.board.cancel(id);
    if cancelled {
        tracing::info!(call = id, "call cancelled from the status page");
    }
    let from_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if from_form {
        return (StatusCode::SEE_OTHER, [(header::LOCATION, "/status")]).into_response();
    }
    let status = if cancelled {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    (
        status,
        axum::Json(json!({"call": id, "cancelled": cancelled})),
    )
        .into_response()
}

/// Gathers the report.
async fn report(state: &AppState, order: Order) -> StatusReport {
    let live = state.live_session_ids().await;
    let running = state.board.running();
    let sessions = state.board.sessions(&live);
    let by_run: HashMap<String, String> = sessions
        .iter()
        .filter_map(|(id, f)| Some((f.run.clone()?, report::prefix(id))))
        .collect();
    let session_rows = sessions
        .iter()
        .map(|(id, f)| SessionRow {
            id: report::prefix(id),
            client: f.client_name.clone(),
            client_version: f.client_version.clone(),
            protocol: f.protocol.clone(),
            workspace: f.workspace.clone(),
            trusted: f.trusted,
            age_s: f.opened.elapsed().as_secs(),
            idle_s: state.activity.idle_for(id).as_secs(),
            open_calls: running.iter().filter(|c| &c.session == id).count(),
            calls: f.calls,
        })
        .collect();
    let pooled = match &state.language_servers {
        // The pool reads /proc for each server's memory.
        Some(list) => {
            let list = Arc::clone(list);
            tokio::task::spawn_blocking(move || list())
                .await
                .unwrap_or_default()
        }
        None => Vec::new(),
    };
    let mut language_servers: Vec<LanguageServerRow> = pooled
        .into_iter()
        .map(|s| LanguageServerRow {
            workspace: s.root.display().to_string(),
            language: s.language,
            server: s.server,
            trusted: s.trusted,
            pid: s.pid,
            rss_bytes: s.rss_bytes,
            sessions: s
                .runs
                .iter()
                .map(|r| by_run.get(r).cloned().unwrap_or_else(|| format!("run:{r}")))
                .collect(),
            state: s.state,
            crashes: s.crashes,
            last_failure: s.last_failure.as_deref().map(first_line),
            restarted_s_ago: s.last_restart.as_ref().map(|(ago, _)| ago.as_secs()),
            restart: s.last_restart.as_ref().map(|(_, why)| first_line(why)),
            idle_s: s.idle.as_secs(),
        })
        .collect();
    language_servers.sort_by(|a, b| (&a.workspace, &a.server).cmp(&(&b.workspace, &b.server)));
    StatusReport {
        server: ServerFacts {
            version: env!("CARGO_PKG_VERSION").to_string(),
            uptime_s: state.board.started.elapsed().as_secs(),
            rss_bytes: crate::metrics::resident_bytes(),
            children: state.children(),
        },
        sessions: session_rows,
        language_servers,
        running: running
            .iter()
            .map(|c| RunningRow {
                id: c.id,
                tool: c.tool.clone(),
                session: report::prefix(&c.session),
                running_s: (c.started.elapsed().as_secs_f64() * 10.0).round() / 10.0,
            })
            .collect(),
        order: order.as_str().to_string(),
        recent: report::ended_rows(state.board.recent(), order),
        slowest_tools: report::slowest_tools(state.board.durations()),
    }
}

/// The first line of what the pool says, cut short.
fn first_line(text: &str) -> String {
    text.lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect()
}

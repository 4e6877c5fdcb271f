//! The three probes, each answering one question, so an orchestrator and a load balancer
//! can each ask the one they act on:
//!
//! - `/healthz` (liveness): the process serves HTTP. Failing it means "restart me".
//! - `/readyz` (readiness): this server can serve the sessions it holds and is not
//!   stopping; its warm runs were opened once. A server holding as many sessions as it
//!   allows stays ready: a pod that belongs to one agent session must not be taken out of
//!   its Service (or its sandbox marked not ready) because that session is open.
//! - `/accepting` (capacity): a new session would be accepted now (ready and below
//!   `--max-sessions`). For a balancer that spreads new sessions over several servers;
//!   never a readiness probe.

use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::AppState;

/// Liveness: the process answers.
pub(super) async fn healthz() -> &'static str {
    "ok\n"
}

/// Why the server cannot serve at all, if it cannot.
fn not_ready(state: &AppState) -> Option<&'static str> {
    if state.draining.is_cancelled() || state.cancel.is_cancelled() {
        return Some("stopping\n");
    }
    if !state.pools.iter().all(|p| p.filled()) {
        return Some("opening warm runs\n");
    }
    None
}

/// Readiness: serves its sessions; the session limit plays no part.
pub(super) async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    match not_ready(&state) {
        Some(reason) => (StatusCode::SERVICE_UNAVAILABLE, reason).into_response(),
        None => "ready\n".into_response(),
    }
}

/// Capacity: a new session would be accepted.
pub(super) async fn accepting(State(state): State<Arc<AppState>>) -> Response {
    if let Some(reason) = not_ready(&state) {
        return (StatusCode::SERVICE_UNAVAILABLE, reason).into_response();
    }
    if state.session_count().await >= state.max_sessions {
        return (StatusCode::SERVICE_UNAVAILABLE, "at the session limit\n").into_response();
    }
    "accepting sessions\n".into_response()
}

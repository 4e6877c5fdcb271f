//! Everything a server sends that is not a response: its requests, all answered in this
//! one place, and its notifications (diagnostics, progress, status), recorded for the
//! waiters.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use lsp_types::notification::{LogMessage, Notification, Progress, PublishDiagnostics};
use lsp_types::request::{Request, WorkDoneProgressCreate};
use lsp_types::{
    NumberOrString, ProgressParams, ProgressParamsValue, PublishDiagnosticsParams,
    WorkDoneProgress, WorkDoneProgressCreateParams,
};
use serde_json::{Value, json};
use tools_core::transport::Transport;
use tools_daemon::DiagnosticsReplayed;

use super::{METHOD_NOT_FOUND, Shared, uri_to_path};

/// rust-analyzer's status notification (an extension; lsp-types has no type for it).
const SERVER_STATUS: &str = "experimental/serverStatus";

/// Reads everything the server sends that is not a response: answers its requests (all in
/// this one place) and records its notifications. Ends when the server's output closes.
pub(super) async fn event_loop(
    transport: Transport,
    mut rx: tokio::sync::mpsc::UnboundedReceiver<Value>,
    shared: Arc<Shared>,
) {
    while let Some(msg) = rx.recv().await {
        if let Some(reply) = handle_message(&msg, &shared) {
            let _ = transport.send(reply).await;
        }
    }
    // Wake every waiter: the server is gone.
    shared.bump();
}

/// Takes in one message the server sent unasked: a request gets its reply (returned, to
/// send back), a notification is recorded. A message without a method is ignored.
pub(super) fn handle_message(msg: &Value, shared: &Shared) -> Option<Value> {
    let method = msg.get("method").and_then(Value::as_str)?;
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    if let Some(id) = msg.get("id").cloned() {
        return Some(match answer_server_request(method, &params, shared) {
            Ok(result) => json!({"id": id, "result": result}),
            Err((code, message)) => {
                json!({"id": id, "error": {"code": code, "message": message}})
            }
        });
    }
    tracing::trace!(target: "tools_lsp::wire", server = %shared.server, "<- {method} {}", tools_core::text::shorten(&params.to_string(), 200));
    match method {
        PublishDiagnostics::METHOD => record_publish(params, shared),
        SERVER_STATUS => record_status(&params, shared),
        Progress::METHOD => record_progress(params, shared),
        LogMessage::METHOD => record_log(&params, shared),
        DiagnosticsReplayed::METHOD => {
            shared.diagnostics_replayed.store(true, Ordering::SeqCst);
            shared.bump();
        }
        _ => {}
    }
    None
}

/// The answer to one server→client request: `Ok(result)` or `Err((code, message))`.
/// Unknown methods get MethodNotFound, so a server waiting on a reply never hangs.
fn answer_server_request(
    method: &str,
    params: &Value,
    shared: &Shared,
) -> std::result::Result<Value, (i64, String)> {
    if shared.shutting_down.load(Ordering::SeqCst) {
        // After shutdown, answer null: some servers treat an error reply as fatal.
        return Ok(Value::Null);
    }
    match method {
        "workspace/configuration" => {
            let items = params
                .get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            Ok(Value::Array(
                items
                    .iter()
                    .map(|it| {
                        lookup_setting(&shared.settings, it.get("section").and_then(Value::as_str))
                    })
                    .collect(),
            ))
        }
        WorkDoneProgressCreate::METHOD => {
            record_announced(params, shared);
            Ok(Value::Null)
        }
        "client/registerCapability"
        | "client/unregisterCapability"
        | "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/codeLens/refresh"
        | "window/showDocument" => Ok(Value::Null),
        "window/showMessageRequest" => Ok(Value::Null),
        "workspace/workspaceFolders" => Ok(shared.folders.clone()),
        "workspace/applyEdit" => Ok(json!({
            "applied": false,
            "failureReason": "this client applies edits only through its own tools (lsp_rename)"
        })),
        _ => {
            tracing::debug!("{}: unknown server request {method}", shared.server);
            Err((METHOD_NOT_FOUND, format!("method not found: {method}")))
        }
    }
}

/// The value of a `workspace/configuration` section (dotted) in `settings`, `Null` when
/// unset: the same lookup the per-user daemon answers with when no conversation can.
pub(super) fn lookup_setting(settings: &Value, section: Option<&str>) -> Value {
    tools_daemon::setting_at(settings, section)
}

/// Notes what a log line says of the server's state: pyright and basedpyright log
/// `Found N source files` (or that they found none) once they know the project's files.
fn record_log(params: &Value, shared: &Shared) {
    let Some(message) = params.get("message").and_then(Value::as_str) else {
        return;
    };
    if says_source_files_found(message) && !shared.files_found.swap(true, Ordering::SeqCst) {
        shared.bump();
    }
}

/// Whether a pyright log line reports the end of its search for the project's files.
fn says_source_files_found(message: &str) -> bool {
    let line = message.trim();
    (line.starts_with("Found ")
        && (line.ends_with(" source files") || line.ends_with(" source file")))
        || line.starts_with("No source files found")
        || line.starts_with("No include entries specified")
}

fn record_publish(params: Value, shared: &Shared) {
    // A publish that does not decode (a URI that is not a file, a malformed diagnostic) is
    // dropped whole rather than half-recorded.
    let Ok(publish) = serde_json::from_value::<PublishDiagnosticsParams>(params) else {
        return;
    };
    let Some(path) = uri_to_path(&publish.uri) else {
        return;
    };
    // A check's findings can vanish from a file before the check ends (rust-analyzer 1.95
    // replaces one target's findings of a package with another's): every publish, whole.
    tracing::debug!(
        "published: {} {}",
        path.display(),
        super::diag_store::brief(&publish.diagnostics)
    );
    shared
        .diags
        .record_push(path, publish.version, publish.diagnostics);
    shared.bump();
}

fn token_key(token: NumberOrString) -> String {
    match token {
        NumberOrString::String(s) => s,
        NumberOrString::Number(n) => n.to_string(),
    }
}

/// A token created for progress that begins after our reply: the work is under way from
/// now (see `Activity::progress_active`).
fn record_announced(params: &Value, shared: &Shared) {
    if let Ok(create) = serde_json::from_value::<WorkDoneProgressCreateParams>(params.clone())
        && let Ok(mut a) = shared.announced.lock()
    {
        // Tokens never begun are dropped long after they stop counting as work under way:
        // a first analysis waits for its token to begin however late (see
        // `LspClient::announced_not_begun`).
        a.retain(|_, at| at.elapsed() < super::ANNOUNCED_TOKEN_KEPT);
        a.insert(token_key(create.token), std::time::Instant::now());
    }
    shared.bump();
}

fn record_progress(params: Value, shared: &Shared) {
    // Only work-done progress says whether the server is busy; anything else (partial
    // results) still wakes the waiters.
    if let Ok(progress) = serde_json::from_value::<ProgressParams>(params) {
        let token = token_key(progress.token);
        let ProgressParamsValue::WorkDone(work) = progress.value;
        if let Ok(mut a) = shared.announced.lock() {
            a.remove(&token);
        }
        shared.board.record(&token, &work);
        if let Ok(mut p) = shared.progress.lock() {
            match work {
                WorkDoneProgress::Begin(_) => {
                    p.insert(token);
                    shared.progress_seen.store(true, Ordering::SeqCst);
                    shared.progress_begun.fetch_add(1, Ordering::SeqCst);
                }
                WorkDoneProgress::End(_) => {
                    p.remove(&token);
                }
                WorkDoneProgress::Report(_) => {}
            }
        }
        shared.note_loaded_if_over();
    }
    shared.bump();
}

/// rust-analyzer's status: `quiescent` is false while it loads the workspace, builds
/// dependencies' metadata or primes caches.
fn record_status(params: &Value, shared: &Shared) {
    let quiescent = params
        .get("quiescent")
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if let Ok(mut q) = shared.quiescent.lock() {
        *q = Some(quiescent);
    }
    shared.note_loaded_if_over();
    shared.bump();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyrights_end_of_the_file_search_is_recognised() {
        assert!(says_source_files_found("Found 19 source files"));
        assert!(says_source_files_found("Found 1 source file"));
        assert!(says_source_files_found("No source files found."));
        assert!(!says_source_files_found("Searching for source files"));
        assert!(!says_source_files_found(
            "Found 19 source files in 3 folders?"
        ));
    }

    #[test]
    fn settings_lookup_by_dotted_section() {
        let s = json!({"python": {"analysis": {"typeCheckingMode": "strict"}}});
        assert_eq!(
            lookup_setting(&s, Some("python.analysis")),
            json!({"typeCheckingMode": "strict"})
        );
        assert_eq!(lookup_setting(&s, Some("gopls")), Value::Null);
        assert_eq!(lookup_setting(&Value::Null, Some("x")), Value::Null);
    }

    fn progress(token: &str, kind: &str, title: &str) -> Value {
        let value = match kind {
            "begin" => json!({"kind": "begin", "title": title}),
            _ => json!({"kind": kind}),
        };
        json!({"token": token, "value": value})
    }

    #[test]
    fn work_begun_after_the_first_load_does_not_make_it_a_load_again() {
        let shared = Shared::new("pyright".into(), Value::Null, Value::Null);
        let loaded = || shared.loaded.load(Ordering::SeqCst);
        record_progress(progress("a", "begin", ""), &shared);
        assert!(shared.loading_reported());
        assert!(!loaded());
        record_progress(progress("a", "end", ""), &shared);
        assert!(loaded());
        // An analysis after a change: reported, but the first load stays over.
        record_progress(progress("b", "begin", ""), &shared);
        assert!(shared.loading_reported());
        assert!(loaded());
    }

    #[test]
    fn rust_analyzers_load_is_over_only_once_it_says_it_is_quiescent() {
        let shared = Shared::new("rust-analyzer".into(), Value::Null, Value::Null);
        let loaded = || shared.loaded.load(Ordering::SeqCst);
        record_status(&json!({"quiescent": false}), &shared);
        record_progress(
            progress("rustAnalyzer/Fetching", "begin", "Fetching"),
            &shared,
        );
        record_progress(progress("rustAnalyzer/Fetching", "end", ""), &shared);
        assert!(!loaded(), "between two steps of the load");
        record_status(&json!({"quiescent": true}), &shared);
        assert!(loaded());
    }
}

//! Probes, refusals and the session limit, over a real socket.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tools_core::{RegistryBuilder, Run, RunOptions};
use tools_mcp::RegistryFactory;
use tools_serve::{AuthSettings, RunFactory, ServeOptions, ServedWorkspace};

pub(super) const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"suite","version":"0"}}}"#;

pub(super) fn empty_runs() -> RunFactory {
    Arc::new(|ws: &ServedWorkspace| {
        let root = ws.root.clone();
        let factory: RegistryFactory = Arc::new(move |_| {
            let root = root.clone();
            Box::pin(async move { RegistryBuilder::new(Run::new(RunOptions::at(&root)?)?).build() })
        });
        factory
    })
}

/// Starts a server; it stops when the returned sender is dropped.
async fn start(
    root: &Path,
    max_sessions: usize,
    auth: AuthSettings,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start_with(root, |opts| {
        opts.max_sessions = max_sessions;
        opts.auth = auth;
    })
    .await
}

/// Starts a server on `root` (a 60 s idle timeout) with the options `adjust` sets; it stops
/// when the returned sender is dropped.
pub(super) async fn start_with(
    root: &Path,
    adjust: impl FnOnce(&mut ServeOptions),
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let mut opts = ServeOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        vec![ServedWorkspace {
            name: None,
            root: root.into(),
            trusted: false,
        }],
        empty_runs(),
    );
    opts.idle_timeout = Duration::from_secs(60);
    adjust(&mut opts);
    let server = tools_serve::bind(opts).await.unwrap();
    let addr = server.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

/// One HTTP/1.1 exchange; answers the status line, the headers (lower-cased) and the body.
pub(super) async fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut raw))
        .await
        .expect("the server answered in time")
        .unwrap();
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    (status, head.to_lowercase(), body.to_string())
}

pub(super) fn mcp_post() -> Vec<(&'static str, &'static str)> {
    vec![
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ]
}

#[tokio::test]
async fn probes_answer_and_unknown_paths_name_the_endpoints() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, _stop) = start(dir.path(), 4, AuthSettings::default()).await;
    let (status, _, body) = exchange(addr, "GET", "/healthz", &[], "").await;
    assert_eq!((status, body.trim()), (200, "ok"));
    let (status, _, body) = exchange(addr, "GET", "/readyz", &[], "").await;
    assert_eq!((status, body.trim()), (200, "ready"));
    let (status, _, body) = exchange(addr, "POST", "/nowhere", &mcp_post(), INIT).await;
    assert_eq!(status, 404);
    assert!(body.contains("serves /mcp"), "{body}");
    // No OAuth configured: no metadata to announce.
    let (status, _, _) = exchange(
        addr,
        "GET",
        "/.well-known/oauth-protected-resource",
        &[],
        "",
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn one_session_over_the_limit_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, _stop) = start(dir.path(), 1, AuthSettings::default()).await;
    let (status, head, body) = exchange(addr, "POST", "/mcp", &mcp_post(), INIT).await;
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("mcp-session-id:"), "{head}");
    // Full is not unready: only the capacity probe turns new sessions away.
    let (status, _, body) = exchange(addr, "GET", "/readyz", &[], "").await;
    assert_eq!((status, body.trim()), (200, "ready"));
    let (status, _, body) = exchange(addr, "GET", "/accepting", &[], "").await;
    assert_eq!((status, body.trim()), (503, "at the session limit"));
    let (status, head, body) = exchange(addr, "POST", "/mcp", &mcp_post(), INIT).await;
    assert_eq!(status, 503, "{body}");
    assert!(head.contains("retry-after: 5"), "{head}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["id"], 1);
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("maximum of 1 sessions"),
        "{body}"
    );
}

#[tokio::test]
async fn a_static_token_is_required_and_sessions_stay_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let auth = AuthSettings {
        static_token: Some("the-static-token-0123".into()),
        oauth: None,
    };
    let (addr, _stop) = start(dir.path(), 4, auth).await;
    let (status, head, body) = exchange(addr, "POST", "/mcp", &mcp_post(), INIT).await;
    assert_eq!(status, 401);
    assert!(
        head.contains("www-authenticate: bearer error=\"invalid_request\""),
        "{head}"
    );
    assert!(body.contains("no access token"), "{body}");
    let mut headers = mcp_post();
    headers.push(("Authorization", "Bearer wrong-token-0123456789"));
    let (status, _, body) = exchange(addr, "POST", "/mcp", &headers, INIT).await;
    assert_eq!(status, 401);
    assert!(body.contains("does not match"), "{body}");
    let mut headers = mcp_post();
    headers.push(("Authorization", "Bearer the-static-token-0123"));
    let (status, head, _) = exchange(addr, "POST", "/mcp", &headers, INIT).await;
    assert_eq!(status, 200);
    assert!(head.contains("mcp-session-id:"), "{head}");
    // An unknown session id is not found, even with the right token.
    headers.push(("Mcp-Session-Id", "not-a-session"));
    headers.push(("Mcp-Protocol-Version", "2025-06-18"));
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, _, _) = exchange(addr, "POST", "/mcp", &headers, list).await;
    assert_eq!(status, 404);
}

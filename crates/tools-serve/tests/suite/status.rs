//! The status page over a real socket: off unless asked, behind the credential of `/mcp`
//! (also when `/metrics` is public), refused to foreign origins, showing sessions and calls
//! (running, cancellable, ended) and never an argument, answer, token or environment value.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tools_core::{CallCtx, RegistryBuilder, Run, RunOptions, Tier, Tool, ToolError, ToolOutput};
use tools_mcp::RegistryFactory;
use tools_serve::{AuthSettings, RunFactory, ServedWorkspace, StatusReport};

use super::front::{INIT, exchange, mcp_post, start_with};

const TOKEN: &str = "the-status-token-0123456789";
const FILE_SECRET: &str = "file-secret-4711-in-notes";
const ARG_SECRET: &str = "argument-secret-0815";

/// A test tool: `nap` sleeps until cancelled (or 30 s), `fail` fails naming the token and
/// an environment value on its first line and a file's contents on the next, `peek`
/// answers a file's contents.
struct Probe(&'static str);

#[async_trait::async_trait]
impl Tool for Probe {
    fn name(&self) -> &str {
        self.0
    }
    fn tier(&self) -> Tier {
        Tier::Read
    }
    fn description(&self) -> String {
        "a probe of the status suite".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn parallel_safe(&self) -> bool {
        true
    }
    async fn call(&self, ctx: &CallCtx, _args: Value) -> Result<ToolOutput, ToolError> {
        let notes = std::fs::read_to_string(ctx.run.root().join("notes.txt")).unwrap_or_default();
        match self.0 {
            "nap" => {
                tokio::select! {
                    _ = ctx.cancel.cancelled() => Err(ToolError::rejected("the nap was cancelled")),
                    _ = tokio::time::sleep(Duration::from_secs(30)) => Ok(ToolOutput::text("slept")),
                }
            }
            "fail" => Err(ToolError::internal(format!(
                "it broke near {TOKEN} and {}\n{notes}",
                env_secret()
            ))),
            _ => Ok(ToolOutput::text(notes)),
        }
    }
}

/// A value of this process's environment (cargo sets it for every test run).
fn env_secret() -> String {
    std::env::var("CARGO_MANIFEST_DIR").unwrap()
}

fn probe_runs() -> RunFactory {
    Arc::new(|ws: &ServedWorkspace| {
        let root = ws.root.clone();
        let factory: RegistryFactory = Arc::new(move |_| {
            let root = root.clone();
            Box::pin(async move {
                let mut builder = RegistryBuilder::new(Run::new(RunOptions::at(&root)?)?);
                for name in ["nap", "fail", "peek"] {
                    builder = builder.tool(Arc::new(Probe(name)));
                }
                builder.build()
            })
        });
        factory
    })
}

fn bearer() -> (&'static str, String) {
    ("Authorization", format!("Bearer {TOKEN}"))
}

/// Headers as pairs of borrowed strings.
fn refs<'a>(headers: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    headers.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Opens a session with the token; answers its id.
async fn open_session(addr: SocketAddr, client: &str) -> String {
    let init = INIT.replace("\"suite\"", &format!("\"{client}\""));
    let mut headers: Vec<(&'static str, String)> = mcp_post()
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    headers.push(bearer());
    let (status, head, body) = exchange(addr, "POST", "/mcp", &refs(&headers), &init).await;
    assert_eq!(status, 200, "{body}");
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .unwrap()
        .trim()
        .to_string();
    headers.push(("Mcp-Session-Id", id.clone()));
    headers.push(("Mcp-Protocol-Version", "2025-06-18".into()));
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, _) = exchange(addr, "POST", "/mcp", &refs(&headers), initialized).await;
    assert_eq!(status, 202);
    id
}

/// Calls `tool` in session `id`; answers the result's JSON.
async fn call(addr: SocketAddr, id: &str, tool: &str, args: Value) -> Value {
    let mut headers: Vec<(&'static str, String)> = mcp_post()
        .into_iter()
        .map(|(k, v)| (k, v.to_string()))
        .collect();
    headers.push(bearer());
    headers.push(("Mcp-Session-Id", id.to_string()));
    headers.push(("Mcp-Protocol-Version", "2025-06-18".into()));
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": tool, "arguments": args}})
    .to_string();
    let (status, _, answer) = exchange(addr, "POST", "/mcp", &refs(&headers), &body).await;
    assert_eq!(status, 200, "{answer}");
    let data = answer
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .find(|d| d.contains("\"result\"") || d.contains("\"error\""))
        .unwrap_or_else(|| panic!("no result in {answer}"));
    serde_json::from_str(data).unwrap()
}

async fn report(addr: SocketAddr, query: &str) -> StatusReport {
    let (status, _, body) = exchange(
        addr,
        "GET",
        &format!("/status.json{query}"),
        &refs(&[bearer()]),
        "",
    )
    .await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn with_status(opts: &mut tools_serve::ServeOptions) {
    opts.status = true;
    opts.auth = AuthSettings {
        static_token: Some(TOKEN.into()),
        oauth: None,
    };
    opts.run_factory = probe_runs();
}

#[tokio::test]
async fn the_page_is_served_only_when_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, _stop) = start_with(dir.path(), |opts| opts.status = false).await;
    let (status, _, body) = exchange(addr, "GET", "/status", &[], "").await;
    assert_eq!(status, 404, "{body}");
    let (status, _, _) = exchange(addr, "GET", "/status.json", &[], "").await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn the_page_asks_for_the_mcp_credential_even_with_public_metrics_and_refuses_foreign_origins()
{
    let dir = tempfile::tempdir().unwrap();
    let (addr, _stop) = start_with(dir.path(), |opts| {
        with_status(opts);
        opts.metrics_public = true;
    })
    .await;
    let (status, _, _) = exchange(addr, "GET", "/metrics", &[], "").await;
    assert_eq!(status, 200, "metrics are public");
    for (method, path) in [
        ("GET", "/status"),
        ("GET", "/status.json"),
        ("POST", "/status/calls/1/cancel"),
    ] {
        let (status, head, _) = exchange(addr, method, path, &[], "").await;
        assert_eq!(status, 401, "{method} {path}");
        assert!(head.contains("www-authenticate: bearer"), "{head}");
        let wrong = [("Authorization", "Bearer not-the-token-at-all")];
        let (status, _, _) = exchange(addr, method, path, &wrong, "").await;
        assert_eq!(status, 401, "{method} {path} with a wrong token");
        let foreign = [bearer(), ("Origin", "http://evil.example".to_string())];
        let (status, _, body) = exchange(addr, method, path, &refs(&foreign), "").await;
        assert_eq!(status, 403, "{method} {path} from a foreign origin: {body}");
    }
    let own = [
        bearer(),
        ("Origin", format!("http://127.0.0.1:{}", addr.port())),
    ];
    let (status, head, body) = exchange(addr, "GET", "/status", &refs(&own), "").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        head.contains("content-type: text/html; charset=utf-8"),
        "{head}"
    );
    let (status, _, body) =
        exchange(addr, "POST", "/status/calls/99/cancel", &refs(&own), "").await;
    assert_eq!(
        (status, body.as_str()),
        (404, r#"{"call":99,"cancelled":false}"#)
    );
}

#[tokio::test]
async fn sessions_and_calls_show_with_names_and_figures_and_a_running_call_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), FILE_SECRET).unwrap();
    let (addr, _stop) = start_with(dir.path(), with_status).await;
    let busy = open_session(addr, "busy-client").await;
    let idle = open_session(addr, "idle-client").await;
    let peeked = call(addr, &idle, "peek", json!({"why": ARG_SECRET})).await;
    assert_eq!(peeked["result"]["content"][0]["text"], FILE_SECRET);
    let failed = call(addr, &busy, "fail", json!({"why": ARG_SECRET})).await;
    assert_eq!(failed["result"]["isError"], true, "{failed}");

    let napping = tokio::spawn({
        let busy = busy.clone();
        async move { call(addr, &busy, "nap", json!({"why": ARG_SECRET})).await }
    });
    let mut seen = report(addr, "").await;
    for _ in 0..100 {
        if !seen.running.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        seen = report(addr, "").await;
    }
    assert_eq!(seen.server.version, env!("CARGO_PKG_VERSION"));
    assert!(seen.server.rss_bytes.unwrap() > 0);
    let sessions: Vec<(String, String, String, String, usize, u64)> = seen
        .sessions
        .iter()
        .map(|s| {
            (
                s.id.clone(),
                format!("{} {}", s.client, s.client_version),
                s.protocol.clone(),
                s.workspace.clone(),
                s.open_calls,
                s.calls,
            )
        })
        .collect();
    let root = dir.path().display().to_string();
    assert_eq!(
        sessions,
        [
            (
                busy[..8].to_string(),
                "busy-client 0".into(),
                "2025-06-18".into(),
                root.clone(),
                1,
                1
            ),
            (
                idle[..8].to_string(),
                "idle-client 0".into(),
                "2025-06-18".into(),
                root,
                0,
                1
            ),
        ]
    );
    assert_eq!(seen.running.len(), 1, "{seen:?}");
    let running = &seen.running[0];
    assert_eq!(
        (running.tool.as_str(), running.session.as_str()),
        ("nap", &busy[..8])
    );
    assert!(seen.language_servers.is_empty());

    let cancel = format!("/status/calls/{}/cancel", running.id);
    let (status, _, body) = exchange(addr, "POST", &cancel, &refs(&[bearer()]), "").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        format!(r#"{{"call":{},"cancelled":true}}"#, running.id)
    );
    let napped = tokio::time::timeout(Duration::from_secs(10), napping)
        .await
        .expect("the cancelled call ended")
        .unwrap();
    assert_eq!(
        napped["result"]["content"][0]["text"],
        "rejected: the server's operator cancelled the call from its status page",
        "{napped}"
    );

    let after = report(addr, "?order=failed").await;
    assert!(after.running.is_empty(), "{after:?}");
    assert_eq!(after.order, "failed");
    let recent: Vec<(String, String, Option<String>)> = after
        .recent
        .iter()
        .map(|r| (r.tool.clone(), r.outcome.clone(), r.error.clone()))
        .collect();
    assert_eq!(
        recent,
        [
            (
                "nap".to_string(),
                "error".to_string(),
                Some(
                    napped["result"]["content"][0]["text"]
                        .as_str()
                        .unwrap()
                        .lines()
                        .next()
                        .unwrap()
                        .to_string()
                )
            ),
            (
                "fail".to_string(),
                "error".to_string(),
                Some("internal error: it broke near [hidden] and [hidden]".to_string())
            ),
            ("peek".to_string(), "ok".to_string(), None),
        ]
    );
    let mut tools: Vec<&str> = after
        .slowest_tools
        .iter()
        .map(|t| t.tool.as_str())
        .collect();
    tools.sort();
    assert_eq!(tools, ["fail", "nap", "peek"]);
    assert_eq!(after.slowest_tools[0].tool, "nap");

    let (status, _, page) = exchange(addr, "GET", "/status", &refs(&[bearer()]), "").await;
    assert_eq!(status, 200);
    assert!(
        page.contains(&format!("<td>{}</td><td>busy-client 0</td>", &busy[..8])),
        "{page}"
    );
    assert!(
        page.contains("<td>internal error: it broke near [hidden] and [hidden]</td>"),
        "{page}"
    );
    let (_, _, json_text) = exchange(addr, "GET", "/status.json", &refs(&[bearer()]), "").await;
    let shape: Value = serde_json::from_str(&json_text).unwrap();
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&shape),
        [
            "language_servers",
            "order",
            "recent",
            "running",
            "server",
            "sessions",
            "slowest_tools"
        ]
    );
    assert_eq!(
        keys(&shape["server"]),
        ["children", "rss_bytes", "uptime_s", "version"]
    );
    assert_eq!(
        keys(&shape["sessions"][0]),
        [
            "age_s",
            "calls",
            "client",
            "client_version",
            "id",
            "idle_s",
            "open_calls",
            "protocol",
            "trusted",
            "workspace"
        ]
    );
    assert_eq!(
        keys(&shape["recent"][0]),
        [
            "duration_ms",
            "ended_s_ago",
            "error",
            "outcome",
            "session",
            "tool"
        ]
    );
    assert_eq!(
        keys(&shape["slowest_tools"][0]),
        ["calls", "p50_ms", "p95_ms", "tool"]
    );
    for secret in [TOKEN, FILE_SECRET, ARG_SECRET, &env_secret(), &busy, &idle] {
        assert!(!page.contains(secret), "the page shows {secret}");
        assert!(!json_text.contains(secret), "the JSON shows {secret}");
    }

    // A closed session leaves the page.
    let headers = [
        bearer(),
        ("Mcp-Session-Id", idle.clone()),
        ("Mcp-Protocol-Version", "2025-06-18".into()),
    ];
    let (status, _, _) = exchange(addr, "DELETE", "/mcp", &refs(&headers), "").await;
    assert_eq!(status, 204);
    let left: Vec<String> = report(addr, "")
        .await
        .sessions
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(left, [busy[..8].to_string()]);
}

#[tokio::test]
async fn the_shared_language_servers_are_listed_as_the_embedder_describes_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let listed = root.clone();
    let (addr, _stop) = start_with(dir.path(), move |opts| {
        with_status(opts);
        opts.language_servers = Some(Arc::new(move || {
            vec![tools_serve::PooledServer {
                root: listed.clone(),
                language: "python".into(),
                server: "pyright-langserver".into(),
                trusted: false,
                pid: Some(4242),
                rss_bytes: Some(130 * 1024 * 1024 + 1),
                runs: vec!["run-gone".into()],
                state: tools_serve::ServerState::Indexing,
                crashes: 1,
                last_failure: Some("pyright-langserver exited (signal 9)\nmore".into()),
                last_restart: Some((Duration::from_secs(75), "it was restarted\nmore".into())),
                idle: Duration::from_secs(3),
            }]
        }));
    })
    .await;
    let (_, _, body) = exchange(addr, "GET", "/status.json", &refs(&[bearer()]), "").await;
    let shape: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        shape["language_servers"],
        json!([{
            "workspace": root.display().to_string(),
            "language": "python",
            "server": "pyright-langserver",
            "trusted": false,
            "pid": 4242,
            "rss_bytes": 130 * 1024 * 1024 + 1,
            "sessions": ["run:run-gone"],
            "state": "indexing",
            "crashes": 1,
            "last_failure": "pyright-langserver exited (signal 9)",
            "restarted_s_ago": 75,
            "restart": "it was restarted",
            "idle_s": 3,
        }])
    );
    let (_, _, page) = exchange(addr, "GET", "/status", &refs(&[bearer()]), "").await;
    let row = format!(
        "<tr><td>{}</td><td>pyright-langserver (python)</td><td>untrusted</td><td>4242</td>\
         <td class=\"n\">131 MiB</td><td>run:run-gone</td><td>indexing</td><td class=\"n\">1</td>\
         <td>pyright-langserver exited (signal 9)</td><td>1m 15s ago: it was restarted</td>\
         <td>3s</td></tr>",
        root.display()
    );
    assert!(page.contains(&row), "{page}");
}

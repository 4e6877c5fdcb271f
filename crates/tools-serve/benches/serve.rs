//! `cargo xtask bench serve`: the `agent-tools serve` binary under load, driven over
//! streamable HTTP by a small MCP client (hyper, one connection per session).
//!
//! Measures, on a generated Python workspace:
//! - the first call of a new session (`read`, and `lsp hover` when a Python language server
//!   is on PATH, and `eval`): cold, with `--warm 1`, and with `--warm 1 --warm-lsp …
//!   --warm-kernel python` (the warm run's language server and kernel started ahead);
//! - sessions opened per second, and `read` calls per second with their p50/p99 latency at
//!   1, 10 and 50 concurrent sessions;
//! - the server's resident memory per idle session (each with its run open);
//! - language servers shared by ten sessions against one server per session
//!   (`serve_parts/shared_servers.rs`; `-- --shared-servers` runs that part alone).
//!
//! The binary is `$AGENT_TOOLS_BIN`, else `target/release/agent-tools`, else
//! `target/debug/agent-tools` (a debug build's figures are only good for comparisons with
//! each other). Nothing is asserted: the figures are printed.

#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper::body::Bytes;
use serde_json::{Value, json};

#[path = "serve_parts/shared_servers.rs"]
mod shared_servers;

fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("AGENT_TOOLS_BIN") {
        return p.into();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    for profile in ["release", "debug"] {
        let p = target.join(profile).join("agent-tools");
        if p.exists() {
            return p;
        }
    }
    panic!("build the binary first (cargo build -p agent-tools), or set AGENT_TOOLS_BIN");
}

/// A running `agent-tools serve`.
struct Server {
    child: Child,
    port: u16,
    /// Warm runs the server keeps when full (two per `--warm`).
    warm_target: usize,
}

impl Server {
    fn start(root: &Path, extra: &[&str]) -> Server {
        let mut child = Command::new(binary())
            .args(["serve", "--http", "127.0.0.1:0", "--root"])
            .arg(root)
            .args(["--max-sessions", "200", "--max-children", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start agent-tools serve");
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let port = loop {
            let line = lines
                .next()
                .expect("the server printed its address")
                .unwrap();
            if let Some(at) = line.find("http://127.0.0.1:") {
                let rest = &line[at + "http://127.0.0.1:".len()..];
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                break digits.parse().unwrap();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        let warm = extra
            .iter()
            .position(|a| *a == "--warm")
            .and_then(|i| extra.get(i + 1))
            .map_or(0, |n| n.parse::<usize>().unwrap());
        Server {
            child,
            port,
            warm_target: 2 * warm,
        }
    }

    fn rss_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kb: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap();
        kb * 1024
    }

    async fn wait_ready(&self) {
        for _ in 0..1200 {
            let mut s = Session::connect(self.port).await;
            let (status, _) = s.get("/readyz").await;
            let (_, metrics) = s.get("/metrics").await;
            // Ready, and every warm run taken by an earlier round replaced.
            let warm = metrics
                .lines()
                .find_map(|l| l.strip_prefix("agent_tools_warm_runs "))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if status == 200 && warm >= self.warm_target {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the server never became ready");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM lets the server close its runs; Windows has no such request.
        #[cfg(unix)]
        // SAFETY: kill with a plain pid.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        #[cfg(not(unix))]
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One MCP session over one HTTP/1.1 connection.
struct Session {
    port: u16,
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    id: Option<String>,
    next: u64,
}

impl Session {
    async fn connect(port: u16) -> Session {
        Session {
            port,
            sender: Self::connection(port).await,
            id: None,
            next: 0,
        }
    }

    async fn connection(port: u16) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        tcp.set_nodelay(true).unwrap();
        let (sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .unwrap();
        tokio::spawn(conn);
        sender
    }

    /// Sends on the session's connection, opening a new one if the server closed it.
    async fn send(&mut self, req: Request<Full<Bytes>>) -> hyper::Response<hyper::body::Incoming> {
        if self.sender.ready().await.is_err() {
            self.sender = Self::connection(self.port).await;
        }
        self.sender.send_request(req).await.unwrap()
    }

    async fn get(&mut self, path: &str) -> (u16, String) {
        let req = Request::get(path)
            .header("host", format!("127.0.0.1:{}", self.port))
            .body(Full::new(Bytes::new()))
            .unwrap();
        let resp = self.send(req).await;
        let status = resp.status().as_u16();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    /// Posts one message; returns the answer to it (None for a notification).
    async fn post(&mut self, message: Value) -> Option<Value> {
        let mut req = Request::post("/mcp")
            .header("host", format!("127.0.0.1:{}", self.port))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(id) = &self.id {
            req = req
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-06-18");
        }
        let req = req
            .body(Full::new(Bytes::from(message.to_string())))
            .unwrap();
        let resp = self.send(req).await;
        if let Some(id) = resp.headers().get("mcp-session-id") {
            self.id = Some(id.to_str().unwrap().to_string());
        }
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8_lossy(&body);
        let want = message.get("id")?;
        // An SSE stream (or a plain JSON body) holding the answer.
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .chain(std::iter::once(text.as_ref()))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id") == Some(want))
    }

    async fn open(port: u16) -> Session {
        let mut s = Session::connect(port).await;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}}});
        s.post(init).await.expect("initialize answered");
        s.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        s
    }

    /// Calls a tool; returns whether it succeeded.
    async fn call(&mut self, tool: &str, args: Value) -> bool {
        self.next += 1;
        let answer = self
            .post(
                json!({"jsonrpc": "2.0", "id": self.next, "method": "tools/call",
                "params": {"name": tool, "arguments": args}}),
            )
            .await;
        answer.is_some_and(|a| a["result"]["isError"] == json!(false))
    }

    async fn close(mut self) {
        let req = Request::delete("/mcp")
            .header("host", format!("127.0.0.1:{}", self.port))
            .header("mcp-session-id", self.id.clone().unwrap_or_default())
            .header("mcp-protocol-version", "2025-06-18")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let _ = self.send(req).await.into_body().collect().await;
    }
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"bench\"\nversion = \"0\"\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("pkg")).unwrap();
    for i in 0..50 {
        std::fs::write(
            dir.path().join(format!("pkg/m{i}.py")),
            format!(
                "def double_{i}(x: int) -> int:\n    \"\"\"Doubles x.\"\"\"\n    return 2 * x\n"
            ),
        )
        .unwrap();
    }
    dir
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// The first `read` and the first `lsp hover` of `rounds` new sessions, one after another.
async fn first_calls(server: &Server, rounds: usize) -> FirstCalls {
    let mut first = FirstCalls {
        hover_ok: true,
        ..Default::default()
    };
    for i in 0..rounds {
        server.wait_ready().await;
        let mut s = Session::open(server.port).await;
        let t = Instant::now();
        assert!(
            s.call("read", json!({"path": format!("pkg/m{i}.py")}))
                .await
        );
        first.reads.push(t.elapsed());
        let t = Instant::now();
        first.hover_ok &= s
            .call(
                "lsp",
                json!({"action": "hover", "file": format!("pkg/m{i}.py"),
                "line": 1, "symbol": format!("double_{i}")}),
            )
            .await;
        first.hovers.push(t.elapsed());
        let t = Instant::now();
        assert!(
            s.call(
                "eval",
                json!({"code": "1 + 1", "description": "add two numbers for the bench"})
            )
            .await
        );
        first.evals.push(t.elapsed());
        s.close().await;
    }
    for list in [&mut first.reads, &mut first.hovers, &mut first.evals] {
        list.sort();
    }
    first
}

/// The first calls of new sessions, sorted.
#[derive(Default)]
struct FirstCalls {
    reads: Vec<Duration>,
    hovers: Vec<Duration>,
    evals: Vec<Duration>,
    hover_ok: bool,
}

async fn load(server: &Server, sessions: usize, calls: usize) {
    let opening = Instant::now();
    let opened: Vec<Session> =
        futures_join((0..sessions).map(|_| Session::open(server.port)).collect()).await;
    let open_rate = sessions as f64 / opening.elapsed().as_secs_f64();
    let started = Instant::now();
    let tasks: Vec<_> = opened
        .into_iter()
        .enumerate()
        .map(|(i, mut s)| {
            tokio::spawn(async move {
                let mut took = Vec::new();
                for c in 0..calls {
                    let t = Instant::now();
                    assert!(
                        s.call("read", json!({"path": format!("pkg/m{}.py", (i + c) % 50)}))
                            .await
                    );
                    took.push(t.elapsed());
                }
                s.close().await;
                took
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    let wall = started.elapsed();
    all.sort();
    println!(
        "  {sessions:>2} sessions: {open_rate:7.1} sessions/s opened, {:7.1} reads/s, p50 {:6.1} ms, p99 {:6.1} ms",
        all.len() as f64 / wall.as_secs_f64(),
        ms(percentile(&all, 0.5)),
        ms(percentile(&all, 0.99)),
    );
}

async fn futures_join<F: std::future::Future<Output = T> + Send + 'static, T: Send + 'static>(
    futures: Vec<F>,
) -> Vec<T> {
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

fn main() {
    // `cargo test --benches` runs this too, and `-- --smoke`: keep that run short.
    let quick = std::env::args().any(|a| a == "--quick" || a == "--smoke")
        || !std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let ws = workspace();
    println!("agent-tools serve bench ({})", binary().display());
    // `-- --shared-servers`: only the shared language servers part.
    if std::env::args().any(|a| a == "--shared-servers") {
        rt.block_on(shared_servers::run(quick));
        return;
    }
    rt.block_on(async {
        let rounds = if quick { 2 } else { 5 };
        let variants: [(&str, &[&str]); 3] = [
            ("cold", &[]),
            ("--warm 1", &["--warm", "1"]),
            (
                "--warm 1 --warm-lsp pkg/m0.py --warm-kernel python",
                &[
                    "--warm",
                    "1",
                    "--warm-lsp",
                    "pkg/m0.py",
                    "--warm-kernel",
                    "python",
                ],
            ),
        ];
        for (label, extra) in variants {
            let server = Server::start(ws.path(), extra);
            let first = first_calls(&server, rounds).await;
            println!(
                "first calls of a new session, {label}:\n  read p50 {:.1} ms; lsp hover p50 {:.0} ms{}; eval p50 {:.0} ms",
                ms(percentile(&first.reads, 0.5)),
                ms(percentile(&first.hovers, 0.5)),
                if first.hover_ok { "" } else { " (no Python language server answered)" },
                ms(percentile(&first.evals, 0.5)),
            );
        }
        let server = Server::start(ws.path(), &[]);
        println!("read under load:");
        for sessions in if quick { vec![1, 10] } else { vec![1, 10, 50] } {
            load(&server, sessions, if quick { 5 } else { 40 }).await;
        }
        drop(server);
        // A fresh server: memory freed by the load above would hide what sessions take.
        let server = Server::start(ws.path(), &[]);
        server.wait_ready().await;
        let idle = if quick { 5 } else { 40 };
        let before = server.rss_bytes();
        let mut held = Vec::new();
        for i in 0..idle {
            let mut s = Session::open(server.port).await;
            assert!(s.call("read", json!({"path": format!("pkg/m{i}.py")})).await);
            held.push(s);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let after = server.rss_bytes();
        println!(
            "resident memory: {:.1} MiB with no session, {:.0} KiB more per idle session ({idle} sessions)",
            before as f64 / 1048576.0,
            after.saturating_sub(before) as f64 / 1024.0 / idle as f64
        );
        for s in held {
            s.close().await;
        }
        drop(server);
        shared_servers::run(quick).await;
    });
}

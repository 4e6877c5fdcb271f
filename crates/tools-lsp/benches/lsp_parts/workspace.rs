//! The Cargo workspace fixture (three crates) through rust-analyzer, side by side:
//!
//! - **Memory.** One rust-analyzer started by hand on the tree (a bare JSON-RPC driver:
//!   `initialize`, open one file, one break and one fix saved) against the servers our run
//!   starts for the same steps through the tools; RSS of each process tree (the server,
//!   its proc-macro server, anything else it keeps running). Target: ours ≤ 1.1× by hand.
//! - **Diagnostics on write.** The same warm server, alternating: the server's own settle
//!   time for a saved change (from the change until its answer to a pull of the file's
//!   diagnostics or its last publish or progress report, `cargo check` included, whichever
//!   is later) against a write plus our observer's settled result. Target: p50 added time
//!   ≤ 100 ms.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tools_core::transport::{JsonRpc, Transport};
use tools_core::{CallCtx, Config, Invoker, Progress, RegistryBuilder, Run, RunOptions, Surface};
use tools_core::{WriteObserver, safe_write};
use tools_lsp::{LspConfig, LspTool, ServerSupervisor};

const LIB: &str = "crates/geometry/src/lib.rs";
const OK_SIG: &str = "pub fn area(r: &Rect) -> u32 {";
const BROKEN_SIG: &str = "pub fn area(r: &Rect, scale: u32) -> u32 {";
/// Saved changes timed per side.
const WRITES: usize = 6;
/// How long nothing may happen before a change counts as settled when watched passively.
const STILL: Duration = Duration::from_secs(4);

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// Resident memory of `pid` and every process below it, in KiB.
fn tree_rss_kib(pid: i32) -> u64 {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Ok(p) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
                continue;
            };
            // The fields after the command (which may hold spaces) start after the last ')'.
            let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
                continue;
            };
            if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|s| s.parse().ok()) {
                children.entry(ppid).or_default().push(p);
            }
        }
    }
    let mut total = 0;
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        total += std::fs::read_to_string(format!("/proc/{p}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmRSS:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|n| n.parse::<u64>().ok())
            })
            .unwrap_or(0);
        todo.extend(children.get(&p).cloned().unwrap_or_default());
    }
    total
}

fn copy_fixture(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/projects/cargo_ws");
    let mut stack = vec![from.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(&from).unwrap_or(&p).to_path_buf();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(text) = std::fs::read(&p) {
                let dest = to.join(rel);
                std::fs::create_dir_all(dest.parent().unwrap_or(to)).ok();
                std::fs::write(dest, text).ok();
            }
        }
    }
}

/// A rust-analyzer driven by a bare JSON-RPC loop, as a user would start it by hand.
struct ByHand {
    transport: Transport,
    child: tokio::process::Child,
    events: UnboundedReceiver<Value>,
    busy: std::collections::HashSet<String>,
    quiescent: bool,
}

impl ByHand {
    async fn start(root: &Path) -> Option<ByHand> {
        let mut child = tokio::process::Command::new("rust-analyzer")
            .current_dir(root)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .ok()?;
        let (stdin, stdout) = (child.stdin.take()?, child.stdout.take()?);
        let (transport, events) = Transport::start(stdout, stdin, JsonRpc);
        let uri = url::Url::from_file_path(root).ok()?.to_string();
        let init = json!({"method": "initialize", "params": {
            "processId": std::process::id(), "rootUri": uri,
            "workspaceFolders": [{"uri": uri, "name": "ws"}],
            "capabilities": {"window": {"workDoneProgress": true},
                "experimental": {"serverStatusNotification": true},
                "textDocument": {"publishDiagnostics": {"versionSupport": true}}}}});
        transport
            .request(init, Duration::from_secs(60))
            .await
            .ok()?;
        transport
            .send(json!({"method": "initialized", "params": {}}))
            .await
            .ok()?;
        Some(ByHand {
            transport,
            child,
            events,
            busy: Default::default(),
            quiescent: false,
        })
    }

    /// Handles one message from the server; returns whether it was a publish or progress.
    async fn handle(&mut self, msg: Value) -> bool {
        let method = msg["method"].as_str().unwrap_or("").to_string();
        if let Some(id) = msg.get("id") {
            let _ = self
                .transport
                .send(json!({"id": id, "result": Value::Null}))
                .await;
            return false;
        }
        match method.as_str() {
            "$/progress" => {
                let token = msg["params"]["token"].to_string();
                match msg["params"]["value"]["kind"].as_str() {
                    Some("begin") => {
                        self.busy.insert(token);
                    }
                    Some("end") => {
                        self.busy.remove(&token);
                    }
                    _ => {}
                }
                true
            }
            "experimental/serverStatus" => {
                self.quiescent = msg["params"]["quiescent"].as_bool().unwrap_or(true);
                true
            }
            "textDocument/publishDiagnostics" => true,
            _ => false,
        }
    }

    /// Waits until the server is quiescent, reports no progress and has been still for
    /// [`STILL`]; returns when its last event was.
    async fn settle(&mut self, since: Instant) -> Instant {
        let mut last = since;
        loop {
            let idle = self.quiescent && self.busy.is_empty();
            let wait = if idle {
                STILL
            } else {
                Duration::from_secs(120)
            };
            match tokio::time::timeout(wait, self.events.recv()).await {
                Ok(Some(msg)) => {
                    if self.handle(msg).await {
                        last = Instant::now();
                    }
                }
                Ok(None) => return last,
                Err(_) if idle => return last,
                Err(_) => return last,
            }
        }
    }

    async fn change_and_save(&mut self, path: &Path, version: i32, text: &str) {
        let uri = url::Url::from_file_path(path)
            .map(|u| u.to_string())
            .unwrap_or_default();
        let _ = self
            .transport
            .send(json!({"method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}}))
            .await;
        let _ = self
            .transport
            .send(
                json!({"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}}),
            )
            .await;
    }
}

/// Memory and settle time on the Cargo workspace fixture; prints both sides and ratios.
pub async fn bench_cargo_workspace() {
    if tools_core::testing::which("rust-analyzer").is_none()
        || !std::process::Command::new("rust-analyzer")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    {
        eprintln!("lsp bench: rust-analyzer is not usable here; run `cargo xtask setup`");
        return;
    }
    let Ok(hand_dir) = tempfile::tempdir() else {
        return;
    };
    let Ok(our_dir) = tempfile::tempdir() else {
        return;
    };
    copy_fixture(hand_dir.path());
    copy_fixture(our_dir.path());
    let ok = std::fs::read_to_string(hand_dir.path().join(LIB)).unwrap_or_default();
    let broken = ok.replace(OK_SIG, BROKEN_SIG);

    // By hand: load, open, one break and one fix saved.
    let hand_root = hand_dir.path().canonicalize().unwrap_or_default();
    let hand_lib = hand_root.join(LIB);
    let Some(mut hand) = ByHand::start(&hand_root).await else {
        eprintln!("lsp bench: rust-analyzer did not start by hand");
        return;
    };
    let lib_uri = url::Url::from_file_path(&hand_lib)
        .map(|u| u.to_string())
        .unwrap_or_default();
    let _ = hand
        .transport
        .send(
            json!({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": lib_uri, "languageId": "rust", "version": 1, "text": ok}}}),
        )
        .await;
    hand.settle(Instant::now()).await;
    for (v, text) in [(2, &broken), (3, &ok)] {
        std::fs::write(&hand_lib, text).ok();
        hand.change_and_save(&hand_lib, v, text).await;
        hand.settle(Instant::now()).await;
    }
    let hand_rss = hand.child.id().map(|p| tree_rss_kib(p as i32)).unwrap_or(0);
    let _ = hand.child.kill().await;
    drop(hand);

    // Ours: the same steps through the tools, then the timed writes.
    let Ok(run) = Run::new(RunOptions {
        root: our_dir.path().into(),
        conversation_id: "bench-ws".into(),
        config: Config::empty(),
        trusted: true,
    }) else {
        return;
    };
    let cfg = LspConfig {
        index_wait_ms: 180_000,
        diagnostics_wait_ms: 120_000,
        // As the run: rust-analyzer checks on save, as the hand-started one does.
        trusted: run.trusted(),
        ..Default::default()
    };
    let sup = ServerSupervisor::new(&run, cfg);
    run.workspace().pre_write_images().enable();
    let Ok(reg) = RegistryBuilder::new(Arc::clone(&run))
        .tool(Arc::new(LspTool::new(Arc::clone(&sup))))
        .build()
    else {
        return;
    };
    let observer = tools_lsp::observer::DiagnosticsOnWrite::new(Arc::clone(&sup));
    let ctx = CallCtx {
        run: Arc::clone(&run),
        surface: Surface::FULL,
        invoker: Invoker::detached(Surface::FULL),
        progress: Progress::none(),
        cancel: run.cancellation().child_token(),
    };
    let lib: PathBuf = run.root().join(LIB);
    let _ = reg
        .call(
            Surface::FULL,
            "lsp",
            json!({"action": "diagnostics", "file": LIB}),
        )
        .await;
    let write_ours = |text: &str| {
        let _ = safe_write::write_file(run.workspace(), &lib, text.as_bytes());
    };
    for text in [&broken, &ok] {
        write_ours(text);
        let _ = observer.after_write(&ctx, std::slice::from_ref(&lib)).await;
    }
    let ours_rss: u64 = sup.running().iter().map(|c| tree_rss_kib(c.pid())).sum();
    let servers = sup.running().len();

    // Settle times on the same warm server, alternating who writes (each side breaks and
    // fixes equally often).
    let Some(client) = sup.running().into_iter().next() else {
        return;
    };
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for i in 0..WRITES * 2 {
        let text = if i % 2 == 0 { &broken } else { &ok };
        if matches!(i % 4, 0 | 3) {
            // The server alone: change and save, then watch until it is still.
            std::fs::write(&lib, text).ok();
            let t = Instant::now();
            tracing::debug!("timed: the server alone");
            let (seq, begun) = (client.publish_seq(), client.activity().progress_begun);
            // What an editor does: change, save, and (rust-analyzer answers pulls) ask
            // for the file's diagnostics; the server's settle time covers that answer.
            let mut answered = t;
            if let Ok(doc) = client.sync_file(&lib).await {
                let _ = client.did_save(&doc).await;
                if client.pulls_diagnostics() {
                    let _ = client.pull_diagnostics(&doc).await;
                }
                answered = Instant::now();
                if std::env::var_os("LSP_BENCH_VERBOSE").is_some() {
                    eprintln!(
                        "raw change: version {} changed {}",
                        doc.version, doc.changed
                    );
                }
            }
            let mut rx = client.events();
            loop {
                let a = client.activity();
                let idle = !a.progress_active && a.quiescent != Some(false);
                if idle && a.last_event + STILL <= Instant::now() && t + STILL <= Instant::now() {
                    if std::env::var_os("LSP_BENCH_VERBOSE").is_some() {
                        eprintln!(
                            "raw settle: {} publishes, {} progress reports, last event after {:?}",
                            client.publish_seq() - seq,
                            a.progress_begun - begun,
                            a.last_event.checked_duration_since(t)
                        );
                    }
                    raw.push(a.last_event.max(answered).saturating_duration_since(t));
                    break;
                }
                let _ = tokio::time::timeout(Duration::from_millis(200), rx.changed()).await;
            }
        } else {
            let t = Instant::now();
            tracing::debug!("timed: write and observer");
            write_ours(text);
            let _ = observer.after_write(&ctx, std::slice::from_ref(&lib)).await;
            ours.push(t.elapsed());
            // Let stragglers land before the server-alone side starts its clock.
            tokio::time::sleep(STILL).await;
        }
    }
    run.close().await;

    let (r, o) = (p50(raw), p50(ours));
    let over = o.saturating_sub(r);
    println!("cargo workspace fixture (3 crates), rust-analyzer:");
    println!(
        "  memory      by hand {:>8.1} MiB (1 server)   ours {:>8.1} MiB ({servers} server(s))   ratio {:.2}x (target <= 1.10x): {}",
        hand_rss as f64 / 1024.0,
        ours_rss as f64 / 1024.0,
        ours_rss as f64 / (hand_rss.max(1)) as f64,
        if (ours_rss as f64) <= 1.1 * hand_rss as f64 {
            "met"
        } else {
            "NOT met"
        }
    );
    println!(
        "  on write    server settles {:>8.1} ms   write+observer {:>8.1} ms   added {:>7.1} ms   ratio {:.2}x (p50 of {WRITES}; target added <= 100 ms): {}",
        ms(r),
        ms(o),
        ms(over),
        ms(o) / ms(r).max(0.001),
        if over <= Duration::from_millis(100) {
            "met"
        } else {
            "NOT met"
        }
    );
}

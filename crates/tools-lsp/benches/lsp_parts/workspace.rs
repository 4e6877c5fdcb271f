//! The Cargo workspace fixture (three crates) through rust-analyzer, side by side: one
//! rust-analyzer started by hand on the tree (a bare JSON-RPC driver: `initialize`, open one
//! file, one break and one fix saved) against the servers our run starts for the same steps
//! through the tools; RSS of each process tree (the server, its proc-macro server, anything
//! else it keeps running). Target: ours ≤ 1.1× by hand. (The time diagnostics on write add
//! on this fixture is measured with the others, in the `on_write` module.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tools_core::transport::{JsonRpc, Transport};
use tools_core::{Config, RegistryBuilder, Run, RunOptions, Surface};
use tools_core::{WriteObserver, safe_write};
use tools_lsp::{LspConfig, LspTool, ServerSupervisor};

const LIB: &str = "crates/geometry/src/lib.rs";
const OK_SIG: &str = "pub fn area(r: &Rect) -> u32 {";
const BROKEN_SIG: &str = "pub fn area(r: &Rect, scale: u32) -> u32 {";
/// How long nothing may happen before a change counts as settled when watched passively.
const STILL: Duration = Duration::from_secs(4);
/// Starts measured per side.
const SAMPLES: usize = 3;

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
        let uri = tools_core::platform::path_to_file_uri(root)
            .ok()?
            .to_string();
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
        let uri = tools_core::platform::path_to_file_uri(path)
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

/// The fixture copied to a fresh folder, and the library file's text and its broken form.
fn fixture_copy() -> Option<(tempfile::TempDir, String, String)> {
    let dir = tempfile::tempdir().ok()?;
    crate::on_write::copy_fixture("cargo_ws", dir.path());
    let ok = std::fs::read_to_string(dir.path().join(LIB)).ok()?;
    let broken = ok.replace(OK_SIG, BROKEN_SIG);
    Some((dir, ok, broken))
}

/// One rust-analyzer driven by hand: load, open, one break and one fix saved; its RSS.
async fn hand_sample() -> Option<u64> {
    let (hand_dir, ok, broken) = fixture_copy()?;
    // By hand: load, open, one break and one fix saved.
    let hand_root = hand_dir.path().canonicalize().unwrap_or_default();
    let hand_lib = hand_root.join(LIB);
    let Some(mut hand) = ByHand::start(&hand_root).await else {
        eprintln!("lsp bench: rust-analyzer did not start by hand");
        return None;
    };
    let lib_uri = tools_core::platform::path_to_file_uri(&hand_lib)
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
    Some(hand_rss)
}

/// Our servers for the same steps through the tools: RSS and how many servers ran.
async fn ours_sample() -> Option<(u64, usize)> {
    let (our_dir, ok, broken) = fixture_copy()?;
    // The same steps through the tools.
    let Ok(run) = Run::new(RunOptions {
        root: our_dir.path().into(),
        conversation_id: "bench-ws".into(),
        config: Config::empty(),
        trusted: true,
    }) else {
        return None;
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
        return None;
    };
    let observer = tools_lsp::observer::DiagnosticsOnWrite::new(Arc::clone(&sup));
    let ctx = crate::on_write::call_ctx(&run);
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
    // Measured after the same quiet moment as the hand-started server's last step (its
    // settle ends with STILL of silence): a `cargo check` child that has not quite exited
    // would otherwise count on one side only.
    tokio::time::sleep(STILL).await;
    let ours_rss: u64 = sup.running().iter().map(|c| tree_rss_kib(c.pid())).sum();
    let servers = sup.running().len();

    run.close().await;
    Some((ours_rss, servers))
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Memory on the Cargo workspace fixture, both sides sampled in turn [`SAMPLES`] times
/// (rust-analyzer's RSS moves by ±5% from one start to the next); prints the medians, the
/// range and the ratio.
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
    let mut hand = Vec::new();
    let mut ours = Vec::new();
    let mut servers = 0;
    for _ in 0..SAMPLES {
        if let Some(h) = hand_sample().await {
            hand.push(h);
        }
        if let Some((o, n)) = ours_sample().await {
            ours.push(o);
            servers = servers.max(n);
        }
    }
    if hand.is_empty() || ours.is_empty() {
        return;
    }
    let mib = |k: u64| k as f64 / 1024.0;
    let range = |v: &[u64]| {
        format!(
            "{:.0}-{:.0}",
            mib(*v.iter().min().unwrap_or(&0)),
            mib(*v.iter().max().unwrap_or(&0))
        )
    };
    let (h, o) = (median(hand.clone()), median(ours.clone()));
    println!(
        "cargo workspace fixture (3 crates), rust-analyzer (median of {SAMPLES} starts each):"
    );
    println!(
        "  memory      by hand {:>8.1} MiB ({} MiB, 1 server)   ours {:>8.1} MiB ({} MiB, {servers} server(s))   ratio {:.2}x (target <= 1.10x): {}",
        mib(h),
        range(&hand),
        mib(o),
        range(&ours),
        o as f64 / (h.max(1)) as f64,
        if (o as f64) <= 1.1 * h as f64 {
            "met"
        } else {
            "NOT met"
        }
    );
}

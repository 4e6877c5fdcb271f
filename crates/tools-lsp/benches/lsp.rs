//! `cargo bench -p tools-lsp --bench lsp` (or `cargo xtask bench lsp`): the added latency
//! of the `lsp` tool over a raw JSON-RPC round trip to the same warm server (hover,
//! definition, references), of diagnostics on write over the server's own time to publish
//! for the new version (pyright, one file), and of a preview of a change against the same
//! change written with diagnostics on write, and of a symbol edit (`edit` with `symbol` and
//! `body`) against the same change as a string edit (the `symbol_edit` module); then, on the Cargo workspace fixture, the
//! memory of our servers against one rust-analyzer started by hand (the `workspace`
//! module); then, on the five project fixtures, the added time of diagnostics on write over
//! each server's own settle time (pyright, tsserver, gopls, clangd, rust-analyzer: the
//! `on_write` module).
//! Targets: p50 overhead ≤ 2 ms for queries, ≤ 100 ms for diagnostics on write; a preview
//! ≤ 1.2× the write; a symbol edit ≤ 1.2× the string edit; memory ≤ 1.1× the hand-started
//! server.
//! `-- --smoke` runs the pyright part once (three writes, the first two left out as always)
//! and judges nothing; a missing pyright is then a failure instead of a skip. The memory
//! and project-fixture parts are left out of it: they start a server per trial.

#[path = "lsp_parts/on_write.rs"]
mod on_write;
#[path = "lsp_parts/symbol_edit.rs"]
mod symbol_edit;
#[path = "lsp_parts/workspace.rs"]
mod workspace;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::{Config, ProposedFile, RegistryBuilder, Run, RunOptions, Surface, WriteObserver};
use tools_lsp::client::path_to_uri;
use tools_lsp::{LspConfig, LspTool, ServerSupervisor};

const ITER: usize = 30;
/// The pause before each timed write on either side.
const PAUSE: Duration = Duration::from_millis(500);

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap_or(root)).ok();
    std::fs::write(p, text).ok();
}

/// `-- --smoke`: one short trial of every measure, to show the bench runs.
fn smoke() -> bool {
    std::env::args().any(|a| a == "--smoke")
}

#[tokio::main]
async fn main() {
    // `RUST_LOG=tools_lsp=debug,tools_lsp::wire=trace` shows every settle and message, timed.
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .try_init();
    }
    // `LSP_BENCH_ONLY=workspace` (memory on the Cargo workspace) or `on_write` (the project
    // fixtures) runs that part alone (`symbol_edit` too, below, once the server is set up).
    match std::env::var("LSP_BENCH_ONLY").as_deref() {
        Ok("workspace") => return workspace::bench_cargo_workspace().await,
        Ok("on_write") => return on_write::bench_on_write_fixtures().await,
        _ => {}
    }
    let server = ["pyright-langserver", "--stdio"];
    if tools_core::testing::which(server[0]).is_none() {
        eprintln!(
            "lsp bench: {} is not on PATH; run `cargo xtask setup`",
            server[0]
        );
        if smoke() {
            std::process::exit(1);
        }
        return;
    }
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("lsp bench: no temp dir: {e}");
            return;
        }
    };
    let root = dir.path();
    write(
        root,
        "pyproject.toml",
        "[project]\nname = \"b\"\nversion = \"0\"\n",
    );
    let mut util = String::new();
    for i in 0..40 {
        util.push_str(&format!(
            "def helper_{i}(x: int) -> int:\n    \"\"\"Helper {i}.\"\"\"\n    return x + {i}\n\n\n"
        ));
    }
    write(root, "pkg/__init__.py", "");
    write(root, "pkg/util.py", &util);
    let mut main = String::from("from pkg.util import helper_7\n\n");
    for i in 0..30 {
        main.push_str(&format!("v{i} = helper_7({i})\n"));
    }
    write(root, "main.py", &main);
    let run = match Run::new(RunOptions {
        root: root.into(),
        conversation_id: "bench".into(),
        config: Config::empty(),
        trusted: true,
    }) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lsp bench: {e}");
            return;
        }
    };
    let cfg = LspConfig {
        servers: [(
            "python".to_string(),
            tools_lsp::config::ServerOverride {
                command: Some(server.iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let sup = ServerSupervisor::new(&run, cfg);
    let reg = match RegistryBuilder::new(Arc::clone(&run))
        .tool(Arc::new(LspTool::new(Arc::clone(&sup))))
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("lsp bench: {e}");
            return;
        }
    };
    // `LSP_BENCH_ONLY=symbol_edit`: the symbol edit against the string edit alone.
    if std::env::var("LSP_BENCH_ONLY").as_deref() == Ok("symbol_edit") {
        symbol_edit::bench_symbol_edit(&run, &sup).await;
        run.close().await;
        return;
    }
    let call = |args: Value| {
        let reg = Arc::clone(&reg);
        async move { reg.call(Surface::FULL, "lsp", args).await }
    };
    // Warm up: start, index, open both files.
    for _ in 0..3 {
        let _ = call(json!({"action": "references", "file": "pkg/util.py", "line": 36, "symbol": "helper_7"})).await;
        let _ =
            call(json!({"action": "hover", "file": "main.py", "line": 3, "symbol": "helper_7"}))
                .await;
    }
    let Some(client) = sup.running().into_iter().next() else {
        eprintln!("lsp bench: the server did not start");
        return;
    };
    let main_uri = path_to_uri(&run.root().join("main.py"))
        .map(|u| u.as_str().to_string())
        .unwrap_or_default();
    let util_uri = path_to_uri(&run.root().join("pkg/util.py"))
        .map(|u| u.as_str().to_string())
        .unwrap_or_default();
    let cases: Vec<(&str, &str, Value, Value)> = vec![
        (
            "hover",
            "textDocument/hover",
            json!({"textDocument": {"uri": main_uri}, "position": {"line": 2, "character": 6}}),
            json!({"action": "hover", "file": "main.py", "line": 3, "symbol": "helper_7"}),
        ),
        (
            "definition",
            "textDocument/definition",
            json!({"textDocument": {"uri": main_uri}, "position": {"line": 2, "character": 6}}),
            json!({"action": "definition", "file": "main.py", "line": 3, "symbol": "helper_7"}),
        ),
        (
            "references",
            "textDocument/references",
            json!({"textDocument": {"uri": util_uri}, "position": {"line": 35, "character": 4}, "context": {"includeDeclaration": true}}),
            json!({"action": "references", "file": "pkg/util.py", "line": 36, "symbol": "helper_7"}),
        ),
    ];
    let iterations = if smoke() { 1 } else { ITER };
    println!(
        "lsp overhead vs a raw JSON-RPC round trip to the same warm {} (p50 of {iterations}):",
        client.server
    );
    let mut worst = Duration::ZERO;
    for (name, method, raw_params, args) in &cases {
        let mut raw = Vec::new();
        let mut ours = Vec::new();
        for _ in 0..iterations {
            let t = Instant::now();
            let r = client
                .request_raw(method, Some(raw_params.clone()), Duration::from_secs(20))
                .await;
            raw.push(t.elapsed());
            if r.is_err() {
                eprintln!("raw {name} failed: {r:?}");
            }
            let t = Instant::now();
            let r = call(args.clone()).await;
            ours.push(t.elapsed());
            if let Err(e) = r {
                eprintln!("lsp {name} failed: {e}");
            }
        }
        let (r, o) = (p50(raw), p50(ours));
        let over = o.saturating_sub(r);
        worst = worst.max(over);
        println!(
            "  {name:<11} raw {:>8.2} ms   lsp {:>8.2} ms   overhead {:>6.2} ms   ratio {:.2}x",
            ms(r),
            ms(o),
            ms(over),
            ms(o) / ms(r).max(0.001)
        );
    }
    println!(
        "  worst p50 overhead {:.2} ms (target <= 2 ms): {}",
        ms(worst),
        if worst <= Duration::from_millis(2) {
            "met"
        } else {
            "NOT met"
        }
    );

    // Diagnostics on write: ours (write + observer) vs the server's own publish time for
    // the same change (didChange → publish of that version), alternating two contents.
    let observer = tools_lsp::observer::DiagnosticsOnWrite::new(Arc::clone(&sup));
    let ctx = crate::on_write::call_ctx(&run);
    let target = run.root().join("w.py");
    let raw_target = run.root().join("raw.py");
    let n = if smoke() { 3 } else { 12 };
    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for i in 0..n {
        let text = if i % 2 == 0 {
            format!("x = 1\nprint(undefined_{i})\n")
        } else {
            format!("x = {i}\nprint(x)\n")
        };
        // Each side starts on a server that has been quiet for a moment, as a write an
        // agent makes seconds after its last one does (the other side's publish must not
        // count against this one).
        tokio::time::sleep(PAUSE).await;
        // The server alone: change the document, wait for its publish for that version.
        std::fs::write(&raw_target, &text).ok();
        let t = Instant::now();
        let before = client.publish_seq();
        if let Ok(doc) = client.sync_file(&raw_target).await {
            let _ = client
                .wait_publish(&raw_target, doc.version, before, Duration::from_secs(10))
                .await;
        }
        raw.push(t.elapsed());
        tokio::time::sleep(PAUSE).await;
        // Ours: write the file, then the observer as the registry runs it.
        let t = Instant::now();
        std::fs::write(&target, &text).ok();
        let _ = observer
            .after_write(&ctx, std::slice::from_ref(&target))
            .await;
        ours.push(t.elapsed());
    }
    // The first write of each file opens it: leave it out.
    let (r, o) = (p50(raw[2..].to_vec()), p50(ours[2..].to_vec()));
    let over = o.saturating_sub(r);
    println!("diagnostics on write (p50 of {}):", n - 2);
    println!(
        "  server publish {:>8.2} ms   write+observer {:>8.2} ms   overhead {:>6.2} ms (target <= 100 ms): {}",
        ms(r),
        ms(o),
        ms(over),
        if over <= Duration::from_millis(100) {
            "met"
        } else {
            "NOT met"
        }
    );

    // Preview against write, same server, same change, one run: a caller in another file
    // breaks and is fixed again. The preview's answer is timed; its restore (the server
    // back on the disk's text, which it finishes after answering) is waited for before
    // the write is timed, so the write does not pay for it, and timed on its own.
    write(
        root,
        "shapes.py",
        "def area(w: int, h: int) -> int:\n    return w * h\n",
    );
    write(
        root,
        "use_shapes.py",
        "from shapes import area\n\nprint(area(2, 3))\n",
    );
    let shapes = run.root().join("shapes.py");
    let ok = "def area(w: int, h: int) -> int:\n    return w * h\n".to_string();
    let broken = "def area(w: int, h: int, d: int) -> int:\n    return w * h * d\n".to_string();
    let _ = observer
        .after_write(&ctx, std::slice::from_ref(&shapes))
        .await;
    let mut previews = Vec::new();
    let mut restores = Vec::new();
    let mut writes = Vec::new();
    for i in 0..n {
        let text = if i % 2 == 0 { &broken } else { &ok };
        let proposed = [ProposedFile {
            path: shapes.clone(),
            text: text.clone(),
        }];
        let t = Instant::now();
        let report = observer.preview(&ctx, &proposed).await;
        previews.push(t.elapsed());
        let t = Instant::now();
        drop(client.observation().await);
        restores.push(t.elapsed());
        if i == 2 {
            println!(
                "  (a preview answer: {})",
                report.text().unwrap_or_default().replace('\n', " | ")
            );
        }
        let t = Instant::now();
        std::fs::write(&shapes, text).ok();
        let _ = observer
            .after_write(&ctx, std::slice::from_ref(&shapes))
            .await;
        writes.push(t.elapsed());
    }
    let (pv, rs, wr) = (
        p50(previews[2..].to_vec()),
        p50(restores[2..].to_vec()),
        p50(writes[2..].to_vec()),
    );
    let ratio = ms(pv) / ms(wr).max(0.001);
    println!(
        "preview vs write with diagnostics on write (p50 of {}, {}):",
        n - 2,
        client.server
    );
    println!(
        "  preview {:>8.2} ms   write+observer {:>8.2} ms   ratio {ratio:.2}x (target <= 1.2x): {}   restore after the answer {:>8.2} ms",
        ms(pv),
        ms(wr),
        if ratio <= 1.2 { "met" } else { "NOT met" },
        ms(rs),
    );
    symbol_edit::bench_symbol_edit(&run, &sup).await;
    run.close().await;
    if smoke() {
        return;
    }

    workspace::bench_cargo_workspace().await;
    on_write::bench_on_write_fixtures().await;
}

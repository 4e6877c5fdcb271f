//! Diagnostics on write on the project fixtures, one real server each, side by side on the
//! same warm server:
//!
//! - **The server alone**: the file changed on disk, `didChange` and `didSave` sent (and
//!   the file's diagnostics pulled, for a server that answers pulls), as an editor does;
//!   then watched passively until nothing has happened for [`STILL`]. Its settle time runs
//!   from the change to its last publish, progress report or answer: known only in
//!   hindsight.
//! - **Ours**: the safe writer, then the observer as the registry runs it after a write, up
//!   to its answer (which must know, without hindsight, that the server is done).
//!
//! The edit breaks a function's signature used by callers in other files, then restores
//! it, alternately; each side breaks and fixes equally often. The first writes (which open
//! the importers for servers that check only open documents) are warm-up. Target: p50 added
//! time ≤ 100 ms for every server.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tools_core::{CallCtx, Config, Invoker, Progress, RegistryBuilder, Run, RunOptions, Surface};
use tools_core::{WriteObserver, safe_write};
use tools_lsp::config::ServerOverride;
use tools_lsp::{LspConfig, LspTool, ServerSupervisor};

/// Saved changes timed per side.
const WRITES: usize = 6;
/// How long nothing may happen before the server alone counts as settled (longer than any
/// server's own delay before it checks a change: tsserver waits up to 800 ms).
const STILL: Duration = Duration::from_millis(2500);

/// One fixture, its server and the edit.
pub struct Case {
    /// What the line says.
    pub name: &'static str,
    /// The folder under `tests/fixtures/projects`.
    pub fixture: &'static str,
    /// The server group that serves `file`.
    pub language: &'static str,
    /// The server's command, when the built-in table's first choice is not the one meant.
    pub command: Option<&'static [&'static str]>,
    /// The file written.
    pub file: &'static str,
    /// The signature as the fixture has it, and broken.
    pub ok: &'static str,
    pub broken: &'static str,
}

/// The five project fixtures, and two that already have errors, side by side with the
/// clean ones: a strict-mode package of 36 modules with a missing optional dependency, and
/// a Go module with a package that does not build and a vet finding.
pub const CASES: [Case; 7] = [
    Case {
        name: "python package (pyright)",
        fixture: "py_src",
        language: "python",
        command: Some(&["pyright-langserver", "--stdio"]),
        file: "src/shapes/geometry.py",
        ok: "def area(r: Rect) -> int:",
        broken: "def area(r: Rect, scale: int) -> int:",
    },
    Case {
        name: "noisy python package (pyright)",
        fixture: "py_noisy",
        language: "python",
        command: Some(&["pyright-langserver", "--stdio"]),
        file: "src/ledgerkit/core.py",
        ok: "def total(xs: list[int]) -> int:\n    return sum(xs)\n",
        broken: "def total(xs: list[int], scale: int) -> int:\n    return sum(xs) * scale\n",
    },
    Case {
        name: "TS library (tsserver)",
        fixture: "ts_lib",
        language: "typescript",
        command: None,
        file: "src/geometry.ts",
        ok: "export function area(r: Rect): number {",
        broken: "export function area(r: Rect, scale: number): number {",
    },
    Case {
        name: "Go module (gopls)",
        fixture: "go_mod",
        language: "go",
        command: None,
        file: "geometry/geometry.go",
        ok: "func Area(r Rect) int {",
        broken: "func Area(r Rect, scale int) int {",
    },
    Case {
        name: "noisy Go module (gopls)",
        fixture: "go_noisy",
        language: "go",
        command: None,
        file: "ledger/total.go",
        ok: "func Total(xs []int) int {",
        broken: "func Total(xs []int, scale int) int {",
    },
    Case {
        name: "C library (clangd)",
        fixture: "c_lib",
        language: "c",
        command: Some(&["clangd"]),
        file: "include/shapes.h",
        ok: "int rect_area(const struct rect *r);",
        broken: "int rect_area(const struct rect *r, int scale);",
    },
    Case {
        name: "Cargo workspace (rust-analyzer)",
        fixture: "cargo_ws",
        language: "rust",
        command: None,
        file: "crates/geometry/src/lib.rs",
        ok: "pub fn area(r: &Rect) -> u32 {",
        broken: "pub fn area(r: &Rect, scale: u32) -> u32 {",
    },
];

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

/// A call context for `run` as the registry gives a tool on the full surface.
pub fn call_ctx(run: &Arc<Run>) -> CallCtx {
    CallCtx {
        run: Arc::clone(run),
        surface: Surface::FULL,
        invoker: Invoker::detached(Surface::FULL),
        progress: Progress::none(),
        cancel: run.cancellation().child_token(),
    }
}

/// Copies a project fixture to `to`; `NAME.in` files become `NAME` with `@ROOT@` replaced
/// by the copy's root (`compile_commands.json`).
pub fn copy_fixture(fixture: &str, to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/projects")
        .join(fixture);
    let mut stack = vec![from.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(&from).unwrap_or(&p).to_path_buf();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Ok(text) = std::fs::read(&p) else {
                continue;
            };
            let (dest, text) = match rel.to_string_lossy().strip_suffix(".in") {
                Some(name) => (
                    to.join(name),
                    String::from_utf8_lossy(&text)
                        .replace("@ROOT@", &to.display().to_string())
                        .into_bytes(),
                ),
                None => (to.join(&rel), text),
            };
            std::fs::create_dir_all(dest.parent().unwrap_or(to)).ok();
            std::fs::write(dest, text).ok();
        }
    }
}

/// The server's own settle time and ours, p50 each, for one case; `None` when the server
/// is not usable here.
pub async fn time_case(case: &Case) -> Option<(Duration, Duration, Duration)> {
    let dir = tempfile::tempdir().ok()?;
    let root = dir.path().canonicalize().ok()?;
    copy_fixture(case.fixture, &root);
    let run = Run::new(RunOptions {
        root: root.clone(),
        conversation_id: format!("bench-{}", case.fixture),
        config: Config::empty(),
        trusted: true,
    })
    .ok()?;
    let mut cfg = LspConfig {
        index_wait_ms: 180_000,
        diagnostics_wait_ms: 60_000,
        trusted: run.trusted(),
        ..Default::default()
    };
    if let Some(command) = case.command {
        cfg.servers.insert(
            case.language.to_string(),
            ServerOverride {
                command: Some(command.iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            },
        );
    }
    let sup = ServerSupervisor::new(&run, cfg);
    run.workspace().pre_write_images().enable();
    let reg = RegistryBuilder::new(Arc::clone(&run))
        .tool(Arc::new(LspTool::new(Arc::clone(&sup))))
        .build()
        .ok()?;
    let observer = tools_lsp::observer::DiagnosticsOnWrite::new(Arc::clone(&sup));
    let ctx = call_ctx(&run);
    let file: PathBuf = root.join(case.file);
    let ok = std::fs::read_to_string(&file).ok()?;
    let broken = ok.replace(case.ok, case.broken);
    if ok == broken {
        eprintln!("lsp bench: {}: the edit does not apply", case.name);
        return None;
    }
    let answer = reg
        .call(
            Surface::FULL,
            "lsp",
            json!({"action": "diagnostics", "file": case.file}),
        )
        .await;
    if let Err(e) = answer {
        eprintln!("lsp bench: {}: {e}", case.name);
        return None;
    }
    let write_ours = |text: &str| {
        let _ = safe_write::write_file(run.workspace(), &file, text.as_bytes());
    };
    // Warm-up: the first break and fix open what the observer opens. The first is timed
    // on its own: an agent's first write to a file the server has not opened.
    let mut first = Duration::ZERO;
    for text in [&broken, &ok] {
        let t = Instant::now();
        write_ours(text);
        let _ = observer
            .after_write(&ctx, std::slice::from_ref(&file))
            .await;
        if first.is_zero() {
            first = t.elapsed();
        }
    }
    let client = sup
        .running()
        .into_iter()
        .find(|c| c.language == case.language)?;
    tokio::time::sleep(STILL).await;

    let mut raw = Vec::new();
    let mut ours = Vec::new();
    for i in 0..WRITES * 2 {
        let text = if i % 2 == 0 { &broken } else { &ok };
        if matches!(i % 4, 0 | 3) {
            tracing::debug!(target: "tools_lsp::bench", "timed: {} alone", client.server);
            std::fs::write(&file, text).ok();
            let t = Instant::now();
            let mut answered = t;
            if let Ok(doc) = client.sync_file(&file).await {
                let _ = client.did_save(&doc).await;
                if client.pulls_diagnostics() {
                    let _ = client.pull_diagnostics(&doc).await;
                }
                answered = Instant::now();
            }
            let mut rx = client.events();
            loop {
                let a = client.activity();
                let idle = !a.progress_active && a.quiescent != Some(false);
                let now = Instant::now();
                if idle && a.last_event + STILL <= now && t + STILL <= now {
                    raw.push(a.last_event.max(answered).saturating_duration_since(t));
                    break;
                }
                let _ = tokio::time::timeout(Duration::from_millis(100), rx.changed()).await;
            }
        } else {
            tracing::debug!(target: "tools_lsp::bench", "timed: write and observer");
            let t = Instant::now();
            write_ours(text);
            let _ = observer
                .after_write(&ctx, std::slice::from_ref(&file))
                .await;
            ours.push(t.elapsed());
            // Let stragglers land before the other side starts its clock.
            tokio::time::sleep(STILL).await;
        }
    }
    run.close().await;
    Some((p50(raw), p50(ours), first))
}

/// Times every case whose server is here; prints a line per case.
pub async fn bench_on_write_fixtures() {
    println!(
        "diagnostics on write, project fixtures (p50 of {WRITES} per side; target added <= 100 ms):"
    );
    // `LSP_BENCH_FIXTURE=go_mod` times that fixture alone.
    let only = std::env::var("LSP_BENCH_FIXTURE").ok();
    for case in CASES
        .iter()
        .filter(|c| only.as_deref().is_none_or(|f| f == c.fixture))
    {
        let Some((r, o, first)) = time_case(case).await else {
            println!("  {:<32} skipped: its server is not usable here", case.name);
            continue;
        };
        let over = o.saturating_sub(r);
        println!(
            "  {:<32} server settles {:>7.1} ms   write+observer {:>7.1} ms   added {:>7.1} ms   ratio {:.2}x: {}   (first write, opening the file: {:.1} ms)",
            case.name,
            ms(r),
            ms(o),
            ms(over),
            ms(o) / ms(r).max(0.001),
            if over <= Duration::from_millis(100) {
                "met"
            } else {
                "NOT met"
            },
            ms(first),
        );
    }
}

//! A one-file write with diagnostics on write, as an agent's `write` gets it: the safe
//! writer (a locked temp file, the file and its folder flushed; a single file is never
//! journaled) followed by the diagnostics observer with a real pyright, against a plain
//! unflushed write followed by the same observer. The two sides alternate over two files
//! of one project on one warm server; each write switches its file between a clean text
//! and one with an error, so every write really changes what the server reports.
//! Target: ≤ 1.1× the plain side.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tools_core::{
    CallCtx, Config, Invoker, Progress, Run, RunOptions, Surface, WriteObserver, safe_write,
};
use tools_lsp::{DiagnosticsOnWrite, LspConfig, ServerSupervisor};

/// The pause before each timed write, so one side's late publish never lands in the other's.
const PAUSE: Duration = Duration::from_millis(500);

const SERVER: [&str; 2] = ["pyright-langserver", "--stdio"];

fn text(round: usize) -> String {
    if round.is_multiple_of(2) {
        format!("from util import compute\n\nprint(compute({round}) + undefined_{round})\n")
    } else {
        format!("from util import compute\n\nprint(compute({round}))\n")
    }
}

/// Runs the part; `None` when pyright is not on PATH (said on stderr).
pub fn bench(trials: usize) -> Option<(Vec<Duration>, Vec<Duration>)> {
    if tools_core::testing::which(SERVER[0]).is_none() {
        eprintln!(
            "fs bench: {} is not on PATH, so the write with diagnostics was not measured; run `cargo xtask setup`",
            SERVER[0]
        );
        return None;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    Some(runtime.block_on(measure(trials)))
}

async fn measure(trials: usize) -> (Vec<Duration>, Vec<Duration>) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(
        root.join("pyproject.toml"),
        "[project]\nname = \"b\"\nversion = \"0\"\n",
    )
    .unwrap();
    std::fs::write(
        root.join("util.py"),
        "def compute(x: int) -> int:\n    return x * 2\n",
    )
    .unwrap();
    let run = Run::new(RunOptions {
        root: root.into(),
        conversation_id: "fs-bench".into(),
        config: Config::empty(),
        trusted: true,
    })
    .unwrap();
    let cfg = LspConfig {
        servers: [(
            "python".to_string(),
            tools_lsp::ServerOverride {
                command: Some(SERVER.iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            },
        )]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let sup = ServerSupervisor::new(&run, cfg);
    let observer = DiagnosticsOnWrite::new(Arc::clone(&sup));
    let ctx = CallCtx {
        run: Arc::clone(&run),
        surface: Surface::FULL,
        invoker: Invoker::detached(Surface::FULL),
        progress: Progress::none(),
        cancel: run.cancellation().child_token(),
    };
    let safe_file = run.root().join("safe.py");
    let plain_file = run.root().join("plain.py");
    let safe = |path: &Path, round: usize| {
        safe_write::write_file(run.workspace(), path, text(round).as_bytes()).unwrap();
    };
    let plain = |path: &Path, round: usize| {
        std::fs::write(path, text(round)).unwrap();
    };
    // Warm-up, untimed: the server starts and opens both files.
    for round in 0..2 {
        safe(&safe_file, round);
        let _ = observer
            .after_write(&ctx, std::slice::from_ref(&safe_file))
            .await;
        plain(&plain_file, round);
        let _ = observer
            .after_write(&ctx, std::slice::from_ref(&plain_file))
            .await;
    }
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for t in 0..trials {
        let round = t + 2;
        for side in [t % 2, 1 - t % 2] {
            tokio::time::sleep(PAUSE).await;
            let start = Instant::now();
            if side == 0 {
                safe(&safe_file, round);
                let _ = observer
                    .after_write(&ctx, std::slice::from_ref(&safe_file))
                    .await;
                with.push(start.elapsed());
            } else {
                plain(&plain_file, round);
                let _ = observer
                    .after_write(&ctx, std::slice::from_ref(&plain_file))
                    .await;
                without.push(start.elapsed());
            }
        }
    }
    sup.shutdown_all().await;
    run.close().await;
    (with, without)
}

//! `cargo xtask bench fs`: what the journal and the flushes cost a write, side by side with
//! the same writer without the journal, in one run, the two alternating.
//!
//! Measured on real files in a temp folder (the journal in the user's state folder, as a
//! user gets it): a change of 40 files of 2 KB applied all or nothing (the journal written
//! and flushed first, then removed) against the same 40 files read and replaced one by one
//! with the same safe writer and no journal; and a one-file change (never journaled) against
//! the bare safe write. Then a one-file write with diagnostics on write (pyright), the safe
//! writer against a plain unflushed write, each followed by the same observer (the
//! `with_diagnostics` part). Each side runs `FS_BENCH_TRIALS` times (default 15); the ratios
//! are of the medians. Targets: ≤ 1.3× for the 40-file change, ≤ 1.1× for one file with
//! diagnostics. `-- --smoke` makes a missing pyright a failure instead of a skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fs_parts/with_diagnostics.rs"]
mod with_diagnostics;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tools_core::safe_write::{
    FileChange, MAX_UNDO_BYTES, apply_all_or_nothing, read_file_if_exists, write_file_as,
};
use tools_core::{PathLocks, Workspace};

const FILES: usize = 40;

fn trials() -> usize {
    std::env::var("FS_BENCH_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15)
}

fn content(round: usize, i: usize) -> Vec<u8> {
    format!("# module {i:02}, round {round:04}\n")
        .repeat(2048 / 26)
        .into_bytes()
}

fn changes(paths: &[PathBuf], round: usize) -> Vec<FileChange> {
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| FileChange::Write {
            path: p.clone(),
            content: content(round, i),
            mode: None,
        })
        .collect()
}

/// The journaled path: what `resolve`, `lsp_rename` and `apply_patch` do now.
fn journaled(ws: &Workspace, locks: &Arc<PathLocks>, changes: &[FileChange]) -> Duration {
    let start = Instant::now();
    let guard = locks
        .lock(changes.iter().map(|c| c.path().to_path_buf()))
        .unwrap();
    apply_all_or_nothing(ws, &guard, changes, None).unwrap();
    start.elapsed()
}

/// The same writer without the journal: every file read (for the undo), then replaced.
fn unjournaled(ws: &Workspace, locks: &Arc<PathLocks>, changes: &[FileChange]) -> Duration {
    let start = Instant::now();
    let _guard = locks
        .lock(changes.iter().map(|c| c.path().to_path_buf()))
        .unwrap();
    let mut before = Vec::new();
    for c in changes {
        before.push(read_file_if_exists(ws, c.path(), MAX_UNDO_BYTES).unwrap());
    }
    for c in changes {
        if let FileChange::Write { path, content, .. } = c {
            write_file_as(ws, path, content, None).unwrap();
        }
    }
    drop(before);
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms_list(v: &[Duration]) -> String {
    v.iter()
        .map(|d| format!("{:.2}", d.as_secs_f64() * 1e3))
        .collect::<Vec<_>>()
        .join(" ")
}

fn side_by_side(
    what: &str,
    ws: &Workspace,
    locks: &Arc<PathLocks>,
    paths: &[PathBuf],
    target: f64,
) -> f64 {
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for t in 0..trials() {
        // Alternate which side goes first, so a slow spell of the machine hits both.
        let (a, b) = (changes(paths, 2 * t + 1), changes(paths, 2 * t + 2));
        if t % 2 == 0 {
            with.push(journaled(ws, locks, &a));
            without.push(unjournaled(ws, locks, &b));
        } else {
            without.push(unjournaled(ws, locks, &b));
            with.push(journaled(ws, locks, &a));
        }
    }
    let (w, wo) = (median(with.clone()), median(without.clone()));
    let ratio = w.as_secs_f64() / wo.as_secs_f64();
    println!("{what}:");
    println!("  journaled   trials (ms): {}", ms_list(&with));
    println!("  unjournaled trials (ms): {}", ms_list(&without));
    println!(
        "  median {:.2} ms vs {:.2} ms: {ratio:.2}x (target <= {target}x) {}",
        w.as_secs_f64() * 1e3,
        wo.as_secs_f64() * 1e3,
        if ratio <= target { "ok" } else { "OVER" }
    );
    ratio
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let locks = Arc::new(PathLocks::default());
    let paths: Vec<PathBuf> = (0..FILES)
        .map(|i| ws.root().join(format!("pkg/m{i:02}.py")))
        .collect();
    std::fs::create_dir_all(ws.root().join("pkg")).unwrap();
    for (i, p) in paths.iter().enumerate() {
        std::fs::write(p, content(0, i)).unwrap();
    }
    println!(
        "fs bench: {FILES} files of {} bytes, {} trials per side, journal in {}",
        content(0, 0).len(),
        trials(),
        tools_core::journal_dir(ws.root())
            .map(|d| d.display().to_string())
            .unwrap_or_else(|| "(no state folder)".into())
    );
    let many = side_by_side(
        "a 40-file change (resolve, lsp_rename, apply_patch)",
        &ws,
        &locks,
        &paths,
        1.3,
    );
    let one = side_by_side(
        "a one-file change (never journaled)",
        &ws,
        &locks,
        &paths[..1],
        1.1,
    );
    if let Some(d) = tools_core::journal_dir(ws.root()) {
        let _ = std::fs::remove_dir_all(d);
    }
    let Some((with, without)) = with_diagnostics::bench(trials()) else {
        println!(
            "ratios: 40 files {many:.2}x, one file {one:.2}x, one file with diagnostics not measured"
        );
        if std::env::args().any(|a| a == "--smoke") {
            std::process::exit(1);
        }
        return;
    };
    let (w, wo) = (median(with.clone()), median(without.clone()));
    let with_diags = w.as_secs_f64() / wo.as_secs_f64();
    println!("a one-file write with diagnostics on write (pyright):");
    println!("  safe writer + observer trials (ms): {}", ms_list(&with));
    println!(
        "  plain write + observer trials (ms): {}",
        ms_list(&without)
    );
    println!(
        "  median {:.2} ms vs {:.2} ms: {with_diags:.2}x (target <= 1.1x) {}",
        w.as_secs_f64() * 1e3,
        wo.as_secs_f64() * 1e3,
        if with_diags <= 1.1 { "ok" } else { "OVER" }
    );
    println!(
        "ratios: 40 files {many:.2}x, one file {one:.2}x, one file with diagnostics {with_diags:.2}x"
    );
}

//! `cargo xtask bench ast`: `ast_grep` side by side with the ast-grep CLI, in one run, on the
//! machine Python's standard library (site-packages included when present).
//!
//! Measured: a selective pattern (`$X.dispose()`) and an unselective one
//! (`if $X is None: $$$B`), our first query (fresh run, empty parse cache) and our repeated
//! query (same run), against the CLI on the same pattern. Each side runs `AST_BENCH_TRIALS`
//! times (default 3), the two alternating so that a slow spell of the machine hits both, and
//! the ratios are taken of the medians. Printed: every trial, the match counts (which must
//! agree), the ratios and the targets: selective ≥ 20× faster than the CLI, unselective no
//! slower, repeated ≥ 3× faster than our first. `-- --smoke` runs one trial over the
//! library's `email` package and judges nothing; a missing standard library or CLI is then a
//! failure instead of a skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use tools_core::{RegistryBuilder, Run, RunOptions, Surface};

const SELECTIVE: &str = "$X.dispose()";
const UNSELECTIVE: &str = "if $X is None: $$$B";

fn stdlib() -> Option<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    p.is_dir().then_some(p)
}

fn cli_run(cli: &Path, dir: &Path, pattern: &str) -> (Duration, usize) {
    let start = Instant::now();
    let out = Command::new(cli)
        .args(["run", "-p", pattern, "-l", "python", "--json=stream", "."])
        .current_dir(dir)
        .output()
        .expect("run the ast-grep CLI");
    let took = start.elapsed();
    let n = out
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    (took, n)
}

fn rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map(|kb| kb / 1024)
        .unwrap_or(0)
}

struct Ours {
    first: Duration,
    repeated: Duration,
    matches: u64,
    detail: String,
}

async fn ours(root: &Path, pattern: &str) -> Ours {
    // A fresh run: empty parse cache.
    let run = Run::new(RunOptions::at(root).unwrap()).unwrap();
    let family = tools_ast::family(&run).unwrap().unwrap();
    let reg = RegistryBuilder::new(run.clone())
        .family(family)
        .build()
        .unwrap();
    let args = json!({"pattern": pattern, "language": "python"});
    let t = Instant::now();
    let out = reg
        .call(Surface::FULL, "ast_grep", args.clone())
        .await
        .unwrap();
    let first = t.elapsed();
    let s = out.structured.unwrap();
    let t = Instant::now();
    let again = reg.call(Surface::FULL, "ast_grep", args).await.unwrap();
    let repeated = t.elapsed();
    let s2 = again.structured.unwrap();
    assert_eq!(s["total_matches"], s2["total_matches"]);
    let detail = format!(
        "searched {} files, {} ruled out before parsing, {} parsed; repeat: {} trees from cache; cache {} MiB est.; RSS {} MiB",
        s["searched_files"],
        s["prefiltered_files"],
        s["parsed_files"],
        s2["cached_files"],
        s2["cache"]["bytes"].as_u64().unwrap_or(0) >> 20,
        rss_mib()
    );
    run.close().await;
    Ours {
        first,
        repeated,
        matches: s["total_matches"].as_u64().unwrap(),
        detail,
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn verdict(ok: bool) -> &'static str {
    if ok { "meets target" } else { "BELOW TARGET" }
}

/// `-- --smoke`: one short trial of every measure, to show the bench runs.
fn smoke() -> bool {
    std::env::args().any(|a| a == "--smoke")
}

#[tokio::main]
async fn main() {
    let Some(dir) = stdlib() else {
        println!("ast bench: no python3 standard library found; nothing measured");
        if smoke() {
            std::process::exit(1);
        }
        return;
    };
    let Some(cli) = tools_core::testing::which("ast-grep") else {
        println!(
            "ast bench: the ast-grep CLI is not on PATH (pip install ast-grep-cli); nothing measured"
        );
        if smoke() {
            std::process::exit(1);
        }
        return;
    };
    // A smoke run searches one package of the library: a debug build over all of it takes
    // minutes.
    let dir = match dir.join("email") {
        small if smoke() && small.is_dir() => small,
        _ => dir,
    };
    let trials: usize = std::env::var("AST_BENCH_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0 && !smoke())
        .unwrap_or(if smoke() { 1 } else { 3 });
    println!(
        "ast bench on {} (threads: {}, trials: {trials})",
        dir.display(),
        rayon_threads()
    );
    // Warm the page cache so neither side pays for the first disk read.
    let _ = cli_run(&cli, &dir, SELECTIVE);

    let mut summary = Vec::new();
    for (name, pat) in [("selective", SELECTIVE), ("unselective", UNSELECTIVE)] {
        let mut cli_times = Vec::new();
        let mut firsts = Vec::new();
        let mut repeats = Vec::new();
        for trial in 1..=trials {
            let (c, cn) = cli_run(&cli, &dir, pat);
            let o = ours(&dir, pat).await;
            println!(
                "{name:<12} `{pat}` trial {trial}: CLI {:.3} s ({cn} matches) | ours first {:.3} s, repeated {:.3} s ({} matches){}",
                secs(c),
                secs(o.first),
                secs(o.repeated),
                o.matches,
                if o.matches as usize == cn {
                    ""
                } else {
                    "  MATCH COUNTS DIFFER"
                }
            );
            if trial == 1 {
                println!("             {}", o.detail);
            }
            cli_times.push(secs(c));
            firsts.push(secs(o.first));
            repeats.push(secs(o.repeated));
        }
        summary.push((name, median(cli_times), median(firsts), median(repeats)));
    }
    println!("medians and ratios:");
    for (name, cli, first, repeated) in &summary {
        println!("  {name:<12} CLI {cli:.3} s | ours first {first:.3} s, repeated {repeated:.3} s");
    }
    let [
        (_, cli_sel, sel_first, sel_rep),
        (_, cli_uns, uns_first, uns_rep),
    ] = summary[..]
    else {
        unreachable!("two patterns measured")
    };
    let sel_ratio = cli_sel / sel_first;
    let uns_ratio = cli_uns / uns_first;
    let rep_sel = sel_first / sel_rep;
    let rep_uns = uns_first / uns_rep;
    println!(
        "  selective:   CLI / ours first = {sel_ratio:.1}x  (target >= 20x: {})",
        verdict(sel_ratio >= 20.0)
    );
    println!(
        "  unselective: CLI / ours first = {uns_ratio:.2}x  (target >= 1x: {})",
        verdict(uns_ratio >= 1.0)
    );
    println!(
        "  repeated:    ours first / ours repeated = {rep_sel:.1}x selective, {rep_uns:.1}x unselective  (target >= 3x: {})",
        verdict(rep_sel >= 3.0 && rep_uns >= 3.0)
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

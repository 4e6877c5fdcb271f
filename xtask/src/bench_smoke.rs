//! `cargo xtask bench --smoke`: every bench once, one short trial of each measure, to show
//! that it still runs — never a timing judged. `cargo xtask test` runs it after the
//! end-to-end suite, so a bench broken by a change fails the day it breaks instead of the
//! day someone wants its figures.
//!
//! Each bench is built in the test profile (`cargo test --bench FAMILY -- --smoke`: the
//! dependencies the test build compiled are reused, no optimised build) and reads `--smoke`
//! itself: one trial per side, and a missing server, adapter or peer tool is a failure
//! instead of the skip a full run prints. Any bench that exits non-zero — a panic, an
//! assertion on an answer, a missing component — fails the step, and every bench still runs
//! so one report names all of them. The daemon's bench, a driver of the binary rather than a
//! cargo bench, runs last on a two-file project of its own (`bench_daemon::smoke`).

use std::time::Instant;

use crate::{Result, cargo, repo, run, target_dir};

/// Every bench family, in the order `bench` runs them: `crates/tools-FAMILY/benches/FAMILY.rs`.
pub const FAMILIES: &[&str] = &[
    "ast", "lsp", "debug", "eval", "ask", "vibe", "serve", "fs", "test",
];

/// The families whose bench exists in this checkout.
pub fn families_present() -> Vec<String> {
    FAMILIES
        .iter()
        .filter(|f| {
            repo()
                .join(format!("crates/tools-{f}/benches/{f}.rs"))
                .exists()
        })
        .map(|f| f.to_string())
        .collect()
}

/// Runs every bench once with `--smoke`; the error names each bench that failed to run.
/// The `serve` bench drives the debug build of the binary, built first when missing.
pub fn run_all() -> Result {
    let binary = target_dir().join("debug/agent-tools");
    if !binary.exists() {
        run(cargo().args(["build", "-p", "agent-tools"]))?;
    }
    let mut failed = Vec::new();
    let mut took = Vec::new();
    // Times one bench and records how it went under `name`.
    let mut timed = |name: &str, bench: &mut dyn FnMut() -> Result| {
        let started = Instant::now();
        let outcome = bench();
        let seconds = started.elapsed().as_secs_f64();
        match outcome {
            Ok(()) => took.push(format!("{name} {seconds:.0} s")),
            Err(e) => {
                took.push(format!("{name} FAILED after {seconds:.0} s"));
                failed.push(format!("the {name} bench did not run: {e}"));
            }
        }
    };
    for family in families_present() {
        timed(&family, &mut || {
            let mut cmd = cargo();
            cmd.args(["test", "-p", &format!("tools-{family}"), "--bench", &family])
                .args(["--", "--smoke"])
                .env("AGENT_TOOLS_BIN", &binary)
                // The fs bench reads its trial count from the environment.
                .env("FS_BENCH_TRIALS", "1");
            run(&mut cmd)
        });
    }
    // The daemon's bench is a driver of the binary, not a cargo bench.
    timed("daemon", &mut || crate::bench_daemon::smoke(&binary));
    eprintln!("xtask: bench smoke: {}", took.join(", "));
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("\n"))
    }
}

//! `cargo xtask bench daemon`: a conversation's first correct definition from the per-user
//! daemon's warm servers against a cold start (`--no-daemon`), and the memory of two
//! conversations served together against one on its own, side by side in one run, on
//! Django 5.2.8's sdist and ripgrep 14.1.1's crate (the peer bench's corpora, fetched the
//! same way). Prints the table of ratios. `AGENT_TOOLS_BIN` names the binary to measure
//! (else a release build); `BENCH_DAEMON_RUNS` the runs per corpus (default 2). [`smoke`]
//! runs it once on a two-file project of its own, for `cargo xtask bench --smoke`.

use std::path::Path;
use std::process::Command;

use crate::bench_peer::{crate_source, our_binary, sdist};
use crate::{Result, run, target_dir, tool_path, venv_bin};

/// One run of the comparison on the driver's own two-file Python project with `binary`
/// (each answer still checked: a bench that no longer runs fails here).
pub(crate) fn smoke(binary: &Path) -> Result {
    let work = target_dir().join("bench-daemon-smoke");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    run(Command::new(venv_bin().join("python"))
        .arg(crate::repo().join("xtask/bench_peer/warm_conversation.py"))
        .arg("--ours")
        .arg(binary)
        .arg("--work")
        .arg(&work)
        .arg("--smoke")
        .env("PATH", tool_path()))
}

/// Runs the comparison.
pub(crate) fn bench_daemon() -> Result {
    let python = venv_bin().join("python");
    if !python.exists() {
        return Err(format!(
            "{} is missing: run `cargo xtask setup` first (the driver needs the MCP Python SDK)",
            python.display()
        ));
    }
    let work = target_dir().join("bench-peer");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let venv = venv_bin()
        .parent()
        .map(|p| p.to_path_buf())
        .ok_or("the suite's venv has no folder")?;
    let django = sdist(&work, &venv, "django", "5.2.8")?;
    let ripgrep = crate_source(&work, "ripgrep", "14.1.1")?;
    let ours = our_binary(&work)?;
    let runs = std::env::var("BENCH_DAEMON_RUNS").unwrap_or_else(|_| "2".into());
    run(Command::new(&python)
        .arg(crate::repo().join("xtask/bench_peer/warm_conversation.py"))
        .arg("--ours")
        .arg(&ours)
        .arg("--work")
        .arg(&work)
        .arg(format!("--sdist=django={}", django.display()))
        .arg(format!("--crate=ripgrep={}", ripgrep.display()))
        .args(["--runs", &runs])
        .env("PATH", tool_path()))
}

//! `cargo xtask soak [--minutes N]`: builds the binary and runs `tests/soak/soak.py` with the
//! e2e virtualenv's Python: `agent-tools serve --http` under 10 sessions of mixed calls with
//! real servers (pyright, kernels, and debugpy in every third session) for N minutes
//! (default 10), then 1,000 sessions opened and closed; it fails
//! when a call went unanswered or the server's children, file descriptors, threads or RSS
//! did not come back within 10% of the baseline. `cargo xtask test` runs the short mode
//! (30 s of mixed calls, then the 1,000 sessions).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use crate::{Result, cargo, repo, run, target_dir, tool_path, venv_bin};

/// Minutes of mixed calls when `--minutes` is not given.
const DEFAULT_MINUTES: &str = "10";

/// Runs the command line `args` (after `soak`).
pub fn soak(args: &[String]) -> Result {
    let minutes = match args {
        [] => DEFAULT_MINUTES.to_string(),
        [flag, n] if flag == "--minutes" => {
            n.parse::<f64>()
                .map_err(|_| format!("--minutes {n}: not a number of minutes"))?;
            n.clone()
        }
        _ => return Err("usage: cargo xtask soak [--minutes N]".into()),
    };
    run(cargo().args(["build", "-p", "agent-tools"]))?;
    run_soak(&minutes)
}

/// The short soak of `cargo xtask test` (the binary is already built).
pub fn short() -> Result {
    run_soak("0.5")
}

/// Lines of the soak's own report repeated in the error when it fails: a failure's reason
/// (the figures, the failed calls) then reaches the end of a long CI log.
const REPORT_LINES_KEPT: usize = 40;

fn run_soak(minutes: &str) -> Result {
    let mut cmd = Command::new(venv_bin().join("python"));
    cmd.current_dir(repo())
        .arg("tests/soak/soak.py")
        .args(["--minutes", minutes])
        .env("PATH", tool_path())
        .env("AGENT_TOOLS_BIN", target_dir().join("debug/agent-tools"))
        .stdout(Stdio::piped());
    eprintln!("xtask: running {cmd:?}");
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    let mut kept = VecDeque::with_capacity(REPORT_LINES_KEPT);
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(std::io::Result::ok) {
            println!("{line}");
            if kept.len() == REPORT_LINES_KEPT {
                kept.pop_front();
            }
            kept.push_back(line);
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for {cmd:?}: {e}"))?;
    if status.success() {
        return Ok(());
    }
    let report: Vec<String> = kept.into_iter().collect();
    Err(format!(
        "the soak failed ({status}); its last lines:\n{}",
        report.join("\n")
    ))
}

//! `cargo xtask bench --smoke`: every bench once, one short trial of each measure, to show
//! that it still runs — never a timing judged. `cargo xtask test` runs it after the
//! end-to-end suite, so a bench broken by a change fails the day it breaks instead of the
//! day someone wants its figures.
//!
//! Every bench is built at once in the test profile with the whole workspace's features
//! (`cargo test --workspace --benches --no-run`: what the test build compiled is reused, and
//! `cargo xtask test` builds them beside setup; built one crate at a time, each bench
//! rebuilt its dependencies with that crate's features alone), then each executable runs
//! from its crate's folder, as cargo runs it, and reads `--smoke` itself: one trial per
//! side, and a missing server, adapter or peer tool is a failure instead of the skip a full
//! run prints. Any bench that exits non-zero — a panic, an assertion on an answer, a missing
//! component — fails the step, and every bench still runs so one report names all of them. The daemon's bench, a driver of the binary rather than a
//! cargo bench, runs last on a two-file project of its own (`bench_daemon::smoke`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
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
    let executables = build_benches()?;
    for family in families_present() {
        timed(&family, &mut || {
            let executable = executables.get(&family).ok_or_else(|| {
                format!(
                    "cargo built no bench `{family}` (crates/tools-{family}/benches/{family}.rs)"
                )
            })?;
            let mut cmd = Command::new(executable);
            cmd.current_dir(repo().join(format!("crates/tools-{family}")))
                .env("PATH", crate::tool_path())
                .arg("--smoke")
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

/// Builds every bench of the workspace in the test profile and returns each one's
/// executable by its name (a family's bench is named after the family).
fn build_benches() -> Result<BTreeMap<String, PathBuf>> {
    let mut cmd = cargo();
    cmd.args([
        "test",
        "--workspace",
        "--benches",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ]);
    let output = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !output.status.success() {
        return Err(format!("{cmd:?} failed with {}", output.status));
    }
    Ok(bench_executables(&String::from_utf8_lossy(&output.stdout)))
}

/// The bench executables among cargo's JSON messages, by target name.
fn bench_executables(messages: &str) -> BTreeMap<String, PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter(|m| {
            m["target"]["kind"]
                .as_array()
                .is_some_and(|kinds| kinds.iter().any(|k| k == "bench"))
        })
        .filter_map(|m| {
            let name = m["target"]["name"].as_str()?.to_string();
            let executable = m["executable"].as_str()?;
            Some((name, PathBuf::from(executable)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_executables_are_read_from_cargos_messages_and_nothing_else_is() {
        let messages = [
            r#"{"reason":"compiler-artifact","target":{"kind":["bench"],"name":"ast"},"executable":"/t/debug/deps/ast-1"}"#,
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"],"name":"tools_ast"},"executable":null}"#,
            r#"{"reason":"compiler-artifact","target":{"kind":["test"],"name":"all"},"executable":"/t/debug/deps/all-2"}"#,
            r#"{"reason":"build-finished","success":true}"#,
            "not json",
        ]
        .join("\n");
        let found = bench_executables(&messages);
        assert_eq!(
            found.into_iter().collect::<Vec<_>>(),
            vec![("ast".to_string(), PathBuf::from("/t/debug/deps/ast-1"))]
        );
    }
}

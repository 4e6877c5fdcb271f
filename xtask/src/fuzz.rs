//! `cargo xtask fuzz [--smoke] [--seconds N] [TARGET...]`: builds the libFuzzer targets of
//! `fuzz/` with the nightly toolchain and coverage instrumentation (what cargo-fuzz does,
//! without needing cargo-fuzz), then runs each for a while.
//!
//! Each target starts from its checked-in seeds (`fuzz/corpus/<target>`) plus what earlier
//! runs on this machine found (kept under the target folder, never in the checkout). A crash
//! fails the step and names the input libFuzzer saved; such an input is then turned into a
//! regression test next to the code it broke. `--smoke` is the short run (20 s per target
//! unless `--seconds` or `AGENT_TOOLS_FUZZ_SECONDS` says otherwise; `cargo xtask test` runs
//! every target 5 s), built with the `smoke` profile of `fuzz/Cargo.toml` (unoptimised: the
//! build is most of a smoke run); the long runs build with `release`.
//! The nightly toolchain comes from `xtask/components` (`rustup_toolchains`), installed by
//! `cargo xtask setup`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, repo, run, target_dir, tool_path};

/// Seconds per target of a smoke run.
const SMOKE_SECONDS: u64 = 20;
/// Seconds per target of a full run.
const FULL_SECONDS: u64 = 300;

/// The coverage flags cargo-fuzz passes, plus checks a fuzz build wants on.
const RUSTFLAGS: &str = "-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
     -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
     -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks";

/// Runs the command line `args` (after `fuzz`).
pub fn fuzz(args: &[String]) -> Result {
    let mut seconds = None;
    let mut smoke = false;
    let mut wanted = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--smoke" => smoke = true,
            "--seconds" => {
                let v = it.next().ok_or("--seconds needs a number")?;
                seconds = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("--seconds {v}: not a number of seconds"))?,
                );
            }
            other if other.starts_with('-') => {
                return Err(format!(
                    "unknown option {other}; usage: cargo xtask fuzz [--smoke] [--seconds N] [TARGET...]"
                ));
            }
            other => wanted.push(other.to_string()),
        }
    }
    let seconds = seconds
        .or_else(|| {
            std::env::var("AGENT_TOOLS_FUZZ_SECONDS")
                .ok()
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(if smoke { SMOKE_SECONDS } else { FULL_SECONDS });
    let all = targets()?;
    for w in &wanted {
        if !all.contains(w) {
            return Err(format!(
                "no fuzz target `{w}`; the targets are {}",
                all.join(", ")
            ));
        }
    }
    let chosen = if wanted.is_empty() { all } else { wanted };
    let bins = build(if smoke { SMOKE_PROFILE } else { "release" })?;
    let mut failed = Vec::new();
    let mut rows = Vec::new();
    for t in &chosen {
        let (ok, line) = run_target(&bins, t, seconds)?;
        rows.push(line);
        if !ok {
            failed.push(t.clone());
        }
    }
    eprintln!("fuzz ({seconds} s per target):");
    for r in &rows {
        eprintln!("  {r}");
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "fuzz target(s) crashed: {} (the saved inputs are named above)",
            failed.join(", ")
        ))
    }
}

/// The smoke run `cargo xtask test` makes: every target, `AGENT_TOOLS_FUZZ_SECONDS` each
/// (default 5, so the whole step stays within a minute once built).
pub fn test_smoke() -> Result {
    let seconds = std::env::var("AGENT_TOOLS_FUZZ_SECONDS").unwrap_or_else(|_| "5".into());
    fuzz(&["--smoke".into(), "--seconds".into(), seconds])
}

/// Installs the rustup toolchains the components name (e.g. `nightly`), minimal profile.
pub fn install_toolchains(toolchains: &[String]) -> Result {
    for t in toolchains {
        let have = Command::new("rustup")
            .args(["run", t, "rustc", "--version"])
            .output()
            .is_ok_and(|o| o.status.success());
        if !have {
            run(Command::new("rustup").args(["toolchain", "install", t, "--profile", "minimal"]))?;
        }
    }
    Ok(())
}

fn fuzz_dir() -> PathBuf {
    repo().join("fuzz")
}

/// The target names: one per file of `fuzz/fuzz_targets`.
fn targets() -> Result<Vec<String>> {
    let dir = fuzz_dir().join("fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let p = e.path();
            if p.extension()? != "rs" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    Ok(names)
}

fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("cannot run rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV names no host".to_string())
}

/// The cargo profile of a smoke run (`fuzz/Cargo.toml`): release, unoptimised. A smoke run
/// fuzzes each target for seconds, so the build is most of its time.
const SMOKE_PROFILE: &str = "smoke";

/// Builds every target with `profile`; returns the folder holding the binaries.
fn build(profile: &str) -> Result<PathBuf> {
    let host = host_triple()?;
    let target = target_dir().join("fuzz");
    // The build scripts and proc macros are built for the host without the flags (hence
    // the explicit --target), as cargo-fuzz does.
    // The rustup proxy on PATH takes `+nightly`; the running toolchain's own cargo (named
    // by `CARGO`) would not.
    let mut cmd = Command::new("cargo");
    cmd.current_dir(repo())
        .env("PATH", tool_path())
        .env_remove("RUSTC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env("RUSTFLAGS", RUSTFLAGS)
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "+nightly",
            "build",
            "--profile",
            profile,
            "--bins",
            "--target",
            &host,
        ])
        .arg("--manifest-path")
        .arg(fuzz_dir().join("Cargo.toml"));
    run(&mut cmd)?;
    Ok(target.join(host).join(profile))
}

/// Runs one target for `seconds`; returns whether it survived and a line for the table.
fn run_target(bins: &Path, name: &str, seconds: u64) -> Result<(bool, String)> {
    let work = target_dir().join("fuzz").join("corpus").join(name);
    let artifacts = target_dir().join("fuzz").join("artifacts").join(name);
    for d in [&work, &artifacts] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let seeds = fuzz_dir().join("corpus").join(name);
    let mut cmd = Command::new(bins.join(name));
    cmd.arg(&work);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    cmd.arg(format!("-max_total_time={seconds}"))
        .arg("-timeout=10")
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()));
    eprintln!("xtask: running {cmd:?}");
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run fuzz target {name}: {e}"))?;
    let log = String::from_utf8_lossy(&out.stderr);
    let runs = log
        .lines()
        .find_map(|l| l.strip_prefix("stat::number_of_executed_units:"))
        .map(|v| v.trim().to_string())
        .unwrap_or_else(|| "?".into());
    if out.status.success() {
        return Ok((true, format!("{name:<14} ok       {runs} runs")));
    }
    let tail: Vec<&str> = log.lines().rev().take(40).collect();
    eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
    let saved = log
        .lines()
        .filter_map(|l| l.split("Test unit written to ").nth(1))
        .collect::<Vec<_>>()
        .join(", ");
    Ok((
        false,
        format!("{name:<14} CRASHED  after {runs} runs; input saved at {saved}"),
    ))
}

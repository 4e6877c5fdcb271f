//! `cargo xtask lint`: the gate on the code's habits, and its place in `cargo xtask test`.
//!
//! Six steps, each timed (`cargo xtask lint STEP...` runs only the named ones):
//! - `fmt`: `cargo fmt --all --check`;
//! - `deps`: no declared dependency goes unused (see [`crate::deps`]);
//! - `tidy`: module docs, lint inheritance, gated test hooks, private crate modules, file
//!   lengths (see [`crate::tidy`]);
//! - `clippy`: `cargo clippy --workspace --all-targets --keep-going -- -D warnings` (with
//!   the workspace's `missing_docs`, an undocumented public item fails here);
//! - `doc`: `cargo doc --workspace --no-deps --keep-going` with `RUSTDOCFLAGS=-D warnings`
//!   (a broken intra-doc link fails here);
//! - `cross`: clippy for macOS (both architectures) and Windows over the portable crates
//!   (see [`crate::cross`]).
//!
//! `--keep-going` makes one run report every crate's findings, not only the first failing
//! crate's. `cargo xtask test` runs the quick steps (fmt, deps, tidy) before anything is
//! built, so a formatting slip shows in seconds, and clippy, doc and cross after the tests, so a
//! failing test is reported first; they reuse the build scripts and proc macros the test
//! build compiled. A failing step does not stop the others: the report lists every one.

use std::time::{Duration, Instant};

/// One step's outcome and how long it took.
pub struct StepTime {
    /// The step's name.
    pub name: String,
    /// How long it ran.
    pub took: Duration,
    /// Whether it passed.
    pub passed: bool,
}

/// The timed steps of one `cargo xtask` invocation, printed as a table at the end.
#[derive(Default)]
pub struct Steps {
    done: Vec<StepTime>,
}

impl Steps {
    /// Runs `step`, records its time and outcome, and returns its outcome.
    pub fn run(&mut self, name: &str, step: impl FnOnce() -> crate::Result) -> crate::Result {
        let started = Instant::now();
        let result = step();
        self.record(name, started.elapsed(), result.is_ok());
        result.map_err(|e| format!("{name}: {e}"))
    }

    /// Records a step that was timed elsewhere.
    pub fn record(&mut self, name: &str, took: Duration, passed: bool) {
        self.done.push(StepTime {
            name: name.to_string(),
            took,
            passed,
        });
    }

    /// The table of every step run so far.
    pub fn table(&self) -> String {
        let mut out = format!("\nSteps\n{:<28} {:>9}  result\n", "step", "seconds");
        for step in &self.done {
            out.push_str(&format!(
                "{:<28} {:>9.1}  {}\n",
                step.name,
                step.took.as_secs_f64(),
                if step.passed { "ok" } else { "FAILED" }
            ));
        }
        out
    }
}

/// Fails, naming the rustup command, when `cargo SUBCOMMAND` is not installed: cargo's own
/// "no such command" does not say which component brings it.
fn require(subcommand: &str, component: &str) -> crate::Result {
    let installed = crate::cargo()
        .args([subcommand, "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if installed {
        Ok(())
    } else {
        Err(format!(
            "`cargo {subcommand}` is not installed: run `rustup component add {component}`"
        ))
    }
}

/// `cargo fmt --all --check`.
fn fmt() -> crate::Result {
    require("fmt", "rustfmt")?;
    crate::run(crate::cargo().args(["fmt", "--all", "--check"]))
        .map_err(|e| format!("{e}\n  fix: run `cargo fmt --all` and commit the result"))
}

/// The unused-dependency check.
fn deps() -> crate::Result {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let findings = crate::deps::check(&crate::repo(), &cargo)?;
    report(
        "unused dependencies",
        findings.iter().map(|f| f.to_string()),
    )
}

/// The tidy checks.
fn tidy() -> crate::Result {
    let findings = crate::tidy::check(&crate::repo())?;
    report("tidy", findings.iter().map(|f| f.to_string()))
}

/// Prints each finding on its own line (so editors and CI logs can jump to it) and fails
/// when there is any.
fn report(what: &str, findings: impl Iterator<Item = String>) -> crate::Result {
    let findings: Vec<String> = findings.collect();
    for f in &findings {
        eprintln!("{f}");
    }
    if findings.is_empty() {
        Ok(())
    } else {
        Err(format!("{} {what} findings (listed above)", findings.len()))
    }
}

/// `cargo clippy --workspace --all-targets -- -D warnings`.
fn clippy() -> crate::Result {
    require("clippy", "clippy")?;
    crate::run(crate::cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        // Every crate's findings in one run, not only the first failing crate's.
        "--keep-going",
        "--",
        "-D",
        "warnings",
    ]))
}

/// `cargo doc --workspace --no-deps` with warnings denied.
fn doc() -> crate::Result {
    let mut cmd = crate::cargo();
    cmd.args(["doc", "--workspace", "--no-deps", "--keep-going"]);
    // Denied warnings on top of whatever the caller set, so a broken intra-doc link fails.
    let flags = std::env::var("RUSTDOCFLAGS").unwrap_or_default();
    cmd.env("RUSTDOCFLAGS", format!("{flags} -D warnings").trim());
    crate::run(&mut cmd)
}

/// A named step.
type Step = (&'static str, fn() -> crate::Result);

/// The steps that need no build, in order.
const QUICK: [Step; 3] = [("fmt", fmt), ("deps", deps), ("tidy", tidy)];

/// The steps that compile, in order.
const COMPILED: [Step; 3] = [
    ("clippy", clippy),
    ("doc", doc),
    ("cross", crate::cross::check),
];

fn run_all(steps: &mut Steps, list: &[Step]) -> Vec<String> {
    list.iter()
        .filter_map(|(name, step)| steps.run(name, step).err())
        .collect()
}

/// The steps that need no build: formatting, dependencies, tidy.
pub fn quick(steps: &mut Steps) -> Vec<String> {
    run_all(steps, &QUICK)
}

/// The steps that compile: clippy, rustdoc and the other operating systems' clippy.
pub fn compiled(steps: &mut Steps) -> Vec<String> {
    run_all(steps, &COMPILED)
}

/// `cargo xtask lint [STEP...]`: the named steps (all of them when none is named), then the
/// table of their times.
pub fn lint(only: &[String]) -> crate::Result {
    let all: Vec<_> = QUICK.iter().chain(COMPILED.iter()).copied().collect();
    if let Some(unknown) = only.iter().find(|o| !all.iter().any(|(n, _)| n == o)) {
        let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "no lint step `{unknown}`; the steps are {}",
            names.join(", ")
        ));
    }
    let chosen: Vec<_> = all
        .into_iter()
        .filter(|(name, _)| only.is_empty() || only.iter().any(|o| o == name))
        .collect();
    let mut steps = Steps::default();
    let failures = run_all(&mut steps, &chosen);
    eprint!("{}", steps.table());
    if failures.is_empty() {
        eprintln!("xtask: lint passed");
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

//! `cargo xtask setup | test | bench`.
//!
//! - `setup` installs, idempotently and only through this repository's files, everything the
//!   test suite drives: `xtask/components/*.toml` list pip packages (into `.tools/venv`), npm
//!   packages (into `.tools/node`), Debian packages (apt-get, when missing) and the registry
//!   sources of the real-projects suite; after apt the installers run side by side, each
//!   timed (see [`setup`]). It writes `.tools/env.sh`, which puts those tools first on `PATH`.
//! - `test` runs setup, `cargo test --workspace`, and the end-to-end suite (`tests/e2e`,
//!   pytest driving the built binary through the MCP Python SDK), then prints which real
//!   components the tests exercised and which they skipped, and why. With `CI=true` a skip is
//!   a failure (the tests themselves also fail on one). `--matrix` (always on under
//!   `CI=true`) adds the feature matrix: the facade with no default features and with each
//!   single feature, and every tool crate on its own (all targets built, unit tests run).
//!   Its `wine` step runs the Windows build under Wine: tools-core's, tools-fs's and
//!   tools-ast's tests and an MCP round trip with `agent-tools.exe` (see [`wine`]); `wine`
//!   runs that step alone.
//! - `lint` checks the code's habits: formatting, clippy with warnings denied, rustdoc with
//!   warnings denied, no unused dependency, and the tidy rules (module docs, lint
//!   inheritance, gated test hooks, private crate modules, file lengths). `test` runs the
//!   same steps, the quick ones first and clippy and rustdoc after the tests, and prints
//!   each step's time.
//! - `bench [FAMILY...]` runs each family's benchmark (`cargo bench -p tools-FAMILY --bench
//!   FAMILY`), side by side with the tool a user would otherwise use; `bench peer` runs the
//!   whole server against Serena (`bench_peer`); `bench daemon` a conversation warm from the
//!   per-user daemon against a cold one (`bench_daemon`). `bench --smoke` runs every bench once, one
//!   short trial each, and fails when one does not run; `test` runs it after the end-to-end
//!   suite.

mod bench_daemon;
mod bench_peer;
mod bench_smoke;
mod component_table;
mod cross;
mod deps;
mod finding;
mod fuzz;
mod lint;
mod module_circles;
mod platform_calls;
mod real_projects;
mod setup;
mod soak;
mod stamp;
mod test_gate;
mod tidy;
mod wine;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// A step's outcome: what failed, written for the person who runs the command.
type Result<T = (), E = String> = std::result::Result<T, E>;

fn repo() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

fn tools_dir() -> PathBuf {
    repo().join(".tools")
}

fn venv_bin() -> PathBuf {
    tools_dir().join("venv/bin")
}

fn node_bin() -> PathBuf {
    tools_dir().join("node/node_modules/.bin")
}

/// Programs of the packages installed each in its own venv (`pip_alone`).
fn alone_bin() -> PathBuf {
    tools_dir().join("bin")
}

fn go_bin() -> PathBuf {
    tools_dir().join("go/bin")
}

/// `PATH` with the project's tools first.
fn tool_path() -> String {
    let mut parts = vec![
        venv_bin().display().to_string(),
        alone_bin().display().to_string(),
        node_bin().display().to_string(),
        go_bin().display().to_string(),
    ];
    for extra in ["/usr/lib/go/bin", "/usr/lib/llvm-19/bin"] {
        if Path::new(extra).is_dir() {
            parts.push(extra.to_string());
        }
    }
    parts.push(std::env::var("PATH").unwrap_or_default());
    parts.join(":")
}

fn run(cmd: &mut Command) -> Result {
    eprintln!("xtask: running {cmd:?}");
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{cmd:?} failed with {status}"))
    }
}

fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(repo()).env("PATH", tool_path());
    cmd
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target"))
}

/// The facade's family features, read from its manifest (every feature but `default`).
fn facade_features() -> Result<Vec<String>> {
    let path = repo().join("crates/agent-tools/Cargo.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let manifest: toml::Table =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let features = manifest
        .get("features")
        .and_then(|f| f.as_table())
        .cloned()
        .unwrap_or_default();
    Ok(features
        .keys()
        .filter(|k| *k != "default")
        .cloned()
        .collect())
}

/// The tool crates: every `crates/tools-*` folder.
fn tool_crates() -> Result<Vec<String>> {
    let mut out: Vec<String> = std::fs::read_dir(repo().join("crates"))
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("tools-"))
        .collect();
    out.sort();
    Ok(out)
}

/// The feature matrix: the facade with no default features, with each single feature and
/// with all of them; then every tool crate alone: all its targets built, its unit tests run. A crate that only builds inside
/// the whole workspace, or a feature that drags in another family, fails here.
fn matrix(log: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    let features = match facade_features() {
        Ok(f) => f,
        Err(e) => return vec![e],
    };
    let mut combos: Vec<Vec<String>> = vec![vec![]];
    combos.extend(features.iter().map(|f| vec![f.clone()]));
    for combo in combos {
        let mut cmd = cargo();
        cmd.args([
            "test",
            "-p",
            "agent-tools",
            "--no-default-features",
            "--lib",
        ]);
        if !combo.is_empty() {
            cmd.args(["--features", &combo.join(",")]);
        }
        if let Err(e) = run(&mut cmd) {
            failures.push(format!("matrix [{}]: {e}", combo.join(",")));
        }
    }
    match tool_crates() {
        Ok(crates) => {
            for c in crates {
                // Every target of the crate must build alone, and its unit tests pass with
                // only its own features; the integration suites already ran in the
                // workspace test step, and running them twice doubled CI's time.
                if let Err(e) = run(cargo().args(["test", "-p", &c, "--no-run"])) {
                    failures.push(format!("matrix [{c} alone, build]: {e}"));
                    continue;
                }
                if let Err(e) = run(cargo()
                    .args(["test", "-p", &c, "--lib"])
                    .env("AGENT_TOOLS_COMPONENT_LOG", log))
                {
                    failures.push(format!("matrix [{c} alone]: {e}"));
                }
            }
        }
        Err(e) => failures.push(e),
    }
    failures
}

/// The test step's command before the caller's arguments: the build beside setup starts
/// from it too, so what it compiles is exactly what the test step then runs.
fn workspace_tests() -> Command {
    let mut cmd = cargo();
    cmd.args(["test", "--workspace", "--no-fail-fast"]);
    cmd
}

/// Runs setup and the test build side by side: setup mostly waits on downloads (apt, pip,
/// npm, rustup) while the build keeps both cores busy, and the build needs nothing setup
/// installs (no crate here has a build script that looks for a tool). The build is the
/// test step's own command with `--no-run` (and, for the whole run, every target: the
/// bench smoke's benches too), so `cargo test` afterwards only runs. A setup
/// failure ends the run (nothing can be tested without the components); a build failure is
/// one more failure, and the test step then reports the compiler's errors again.
fn setup_beside_test_build(steps: &mut lint::Steps, args: &[String]) -> Result<Vec<String>> {
    let mut build = workspace_tests();
    if args.is_empty() {
        // The whole run: the benches too (the bench smoke runs them) and the examples, with
        // the same features as the tests, so nothing is compiled twice.
        build.arg("--all-targets");
    }
    // `--no-run` belongs to cargo, before any `--` that starts the test binaries' arguments.
    let cargo_args = args.iter().take_while(|a| *a != "--");
    build.args(cargo_args).arg("--no-run");
    let ((setup_took, setup_result), (build_took, build_result)) = std::thread::scope(|s| {
        let builder = s.spawn(|| {
            let started = std::time::Instant::now();
            let result = run(&mut build);
            (started.elapsed(), result)
        });
        let started = std::time::Instant::now();
        let setup_result = setup::setup();
        let setup = (started.elapsed(), setup_result);
        let built = builder
            .join()
            .unwrap_or_else(|_| (Default::default(), Err("the build thread panicked".into())));
        (setup, built)
    });
    steps.record("setup", setup_took, setup_result.is_ok());
    steps.record(
        "build tests (beside setup)",
        build_took,
        build_result.is_ok(),
    );
    setup_result.map_err(|e| format!("setup: {e}"))?;
    Ok(build_result
        .err()
        .map(|e| format!("build tests: {e}"))
        .into_iter()
        .collect())
}

fn test(args: &[String]) -> Result {
    // CI always runs the matrix: a crate that only builds inside the whole workspace must
    // not land.
    let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
    let with_matrix = ci || args.iter().any(|a| a == "--matrix");
    let args: Vec<String> = args.iter().filter(|a| *a != "--matrix").cloned().collect();
    let args = &args[..];
    let mut steps = lint::Steps::default();
    let mut failures = setup_beside_test_build(&mut steps, args)?;
    let log = tools_dir().join("components.log");
    let _ = std::fs::remove_file(&log);
    // The checks that need no build first: a formatting slip fails in seconds.
    failures.extend(lint::quick(&mut steps));
    let mut unit = workspace_tests();
    unit.env("AGENT_TOOLS_COMPONENT_LOG", &log);
    unit.args(args);
    if let Err(e) = steps.run("cargo test", || run(&mut unit)) {
        failures.push(e);
    }
    // After the tests, so a failing test shows first; the build scripts and proc macros
    // the test build compiled are reused.
    failures.extend(lint::compiled(&mut steps));
    let built = steps.run("build binary", || {
        run(cargo().args(["build", "-p", "agent-tools"]))
    });
    match built {
        Err(e) => failures.push(e),
        Ok(()) => {
            let mut e2e = Command::new(venv_bin().join("python"));
            e2e.current_dir(repo())
                .args([
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    "tests/e2e",
                    "crates/tools-py/tests",
                ])
                .env("PATH", tool_path())
                .env("AGENT_TOOLS_BIN", target_dir().join("debug/agent-tools"))
                .env("AGENT_TOOLS_COMPONENT_LOG", &log);
            if let Err(e) = steps.run("e2e", || run(&mut e2e)) {
                failures.push(e);
            }
            if let Err(e) = steps.run("soak short", soak::short) {
                failures.push(e);
            }
            if let Err(e) = steps.run("bench smoke", bench_smoke::run_all) {
                failures.push(e);
            }
        }
    }
    if let Err(e) = steps.run("fuzz smoke", fuzz::test_smoke) {
        failures.push(e);
    }
    if let Err(e) = steps.run("wine", wine::run) {
        failures.push(e);
    }
    if with_matrix {
        let started = std::time::Instant::now();
        let matrix_failures = matrix(&log);
        let passed = matrix_failures.is_empty();
        failures.extend(matrix_failures);
        steps.record("matrix", started.elapsed(), passed);
    }
    let failed = component_table::print(&log);
    eprint!("{}", steps.table());
    if ci && failed > 0 {
        failures.push(format!(
            "{failed} promised components failed a check, were missing or were skipped under CI=true"
        ));
    }
    if failures.is_empty() {
        eprintln!("xtask: all tests passed");
        Ok(())
    } else {
        Err(failures.join("\n"))
    }
}

fn bench(args: &[String]) -> Result {
    if args.first().map(String::as_str) == Some("peer") {
        return bench_peer::bench_peer();
    }
    if args == ["daemon"] {
        return bench_daemon::bench_daemon();
    }
    setup::setup()?;
    if args == ["--smoke"] {
        return bench_smoke::run_all();
    }
    let families: Vec<String> = if args.is_empty() {
        bench_smoke::families_present()
    } else {
        args.to_vec()
    };
    for f in families {
        run(cargo().args(["bench", "-p", &format!("tools-{f}"), "--bench", &f]))?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("setup") => setup::setup(),
        Some("test") => test(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("lint") => lint::lint(&args[1..]),
        Some("fuzz") => fuzz::fuzz(&args[1..]),
        Some("soak") => soak::soak(&args[1..]),
        Some("wine") => setup::setup().and_then(|()| wine::run()),
        _ => Err(
            "usage: cargo xtask setup | test [--matrix] [cargo test args] | lint [STEP...] | bench [FAMILY... | --smoke | peer | daemon] | fuzz [--smoke] [--seconds N] [TARGET...] | soak [--minutes N] | wine"
                .into(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

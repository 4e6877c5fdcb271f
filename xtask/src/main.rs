//! `cargo xtask setup | test | bench`.
//!
//! - `setup` installs, idempotently and only through this repository's files, everything the
//!   test suite drives: `xtask/components/*.toml` list pip packages (into `.tools/venv`), npm
//!   packages (into `.tools/node`) and Debian packages (apt-get, when missing). It writes
//!   `.tools/env.sh`, which puts those tools first on `PATH`.
//! - `test` runs setup, `cargo test --workspace`, and the end-to-end suite (`tests/e2e`,
//!   pytest driving the built binary through the MCP Python SDK), then prints which real
//!   components the tests exercised and which they skipped, and why. With `CI=true` a skip is
//!   a failure (the tests themselves also fail on one). `--matrix` (always on under
//!   `CI=true`) adds the feature matrix: the facade with no default features and with each
//!   single feature, and every tool crate on its own (all targets built, unit tests run).
//! - `lint` checks the code's habits: formatting, clippy with warnings denied, rustdoc with
//!   warnings denied, no unused dependency, and the tidy rules (module docs, lint
//!   inheritance, gated test hooks, private crate modules, file lengths). `test` runs the
//!   same steps, the quick ones first and clippy and rustdoc after the tests, and prints
//!   each step's time.
//! - `bench [FAMILY...]` runs each family's benchmark (`cargo bench -p tools-FAMILY --bench
//!   FAMILY`), side by side with the tool a user would otherwise use; `bench peer` runs the
//!   whole server against Serena (`bench_peer`). `bench --smoke` runs every bench once, one
//!   short trial each, and fails when one does not run; `test` runs it after the end-to-end
//!   suite.

mod bench_peer;
mod bench_smoke;
mod component_table;
mod deps;
mod fuzz;
mod lint;
mod module_circles;
mod soak;
mod tidy;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Components {
    #[serde(default)]
    pip: Vec<String>,
    /// pip packages whose pins conflict with the shared venv's (nginx-language-server wants
    /// pydantic 1, the MCP SDK pydantic 2): each gets its own venv, its programs linked into
    /// `.tools/bin`.
    #[serde(default)]
    pip_alone: Vec<String>,
    #[serde(default)]
    npm: Vec<String>,
    #[serde(default)]
    apt: Vec<String>,
    /// rustup components (e.g. `rust-analyzer`), added to the active toolchain.
    #[serde(default)]
    rustup: Vec<String>,
    /// rustup toolchains besides the active one (e.g. `nightly` for `cargo xtask fuzz`).
    #[serde(default)]
    rustup_toolchains: Vec<String>,
}

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

fn load_components() -> Result<Components> {
    let dir = repo().join("xtask/components");
    let mut all = Components::default();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    entries.sort();
    for p in entries {
        let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
        let c: Components = toml::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        all.pip.extend(c.pip);
        all.pip_alone.extend(c.pip_alone);
        all.npm.extend(c.npm);
        all.apt.extend(c.apt);
        all.rustup.extend(c.rustup);
        all.rustup_toolchains.extend(c.rustup_toolchains);
    }
    Ok(all)
}

/// Skips a step whose inputs are unchanged since it last succeeded.
fn stamped(name: &str, inputs: &[String], step: impl FnOnce() -> Result) -> Result {
    let stamp = tools_dir().join(format!("stamp-{name}"));
    let want = inputs.join("\n");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) {
        eprintln!("xtask: {name} is up to date");
        return Ok(());
    }
    let started = std::time::Instant::now();
    step()?;
    // Install time by package manager (one resolver run each keeps setup short; a run per
    // server would not).
    eprintln!(
        "xtask: {name}: {} package(s) installed in {:.1} s",
        inputs.len(),
        started.elapsed().as_secs_f64()
    );
    std::fs::write(&stamp, want).map_err(|e| format!("cannot write {}: {e}", stamp.display()))
}

fn real_python() -> String {
    // A pyenv shim re-resolves the interpreter on every start; use the real executable.
    Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "python3".into())
}

fn setup() -> Result {
    let c = load_components()?;
    std::fs::create_dir_all(tools_dir()).map_err(|e| e.to_string())?;
    // Debian packages first: language servers and adapters may come from them.
    let apt: BTreeSet<_> = c.apt.iter().cloned().collect();
    let missing: Vec<String> = apt
        .iter()
        .filter(|p| {
            !Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", p])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
                .unwrap_or(false)
        })
        .cloned()
        .collect();
    if !missing.is_empty() {
        let sudo = |args: &[&str]| {
            let mut cmd = if is_root() {
                Command::new(args[0])
            } else {
                Command::new("sudo")
            };
            if is_root() {
                cmd.args(&args[1..]);
            } else {
                cmd.args(args);
            }
            cmd.env("DEBIAN_FRONTEND", "noninteractive");
            cmd
        };
        let started = std::time::Instant::now();
        run(&mut sudo(&["apt-get", "update", "-q"]))?;
        let mut args = vec!["apt-get", "install", "-y", "-q", "--no-install-recommends"];
        args.extend(missing.iter().map(String::as_str));
        run(&mut sudo(&args))?;
        eprintln!(
            "xtask: apt: {} package(s) installed in {:.1} s",
            missing.len(),
            started.elapsed().as_secs_f64()
        );
    }
    if !venv_bin().join("python").exists() {
        run(Command::new(real_python())
            .args(["-m", "venv"])
            .arg(tools_dir().join("venv")))?;
    }
    let pip: Vec<String> = c
        .pip
        .iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    stamped("pip", &pip, || {
        run(Command::new(venv_bin().join("python"))
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(&pip))
    })?;
    let alone: Vec<String> = c
        .pip_alone
        .iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    stamped("pip-alone", &alone, || {
        alone.iter().try_for_each(|spec| install_alone(spec))
    })?;
    let npm: Vec<String> = c
        .npm
        .iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !npm.is_empty() {
        stamped("npm", &npm, || {
            let prefix = tools_dir().join("node");
            std::fs::create_dir_all(&prefix).map_err(|e| e.to_string())?;
            run(Command::new("npm")
                .args([
                    "install",
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    "--prefix",
                ])
                .arg(&prefix)
                .args(&npm))
        })?;
    }
    let rustup: Vec<String> = c
        .rustup
        .iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if !rustup.is_empty() {
        stamped("rustup", &rustup, || {
            run(Command::new("rustup")
                .args(["component", "add"])
                .args(&rustup))
        })?;
    }
    fuzz::install_toolchains(&c.rustup_toolchains)?;
    build_wheel()?;
    let env = format!(
        "export PATH=\"{}\"\n",
        tool_path().replace(&std::env::var("PATH").unwrap_or_default(), "$PATH")
    );
    std::fs::write(tools_dir().join("env.sh"), env).map_err(|e| e.to_string())?;
    eprintln!("xtask: setup done; `source .tools/env.sh` puts the tools on PATH");
    Ok(())
}

/// Installs one pip package (`name==version`) into `.tools/alone/NAME` and links the programs
/// it adds into `.tools/bin`.
fn install_alone(spec: &str) -> Result {
    let name = spec
        .split(['=', '<', '>', '~', '!', '['])
        .next()
        .unwrap_or(spec)
        .trim();
    let venv = tools_dir().join("alone").join(name);
    if !venv.join("bin/python").exists() {
        run(Command::new(real_python()).args(["-m", "venv"]).arg(&venv))?;
    }
    run(Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .arg(spec))?;
    std::fs::create_dir_all(alone_bin()).map_err(|e| e.to_string())?;
    let bin = venv.join("bin");
    for entry in std::fs::read_dir(&bin).map_err(|e| format!("{}: {e}", bin.display()))? {
        let program = entry.map_err(|e| e.to_string())?.file_name();
        let text = program.to_string_lossy();
        // The venv's own interpreter and tools stay inside it.
        if ["python", "pip", "activate", "Activate", "deactivate"]
            .iter()
            .any(|own| text.starts_with(own))
        {
            continue;
        }
        let link = alone_bin().join(&program);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(bin.join(&program), &link)
            .map_err(|e| format!("cannot link {}: {e}", link.display()))?;
    }
    Ok(())
}

/// Builds the Python bindings (crates/tools-py) with maturin and installs the wheel into the
/// test virtualenv. Cargo's incremental build makes a rebuild cheap when nothing changed.
fn build_wheel() -> Result {
    let wheels = tools_dir().join("wheels");
    let _ = std::fs::remove_dir_all(&wheels);
    run(Command::new(venv_bin().join("maturin"))
        .current_dir(repo())
        .args(["build", "-q", "-m", "crates/tools-py/Cargo.toml", "-o"])
        .arg(&wheels)
        .arg("-i")
        .arg(venv_bin().join("python")))?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| e.to_string())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or("maturin built no wheel")?;
    run(Command::new(venv_bin().join("python"))
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--force-reinstall",
            "--no-deps",
        ])
        .arg(wheel))
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
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

fn test(args: &[String]) -> Result {
    // CI always runs the matrix: a crate that only builds inside the whole workspace must
    // not land.
    let ci = std::env::var("CI").map(|v| v == "true").unwrap_or(false);
    let with_matrix = ci || args.iter().any(|a| a == "--matrix");
    let args: Vec<String> = args.iter().filter(|a| *a != "--matrix").cloned().collect();
    let args = &args[..];
    let mut steps = lint::Steps::default();
    steps.run("setup", setup)?;
    let log = tools_dir().join("components.log");
    let _ = std::fs::remove_file(&log);
    // The checks that need no build first: a formatting slip fails in seconds.
    let mut failures = lint::quick(&mut steps);
    let mut unit = cargo();
    unit.args(["test", "--workspace", "--no-fail-fast"])
        .env("AGENT_TOOLS_COMPONENT_LOG", &log);
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
    setup()?;
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
        Some("setup") => setup(),
        Some("test") => test(&args[1..]),
        Some("bench") => bench(&args[1..]),
        Some("lint") => lint::lint(&args[1..]),
        Some("fuzz") => fuzz::fuzz(&args[1..]),
        Some("soak") => soak::soak(&args[1..]),
        _ => Err(
            "usage: cargo xtask setup | test [--matrix] [cargo test args] | lint [STEP...] | bench [FAMILY... | --smoke | peer] | fuzz [--smoke] [--seconds N] [TARGET...] | soak [--minutes N]"
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

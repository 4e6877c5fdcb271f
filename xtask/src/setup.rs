//! `cargo xtask setup`: installs, idempotently and only through this repository's files,
//! every real component the suites drive, listed in `xtask/components/*.toml`.
//!
//! Debian packages come first (servers and adapters may come from them, and apt holds one
//! lock). The package managers after it do not depend on each other, so they run side by
//! side: pip (then the Python bindings' wheel, which needs pip's maturin), the pip packages
//! that need a venv of their own, npm, rustup (then the crates built with `cargo install`,
//! which may need one of its toolchains), and the registry sources of the real-projects
//! suite. Each prints its time, and setup ends with a table of them: on a fresh machine the
//! downloads overlap instead of adding up.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::stamp::stamped;
use crate::{Result, alone_bin, repo, run, tool_path, tools_dir, venv_bin};

/// What `xtask/components/*.toml` list, each file adding to the others.
#[derive(serde::Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Components {
    /// pip packages, installed into the shared venv `.tools/venv`.
    #[serde(default)]
    pub pip: Vec<String>,
    /// pip packages whose pins conflict with the shared venv's (nginx-language-server wants
    /// pydantic 1, the MCP SDK pydantic 2): each gets its own venv, its programs linked into
    /// `.tools/bin`.
    #[serde(default)]
    pub pip_alone: Vec<String>,
    /// npm packages, installed under `.tools/node`.
    #[serde(default)]
    pub npm: Vec<String>,
    /// Debian packages, installed with apt-get when missing.
    #[serde(default)]
    pub apt: Vec<String>,
    /// rustup components (e.g. `rust-analyzer`), added to the active toolchain.
    #[serde(default)]
    pub rustup: Vec<String>,
    /// rustup toolchains besides the active one (e.g. `nightly` for `cargo xtask fuzz`).
    #[serde(default)]
    pub rustup_toolchains: Vec<String>,
    /// rustup targets added to the active toolchain (the other operating systems that
    /// `cargo xtask lint cross` checks).
    #[serde(default)]
    pub rustup_targets: Vec<String>,
    /// crates.io programs, each `NAME@VERSION`, built unoptimised with `cargo install
    /// --debug --locked` into `.tools` (their programs land in `.tools/bin`).
    #[serde(default)]
    pub cargo: Vec<String>,
    /// The rustup toolchain those are built with, when the active one is too old for them.
    #[serde(default)]
    pub cargo_toolchain: Option<String>,
    /// Published packages whose sources the real-projects suite works on, each
    /// `REGISTRY:NAME@VERSION` (see [`crate::real_projects`]).
    #[serde(default)]
    pub projects: Vec<String>,
}

/// Reads and merges every `xtask/components/*.toml`, in file-name order.
pub fn load_components() -> Result<Components> {
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
        all.rustup_targets.extend(c.rustup_targets);
        all.cargo.extend(c.cargo);
        all.cargo_toolchain = c.cargo_toolchain.or(all.cargo_toolchain);
        all.projects.extend(c.projects);
    }
    Ok(all)
}

/// The entries once each, sorted: the same package named by two files installs once.
fn unique(list: &[String]) -> Vec<String> {
    list.iter()
        .cloned()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// One installer's outcome, for the closing table.
struct Installed {
    name: &'static str,
    packages: usize,
    took: Duration,
    /// `Ok(true)` when its stamp said nothing changed.
    outcome: Result<bool>,
}

/// Runs one installer, timed, and prints its line as soon as it ends (the others may still
/// be running).
fn timed(name: &'static str, packages: usize, step: impl FnOnce() -> Result<bool>) -> Installed {
    let started = Instant::now();
    let outcome = step();
    let took = started.elapsed();
    match &outcome {
        Ok(true) => {}
        Ok(false) => eprintln!(
            "xtask: {name}: {packages} package(s) installed in {:.1} s",
            took.as_secs_f64()
        ),
        Err(e) => eprintln!(
            "xtask: {name} FAILED after {:.1} s: {e}",
            took.as_secs_f64()
        ),
    }
    Installed {
        name,
        packages,
        took,
        outcome,
    }
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

/// `cargo xtask setup`: apt first, then every other installer side by side; fails naming
/// each installer that failed.
pub fn setup() -> Result {
    let c = load_components()?;
    std::fs::create_dir_all(tools_dir()).map_err(|e| e.to_string())?;
    let apt = timed("apt", c.apt.len(), || install_apt(&unique(&c.apt)));
    apt.outcome.as_ref().map_err(Clone::clone)?;
    // The shared venv before the threads: pip and the wheel need it, nothing else touches it.
    if !venv_bin().join("python").exists() {
        run(Command::new(real_python())
            .args(["-m", "venv"])
            .arg(tools_dir().join("venv")))?;
    }
    let (pip, alone, npm, rustup) = (
        unique(&c.pip),
        unique(&c.pip_alone),
        unique(&c.npm),
        unique(&c.rustup),
    );
    let projects = unique(&c.projects);
    let mut done = vec![apt];
    std::thread::scope(|s| {
        let threads = [
            s.spawn(|| {
                // The wheel needs maturin from pip; it compiles while npm still downloads.
                let pip = timed("pip", pip.len(), || install_pip(&pip));
                if pip.outcome.is_err() {
                    return vec![pip];
                }
                vec![pip, timed("wheel", 1, || build_wheel().map(|()| false))]
            }),
            s.spawn(|| {
                vec![timed("pip-alone", alone.len(), || {
                    stamped("pip-alone", &alone, || {
                        alone.iter().try_for_each(|spec| install_alone(spec))
                    })
                })]
            }),
            s.spawn(|| vec![timed("npm", npm.len(), || install_npm(&npm))]),
            s.spawn(|| {
                // One thread for rustup: it takes no lock of its own, so its runs stay in line.
                // The crates come after the toolchains: one of them may build them.
                let toolchains = &c.rustup_toolchains;
                let targets = unique(&c.rustup_targets);
                let crates = unique(&c.cargo);
                vec![
                    timed("rustup", rustup.len(), || install_rustup(&rustup)),
                    timed("targets", targets.len(), || install_targets(&targets)),
                    timed("toolchains", toolchains.len(), || {
                        crate::fuzz::install_toolchains(toolchains).map(|()| false)
                    }),
                    timed("cargo", crates.len(), || {
                        install_cargo(&crates, c.cargo_toolchain.as_deref())
                    }),
                ]
            }),
            s.spawn(|| {
                vec![timed("projects", projects.len(), || {
                    crate::real_projects::fetch_all(&projects)
                })]
            }),
        ];
        for t in threads {
            match t.join() {
                Ok(list) => done.extend(list),
                Err(_) => done.push(Installed {
                    name: "installer",
                    packages: 0,
                    took: Duration::ZERO,
                    outcome: Err("an installer thread panicked".into()),
                }),
            }
        }
    });
    eprint!("{}", table(&done));
    let failures: Vec<String> = done
        .iter()
        .filter_map(|i| i.outcome.as_ref().err().map(|e| format!("{}: {e}", i.name)))
        .collect();
    if !failures.is_empty() {
        return Err(failures.join("\n"));
    }
    let env = format!(
        "export PATH=\"{}\"\n",
        tool_path().replace(&std::env::var("PATH").unwrap_or_default(), "$PATH")
    );
    std::fs::write(tools_dir().join("env.sh"), env).map_err(|e| e.to_string())?;
    eprintln!("xtask: setup done; `source .tools/env.sh` puts the tools on PATH");
    Ok(())
}

/// The closing table: each installer's packages, time and outcome.
fn table(done: &[Installed]) -> String {
    let mut out = format!(
        "\nSetup (side by side after apt)\n{:<12} {:>8} {:>9}  result\n",
        "installer", "packages", "seconds"
    );
    for i in done {
        out.push_str(&format!(
            "{:<12} {:>8} {:>9.1}  {}\n",
            i.name,
            i.packages,
            i.took.as_secs_f64(),
            match &i.outcome {
                Ok(true) => "up to date",
                Ok(false) => "installed",
                Err(_) => "FAILED",
            }
        ));
    }
    out
}

fn install_apt(apt: &[String]) -> Result<bool> {
    let missing: Vec<&String> = apt
        .iter()
        .filter(|p| {
            !Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", p])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
                .unwrap_or(false)
        })
        .collect();
    if missing.is_empty() {
        return Ok(true);
    }
    run(&mut as_root(&["apt-get", "update", "-q"]))?;
    let mut args = vec!["apt-get", "install", "-y", "-q", "--no-install-recommends"];
    args.extend(missing.iter().map(|s| s.as_str()));
    run(&mut as_root(&args))?;
    Ok(false)
}

/// `args` run as root: directly when this is root, else through sudo.
pub fn as_root(args: &[&str]) -> Command {
    let mut cmd = if is_root() {
        let mut cmd = Command::new(args[0]);
        cmd.args(&args[1..]);
        cmd
    } else {
        let mut cmd = Command::new("sudo");
        cmd.args(args);
        cmd
    };
    cmd.env("DEBIAN_FRONTEND", "noninteractive");
    cmd
}

fn install_pip(pip: &[String]) -> Result<bool> {
    stamped("pip", pip, || {
        run(Command::new(venv_bin().join("python"))
            .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
            .args(pip))
    })
}

fn install_npm(npm: &[String]) -> Result<bool> {
    if npm.is_empty() {
        return Ok(true);
    }
    stamped("npm", npm, || {
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
            .args(npm))
    })
}

fn install_rustup(rustup: &[String]) -> Result<bool> {
    if rustup.is_empty() {
        return Ok(true);
    }
    stamped("rustup", rustup, || {
        run(Command::new("rustup")
            .args(["component", "add"])
            .args(rustup))
    })
}

/// Adds each rustup target to the active toolchain.
fn install_targets(targets: &[String]) -> Result<bool> {
    if targets.is_empty() {
        return Ok(true);
    }
    stamped("targets", targets, || {
        run(Command::new("rustup").args(["target", "add"]).args(targets))
    })
}

/// Builds each crate (`NAME@VERSION`) with `cargo install --debug --locked` into `.tools`, with
/// `toolchain` when given. Each builds in a target folder of its own that cargo removes
/// afterwards: a shared target folder set for the workspace would hold its lock meanwhile.
fn install_cargo(crates: &[String], toolchain: Option<&str>) -> Result<bool> {
    if crates.is_empty() {
        return Ok(true);
    }
    let mut inputs = crates.to_vec();
    inputs.extend(toolchain.map(|t| format!("toolchain {t}")));
    stamped("cargo", &inputs, || {
        for spec in crates {
            let (name, version) = spec
                .split_once('@')
                .ok_or_else(|| format!("`{spec}` is not NAME@VERSION"))?;
            let mut cmd = Command::new("cargo");
            if let Some(t) = toolchain {
                cmd.arg(format!("+{t}"));
            }
            // Unoptimised: these are servers a test drives over a few files, and their
            // release build was setup's longest step on a fresh machine (PHPantom: 15
            // minutes on two cores beside the test build, 7 unoptimised).
            cmd.args([
                "install",
                "--debug",
                "--locked",
                "--version",
                &format!("={version}"),
                "--root",
            ])
            .arg(tools_dir())
            .arg(name)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET_DIR");
            run(&mut cmd)?;
        }
        Ok(())
    })
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
        link_program(&bin.join(&program), &link)?;
    }
    Ok(())
}

fn link_program(program: &Path, link: &Path) -> Result {
    // Setup runs on Linux; xtask still compiles elsewhere, so the workspace's clippy runs
    // for macOS and Windows cover it too.
    #[cfg(unix)]
    let linked = std::os::unix::fs::symlink(program, link);
    #[cfg(windows)]
    let linked = std::os::windows::fs::symlink_file(program, link);
    linked.map_err(|e| format!("cannot link {}: {e}", link.display()))
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

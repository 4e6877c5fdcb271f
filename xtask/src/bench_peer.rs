//! `cargo xtask bench peer`: agent-tools against Serena (serena-agent from PyPI), side by
//! side through one MCP client, on the sdists of click, requests and Django from PyPI,
//! ripgrep's crate from crates.io and a Cargo workspace whose trait is implemented in other
//! crates. Prints the table of ratios (ours / Serena's).
//!
//! Serena goes into a venv of its own under the target folder (`bench-peer/serena`), pinned,
//! and runs offline (`SERENA_USAGE_REPORTING=false`, no dashboard, no log window). Its
//! pyright launcher runs `uvx -p 3.13`, so a Python 3.13 is looked for on `PATH` and in
//! pyenv. The driver (`xtask/bench_peer/side_by_side.py`) runs under the suite's venv, which
//! has the MCP Python SDK. `AGENT_TOOLS_BIN` names the binary to measure; otherwise a
//! release build is made, copied out of the shared target folder first so that no other
//! build replaces it mid-run. `BENCH_PEER_RUNS` sets the runs per corpus (default 2) and
//! `BENCH_PEER_ONLY` a comma-separated list of corpora (`click`, `requests`, `django`,
//! `ripgrep`, `cargo-ws`); only the sources of the corpora run are fetched: an sdist with
//! Serena's pip, a crate through cargo (a scratch manifest depending on it, `cargo vendor`
//! into the bench folder, then `cargo fetch` of the crate's own lock so that its checks and
//! its language servers run offline). `BENCH_PEER_THINK_S` sets the pause
//! before the breaking edit and the rename on both sides (default 2 s: an agent reads each
//! answer before its next call; 0 asks back to back).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::{Result, cargo, run, target_dir, tool_path, venv_bin};

/// The Serena release measured against.
const SERENA: &str = "serena-agent==2.1.0";
/// The Python corpora: each project's name and the release whose sdist (its sources under
/// `src/`, with its `tests/`) is measured on.
const SDISTS: [(&str, &str); 3] = [
    ("click", "8.1.8"),
    ("requests", "2.32.5"),
    ("django", "5.2.8"),
];
/// The Rust corpora from crates.io: each crate's name and the release measured on.
const CRATES: [(&str, &str); 1] = [("ripgrep", "14.1.1")];

/// Installs what the comparison needs (once) and runs it.
pub(crate) fn bench_peer() -> Result {
    let driver_python = venv_bin().join("python");
    if !driver_python.exists() {
        return Err(format!(
            "{} is missing: run `cargo xtask setup` first (the driver needs the MCP Python SDK)",
            driver_python.display()
        ));
    }
    let work = target_dir().join("bench-peer");
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let serena = install_serena(&work)?;
    let python313 = python313_dir()?;
    let runs = std::env::var("BENCH_PEER_RUNS").unwrap_or_else(|_| "2".into());
    let only = std::env::var("BENCH_PEER_ONLY").unwrap_or_default();
    let think = std::env::var("BENCH_PEER_THINK_S").unwrap_or_else(|_| "2".into());
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|o| o == name);
    let mut sdists = Vec::new();
    for (name, version) in SDISTS {
        if wanted(name) {
            sdists.push(format!(
                "--sdist={name}={}",
                sdist(&work, &serena, name, version)?.display()
            ));
        }
    }
    for (name, version) in CRATES {
        if wanted(name) {
            sdists.push(format!(
                "--crate={name}={}",
                crate_source(&work, name, version)?.display()
            ));
        }
    }
    let ours = our_binary(&work)?;
    run(Command::new(&driver_python)
        .arg(crate::repo().join("xtask/bench_peer/side_by_side.py"))
        .arg("--ours")
        .arg(&ours)
        .arg("--serena")
        .arg(serena.join("bin/serena"))
        .arg("--python313-dir")
        .arg(&python313)
        .arg("--work")
        .arg(&work)
        .args(&sdists)
        .args(["--runs", &runs, "--only", &only, "--think-s", &think])
        .env("PATH", tool_path()))
}

/// Serena's venv, made and filled when its pin is not the one installed.
fn install_serena(work: &Path) -> Result<PathBuf> {
    let venv = work.join("serena");
    let stamp = venv.join("installed");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(SERENA) {
        return Ok(venv);
    }
    let python = ["python3.12", "python3.11", "python3"]
        .into_iter()
        .find(|p| {
            Command::new(p)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .ok_or("no python3 on PATH to make Serena's venv with")?;
    run(Command::new(python).args(["-m", "venv"]).arg(&venv))?;
    run(Command::new(venv.join("bin/pip")).args(["install", "-q", SERENA, "uv"]))?;
    std::fs::write(&stamp, SERENA).map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(venv)
}

/// The folder of a Python 3.13 interpreter (Serena's pyright launcher asks uv for one).
fn python313_dir() -> Result<PathBuf> {
    if let Ok(out) = Command::new("python3.13")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        && out.status.success()
    {
        let exe = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if let Some(dir) = exe.parent() {
            return Ok(dir.to_path_buf());
        }
    }
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".pyenv")))
        .map(|p| p.join("versions"));
    if let Some(versions) = pyenv
        && let Ok(entries) = std::fs::read_dir(&versions)
    {
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("3.13"))
            .map(|e| e.path().join("bin"))
            .filter(|bin| bin.join("python3.13").exists())
            .collect();
        found.sort();
        if let Some(bin) = found.pop() {
            return Ok(bin);
        }
    }
    Err(
        "no Python 3.13 (python3.13 on PATH or in pyenv): Serena's pyright launcher needs one"
            .into(),
    )
}

/// The sdist of `name` at `version`, downloaded from PyPI once (with Serena's pip).
pub(crate) fn sdist(work: &Path, serena: &Path, name: &str, version: &str) -> Result<PathBuf> {
    let dir = work.join("src");
    let sdist = dir.join(format!("{name}-{version}.tar.gz"));
    if !sdist.exists() {
        run(Command::new(serena.join("bin/pip"))
            .args(["download", "-q", "--no-binary", ":all:", "--no-deps"])
            .arg(format!("{name}=={version}"))
            .arg("-d")
            .arg(&dir))?;
    }
    if sdist.exists() {
        Ok(sdist)
    } else {
        Err(format!("pip did not leave {}", sdist.display()))
    }
}

/// The sources of crate `name` at `version` from crates.io, fetched by cargo once: a scratch
/// manifest depending on exactly that release is vendored into the bench folder, and the
/// crate's own lock is fetched so that `cargo check --offline` and the language servers
/// find its dependencies.
pub(crate) fn crate_source(work: &Path, name: &str, version: &str) -> Result<PathBuf> {
    let fetch = work.join("fetch").join(name);
    // Beside the scratch manifest, not under it: a crate under a manifest's folder would
    // believe itself a member of its workspace.
    let vendor = work.join("fetch").join(format!("{name}-vendor"));
    let source = vendor.join(format!("{name}-{version}"));
    let stamp = fetch.join("fetched");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(version) {
        return Ok(source);
    }
    let write = |rel: &str, text: String| {
        let path = fetch.join(rel);
        std::fs::create_dir_all(path.parent().unwrap_or(&fetch))
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write(
        "Cargo.toml",
        format!(
            "[package]\nname = \"bench-peer-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\n\
             [dependencies]\n{name} = \"={version}\"\n\n[workspace]\n"
        ),
    )?;
    write("src/lib.rs", String::new())?;
    let manifest = fetch.join("Cargo.toml");
    let _ = std::fs::remove_dir_all(&vendor);
    run(cargo()
        .args(["vendor", "--versioned-dirs", "--manifest-path"])
        .arg(&manifest)
        .arg(&vendor)
        .stdout(std::process::Stdio::null()))?;
    own_workspace(&source.join("Cargo.toml"))?;
    run(cargo()
        .args(["fetch", "--manifest-path"])
        .arg(source.join("Cargo.toml")))?;
    std::fs::write(&stamp, version)
        .map_err(|e| format!("cannot write {}: {e}", stamp.display()))?;
    Ok(source)
}

/// Makes the published crate at `manifest` a workspace of its own, as it is in its
/// repository (crates.io drops the `[workspace]` table): the bench folder is under this
/// repository's target folder by default, and cargo, `cargo check` on the copies and the
/// language servers would otherwise take this repository's manifest above it for the
/// crate's workspace and refuse it as a non-member.
fn own_workspace(manifest: &Path) -> Result {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    if text.lines().any(|l| l.trim() == "[workspace]") {
        return Ok(());
    }
    std::fs::write(manifest, format!("{text}\n[workspace]\n"))
        .map_err(|e| format!("cannot write {}: {e}", manifest.display()))
}

/// The binary to measure: `AGENT_TOOLS_BIN`, or a release build copied out of the target
/// folder.
pub(crate) fn our_binary(work: &Path) -> Result<PathBuf> {
    if let Some(bin) = std::env::var_os("AGENT_TOOLS_BIN") {
        return Ok(PathBuf::from(bin));
    }
    run(cargo().args(["build", "--release", "-p", "agent-tools"]))?;
    let built = target_dir().join("release/agent-tools");
    let kept = work.join("agent-tools");
    std::fs::copy(&built, &kept)
        .map_err(|e| format!("cannot copy {} to {}: {e}", built.display(), kept.display()))?;
    Ok(kept)
}

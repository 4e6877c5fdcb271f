//! Real published projects, as an agent meets them: one package per language (Python's
//! click, Rust's mime, Go's go-cmp, TypeScript's zod), downloaded from its registry by
//! `cargo xtask setup` (named in `xtask/components/projects.toml`, unpacked under
//! `.tools/projects`, never committed), copied whole into a temporary
//! folder and driven through the public tool API. Each case asks a definition and expects
//! its exact `path:line`, makes a breaking write and expects the exact diagnostic line of a
//! real caller in another file, writes the original back and expects it gone, then renames
//! a symbol used across files and runs the package's own offline tests on the result.
//!
//! A project that is not unpacked fails the case: setup downloads every one of them.

mod go;
mod python;
mod rust;
mod typescript;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::Project;

/// The sources of `spec` (`REGISTRY:NAME@VERSION`), after checking that the components file
/// still pins exactly that version: the expectations below were read from that release.
fn sources(spec: &str) -> Result<PathBuf, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pins = std::fs::read_to_string(repo.join("xtask/components/projects.toml"))
        .map_err(|e| format!("cannot read the projects' components file: {e}"))?;
    if !pins.contains(&format!("\"{spec}\"")) {
        return Err(format!(
            "xtask/components/projects.toml no longer pins {spec:?}; this case's expectations were read from that release"
        ));
    }
    let (_, package) = spec.split_once(':').ok_or("a spec has a registry")?;
    let (name, version) = package.rsplit_once('@').ok_or("a spec has a version")?;
    let dir = repo
        .join(".tools/projects")
        .join(format!("{name}-{version}"));
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "{} is missing: run `cargo xtask setup`, which downloads {spec}",
            dir.display()
        ))
    }
}

/// A run on a copy of the project `spec` in a fresh temporary folder, served with `config`.
fn copy_of(spec: &str, config: &str) -> Result<Project, String> {
    copy_of_folder(spec, "", config)
}

/// A copy of the folder `inside` of the unpacked `spec` (a Debian package's sources sit deep
/// in its tree) in a fresh temporary folder, served with `config`.
fn copy_of_folder(spec: &str, inside: &str, config: &str) -> Result<Project, String> {
    let src = sources(spec)?.join(inside);
    if !src.is_dir() {
        return Err(format!("{spec} has no folder {inside}"));
    }
    // Copied before the run opens, as a checkout is there when an agent's run starts.
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    copy_tree(&src, dir.path())?;
    Ok(Project::open_in(dir, config, true))
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target)?;
        } else {
            std::fs::copy(&path, &target).map_err(|e| format!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// The text of a `definition` question about `symbol` on `line` of `file`.
async fn definition(p: &Project, file: &str, line: u32, symbol: &str) -> String {
    p.ok(json!({"action": "definition", "file": file, "line": line, "symbol": symbol}))
        .await
}

/// Whether `text` holds `line` as one of its whole lines, with the text shown on failure.
#[track_caller]
fn has_line(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "expected the line {line:?} in:\n{text}"
    );
}

/// The files under `dir` whose text mentions `word`, relative to `dir`.
fn files_mentioning(dir: &Path, word: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(next) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read_to_string(&path).is_ok_and(|t| t.contains(word)) {
                found.push(
                    path.strip_prefix(dir)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                );
            }
        }
    }
    found
}

/// Runs `program args` in the copy; its standard output when it succeeds, else what it
/// printed and its status.
fn run_in(
    p: &Project,
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(p.root())
        .output()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(format!(
            "{program} {args:?} failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Prints, for `spec` served with `config`, the time from the run's open to the first
/// answer to the definition request `args` that holds the line `want`: with its server
/// started with the run and without, the first query asked at once or after 3 s (an agent
/// reading files first). The definition is still asserted; the times never are.
async fn time_first_correct_definition(
    spec: &str,
    config: &str,
    args: serde_json::Value,
    want: &str,
) {
    for (start, pause) in [(true, 0), (false, 0), (false, 3), (true, 3)] {
        let config = config.replacen(
            "[lsp]\n",
            &format!("[lsp]\nstart_at_run_start = {start}\n"),
            1,
        );
        let p = copy_of(spec, &config).unwrap_or_else(|e| panic!("{e}"));
        let opened = std::time::Instant::now();
        tokio::time::sleep(std::time::Duration::from_secs(pause)).await;
        let asked = std::time::Instant::now();
        let mut asks = 0;
        loop {
            asks += 1;
            let out = p.ok(args.clone()).await;
            if out.lines().any(|l| l == want) {
                break;
            }
            assert!(asks < 600, "no correct definition: {out}");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        eprintln!(
            "{spec}, start_at_run_start = {start}, first query {pause} s after the open: first correct definition {:.2} s after the open ({:.2} s after the first query, {asks} ask(s))",
            opened.elapsed().as_secs_f64(),
            asked.elapsed().as_secs_f64()
        );
        p.close_and_check().await;
    }
}

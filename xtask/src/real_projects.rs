//! The sources of the real-projects suite (and Windows' Node.js for the `wine` step):
//! published packages, downloaded by `cargo xtask setup` through each registry's own client
//! and unpacked under `.tools/projects`, never committed.
//!
//! `xtask/components/*.toml` name them in `projects`, each `REGISTRY:NAME@VERSION`:
//! - `pypi:click@8.1.8`: the sdist (`pip download --no-binary`), unpacked to `click-8.1.8`;
//! - `crates:mime@0.3.17`: the crate as cargo vendors it, unpacked to `mime-0.3.17` with an
//!   empty `[workspace]` table added (it stands alone inside this checkout), its
//!   dependencies fetched so its own tests build offline;
//! - `npm:NAME@VERSION`: the package tarball (`npm pack`), unpacked to `NAME-VERSION`;
//! - `deb:NAME@VERSION`: the Debian package (`apt-get download`, no root needed), extracted
//!   whole to `NAME-VERSION` (a `golang-*-dev` puts its Go sources under
//!   `usr/share/gocode/src`).
//!
//! Each lands in a scratch folder first and is renamed into place when complete, so an
//! interrupted download never looks like a source tree; one already in place is kept.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::stamp::stamped;
use crate::{Result, run, tools_dir, venv_bin};

/// One published package the suite works on.
struct Spec<'a> {
    registry: &'a str,
    name: &'a str,
    version: &'a str,
}

fn parse(spec: &str) -> Result<Spec<'_>> {
    let bad = || format!("project {spec:?}: expected REGISTRY:NAME@VERSION");
    let (registry, rest) = spec.split_once(':').ok_or_else(bad)?;
    // npm scopes start with `@`: the version is after the last one.
    let (name, version) = rest.rsplit_once('@').ok_or_else(bad)?;
    if name.is_empty() || version.is_empty() {
        return Err(bad());
    }
    Ok(Spec {
        registry,
        name,
        version,
    })
}

/// Where the sources of `NAME@VERSION` are unpacked (an npm scope's `/` becomes `-`).
fn place(spec: &Spec) -> PathBuf {
    let name = spec.name.trim_start_matches('@').replace('/', "-");
    tools_dir()
        .join("projects")
        .join(format!("{name}-{}", spec.version))
}

/// Downloads and unpacks every project not yet in place; answers whether all were.
pub fn fetch_all(specs: &[String]) -> Result<bool> {
    let parsed: Vec<Spec> = specs.iter().map(|s| parse(s)).collect::<Result<_>>()?;
    let all_there = parsed.iter().all(|s| place(s).is_dir());
    if all_there {
        return stamped("projects", specs, || Ok(()));
    }
    stamped("projects", specs, || parsed.iter().try_for_each(fetch))?;
    Ok(false)
}

fn fetch(spec: &Spec) -> Result {
    let dest = place(spec);
    if dest.is_dir() {
        return Ok(());
    }
    let parent = dest.parent().ok_or("the projects folder has no parent")?;
    let scratch = parent.join(format!(
        ".partial-{}",
        dest.file_name().unwrap_or_default().to_string_lossy()
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let unpacked = match spec.registry {
        "pypi" => from_pypi(spec, &scratch)?,
        "crates" => from_crates(spec, &scratch)?,
        "npm" => from_npm(spec, &scratch)?,
        "deb" => from_debian(spec, &scratch)?,
        other => {
            return Err(format!(
                "project {}@{}: no registry {other:?} (pypi, crates, npm, deb)",
                spec.name, spec.version
            ));
        }
    };
    std::fs::rename(&unpacked, &dest).map_err(|e| {
        format!(
            "cannot move {} to {}: {e}",
            unpacked.display(),
            dest.display()
        )
    })?;
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!(
        "xtask: project {}@{} from {} in {}",
        spec.name,
        spec.version,
        spec.registry,
        dest.display()
    );
    Ok(())
}

/// The one file in `dir` whose name ends with `suffix`.
fn only_file(dir: &Path, suffix: &str) -> Result<PathBuf> {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(format!(
            "expected one {suffix} in {}, found {}",
            dir.display(),
            found.len()
        )),
    }
}

/// Unpacks a tarball whose entries sit under one top folder into `scratch/tree`.
fn untar(archive: &Path, scratch: &Path) -> Result<PathBuf> {
    let tree = scratch.join("tree");
    std::fs::create_dir_all(&tree).map_err(|e| e.to_string())?;
    run(Command::new("tar")
        .args(["xzf"])
        .arg(archive)
        .args(["--strip-components=1", "-C"])
        .arg(&tree))?;
    Ok(tree)
}

fn from_pypi(spec: &Spec, scratch: &Path) -> Result<PathBuf> {
    run(Command::new(venv_bin().join("python"))
        .args([
            "-m",
            "pip",
            "download",
            "-q",
            "--disable-pip-version-check",
            "--no-binary",
            ":all:",
            "--no-deps",
        ])
        .arg(format!("{}=={}", spec.name, spec.version))
        .arg("-d")
        .arg(scratch))?;
    untar(&only_file(scratch, ".tar.gz")?, scratch)
}

fn from_crates(spec: &Spec, scratch: &Path) -> Result<PathBuf> {
    // Cargo has no download command: a throwaway package that depends on exactly this
    // version, vendored, yields the crate as published.
    let host = scratch.join("host");
    std::fs::create_dir_all(host.join("src")).map_err(|e| e.to_string())?;
    let manifest = format!(
        "[package]\nname = \"real-project-host\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[dependencies]\n{} = \"={}\"\n\n[workspace]\n",
        spec.name, spec.version
    );
    std::fs::write(host.join("Cargo.toml"), manifest).map_err(|e| e.to_string())?;
    std::fs::write(host.join("src/lib.rs"), "").map_err(|e| e.to_string())?;
    run(Command::new("cargo")
        .args(["vendor", "-q", "--versioned-dirs", "--manifest-path"])
        .arg(host.join("Cargo.toml"))
        .arg(scratch.join("vendor")))?;
    let tree = scratch
        .join("vendor")
        .join(format!("{}-{}", spec.name, spec.version));
    // Unpacked inside this checkout, cargo would take it for a stray member of our
    // workspace: an empty `[workspace]` table makes it its own, as it is where it was
    // published from.
    let manifest = tree.join("Cargo.toml");
    let mut text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    if !text.lines().any(|l| l.trim() == "[workspace]") {
        text.push_str("\n[workspace]\n");
    }
    std::fs::write(&manifest, text)
        .map_err(|e| format!("cannot write {}: {e}", manifest.display()))?;
    // Its tests' dependencies too, so `cargo test --offline` builds in a copy.
    run(Command::new("cargo")
        .args(["fetch", "-q", "--manifest-path"])
        .arg(tree.join("Cargo.toml")))?;
    Ok(tree)
}

fn from_npm(spec: &Spec, scratch: &Path) -> Result<PathBuf> {
    run(Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(scratch)
        .arg(format!("{}@{}", spec.name, spec.version)))?;
    untar(&only_file(scratch, ".tgz")?, scratch)
}

fn from_debian(spec: &Spec, scratch: &Path) -> Result<PathBuf> {
    run(Command::new("apt-get")
        .current_dir(scratch)
        .args(["download", "-q"])
        .arg(format!("{}={}", spec.name, spec.version)))?;
    let tree = scratch.join("tree");
    run(Command::new("dpkg-deb")
        .arg("-x")
        .arg(only_file(scratch, ".deb")?)
        .arg(&tree))?;
    Ok(tree)
}

//! Recording which functions each test runs, while the runner runs it, with a recorder of
//! ours written into the run's state folder (outside the checkout) and its output read back
//! after the run. Nothing is installed in the project's environment:
//!
//! - pytest: a plugin (`agent_tools_reach.py`, loaded with `-p`), per test; its Python
//!   works from 3.8 on.
//! - vitest: a custom coverage provider (`agent_tools_reach.mjs`, named on the command line),
//!   per test file: V8's function coverage placed in the source through vite's source maps
//!   (vitest 1–3); a test file recorded stands for each test `list` reads in it.
//! - cargo-nextest: LLVM's source-based coverage, per test (see [`llvm`]): a target runner
//!   (`agent_tools_reach.sh`) names each test's profiles, the toolchain's `llvm-profdata`
//!   and `llvm-cov` read them. Plain `cargo test` runs a binary's tests in one process, so
//!   it records nothing.

mod llvm;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tools_core::discovery::ProgramSearch;

use crate::listing::tests_in;
use crate::runner::{CargoRunner, Detected, Resolved, RunnerKind};
use llvm::RustCoverage;

/// The module name pytest's `-p` loads, and the stem of both recorders' files.
const RECORDER_MODULE: &str = "agent_tools_reach";

/// The recorder for `kind` and its file's extension; `None` for a runner recording nothing.
fn recorder_of(kind: RunnerKind) -> Option<(&'static str, &'static str)> {
    match kind {
        RunnerKind::Pytest => Some((include_str!("agent_tools_reach.py"), "py")),
        RunnerKind::Vitest => Some((include_str!("agent_tools_reach.mjs"), "mjs")),
        // A shell script: where one runs as a program (not Windows, for now).
        RunnerKind::Nextest if tools_core::platform::RUNS_SHELL_SCRIPTS => {
            Some((include_str!("agent_tools_reach.sh"), "sh"))
        }
        _ => None,
    }
}

/// Whether a `run` in a project whose runner is `kind` records which functions each test
/// runs (pytest per test, vitest per test file, a Cargo project per test when its tests run
/// with cargo-nextest: not when `cargo` asks for cargo test).
pub fn records(kind: RunnerKind, cargo: CargoRunner) -> bool {
    match kind {
        RunnerKind::Cargo => {
            cargo != CargoRunner::Test && recorder_of(RunnerKind::Nextest).is_some()
        }
        _ => recorder_of(kind).is_some(),
    }
}

/// Whether a run with `resolved` records, writing nothing: `Ok(true)` it does, `Ok(false)`
/// its runner records nothing, `Err` says why a runner that could record cannot (the
/// answer of `status`).
pub fn will_record(
    resolved: &Resolved,
    cargo: CargoRunner,
    search: &ProgramSearch,
) -> Result<bool, String> {
    rust_coverage(resolved, cargo, search, Path::new(""))?;
    Ok(recorder_of(resolved.detected.kind).is_some())
}

/// For nextest, what its recording needs (the instrumented build's folder in `state`, the
/// LLVM programs of the `rustc` `search` finds for the project); `Err` for a Cargo project
/// that would record but runs with cargo test, or whose toolchain lacks the LLVM programs.
fn rust_coverage(
    resolved: &Resolved,
    cargo: CargoRunner,
    search: &ProgramSearch,
    state: &Path,
) -> Result<Option<RustCoverage>, String> {
    match resolved.detected.kind {
        RunnerKind::Cargo if records(RunnerKind::Cargo, cargo) => Err(
            "a Rust project's tests are recorded when they run with cargo-nextest, one process per test (it is not installed)"
                .into(),
        ),
        RunnerKind::Nextest if recorder_of(RunnerKind::Nextest).is_some() => {
            let cargo = resolved.argv.first().ok_or("no cargo")?;
            let root = &resolved.detected.root;
            let rustc = search.find("rustc", root).map_err(|e| format!("rustc: {e}"))?;
            RustCoverage::find(&rustc.path, cargo, root, state).map(Some)
        }
        _ => Ok(None),
    }
}

/// One recording under way: where the recorder is and where it writes.
#[derive(Debug, Clone)]
pub struct Recording {
    kind: RunnerKind,
    /// The recorder's file (its folder is put first on pytest's `PYTHONPATH`).
    recorder: PathBuf,
    /// The recorder writes `<prefix>-<process>.json` (nextest's runner, `<prefix>-*`).
    prefix: PathBuf,
    /// For nextest: the instrumented build and the LLVM programs reading its profiles.
    rust: Option<RustCoverage>,
}

impl Recording {
    /// Writes the recorder of `resolved`'s runner into `state` (the run's test folder) for
    /// the `n`th run: `Ok(None)` when the runner records nothing, `Err` says why a runner
    /// that could record cannot (the run then goes on unrecorded).
    pub fn prepare(
        state: &Path,
        n: usize,
        resolved: &Resolved,
        cargo: CargoRunner,
        search: &ProgramSearch,
    ) -> Result<Option<Recording>, String> {
        let rust = rust_coverage(resolved, cargo, search, state)?;
        let Some((source, extension)) = recorder_of(resolved.detected.kind) else {
            return Ok(None);
        };
        let dir = state.join("recorder");
        let file = dir.join(format!("{RECORDER_MODULE}.{extension}"));
        let current = std::fs::read_to_string(&file).ok();
        if current.as_deref() != Some(source) {
            let written = std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::write(&file, source))
                .and_then(|()| tools_core::platform::make_executable(&file));
            written.map_err(|e| format!("cannot write the recorder: {e}"))?;
        }
        Ok(Some(Recording {
            kind: resolved.detected.kind,
            recorder: file,
            prefix: state.join(format!("reach-{n}")),
            rust,
        }))
    }

    /// The runner's arguments that load the recorder.
    pub fn args(&self) -> Vec<OsString> {
        match self.kind {
            RunnerKind::Vitest => {
                let mut module = OsString::from("--coverage.customProviderModule=");
                module.push(&self.recorder);
                vec![
                    "--coverage.enabled=true".into(),
                    "--coverage.provider=custom".into(),
                    module,
                ]
            }
            RunnerKind::Nextest => self
                .rust
                .as_ref()
                .map(RustCoverage::args)
                .unwrap_or_default(),
            _ => vec!["-p".into(), RECORDER_MODULE.into()],
        }
    }

    /// The environment the recorder needs: where to write, the project's folder its paths
    /// are relative to, for pytest `PYTHONPATH` with the plugin's folder first, and for
    /// nextest the instrumented build's (`inherited` gives the value a variable would
    /// otherwise have in the child).
    pub fn env(
        &self,
        inherited: impl Fn(&str) -> Option<OsString>,
        project: &Path,
    ) -> Vec<(String, OsString)> {
        let mut env = vec![
            (
                "AGENT_TOOLS_REACH_OUT".to_string(),
                self.prefix.clone().into(),
            ),
            ("AGENT_TOOLS_REACH_ROOT".to_string(), project.into()),
        ];
        if self.kind == RunnerKind::Pytest
            && let Some(dir) = self.recorder.parent()
        {
            let mut paths = vec![dir.to_path_buf()];
            if let Some(old) = inherited("PYTHONPATH") {
                paths.extend(std::env::split_paths(&old));
            }
            let python_path = std::env::join_paths(paths).unwrap_or_else(|_| dir.into());
            env.push(("PYTHONPATH".to_string(), python_path));
        }
        if let Some(rust) = &self.rust {
            env.extend(rust.env(
                &self.recorder,
                &self.prefix,
                inherited("RUSTFLAGS").as_deref(),
            ));
        }
        env
    }

    /// What the run's processes wrote (one file per pytest process: xdist's workers each
    /// write their own; one from vitest's main process; nextest's profiles, read through
    /// LLVM's programs), removed once read, with each test file vitest recorded standing
    /// for the tests of it `list` reads in the project `detected` (the file itself when it
    /// reads none). Unreadable files are skipped. It may take a while (nextest: a program
    /// per profile): call it where blocking is allowed.
    pub fn take(&self, detected: &Detected, workspace: &Path) -> Vec<Output> {
        if let Some(rust) = &self.rust {
            return rust.read(&self.prefix, &detected.root, workspace);
        }
        let mut out = self.written();
        if self.kind == RunnerKind::Vitest {
            for o in &mut out {
                o.tests = std::mem::take(&mut o.tests)
                    .into_iter()
                    .flat_map(|t| tests_of_recorded_file(t, detected))
                    .collect();
            }
        }
        out
    }

    fn written(&self) -> Vec<Output> {
        let Some(dir) = self.prefix.parent() else {
            return Vec::new();
        };
        let Some(stem) = self.prefix.file_name().and_then(|s| s.to_str()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir(dir) else {
            return out;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(rest) = name.strip_prefix(stem).and_then(|r| r.strip_prefix('-')) else {
                continue;
            };
            if !rest.ends_with(".json") && !rest.ends_with(".json.part") {
                continue;
            }
            let path = entry.path();
            if rest.ends_with(".json")
                && let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(parsed) = serde_json::from_str::<Output>(&text)
            {
                out.push(parsed);
            }
            let _ = std::fs::remove_file(&path);
        }
        out
    }
}

/// The tests `list` reads in the test file `file` recorded whole, each with its functions;
/// `file` itself when it reads none (tests made in a loop) or cannot be read.
fn tests_of_recorded_file(file: OutputTest, detected: &Detected) -> Vec<OutputTest> {
    let path = detected.root.join(&file.file);
    let items = std::fs::read_to_string(&path)
        .map(|text| tests_in(&path, &text, detected))
        .unwrap_or_default();
    if items.is_empty() {
        return vec![file];
    }
    items
        .into_iter()
        .map(|item| OutputTest {
            id: item.id,
            file: file.file.clone(),
            line: item.line,
            functions: file.functions.clone(),
        })
        .collect()
}

/// What one recording process wrote (see the recorders' docs).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Output {
    /// The digest (sha256, hex) of each file with a recorded function, as it was read.
    pub files: std::collections::BTreeMap<String, String>,
    /// `[path, first line, last line, name]`.
    pub functions: Vec<(String, usize, usize, String)>,
    /// The tests run.
    pub tests: Vec<OutputTest>,
}

/// One test of an [`Output`].
#[derive(Debug, Clone, Deserialize)]
pub struct OutputTest {
    /// Its id, as `list` names it.
    pub id: String,
    /// Its file, relative to the project.
    pub file: String,
    /// The line of its definition.
    pub line: usize,
    /// Indexes into [`Output::functions`].
    pub functions: Vec<usize>,
}

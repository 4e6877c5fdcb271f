//! # tools-test
//!
//! The project's own tests for an agent: the `test` tool (tier exec) lists them and runs them
//! with the project's own runner, found from its configuration, in the project's own
//! environment, and answers what an agent needs first:
//!
//! ```text
//! 1 passed, 1 failed, 0 skipped in 0.4 s — pytest
//! tests/test_calc.py:8 tests/test_calc.py::test_sub — assert 2 == 1
//! ```
//!
//! - `list` (`file` and/or `symbol`): the tests, `path:line id`, read from the files' text.
//!   A test file lists its own tests; a source file the tests of the test files that name
//!   its module; a symbol the tests whose body names it.
//! - `list` with `file`, `line` and `symbol`: the tests that reach the symbol, followed
//!   through its uses (the run's reference sources: the language servers) and the
//!   functions that use it, up to a depth, plus the server's own related tests where it
//!   has the request (rust-analyzer's `relatedTests`); the answer names what was not
//!   searched.
//! - `changed_since` (a git revision) with `list` or `run`: the tests that reach the
//!   functions the diff since that revision touches.
//! - `run` (`ids`, or a `file`, or nothing for the suite at the workspace root): pytest
//!   (read from `--junitxml`), cargo test (libtest's output), go test (`-json`), vitest and
//!   jest (their JSON report). Reports go to the run's state folder, outside the checkout.
//!   Build and collection errors count as failures. The answer pages with `offset`; the
//!   same call with an `offset` pages the last answer without running the tests again.
//! - Every write's answer (write, edit, apply_patch, symbol edits, resolve, lsp_rename) ends
//!   with a `tests` section: the tests that reach the functions THAT write changed (its
//!   files' text from before the call against their text now), followed as `list` with
//!   `line` does, within `on_write_ms`, beside diagnostics on write's wait (once it has
//!   taken the servers' state before), and at most `on_write_hold_ms` past the moment the
//!   rest of the answer is ready; a call that checks its writes in the background (a
//!   rename whose check goes on) waits for no walk at all: its changed tests and the
//!   recorded ones are named, and the uses not followed are listed. A cut says where and
//!   how to get the rest. On in a
//!   trusted workspace for files whose language has a runner here; `[test] on_write =
//!   false` turns it off. `run` with `affected: true` runs the tests the last write named.
//! - A `run` of pytest records which of the project's functions each test runs (a plugin
//!   of ours, written into the run's state folder and loaded with `-p`; nothing is
//!   installed in the project's environment), and a `run` of vitest which each test file
//!   runs (our custom coverage provider, named on its command line: V8's function coverage
//!   placed through vite's source maps; a file stands for each test `list` reads in it),
//!   and a `run` of a Rust project with cargo-nextest which each test runs (LLVM's
//!   source-based coverage: an instrumented build into a target folder of the run's own,
//!   each test's profiles, and those of the programs it starts, read with the toolchain's
//!   `llvm-profdata` and `llvm-cov` from rustup's `llvm-tools`; a run that cannot record
//!   says why), kept with the run's state, not in the checkout. Writes, `list` with a symbol and
//!   `changed_since` then also name the tests that ran what changed — those a static walk
//!   misses (a command table, a test runner's `invoke`, decorators) — matched by line while
//!   the file's text is the one recorded (each write carries the lines over to its new
//!   text) and by the changed functions' names once it changed some other way. A write in a project with nothing recorded yet
//!   says so in its last line. The cost: on Python before 3.12 a profile function sees
//!   every call (click's suite runs in about twice its time); from 3.12 on,
//!   `sys.monitoring` reports each function once per test; a Rust project is built again,
//!   instrumented, on its first recorded run. `[test] record = false` turns it off.
//! - `run` of the whole suite at a Cargo workspace's root runs every member's tests.
//! - `status`: the runner per language, or why there is none (also in `doctor`).
//!
//! Choices where the specification is silent:
//! - `run` runs project code, so an untrusted workspace is refused (the first line says so
//!   and how to trust it). `list` and `status` run nothing and answer in any workspace.
//! - Each run is a process tree of its own, reported as progress every `progress_ms` while
//!   it runs; a timeout (`timeout_ms`, default 10 minutes) or a cancelled call kills the
//!   whole tree, whatever the tests forked. Output is read up to `max_output_bytes` (per
//!   stream, default 32 MiB); past it the run is stopped and the counts say they are
//!   partial.
//! - pytest runs as the project interpreter's `-m pytest` when the project has a `.venv` or
//!   `venv`, else the `pytest` found first; `-p no:cacheprovider`, so the run writes no
//!   cache into the checkout.
//! - A Cargo project runs in its nearest package folder with nextest when `cargo-nextest`
//!   is installed (its libtest-shaped JSON lines), else cargo test (libtest's output);
//!   `[test] cargo` chooses.
//!
//! Configuration: the `[test]` section of `agent-tools.toml` ([`TestConfig`]).

mod answer;
mod args;
mod changes;
mod command;
mod digest;
mod exec;
mod list;
mod listing;
mod on_write;
mod reach;
mod read;
mod recorded;
mod recorder;
mod report;
mod run;
mod runner;
mod status;
mod tool;

use std::sync::{Arc, Mutex};

use serde::Deserialize;
use tools_core::{DoctorEntry, Run, Tool, ToolError, ToolFamily};

pub use listing::{TestItem, is_test_file};
pub use report::{Failure, Report};
pub use runner::{CargoRunner, Language, RunnerKind};

/// Default text budget of an answer in bytes.
pub const DEFAULT_ANSWER_BYTES: usize = 4096;

/// The `[test]` section of `agent-tools.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TestConfig {
    /// Register the tool at all (default true).
    pub enabled: bool,
    /// Time budget of one `run` in milliseconds (default 600 000); past it the runner's
    /// whole process tree is killed.
    pub timeout_ms: u64,
    /// Milliseconds between progress reports while a run goes on (default 5 000).
    pub progress_ms: u64,
    /// Bytes of the runner's stdout, and of its stderr, read at most (default 32 MiB).
    pub max_output_bytes: usize,
    /// Text budget of an answer in bytes (default 4096); `offset` pages on.
    pub answer_bytes: usize,
    /// The runner of a Cargo project: `auto` (nextest when `cargo-nextest` is installed,
    /// else cargo test; the default), `test` or `nextest`.
    pub cargo: CargoRunner,
    /// Name the tests a write reaches in the write's own answer (default true; trusted
    /// workspaces only).
    pub on_write: bool,
    /// Time following a write's changes to its tests may take, in milliseconds (default
    /// 5 000); past it the answer names what was found and where the walk stopped.
    pub on_write_ms: u64,
    /// Time the walk may hold a write's answer once the rest of it is ready (diagnostics on
    /// write has its verdict; a rename's check goes on in the background), in milliseconds
    /// (default 1 000): past it the answer names what was found and where the walk stopped.
    pub on_write_hold_ms: u64,
    /// Record which of the project's functions each test runs, while pytest runs it
    /// (default true): later writes then name the tests that ran what they changed,
    /// which a static walk misses (a command run through a test runner, dynamic dispatch).
    pub record: bool,
}

impl Default for TestConfig {
    fn default() -> Self {
        TestConfig {
            enabled: true,
            timeout_ms: 600_000,
            progress_ms: 5_000,
            max_output_bytes: 32 << 20,
            answer_bytes: DEFAULT_ANSWER_BYTES,
            cargo: CargoRunner::Auto,
            on_write: true,
            on_write_ms: 5_000,
            on_write_hold_ms: 1_000,
            record: true,
        }
    }
}

/// What the tool keeps across calls of one run.
pub(crate) struct TestShared {
    config: TestConfig,
    last: Mutex<Option<run::LastRun>>,
    /// The tests the last write named, for `run` with `affected`.
    last_write: Mutex<Option<on_write::LastWrite>>,
    runs: std::sync::atomic::AtomicUsize,
    /// What each test ran, recorded by this run's `test run`s.
    recorded: Mutex<recorded::Recorded>,
    /// Why the last recorded run of a project (by its key, see `recorded::project_key`)
    /// recorded nothing, for the writes' last line.
    unrecordable: Mutex<std::collections::HashMap<String, String>>,
}

/// The `test` family for one run.
pub struct TestFamily {
    run: Arc<Run>,
    shared: Arc<TestShared>,
}

/// Wires the family for `run` from its `[test]` configuration. `Ok(None)` when disabled.
pub fn family(run: &Arc<Run>) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    let config: TestConfig = run.config().section("test")?;
    if !config.enabled {
        return Ok(None);
    }
    if config.on_write {
        // The observer compares each written file with its text from before the call.
        run.workspace().pre_write_images().enable();
    }
    Ok(Some(Arc::new(TestFamily {
        run: Arc::clone(run),
        shared: Arc::new(TestShared {
            config,
            last: Mutex::new(None),
            last_write: Mutex::new(None),
            runs: std::sync::atomic::AtomicUsize::new(0),
            recorded: Mutex::new(recorded::Recorded::default()),
            unrecordable: Mutex::new(std::collections::HashMap::new()),
        }),
    })))
}

#[tools_core::async_trait]
impl ToolFamily for TestFamily {
    fn name(&self) -> &str {
        "test"
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(tool::TestTool {
            shared: Arc::clone(&self.shared),
        })]
    }
    fn observers(&self) -> Vec<Arc<dyn tools_core::WriteObserver>> {
        if !self.shared.config.on_write {
            return Vec::new();
        }
        vec![Arc::new(on_write::ReachingOnWrite {
            budget: std::time::Duration::from_millis(self.shared.config.on_write_ms),
            hold: std::time::Duration::from_millis(self.shared.config.on_write_hold_ms),
            shared: Arc::clone(&self.shared),
        })]
    }
    async fn doctor(&self) -> Vec<DoctorEntry> {
        let run = Arc::clone(&self.run);
        let (cargo, record) = (self.shared.config.cargo, self.shared.config.record);
        tokio::task::spawn_blocking(move || status::doctor(&run, cargo, record))
            .await
            .unwrap_or_default()
    }
}

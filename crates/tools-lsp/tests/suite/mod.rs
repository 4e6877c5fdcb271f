//! Shared helpers: a temporary project, a run with the lsp family wired into a registry,
//! and calls through the registry's guard chain as a model would make them.

mod acquire;
mod big_break;
mod budget;
mod c_checker;
mod clangd;
mod cold_start;
mod complete_writes;
mod failures;
mod file_uris;
mod first_line_limits;
mod first_name_search;
mod first_write;
mod go;
mod hidden_findings;
mod hierarchy;
mod idle_companions;
mod long_first_analysis;
mod mixed_astro;
mod mixed_components;
mod mixed_svelte;
mod mixed_vue;
mod mixed_vue_template;
mod narrowed_python;
mod noisy_cargo;
mod noisy_go;
mod noisy_python;
mod noisy_typescript;
mod on_write;
mod outline_shape;
mod preview;
mod preview_pending;
mod project_c;
mod project_check_ruff;
mod project_go;
mod project_python;
mod project_rust;
mod project_typescript;
mod python;
mod real_projects;
mod rename;
mod rename_check;
#[cfg(unix)]
mod rename_safety;
mod reopened_users;
mod rust_checker;
mod sass;
mod servers;
mod shared;
mod sibling_projects;
mod status;
mod symbol_search;
mod typescript;
mod workspace_projects;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tools_core::{
    CallError, Config, Registry, RegistryBuilder, Run, RunOptions, Surface, ToolOutput,
};

pub struct Project {
    pub dir: tempfile::TempDir,
    pub run: Arc<Run>,
    pub reg: Arc<Registry>,
}

/// `config` with `[lsp] start_at_run_start = false`: for cases whose first call is the one
/// that starts the server (a trusted run would start it as it opens). `config` begins with
/// its `[lsp]` section, if it has one.
pub fn started_by_the_first_call(config: &str) -> String {
    match config.strip_prefix("[lsp]\n") {
        Some(rest) => format!("[lsp]\nstart_at_run_start = false\n{rest}"),
        None => format!("[lsp]\nstart_at_run_start = false\n{config}"),
    }
}

/// A configuration that serves `.fake` files (under a `fake.toml` marker) with the fake
/// server in `mode` (see `fixtures/fake_lsp.py`), with `lsp` as the rest of its `[lsp]`
/// section (`key = value` lines). The fake server starts on the first call, not with the
/// run: the tests count its starts and failures from that call on.
pub fn fake_server_config(mode: &str, lsp: &str) -> String {
    format!(
        "[lsp]\nstart_at_run_start = false\n{lsp}[lsp.servers.fake]\ncommand = [\"python3\", {:?}, {mode:?}]\nmarkers = [\"fake.toml\"]\nextensions = [\"fake\"]\n",
        fixture("fake_lsp.py").display().to_string()
    )
}

/// With `RUST_LOG` set (`tools_lsp=debug,tools_lsp::wire=trace` shows every settle, publish
/// and message), the tools' log goes to the test's output.
pub fn print_the_log_if_asked() {
    if std::env::var_os("RUST_LOG").is_some() {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .with_ansi(false)
            .try_init();
    }
}

impl Project {
    pub fn new(files: &[(&str, &str)], config: &str) -> Project {
        Project::with_trust(files, config, true)
    }

    /// [`Project::new`] for a workspace the user has not trusted (the repository's own
    /// programs do not run: no build scripts, no check on save).
    pub fn with_trust(files: &[(&str, &str)], config: &str, trusted: bool) -> Project {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        Project::open_in(dir, config, trusted)
    }

    /// A run opened on `dir` as it is (its files already there when the run starts).
    pub fn open_in(dir: tempfile::TempDir, config: &str, trusted: bool) -> Project {
        print_the_log_if_asked();
        let run = Run::new(RunOptions {
            root: dir.path().into(),
            conversation_id: "test".into(),
            config: Config::parse(config).unwrap(),
            trusted,
        })
        .unwrap();
        let fam = tools_lsp::family(&run).unwrap().unwrap();
        let reg = RegistryBuilder::new(Arc::clone(&run))
            .family(fam)
            .tool(Arc::new(TestWrite))
            .tool(Arc::new(preview::TestPreview))
            .tool(Arc::new(preview::TestResolve))
            .build()
            .unwrap();
        Project { dir, run, reg }
    }

    /// A copy of the multi-file project `tests/fixtures/projects/<name>` (a
    /// `compile_commands.json.in` becomes `compile_commands.json` with `@ROOT@` replaced by
    /// the copy's path).
    pub fn from_fixture(name: &str, config: &str) -> Project {
        Project::from_fixture_with_trust(name, config, true)
    }

    /// [`Project::from_fixture`] with the workspace trusted or not. The files are there
    /// before the run opens, as a checkout is when an agent's run starts on it.
    pub fn from_fixture_with_trust(name: &str, config: &str, trusted: bool) -> Project {
        Project::open_in(fixture_copy(name), config, trusted)
    }

    pub fn root(&self) -> PathBuf {
        self.run.root().to_path_buf()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root().join(rel)).unwrap()
    }

    pub async fn call(&self, tool: &str, args: Value) -> Result<ToolOutput, CallError> {
        self.reg.call(Surface::FULL, tool, args).await
    }

    /// `lsp_rename` of `symbol` at `file:line` to `new_name`, which must succeed and report
    /// no new diagnostic (a rename changes no meaning, so one would be a phantom), in its
    /// answer or, when its check went on, in the next call's.
    pub async fn rename_cleanly(
        &self,
        file: &str,
        line: u32,
        symbol: &str,
        new_name: &str,
    ) -> ToolOutput {
        let (out, check) = self
            .rename_checked(
                json!({"file": file, "line": line, "symbol": symbol, "new_name": new_name}),
            )
            .await;
        assert!(!check.contains("new diagnostic(s)"), "phantom: {check}");
        out
    }

    /// `lsp_rename` with `args`, which must succeed, and the text of its check: the whole
    /// answer when the check finished in time, or else that answer followed by the next
    /// call's (`lsp status`), which must lead with the check and name this rename.
    pub async fn rename_checked(&self, args: Value) -> (ToolOutput, String) {
        let started = std::time::Instant::now();
        let out = self.call("lsp_rename", args.clone()).await.unwrap();
        let went_on = out
            .text
            .lines()
            .any(|l| l.starts_with("the check goes on: "));
        // Printed for whoever measures renames; never part of the verdict.
        eprintln!(
            "lsp_rename {args} answered in {} ms, {}",
            started.elapsed().as_millis(),
            if went_on {
                "its check going on"
            } else {
                "its check held"
            }
        );
        if !went_on {
            let text = out.full_text();
            return (out, text);
        }
        let next = self.call("lsp", json!({"action": "status"})).await.unwrap();
        let first = format!(
            "Check of the earlier rename of `{}` at {}:{} to `{}`, still running when its answer was given — caused by that rename, not this call:",
            args["symbol"].as_str().unwrap(),
            args["file"].as_str().unwrap(),
            args["line"],
            args["new_name"].as_str().unwrap()
        );
        assert!(next.text.starts_with(&first), "{}", next.text);
        let text = format!("{}\n{}", out.full_text(), next.text);
        (out, text)
    }

    pub async fn lsp(&self, args: Value) -> Result<ToolOutput, CallError> {
        self.call("lsp", args).await
    }

    /// The text of a successful `lsp` call; panics with the error otherwise.
    pub async fn ok(&self, args: Value) -> String {
        match self.lsp(args.clone()).await {
            Ok(o) => {
                if std::env::var_os("LSP_TEST_ECHO").is_some() {
                    eprintln!(">>> {args}\n{}\n", o.full_text());
                }
                o.full_text()
            }
            Err(e) => panic!("lsp {args} failed: {e}"),
        }
    }

    /// The error text of a failing `lsp` call; panics on success.
    pub async fn err(&self, args: Value) -> CallError {
        match self.lsp(args.clone()).await {
            Ok(o) => panic!("lsp {args} succeeded unexpectedly: {}", o.full_text()),
            Err(e) => e,
        }
    }

    /// Pids of the servers running now (from `status`).
    pub async fn server_pids(&self) -> Vec<i32> {
        let out = self.lsp(json!({"action": "status"})).await.unwrap();
        out.structured.unwrap()["servers"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["pid"].as_i64().map(|p| p as i32))
            .collect()
    }

    /// Waits until no server of the run reports work under way (`status` names none as
    /// indexing), bounded by a minute: for a test about what writes cause once the first
    /// analysis is over, on a machine loaded enough that a query's answer comes before it.
    pub async fn wait_for_the_first_analysis(&self) {
        for _ in 0..600 {
            let out = self.lsp(json!({"action": "status"})).await.unwrap();
            if !out.full_text().contains("indexing") {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("the servers were still indexing after a minute");
    }

    /// Waits until a server the run's start started is up (listed with its pid by
    /// `status`), bounded by a minute: a call made then finds it up and on its first
    /// analysis, not started by that call.
    pub async fn wait_for_a_server_started_with_the_run(&self) {
        for _ in 0..6000 {
            if !self.server_pids().await.is_empty() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("no server started with the run within a minute");
    }

    /// Pids of the live processes whose working folder is the project's root (the servers
    /// of root `.` and what they started there), from `/proc`.
    pub fn processes_in_root(&self) -> Vec<i32> {
        let root = self.root().canonicalize().unwrap();
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            let zombie = std::fs::read_to_string(entry.path().join("stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit(')')
                        .next()
                        .map(|r| r.trim_start().starts_with('Z'))
                })
                .unwrap_or(true);
            if !zombie && std::fs::read_link(entry.path().join("cwd")).is_ok_and(|c| c == root) {
                pids.push(pid);
            }
        }
        pids
    }

    /// Closes the run and checks that no server process is left.
    pub async fn close_and_check(self) {
        let pids = self.server_pids().await;
        self.run.close().await;
        for pid in pids {
            let mut gone = false;
            for _ in 0..50 {
                if !tools_core::process::group_alive(pid) {
                    gone = true;
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            assert!(gone, "server process group {pid} survived the run's close");
        }
    }
}

/// A harness's own write tool: writes `text` to `path` through tools-core's safe writer
/// (or, with `plain`, by plain `std::fs::write`) and reports it as touched, so the
/// registry runs the write observers on it.
pub struct TestWrite;

#[tools_core::async_trait]
impl tools_core::Tool for TestWrite {
    fn name(&self) -> &str {
        "test_write"
    }
    fn tier(&self) -> tools_core::Tier {
        tools_core::Tier::Write
    }
    fn description(&self) -> String {
        "writes a file".into()
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    async fn call(
        &self,
        ctx: &tools_core::CallCtx,
        args: Value,
    ) -> Result<ToolOutput, tools_core::ToolError> {
        let path = ctx
            .run
            .workspace()
            .resolve(args["path"].as_str().unwrap())?;
        let text = args["text"].as_str().unwrap();
        if args["plain"].as_bool() == Some(true) {
            // A harness writing by its own means: no pre-image is kept.
            std::fs::create_dir_all(path.parent().unwrap())?;
            std::fs::write(&path, text)?;
        } else {
            tools_core::safe_write::write_file(ctx.run.workspace(), &path, text.as_bytes())
                .map_err(|e| e.for_file(&path.display().to_string()))?;
        }
        Ok(ToolOutput::text(format!("wrote {}", path.display())).with_touched([path]))
    }
}

impl Project {
    /// Writes through the registry (so diagnostics on write run); returns the
    /// `diagnostics` section's body, if any.
    pub async fn write_tool(&self, rel: &str, text: &str) -> Option<String> {
        self.write_tool_with(json!({"path": rel, "text": text}))
            .await
    }

    /// [`Project::write_tool`] with the tool's arguments given whole.
    pub async fn write_tool_with(&self, args: Value) -> Option<String> {
        let rel = args["path"].as_str().unwrap_or_default().to_string();
        let out = self.call("test_write", args).await.unwrap();
        if std::env::var_os("LSP_TEST_ECHO").is_some() {
            eprintln!(
                ">>> write {rel} {:?}\n{}\n",
                std::time::SystemTime::now(),
                out.full_text()
            );
        }
        out.sections
            .iter()
            .find(|s| s.title == "diagnostics")
            .map(|s| s.body.clone())
    }
}

/// A copy of the multi-file project `tests/fixtures/projects/<name>` in a fresh temporary
/// folder, as [`Project::from_fixture`] opens it (no run on it yet).
pub fn fixture_copy(name: &str) -> tempfile::TempDir {
    let src = fixture("projects").join(name);
    let mut files = Vec::new();
    collect_files(&src, &src, &mut files);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for (rel, text) in files {
        let (rel, text) = match rel.strip_suffix(".in") {
            Some(base) => (
                base.to_string(),
                text.replace("@ROOT@", &root.display().to_string()),
            ),
            None => (rel, text),
        };
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn collect_files(base: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.is_dir() {
            collect_files(base, &path, out);
        } else {
            let rel = path.strip_prefix(base).unwrap().display().to_string();
            out.push((rel, std::fs::read_to_string(&path).unwrap()));
        }
    }
}

/// The `diagnostics` section of a write, or an empty string when there is none.
pub fn section(s: Option<String>) -> String {
    s.unwrap_or_default()
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Whether `needle` is in `hay`, with the text shown on failure.
#[track_caller]
pub fn has(hay: &str, needle: &str) {
    assert!(hay.contains(needle), "expected {needle:?} in:\n{hay}");
}

/// Links the folder `target` at `at` (a symbolic link to a folder on either OS), as a test
/// puts an installed package beside a project.
pub fn link_dir(target: impl AsRef<Path>, at: impl AsRef<Path>) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(target, at);
    #[cfg(windows)]
    return std::os::windows::fs::symlink_dir(target, at);
}

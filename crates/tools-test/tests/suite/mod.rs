//! Shared helpers: a workspace with files, a registry holding the `test` family, and the
//! answer's first line with its wall time replaced (the one part that varies).

/// The last line of a write's tests section in a project whose tests' runs are not
/// recorded yet.
macro_rules! not_recorded {
    () => {
        "not recorded yet: which functions each test runs (a `test run` records it; later writes then also name the tests a static walk misses, such as those running a command through a test runner)"
    };
}

mod affected;
mod bad_input;
mod cargo;
mod go;
mod jest;
mod pytest;
mod reach;
mod recorded;
mod recorded_rust;
mod related;
mod status;
mod vitest;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tools_core::{CallError, Registry, RegistryBuilder, Run, RunOptions, Surface, ToolOutput};

pub struct Ws {
    pub dir: tempfile::TempDir,
    pub registry: Arc<Registry>,
}

impl Ws {
    pub fn root(&self) -> &Path {
        self.dir.path()
    }
    pub async fn call(&self, args: Value) -> Result<ToolOutput, CallError> {
        self.registry.call(Surface::FULL, "test", args).await
    }
    /// The answer's text, with `in 1.2 s` replaced by `in T s`.
    pub async fn ok(&self, args: Value) -> String {
        match self.call(args.clone()).await {
            Ok(o) => without_time(&o.text),
            Err(e) => panic!("test {args} failed: {e}"),
        }
    }
    pub async fn err(&self, args: Value) -> String {
        match self.call(args.clone()).await {
            Ok(o) => panic!("test {args} succeeded: {}", o.text),
            Err(e) => e.to_string(),
        }
    }
    pub async fn close(self) {
        self.registry.run().close().await;
    }
}

/// `text` with the wall time of its first line replaced by `T`.
pub fn without_time(text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if let Some(first) = lines.first_mut()
        && let Some(i) = first.find(" in ")
        && let Some(j) = first[i..].find(" s — ")
    {
        *first = format!("{} in T{}", &first[..i], &first[i + j..]);
    }
    lines.join("\n")
}

/// Gives the project at `dir` the `node_modules` folder the JavaScript test runner `runner`
/// (a program found on the path) is installed in, as the project's own: a link to it.
pub fn link_node_modules(runner: &Path, dir: &Path) {
    let modules = tools_core::testing::node_modules_of(runner);
    let link = dir.join("node_modules");
    #[cfg(unix)]
    std::os::unix::fs::symlink(modules, link).unwrap();
    #[cfg(windows)]
    std::os::windows::fs::symlink_dir(modules, link).unwrap();
}

pub fn write_files(root: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// A trusted workspace holding `files`, with `config` as its `agent-tools.toml`.
pub fn workspace(files: &[(&str, &str)]) -> Ws {
    workspace_with(files, true, "")
}

pub fn workspace_with(files: &[(&str, &str)], trusted: bool, config: &str) -> Ws {
    let dir = tempfile::tempdir().unwrap();
    write_files(dir.path(), files);
    if !config.is_empty() {
        std::fs::write(dir.path().join("agent-tools.toml"), config).unwrap();
    }
    let mut opts = RunOptions::at(dir.path()).unwrap();
    opts.trusted = trusted;
    let run = Run::new(opts).unwrap();
    let family = tools_test::family(&run).unwrap().unwrap();
    let registry = RegistryBuilder::new(run).family(family).build().unwrap();
    Ws { dir, registry }
}

/// A trusted run at `dir` (its files written first) with `config` as its `agent-tools.toml`
/// and the fs, lsp, ast and test families: writes name the tests they reach through real
/// language servers.
pub fn with_servers(dir: &Path, files: &[(&str, &str)], config: &str) -> (Arc<Run>, Arc<Registry>) {
    with_servers_as(dir, files, config, true)
}

/// [`with_servers`], trusted or not.
pub fn with_servers_as(
    dir: &Path,
    files: &[(&str, &str)],
    config: &str,
    trusted: bool,
) -> (Arc<Run>, Arc<Registry>) {
    write_files(dir, files);
    std::fs::write(dir.join("agent-tools.toml"), config).unwrap();
    let mut opts = RunOptions::at(dir).unwrap();
    opts.trusted = trusted;
    let run = Run::new(opts).unwrap();
    let mut builder = RegistryBuilder::new(run.clone()).family(tools_fs::family(&run));
    for family in [
        tools_lsp::family(&run).unwrap(),
        tools_ast::family(&run).unwrap(),
        tools_test::family(&run).unwrap(),
    ]
    .into_iter()
    .flatten()
    {
        builder = builder.family(family);
    }
    (run, builder.build().unwrap())
}

/// `tool` called with `args` through the full surface; a failure fails the test.
pub async fn call(registry: &Registry, tool: &str, args: Value) -> ToolOutput {
    match registry.call(Surface::FULL, tool, args.clone()).await {
        Ok(out) => out,
        Err(e) => panic!("{tool} {args} failed: {e}"),
    }
}

/// The body of the answer's last section, which must be `tests`.
/// `test run` with `affected: true` in the run of `registry`: its answer, with the wall time
/// replaced (see [`without_time`]).
pub async fn run_affected(registry: &Registry) -> String {
    let out = call(registry, "test", json!({"action": "run", "affected": true})).await;
    without_time(&out.text)
}

pub fn tests_section(out: &ToolOutput) -> &str {
    let last = out.sections.last().expect("the answer has sections");
    assert_eq!(last.title, "tests", "sections: {:?}", out.sections);
    &last.body
}

pub fn run_args(extra: Value) -> Value {
    let mut args = json!({"action": "run"});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    args
}

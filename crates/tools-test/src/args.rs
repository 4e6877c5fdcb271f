//! The arguments of the `test` tool, shared by its actions.

use serde::Deserialize;

/// What the call does.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Action {
    /// The tests of a file or symbol, with `path:line` and ids (nothing runs).
    List,
    /// Run ids, a file's tests, or the whole suite.
    Run,
    /// The runner per language and, where none is found, why.
    Status,
}

/// The arguments of `test`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestArgs {
    /// `list`, `run` or `status`.
    pub action: Action,
    /// A file, relative to the workspace root: a test file (its tests), or a source file
    /// (the tests of the files that import it by name).
    #[serde(default)]
    pub file: Option<String>,
    /// `list`: only tests whose body names this symbol (with `file`, in that file; alone, in
    /// every test file of the workspace).
    #[serde(default)]
    pub symbol: Option<String>,
    /// `list` with `file` and `symbol`: the line (1-based) of `symbol` in `file`; then the
    /// tests that reach it are followed through its uses and the functions using it (a
    /// language server answers the uses), not only the tests naming it.
    #[serde(default)]
    pub line: Option<usize>,
    /// `list` or `run`: the tests that reach what changed since this git revision (e.g.
    /// `HEAD`): the functions the diff touches, followed to the tests as with `line`.
    #[serde(default)]
    pub changed_since: Option<String>,
    /// `run`: the tests the last write named at the end of its answer (its `tests`
    /// section), instead of `ids`, `file` or `changed_since`.
    #[serde(default)]
    pub affected: bool,
    /// `run`: test ids as `list` names them (pytest node ids, `file::name` for go and
    /// vitest/jest, libtest names for cargo).
    #[serde(default)]
    pub ids: Option<Vec<String>>,
    /// Lines to skip, to page through a long answer (the same `run` again pages the last
    /// result without running the tests again).
    #[serde(default)]
    pub offset: Option<usize>,
    /// `run`: time budget in milliseconds (default from `[test] timeout_ms`, 10 minutes);
    /// past it the runner's whole process tree is killed.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

//! # tools-ast
//!
//! Structural search and staged rewrite on ast-grep and its bundled tree-sitter grammars:
//!
//! - `ast_grep` (tier read): find code by shape. `$NAME` one node, `$$$NAME` a sequence,
//!   `$_` (or any `$_X`) a node that is not captured; a name repeated in one pattern must match
//!   the same code each time. Results are in path order, then position, as `path:line:col`
//!   with the matched code and captures, capped by `max_results` (default 50).
//! - `ast_edit` (tier write): the same matching plus a `rewrite` template. Nothing is written;
//!   the change is staged with a diff preview, an `edit_id` (`edit_1`, `edit_2`, … per run)
//!   and the SHA-256 of every file it would change.
//! - `resolve` (tier write): `accept` writes a staged change, all files or none; `discard`
//!   drops it. Accepted files are reported in [`tools_core::ToolOutput::touched`], so write
//!   observers (diagnostics on write) see them.
//!
//! Choices where the specification is silent:
//! - A pattern is read as the ast-grep CLI reads it when it parses on its own; only one that
//!   does not (a bare Dart statement, a method) is read inside a wrapper of the language (see
//!   [`Lang::contexts`]), and a pattern that parses nowhere is an error that shows where it
//!   failed. The wrapper stays out of the text (the structured result names it); tokens the
//!   parser had to fill in, and a search that finds nothing, come with a hint.
//! - Answers are held to a text budget (`grep_answer_bytes`, `edit_answer_bytes`, about 4 KB):
//!   locations and matched lines first, captures by their first and last lines, one line on
//!   how to get more (`offset`); counters only in the structured result. The structured
//!   result holds the same page, trimmed the same way, within twice the text budget of JSON.
//! - The walk honours `.gitignore` (also outside a git repository), `.ignore` and hidden
//!   files, never enters `.git`, `target` or `node_modules`, and reports binary, non-UTF-8,
//!   unreadable and too-large files (over `max_file_bytes`, default 4 MiB) in the result.
//! - With a folder and no `language`, the language is inferred when the folder holds files of
//!   one language only; otherwise the call asks for one.
//! - Before parsing, a file must contain every named literal token of the pattern (a byte
//!   search); others are never parsed. Parsing runs on all cores. Per run, keyed by path +
//!   size + mtime and bounded by `cache_max_bytes` (default 2 GiB), the cache keeps each
//!   parsed file's tree and, for a file ruled out, the literals it lacks (a later pattern
//!   needing one of them skips the file unread). Trees are kept in a compact form (26 bytes
//!   per node, about 7 bytes per byte of Python source, a quarter of a tree-sitter tree),
//!   which is also what matching walks.
//! - Overlapping matches in a rewrite: the outermost (first) wins, as with the ast-grep CLI.
//! - Staged edits per run: at most `max_pending_edits` (default 16) pending at once and
//!   `max_staged_bytes` (default 256 MiB) of new content; past either, `ast_edit` is refused
//!   until something is resolved. A rejected `accept` (a file changed since staging) drops the
//!   edit: stage it again. The store is the run's one store of staged changes (tools-core's
//!   `StagedChanges`): `resolve` also accepts the `change_id` of a previewed `write`, `edit`,
//!   `apply_patch` or `lsp_rename`.
//! - The family also gives the run a symbol source ([`GrammarSymbols`]): a file's functions,
//!   classes, methods, `impl` blocks and their bodies, read with the same grammars (Python,
//!   Rust, Go, TypeScript/JavaScript, C/C++), so symbol edits and breakpoints by name work
//!   where no language server runs and know where a body is where one does.
//! - `ast_edit`'s proposal carries the diagnostics the change is predicted to add or remove
//!   when a write observer (the lsp family's diagnostics on write) is wired.
//!
//! Configuration: the `[ast]` section of `agent-tools.toml` ([`AstConfig`]); `enabled = false`
//! leaves the tools unregistered.
//!
//! ## Use this crate on its own
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use tools_core::{RegistryBuilder, Run, RunOptions, Surface};
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("a.py"), "dispose(a + b)\n").unwrap();
//! let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
//! let family = tools_ast::family(&run).unwrap().unwrap();
//! let registry = RegistryBuilder::new(run.clone()).family(family).build().unwrap();
//! let args = serde_json::json!({"pattern": "dispose($X)", "rewrite": "$X.dispose()"});
//! let out = registry.call(Surface::FULL, "ast_edit", args).await.unwrap();
//! assert!(out.text.contains("edit_1"));
//! let args = serde_json::json!({"edit_id": "edit_1", "action": "accept"});
//! registry.call(Surface::FULL, "resolve", args).await.unwrap();
//! assert_eq!(std::fs::read_to_string(dir.path().join("a.py")).unwrap(), "(a + b).dispose()\n");
//! # }
//! ```

mod answer;
mod cache;
mod compact_tree;
mod lang;
mod pattern;
mod render;
mod rewrite;
mod search;
mod symbols;
mod tools;
mod walk;

use std::sync::Arc;

use serde::Deserialize;
use tools_core::{DoctorEntry, Run, StagedChanges, Tool, ToolError, ToolFamily};

pub use cache::{CacheStats, ParseCache};
pub use compact_tree::{CompactDoc, CompactNode, CompactTree};
pub use lang::Lang;
pub use pattern::{CompiledPattern, compile};
pub use rewrite::Rewrite;
pub use search::{MAX_MATCH_CHARS, MatchRecord, find_matches};
pub use symbols::{GrammarSymbols, file_symbols};
pub use tools_core::{NoWriteFaults, WriteFaults, content_hash};
pub use walk::ALWAYS_SKIPPED_DIRS;

/// The `[ast]` section of `agent-tools.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AstConfig {
    /// Register the tools at all (default true).
    pub enabled: bool,
    /// Files larger than this are skipped and reported (default 4 MiB).
    pub max_file_bytes: u64,
    /// Memory the per-run parse cache may hold: texts and compact trees (default 2 GiB; 0
    /// disables it).
    pub cache_max_bytes: usize,
    /// Staged edits pending at once per run (default 16).
    pub max_pending_edits: usize,
    /// Bytes of new content all pending edits may hold together (default 256 MiB).
    pub max_staged_bytes: usize,
    /// Most diff lines an `ast_edit` preview shows, text and structured alike (default 400;
    /// the answer budget usually cuts sooner).
    pub max_diff_lines: usize,
    /// Text budget of an `ast_grep` answer in bytes (default 4096); `offset` pages on.
    pub grep_answer_bytes: usize,
    /// Text budget of an `ast_edit` answer in bytes (default 4096).
    pub edit_answer_bytes: usize,
}

impl Default for AstConfig {
    fn default() -> Self {
        AstConfig {
            enabled: true,
            max_file_bytes: 4 << 20,
            cache_max_bytes: 2 << 30,
            max_pending_edits: 16,
            max_staged_bytes: 256 << 20,
            max_diff_lines: 400,
            grep_answer_bytes: answer::DEFAULT_ANSWER_BYTES,
            edit_answer_bytes: answer::DEFAULT_ANSWER_BYTES,
        }
    }
}

/// What the three tools of one run share.
pub(crate) struct AstShared {
    config: AstConfig,
    cache: ParseCache,
    walks: walk::WalkCache,
    edits: Arc<StagedChanges>,
    faults: Arc<dyn WriteFaults>,
}

/// The `ast` family: `ast_grep`, `ast_edit`, `resolve` for one run.
pub struct AstFamily {
    shared: Arc<AstShared>,
}

impl AstFamily {
    /// The family with `config`, staging into `changes` (the run's store,
    /// [`StagedChanges::for_run`], so one `resolve` serves every tool that stages); `faults`
    /// can fail the writes of `resolve accept` (tests inject failures here; [`NoWriteFaults`]
    /// is the default).
    pub fn new(
        config: AstConfig,
        faults: Arc<dyn WriteFaults>,
        changes: Arc<StagedChanges>,
    ) -> Self {
        changes.set_limits(config.max_pending_edits, config.max_staged_bytes);
        AstFamily {
            shared: Arc::new(AstShared {
                cache: ParseCache::new(config.cache_max_bytes),
                walks: walk::WalkCache::default(),
                edits: changes,
                faults,
                config,
            }),
        }
    }

    /// The parse cache's counters.
    pub fn cache_stats(&self) -> CacheStats {
        self.shared.cache.stats()
    }
}

/// Every match of `pattern` under `scope` (a file or folder), with the same walk, prefilter,
/// parallel parse and cache as `ast_grep`, uncapped: `(path, matches)` in path order.
/// For programs (and the cross-check against the ast-grep CLI); the tools cap their output.
pub fn search_files(
    scope: &std::path::Path,
    lang: Lang,
    pattern: &str,
    config: &AstConfig,
    cache: &ParseCache,
) -> Result<Vec<(std::path::PathBuf, Vec<MatchRecord>)>, ToolError> {
    let compiled = compile(pattern, lang)?;
    let walked = walk::walk(scope, Some(lang), config.max_file_bytes);
    let scan = search::scan(&walked, &compiled, cache, &|| false, &|tree| {
        let matches = find_matches(&compiled, tree);
        (!matches.is_empty()).then_some(matches)
    })?;
    Ok(scan.per_file)
}

/// Wires the family for `run` from its `[ast]` configuration. `Ok(None)` when disabled.
pub fn family(run: &Arc<Run>) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    family_with_faults(run, Arc::new(NoWriteFaults))
}

/// [`family`] with [`WriteFaults`] injected into `resolve accept`.
pub fn family_with_faults(
    run: &Arc<Run>,
    faults: Arc<dyn WriteFaults>,
) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    let config: AstConfig = run.config().section("ast")?;
    if !config.enabled {
        return Ok(None);
    }
    tools_core::SymbolSources::for_run(run).register(Arc::new(GrammarSymbols));
    Ok(Some(Arc::new(AstFamily::new(
        config,
        faults,
        StagedChanges::for_run(run),
    ))))
}

#[tools_core::async_trait]
impl ToolFamily for AstFamily {
    fn name(&self) -> &str {
        "ast"
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(tools::AstGrepTool {
                shared: self.shared.clone(),
            }),
            Arc::new(tools::AstEditTool {
                shared: self.shared.clone(),
            }),
            Arc::new(tools::ResolveTool {
                shared: self.shared.clone(),
            }),
        ]
    }
    async fn doctor(&self) -> Vec<DoctorEntry> {
        // The grammars are compiled in; check each one really parses.
        Lang::all()
            .map(|l| {
                let ok = pattern::Tree::try_new("x", l.grammar()).is_ok();
                DoctorEntry {
                    family: "ast".into(),
                    resource: format!("grammar: {l}"),
                    ok,
                    detail: if ok {
                        "bundled tree-sitter grammar, compiled in".into()
                    } else {
                        "the bundled grammar failed to parse a trivial input".into()
                    },
                }
            })
            .collect()
    }
}

//! # tools-lsp
//!
//! Language-server tools for coding agents:
//!
//! - `lsp` (tier read): definition, type definition, implementation, references, incoming
//!   and outgoing calls, supertypes and subtypes (followed to a `depth` of 1 to 3, each
//!   node once), hover, symbols, code actions, diagnostics (a file, or `"*"` for the
//!   project's own checker), `status` and `reload`. Positions are a 1-based line plus a symbol substring of that
//!   line, never a column; an ambiguous symbol is an error listing its occurrences.
//! - `lsp_rename` (tier write): a project-wide rename, applied all or nothing.
//! - Diagnostics on write: a [`WriteObserver`] that, after any tool reports `touched`
//!   files, syncs them through their servers, waits for one *settled* state per server and
//!   appends what the write changed in any file — the settled state after minus the settled
//!   state before, filtered through a per-run ledger keyed by severity, code and message —
//!   and which earlier diagnostics are gone. When the bound is hit it says "pending", and
//!   what arrives later is reported as that write's, by number.
//! - Preview diagnostics: the same observer predicts what a change *would* do before it is
//!   written (`write`/`edit`/`apply_patch`/`lsp_rename` with `preview: true`, and every
//!   `ast_edit` proposal): the proposed texts go to the servers as unsaved changes, the
//!   difference between the settled states is judged against a copy of the ledger, and the
//!   servers are put back on the disk's texts before a following write or query is served.
//!   Checks that read saved files only (rust-analyzer's `cargo check`, the `"*"` checkers,
//!   clangd's includers without `--use-dirty-headers`) are named as not covered.
//! - A symbol source ([`ServerSymbols`]): a file's document symbols for the run's other
//!   families, which address code by name through it (symbol edits, breakpoints by name).
//!
//! - Acquisition ([`acquire`]): the servers the built-in table pins are installed into a
//!   per-user cache with their ecosystem's package manager (`agent-tools servers install`,
//!   or on first need with `auto_install = true` in the user's own configuration), and
//!   found there after `$PATH`.
//!
//! Underneath: an LSP client over tools-core's transport ([`LspClient`]), a server
//! supervisor with a built-in table that `[lsp]` in `agent-tools.toml` overrides and extends
//! ([`ServerSupervisor`], [`ServerSpec`], [`LspConfig`]), and one server per (language,
//! workspace root): a Cargo workspace, `go.work`, JS workspaces and project references, the
//! outermost Python or C project, started only when a root marker exists *and* the binary
//! resolves. Files changed outside the tools reach the servers before the next query;
//! servers that diagnose only open documents get the importers of a file opened with it;
//! pyright and basedpyright run in workspace diagnostic mode.
//!
//! The built-in table has 46 entries, 44 languages and two companions: Python through
//! pyright, basedpyright, pylsp, jedi, ty or pyrefly; TypeScript, Vue, Svelte, Astro, HTML,
//! CSS, JSON, YAML, TOML, C/C++, Rust, Go, Java, C#, PHP, Ruby and more, each with its root
//! markers, languageIds, settings and a pinned install recipe where a package manager can
//! install it. Some files have a diagnostics-only companion beside their server (ruff for
//! Python, eslint for JavaScript and TypeScript): its findings join the server's, tagged
//! with its name. An untrusted run restricts the servers that would run project code, or
//! leaves them out.
//!
//! Choices where the spec is silent: columns are printed in characters; a symbol that
//! occurs as a whole identifier is preferred over substring occurrences; `reload` without
//! `file` restarts every server started in the run; `"*"` runs the checker at the
//! outermost roots of each language (at most four), and for C and C++ compiles each entry of
//! the project's `compile_commands.json` (or of a CMake configure into a private folder)
//! with `-fsyntax-only`, in trusted runs only; unspecified diagnostic severity counts as an
//! error.
//!
//! Answers are sized for a model's context: every list (references, definitions,
//! hierarchies, symbols) shows what fits `[lsp] answer_bytes` (4096 by default), first
//! entries first, and ends with the `offset` of the rest; `max_results` asks for more at
//! once. A file's outline lists the declarations a reader navigates by — not the locals
//! inside function bodies nor `<unknown>` entries — unless `kinds` asks for them; `depth`
//! limits its nesting. Hovers have HTML entities decoded and rust-analyzer's "Implements
//! notable traits" and `{unknown}` prose dropped, code fences kept; a long hover pages by
//! line with `offset`, cut only where the cut saves more than its marker costs. A hierarchy
//! walk stops after 500 entries or 150 requests and says so. `status` leads with the
//! workspace's languages, most files first, and folds configured languages without files
//! into one line; process ids and uptimes are in the structured result only.
//!
//! Not for: editing files other than through a rename, or applying server-initiated edits
//! (`workspace/applyEdit` is answered "not applied").
//!
//! ## Use this crate on its own
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use tools_core::{RegistryBuilder, Run, RunOptions, Surface};
//! let dir = tempfile::tempdir().unwrap();
//! let run = Run::new(RunOptions::at(dir.path()).unwrap()).unwrap();
//! let mut builder = RegistryBuilder::new(run.clone());
//! if let Some(lsp) = tools_lsp::family(&run).unwrap() {
//!     builder = builder.family(lsp);
//! }
//! let registry = builder.build().unwrap();
//! // `lsp` is on the read-only surface, `lsp_rename` (tier write) is not.
//! let names: Vec<String> = registry.list(Surface::READ_ONLY).into_iter().map(|t| t.name).collect();
//! assert!(names.contains(&"lsp".to_string()) && !names.contains(&"lsp_rename".to_string()));
//! let status = registry.call(Surface::FULL, "lsp", serde_json::json!({"action": "status"})).await.unwrap();
//! assert!(!status.text.is_empty());
//! run.close().await;
//! # }
//! ```

mod answer;
mod checkers;
pub mod client;
mod diagnostics;
mod error;
mod grammar_symbols;
mod queries;
mod reference_source;
pub mod rename;
mod servers;
mod symbol_source;

pub use diagnostics::observer;
pub use servers::{acquire, config, recipe};

use std::sync::Arc;

use tools_core::{DoctorEntry, Run, Tool, ToolError, ToolFamily, WriteObserver};

pub use client::LspClient;
pub use config::{CheckerOverride, LspConfig, ServerOverride};
pub use error::LspError;
pub use observer::DiagnosticsOnWrite;
pub use queries::lsp_tool::LspTool;
pub use rename::LspRenameTool;
pub use servers::pool::{LspPool, PoolKey, PoolLimits, SharedServer};
pub use servers::supervisor::{Located, ServerSupervisor};
pub use servers::table::ServerSpec;
pub use symbol_source::ServerSymbols;

/// The `lsp` family of one run: the supervisor and the tools built on it.
pub struct LspFamily {
    sup: Arc<ServerSupervisor>,
    observer: Arc<observer::DiagnosticsOnWrite>,
}

impl LspFamily {
    /// The supervisor (shared by the tools and the observer).
    pub fn supervisor(&self) -> &Arc<ServerSupervisor> {
        &self.sup
    }
    /// The diagnostics-on-write observer (one ledger per run).
    pub fn observer(&self) -> &Arc<observer::DiagnosticsOnWrite> {
        &self.observer
    }
}

#[async_trait::async_trait]
impl ToolFamily for LspFamily {
    fn name(&self) -> &str {
        "lsp"
    }
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![
            Arc::new(LspTool::new(Arc::clone(&self.sup)).with_observer(Arc::clone(&self.observer))),
            Arc::new(
                rename::LspRenameTool::new(Arc::clone(&self.sup))
                    .with_observer(Arc::clone(&self.observer)),
            ),
        ]
    }
    fn observers(&self) -> Vec<Arc<dyn WriteObserver>> {
        vec![Arc::clone(&self.observer) as Arc<dyn WriteObserver>]
    }
    async fn doctor(&self) -> Vec<DoctorEntry> {
        self.sup.doctor()
    }
}

/// The family for `run`, configured from its `[lsp]` section. `Ok(None)` when the section
/// says `enabled = false`; a malformed section is an error naming the field.
pub fn family(run: &Arc<Run>) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    family_in(run, None, true)
}

/// [`family`] whose servers start only when a call needs one, whatever `[lsp]
/// start_at_run_start` says: for a run that answers one call and closes (the command line's
/// `call`, `tools`, `doctor`), where a server started with the run would only be stopped.
pub fn family_on_demand(run: &Arc<Run>) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    family_in(run, None, false)
}

/// [`family`] with its servers taken from `pool`: every run built on one pool shares one
/// server per (language, server, root, trust, environment policy) with the others, and
/// keeps its own ledger, previews and staged changes.
pub fn family_with_pool(
    run: &Arc<Run>,
    pool: Arc<LspPool>,
) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    family_in(run, Some(pool), false)
}

fn family_in(
    run: &Arc<Run>,
    pool: Option<Arc<LspPool>>,
    start_with_run: bool,
) -> Result<Option<Arc<dyn ToolFamily>>, ToolError> {
    let cfg = LspConfig::for_run(run)?;
    if !cfg.enabled {
        return Ok(None);
    }
    let sup = match pool {
        Some(pool) => ServerSupervisor::with_pool(run, cfg, pool),
        None => ServerSupervisor::new(run, cfg),
    };
    // A trusted workspace's own languages load while the agent reads and thinks.
    if start_with_run {
        sup.start_at_run_start();
    }
    // Other families address code by name through the servers' document symbols.
    tools_core::SymbolSources::for_run(run)
        .register(Arc::new(ServerSymbols::new(Arc::clone(&sup))));
    // …and follow a symbol to its uses (the tests that reach a change).
    tools_core::ReferenceSources::for_run(run).register(Arc::new(
        reference_source::ServerReferences::new(run, Arc::clone(&sup)),
    ));
    // The observer opens written files at their text from before the write (servers that
    // diagnose only open documents): the safe writer keeps it from now on.
    run.workspace().pre_write_images().enable();
    Ok(Some(Arc::new(LspFamily {
        observer: Arc::new(observer::DiagnosticsOnWrite::new(Arc::clone(&sup))),
        sup,
    })))
}

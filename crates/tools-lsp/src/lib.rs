//! # tools-lsp
//!
//! Language-server tools for coding agents:
//!
//! - `lsp` (tier read): definition, type definition, implementation, references, hover,
//!   symbols, code actions, diagnostics (a file, or `"*"` for the project's own checker),
//!   `status` and `reload`. Positions are a 1-based line plus a symbol substring of that
//!   line, never a column; an ambiguous symbol is an error listing its occurrences.
//! - `lsp_rename` (tier write): a project-wide rename, applied all or nothing.
//! - Diagnostics on write: a [`WriteObserver`] that, after any tool reports `touched`
//!   files, syncs them through their servers, waits for one *settled* state per server and
//!   appends what the write changed in any file — the settled state after minus the settled
//!   state before, filtered through a per-run ledger keyed by severity, code and message —
//!   and which earlier diagnostics are gone. When the bound is hit it says "pending", and
//!   what arrives later is reported as that write's, by number.
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
//! Choices where the spec is silent: columns are printed in characters; a symbol that
//! occurs as a whole identifier is preferred over substring occurrences; `reload` without
//! `file` restarts every server started in the run; `"*"` runs the checker at the
//! outermost roots of each language (at most four), and for C and C++ compiles each entry of
//! the project's `compile_commands.json` (or of a CMake configure into a private folder)
//! with `-fsyntax-only`, in trusted runs only; unspecified diagnostic severity counts as an
//! error.
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

mod c_checker;
mod checker;
pub mod client;
mod cmake_configure;
mod compile_db;
pub mod config;
mod dependents;
mod diag_store;
mod discover;
mod error;
mod file_diagnostics;
mod format;
mod ledger;
mod lsp_tool;
mod new_name;
pub mod observer;
mod position;
mod query;
pub mod recipe;
pub mod rename;
mod rename_check;
mod rename_refs;
mod roots;
mod settle;
mod state_diff;
mod supervisor;
mod table;
mod watcher;

use std::sync::Arc;

use tools_core::{DoctorEntry, Run, Tool, ToolError, ToolFamily, WriteObserver};

pub use client::LspClient;
pub use config::{CheckerOverride, LspConfig, ServerOverride};
pub use error::LspError;
pub use lsp_tool::LspTool;
pub use observer::DiagnosticsOnWrite;
pub use rename::LspRenameTool;
pub use supervisor::{Located, ServerSupervisor};
pub use table::ServerSpec;

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
            Arc::new(LspTool::new(Arc::clone(&self.sup))),
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
    let cfg = LspConfig::for_run(run)?;
    if !cfg.enabled {
        return Ok(None);
    }
    let sup = ServerSupervisor::new(run, cfg);
    // The observer opens written files at their text from before the write (servers that
    // diagnose only open documents): the safe writer keeps it from now on.
    run.workspace().pre_write_images().enable();
    Ok(Some(Arc::new(LspFamily {
        observer: Arc::new(observer::DiagnosticsOnWrite::new(Arc::clone(&sup))),
        sup,
    })))
}

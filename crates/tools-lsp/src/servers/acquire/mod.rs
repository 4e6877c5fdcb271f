//! Acquisition of language servers: installing the servers the built-in table names into a
//! per-user cache (`$XDG_CACHE_HOME/agent-tools/servers/`, one folder per package and pinned
//! version) with each ecosystem's own package manager, never into the project; listing every
//! table entry's state for a workspace; the install hint of a missing server.
//!
//! Only the built-in table carries install recipes: neither the user's `[lsp.servers]` nor a
//! repository's configuration can make this code install a package. Installs run as children
//! of a run (own process group, minimal environment plus the registry and proxy variables
//! the package manager needs, killed with the run), bounded in time, under a lock per
//! recipe, into a temporary folder renamed into place only when complete.
//!
//! Program discovery ([`tools_core::discovery`]) searches the cache's `bin/` folders after
//! `$PATH`, so an installed server starts on the next call without any configuration.

mod cache;
mod catalog;
mod install;
mod managers;
mod system_install;

use std::sync::Arc;
use std::time::Duration;

use tools_core::discovery::ProgramSearch;
use tools_core::{Run, ToolError};

pub use cache::{INSTALL_RECORD, InstallLock, ServerCache};
pub use catalog::{
    CandidateState, Chosen, EntryState, choose, entry_states, install_command, install_hint,
    render_states, states_json,
};
pub use install::{DEFAULT_INSTALL_TIMEOUT, InstallOutcome, InstallReport, Installer};

use crate::servers::config::LspConfig;
use crate::servers::recipe::InstallRecipe;
use crate::servers::table::{ServerSpec, server_table};

/// Acquisition for one run: its server table, where its programs are found, the user's
/// cache and an installer bound by the configured timeout.
#[derive(Debug)]
pub struct Servers {
    table: Vec<ServerSpec>,
    search: ProgramSearch,
    installer: Installer,
}

impl Servers {
    /// Acquisition for `run`, from its `[lsp]` configuration, installing into the user's
    /// cache.
    pub fn for_run(run: &Arc<Run>) -> Result<Self, ToolError> {
        let cfg = LspConfig::for_run(run)?;
        Self::with_cache(run, &cfg, ServerCache::from_env()?)
    }

    /// As [`Servers::for_run`] with an explicit configuration and cache.
    pub fn with_cache(
        run: &Arc<Run>,
        cfg: &LspConfig,
        cache: ServerCache,
    ) -> Result<Self, ToolError> {
        let search = cfg
            .program_search(run.root())
            .with_server_cache(Some(cache.root().to_path_buf()));
        Ok(Servers {
            table: server_table(cfg),
            search,
            installer: Installer::new(Arc::clone(run), cache, cfg.install_timeout()),
        })
    }

    /// This acquisition with every install bounded by `timeout` instead.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.installer = self.installer.with_timeout(timeout);
        self
    }

    /// The server table in force.
    pub fn table(&self) -> &[ServerSpec] {
        &self.table
    }

    /// The cache installed into.
    pub fn cache(&self) -> &ServerCache {
        self.installer.cache()
    }

    /// The program search (the run's, with this cache).
    pub fn search(&self) -> &ProgramSearch {
        &self.search
    }

    /// Every entry's state for the workspace, needed ones first.
    pub fn states(&self) -> Vec<EntryState> {
        entry_states(&self.table, &self.search)
    }

    /// The candidate `name` means (package, program or entry name).
    pub fn choose(&self, name: &str) -> Result<Chosen, ToolError> {
        choose(&self.table, name).map_err(|e| ToolError::invalid("name", e))
    }

    /// For each entry the workspace needs whose programs are all missing: its first
    /// installable candidate, or a line saying the table cannot install it.
    pub fn needed(&self) -> Vec<Result<Chosen, String>> {
        self.states()
            .into_iter()
            .filter(|s| s.needed() && !s.available())
            .map(|s| match s.installable() {
                Some(_) => choose(&self.table, &s.language),
                None => Err(format!(
                    "{}: no installable server in the table (looked for {}); install one yourself or configure [lsp.servers.{}]",
                    s.language,
                    s.candidates
                        .iter()
                        .map(|c| c.program.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    s.language
                )),
            })
            .collect()
    }

    /// Installs `recipe` (see [`Installer::install`]).
    pub async fn install(
        &self,
        recipe: &InstallRecipe,
        note: &(dyn Fn(&str) + Send + Sync),
    ) -> Result<InstallReport, ToolError> {
        self.installer.install(recipe, note).await
    }
}

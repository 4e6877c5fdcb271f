//! The `[lsp]` section of `agent-tools.toml`. Every field has a default, so the tools work
//! with no file at all; `servers.<language>` overrides or extends the built-in server table
//! and `checkers.<language>` the project-checker table.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;

/// The `[lsp]` section.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LspConfig {
    /// `false` leaves `lsp` and `lsp_rename` unregistered for the run.
    pub enabled: bool,
    /// Wait for one request's answer (default 20 000 ms).
    pub request_timeout_ms: u64,
    /// Wait for the server's `initialize` answer (default 30 000 ms).
    pub start_timeout_ms: u64,
    /// How long a query waits for the server's indexing progress to finish (default 20 000 ms).
    pub index_wait_ms: u64,
    /// Diagnostics on write: the longest wait for the new version's diagnostics (default 5 000 ms).
    pub diagnostics_wait_ms: u64,
    /// Diagnostics on write: the least quiet window for follow-up publishes, such as the files a write broke, for servers that may follow up without reporting it (default 200 ms; every publish restarts it). Servers that report all their work, or whose publishes are known in advance, wait only for the rest of a burst (see the `settle` module).
    pub diagnostics_quiet_ms: u64,
    /// Diagnostics on write, for servers that diagnose only open documents (tsserver,
    /// clangd): most files importing a written one that are opened to observe it (default
    /// 20; 0 turns it off).
    pub dependents_cap: usize,
    /// `lsp_rename`: how long after the call's start the answer waits for the rename's check
    /// (its diagnostics, its references under the new name) before it answers with the
    /// applied edits and leaves the check running; the check's findings then lead the next
    /// answer (default 200 ms). Not waited for at all when the server's diagnostics of the
    /// last write took longer than this: its check of the rename is expected to be as slow.
    pub rename_answer_ms: u64,
    /// `diagnostics` with `"*"`: how long the project checker may run (default 300 000 ms).
    pub checker_timeout_ms: u64,
    /// Crashes of one server before it is left down until `reload` (default 3).
    pub max_restarts: u32,
    /// Documents kept open per server before the least recently used is closed (default 64).
    pub max_open_documents: usize,
    /// Install a missing server on its first need (default `false`). Only the user's own
    /// configuration may turn it on (`[lsp] auto_install = true` in
    /// `~/.config/agent-tools/config.toml`, or a `--config` file outside the workspace); the
    /// repository's `agent-tools.toml` cannot.
    pub auto_install: bool,
    /// The bound on one server install (default 300 000 ms).
    pub install_timeout_ms: u64,
    /// Text budget of an `lsp` answer in bytes (default 4096): lists show what fits and name
    /// the `offset` of the rest.
    pub answer_bytes: usize,
    /// Start the servers of the workspace's own code languages (a root marker at the
    /// workspace root, files of the language, the binary found; at most three, most files
    /// first; never a companion, an install, or the server of a data, configuration or
    /// markup format) when a trusted run starts, side by side, instead of on the first query
    /// (default `true`; `false` starts each server on the first call that needs it, as
    /// untrusted runs and runs on a pool shared by sessions always do).
    pub start_at_run_start: bool,
    /// Stop a diagnostics-only companion (ruff, eslint) that nothing has asked anything of
    /// for this many seconds; the next write or check that needs it starts it again, which
    /// takes a moment (default 300; 0 keeps companions up for the whole run). Primary
    /// servers stay up: their first analysis of the project is what a restart would cost.
    pub companion_idle_s: u64,
    /// Workspace symbol search: a server that has not answered within this many
    /// milliseconds of the call (still indexing, or on its first search of a large tree)
    /// gives its part of the answer from a scan of its files' declarations with the bundled
    /// grammars, labelled so in the first line, while its own search goes on for the next
    /// ask (default 1 000; 0 always waits for the server). Needs the `ast` family.
    pub declaration_scan_after_ms: u64,
    /// Overrides and additions to the server table, keyed by language (`python`, `c`, …).
    pub servers: BTreeMap<String, ServerOverride>,
    /// Overrides and additions to the project-checker table, keyed by language.
    pub checkers: BTreeMap<String, CheckerOverride>,
    /// Whether the run is trusted (not read from the file: the run decides). Untrusted:
    /// programs come from `$PATH` only, rust-analyzer runs without build scripts and proc
    /// macros, and `diagnostics "*"` runs no project build.
    #[serde(skip)]
    pub trusted: bool,
}

impl Default for LspConfig {
    fn default() -> Self {
        LspConfig {
            enabled: true,
            request_timeout_ms: 20_000,
            start_timeout_ms: 30_000,
            index_wait_ms: 20_000,
            diagnostics_wait_ms: 5_000,
            diagnostics_quiet_ms: 200,
            dependents_cap: 20,
            rename_answer_ms: 200,
            checker_timeout_ms: 300_000,
            max_restarts: 3,
            max_open_documents: 64,
            auto_install: false,
            install_timeout_ms: 300_000,
            answer_bytes: crate::answer::budget::DEFAULT_ANSWER_BYTES,
            start_at_run_start: true,
            companion_idle_s: 300,
            declaration_scan_after_ms: 1_000,
            servers: BTreeMap::new(),
            checkers: BTreeMap::new(),
            trusted: false,
        }
    }
}

impl LspConfig {
    /// The configuration of `run`'s `[lsp]` section, with the run's trust.
    pub fn for_run(run: &tools_core::Run) -> Result<Self, tools_core::ToolError> {
        let mut cfg: LspConfig = run.config().section("lsp")?;
        cfg.trusted = run.trusted();
        // Installing packages is the user's decision, never the repository's, trusted or not.
        if run.config().from_repository() {
            cfg.auto_install = false;
        }
        match tools_core::trust::UserConfig::load() {
            Ok(user) if user.lsp.auto_install => cfg.auto_install = true,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("{e}; [lsp] auto_install of the user's configuration not read")
            }
        }
        Ok(cfg)
    }
    /// Where this configuration's programs may be found in `workspace`.
    pub fn program_search(
        &self,
        workspace: &std::path::Path,
    ) -> tools_core::discovery::ProgramSearch {
        tools_core::discovery::ProgramSearch::new(workspace, self.trusted)
    }
    /// How long a companion may stay idle before it is stopped; `None` keeps it up.
    pub fn companion_idle(&self) -> Option<Duration> {
        (self.companion_idle_s > 0).then(|| Duration::from_secs(self.companion_idle_s))
    }
    /// How long a name search waits for a server before it answers from a declaration
    /// scan; `None`: always the server.
    pub fn declaration_scan_after(&self) -> Option<Duration> {
        (self.declaration_scan_after_ms > 0)
            .then(|| Duration::from_millis(self.declaration_scan_after_ms))
    }
    /// The request timeout.
    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(self.request_timeout_ms.max(1))
    }
    /// The `initialize` timeout.
    pub fn start_timeout(&self) -> Duration {
        Duration::from_millis(self.start_timeout_ms.max(1))
    }
    /// The indexing wait.
    pub fn index_wait(&self) -> Duration {
        Duration::from_millis(self.index_wait_ms)
    }
    /// The diagnostics-on-write wait.
    pub fn diagnostics_wait(&self) -> Duration {
        Duration::from_millis(self.diagnostics_wait_ms)
    }
    /// How long a rename's answer waits for its check.
    pub fn rename_answer(&self) -> Duration {
        Duration::from_millis(self.rename_answer_ms)
    }
    /// The quiet window after a publish.
    pub fn diagnostics_quiet(&self) -> Duration {
        Duration::from_millis(self.diagnostics_quiet_ms)
    }
    /// The bound on one server install.
    pub fn install_timeout(&self) -> Duration {
        Duration::from_millis(self.install_timeout_ms.max(1))
    }
    /// The checker timeout.
    pub fn checker_timeout(&self) -> Duration {
        Duration::from_millis(self.checker_timeout_ms.max(1))
    }
}

/// One language's server entry in `[lsp.servers.<language>]`. Fields left out keep the
/// built-in value (or are empty for a new language).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerOverride {
    /// One command (program and arguments); replaces the built-in candidates.
    pub command: Option<Vec<String>>,
    /// Several candidate commands, the first that resolves wins.
    pub commands: Option<Vec<Vec<String>>>,
    /// Root markers: file or directory names whose presence makes a folder a project root.
    pub markers: Option<Vec<String>>,
    /// File extensions (without the dot) this server handles.
    pub extensions: Option<Vec<String>>,
    /// Settings answered to `workspace/configuration` and sent with
    /// `workspace/didChangeConfiguration`.
    pub settings: Option<toml::Value>,
    /// `initializationOptions` of `initialize`.
    pub initialization_options: Option<toml::Value>,
    /// `false` removes the language from the table.
    pub enabled: Option<bool>,
}

/// One language's checker entry in `[lsp.checkers.<language>]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CheckerOverride {
    /// Candidate commands, the first that resolves wins.
    pub commands: Option<Vec<Vec<String>>>,
    /// One command; replaces the built-in candidates.
    pub command: Option<Vec<String>>,
}

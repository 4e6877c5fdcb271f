//! # agent-tools
//!
//! The facade over the agent-tools families. Each family is a feature (`fs`, `lsp`, `ast`,
//! `debug`, `eval`, `ask`, `vibe`, plus `mcp` for the server and the binary, `serve` for
//! serving many clients over streamable HTTP); a
//! [`Toolbox`] wires every enabled family into one run and its registry.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use agent_tools::{Toolbox, ToolboxOptions};
//! use tools_core::Surface;
//! let dir = tempfile::tempdir().unwrap();
//! let toolbox = Toolbox::open(ToolboxOptions::new(dir.path())).await.unwrap();
//! let names: Vec<String> = toolbox.tools(Surface::PLAN).into_iter().map(|t| t.name).collect();
//! assert!(names.contains(&"read".to_string()));
//! assert!(!names.contains(&"write".to_string()));
//! toolbox.close().await;
//! # }
//! ```

mod doctor_report;
mod families;
#[cfg(feature = "mcp")]
mod serving;
mod workspace_languages;
#[cfg(feature = "mcp")]
pub use serving::mcp_registry_factory;
#[cfg(feature = "serve")]
pub use serving::serve_run_factory;

use std::path::PathBuf;
use std::sync::Arc;

pub use doctor_report::render as render_doctor;
pub use tools_core;
use tools_core::child_env::EnvPolicy;
pub use tools_core::trust::UserConfig;
use tools_core::{
    Approver, CallError, Config, DoctorEntry, Elicitor, Registry, RegistryBuilder, Run, RunOptions,
    Surface, ToolError, ToolInfo, ToolOutput,
};
pub use workspace_languages::WorkspaceLanguages;

/// The families compiled into this build, in wiring order.
pub const COMPILED_FAMILIES: &[&str] = families::COMPILED;

/// How to open a [`Toolbox`].
#[derive(Clone)]
pub struct ToolboxOptions {
    /// The workspace root.
    pub root: PathBuf,
    /// An explicit configuration file (else `agent-tools.toml` at the root, else defaults).
    pub config_path: Option<PathBuf>,
    /// An already parsed configuration; wins over `config_path`.
    pub config: Option<Config>,
    /// The conversation id (a fresh one when absent).
    pub conversation_id: Option<String>,
    /// Decides write and exec calls (default: approve; the surface already caps visibility).
    pub approver: Option<Arc<dyn Approver>>,
    /// The channel to a human behind an MCP client, when it declared elicitation.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// Ask questions on the controlling terminal (`--ask tty`).
    pub ask_tty: bool,
    /// What happens to write and exec calls (`--approve`); anything but `Auto` replaces
    /// `approver`.
    pub approve: ApproveMode,
    /// A question gate of the embedding harness (wins over `ask_tty` and `elicitor`).
    #[cfg(feature = "ask")]
    pub question_gate: Option<Arc<dyn tools_ask::QuestionGate>>,
    /// The user trusts this workspace (`--trust`): the repository's configuration may name
    /// programs and its own binaries, interpreters and build scripts may run. Without it the
    /// run is trusted only when the user's own configuration lists the root (see
    /// [`tools_core::trust`]).
    pub trusted: bool,
    /// At most this many child processes (servers, kernels, adapters, workers) at once in
    /// the run; `None` for no cap. A server of many sessions sets it per session.
    pub max_children: Option<usize>,
    /// The user's own configuration (trusted roots, environment pass-through); read from
    /// `$XDG_CONFIG_HOME/agent-tools/config.toml` when absent.
    pub user_config: Option<UserConfig>,
    /// Language servers shared with every other toolbox opened on the same pool (one per
    /// language, server, root, trust and environment policy); `None`: the run starts its
    /// own. `serve` opens every session on one pool.
    #[cfg(feature = "lsp")]
    pub lsp_pool: Option<Arc<tools_lsp::LspPool>>,
    /// Start language servers only when a call needs one, even where a trusted run would
    /// start the workspace's servers as it opens (`[lsp] start_at_run_start`): for a run
    /// that answers one call and closes (the command line's `call`, `tools`, `doctor`).
    pub servers_on_demand: bool,
    /// Where the run's language servers come from when not from `lsp_pool`: given the
    /// user's configuration and the conversation id, the per-user daemon that holds them
    /// (`agent-tools mcp`), or `None` to start them in this process. Unset: in-process.
    #[cfg(feature = "lsp")]
    pub daemon: Option<DaemonFinder>,
}

/// Finds the per-user daemon for a run (see [`ToolboxOptions::daemon`]).
#[cfg(feature = "lsp")]
pub type DaemonFinder =
    Arc<dyn Fn(&UserConfig, &str) -> Option<tools_daemon::DaemonClient> + Send + Sync>;

/// What the approver does for write and exec calls (`--approve ask|auto|deny`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApproveMode {
    /// Approve everything (the surface already caps what is visible).
    #[default]
    Auto,
    /// Show a yes/no permission card through the run's question gate; deny when no human
    /// is attached (fail-closed). Needs the `ask` feature.
    Ask,
    /// Deny every write and exec call.
    Deny,
}

impl ToolboxOptions {
    /// Defaults for a workspace at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        ToolboxOptions {
            root: root.into(),
            config_path: None,
            config: None,
            conversation_id: None,
            approver: None,
            elicitor: None,
            ask_tty: false,
            approve: ApproveMode::Auto,
            #[cfg(feature = "ask")]
            question_gate: None,
            trusted: false,
            max_children: None,
            user_config: None,
            #[cfg(feature = "lsp")]
            lsp_pool: None,
            servers_on_demand: false,
            #[cfg(feature = "lsp")]
            daemon: None,
        }
    }
}

/// One run with every enabled family wired into its registry.
#[derive(Clone)]
pub struct Toolbox {
    registry: Arc<Registry>,
}

impl Toolbox {
    /// Opens a run at `opts.root` and wires the families.
    pub async fn open(opts: ToolboxOptions) -> Result<Toolbox, ToolError> {
        let config = match &opts.config {
            Some(c) => c.clone(),
            None => Config::load(&opts.root, opts.config_path.as_deref())?,
        };
        let user = match &opts.user_config {
            Some(u) => u.clone(),
            None => UserConfig::load()?,
        };
        let mut run_opts = RunOptions::at(&opts.root)?;
        run_opts.config = config;
        run_opts.trusted = opts.trusted || user.trusts(&opts.root);
        if let Some(id) = &opts.conversation_id {
            run_opts.conversation_id = id.clone();
        }
        let run = Run::new(run_opts)?;
        if let Some(max) = opts.max_children {
            run.limit_children(max);
        }
        // Every child of this run gets the minimal environment plus the user's `[env]`.
        run.state(|| EnvPolicy::new(&user.env));
        // Servers from the per-user daemon, unless they come from a pool of this process.
        #[cfg(feature = "lsp")]
        if opts.lsp_pool.is_none()
            && let Some(find) = &opts.daemon
        {
            let client = find(&user, run.conversation_id());
            run.state(|| tools_daemon::DaemonChoice(client));
        }
        let mut builder = RegistryBuilder::new(Arc::clone(&run));
        if let Some(a) = &opts.approver {
            builder = builder.approver(Arc::clone(a));
        }
        builder = families::wire(builder, &run, &opts)?;
        Ok(Toolbox {
            registry: builder.build()?,
        })
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }
    /// The run.
    pub fn run(&self) -> &Arc<Run> {
        self.registry.run()
    }
    /// The tools `surface` sees.
    pub fn tools(&self, surface: Surface) -> Vec<ToolInfo> {
        self.registry.list(surface)
    }
    /// Calls a tool as `surface`.
    pub async fn call(
        &self,
        surface: Surface,
        name: &str,
        args: serde_json::Value,
    ) -> Result<ToolOutput, CallError> {
        self.registry.call(surface, name, args).await
    }
    /// Every family's doctor report, after one entry on workspace trust.
    pub async fn doctor(&self) -> Vec<DoctorEntry> {
        let mut out = vec![trust_entry(self.run())];
        out.extend(self.registry.doctor().await);
        out
    }
    /// Closes the run: shuts servers down and kills every child process group.
    pub async fn close(&self) {
        self.run().close().await;
    }
}

/// `doctor`'s line on workspace trust: whether the repository's programs may run and, when
/// not, what that skips (including the configuration keys that were ignored).
fn trust_entry(run: &Run) -> DoctorEntry {
    let detail = if run.trusted() {
        "trusted: the repository's configuration, its own binaries and interpreters (.venv, node_modules/.bin) and build scripts are used".to_string()
    } else {
        let ignored = run.config().ignored_keys();
        let keys = if ignored.is_empty() {
            String::new()
        } else {
            let capped = tools_core::text::cap_list(ignored.to_vec(), 8);
            let more = if capped.more() > 0 {
                format!(" and {} more", capped.more())
            } else {
                String::new()
            };
            format!(
                "; agent-tools.toml keys that name programs were ignored: {}{more}",
                capped.shown.join(", ")
            )
        };
        tools_core::trust::skipped_line(&format!(
            "project-local binaries and interpreters (.venv, venv, node_modules/.bin), build scripts and proc macros are not run{keys}"
        ))
    };
    DoctorEntry {
        family: "trust".into(),
        resource: "workspace trust".into(),
        ok: true,
        detail,
    }
}

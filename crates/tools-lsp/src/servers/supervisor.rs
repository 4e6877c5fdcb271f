//! The server supervisor: one server per (language, root), started on first use by the
//! conjunction rule (a root marker exists *and* the binary resolves), restarted after a
//! crash with a bounded number of tries and backoff, reported by `status` and `doctor`
//! from the very discovery code the tools use, and shut down when the run closes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tools_core::{Run, ToolError};

use crate::client::{Launch, LspClient, WriteClaim, WriteClaims};
use crate::servers::config::LspConfig;
use crate::servers::discover::{self, Resolution};
use crate::servers::pool::LspPool;
use crate::servers::table::{Candidate, ServerSpec, server_table};

mod idle;
mod report;

/// Where a file's server would run and with which program.
#[derive(Debug, Clone)]
pub struct Located {
    /// The server entry.
    pub spec: ServerSpec,
    /// The project root.
    pub root: PathBuf,
    /// The candidate that resolved.
    pub candidate: Candidate,
    /// Its program.
    pub program: PathBuf,
}

#[derive(Default)]
struct SlotState {
    client: Option<Arc<LspClient>>,
    crashes: u32,
    last_failure: Option<String>,
    gave_up: bool,
    server: String,
    /// Set when the server was stopped for being idle that long (a companion), until it
    /// starts again.
    stopped_idle: Option<Duration>,
}

#[derive(Default)]
struct Slot {
    start_lock: tokio::sync::Mutex<()>,
    state: Mutex<SlotState>,
}

/// `; `agent-tools servers install NAME` installs …` for an entry the table can install,
/// appended to every "missing binary" line; empty otherwise.
fn install_hint(spec: &ServerSpec) -> String {
    crate::servers::acquire::install_hint(spec)
        .map(|h| format!("; {h}"))
        .unwrap_or_default()
}

/// Owns the run's language servers.
pub struct ServerSupervisor {
    run: Weak<Run>,
    workspace: PathBuf,
    cfg: LspConfig,
    table: Vec<ServerSpec>,
    slots: Mutex<HashMap<(String, PathBuf), Arc<Slot>>>,
    /// The pool the servers come from, with this supervisor's id in it; `None`: the run
    /// starts its own.
    pool: Option<(Arc<LspPool>, u64)>,
    /// What the run must be told with its next answer (a shared server restarted).
    notices: Mutex<Vec<String>>,
    /// The files writes claim now, shared with every run on the same pool.
    claims: Arc<WriteClaims>,
}

impl std::fmt::Debug for ServerSupervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerSupervisor")
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

impl ServerSupervisor {
    /// A supervisor for `run` with `cfg`; it registers its shutdown with the run.
    pub fn new(run: &Arc<Run>, cfg: LspConfig) -> Arc<Self> {
        Self::build(run, cfg, None)
    }

    /// A supervisor for `run` whose servers come from `pool`, shared with the other runs
    /// built on it (see [`LspPool`]); closing the run leaves them to the others.
    pub fn with_pool(run: &Arc<Run>, cfg: LspConfig, pool: Arc<LspPool>) -> Arc<Self> {
        let id = pool.sharer_id();
        Self::build(run, cfg, Some((pool, id)))
    }

    fn build(run: &Arc<Run>, cfg: LspConfig, pool: Option<(Arc<LspPool>, u64)>) -> Arc<Self> {
        let sup = Arc::new(ServerSupervisor {
            run: Arc::downgrade(run),
            workspace: run.root().to_path_buf(),
            table: server_table(&cfg),
            cfg,
            slots: Mutex::new(HashMap::new()),
            claims: pool.as_ref().map(|(p, _)| p.claims()).unwrap_or_default(),
            pool,
            notices: Mutex::new(Vec::new()),
        });
        sup.watch_idle_companions();
        let weak = Arc::downgrade(&sup);
        run.on_close(move || {
            Box::pin(async move {
                if let Some(s) = weak.upgrade() {
                    match &s.pool {
                        Some((pool, id)) => pool.leave(*id),
                        None => s.shutdown_all().await,
                    }
                }
            })
        });
        sup
    }

    /// The pool this run's servers come from, if they are shared.
    pub fn pool(&self) -> Option<&Arc<LspPool>> {
        self.pool.as_ref().map(|(p, _)| p)
    }

    /// What happened to the run's shared servers since its last answer (a restart after a
    /// crash, a reload by another session), once.
    pub fn take_notices(&self) -> Vec<String> {
        match self.notices.lock() {
            Ok(mut n) => std::mem::take(&mut *n),
            Err(p) => std::mem::take(&mut *p.into_inner()),
        }
    }

    /// Claims `paths`, just written by this run, until the claim drops: until then no
    /// other run's sync hands them to a shared server (see [`WriteClaims`]).
    pub fn claim_write(&self, paths: &[PathBuf]) -> WriteClaim {
        let writer = self
            .run
            .upgrade()
            .map(|r| r.conversation_id().to_string())
            .unwrap_or_default();
        self.claims.claim(&writer, paths)
    }

    fn tell(&self, notice: Option<String>) {
        if let Some(n) = notice
            && let Ok(mut all) = self.notices.lock()
            && !all.contains(&n)
        {
            all.push(n);
        }
    }

    /// The run, while it is open.
    pub(crate) fn open_run(&self) -> Option<Arc<Run>> {
        self.run.upgrade().filter(|r| !r.is_closed())
    }

    /// The configuration in force.
    pub fn config(&self) -> &LspConfig {
        &self.cfg
    }

    /// The server table in force.
    pub fn table(&self) -> &[ServerSpec] {
        &self.table
    }

    /// The file extensions of `language`'s primary entry in the table (empty when it has
    /// none).
    pub fn extensions_of(&self, language: &str) -> Vec<String> {
        self.table
            .iter()
            .find(|s| s.language == language && !s.companion)
            .map(|s| s.extensions.clone())
            .unwrap_or_default()
    }

    /// The primary entries a companion serves beside, by name (`python`).
    fn primaries_of(&self, companion: &ServerSpec) -> String {
        let names: Vec<&str> = self
            .table
            .iter()
            .filter(|p| {
                !p.companion
                    && p.extensions
                        .iter()
                        .any(|e| companion.extensions.contains(e))
            })
            .map(|p| p.language.as_str())
            .collect();
        names.join(", ")
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The run's symbols read with the bundled grammars, when a family registered them
    /// (and the run is still open).
    pub fn grammar_symbols(&self) -> Option<Arc<dyn tools_core::SymbolSource>> {
        let run = self.run.upgrade()?;
        crate::grammar_symbols::grammar_source(&tools_core::SymbolSources::for_run(&run))
    }

    /// Applies the conjunction rule to `file`: its server entry, root marker and binary.
    /// The error says exactly which half is missing (or both).
    pub fn locate(&self, file: &Path) -> Result<Located, ToolError> {
        let display = tools_core::display_relative(&self.workspace, file);
        let Some(spec) = discover::spec_for(&self.table, file, &self.workspace) else {
            let ext = file
                .extension()
                .map(|e| format!("`.{}` files", e.to_string_lossy()))
                .unwrap_or_else(|| "files without an extension".into());
            let known: Vec<&str> = self.table.iter().map(|s| s.language.as_str()).collect();
            return Err(ToolError::not_available(format!(
                "no language server is configured for {ext} ({display}); configured languages: {} \
                 (add one under [lsp.servers.<language>] in agent-tools.toml)",
                known.join(", ")
            )));
        };
        let root = crate::servers::roots::server_root(
            &spec.language,
            &spec.markers,
            file,
            &self.workspace,
        )
        .or_else(|| spec.workspace_fallback.then(|| self.workspace.clone()));
        let probe_root = root.clone().unwrap_or_else(|| {
            file.parent()
                .filter(|p| p.starts_with(&self.workspace))
                .unwrap_or(&self.workspace)
                .to_path_buf()
        });
        let res = discover::resolve(
            &spec.candidates,
            &probe_root,
            &self.cfg.program_search(&self.workspace),
        );
        let marker_msg = || {
            format!(
                "missing root marker: no folder from {} up to the workspace root holds one of {}",
                tools_core::display_relative(
                    &self.workspace,
                    file.parent().unwrap_or(&self.workspace)
                ),
                spec.markers.join(", ")
            )
        };
        match (root, res) {
            (Some(root), Resolution::Found { candidate, path }) => Ok(Located {
                spec: spec.clone(),
                root,
                candidate,
                program: path,
            }),
            (
                Some(root),
                Resolution::Missing {
                    looked_for,
                    looked_in,
                },
            ) => Err(ToolError::not_available(format!(
                "the {} server cannot start for {display}: missing binary — none of {} found in {looked_in} \
                     (root marker found at {}){}",
                spec.language,
                looked_for.join(", "),
                tools_core::display_relative(&self.workspace, &root),
                install_hint(spec)
            ))),
            (None, Resolution::Found { path, .. }) => Err(ToolError::not_available(format!(
                "the {} server cannot start for {display}: {} (the binary resolved at {}); \
                 create one of those files at the project root",
                spec.language,
                marker_msg(),
                path.display()
            ))),
            (
                None,
                Resolution::Missing {
                    looked_for,
                    looked_in,
                },
            ) => Err(ToolError::not_available(format!(
                "the {} server cannot start for {display}: both halves are missing — {}, and missing binary: none of {} found in {looked_in}{}",
                spec.language,
                marker_msg(),
                looked_for.join(", "),
                install_hint(spec)
            ))),
        }
    }

    /// The diagnostics-only companions that can run for `file` (ruff beside the Python
    /// server, eslint beside tsserver): those with a root marker above it and a binary.
    /// A companion that cannot run is left out quietly: the primary server still answers.
    pub fn companions(&self, file: &Path) -> Vec<Located> {
        let search = self.cfg.program_search(&self.workspace);
        let mut out = Vec::new();
        for spec in self.table.iter().filter(|s| {
            s.assists(file, &self.workspace)
                && crate::servers::companion_config::companion_wanted(
                    &self.cfg,
                    &s.language,
                    file,
                    &self.workspace,
                )
        }) {
            let Some(root) = crate::servers::roots::server_root(
                &spec.language,
                &spec.markers,
                file,
                &self.workspace,
            )
            .or_else(|| spec.workspace_fallback.then(|| self.workspace.clone())) else {
                continue;
            };
            if let Resolution::Found { candidate, path } =
                discover::resolve(&spec.candidates, &root, &search)
            {
                out.push(Located {
                    spec: spec.clone(),
                    root,
                    candidate,
                    program: path,
                });
            }
        }
        out
    }

    fn slot(&self, language: &str, root: &Path) -> Arc<Slot> {
        let mut slots = match self.slots.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        Arc::clone(
            slots
                .entry((language.to_string(), root.to_path_buf()))
                .or_default(),
        )
    }

    /// The running server for `file`, started (or restarted after a crash) if needed.
    pub async fn client_for(&self, file: &Path) -> Result<Arc<LspClient>, ToolError> {
        let loc = match self.locate(file) {
            Ok(loc) => loc,
            Err(missing) => self.install_on_first_need(file, missing).await?,
        };
        self.client_at(&loc).await
    }

    /// The running server for a located project, started if needed.
    pub async fn client_at(&self, loc: &Located) -> Result<Arc<LspClient>, ToolError> {
        self.client_started_by(loc, false).await
    }

    /// [`ServerSupervisor::client_at`] for the run's start: a server this call starts is
    /// marked as started with the run.
    pub(crate) async fn client_at_run_start(
        &self,
        loc: &Located,
    ) -> Result<Arc<LspClient>, ToolError> {
        self.client_started_by(loc, true).await
    }

    /// The running server for `loc`, started if needed (by the run's start when
    /// `run_start`).
    async fn client_started_by(
        &self,
        loc: &Located,
        run_start: bool,
    ) -> Result<Arc<LspClient>, ToolError> {
        let run = self
            .run
            .upgrade()
            .filter(|r| !r.is_closed())
            .ok_or_else(|| ToolError::rejected("this run is closed; start a new one"))?;
        if let Some((pool, id)) = &self.pool {
            let (client, notice) = pool
                .client(*id, &run, self.launch_for(loc), self.cfg.max_restarts)
                .await?;
            self.tell(notice);
            return Ok(client);
        }
        let slot = self.slot(&loc.spec.language, &loc.root);
        let _start = slot.start_lock.lock().await;
        let max = self.cfg.max_restarts;
        let dead = {
            let mut st = match slot.state.lock() {
                Ok(s) => s,
                Err(p) => p.into_inner(),
            };
            match &st.client {
                Some(c) if c.is_alive() => return Ok(Arc::clone(c)),
                Some(_) => st.client.take(),
                None => None,
            }
        };
        let served_before = dead
            .as_ref()
            .and_then(|d| d.served_by_daemon())
            .map(|s| s.daemon_pid);
        if let Some(dead) = dead {
            let detail = dead.exit_detail().await;
            let mut st = match slot.state.lock() {
                Ok(s) => s,
                Err(p) => p.into_inner(),
            };
            st.crashes += 1;
            st.last_failure = Some(format!("{} exited{detail}", dead.server));
            if st.crashes > max {
                st.gave_up = true;
            }
        }
        let (crashes, gave_up, last) = {
            let st = match slot.state.lock() {
                Ok(s) => s,
                Err(p) => p.into_inner(),
            };
            (st.crashes, st.gave_up, st.last_failure.clone())
        };
        let root_disp = tools_core::display_relative(&self.workspace, &loc.root);
        if gave_up {
            return Err(ToolError::not_available(format!(
                "the {} server for root {root_disp} failed {crashes} times and is left down; last failure: {}. \
                 Call `lsp` with action `reload` (and this file) to start it again",
                loc.spec.language,
                last.unwrap_or_default()
            )));
        }
        if crashes > 0 {
            let backoff = Duration::from_millis(250 * (1u64 << (crashes - 1).min(4)));
            tokio::time::sleep(backoff.min(Duration::from_secs(4))).await;
        }
        let launch = self.launch_for(loc);
        match LspClient::start(&run, launch).await {
            // The run closed while the server started (a start with the run, closed right
            // away): its close shut down only the servers already up, so this one goes now.
            Ok(c) if run.is_closed() => {
                c.shutdown().await;
                Err(ToolError::rejected("this run is closed; start a new one"))
            }
            Ok(c) => {
                if run_start {
                    c.note_started_with_the_run();
                }
                let mut st = match slot.state.lock() {
                    Ok(s) => s,
                    Err(p) => p.into_inner(),
                };
                st.server = c.server.clone();
                st.client = Some(Arc::clone(&c));
                st.stopped_idle = None;
                drop(st);
                if let Some(pid) = served_before {
                    let now = match c.served_by_daemon() {
                        Some(s) => format!("a new agent-tools daemon (pid {})", s.daemon_pid),
                        None => "this conversation's own process".into(),
                    };
                    self.tell(Some(format!(
                        "the agent-tools daemon (pid {pid}) that served {} for root {root_disp} stopped; the server was restarted in {now}, so its first answers may be slower",
                        c.server
                    )));
                }
                Ok(c)
            }
            Err(e) => {
                let mut st = match slot.state.lock() {
                    Ok(s) => s,
                    Err(p) => p.into_inner(),
                };
                st.crashes += 1;
                st.last_failure = Some(e.to_string());
                if st.crashes > max {
                    st.gave_up = true;
                }
                Err(e.into())
            }
        }
    }

    /// What starting `loc`'s server takes: its program, arguments, settings and bounds.
    fn launch_for(&self, loc: &Located) -> Launch {
        Launch {
            language: loc.spec.language.clone(),
            language_ids: loc.spec.language_ids.clone(),
            extensions: loc.spec.extensions.clone(),
            program: loc.program.clone(),
            args: crate::servers::java_runtime::expand_args(
                &crate::servers::state_dir::expand_args(
                    loc.candidate.command.get(1..).unwrap_or(&[]),
                    &loc.spec.language,
                    &loc.root,
                ),
                &loc.program,
            ),
            root: loc.root.clone(),
            workspace: self.workspace.clone(),
            settings: loc.spec.settings.clone(),
            initialization_options: loc.spec.initialization_options.clone(),
            request_timeout: self.cfg.request_timeout(),
            start_timeout: self.cfg.start_timeout(),
            index_wait: self.cfg.index_wait(),
            max_open_documents: self.cfg.max_open_documents,
            claims: Arc::clone(&self.claims),
        }
    }

    /// The servers running now.
    pub fn running(&self) -> Vec<Arc<LspClient>> {
        if let (Some((pool, _)), Some(run)) = (&self.pool, self.open_run()) {
            return pool
                .servers_for(&run)
                .into_iter()
                .filter_map(|s| s.client.filter(|c| c.is_alive()))
                .collect();
        }
        let slots: Vec<Arc<Slot>> = match self.slots.lock() {
            Ok(s) => s.values().cloned().collect(),
            Err(_) => return Vec::new(),
        };
        slots
            .iter()
            .filter_map(|s| s.state.lock().ok().and_then(|st| st.client.clone()))
            .filter(|c| c.is_alive())
            .collect()
    }

    /// The servers running now and those whose start is under way (the run's start), the
    /// latter waited for, each bounded by the start timeout: a question about the whole
    /// workspace asks all of them, not whichever came up first.
    pub async fn running_or_starting(&self) -> Vec<Arc<LspClient>> {
        if self.pool.is_some() {
            return self.running();
        }
        let slots: Vec<Arc<Slot>> = match self.slots.lock() {
            Ok(s) => s.values().cloned().collect(),
            Err(_) => return Vec::new(),
        };
        let live = |s: &Slot| {
            s.state
                .lock()
                .ok()
                .and_then(|st| st.client.clone())
                .filter(|c| c.is_alive())
        };
        let waits = slots.iter().map(|s| async move {
            if let Some(c) = live(s) {
                return Some(c);
            }
            // The start holds this lock until its server is up or has failed.
            if s.start_lock.try_lock().is_err() {
                let _ = tokio::time::timeout(self.cfg.start_timeout(), s.start_lock.lock()).await;
            }
            live(s)
        });
        futures::future::join_all(waits)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// Restarts the server for `file`'s root (or every known server when `file` is `None`),
    /// clearing its crash count. Returns one line per server restarted.
    pub async fn reload(&self, file: Option<&Path>) -> Result<Vec<String>, ToolError> {
        let targets: Vec<Located> = match file {
            Some(f) => vec![self.locate(f)?],
            None => {
                let keys: Vec<(String, PathBuf)> = match (&self.pool, self.open_run()) {
                    (Some((pool, _)), Some(run)) => pool
                        .servers_for(&run)
                        .into_iter()
                        .map(|s| (s.key.language, s.key.root))
                        .collect(),
                    _ => match self.slots.lock() {
                        Ok(s) => s.keys().cloned().collect(),
                        Err(_) => Vec::new(),
                    },
                };
                let mut out = Vec::new();
                for (lang, root) in keys {
                    if let Some(spec) = self.table.iter().find(|s| s.language == lang)
                        && let Resolution::Found { candidate, path } = discover::resolve(
                            &spec.candidates,
                            &root,
                            &self.cfg.program_search(&self.workspace),
                        )
                    {
                        out.push(Located {
                            spec: spec.clone(),
                            root,
                            candidate,
                            program: path,
                        });
                    }
                }
                out
            }
        };
        let mut lines = Vec::new();
        for loc in targets {
            if let (Some((pool, id)), Some(run)) = (&self.pool, self.open_run()) {
                let root_disp = tools_core::display_relative(&self.workspace, &loc.root);
                let reloaded = pool
                    .reload(*id, &run, self.launch_for(&loc), self.cfg.max_restarts)
                    .await;
                lines.push(match reloaded {
                    Ok((c, _)) => format!(
                        "{}: restarted {} for root {root_disp} (pid {}), for every session sharing it",
                        loc.spec.language,
                        c.server,
                        c.pid()
                    ),
                    Err(e) => format!(
                        "{}: could not restart for root {root_disp}: {e}",
                        loc.spec.language
                    ),
                });
                continue;
            }
            let slot = self.slot(&loc.spec.language, &loc.root);
            let old = {
                let _g = slot.start_lock.lock().await;
                let mut st = match slot.state.lock() {
                    Ok(s) => s,
                    Err(p) => p.into_inner(),
                };
                st.crashes = 0;
                st.gave_up = false;
                st.last_failure = None;
                st.client.take()
            };
            if let Some(c) = old {
                c.shutdown().await;
            }
            let root_disp = tools_core::display_relative(&self.workspace, &loc.root);
            match self.client_at(&loc).await {
                Ok(c) => lines.push(format!(
                    "{}: restarted {} for root {root_disp} (pid {})",
                    loc.spec.language,
                    c.server,
                    c.pid()
                )),
                Err(e) => lines.push(format!(
                    "{}: could not restart for root {root_disp}: {e}",
                    loc.spec.language
                )),
            }
        }
        if lines.is_empty() {
            lines.push("no server has been started in this run yet; nothing to reload".into());
        }
        Ok(lines)
    }

    /// Shuts every server down (`shutdown`/`exit`, then kill its group).
    pub async fn shutdown_all(&self) {
        let slots: Vec<Arc<Slot>> = match self.slots.lock() {
            Ok(s) => s.values().cloned().collect(),
            Err(_) => return,
        };
        let clients: Vec<Arc<LspClient>> = slots
            .iter()
            .filter_map(|s| s.state.lock().ok().and_then(|mut st| st.client.take()))
            .collect();
        futures::future::join_all(clients.iter().map(|c| c.shutdown())).await;
    }
}

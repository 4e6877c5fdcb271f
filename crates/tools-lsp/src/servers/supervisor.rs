//! The server supervisor: one server per (language, root), started on first use by the
//! conjunction rule (a root marker exists *and* the binary resolves), restarted after a
//! crash with a bounded number of tries and backoff, reported by `status` and `doctor`
//! from the very discovery code the tools use, and shut down when the run closes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tools_core::{DoctorEntry, Run, ToolError};

use crate::client::{Launch, LspClient};
use crate::servers::config::LspConfig;
use crate::servers::discover::{self, Resolution};
use crate::servers::table::{Candidate, ServerSpec, server_table};

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
        let sup = Arc::new(ServerSupervisor {
            run: Arc::downgrade(run),
            workspace: run.root().to_path_buf(),
            table: server_table(&cfg),
            cfg,
            slots: Mutex::new(HashMap::new()),
        });
        let weak = Arc::downgrade(&sup);
        run.on_close(move || {
            Box::pin(async move {
                if let Some(s) = weak.upgrade() {
                    s.shutdown_all().await;
                }
            })
        });
        sup
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

    /// Applies the conjunction rule to `file`: its server entry, root marker and binary.
    /// The error says exactly which half is missing (or both).
    pub fn locate(&self, file: &Path) -> Result<Located, ToolError> {
        let display = tools_core::display_relative(&self.workspace, file);
        let Some(spec) = discover::spec_for(&self.table, file) else {
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
            s.assists(file)
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
        let run = self
            .run
            .upgrade()
            .filter(|r| !r.is_closed())
            .ok_or_else(|| ToolError::rejected("this run is closed; start a new one"))?;
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
        let launch = Launch {
            language: loc.spec.language.clone(),
            language_ids: loc.spec.language_ids.clone(),
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
        };
        match LspClient::start(&run, launch).await {
            Ok(c) => {
                let mut st = match slot.state.lock() {
                    Ok(s) => s,
                    Err(p) => p.into_inner(),
                };
                st.server = c.server.clone();
                st.client = Some(Arc::clone(&c));
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

    /// The servers running now.
    pub fn running(&self) -> Vec<Arc<LspClient>> {
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

    /// Restarts the server for `file`'s root (or every known server when `file` is `None`),
    /// clearing its crash count. Returns one line per server restarted.
    pub async fn reload(&self, file: Option<&Path>) -> Result<Vec<String>, ToolError> {
        let targets: Vec<Located> = match file {
            Some(f) => vec![self.locate(f)?],
            None => {
                let keys: Vec<(String, PathBuf)> = match self.slots.lock() {
                    Ok(s) => s.keys().cloned().collect(),
                    Err(_) => Vec::new(),
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

    /// The `status` report: per language seen in the workspace, which servers run for
    /// which roots, and for the others exactly which half of the rule is missing or how
    /// they crashed. Text and structured.
    pub async fn status(&self) -> (String, Value) {
        let scan = discover::scan_workspace(&self.table, &self.workspace);
        let slots: Vec<((String, PathBuf), Arc<Slot>)> = match self.slots.lock() {
            Ok(s) => s.iter().map(|(k, v)| (k.clone(), Arc::clone(v))).collect(),
            Err(_) => Vec::new(),
        };
        let mut lines = Vec::new();
        let mut structured = Vec::new();
        for spec in &self.table {
            let lang = &spec.language;
            let files = scan.files.get(lang).copied().unwrap_or(0);
            // Marker folders inside one workspace share its server: list the workspace once.
            let mut roots: Vec<PathBuf> = Vec::new();
            for r in scan.roots.get(lang).into_iter().flatten() {
                let w =
                    crate::servers::roots::workspace_root(lang, &spec.markers, r, &self.workspace);
                if !roots.contains(&w) {
                    roots.push(w);
                }
            }
            // Languages whose files stand alone are served at the workspace root.
            if roots.is_empty() && files > 0 && spec.workspace_fallback {
                roots.push(self.workspace.clone());
            }
            let my_slots: Vec<_> = slots.iter().filter(|((l, _), _)| l == lang).collect();
            let only_generic = spec.markers.iter().all(|m| m == ".git");
            if files == 0 && my_slots.is_empty() && (roots.is_empty() || only_generic) {
                continue;
            }
            let mut seen_roots = Vec::new();
            for ((_, root), slot) in &my_slots {
                let (client, crashes, last, gave_up, server) = match slot.state.lock() {
                    Ok(st) => (
                        st.client.clone(),
                        st.crashes,
                        st.last_failure.clone(),
                        st.gave_up,
                        st.server.clone(),
                    ),
                    Err(_) => continue,
                };
                let rd = tools_core::display_relative(&self.workspace, root);
                seen_roots.push(root.clone());
                match client {
                    Some(c) if c.is_alive() => {
                        let up = c.started.elapsed().as_secs();
                        let idx = if c.indexing() { ", indexing" } else { "" };
                        let restarts = if crashes > 0 {
                            format!(", restarted after {crashes} failure(s)")
                        } else {
                            String::new()
                        };
                        lines.push(format!(
                            "{lang}: running {} for root {rd} (pid {}, up {up}s{idx}{restarts})",
                            c.server,
                            c.pid()
                        ));
                        structured.push(json!({"language": lang, "root": rd, "state": "running",
                            "server": c.server, "pid": c.pid(), "uptime_s": up}));
                    }
                    Some(c) => {
                        let detail = c.exit_detail().await;
                        lines.push(format!(
                            "{lang}: crashed — {} for root {rd} exited{detail}; the next query restarts it",
                            c.server
                        ));
                        structured.push(json!({"language": lang, "root": rd, "state": "crashed", "server": c.server, "detail": detail}));
                    }
                    None if gave_up => {
                        lines.push(format!(
                            "{lang}: crashed repeatedly — {server} for root {rd} failed {crashes} times and is left down (last: {}); use `reload`",
                            last.clone().unwrap_or_default()
                        ));
                        structured.push(json!({"language": lang, "root": rd, "state": "gave_up", "failures": crashes, "detail": last}));
                    }
                    None if crashes > 0 => {
                        lines.push(format!(
                            "{lang}: failed to start for root {rd} ({crashes} time(s)): {}; the next query tries again",
                            last.clone().unwrap_or_default()
                        ));
                        structured.push(json!({"language": lang, "root": rd, "state": "failed", "failures": crashes, "detail": last}));
                    }
                    None => {}
                }
            }
            let pending: Vec<&PathBuf> = roots
                .iter()
                .filter(|r| !seen_roots.contains(r))
                .take(5)
                .collect();
            if pending.is_empty() && seen_roots.is_empty() {
                let res = discover::resolve(
                    &spec.candidates,
                    &self.workspace,
                    &self.cfg.program_search(&self.workspace),
                );
                let marker = format!(
                    "missing root marker (none of {} in the workspace)",
                    spec.markers.join(", ")
                );
                let (line, state) = match res {
                    Resolution::Found { path, .. } => (
                        format!(
                            "{lang}: {files} file(s); {marker}; the binary would be {}",
                            path.display()
                        ),
                        "missing_marker",
                    ),
                    Resolution::Missing {
                        looked_for,
                        looked_in,
                    } => (
                        format!(
                            "{lang}: {files} file(s); {marker}, and missing binary (looked for {} in {looked_in}){}",
                            looked_for.join(", "),
                            install_hint(spec)
                        ),
                        "missing_both",
                    ),
                };
                lines.push(line);
                structured.push(json!({"language": lang, "state": state, "files": files}));
            }
            for root in pending {
                let rd = tools_core::display_relative(&self.workspace, root);
                match discover::resolve(
                    &spec.candidates,
                    root,
                    &self.cfg.program_search(&self.workspace),
                ) {
                    Resolution::Found { candidate, path } => {
                        lines.push(format!(
                            "{lang}: not started yet for root {rd}; {} resolves at {} and starts on the first query",
                            candidate.program(),
                            path.display()
                        ));
                        structured.push(json!({"language": lang, "root": rd, "state": "ready", "binary": path.display().to_string()}));
                    }
                    Resolution::Missing {
                        looked_for,
                        looked_in,
                    } => {
                        lines.push(format!(
                            "{lang}: missing binary for root {rd} (marker found) — looked for {} in {looked_in}{}",
                            looked_for.join(", "),
                            install_hint(spec)
                        ));
                        structured.push(json!({"language": lang, "root": rd, "state": "missing_binary", "looked_for": looked_for}));
                    }
                }
            }
        }
        if lines.is_empty() {
            lines.push(
                "no source files of a configured language were found in the workspace".into(),
            );
        }
        let trust =
            discover::untrusted_line(&self.cfg.program_search(&self.workspace), &self.table);
        lines.extend(trust.clone());
        (
            lines.join("\n"),
            json!({"servers": structured, "untrusted": trust}),
        )
    }

    /// `doctor`: per language, whether a server could start here and why not.
    pub fn doctor(&self) -> Vec<DoctorEntry> {
        let scan = discover::scan_workspace(&self.table, &self.workspace);
        let mut out = Vec::new();
        for spec in &self.table {
            let roots = scan.roots.get(&spec.language).cloned().unwrap_or_default();
            let probe = roots
                .first()
                .cloned()
                .unwrap_or_else(|| self.workspace.clone());
            let res = discover::resolve(
                &spec.candidates,
                &probe,
                &self.cfg.program_search(&self.workspace),
            );
            let marker = if roots.is_empty() {
                format!("no root marker ({})", spec.markers.join(", "))
            } else {
                format!(
                    "root marker at {}",
                    roots
                        .iter()
                        .take(3)
                        .map(|r| tools_core::display_relative(&self.workspace, r))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            let (resource, binary_ok, bin) = match &res {
                Resolution::Found { candidate, path } => (
                    format!("{}: {}", spec.language, candidate.program()),
                    true,
                    format!("binary at {}", path.display()),
                ),
                Resolution::Missing {
                    looked_for,
                    looked_in,
                } => (
                    format!("{}: {}", spec.language, looked_for.join(" | ")),
                    false,
                    format!(
                        "binary not found (looked in {looked_in}){}",
                        install_hint(spec)
                    ),
                ),
            };
            // A companion says whose files it lints.
            let beside = match spec.companion {
                true => format!(
                    "diagnostics beside the {} server; ",
                    self.primaries_of(spec)
                ),
                false => String::new(),
            };
            out.push(DoctorEntry {
                family: "lsp".into(),
                resource,
                ok: binary_ok && !roots.is_empty(),
                detail: format!("{beside}{marker}; {bin}"),
            });
        }
        if let Some(line) =
            discover::untrusted_line(&self.cfg.program_search(&self.workspace), &self.table)
        {
            out.push(DoctorEntry {
                family: "lsp".into(),
                resource: "workspace trust".into(),
                ok: true,
                detail: line,
            });
        }
        out
    }
}

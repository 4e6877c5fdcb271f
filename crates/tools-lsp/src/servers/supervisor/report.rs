//! The supervisor's reports: `status` (which servers run for which roots, shared with
//! which sessions, and why others do not) and `doctor` (whether a server could start here),
//! both from the very discovery code the tools use.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tools_core::DoctorEntry;

use super::{ServerSupervisor, Slot, SlotState, install_hint};
use crate::servers::discover::{self, Resolution};
use crate::servers::pool::rss;

impl ServerSupervisor {
    /// The per-user daemon's state, when this run's servers come from it (asked once per
    /// report; `None` when it does not answer within a second).
    async fn daemon_status(&self) -> Option<tools_daemon::DaemonStatus> {
        let run = self.open_run()?;
        let choice = run.state(tools_daemon::DaemonChoice::default);
        let client = choice.0.as_ref()?;
        tokio::time::timeout(std::time::Duration::from_secs(1), client.status())
            .await
            .ok()?
            .ok()?
    }

    /// This run's conversation id.
    fn conversation(&self) -> String {
        self.open_run()
            .map(|r| r.conversation_id().to_string())
            .unwrap_or_default()
    }

    /// The pool's servers for this run, when they are shared.
    fn shared_servers(&self) -> Option<Vec<crate::servers::pool::SharedServer>> {
        let (pool, _) = self.pool.as_ref()?;
        Some(pool.servers_for(&*self.open_run()?))
    }

    /// The `status` report: per language seen in the workspace, which servers run for
    /// which roots, and for the others exactly which half of the rule is missing or how
    /// they crashed. Text and structured.
    pub async fn status(&self) -> (String, Value) {
        let scan = discover::scan_workspace(&self.table, &self.workspace);
        let shared = self.shared_servers();
        let daemon = self.daemon_status().await;
        let slots: Vec<((String, PathBuf), Arc<Slot>)> = match &shared {
            Some(servers) => servers.iter().map(pooled_slot).collect(),
            None => match self.slots.lock() {
                Ok(s) => s.iter().map(|(k, v)| (k.clone(), Arc::clone(v))).collect(),
                Err(_) => Vec::new(),
            },
        };
        let mut lines = Vec::new();
        let mut structured = Vec::new();
        // The resident memory of every process the run's servers started, one entry each.
        let mut run_memory: Vec<u64> = Vec::new();
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
                let (client, crashes, last, gave_up, server, stopped_idle) = match slot.state.lock()
                {
                    Ok(st) => (
                        st.client.clone(),
                        st.crashes,
                        st.last_failure.clone(),
                        st.gave_up,
                        st.server.clone(),
                        st.stopped_idle,
                    ),
                    Err(_) => continue,
                };
                let rd = tools_core::display_relative(&self.workspace, root);
                seen_roots.push(root.clone());
                match client {
                    Some(c) if c.is_alive() => {
                        let served = c
                            .served_by_daemon()
                            .map(|s| served_line(s, daemon.as_ref(), c.pid(), self.conversation()));
                        let up = match &served {
                            Some((_, _, age)) => *age,
                            None => c.started.elapsed().as_secs(),
                        };
                        // pyright counts the files its analysis has left: how far it is.
                        let indexing = c.indexing();
                        let pace = c.analysis_eta().filter(|_| indexing);
                        let idx = match (indexing, pace) {
                            (true, Some(p)) => format!(
                                ", indexing: {} file(s) to analyze, about {} s more at its pace",
                                p.left,
                                p.eta.as_secs().max(1)
                            ),
                            (true, None) => ", indexing".to_string(),
                            (false, _) => String::new(),
                        };
                        let restarts = if crashes > 0 {
                            format!(", restarted after {crashes} failure(s)")
                        } else {
                            String::new()
                        };
                        let (mut sharing, mut facts) =
                            crate::servers::pool::status::sharing(shared.as_deref(), lang, root);
                        if let Some((line, fact, _)) = &served {
                            sharing.push_str(line);
                            if let Some(f) = facts.as_object_mut() {
                                f.insert("daemon".into(), fact.clone());
                            }
                        }
                        lines.push(format!(
                            "{lang}: running {} for root {rd} (pid {}, up {up}s{idx}{restarts}{sharing})",
                            c.server,
                            c.pid()
                        ));
                        // Every process the server started (its session) with its memory.
                        let processes = rss::session_processes(c.pid());
                        if !processes.is_empty() {
                            lines.push(format!(
                                "{lang}: memory of {}: {}",
                                c.server,
                                rss::processes_line(&processes)
                            ));
                            run_memory.extend(processes.iter().map(|p| p.rss));
                        }
                        let base = json!({"language": lang, "root": rd, "state": "running",
                            "server": c.server, "pid": c.pid(), "uptime_s": up,
                            "analysis": pace.map(|p| json!({
                                "files_left": p.left, "eta_s": p.eta.as_secs(),
                            })),
                            "rss_bytes": processes.iter().map(|p| p.rss).sum::<u64>(),
                            "processes": processes.iter().map(|p| json!({
                                "pid": p.pid, "name": p.name, "rss_bytes": p.rss,
                            })).collect::<Vec<_>>()});
                        if let (Some(f), Some(b)) = (facts.as_object_mut(), base.as_object()) {
                            f.extend(b.clone());
                        }
                        structured.push(facts);
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
                    // A start under way (the run's own, or the first query's).
                    None if slot.start_lock.try_lock().is_err() => {
                        lines.push(format!("{lang}: starting for root {rd}"));
                        structured.push(json!({"language": lang, "root": rd, "state": "starting"}));
                    }
                    None if let Some(idle) = stopped_idle => {
                        lines.push(format!(
                            "{lang}: stopped — {server} for root {rd} had nothing asked of it for {}s; \
                             the next write or check that needs it starts it again",
                            idle.as_secs()
                        ));
                        structured.push(
                            json!({"language": lang, "root": rd, "state": "stopped_idle",
                            "server": server, "idle_s": idle.as_secs()}),
                        );
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
        let total: u64 = run_memory.iter().sum();
        if !run_memory.is_empty() {
            lines.push(format!(
                "language servers in all: {} in {} process(es)",
                rss::mib(total),
                run_memory.len()
            ));
        }
        let trust =
            discover::untrusted_line(&self.cfg.program_search(&self.workspace), &self.table);
        lines.extend(trust.clone());
        (
            lines.join("\n"),
            json!({"servers": structured, "untrusted": trust,
                "rss_bytes": total, "processes": run_memory.len()}),
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

/// A shared server as the status report's slot.
fn pooled_slot(s: &crate::servers::pool::SharedServer) -> ((String, PathBuf), Arc<Slot>) {
    let slot = Slot {
        start_lock: tokio::sync::Mutex::new(()),
        state: Mutex::new(SlotState {
            client: s.client.clone(),
            crashes: s.crashes,
            last_failure: s.last_failure.clone(),
            gave_up: s.gave_up,
            stopped_idle: None,
            server: s
                .key
                .program
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default(),
        }),
    };
    ((s.key.language.clone(), s.key.root.clone()), Arc::new(slot))
}

/// How long, as people say it: `40 s`, `12 min`, `3 h`.
fn rough_duration(secs: u64) -> String {
    match secs {
        0..90 => format!("{secs} s"),
        90..5400 => format!("{} min", (secs + 30) / 60),
        _ => format!("{} h", (secs + 1800) / 3600),
    }
}

/// How a server the daemon serves is shown: the part of the status line (`, from the
/// agent-tools daemon for 12 min, shared with run-2`), its structured facts, and the server's
/// age in seconds (it may be older than this conversation).
fn served_line(
    serving: &tools_daemon::Serving,
    daemon: Option<&tools_daemon::DaemonStatus>,
    pid: i32,
    conversation: String,
) -> (String, Value, u64) {
    let hosted = daemon.and_then(|d| d.servers.iter().find(|h| h.pid == pid));
    let others: Vec<String> = match hosted {
        Some(h) => h
            .conversations
            .iter()
            .filter(|c| **c != conversation)
            .cloned()
            .collect(),
        None => serving.shared_with.clone(),
    };
    let age = hosted.map(|h| h.age_s).unwrap_or(serving.server_age_s) as u64;
    let mut line = format!(", from the agent-tools daemon for {}", rough_duration(age));
    if serving.warm {
        line.push_str(", warm from an earlier conversation");
    }
    if !others.is_empty() {
        line.push_str(&format!(", shared with {}", others.join(", ")));
    }
    let fact = json!({"pid": serving.daemon_pid, "warm": serving.warm,
        "server_age_s": age, "shared_with": others});
    (line, fact, age)
}

//! The debug-session supervisor: one session per conversation (per run), a hard TTL, the
//! breakpoints kept until `terminate` (across a program's end or an adapter failure), and the
//! session's life: launch, attach, resume, pause, status, terminate. Inspection of a stopped
//! program lives in `inspect`, the breakpoint store in `breakpoints`.
//!
//! Rules it enforces: a second `launch`/`attach` while a session lives is rejected (never a
//! silent replacement); a session past its TTL is terminated and `status` says it expired;
//! an adapter that crashes or stops answering gets a clear error and a cleared session, with
//! its processes killed. A session whose debuggee has already ended does not count as
//! living: the next `launch` clears it and starts afresh.

mod breakpoints;
mod inspect;

use inspect::frames_total;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tools_core::text::cut_text;
use tools_core::{DoctorEntry, Run, ToolError, ToolOutput};

use crate::adapters::{
    AdapterId, AdapterTable, Resolution, Resolver, adapter_for_program, find_marker, scan_marker,
};
use crate::config::DebugConfig;
use crate::error::Error;
use crate::protocol::{Phase, StopEvent};
use crate::report::{self, STACK_CAP, STOP_FRAMES, VALUE_CAP};
use crate::session::{
    Bounds, BreakpointResult, Resume, Session, StartKind, StartPlan, WaitOutcome, normalise_reason,
};

/// What `attach` connects to.
#[derive(Debug, Clone, Default)]
pub struct AttachTarget {
    /// Adapter to use (default: debugpy for `port`, required with `pid`).
    pub adapter: Option<AdapterId>,
    /// debugpy's `--listen` port.
    pub port: Option<u16>,
    /// Host for `port` (default 127.0.0.1).
    pub host: Option<String>,
    /// A process id (delve, lldb).
    pub pid: Option<u32>,
    /// Dart's VM-service URI.
    pub vm_service_uri: Option<String>,
    /// Pause right after attaching (debugpy does not suspend on attach by itself).
    pub suspend: bool,
}

struct Inner {
    session: Option<Session>,
    /// Breakpoints by absolute file, kept across sessions and sent at every launch.
    breakpoints: BTreeMap<PathBuf, Vec<u64>>,
    /// What the adapter said about them last.
    results: BTreeMap<PathBuf, Vec<BreakpointResult>>,
    /// How the last session ended, for `status`.
    last_end: Option<String>,
    /// The last session's output, for `output` after it ended.
    last_output: Option<String>,
}

/// One run's debug supervisor. Cheap to share.
pub struct DebugSupervisor {
    run: Weak<Run>,
    config: DebugConfig,
    table: AdapterTable,
    resolver: Resolver,
    inner: tokio::sync::Mutex<Inner>,
    next_id: AtomicU64,
    me: Weak<DebugSupervisor>,
}

impl DebugSupervisor {
    /// A supervisor for `run` with `config`.
    pub fn new(run: &Arc<Run>, config: DebugConfig) -> Result<Arc<Self>, ToolError> {
        let table = AdapterTable::from_config(&config)?;
        Ok(Arc::new_cyclic(|me| DebugSupervisor {
            run: Arc::downgrade(run),
            config,
            table,
            resolver: Resolver::new(),
            inner: tokio::sync::Mutex::new(Inner {
                session: None,
                breakpoints: BTreeMap::new(),
                results: BTreeMap::new(),
                last_end: None,
                last_output: None,
            }),
            next_id: AtomicU64::new(1),
            me: me.clone(),
        }))
    }

    /// The configuration in force.
    pub fn config(&self) -> &DebugConfig {
        &self.config
    }

    fn run(&self) -> Result<Arc<Run>, ToolError> {
        self.run
            .upgrade()
            .ok_or_else(|| ToolError::rejected("this run is closed; start a new one"))
    }

    fn bounds(&self) -> Bounds {
        Bounds {
            request: Duration::from_secs(self.config.request_timeout_seconds.max(1)),
            startup: Duration::from_secs(self.config.startup_timeout_seconds.max(1)),
        }
    }

    fn wait_bound(&self, timeout_seconds: Option<u64>) -> Duration {
        Duration::from_secs(
            timeout_seconds
                .unwrap_or(self.config.wait_seconds)
                .clamp(1, 600),
        )
    }

    // ----- adapters / doctor -------------------------------------------------------------

    /// Each adapter: usable here or not, and which half of the conjunction is missing.
    pub async fn adapters(&self) -> Result<ToolOutput, ToolError> {
        let run = self.run()?;
        let root = run.root().to_path_buf();
        let mut lines = Vec::new();
        let mut entries = Vec::new();
        for spec in self.table.specs() {
            let hit = scan_marker(&root, &spec.markers);
            let project = hit
                .as_ref()
                .map(|h| h.dir.clone())
                .unwrap_or_else(|| root.clone());
            let res = self.resolver.resolve(&run, spec, &project, &root).await;
            let marker_text = match &hit {
                Some(h) => format!(
                    "root marker {} found at {}",
                    h.marker,
                    run.workspace().display(&h.dir)
                ),
                None => format!(
                    "missing root marker (none of {} in the workspace)",
                    spec.markers.join(", ")
                ),
            };
            let (state, line, binary, notes) = match (&hit, &res) {
                (
                    Some(_),
                    Resolution::Found {
                        program,
                        args,
                        origin,
                        notes,
                        ..
                    },
                ) => (
                    "usable",
                    format!(
                        "{}: usable — {marker_text}; binary {} {} (from {origin})",
                        spec.id,
                        program.display(),
                        args.join(" ")
                    ),
                    Some(program.display().to_string()),
                    notes.clone(),
                ),
                (None, Resolution::Found { program, notes, .. }) => (
                    "missing_marker",
                    format!(
                        "{}: not usable — {marker_text}; the binary would be {}",
                        spec.id,
                        program.display()
                    ),
                    Some(program.display().to_string()),
                    notes.clone(),
                ),
                (Some(_), Resolution::Missing { looked }) => (
                    "missing_binary",
                    format!(
                        "{}: not usable — missing binary ({looked}); {marker_text}",
                        spec.id
                    ),
                    None,
                    Vec::new(),
                ),
                (None, Resolution::Missing { looked }) => (
                    "missing_both",
                    format!(
                        "{}: not usable — {marker_text}, and missing binary ({looked})",
                        spec.id
                    ),
                    None,
                    Vec::new(),
                ),
            };
            lines.push(line);
            for n in &notes {
                lines.push(format!("  note: {n}"));
            }
            entries.push(json!({
                "adapter": spec.id.as_str(),
                "state": state,
                "markers": spec.markers,
                "marker_found": hit.as_ref().map(|h| run.workspace().display(&h.dir.join(&h.marker))),
                "binary": binary,
                "notes": notes,
            }));
        }
        lines.push(
            "launch picks the adapter from the program: .py → debugpy, a Go package folder or .go file → delve, \
             an ELF executable → lldb, .dart → dart (or pass `adapter`)"
                .into(),
        );
        Ok(ToolOutput::text(lines.join("\n")).with_structured(json!({"adapters": entries})))
    }

    /// `doctor` lines, from the same discovery as `adapters`.
    pub async fn doctor(&self) -> Vec<DoctorEntry> {
        let Ok(out) = self.adapters().await else {
            return Vec::new();
        };
        let entries = out
            .structured
            .as_ref()
            .and_then(|v| v.get("adapters"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let lines: Vec<&str> = out
            .text
            .lines()
            .filter(|l| !l.starts_with("  note") && !l.starts_with("launch picks"))
            .collect();
        entries
            .iter()
            .zip(lines)
            .map(|(e, line)| DoctorEntry {
                family: "debug".into(),
                resource: format!(
                    "{}: {}",
                    e["adapter"].as_str().unwrap_or("?"),
                    e["binary"].as_str().unwrap_or("-")
                ),
                ok: e["state"] == "usable",
                detail: line
                    .split_once(" — ")
                    .map(|(_, d)| d.to_string())
                    .unwrap_or_else(|| line.to_string()),
            })
            .collect()
    }

    // ----- session lifecycle -------------------------------------------------------------

    /// Checks the live session: expired → terminated and cleared; adapter crashed →
    /// cleared with an error. Returns whether a session (possibly ended) remains.
    async fn check_session(&self, inner: &mut Inner) -> Result<(), ToolError> {
        let Some(s) = inner.session.as_mut() else {
            return Ok(());
        };
        if Instant::now() >= s.deadline {
            let note = self.expiry_note(s);
            self.clear(inner, note.clone()).await;
            return Ok(());
        }
        let phase = s.client.phase();
        let exited = s.adapter_exit();
        if phase == Phase::AdapterGone || (exited.is_some() && phase != Phase::Terminated) {
            let err = self.crash_error(s, None);
            self.clear(inner, err.to_string()).await;
            return Err(err);
        }
        Ok(())
    }

    fn expiry_note(&self, session: &Session) -> String {
        format!(
            "the {} session ({}) expired: it reached its hard TTL of {} and was terminated; launch again to debug more",
            session.adapter,
            session.target,
            report::human(Duration::from_secs(self.config.session_ttl_seconds))
        )
    }

    fn crash_error(&self, session: &mut Session, failed: Option<&Error>) -> ToolError {
        let status = session.adapter_exit();
        let stderr = session.adapter_stderr(6);
        let what = match (failed, status) {
            (Some(e @ Error::Timeout { .. }), _) => format!("stopped answering ({e})"),
            (_, Some(st)) => format!("exited unexpectedly ({st})"),
            _ => "closed its connection unexpectedly".to_string(),
        };
        let mut msg = format!(
            "the debug adapter {} {what}; the session ({}) was terminated and cleared, its processes killed",
            session.adapter, session.target
        );
        if !stderr.trim().is_empty() {
            msg.push_str(&format!(
                ". Last adapter stderr:\n{}",
                cut_text(&stderr, 1500)
            ));
        }
        msg.push_str("\nLaunch again to start a new session (breakpoints are kept).");
        if matches!(failed, Some(Error::Timeout { .. })) {
            ToolError::timed_out(msg)
        } else {
            ToolError::not_available(msg)
        }
    }

    async fn clear(&self, inner: &mut Inner, note: String) {
        if let Some(mut s) = inner.session.take() {
            inner.last_output = s.client.with(|st| st.output.to_text());
            s.teardown().await;
        }
        inner.last_end = Some(note);
    }

    /// Turns a failed DAP exchange into the model's error, clearing the session when the
    /// adapter is gone or hung.
    async fn fail(&self, inner: &mut Inner, e: Error) -> ToolError {
        let gone = inner
            .session
            .as_ref()
            .map(|s| s.client.phase() == Phase::AdapterGone)
            .unwrap_or(true);
        if e.is_fatal() || gone {
            let err = match inner.session.as_mut() {
                Some(s) => self.crash_error(s, Some(&e)),
                None => ToolError::not_available(e.to_string()),
            };
            self.clear(inner, err.to_string()).await;
            return err;
        }
        match e {
            Error::Failed { .. } => ToolError::rejected(e.to_string()),
            other => ToolError::internal(other.to_string()),
        }
    }

    fn live_rejection(session: &Session) -> ToolError {
        ToolError::rejected(format!(
            "a debug session is already running ({}, {}, started {} ago); one session per conversation — \
             call `terminate` first, then launch or attach again",
            session.adapter,
            session.target,
            report::human(session.started.elapsed())
        ))
    }

    /// Makes room for a new session: rejects when one lives; clears one whose debuggee ended.
    async fn make_room(&self, inner: &mut Inner) -> Result<(), ToolError> {
        // A crashed session is cleared by check_session; its error is stale for a new launch.
        let _ = self.check_session(inner).await;
        if let Some(s) = inner.session.as_ref() {
            if s.client.phase() == Phase::Terminated {
                self.clear(
                    inner,
                    "the previous session's program had ended; it was cleared for the new one"
                        .into(),
                )
                .await;
            } else {
                return Err(Self::live_rejection(s));
            }
        }
        Ok(())
    }

    fn arm_ttl(&self, id: u64) {
        let me = self.me.clone();
        let ttl = Duration::from_secs(self.config.session_ttl_seconds);
        tokio::spawn(async move {
            tokio::time::sleep(ttl).await;
            let Some(sup) = me.upgrade() else { return };
            let mut inner = sup.inner.lock().await;
            if inner.session.as_ref().map(|s| s.id) == Some(id) {
                let note = inner
                    .session
                    .as_ref()
                    .map(|s| sup.expiry_note(s))
                    .unwrap_or_default();
                sup.clear(&mut inner, note).await;
            }
        });
    }

    /// Starts `program` under its adapter, stopping at the breakpoints.
    pub async fn launch(
        &self,
        program: &str,
        args: Vec<String>,
        adapter: Option<AdapterId>,
        timeout_seconds: Option<u64>,
    ) -> Result<ToolOutput, ToolError> {
        let run = self.run()?;
        let path = run.workspace().resolve(program)?;
        if !path.exists() {
            return Err(ToolError::invalid(
                "program",
                format!("`{program}` does not exist"),
            ));
        }
        let adapter = match adapter {
            Some(a) => a,
            None => adapter_for_program(&path)
                .map_err(|why| ToolError::invalid("program", format!("`{program}`: {why}")))?,
        };
        let mut inner = self.inner.lock().await;
        self.make_room(&mut inner).await?;
        let start_dir = if path.is_dir() {
            path.clone()
        } else {
            path.parent()
                .map(|p| p.to_path_buf())
                .unwrap_or_else(|| run.root().to_path_buf())
        };
        let spec = self.table.spec(adapter);
        let hit = find_marker(&start_dir, &spec.markers, run.root());
        let project = hit
            .as_ref()
            .map(|h| h.dir.clone())
            .unwrap_or_else(|| run.root().to_path_buf());
        let res = self
            .resolver
            .resolve(&run, spec, &project, run.root())
            .await;
        let shown = run.workspace().display(&path);
        let (program_path, adapter_args, debuggee_python) = match (&hit, res) {
            (
                Some(_),
                Resolution::Found {
                    program,
                    args,
                    debuggee_python,
                    ..
                },
            ) => (program, args, debuggee_python),
            (Some(h), Resolution::Missing { looked }) => {
                return Err(ToolError::not_available(format!(
                    "the {adapter} adapter cannot start for {shown}: missing binary — {looked} (root marker {} found at {})",
                    h.marker,
                    run.workspace().display(&h.dir)
                )));
            }
            (None, found_or_not) => {
                let bin = match found_or_not {
                    Resolution::Found { program, .. } => {
                        format!("the binary resolved at {}", program.display())
                    }
                    Resolution::Missing { looked } => format!("and missing binary — {looked}"),
                };
                return Err(ToolError::not_available(format!(
                    "the {adapter} adapter cannot start for {shown}: missing root marker — no folder from {} up to the \
                     workspace root holds one of {} ({bin}); create one of those files at the project root, or set \
                     [debug.adapters.{adapter}].markers in agent-tools.toml",
                    run.workspace().display(&start_dir),
                    spec.markers.join(", ")
                )));
            }
        };
        let plan = StartPlan {
            adapter,
            adapter_program: program_path,
            adapter_args,
            project_dir: project,
            debuggee_python,
            kind: StartKind::Launch {
                program: path.clone(),
                args: args.clone(),
            },
            scratch_dir: run.state_dir()?,
        };
        let target = if args.is_empty() {
            format!("launch {shown}")
        } else {
            format!("launch {shown} {}", args.join(" "))
        };
        self.start(&run, &mut inner, plan, target, timeout_seconds, false)
            .await
    }

    /// Attaches to a running debuggee.
    pub async fn attach(
        &self,
        t: AttachTarget,
        timeout_seconds: Option<u64>,
    ) -> Result<ToolOutput, ToolError> {
        let run = self.run()?;
        let adapter = match (t.adapter, t.port, t.pid, &t.vm_service_uri) {
            (Some(a), ..) => a,
            (None, Some(_), _, _) => AdapterId::Debugpy,
            (None, None, _, Some(_)) => AdapterId::Dart,
            (None, None, Some(_), None) => {
                return Err(ToolError::invalid(
                    "adapter",
                    "attaching by `pid` needs `adapter` (delve or lldb)",
                ));
            }
            (None, None, None, None) => {
                return Err(ToolError::invalid_args(
                    "attach needs `port` (debugpy started with `python -m debugpy --listen PORT`), `pid` (delve, lldb) \
                     or `vm_service_uri` (dart)",
                ));
            }
        };
        match adapter {
            AdapterId::Debugpy if t.port.is_none() => {
                return Err(ToolError::invalid(
                    "port",
                    "debugpy attaches to the port given to `python -m debugpy --listen`",
                ));
            }
            AdapterId::Delve | AdapterId::Lldb if t.pid.is_none() => {
                return Err(ToolError::invalid(
                    "pid",
                    format!("{adapter} attaches to a process id"),
                ));
            }
            AdapterId::Dart if t.vm_service_uri.is_none() => {
                return Err(ToolError::invalid(
                    "vm_service_uri",
                    "dart attaches to the VM-service URI the program printed",
                ));
            }
            _ => {}
        }
        let mut inner = self.inner.lock().await;
        self.make_room(&mut inner).await?;
        let spec = self.table.spec(adapter);
        let root = run.root().to_path_buf();
        let hit = scan_marker(&root, &spec.markers);
        let project = hit
            .as_ref()
            .map(|h| h.dir.clone())
            .unwrap_or_else(|| root.clone());
        let res = self.resolver.resolve(&run, spec, &project, &root).await;
        let (program, args, python) = match (&hit, res) {
            (
                Some(_),
                Resolution::Found {
                    program,
                    args,
                    debuggee_python,
                    ..
                },
            ) => (program, args, debuggee_python),
            (Some(h), Resolution::Missing { looked }) => {
                return Err(ToolError::not_available(format!(
                    "the {adapter} adapter cannot start: missing binary — {looked} (root marker {} found at {})",
                    h.marker,
                    run.workspace().display(&h.dir)
                )));
            }
            (None, r) => {
                let bin = match r {
                    Resolution::Found { program, .. } => {
                        format!("the binary resolved at {}", program.display())
                    }
                    Resolution::Missing { looked } => format!("and missing binary — {looked}"),
                };
                return Err(ToolError::not_available(format!(
                    "the {adapter} adapter cannot start: missing root marker (none of {} in the workspace; {bin})",
                    spec.markers.join(", ")
                )));
            }
        };
        let host = t.host.clone().unwrap_or_else(|| "127.0.0.1".into());
        let target = match (t.port, t.pid, &t.vm_service_uri) {
            (Some(p), _, _) => format!("attach {host}:{p}"),
            (_, Some(pid), _) => format!("attach pid {pid}"),
            (_, _, Some(u)) => format!("attach {u}"),
            _ => "attach".into(),
        };
        let plan = StartPlan {
            adapter,
            adapter_program: program,
            adapter_args: args,
            project_dir: project,
            debuggee_python: python,
            kind: StartKind::Attach {
                port: t.port,
                host,
                pid: t.pid,
                vm_service_uri: t.vm_service_uri.clone(),
            },
            scratch_dir: run.state_dir()?,
        };
        self.start(&run, &mut inner, plan, target, timeout_seconds, t.suspend)
            .await
    }

    async fn start(
        &self,
        run: &Arc<Run>,
        inner: &mut Inner,
        plan: StartPlan,
        target: String,
        timeout_seconds: Option<u64>,
        suspend: bool,
    ) -> Result<ToolOutput, ToolError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let attached = matches!(plan.kind, StartKind::Attach { .. });
        let ttl = Duration::from_secs(self.config.session_ttl_seconds);
        let breakpoints = inner.breakpoints.clone();
        let (session, results) =
            Session::start(run, id, plan, target, ttl, self.bounds(), &breakpoints).await?;
        inner.results = results;
        inner.last_end = None;
        inner.last_output = None;
        inner.session = Some(session);
        self.arm_ttl(id);
        let mut head = Vec::new();
        if let Some(s) = inner.session.as_ref() {
            head.push(format!(
                "started: {} ({}); hard TTL {}",
                s.target,
                s.adapter,
                report::human(ttl)
            ));
        }
        let bps = self.breakpoint_summary(inner);
        if !bps.is_empty() {
            head.push(format!(
                "breakpoints applied (set with `breakpoints`, kept until `terminate`):\n{bps}"
            ));
        }
        if attached {
            if suspend {
                return self.pause_inner(inner, None, head).await;
            }
            // debugpy does not suspend on attach; catch a breakpoint that hits at once.
            let bound = Duration::from_millis(500);
            return self.wait_and_report(inner, bound, head, true).await;
        }
        let bound = self.wait_bound(timeout_seconds);
        self.wait_and_report(inner, bound, head, false).await
    }

    /// Waits for the next stop (or end) and reports it, prefixed by `head`.
    async fn wait_and_report(
        &self,
        inner: &mut Inner,
        bound: Duration,
        mut head: Vec<String>,
        attached_quick: bool,
    ) -> Result<ToolOutput, ToolError> {
        let Some(s) = inner.session.as_mut() else {
            return Err(ToolError::internal("the session vanished"));
        };
        let outcome = s.wait_for_stop(bound).await;
        match outcome {
            WaitOutcome::Stopped(stop) => {
                let (text, structured) = match self.describe_stop(s, stop).await {
                    Ok(v) => v,
                    Err(e) => return Err(self.fail(inner, e).await),
                };
                head.push(text);
                Ok(ToolOutput::text(head.join("\n")).with_structured(structured))
            }
            WaitOutcome::StillRunning => {
                let tail = s.client.with(|st| st.output.to_text()).unwrap_or_default();
                let mut text = if attached_quick {
                    "attached; the program is running (breakpoints are set). `continue` waits for the next stop, \
                     `pause` stops it where it is."
                        .to_string()
                } else {
                    format!(
                        "still running after {} (no stop yet). `pause` stops it where it is, `continue` keeps waiting, \
                         `output` shows what it printed.",
                        report::human(bound)
                    )
                };
                if let Some(t) = report::output_tail(&tail) {
                    text.push_str(&format!("\noutput so far:\n{t}"));
                }
                head.push(text);
                Ok(ToolOutput::text(head.join("\n")).with_structured(json!({"state": "running"})))
            }
            WaitOutcome::Terminated { exit_code } => {
                let tail = s.client.with(|st| st.output.to_text()).unwrap_or_default();
                let mut text = match exit_code {
                    Some(c) => format!("terminated: the program exited with code {c}"),
                    None => "terminated: the program ended (the adapter reported no exit code)"
                        .to_string(),
                };
                if let Some(t) = report::output_tail(&tail) {
                    text.push_str(&format!("\noutput:\n{t}"));
                }
                text.push_str("\n(`launch` starts it again; breakpoints are kept)");
                head.push(text);
                Ok(ToolOutput::text(head.join("\n")).with_structured(json!({
                    "state": "terminated", "exit_code": exit_code, "output_tail": report::output_tail(&tail),
                })))
            }
            WaitOutcome::AdapterGone => {
                let err = self.crash_error(s, None);
                self.clear(inner, err.to_string()).await;
                Err(err)
            }
        }
    }

    async fn describe_stop(
        &self,
        s: &mut Session,
        stop: StopEvent,
    ) -> Result<(String, Value), Error> {
        let run = self.run().map_err(|e| Error::Other(e.to_string()))?;
        let ws = run.workspace();
        let reason = normalise_reason(&stop.raw_reason, &stop.hit_breakpoint_ids, s.requested);
        let thread = match stop.thread_id {
            Some(t) => t,
            None => s.thread(None).await?,
        };
        s.last_thread = Some(thread);
        let trace = s.stack(thread, STOP_FRAMES as u64 + 1).await?;
        let top = trace.stack_frames.first();
        let mut text = String::from("stopped: ");
        text.push_str(&reason);
        if reason != stop.raw_reason {
            text.push_str(&format!(" (adapter said \"{}\")", stop.raw_reason));
        }
        let mut exception = None;
        if reason == "exception" {
            exception = match s.exception_info(thread).await {
                Some(e) => Some(e),
                None => stop.text.clone().or(stop.description.clone()),
            };
        }
        if let Some(f) = top {
            text.push_str(&format!(" in {}", f.name));
            if let Some(loc) = report::frame_location(ws, f) {
                text.push_str(&format!(" at {loc}"));
            }
        }
        text.push_str(&format!(" (thread {thread})"));
        if let Some(e) = &exception {
            text.push_str(&format!("\nexception: {}", cut_text(e, VALUE_CAP)));
        }
        let src = top.and_then(report::source_line);
        if let (Some(f), Some(l)) = (top, &src) {
            text.push_str(&format!("\n{:>5} | {l}", f.line));
        }
        let total = frames_total(&trace, STOP_FRAMES);
        text.push_str("\nframes:");
        for (i, f) in trace.stack_frames.iter().take(STOP_FRAMES).enumerate() {
            text.push_str(&format!("\n  {}", report::frame_line(ws, i, f)));
        }
        if total > STOP_FRAMES {
            text.push_str(&format!(
                "\n  … {} more not shown (`stack` lists up to {STACK_CAP})",
                total - STOP_FRAMES
            ));
        }
        let structured = json!({
            "state": "stopped",
            "reason": reason,
            "adapter_reason": stop.raw_reason,
            "thread_id": thread,
            "exception": exception,
            "location": top.map(|f| report::frame_json(ws, f)),
            "source_line": src,
            "frames": trace.stack_frames.iter().take(STOP_FRAMES).map(|f| report::frame_json(ws, f)).collect::<Vec<_>>(),
        });
        Ok((text, structured))
    }

    // ----- operations on a session -------------------------------------------------------

    async fn require(&self, inner: &mut Inner) -> Result<(), ToolError> {
        self.check_session(inner).await?;
        if inner.session.is_none() {
            let why = inner
                .last_end
                .as_ref()
                .map(|n| format!(" (the last one ended: {n})"))
                .unwrap_or_default();
            return Err(ToolError::rejected(format!(
                "no debug session is running{why}; start one with `launch` (or `attach`)"
            )));
        }
        Ok(())
    }

    fn require_stopped(session: &Session) -> Result<(), ToolError> {
        match session.client.phase() {
            Phase::Stopped(_) => Ok(()),
            Phase::Running | Phase::Starting => Err(ToolError::rejected(
                "the program is running; `pause` it first (or `continue` to wait for the next stop)",
            )),
            Phase::Terminated => Err(ToolError::rejected(
                "the program has ended; `launch` starts it again (`output` shows what it printed)",
            )),
            Phase::AdapterGone => Err(ToolError::not_available("the adapter is gone")),
        }
    }

    /// `continue` or a step.
    pub async fn resume(
        &self,
        op: Resume,
        thread_id: Option<u64>,
        timeout_seconds: Option<u64>,
    ) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        self.require(&mut inner).await?;
        let bound = self.wait_bound(timeout_seconds);
        let Some(s) = inner.session.as_mut() else {
            return Err(ToolError::internal("no session"));
        };
        let phase = s.client.phase();
        if op == Resume::Continue && matches!(phase, Phase::Running | Phase::Starting) {
            // Already running (an earlier wait ran out): keep waiting.
            return self
                .wait_and_report(
                    &mut inner,
                    bound,
                    vec!["(it was already running; waited again)".into()],
                    false,
                )
                .await;
        }
        Self::require_stopped(s)?;
        let thread = match s.thread(thread_id).await {
            Ok(t) => t,
            Err(e) => return Err(self.fail(&mut inner, e).await),
        };
        if let Err(e) = s.resume(op, thread).await {
            return Err(self.fail(&mut inner, e).await);
        }
        self.wait_and_report(&mut inner, bound, Vec::new(), false)
            .await
    }

    /// `pause`.
    pub async fn pause(&self, thread_id: Option<u64>) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        self.require(&mut inner).await?;
        self.pause_inner(&mut inner, thread_id, Vec::new()).await
    }

    async fn pause_inner(
        &self,
        inner: &mut Inner,
        thread_id: Option<u64>,
        mut head: Vec<String>,
    ) -> Result<ToolOutput, ToolError> {
        let bound = self.bounds().request;
        let Some(s) = inner.session.as_mut() else {
            return Err(ToolError::internal("no session"));
        };
        match s.client.phase() {
            Phase::Stopped(_) => {
                head.push("(it was already stopped)".into());
                return self.wait_and_report(inner, bound, head, false).await;
            }
            Phase::Terminated => {
                return Err(Self::require_stopped(s)
                    .err()
                    .unwrap_or_else(|| ToolError::rejected("ended")));
            }
            _ => {}
        }
        let thread = match s.thread(thread_id).await {
            Ok(t) => t,
            Err(e) => return Err(self.fail(inner, e).await),
        };
        if let Err(e) = s.pause(thread).await {
            return Err(self.fail(inner, e).await);
        }
        let out = self.wait_and_report(inner, bound, head, false).await?;
        if out.structured.as_ref().and_then(|v| v.get("state")) == Some(&json!("running")) {
            return Err(ToolError::timed_out(format!(
                "the adapter accepted `pause` but the program did not stop within {}; try `pause` again or `terminate`",
                report::human(bound)
            )));
        }
        Ok(out)
    }

    /// `status`.
    pub async fn status(&self) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        let crash = self.check_session(&mut inner).await.err();
        let mut lines = Vec::new();
        let mut structured = json!({});
        match inner.session.as_ref() {
            None => {
                lines.push("no debug session is running".to_string());
                structured["state"] = json!("none");
                if let Some(n) = crash.map(|e| e.to_string()).or(inner.last_end.clone()) {
                    lines.push(format!("last session: {n}"));
                    structured["last_end"] = json!(n);
                    if n.contains("expired") {
                        structured["state"] = json!("expired");
                    }
                }
            }
            Some(s) => {
                let left = s.deadline.saturating_duration_since(Instant::now());
                lines.push(format!(
                    "session: {} ({}), running for {}, hard TTL ends in {}",
                    s.target,
                    s.adapter,
                    report::human(s.started.elapsed()),
                    report::human(left)
                ));
                let phase = s.client.phase();
                let (state, line) = match &phase {
                    Phase::Stopped(stop) => (
                        "stopped",
                        format!(
                            "stopped: {} (thread {})",
                            normalise_reason(
                                &stop.raw_reason,
                                &stop.hit_breakpoint_ids,
                                s.requested
                            ),
                            stop.thread_id
                                .map(|t| t.to_string())
                                .unwrap_or_else(|| "?".into())
                        ),
                    ),
                    Phase::Running | Phase::Starting => ("running", "running".to_string()),
                    Phase::Terminated => (
                        "terminated",
                        match s.client.with(|x| x.exit_code).flatten() {
                            Some(c) => format!("the program ended with exit code {c}"),
                            None => "the program ended".into(),
                        },
                    ),
                    Phase::AdapterGone => ("adapter_gone", "the adapter is gone".into()),
                };
                lines.push(line);
                structured = json!({"state": state, "adapter": s.adapter.as_str(), "target": s.target,
                    "ttl_left_s": left.as_secs(), "elapsed_s": s.started.elapsed().as_secs(),
                    "adapter_pid": s.adapter_pid(), "debuggee_pid": s.client.with(|x| x.debuggee_pid).flatten()});
            }
        }
        let bps = self.breakpoint_summary(&inner);
        if !bps.is_empty() {
            lines.push(format!("breakpoints:\n{bps}"));
        }
        if let Some(s) = inner.session.as_mut()
            && matches!(s.client.phase(), Phase::Stopped(_))
        {
            let run = self.run()?;
            if let Ok(thread) = s.thread(None).await
                && let Ok(trace) = s.stack(thread, 1).await
                && let Some(f) = trace.stack_frames.first()
            {
                lines.push(format!("at {}", report::frame_line(run.workspace(), 0, f)));
                structured["location"] = report::frame_json(run.workspace(), f);
            }
        }
        Ok(ToolOutput::text(lines.join("\n")).with_structured(structured))
    }

    /// `terminate`: ends the session and kills the adapter and the debuggee. The breakpoints
    /// go with it unless `keep_breakpoints`: an agent that terminates is done with this
    /// debugging, and breakpoints silently carried into an unrelated later launch would stop
    /// it in surprising places.
    pub async fn terminate(&self, keep_breakpoints: bool) -> Result<ToolOutput, ToolError> {
        let mut inner = self.inner.lock().await;
        let crashed = self.check_session(&mut inner).await.err();
        let breakpoints = inner.breakpoints.values().map(Vec::len).sum::<usize>();
        let files = inner.breakpoints.len();
        let bp_note = match (breakpoints, keep_breakpoints) {
            (0, _) => String::new(),
            (n, true) => format!("; {n} breakpoint(s) in {files} file(s) kept for the next launch"),
            (n, false) => {
                inner.breakpoints.clear();
                inner.results.clear();
                format!(
                    "; {n} breakpoint(s) in {files} file(s) cleared (pass keep_breakpoints: true to keep them)"
                )
            }
        };
        let structured = |terminated: bool| {
            json!({
                "terminated": terminated,
                "breakpoints_cleared": if keep_breakpoints { 0 } else { breakpoints },
                "breakpoints_kept": if keep_breakpoints { breakpoints } else { 0 },
            })
        };
        let Some(s) = inner.session.as_ref() else {
            let mut text = "no debug session to terminate".to_string();
            if let Some(e) = crashed {
                text.push_str(&format!(" ({e})"));
            }
            text.push_str(&bp_note);
            return Ok(ToolOutput::text(text).with_structured(structured(false)));
        };
        let what = format!("{} ({})", s.target, s.adapter);
        let attached = s.attached;
        self.clear(&mut inner, format!("{what} was terminated on request"))
            .await;
        let mut text = if attached {
            format!(
                "terminated the session {what}: the adapter was stopped and the debuggee detached (it was not ours to kill)"
            )
        } else {
            format!("terminated the session {what}: the adapter and the debuggee were stopped")
        };
        text.push_str(&bp_note);
        Ok(ToolOutput::text(text).with_structured(structured(true)))
    }

    /// Ends the session at run close (bounded by the run's close hook limit).
    pub async fn shutdown(&self) {
        let mut inner = self.inner.lock().await;
        if inner.session.is_some() {
            self.clear(&mut inner, "the run closed".into()).await;
        }
    }
}

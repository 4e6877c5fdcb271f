//! The debug-session supervisor: one session per conversation (per run), a hard TTL, and the
//! session's life: resume, pause, status, terminate. Breakpoints are kept across a program's
//! end or an adapter failure and cleared by `terminate` unless the caller keeps them.
//! Starting a session (launch/attach planning) lives in `start`, rendering stops in
//! `render`, inspection of a stopped program in `inspect`, the breakpoint store in
//! `breakpoints`, how breakpoints follow the run's edits in `follow_edits`, the
//! `adapters`/`doctor` listing in `listing`.
//!
//! Rules it enforces: a second `launch`/`attach` while a session lives is rejected (never a
//! silent replacement); a session past its TTL is terminated and `status` says it expired;
//! an adapter that crashes or stops answering gets a clear error and a cleared session, with
//! its processes killed. A session whose debuggee has already ended does not count as
//! living: the next `launch` clears it and starts afresh.

mod breakpoints;
mod follow_edits;
pub use breakpoints::BreakpointRequest;
pub use follow_edits::BreakpointsFollowEdits;
mod inspect;
mod listing;
mod render;
mod start;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde_json::json;
use tools_core::text::cut_text;
use tools_core::{Run, ToolError, ToolOutput};

use crate::adapters::{AdapterId, AdapterTable, Resolver};
use crate::config::DebugConfig;
use crate::error::Error;
use crate::protocol::Phase;
use crate::report;
use crate::session::{Bounds, BreakpointResult, BreakpointSpec, Resume, Session, normalise_reason};

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
    /// Breakpoints by absolute file, sent at every launch; cleared by `terminate` unless kept.
    breakpoints: BTreeMap<PathBuf, Vec<BreakpointSpec>>,
    /// Each file's text when its breakpoints were last placed: what a later write is
    /// compared with to move them (see `follow_edits`).
    snapshots: BTreeMap<PathBuf, String>,
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
                snapshots: BTreeMap::new(),
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
                inner.snapshots.clear();
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

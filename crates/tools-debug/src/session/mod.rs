//! One live debug session: the adapter process, its DAP client, the start-up sequence and
//! the operations on a running debuggee.
//!
//! Start-up order (what editors' users taught the debugger MCP servers the hard way):
//! `initialize` → `launch`/`attach` **sent without awaiting** → on `initialized`, the
//! breakpoints and exception filters → `configurationDone` → then await the launch response
//! and the first stop, each with a bounded wait. A debuggee that exits at once may take the
//! `configurationDone` response with it: a closed stream there counts as completion.
//!
//! Every wait is bounded: continue and the steps return "still running" after their bound so
//! that a later `pause` can get in (the registry serialises `debug` calls).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use dap_types::requests as rq;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::{Run, ToolError};

use crate::adapters::AdapterId;
use crate::error::{Error, Result};
use crate::protocol::{BreakpointState, DapClient, Phase, StopEvent, wait_pending};

/// What the caller asked the debuggee to do last, to normalise the reason of the next stop
/// (some adapters report a pause as "exception" or "step").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// Run (launch, continue).
    Run,
    /// A step.
    Step,
    /// A pause.
    Pause,
}

/// The stop reason in our words: `breakpoint`, `step`, `pause`, `exception`, `entry`, or the
/// adapter's own word when it is none of those.
pub fn normalise_reason(raw: &str, hit_breakpoints: &[u64], requested: Requested) -> String {
    let raw_l = raw.to_ascii_lowercase();
    if raw_l.contains("breakpoint") || !hit_breakpoints.is_empty() {
        return "breakpoint".into();
    }
    match requested {
        Requested::Pause => return "pause".into(),
        Requested::Step if matches!(raw_l.as_str(), "step" | "pause" | "goto" | "unknown" | "") => {
            return "step".into();
        }
        _ => {}
    }
    match raw_l.as_str() {
        "step" | "goto" => "step".into(),
        "pause" => "pause".into(),
        "entry" => "entry".into(),
        "exception" | "signal" | "panic" => "exception".into(),
        _ => raw.to_string(),
    }
}

/// How to start a session.
#[derive(Debug, Clone)]
pub enum StartKind {
    /// Start `program` under the adapter.
    Launch {
        /// The program (script, package folder, executable), absolute.
        program: PathBuf,
        /// Its arguments.
        args: Vec<String>,
    },
    /// Connect to a running debuggee.
    Attach {
        /// debugpy (`--listen`) port; Dart uses `vm_service_uri` instead.
        port: Option<u16>,
        /// Host of `port`, default 127.0.0.1.
        host: String,
        /// Process id (delve, lldb).
        pid: Option<u32>,
        /// Dart VM-service URI.
        vm_service_uri: Option<String>,
    },
}

/// Everything needed to start an adapter for one session.
#[derive(Debug, Clone)]
pub struct StartPlan {
    /// Which adapter.
    pub adapter: AdapterId,
    /// The resolved program of the adapter.
    pub adapter_program: PathBuf,
    /// Its arguments.
    pub adapter_args: Vec<String>,
    /// The project folder (marker folder): the adapter's working directory.
    pub project_dir: PathBuf,
    /// For debugpy: the interpreter of the debuggee.
    pub debuggee_python: Option<PathBuf>,
    /// Launch or attach.
    pub kind: StartKind,
    /// Where a delve build may put its binary (outside the user's tree).
    pub scratch_dir: PathBuf,
}

/// Bounds of one session.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// One ordinary request.
    pub request: Duration,
    /// Adapter start-up up to `initialized` and the launch response.
    pub startup: Duration,
}

/// A breakpoint line as requested and as the adapter bound it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakpointResult {
    /// The line asked for.
    pub requested_line: u64,
    /// What the adapter said (None before the adapter saw it).
    pub state: Option<BreakpointState>,
}

/// One live session.
pub struct Session {
    /// A number unique within the run (ties the TTL timer to this session).
    pub id: u64,
    /// Which adapter.
    pub adapter: AdapterId,
    /// What was started, for messages (`launch app.py`, `attach 127.0.0.1:5678`).
    pub target: String,
    /// Whether we attached (the debuggee is not ours to kill).
    pub attached: bool,
    /// When it started.
    pub started: Instant,
    /// When its hard TTL ends.
    pub deadline: Instant,
    /// The adapter process (none when we connected to an adapter the debuggee runs itself,
    /// as `python -m debugpy --listen` does).
    pub process: Option<ChildProcess>,
    /// The DAP client.
    pub client: DapClient,
    caps: dap_types::Capabilities,
    /// What we asked for last (normalises the next stop reason).
    pub requested: Requested,
    /// The thread of the last stop.
    pub last_thread: Option<u64>,
    scratch_binary: Option<PathBuf>,
}

/// The result of waiting for the debuggee after starting or resuming it.
#[derive(Debug, Clone)]
pub enum WaitOutcome {
    /// Stopped.
    Stopped(StopEvent),
    /// Still running when the bound ran out.
    StillRunning,
    /// The debuggee ended.
    Terminated {
        /// Its exit code, when the adapter reported one.
        exit_code: Option<i64>,
    },
    /// The adapter's connection closed without a termination.
    AdapterGone,
}

async fn spawn_adapter(
    run: &Arc<Run>,
    plan: &StartPlan,
    bounds: Bounds,
) -> std::result::Result<(Option<ChildProcess>, DapClient), ToolError> {
    if let (
        AdapterId::Debugpy,
        StartKind::Attach {
            port: Some(port),
            host,
            ..
        },
    ) = (plan.adapter, &plan.kind)
    {
        // `python -m debugpy --listen` runs its own adapter on that port: connect to it.
        let addr = format!("{host}:{port}");
        let stream = tokio::time::timeout(bounds.request, tokio::net::TcpStream::connect(&addr))
            .await
            .map_err(|_| ToolError::timed_out(format!("connecting to {addr} took longer than {}s", bounds.request.as_secs())))?
            .map_err(|e| {
                ToolError::not_available(format!(
                    "nothing accepts connections at {addr} ({e}); start the program with `python -m debugpy --listen {addr} script.py`"
                ))
            })?;
        let _ = stream.set_nodelay(true);
        let (r, w) = stream.into_split();
        return Ok((None, DapClient::start(r, w, run, bounds.request)));
    }
    let mut cmd = tools_core::child_command(run, &plan.adapter_program);
    cmd.args(&plan.adapter_args).current_dir(&plan.project_dir);
    if plan.adapter.uses_tcp() {
        // delve speaks DAP over TCP only; it must start in the module's folder, and it
        // prints the address it listens on.
        cmd.arg("--listen=127.0.0.1:0");
        let mut proc = ChildProcess::spawn(run, cmd, Pipes::StdoutOnly)?;
        let Some(stdout) = proc.take_stdout() else {
            return Err(ToolError::internal("the adapter's stdout was not piped"));
        };
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let addr = tokio::time::timeout(bounds.request.max(Duration::from_secs(20)), async {
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some((_, rest)) = line.split_once("listening at:") {
                    return Some(rest.trim().to_string());
                }
            }
            None
        })
        .await
        .ok()
        .flatten();
        let Some(addr) = addr else {
            let err = proc.stderr().last_lines(10);
            proc.kill();
            return Err(ToolError::not_available(format!(
                "{} did not say where it listens (expected `DAP server listening at: HOST:PORT` on its stdout); stderr: {}",
                plan.adapter_program.display(),
                if err.trim().is_empty() {
                    "(empty)".into()
                } else {
                    err
                }
            )));
        };
        let stream = tokio::net::TcpStream::connect(&addr).await.map_err(|e| {
            ToolError::not_available(format!("cannot connect to the adapter at {addr}: {e}"))
        })?;
        let _ = stream.set_nodelay(true);
        let (r, w) = stream.into_split();
        let client = DapClient::start(r, w, run, bounds.request);
        // Whatever else it prints (the debuggee's output in some modes) is kept.
        let sink = client.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                sink.update(|s| {
                    s.output.push(line.as_bytes());
                    s.output.push(b"\n");
                });
            }
        });
        Ok((Some(proc), client))
    } else {
        let mut proc = ChildProcess::spawn(run, cmd, Pipes::StdinStdout)?;
        let (Some(stdin), Some(stdout)) = (proc.take_stdin(), proc.take_stdout()) else {
            return Err(ToolError::internal("the adapter's stdio was not piped"));
        };
        let client = DapClient::start(stdout, stdin, run, bounds.request);
        Ok((Some(proc), client))
    }
}

fn source_of(path: &Path) -> dap_types::Source {
    dap_types::Source {
        name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        path: Some(path.display().to_string()),
        source_reference: None,
        presentation_hint: None,
        origin: None,
        sources: None,
        adapter_data: None,
        checksums: None,
    }
}

fn launch_arguments(plan: &StartPlan, scratch_binary: &Option<PathBuf>) -> Value {
    match &plan.kind {
        StartKind::Launch { program, args } => {
            let cwd = plan.project_dir.display().to_string();
            match plan.adapter {
                AdapterId::Debugpy => {
                    let mut arguments = json!({
                        "name": "agent-tools", "type": "python", "request": "launch",
                        "program": program.display().to_string(), "args": args, "cwd": cwd,
                        "console": "internalConsole", "justMyCode": true, "stopOnEntry": false,
                        "redirectOutput": true, "showReturnValue": true,
                    });
                    // Only a project interpreter other than the adapter's needs naming.
                    if let Some(py) = plan
                        .debuggee_python
                        .as_ref()
                        .filter(|p| **p != plan.adapter_program)
                    {
                        arguments["python"] = json!([py.display().to_string()]);
                    }
                    arguments
                }
                AdapterId::Lldb => json!({
                    "name": "agent-tools", "type": "lldb-dap", "request": "launch",
                    "program": program.display().to_string(), "args": args, "cwd": cwd,
                    "stopOnEntry": false, "runInTerminal": false,
                }),
                AdapterId::Delve => {
                    let mut arguments = json!({
                        "name": "agent-tools", "type": "go", "request": "launch", "mode": "debug",
                        "program": program.display().to_string(), "args": args, "cwd": cwd,
                        "stopOnEntry": false,
                    });
                    if let Some(out) = scratch_binary {
                        arguments["output"] = json!(out.display().to_string());
                    }
                    arguments
                }
                AdapterId::Dart => json!({
                    "name": "agent-tools", "type": "dart", "request": "launch",
                    "program": program.display().to_string(), "args": args, "cwd": cwd,
                    "console": "debugConsole",
                }),
            }
        }
        StartKind::Attach {
            port,
            host,
            pid,
            vm_service_uri,
        } => match plan.adapter {
            // We talk to the debuggee's own adapter (`--listen`): no `connect` needed.
            AdapterId::Debugpy => {
                let _ = (host, port);
                json!({"name": "agent-tools", "type": "python", "request": "attach", "justMyCode": true})
            }
            AdapterId::Lldb => json!({
                "name": "agent-tools", "type": "lldb-dap", "request": "attach", "pid": pid,
            }),
            AdapterId::Delve => json!({
                "name": "agent-tools", "type": "go", "request": "attach", "mode": "local",
                "processId": pid,
            }),
            AdapterId::Dart => json!({
                "name": "agent-tools", "type": "dart", "request": "attach",
                "vmServiceUri": vm_service_uri, "cwd": plan.project_dir.display().to_string(),
            }),
        },
    }
}

impl Session {
    /// Starts the adapter and the debuggee, sends the breakpoints in the configuration phase
    /// and returns the session with the breakpoint results. Waiting for the first stop is
    /// the caller's next step ([`Session::wait_for_stop`]).
    pub async fn start(
        run: &Arc<Run>,
        id: u64,
        plan: StartPlan,
        target: String,
        ttl: Duration,
        bounds: Bounds,
        breakpoints: &BTreeMap<PathBuf, Vec<u64>>,
    ) -> std::result::Result<(Session, BTreeMap<PathBuf, Vec<BreakpointResult>>), ToolError> {
        let scratch_binary = (plan.adapter == AdapterId::Delve
            && matches!(plan.kind, StartKind::Launch { .. }))
        .then(|| plan.scratch_dir.join(format!("debug-bin-{id}")));
        let (process, client) = spawn_adapter(run, &plan, bounds).await?;
        let mut session = Session {
            id,
            adapter: plan.adapter,
            target,
            attached: matches!(plan.kind, StartKind::Attach { .. }),
            started: Instant::now(),
            deadline: Instant::now() + ttl,
            process,
            client,
            caps: dap_types::Capabilities::default(),
            requested: Requested::Run,
            last_thread: None,
            scratch_binary: scratch_binary.clone(),
        };
        match session
            .configure(&plan, bounds, breakpoints, &scratch_binary)
            .await
        {
            Ok(results) => Ok((session, results)),
            Err(e) => {
                let detail = session.failure_detail(&e).await;
                session.teardown().await;
                Err(detail)
            }
        }
    }

    async fn configure(
        &mut self,
        plan: &StartPlan,
        bounds: Bounds,
        breakpoints: &BTreeMap<PathBuf, Vec<u64>>,
        scratch_binary: &Option<PathBuf>,
    ) -> Result<BTreeMap<PathBuf, Vec<BreakpointResult>>> {
        let init = dap_types::InitializeRequestArguments {
            client_id: Some("agent-tools".into()),
            client_name: Some("agent-tools".into()),
            adapter_id: self.adapter.as_str().into(),
            locale: Some("en-US".into()),
            lines_start_at1: Some(true),
            columns_start_at1: Some(true),
            path_format: Some(dap_types::InitializeRequestArgumentsPathFormat::Path),
            supports_variable_type: Some(true),
            supports_variable_paging: Some(false),
            supports_run_in_terminal_request: Some(true),
            supports_memory_references: None,
            supports_progress_reporting: None,
            supports_invalidated_event: None,
            supports_memory_event: None,
            supports_args_can_be_interpreted_by_shell: None,
            supports_start_debugging_request: None,
        };
        match self
            .client
            .request_within::<rq::Initialize>(&init, bounds.startup)
            .await
        {
            Ok(caps) => self.caps = caps,
            // Capabilities of an unexpected shape are not a reason to fail: go on with none.
            Err(Error::Other(e)) => tracing::debug!("capabilities not understood: {e}"),
            Err(e) => return Err(e),
        }
        let args = dap_types::LaunchRequestArguments {
            raw: launch_arguments(plan, scratch_binary),
        };
        let pending = if self.attached {
            let attach_args = dap_types::AttachRequestArguments { raw: args.raw };
            self.client
                .start_request::<rq::Attach>(&attach_args)
                .await?
        } else {
            self.client.start_request::<rq::Launch>(&args).await?
        };
        let command = if self.attached { "attach" } else { "launch" };
        let (tx, mut launch_rx) = tokio::sync::oneshot::channel();
        let startup = bounds.startup;
        tokio::spawn(async move {
            let launch_response = wait_pending::<rq::Launch>(pending, startup).await;
            let _ = tx.send(launch_response);
        });
        // Wait for `initialized`; a failing launch response (a build error, a bad program)
        // may come first and ends the start-up with the adapter's message.
        let mut launch_result: Option<Result<Value>> = None;
        let init_wait = self.client.wait_for(bounds.startup, |s| {
            s.initialized || s.phase == Phase::AdapterGone || s.phase == Phase::Terminated
        });
        tokio::pin!(init_wait);
        loop {
            tokio::select! {
                ok = &mut init_wait => {
                    if !ok {
                        return Err(Error::Timeout { command: "initialized event".into(), timeout: bounds.startup });
                    }
                    break;
                }
                received = &mut launch_rx, if launch_result.is_none() => {
                    let launch_response = received.unwrap_or(Err(Error::StreamClosed));
                    match &launch_response {
                        Ok(resp) if resp.get("success").and_then(Value::as_bool) != Some(true) => {
                            return Err(Error::Failed { command: command.into(), message: crate::protocol::failure_message(resp) });
                        }
                        Err(e) => return Err(e.clone()),
                        Ok(_) => {}
                    }
                    launch_result = Some(launch_response);
                }
            }
        }
        if self.client.phase() == Phase::AdapterGone {
            return Err(Error::StreamClosed);
        }
        // The whole configuration is pipelined: every request is sent before any response
        // is awaited (the adapter handles them in order), which saves a round trip each.
        let mut sent = Vec::new();
        for (file, lines) in breakpoints {
            let args = breakpoints_arguments(file, lines);
            sent.push((
                file,
                lines,
                self.client
                    .start_request::<rq::SetBreakpoints>(&args)
                    .await?,
            ));
        }
        let mut filters: Vec<String> = self
            .caps
            .exception_breakpoint_filters
            .iter()
            .flatten()
            .filter(|f| f.default == Some(true))
            .map(|f| f.filter.clone())
            .collect();
        if self.adapter == AdapterId::Debugpy && !filters.iter().any(|f| f == "uncaught") {
            filters.push("uncaught".into());
        }
        let exceptions = if !filters.is_empty() || self.caps.exception_breakpoint_filters.is_some()
        {
            let exception_args = dap_types::SetExceptionBreakpointsArguments {
                filters,
                filter_options: None,
                exception_options: None,
            };
            Some(
                self.client
                    .start_request::<rq::SetExceptionBreakpoints>(&exception_args)
                    .await?,
            )
        } else {
            None
        };
        let done = if self.caps.supports_configuration_done_request != Some(false) {
            Some(
                self.client
                    .start_request::<rq::ConfigurationDone>(&dap_types::ConfigurationDoneArguments)
                    .await?,
            )
        } else {
            None
        };
        let timeout = bounds.request;
        let mut results = BTreeMap::new();
        for (file, lines, pending) in sent {
            let decoded = match wait_pending::<rq::SetBreakpoints>(pending, timeout).await {
                Ok(resp) => crate::protocol::decode_response::<rq::SetBreakpoints>(resp),
                Err(e) => Err(e),
            };
            match decoded {
                Ok(resp) => {
                    results.insert(file.clone(), breakpoint_results(lines, &resp));
                }
                Err(e) if e.is_fatal() => return Err(e),
                Err(e) => {
                    tracing::debug!("setBreakpoints for {} failed: {e}", file.display());
                    results.insert(
                        file.clone(),
                        lines
                            .iter()
                            .map(|l| BreakpointResult {
                                requested_line: *l,
                                state: Some(BreakpointState {
                                    id: None,
                                    verified: false,
                                    line: None,
                                    message: Some(e.to_string()),
                                }),
                            })
                            .collect(),
                    );
                }
            }
        }
        if let Some(pending) = exceptions {
            match wait_pending::<rq::SetExceptionBreakpoints>(pending, timeout).await {
                Ok(_) => {}
                Err(e) if e.is_fatal() => return Err(e),
                Err(e) => tracing::debug!("setExceptionBreakpoints: {e}"),
            }
        }
        if let Some(pending) = done {
            match wait_pending::<rq::ConfigurationDone>(pending, timeout).await {
                // A debuggee that exits at once may take the response with it.
                Ok(resp) => {
                    crate::protocol::decode_response::<rq::ConfigurationDone>(resp)?;
                }
                Err(Error::StreamClosed) => {}
                Err(e) => return Err(e),
            }
        }
        self.client.update(|s| {
            if s.phase == Phase::Starting {
                s.phase = Phase::Running;
            }
        });
        let launch_response = match launch_result {
            Some(response) => response,
            None => launch_rx.await.unwrap_or(Err(Error::StreamClosed)),
        };
        match launch_response {
            Ok(resp) if resp.get("success").and_then(Value::as_bool) != Some(true) => {
                Err(Error::Failed {
                    command: command.into(),
                    message: crate::protocol::failure_message(&resp),
                })
            }
            Ok(_) | Err(Error::StreamClosed) => Ok(results),
            Err(e) => Err(e),
        }
    }

    /// The model-facing error for a failed start, with the adapter's stderr tail.
    async fn failure_detail(&mut self, e: &Error) -> ToolError {
        // Give a dying adapter a moment so its exit status and last words are in.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let status = self.adapter_exit();
        let stderr = self.adapter_stderr(8);
        let output = self
            .client
            .with(|s| s.output.last_lines(8))
            .unwrap_or_default();
        let mut msg = format!("{} could not start `{}`: {e}", self.adapter, self.target);
        if let Some(exit) = status {
            msg.push_str(&format!("; the adapter exited ({exit})"));
        }
        if !output.trim().is_empty() {
            msg.push_str(&format!("\noutput:\n{output}"));
        }
        if !stderr.trim().is_empty() {
            msg.push_str(&format!("\nadapter stderr:\n{stderr}"));
        }
        match e {
            Error::Timeout { .. } => ToolError::timed_out(msg),
            Error::Failed { .. } => ToolError::rejected(msg),
            _ => ToolError::not_available(msg),
        }
    }

    /// Sends the breakpoints of one file (an empty list clears it).
    pub async fn set_breakpoints(
        &self,
        file: &Path,
        lines: &[u64],
    ) -> Result<Vec<BreakpointResult>> {
        let resp = self
            .client
            .request::<rq::SetBreakpoints>(&breakpoints_arguments(file, lines))
            .await?;
        Ok(breakpoint_results(lines, &resp))
    }

    /// Waits up to `bound` for the debuggee to stop or end.
    pub async fn wait_for_stop(&mut self, bound: Duration) -> WaitOutcome {
        self.client
            .wait_for(bound, |s| {
                !matches!(s.phase, Phase::Running | Phase::Starting)
            })
            .await;
        match self.client.phase() {
            Phase::Stopped(stop) => {
                if stop.thread_id.is_some() {
                    self.last_thread = stop.thread_id;
                }
                WaitOutcome::Stopped(stop)
            }
            Phase::Terminated => {
                // `exited` normally precedes `terminated`; allow a straggler a moment.
                let quick = self
                    .client
                    .wait_for(Duration::from_millis(200), |s| s.exit_code.is_some())
                    .await;
                if !quick && !self.client.transport().is_closed() {
                    // delve tells the exit status only when the client disconnects; the
                    // program has ended, so nothing is lost by disconnecting now.
                    let args = dap_types::DisconnectArguments {
                        restart: None,
                        terminate_debuggee: Some(true),
                        suspend_debuggee: None,
                    };
                    let _ = self
                        .client
                        .request_within::<rq::Disconnect>(&args, Duration::from_secs(2))
                        .await;
                    self.client
                        .wait_for(Duration::from_millis(300), |s| s.exit_code.is_some())
                        .await;
                }
                WaitOutcome::Terminated {
                    exit_code: self.client.with(|s| s.exit_code).flatten(),
                }
            }
            Phase::AdapterGone => WaitOutcome::AdapterGone,
            Phase::Running | Phase::Starting => WaitOutcome::StillRunning,
        }
    }

    /// The thread to act on: the given one, the last stopped one, or the first thread.
    pub async fn thread(&mut self, given: Option<u64>) -> Result<u64> {
        if let Some(t) = given {
            return Ok(t);
        }
        if let Some(t) = self.last_thread {
            return Ok(t);
        }
        let threads = self.client.request::<rq::Threads>(&()).await?;
        threads
            .threads
            .first()
            .map(|t| t.id)
            .ok_or_else(|| Error::Other("the adapter reports no threads".into()))
    }

    /// Resumes with `continue` or a step, marking the debuggee running first.
    pub async fn resume(&mut self, op: Resume, thread: u64) -> Result<()> {
        self.requested = if op == Resume::Continue {
            Requested::Run
        } else {
            Requested::Step
        };
        self.client.update(|s| {
            if matches!(s.phase, Phase::Stopped(_)) {
                s.phase = Phase::Running;
            }
        });
        let answered = match op {
            Resume::Continue => self
                .client
                .request::<rq::Continue>(&dap_types::ContinueArguments {
                    thread_id: thread,
                    single_thread: None,
                })
                .await
                .map(|_| ()),
            Resume::StepOver => {
                self.client
                    .request::<rq::Next>(&dap_types::NextArguments {
                        thread_id: thread,
                        single_thread: None,
                        granularity: None,
                    })
                    .await
            }
            Resume::StepIn => {
                self.client
                    .request::<rq::StepIn>(&dap_types::StepInArguments {
                        thread_id: thread,
                        single_thread: None,
                        target_id: None,
                        granularity: None,
                    })
                    .await
            }
            Resume::StepOut => {
                self.client
                    .request::<rq::StepOut>(&dap_types::StepOutArguments {
                        thread_id: thread,
                        single_thread: None,
                        granularity: None,
                    })
                    .await
            }
        };
        if let Err(e) = &answered
            && !e.is_fatal()
        {
            // The adapter refused: the debuggee did not move.
            self.client.update(|s| {
                if s.phase == Phase::Running {
                    s.phase = Phase::Starting;
                }
            });
        }
        // A debuggee that ran to its end may close the connection with the response.
        match answered {
            Err(Error::StreamClosed) if self.client.phase() == Phase::Terminated => Ok(()),
            other => other,
        }
    }

    /// Asks the adapter to pause `thread`.
    pub async fn pause(&mut self, thread: u64) -> Result<()> {
        self.requested = Requested::Pause;
        self.client
            .request::<rq::Pause>(&dap_types::PauseArguments { thread_id: thread })
            .await
    }

    /// Frames of `thread`, up to `levels`.
    pub async fn stack(&self, thread: u64, levels: u64) -> Result<dap_types::StackTraceResponse> {
        self.client
            .request::<rq::StackTrace>(&dap_types::StackTraceArguments {
                thread_id: thread,
                start_frame: Some(0),
                levels: Some(levels),
                format: None,
            })
            .await
    }

    /// Threads.
    pub async fn threads(&self) -> Result<Vec<dap_types::Thread>> {
        Ok(self.client.request::<rq::Threads>(&()).await?.threads)
    }

    /// Scopes of a frame.
    pub async fn scopes(&self, frame_id: u64) -> Result<Vec<dap_types::Scope>> {
        Ok(self
            .client
            .request::<rq::Scopes>(&dap_types::ScopesArguments { frame_id })
            .await?
            .scopes)
    }

    /// Children of a variables reference.
    pub async fn variables(&self, reference: u64) -> Result<Vec<dap_types::Variable>> {
        Ok(self
            .client
            .request::<rq::Variables>(&dap_types::VariablesArguments {
                variables_reference: reference,
                filter: None,
                start: None,
                count: None,
                format: None,
            })
            .await?
            .variables)
    }

    /// Evaluates `expression` in `frame_id`'s scope.
    pub async fn evaluate(
        &self,
        expression: &str,
        frame_id: Option<u64>,
    ) -> Result<dap_types::EvaluateResponse> {
        // lldb-dap reads a `repl` line as a debugger command; `watch` is an expression.
        let context = if self.adapter == AdapterId::Lldb {
            dap_types::EvaluateArgumentsContext::Watch
        } else {
            dap_types::EvaluateArgumentsContext::Repl
        };
        self.client
            .request::<rq::Evaluate>(&dap_types::EvaluateArguments {
                expression: expression.to_string(),
                frame_id,
                context: Some(context),
                format: None,
            })
            .await
    }

    /// The exception's id and message when the adapter supports `exceptionInfo`.
    pub async fn exception_info(&self, thread: u64) -> Option<String> {
        if self.caps.supports_exception_info_request != Some(true) {
            return None;
        }
        let info = self
            .client
            .request::<rq::ExceptionInfo>(&dap_types::ExceptionInfoArguments { thread_id: thread })
            .await
            .ok()?;
        let mut summary = info.exception_id;
        if let Some(description) = info.description.filter(|d| !d.is_empty()) {
            summary.push_str(": ");
            summary.push_str(&description);
        }
        Some(summary)
    }

    /// Whether the adapter process has exited, and how.
    pub fn adapter_exit(&mut self) -> Option<std::process::ExitStatus> {
        self.process.as_mut().and_then(|p| p.try_status())
    }

    /// The last `n` lines the adapter wrote to stderr (empty when it is not our process).
    pub fn adapter_stderr(&self, n: usize) -> String {
        self.process
            .as_ref()
            .map(|p| p.stderr().last_lines(n))
            .unwrap_or_default()
    }

    /// The adapter's process id, when it is our process.
    pub fn adapter_pid(&self) -> Option<i32> {
        self.process.as_ref().map(|p| p.pid())
    }

    /// Ends the session: `disconnect` (terminating the debuggee unless we attached), close
    /// the pipe, a short grace, then kill the adapter's group, the debuggee and any
    /// `runInTerminal` process. Never leaves a process behind; bounded.
    pub async fn teardown(&mut self) {
        let alive = !self.client.transport().is_closed();
        if alive {
            let args = dap_types::DisconnectArguments {
                restart: None,
                terminate_debuggee: Some(!self.attached),
                suspend_debuggee: None,
            };
            // lldb-dap 19 aborts right after answering `disconnect`; the answer is enough.
            let _ = self
                .client
                .request_within::<rq::Disconnect>(&args, Duration::from_secs(3))
                .await;
            self.client.transport().close_writer().await;
        }
        if let Some(p) = self.process.as_mut() {
            let _ = p.shutdown(Duration::from_millis(500)).await;
        }
        let (pid, children) = self
            .client
            .update(|s| (s.debuggee_pid, std::mem::take(&mut s.terminal_children)))
            .unwrap_or((None, Vec::new()));
        drop(children);
        if !self.attached
            && let Some(pid) = pid
        {
            kill_debuggee(pid, self.adapter_pid().unwrap_or(0));
        }
        if let Some(bin) = &self.scratch_binary {
            let _ = std::fs::remove_file(bin);
        }
    }
}

fn breakpoints_arguments(file: &Path, lines: &[u64]) -> dap_types::SetBreakpointsArguments {
    dap_types::SetBreakpointsArguments {
        source: source_of(file),
        breakpoints: Some(
            lines
                .iter()
                .map(|l| dap_types::SourceBreakpoint {
                    line: *l,
                    column: None,
                    condition: None,
                    hit_condition: None,
                    log_message: None,
                    mode: None,
                })
                .collect(),
        ),
        lines: None,
        source_modified: None,
    }
}

fn breakpoint_results(
    lines: &[u64],
    resp: &dap_types::SetBreakpointsResponse,
) -> Vec<BreakpointResult> {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| BreakpointResult {
            requested_line: *l,
            state: resp.breakpoints.get(i).map(BreakpointState::from_dap),
        })
        .collect()
}

/// Kills a debuggee we started, if it outlived its adapter (some adapters start it in a
/// process group of its own).
fn kill_debuggee(pid: i32, adapter_pid: i32) {
    if pid <= 1 || pid == std::process::id() as i32 || pid == adapter_pid {
        return;
    }
    // SAFETY: getpgid and kill take plain integers and have no memory-safety preconditions.
    unsafe {
        let pgid = libc::getpgid(pid);
        if pgid == pid {
            libc::killpg(pgid, libc::SIGKILL);
        } else if pgid > 0 {
            libc::kill(pid, libc::SIGKILL);
        }
    }
}

/// Continue or one of the steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// `continue`.
    Continue,
    /// `next`.
    StepOver,
    /// `stepIn`.
    StepIn,
    /// `stepOut`.
    StepOut,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reasons_are_normalised() {
        assert_eq!(
            normalise_reason("function breakpoint", &[], Requested::Run),
            "breakpoint"
        );
        assert_eq!(
            normalise_reason("step", &[3], Requested::Step),
            "breakpoint"
        );
        assert_eq!(
            normalise_reason("exception", &[], Requested::Pause),
            "pause"
        );
        assert_eq!(normalise_reason("step", &[], Requested::Pause), "pause");
        assert_eq!(normalise_reason("pause", &[], Requested::Step), "step");
        assert_eq!(
            normalise_reason("exception", &[], Requested::Step),
            "exception"
        );
        assert_eq!(normalise_reason("signal", &[], Requested::Run), "exception");
        assert_eq!(normalise_reason("entry", &[], Requested::Run), "entry");
        assert_eq!(normalise_reason("goto", &[], Requested::Run), "step");
        assert_eq!(normalise_reason("trace", &[], Requested::Run), "trace");
    }
}

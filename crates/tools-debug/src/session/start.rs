//! Starting a session: the adapter process and its DAP client, the launch or attach
//! arguments per adapter, and the start-up sequence of the module doc (`initialize`, the
//! launch sent without awaiting, breakpoints and exception filters on `initialized`,
//! `configurationDone`), each wait bounded; a failed start says what the adapter printed.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dap_types::requests as rq;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::{Run, ToolError};

use crate::adapters::AdapterId;
use crate::error::{Error, Result};
use crate::protocol::{BreakpointState, DapClient, Phase, wait_pending};

use super::{
    Bounds, BreakpointResult, BreakpointSpec, Requested, Session, StartKind, StartPlan,
    breakpoint_results, breakpoints_arguments,
};

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
        breakpoints: &BTreeMap<PathBuf, Vec<BreakpointSpec>>,
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
        breakpoints: &BTreeMap<PathBuf, Vec<BreakpointSpec>>,
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
        // A breakpoint the adapter cannot honour as asked (a condition it would ignore, a
        // logpoint it would stop at) ends the start-up with the reason, before anything runs.
        if let Some(why) = breakpoints.iter().find_map(|(file, specs)| {
            super::unsupported(self.adapter.as_str(), file, specs, &self.caps)
        }) {
            return Err(Error::Failed {
                command: "setBreakpoints".into(),
                message: why,
            });
        }
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
                                requested_line: l.line,
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
}

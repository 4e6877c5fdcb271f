//! The DAP client on tools-core's [`Transport`]: typed requests over `dap-types`, with unset
//! optional fields stripped before sending (debugpy rejects `null`s), and one event pump that
//! keeps the session's shared state (where the debuggee stands, its output, its exit code)
//! and answers the adapter's reverse requests (`runInTerminal`).
//!
//! Decoding is tolerant on purpose: an event outside the type set (debugpy's
//! `debugpySockets`, …) or a field of an unexpected shape is logged and ignored, never a
//! reason to fail the session.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use dap_types::requests::Request;
use serde_json::{Value, json};
use tokio::sync::watch;
use tools_core::Run;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::text::BoundedBuffer;
use tools_core::transport::{PendingRequest, Transport, TransportError};

use crate::error::{Error, Result};

/// Removes every object member whose value is `null`, recursively: DAP optional fields are
/// omitted, not sent as `null`.
pub fn strip_nulls(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.retain(|_, x| !x.is_null());
            for x in m.values_mut() {
                strip_nulls(x);
            }
        }
        Value::Array(a) => {
            for x in a {
                strip_nulls(x);
            }
        }
        _ => {}
    }
}

/// Builds the request message for `R` with `args` (nulls stripped; no `arguments` member when
/// they serialise to nothing).
pub fn request_message<R: Request>(args: &R::Arguments) -> Result<Value> {
    let mut arguments = serde_json::to_value(args)
        .map_err(|e| Error::Other(format!("encoding {}: {e}", R::COMMAND)))?;
    strip_nulls(&mut arguments);
    let mut msg = json!({"type": "request", "command": R::COMMAND});
    if !arguments.is_null() {
        msg["arguments"] = arguments;
    }
    Ok(msg)
}

/// Decodes a response message for `R`: `success: false` becomes [`Error::Failed`] with the
/// adapter's own message.
pub fn decode_response<R: Request>(resp: Value) -> Result<R::Response> {
    if resp.get("success").and_then(Value::as_bool) != Some(true) {
        return Err(Error::Failed {
            command: R::COMMAND.to_string(),
            message: failure_message(&resp),
        });
    }
    // Responses without a body type accept no body, `null` and `{}` alike: when the body
    // does not decode, try it as absent.
    let body = resp.get("body").cloned().unwrap_or(Value::Null);
    serde_json::from_value(body)
        .or_else(|e| serde_json::from_value(Value::Null).map_err(|_| e))
        .map_err(|e| {
            Error::Other(format!(
                "the adapter's `{}` response did not decode: {e}",
                R::COMMAND
            ))
        })
}

/// The adapter's explanation of a failed response.
pub fn failure_message(resp: &Value) -> String {
    let fmt = resp
        .pointer("/body/error/format")
        .and_then(Value::as_str)
        .map(|s| {
            fill_placeholders(
                s,
                resp.pointer("/body/error/variables")
                    .and_then(Value::as_object),
            )
        });
    let msg = resp
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string);
    match (fmt, msg) {
        (Some(f), _) if !f.is_empty() => f,
        (_, Some(m)) if !m.is_empty() => m,
        _ => "no reason given".into(),
    }
}

/// Fills the `{name}` placeholders of an adapter's error `format` from its `variables`, in
/// one pass over the format: a value is never scanned again, so values that hold
/// placeholders themselves cannot make the text grow past the format plus one copy of a
/// value per placeholder. An unknown name stays as written.
fn fill_placeholders(format: &str, vars: Option<&serde_json::Map<String, Value>>) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            vars.and_then(|v| v.get(&after[..close]))
                .and_then(Value::as_str)
                .map(|v| (v, close))
        });
        match value {
            Some((v, close)) => {
                out.push_str(v);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Why and where the debuggee last stopped, as the adapter reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopEvent {
    /// The reason as the adapter sent it (`breakpoint`, `step`, `exception`, …).
    pub raw_reason: String,
    /// The stopped thread.
    pub thread_id: Option<u64>,
    /// The adapter's description, if any.
    pub description: Option<String>,
    /// Extra text (exception message), if any.
    pub text: Option<String>,
    /// Breakpoints hit.
    pub hit_breakpoint_ids: Vec<u64>,
}

/// Where the debuggee stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Not yet running (configuration phase).
    Starting,
    /// Running.
    Running,
    /// Stopped.
    Stopped(StopEvent),
    /// The debuggee ended (`terminated` event).
    Terminated,
    /// The adapter's connection closed without a `terminated` event: it crashed or was killed.
    AdapterGone,
}

/// A breakpoint as the adapter last described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BreakpointState {
    /// The adapter's id, if it gave one.
    pub id: Option<u64>,
    /// Whether the adapter bound it.
    pub verified: bool,
    /// The line it really bound to.
    pub line: Option<u64>,
    /// The adapter's reason when not verified.
    pub message: Option<String>,
}

impl BreakpointState {
    /// From a `dap-types` breakpoint.
    pub fn from_dap(b: &dap_types::Breakpoint) -> Self {
        BreakpointState {
            id: b.id,
            verified: b.verified,
            line: b.line,
            message: b.message.clone(),
        }
    }
}

/// State the event pump keeps for the session.
pub struct Shared {
    /// Where the debuggee stands.
    pub phase: Phase,
    /// Whether `initialized` arrived.
    pub initialized: bool,
    /// The exit code from `exited`.
    pub exit_code: Option<i64>,
    /// The debuggee's process id from the `process` event or `runInTerminal`.
    pub debuggee_pid: Option<i32>,
    /// The debuggee's stdout/stderr (and the adapter's important messages), bounded.
    pub output: BoundedBuffer,
    /// The adapter's own console messages (bounded): some adapters (delve) report the exit
    /// status only there.
    pub console: BoundedBuffer,
    /// Breakpoint updates from `breakpoint` events, by adapter id.
    pub breakpoint_updates: Vec<BreakpointState>,
    /// Processes started for `runInTerminal`.
    pub terminal_children: Vec<ChildProcess>,
    /// How many events were not understood (logged and ignored).
    pub ignored_events: u64,
}

/// A connection to one adapter, with its event pump.
#[derive(Clone)]
pub struct DapClient {
    transport: Transport,
    shared: Arc<Mutex<Shared>>,
    changed: Arc<watch::Sender<u64>>,
    /// Bound on one ordinary request.
    pub request_timeout: Duration,
}

impl DapClient {
    /// Starts the transport over `reader`/`writer` and the event pump. `run` is used to start
    /// `runInTerminal` processes (held weakly: the pump must not keep the run alive).
    pub fn start<R, W>(reader: R, writer: W, run: &Arc<Run>, request_timeout: Duration) -> DapClient
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let (transport, mut events) = Transport::start(reader, writer, tools_core::transport::Dap);
        let shared = Arc::new(Mutex::new(Shared {
            phase: Phase::Starting,
            initialized: false,
            exit_code: None,
            debuggee_pid: None,
            output: BoundedBuffer::new(16 * 1024, 48 * 1024),
            console: BoundedBuffer::new(2 * 1024, 8 * 1024),
            breakpoint_updates: Vec::new(),
            terminal_children: Vec::new(),
            ignored_events: 0,
        }));
        let (tx, _rx) = watch::channel(0u64);
        let changed = Arc::new(tx);
        let client = DapClient {
            transport,
            shared,
            changed,
            request_timeout,
        };
        let pump = client.clone();
        let run: Weak<Run> = Arc::downgrade(run);
        tokio::spawn(async move {
            while let Some(msg) = events.recv().await {
                pump.handle_incoming(msg, &run).await;
            }
            pump.update(|s| {
                if s.phase != Phase::Terminated {
                    s.phase = Phase::AdapterGone;
                }
            });
        });
        client
    }

    /// Applies `f` to the shared state and wakes every waiter.
    pub fn update<T>(&self, f: impl FnOnce(&mut Shared) -> T) -> Option<T> {
        let out = self.shared.lock().ok().map(|mut s| f(&mut s));
        self.changed.send_modify(|g| *g += 1);
        out
    }

    /// Reads the shared state.
    pub fn with<T>(&self, f: impl FnOnce(&Shared) -> T) -> Option<T> {
        self.shared.lock().ok().map(|s| f(&s))
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.with(|s| s.phase.clone()).unwrap_or(Phase::AdapterGone)
    }

    /// Waits until `done` says yes about the shared state, up to `timeout`. Returns whether it
    /// did.
    pub async fn wait_for(&self, timeout: Duration, mut done: impl FnMut(&Shared) -> bool) -> bool {
        let mut rx = self.changed.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if self.with(&mut done).unwrap_or(true) {
                return true;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => return self.with(&mut done).unwrap_or(true),
                Err(_) => return false,
            }
        }
    }

    /// The transport (for the benchmark's raw comparisons and for closing).
    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// Sends `R` and waits up to the request timeout.
    pub async fn request<R: Request>(&self, args: &R::Arguments) -> Result<R::Response> {
        self.request_within::<R>(args, self.request_timeout).await
    }

    /// Sends `R` and waits up to `timeout`.
    pub async fn request_within<R: Request>(
        &self,
        args: &R::Arguments,
        timeout: Duration,
    ) -> Result<R::Response> {
        let pending = self.start_request::<R>(args).await?;
        let resp = wait_pending::<R>(pending, timeout).await?;
        decode_response::<R>(resp)
    }

    /// Sends `R` without waiting (DAP's `launch` is sent, then configured, then awaited).
    pub async fn start_request<R: Request>(&self, args: &R::Arguments) -> Result<PendingRequest> {
        let msg = request_message::<R>(args)?;
        self.transport
            .start_request(msg)
            .await
            .map_err(|e| map_transport(e, R::COMMAND))
    }

    async fn handle_incoming(&self, msg: Value, run: &Weak<Run>) {
        match msg.get("type").and_then(Value::as_str) {
            Some("event") => self.handle_event(&msg),
            Some("request") => self.handle_reverse_request(&msg, run).await,
            other => {
                tracing::debug!("ignoring DAP message of type {other:?}");
                self.update(|s| s.ignored_events += 1);
            }
        }
    }

    fn handle_event(&self, msg: &Value) {
        let name = msg.get("event").and_then(Value::as_str).unwrap_or_default();
        let body = msg.get("body").cloned().unwrap_or(Value::Null);
        match name {
            "initialized" => {
                self.update(|s| s.initialized = true);
            }
            "stopped" => {
                // Read the reason from the raw JSON: the typed enum folds unknown reasons
                // into one variant and loses the adapter's word.
                let stop = StopEvent {
                    raw_reason: body
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_string(),
                    thread_id: body.get("threadId").and_then(Value::as_u64),
                    description: body
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    text: body.get("text").and_then(Value::as_str).map(str::to_string),
                    hit_breakpoint_ids: body
                        .get("hitBreakpointIds")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().filter_map(Value::as_u64).collect())
                        .unwrap_or_default(),
                };
                self.update(|s| {
                    if s.phase != Phase::Terminated {
                        s.phase = Phase::Stopped(stop);
                    }
                });
            }
            "continued" => {
                self.update(|s| {
                    if matches!(s.phase, Phase::Stopped(_)) {
                        s.phase = Phase::Running;
                    }
                });
            }
            "exited" => {
                // Some adapters report signals as negative codes; the typed body is unsigned.
                let code = body.get("exitCode").and_then(Value::as_i64);
                self.update(|s| s.exit_code = code);
            }
            "terminated" => {
                self.update(|s| {
                    s.phase = Phase::Terminated;
                    if s.exit_code.is_none() {
                        s.exit_code = exit_status_in(&s.console.to_text());
                    }
                });
            }
            "output" => match serde_json::from_value::<dap_types::OutputEvent>(body) {
                Ok(ev) => {
                    use dap_types::OutputEventCategory as C;
                    let keep = matches!(
                        ev.category,
                        Some(C::Stdout) | Some(C::Stderr) | Some(C::Important)
                    );
                    if keep {
                        self.update(|s| s.output.push(ev.output.as_bytes()));
                    } else if matches!(ev.category, None | Some(C::Console)) {
                        self.update(|s| {
                            s.console.push(ev.output.as_bytes());
                            if s.exit_code.is_none() {
                                s.exit_code = exit_status_in(&ev.output);
                            }
                        });
                    }
                }
                Err(e) => self.ignore(name, &e.to_string()),
            },
            "process" => {
                let pid = body
                    .get("systemProcessId")
                    .and_then(Value::as_i64)
                    .map(|p| p as i32);
                if pid.is_some() {
                    self.update(|s| s.debuggee_pid = pid);
                }
            }
            "breakpoint" => match serde_json::from_value::<dap_types::BreakpointEvent>(body) {
                Ok(ev) => {
                    let breakpoint = BreakpointState::from_dap(&ev.breakpoint);
                    self.update(|s| {
                        if let Some(id) = breakpoint.id {
                            s.breakpoint_updates.retain(|x| x.id != Some(id));
                        }
                        s.breakpoint_updates.push(breakpoint);
                        if s.breakpoint_updates.len() > 1000 {
                            s.breakpoint_updates.remove(0);
                        }
                    });
                }
                Err(e) => self.ignore(name, &e.to_string()),
            },
            "thread" | "module" | "loadedSource" | "capabilities" | "progressStart"
            | "progressUpdate" | "progressEnd" | "invalidated" | "memory" => {}
            other => self.ignore(other, "not a standard event"),
        }
    }

    fn ignore(&self, event: &str, why: &str) {
        tracing::debug!("ignoring DAP event `{event}`: {why}");
        self.update(|s| s.ignored_events += 1);
    }

    async fn handle_reverse_request(&self, msg: &Value, run: &Weak<Run>) {
        let seq = msg.get("seq").cloned().unwrap_or(Value::from(0));
        let command = msg
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let reply = if command == dap_types::requests::RunInTerminal::COMMAND {
            match self.run_in_terminal(msg, run) {
                Ok(pid) => {
                    json!({"type":"response","request_seq":seq,"success":true,"command":command,
                    "body":{"processId": pid}})
                }
                Err(why) => {
                    json!({"type":"response","request_seq":seq,"success":false,"command":command,
                    "message": why})
                }
            }
        } else {
            json!({"type":"response","request_seq":seq,"success":false,"command":command,
                "message": format!("the client does not support `{command}`")})
        };
        if let Err(e) = self.transport.send(reply).await {
            tracing::debug!("could not answer reverse request `{command}`: {e}");
        }
    }

    /// Runs the command the adapter asked for ourselves (there is no terminal): stdin from
    /// `/dev/null`, stdout and stderr into the session's output buffer.
    fn run_in_terminal(&self, msg: &Value, run: &Weak<Run>) -> std::result::Result<u32, String> {
        let args: dap_types::RunInTerminalRequestArguments =
            serde_json::from_value(msg.get("arguments").cloned().unwrap_or(Value::Null))
                .map_err(|e| format!("bad runInTerminal arguments: {e}"))?;
        let Some(run) = run.upgrade() else {
            return Err("the run is closing".into());
        };
        let Some((program, rest)) = args.args.split_first() else {
            return Err("runInTerminal without a command".into());
        };
        let mut cmd = tools_core::child_command(&run, program);
        cmd.args(rest).current_dir(&args.cwd);
        if let Some(Value::Object(env)) = &args.env {
            for (k, v) in env {
                match v {
                    Value::String(s) => {
                        cmd.env(k, s);
                    }
                    Value::Null => {
                        cmd.env_remove(k);
                    }
                    other => {
                        cmd.env(k, other.to_string());
                    }
                }
            }
        }
        let sink = self.clone();
        let mut child =
            ChildProcess::spawn_with_stderr_tee(&run, cmd, Pipes::StdoutOnly, move |bytes| {
                sink.update(|s| s.output.push(bytes));
            })
            .map_err(|e| e.to_string())?;
        if let Some(mut out) = child.take_stdout() {
            let sink = self.clone();
            tokio::spawn(async move {
                use tokio::io::AsyncReadExt;
                let mut buf = vec![0u8; 8192];
                while let Ok(n) = out.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let chunk = buf[..n].to_vec();
                    sink.update(|s| s.output.push(&chunk));
                }
            });
        }
        let pid = child.pid();
        self.update(|s| {
            s.debuggee_pid = Some(pid);
            s.terminal_children.push(child);
        });
        Ok(pid as u32)
    }
}

/// The exit status in an adapter's console message such as delve's
/// `Process 123 has exited with status 0`.
pub fn exit_status_in(console: &str) -> Option<i64> {
    let (_, rest) = console.rsplit_once("exited with status ")?;
    let digits: String = rest
        .chars()
        .enumerate()
        .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
        .map(|(_, c)| c)
        .collect();
    digits.parse().ok()
}

/// Waits for a pending request's response, mapping transport errors.
pub async fn wait_pending<R: Request>(pending: PendingRequest, timeout: Duration) -> Result<Value> {
    pending
        .wait(timeout)
        .await
        .map_err(|e| map_transport(e, R::COMMAND))
}

fn map_transport(e: TransportError, command: &str) -> Error {
    match e {
        TransportError::Timeout(t) => Error::Timeout {
            command: command.to_string(),
            timeout: t,
        },
        TransportError::StreamClosed => Error::StreamClosed,
        TransportError::Other(m) => Error::Other(m),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dap_types::requests::{ConfigurationDone, SetBreakpoints, StackTrace, Threads};

    #[test]
    fn unset_optional_fields_are_not_sent() {
        let args = dap_types::SetBreakpointsArguments {
            source: dap_types::Source {
                name: None,
                path: Some("/x/a.py".into()),
                source_reference: None,
                presentation_hint: None,
                origin: None,
                sources: None,
                adapter_data: None,
                checksums: None,
            },
            breakpoints: Some(vec![dap_types::SourceBreakpoint {
                line: 3,
                column: None,
                condition: None,
                hit_condition: None,
                log_message: None,
                mode: None,
            }]),
            lines: None,
            source_modified: None,
        };
        let msg = request_message::<SetBreakpoints>(&args).unwrap();
        assert_eq!(
            msg,
            json!({"type":"request","command":"setBreakpoints",
                   "arguments":{"source":{"path":"/x/a.py"},"breakpoints":[{"line":3}]}})
        );
        let msg = request_message::<Threads>(&()).unwrap();
        assert_eq!(msg, json!({"type":"request","command":"threads"}));
    }

    #[test]
    fn exit_status_from_console_text() {
        assert_eq!(
            exit_status_in("Process 4242 has exited with status 3\n"),
            Some(3)
        );
        assert_eq!(exit_status_in("has exited with status -1"), Some(-1));
        assert_eq!(exit_status_in("Detaching"), None);
    }

    #[test]
    fn error_placeholders_are_filled_once_and_never_from_a_value() {
        let resp = |format: &str, vars: Value| {
            json!({"type":"response","success":false,"command":"evaluate",
                "body":{"error":{"id":1,"format":format,"variables":vars}}})
        };
        // Each value holds the next placeholder twice: filled again and again, 40 of them
        // would be 2^40 bytes.
        let mut vars = serde_json::Map::new();
        for i in 0..40 {
            vars.insert(
                format!("v{i:02}"),
                json!(format!("{{v{:02}}}{{v{:02}}}", i + 1, i + 1)),
            );
        }
        assert_eq!(
            failure_message(&resp("at {v00}", Value::Object(vars))),
            "at {v01}{v01}"
        );
        assert_eq!(
            failure_message(&resp("{a} and {b} and {", json!({"a": "x", "c": "z"}))),
            "x and {b} and {"
        );
    }

    #[test]
    fn responses_decode_tolerantly() {
        // A body-less response type accepts `{}` bodies too.
        let ok = json!({"type":"response","request_seq":1,"success":true,"command":"configurationDone","body":{}});
        assert!(decode_response::<ConfigurationDone>(ok).is_ok());
        let failed = json!({"type":"response","request_seq":2,"success":false,"command":"stackTrace",
            "message":"x","body":{"error":{"id":1,"format":"Thread {tid} is running","variables":{"tid":"7"}}}});
        assert_eq!(
            decode_response::<StackTrace>(failed).unwrap_err(),
            Error::Failed {
                command: "stackTrace".into(),
                message: "Thread 7 is running".into()
            }
        );
    }

    #[tokio::test]
    async fn custom_events_are_tolerated_and_state_follows_events() {
        use tools_core::framing::write_frame_async;
        let dir = tempfile::tempdir().unwrap();
        let run = Run::new(tools_core::RunOptions {
            root: dir.path().into(),
            conversation_id: "t".into(),
            config: tools_core::Config::empty(),
            trusted: false,
        })
        .unwrap();
        let (ours, theirs) = tools_core::transport::memory_pair();
        let (r, w) = tokio::io::split(ours);
        let client = DapClient::start(r, w, &run, Duration::from_secs(5));
        let (_tr, mut tw) = tokio::io::split(theirs);
        for ev in [
            json!({"seq":0,"type":"event","event":"debugpySockets","body":{"sockets":[{"weird":null}]}}),
            json!({"seq":0,"type":"event","event":"output","body":{"category":"stdout","output":"hello\n"}}),
            json!({"seq":0,"type":"event","event":"output","body":{"category":"telemetry","output":"ptvsd"}}),
            json!({"seq":0,"type":"event","event":"stopped","body":{"reason":"function breakpoint","threadId":4}}),
        ] {
            write_frame_async(&mut tw, &serde_json::to_vec(&ev).unwrap())
                .await
                .unwrap();
        }
        assert!(
            client
                .wait_for(Duration::from_secs(5), |s| matches!(
                    s.phase,
                    Phase::Stopped(_)
                ))
                .await
        );
        match client.phase() {
            Phase::Stopped(s) => {
                assert_eq!(s.raw_reason, "function breakpoint");
                assert_eq!(s.thread_id, Some(4));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(client.with(|s| s.output.to_text()).unwrap(), "hello\n");
        assert_eq!(client.with(|s| s.ignored_events).unwrap(), 1);
        for ev in [
            json!({"seq":0,"type":"event","event":"exited","body":{"exitCode":-9}}),
            json!({"seq":0,"type":"event","event":"terminated"}),
        ] {
            write_frame_async(&mut tw, &serde_json::to_vec(&ev).unwrap())
                .await
                .unwrap();
        }
        assert!(
            client
                .wait_for(Duration::from_secs(5), |s| s.phase == Phase::Terminated)
                .await
        );
        assert_eq!(client.with(|s| s.exit_code).unwrap(), Some(-9));
        // Closing the adapter's side after `terminated` keeps the phase.
        drop(tw);
        drop(_tr);
        client.transport().closed().await;
        assert!(!client.wait_for(Duration::from_secs(1), |_| false).await);
        assert_eq!(client.phase(), Phase::Terminated);
    }

    #[tokio::test]
    async fn a_closed_connection_without_terminated_means_the_adapter_is_gone() {
        let dir = tempfile::tempdir().unwrap();
        let run = Run::new(tools_core::RunOptions {
            root: dir.path().into(),
            conversation_id: "t".into(),
            config: tools_core::Config::empty(),
            trusted: false,
        })
        .unwrap();
        let (ours, theirs) = tools_core::transport::memory_pair();
        let (r, w) = tokio::io::split(ours);
        let client = DapClient::start(r, w, &run, Duration::from_secs(5));
        drop(theirs);
        assert!(
            client
                .wait_for(Duration::from_secs(5), |s| s.phase == Phase::AdapterGone)
                .await
        );
        let err = client.request::<Threads>(&()).await.unwrap_err();
        assert_eq!(err, Error::StreamClosed);
    }
}

//! One kernel: an interpreter child process running a driver shipped in this crate, and the
//! loop that runs one cell on it.
//!
//! The channel is two pipes on fds 3 and 4 of the child, installed between `fork` and `exec`;
//! fds 1 and 2 of the child are two more pipes whose read ends the driver itself holds (fds
//! 5 and 6), so a cell's prints, its C code's writes and its subprocesses' output all come
//! back as the cell's streams, in order with everything else, while the protocol stays
//! clean. The child's original stderr (tools-core's bounded log) moves to fd 7: the driver's
//! own diagnostics and Python's fault handler write there, and a crash report quotes it.
//!
//! The cell loop enforces the idle budget: no output and no bridge call for the budget →
//! interrupt (SIGINT to the kernel's process group), then kill after a grace period. The
//! budget is paused while a bridge call is pending.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use tokio::io::BufReader;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;
use tools_core::process::{ChildProcess, Pipes};
use tools_core::{CallCtx, Run, ToolError, ToolOutput};

use crate::Language;
use crate::cell::{BridgeCall, CellEnd, CellRun, CellSettings, MAX_BRIDGE_LISTED};
use crate::discover::Interpreter;
use crate::protocol::{FromKernel, ToKernel};

const PYTHON_DRIVER: &str = include_str!("drivers/python_kernel.py");
const JS_DRIVER: &str = include_str!("drivers/js_kernel.js");
/// Runs the driver (argv[1]) in its own namespace, so `__main__` stays the user's.
const PYTHON_BOOT: &str = "exec(compile(__import__('sys').argv.pop(1), '<eval-kernel>', 'exec'), {'__name__': '_eval_kernel'})";

/// A running kernel.
pub struct KernelProcess {
    /// Its language.
    pub language: Language,
    /// The interpreter it runs and why that one.
    pub interpreter: Interpreter,
    /// The interpreter's version, as the driver reported it.
    pub version: String,
    /// The executable actually running (`sys.executable` / `process.execPath`).
    pub executable: String,
    child: ChildProcess,
    commands: pipe::Sender,
    messages: mpsc::Receiver<Result<FromKernel, String>>,
    reader: tokio::task::JoinHandle<()>,
    next_id: u64,
    /// The request id of a cell whose `done` has not arrived.
    in_flight: Option<u64>,
    /// Bridged calls of that cell still waiting for their answer.
    bridge_waiting: Vec<u64>,
}

impl std::fmt::Debug for KernelProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelProcess")
            .field("language", &self.language)
            .field("pid", &self.child.pid())
            .finish_non_exhaustive()
    }
}

impl Drop for KernelProcess {
    fn drop(&mut self) {
        self.reader.abort();
        self.child.kill();
    }
}

fn os_pipe() -> Result<(OwnedFd, OwnedFd), ToolError> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` is a valid array of two ints for pipe2 to fill.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if rc != 0 {
        return Err(ToolError::internal(format!(
            "cannot create a pipe for the kernel: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: pipe2 succeeded, so both fds are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

fn set_nonblocking(fd: &OwnedFd) -> Result<(), ToolError> {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl on an open fd we own.
    let ok = unsafe {
        let flags = libc::fcntl(raw, libc::F_GETFL);
        flags >= 0 && libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) == 0
    };
    if ok {
        Ok(())
    } else {
        Err(ToolError::internal(format!(
            "cannot configure the kernel's output pipe: {}",
            std::io::Error::last_os_error()
        )))
    }
}

/// Runs in the child between fork and exec: only async-signal-safe calls (fcntl, dup2).
/// `sources` are, in order, what becomes fds 3, 4, 5, 6, 1 and 2; the child's stderr moves
/// to fd 7 first.
fn install_fds(sources: &[RawFd; 6]) -> std::io::Result<()> {
    const TARGETS: [RawFd; 6] = [3, 4, 5, 6, 1, 2];
    let check = |rc: libc::c_int| {
        if rc < 0 {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(rc)
        }
    };
    // Park every source above the targets first, so no dup2 clobbers a source that happens
    // to sit on a target number. The parked copies are close-on-exec.
    // SAFETY: fcntl/dup2 on fds that are open in this (child) process.
    unsafe {
        let log = check(libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 20))?;
        let mut parked = [0 as RawFd; 6];
        for (slot, src) in parked.iter_mut().zip(sources) {
            *slot = check(libc::fcntl(*src, libc::F_DUPFD_CLOEXEC, 20))?;
        }
        check(libc::dup2(log, 7))?;
        for (src, target) in parked.iter().zip(TARGETS) {
            check(libc::dup2(*src, target))?;
        }
    }
    Ok(())
}

fn describe_exit(status: Option<std::process::ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) => {
            if let Some(code) = s.code() {
                format!("exited with code {code}")
            } else if let Some(sig) = s.signal() {
                let name = match sig {
                    libc::SIGSEGV => " (SIGSEGV: a segmentation fault)",
                    libc::SIGABRT => " (SIGABRT: the interpreter aborted)",
                    libc::SIGKILL => " (SIGKILL: killed from outside, perhaps out of memory)",
                    libc::SIGBUS => " (SIGBUS)",
                    libc::SIGFPE => " (SIGFPE)",
                    libc::SIGTERM => " (SIGTERM)",
                    _ => "",
                };
                format!("was killed by signal {sig}{name}")
            } else {
                format!("stopped ({s})")
            }
        }
        None => "stopped answering".into(),
    }
}

type BridgeFuture = BoxFuture<'static, (u64, String, Result<ToolOutput, ToolError>)>;

enum StopReason {
    Idle(Duration),
    Cancel,
}

impl KernelProcess {
    /// Starts a kernel and waits for its driver to say it is ready.
    pub async fn start(
        run: &Arc<Run>,
        language: Language,
        interpreter: Interpreter,
        start_timeout: Duration,
    ) -> Result<Self, ToolError> {
        let (cmd_r, cmd_w) = os_pipe()?;
        let (msg_r, msg_w) = os_pipe()?;
        let (out_r, out_w) = os_pipe()?;
        let (err_r, err_w) = os_pipe()?;
        set_nonblocking(&out_r)?;
        set_nonblocking(&err_r)?;
        let mut cmd = tools_core::child_command(run, &interpreter.path);
        match language {
            Language::Python => {
                cmd.arg("-c").arg(PYTHON_BOOT).arg(PYTHON_DRIVER);
            }
            Language::Javascript => {
                // --expose-internals: the driver parses cells with Node's bundled parser.
                cmd.arg("--expose-internals").arg("-e").arg(JS_DRIVER);
            }
        }
        cmd.current_dir(run.root())
            .env("MPLBACKEND", "Agg")
            .env("PYTHONUNBUFFERED", "1")
            .env("AGENT_TOOLS_EVAL_ROOT", run.root())
            .env("PYTHONIOENCODING", "utf-8");
        let sources = [
            cmd_r.as_raw_fd(),
            msg_w.as_raw_fd(),
            out_r.as_raw_fd(),
            err_r.as_raw_fd(),
            out_w.as_raw_fd(),
            err_w.as_raw_fd(),
        ];
        // SAFETY: the closure only calls async-signal-safe functions (fcntl, dup2) on fds
        // that stay open until `spawn` returns (they are dropped below, after it).
        unsafe {
            cmd.pre_exec(move || install_fds(&sources));
        }
        let child = ChildProcess::spawn(run, cmd, Pipes::None).map_err(|e| {
            ToolError::not_available(format!(
                "cannot start the {} kernel with {} ({}): {e}",
                language.name(),
                interpreter.path.display(),
                interpreter.why
            ))
        })?;
        drop((cmd_r, msg_w, out_r, err_r, out_w, err_w));
        let commands = pipe::Sender::from_owned_fd(cmd_w)?;
        let receiver = pipe::Receiver::from_owned_fd(msg_r)?;
        let (tx, rx) = mpsc::channel(256);
        let reader = tokio::spawn(read_messages(receiver, tx));
        let mut kernel = KernelProcess {
            language,
            interpreter,
            version: String::new(),
            executable: String::new(),
            child,
            commands,
            messages: rx,
            reader,
            next_id: 1,
            in_flight: None,
            bridge_waiting: Vec::new(),
        };
        let ready = tokio::time::timeout(start_timeout, kernel.messages.recv()).await;
        match ready {
            Ok(Some(Ok(FromKernel::Ready {
                version,
                executable,
                language: _,
            }))) => {
                kernel.version = version;
                kernel.executable = executable;
                Ok(kernel)
            }
            Ok(Some(Ok(other))) => Err(ToolError::internal(format!(
                "the {} kernel sent {other:?} before it was ready",
                language.name()
            ))),
            Ok(Some(Err(e))) => Err(ToolError::internal(format!(
                "the {} kernel broke the protocol while starting: {e}",
                language.name()
            ))),
            Ok(None) => {
                let status = tokio::time::timeout(Duration::from_secs(2), kernel.child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err(ToolError::not_available(format!(
                    "the {} kernel ({}, {}) {} while starting{}",
                    language.name(),
                    kernel.interpreter.path.display(),
                    kernel.interpreter.why,
                    describe_exit(status),
                    log_suffix(&kernel.child.stderr().last_lines(15)),
                )))
            }
            Err(_) => Err(ToolError::timed_out(format!(
                "the {} kernel ({}) did not start within {:.0} s{}",
                language.name(),
                kernel.interpreter.path.display(),
                start_timeout.as_secs_f64(),
                log_suffix(&kernel.child.stderr().last_lines(15)),
            ))),
        }
    }

    /// The kernel's process id (also its process group).
    pub fn pid(&self) -> i32 {
        self.child.pid()
    }

    /// Whether the process is still running.
    pub fn is_alive(&mut self) -> bool {
        self.child.try_status().is_none()
    }

    async fn send(&mut self, msg: &ToKernel) -> Result<(), String> {
        let body = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        match tokio::time::timeout(
            Duration::from_secs(10),
            tools_core::framing::write_frame_async(&mut self.commands, &body),
        )
        .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the kernel stopped reading its commands".into()),
        }
    }

    /// Asks the kernel to exit, then makes sure it has (kills its group after `grace`).
    pub async fn shutdown(mut self, grace: Duration) {
        let _ = tokio::time::timeout(grace, self.send(&ToKernel::Shutdown)).await;
        self.child.shutdown(grace).await;
    }

    async fn died(&mut self) -> CellEnd {
        let status = match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(Ok(s)) => Some(s),
            _ => {
                self.child.kill();
                None
            }
        };
        // Let the stderr drain catch the last lines (a fault handler's traceback).
        tokio::time::sleep(Duration::from_millis(50)).await;
        CellEnd::Crashed {
            how: describe_exit(status),
            log: self.child.stderr().last_lines(20),
        }
    }

    /// Whether a cell is still running on the kernel (its caller went away before the
    /// cell's `done` came back).
    pub fn cell_in_flight(&self) -> bool {
        self.in_flight.is_some()
    }

    /// Ends a cell left running by a caller that went away: interrupts it, answers its
    /// bridged calls as cancelled and discards what it prints, until its `done` arrives.
    /// `Err` when it did not stop within `grace` (the kernel is then killed).
    pub async fn settle(&mut self, grace: Duration) -> Result<(), String> {
        let Some(id) = self.in_flight else {
            return Ok(());
        };
        for call in std::mem::take(&mut self.bridge_waiting) {
            let _ = self.send(&cancelled_result(call)).await;
        }
        tools_core::process::signal_group(self.child.pid(), libc::SIGINT);
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            match tokio::time::timeout_at(deadline, self.messages.recv()).await {
                Ok(Some(Ok(FromKernel::Done { id: done, .. }))) if done.is_none_or(|d| d == id) => {
                    self.in_flight = None;
                    return Ok(());
                }
                Ok(Some(Ok(FromKernel::ToolCall { id: call, .. }))) => {
                    let _ = self.send(&cancelled_result(call)).await;
                }
                Ok(Some(Ok(_))) => {}
                Ok(Some(Err(e))) => {
                    self.child.kill();
                    return Err(format!("broke the protocol ({e})"));
                }
                Ok(None) => return Err("exited".into()),
                Err(_) => {
                    self.child.kill();
                    return Err(format!(
                        "was killed: an abandoned cell did not stop within {:.1} s of the interrupt",
                        grace.as_secs_f64()
                    ));
                }
            }
        }
    }

    /// Runs one cell (magics already rewritten) under `settings`. The kernel must not have
    /// a cell in flight ([`KernelProcess::settle`] first).
    pub async fn execute(
        &mut self,
        code: String,
        cell: u64,
        ctx: &CallCtx,
        settings: &CellSettings,
    ) -> CellRun {
        let started = Instant::now();
        let mut run = CellRun::new(settings);
        let id = self.next_id;
        self.next_id += 1;
        // Stale messages from an earlier cell (output that arrived after its `done`) are
        // shown with this one, like a notebook does.
        while let Ok(msg) = self.messages.try_recv() {
            if let Ok(m) = msg {
                run.absorb(m);
            }
        }
        if let Err(e) = self
            .send(&ToKernel::Execute {
                id,
                cell,
                code,
                head: settings.head,
                tail: settings.tail,
            })
            .await
        {
            tracing::debug!("sending the cell failed: {e}");
            run.end = self.died().await;
            run.elapsed = started.elapsed();
            return run;
        }
        // Until its `done` arrives, the cell is in flight: if this future is dropped (the
        // caller went away), the next cell settles it first.
        self.in_flight = Some(id);
        let mut bridge: FuturesUnordered<BridgeFuture> = FuturesUnordered::new();
        self.bridge_waiting.clear();
        let mut last_activity = Instant::now();
        let mut stopping: Option<(Instant, StopReason)> = None;
        // After a cancel, when the interrupt follows the cancelled answers.
        let mut interrupt_at: Option<tokio::time::Instant> = None;
        let mut progress = tokio::time::interval(settings.progress_every);
        progress.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        progress.tick().await;
        let far = tokio::time::Instant::now() + Duration::from_secs(86_400 * 365);
        loop {
            let idle_deadline = tokio::time::Instant::from_std(last_activity + settings.idle);
            let grace_deadline = stopping
                .as_ref()
                .map(|(t, _)| tokio::time::Instant::from_std(*t + settings.grace))
                .unwrap_or(far);
            tokio::select! {
                // The cancel is looked at first: a bridged call that ends because of the
                // same cancel must be answered as cancelled, not with its own error.
                biased;
                _ = ctx.cancel.cancelled(), if stopping.is_none() => {
                    // Dropping the futures cancels the bridged calls themselves; the cell
                    // gets each one answered as cancelled (a ToolError it may catch), and
                    // the interrupt follows shortly, so it stops even if it catches that.
                    bridge = FuturesUnordered::new();
                    let waiting = std::mem::take(&mut self.bridge_waiting);
                    for call_id in &waiting {
                        let _ = self.send(&cancelled_result(*call_id)).await;
                    }
                    let delay = if waiting.is_empty() { Duration::ZERO } else { CANCELLED_CALL_HEAD_START };
                    interrupt_at = Some(tokio::time::Instant::now() + delay);
                    stopping = Some((Instant::now(), StopReason::Cancel));
                }
                msg = self.messages.recv() => match msg {
                    None => {
                        run.end = self.died().await;
                        break;
                    }
                    Some(Err(e)) => {
                        self.child.kill();
                        run.end = CellEnd::Crashed {
                            how: format!("broke the protocol ({e}) and was stopped"),
                            log: self.child.stderr().last_lines(20),
                        };
                        break;
                    }
                    Some(Ok(FromKernel::Done { id: done, .. })) if done.is_some_and(|d| d != id) => {
                        tracing::debug!("discarding the late completion of cell request {done:?}");
                    }
                    Some(Ok(FromKernel::Done { status, output_chars, cut_chars, .. })) => {
                        self.in_flight = None;
                        run.output_chars = output_chars;
                        run.cut_chars = cut_chars;
                        run.end = match (&stopping, status.as_str()) {
                            (Some((_, StopReason::Idle(idle))), _) => CellEnd::Interrupted { idle: *idle },
                            (Some((_, StopReason::Cancel)), _) => CellEnd::Cancelled { killed: false },
                            _ => CellEnd::Finished,
                        };
                        break;
                    }
                    Some(Ok(FromKernel::ToolCall { id: call_id, .. })) if matches!(stopping, Some((_, StopReason::Cancel))) => {
                        let _ = self.send(&cancelled_result(call_id)).await;
                    }
                    Some(Ok(FromKernel::ToolCall { id: call_id, name, args })) => {
                        last_activity = Instant::now();
                        self.bridge_waiting.push(call_id);
                        let invoker = ctx.invoker.clone();
                        let progress = ctx.progress.clone();
                        let cancel = ctx.cancel.child_token();
                        bridge.push(Box::pin(async move {
                            let res = invoker.call_cancellable(&name, args, progress, cancel).await;
                            (call_id, name, res)
                        }));
                    }
                    Some(Ok(other)) => {
                        last_activity = Instant::now();
                        run.absorb(other);
                    }
                },
                Some((call_id, name, res)) = bridge.next(), if !bridge.is_empty() => {
                    last_activity = Instant::now();
                    self.bridge_waiting.retain(|p| *p != call_id);
                    run.bridge_total += 1;
                    if run.bridge.len() < MAX_BRIDGE_LISTED {
                        run.bridge.push(BridgeCall { name, ok: res.is_ok() });
                    }
                    let reply = match res {
                        Ok(out) => ToKernel::ToolResult {
                            id: call_id,
                            ok: true,
                            text: Some(out.full_text()),
                            structured: out.full_structured(),
                            images: Some(out.images.len()),
                            error: None,
                            kind: None,
                        },
                        Err(e) => ToKernel::ToolResult {
                            id: call_id,
                            ok: false,
                            text: None,
                            structured: None,
                            images: None,
                            error: Some(e.to_string()),
                            kind: Some(e.kind().to_string()),
                        },
                    };
                    if let Err(e) = self.send(&reply).await {
                        // The kernel is gone; the next message read reports how.
                        tracing::debug!("sending a tool result failed: {e}");
                    }
                }
                _ = tokio::time::sleep_until(idle_deadline), if bridge.is_empty() && stopping.is_none() => {
                    let idle = last_activity.elapsed();
                    tools_core::process::signal_group(self.child.pid(), libc::SIGINT);
                    stopping = Some((Instant::now(), StopReason::Idle(idle)));
                }
                _ = tokio::time::sleep_until(interrupt_at.unwrap_or(far)), if interrupt_at.is_some() => {
                    interrupt_at = None;
                    tools_core::process::signal_group(self.child.pid(), libc::SIGINT);
                }
                _ = tokio::time::sleep_until(grace_deadline), if stopping.is_some() => {
                    self.child.kill();
                    self.in_flight = None;
                    let _ = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
                    run.end = match &stopping {
                        Some((_, StopReason::Idle(idle))) => CellEnd::Killed { idle: *idle, grace: settings.grace },
                        _ => CellEnd::Cancelled { killed: true },
                    };
                    break;
                }
                _ = progress.tick() => {
                    let secs = started.elapsed().as_secs_f64();
                    let msg = if bridge.is_empty() {
                        format!("{} cell running for {secs:.0} s", self.language.name())
                    } else {
                        format!("{} cell running for {secs:.0} s, waiting on {} bridged tool call(s)", self.language.name(), bridge.len())
                    };
                    ctx.progress.report(secs, None, Some(msg));
                }
            }
        }
        run.elapsed = started.elapsed();
        run
    }
}

/// How long a cell blocked in `tool()` has to see its call answered as cancelled before the
/// interrupt arrives (an interrupt first would pre-empt that answer).
const CANCELLED_CALL_HEAD_START: Duration = Duration::from_millis(200);

/// The answer to a bridged call the host gave up on.
fn cancelled_result(id: u64) -> ToKernel {
    ToKernel::ToolResult {
        id,
        ok: false,
        text: None,
        structured: None,
        images: None,
        error: Some(
            "the tool call was cancelled: the eval call that ran this cell was cancelled".into(),
        ),
        kind: Some("cancelled".into()),
    }
}

fn log_suffix(log: &str) -> String {
    let log = log.trim();
    if log.is_empty() {
        String::new()
    } else {
        format!("; its log ends with:\n{log}")
    }
}

/// Decodes one message. The drivers escape text that is not Unicode themselves; a message
/// that still holds some (bytes that are not UTF-8, a lone surrogate escape) is repaired
/// rather than taken as a broken protocol, so the kernel and its state survive any output.
fn decode_message(body: &[u8]) -> Result<FromKernel, String> {
    serde_json::from_slice::<FromKernel>(body).or_else(|e| {
        if tools_core::json_unicode::unicode_problem(body).is_none() {
            return Err(format!("bad message from the kernel: {e}"));
        }
        serde_json::from_str(&tools_core::json_unicode::repair(body))
            .map_err(|e| format!("bad message from the kernel: {e}"))
    })
}

async fn read_messages(receiver: pipe::Receiver, tx: mpsc::Sender<Result<FromKernel, String>>) {
    let mut reader = BufReader::new(receiver);
    loop {
        match tools_core::framing::read_frame_async(&mut reader).await {
            Ok(Some(body)) => {
                let msg = decode_message(&body);
                if tx.send(msg).await.is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                let _ = tx
                    .send(Err(format!("bad frame from the kernel: {e}")))
                    .await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_with_text_that_is_not_unicode_are_repaired_not_fatal() {
        let lone = br#"{"type":"stream","name":"stdout","text":"a\ud800b"}"#;
        assert_eq!(
            decode_message(lone),
            Ok(FromKernel::Stream {
                name: "stdout".into(),
                text: "a\u{fffd}b".into(),
                cut_before: 0
            })
        );
        let bytes = b"{\"type\":\"stream\",\"name\":\"stdout\",\"text\":\"\xff\"}";
        assert!(
            matches!(decode_message(bytes), Ok(FromKernel::Stream { text, .. }) if text == "\u{fffd}")
        );
        assert!(decode_message(br#"{"type":"nonsense"}"#).is_err());
    }
}

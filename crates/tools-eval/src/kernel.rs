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
use tools_core::text::BoundedBuffer;
use tools_core::{CallCtx, Run, ToolError, ToolOutput};

use crate::Language;
use crate::discover::Interpreter;
use crate::image::{BoundedPng, bound_png};
use crate::protocol::{FromKernel, MimeBundle, ToKernel};

const PYTHON_DRIVER: &str = include_str!("drivers/python_kernel.py");
const JS_DRIVER: &str = include_str!("drivers/js_kernel.js");
/// Runs the driver (argv[1]) in its own namespace, so `__main__` stays the user's.
const PYTHON_BOOT: &str = "exec(compile(__import__('sys').argv.pop(1), '<eval-kernel>', 'exec'), {'__name__': '_eval_kernel'})";
/// Most images one cell returns.
pub const MAX_IMAGES: usize = 8;
/// Most bridge calls listed in the structured result.
const MAX_BRIDGE_LISTED: usize = 20;

/// The limits one cell runs under.
#[derive(Debug, Clone)]
pub struct CellSettings {
    /// No output and no bridge call for this long → interrupt.
    pub idle: Duration,
    /// After the interrupt, this long to stop before the kernel is killed.
    pub grace: Duration,
    /// How often a running cell reports progress.
    pub progress_every: Duration,
    /// Output characters kept from the start of the cell.
    pub head: usize,
    /// Output characters kept from the end of the cell.
    pub tail: usize,
}

/// Why a cell stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellEnd {
    /// It ran to the end (successfully or with an exception).
    Finished,
    /// The idle budget ran out and the interrupt stopped it; the kernel's state survived.
    Interrupted {
        /// How long it had been idle.
        idle: Duration,
    },
    /// The idle budget ran out and the interrupt did not stop it within the grace period;
    /// the kernel was killed and its state is lost.
    Killed {
        /// How long it had been idle.
        idle: Duration,
        /// How long it was given after the interrupt.
        grace: Duration,
    },
    /// The caller gave up (or the run closed).
    Cancelled {
        /// Whether the kernel had to be killed (state lost).
        killed: bool,
    },
    /// The kernel died on its own (os._exit, a segfault, an outside kill).
    Crashed {
        /// How it died.
        how: String,
        /// The last lines of its log (fault handler output and the like).
        log: String,
    },
}

impl CellEnd {
    /// Whether the kernel is gone after this cell.
    pub fn kernel_lost(&self) -> bool {
        matches!(
            self,
            CellEnd::Killed { .. } | CellEnd::Crashed { .. } | CellEnd::Cancelled { killed: true }
        )
    }
}

/// An exception raised by the cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellError {
    /// The exception's class.
    pub ename: String,
    /// Its message.
    pub evalue: String,
    /// The trimmed traceback.
    pub traceback: String,
}

/// One bridged call a cell made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BridgeCall {
    /// The tool.
    pub name: String,
    /// Whether it succeeded.
    pub ok: bool,
}

/// What a cell produced.
#[derive(Debug)]
pub struct CellRun {
    output: BoundedBuffer,
    at_line_start: bool,
    /// Images shown, bounded in size and number.
    pub images: Vec<BoundedPng>,
    /// Images left out past [`MAX_IMAGES`] or because they could not be decoded.
    pub images_dropped: usize,
    /// The last expression's value, rendered.
    pub result: Option<String>,
    /// The exception, if it raised.
    pub error: Option<CellError>,
    /// How it ended.
    pub end: CellEnd,
    /// Characters of output the cell produced (as the driver counted them).
    pub output_chars: u64,
    /// Characters of output cut from the middle.
    pub cut_chars: u64,
    /// Bridged calls, in order (capped).
    pub bridge: Vec<BridgeCall>,
    /// How many bridged calls in all.
    pub bridge_total: usize,
    /// Wall time.
    pub elapsed: Duration,
}

impl CellRun {
    fn new(s: &CellSettings) -> Self {
        CellRun {
            // The driver already keeps only head + tail characters; the host keeps a little
            // more (in bytes, for multi-byte text) so memory is bounded even if it did not.
            output: BoundedBuffer::new(s.head * 4 + 256, s.tail * 4 + 256),
            at_line_start: true,
            images: Vec::new(),
            images_dropped: 0,
            result: None,
            error: None,
            end: CellEnd::Finished,
            output_chars: 0,
            cut_chars: 0,
            bridge: Vec::new(),
            bridge_total: 0,
            elapsed: Duration::ZERO,
        }
    }

    /// The cell's output (streams and displays, in order), with a marker where the middle
    /// was cut.
    pub fn output_text(&self) -> String {
        self.output.to_text()
    }

    fn push(&mut self, text: &str) {
        if let Some(last) = text.chars().last() {
            self.at_line_start = last == '\n';
        }
        self.output.push(text.as_bytes());
    }

    fn ensure_newline(&mut self) {
        if !self.at_line_start {
            self.push("\n");
        }
    }

    fn add_bundle(&mut self, data: &MimeBundle) -> String {
        let mut text = String::new();
        if let Some(b64) = data.get("image/png") {
            use base64::Engine;
            match base64::engine::general_purpose::STANDARD.decode(b64.as_bytes()) {
                Ok(bytes) if self.images.len() < MAX_IMAGES => match bound_png(bytes) {
                    Ok(img) => {
                        let n = self.images.len() + 1;
                        text.push_str(&match img.original {
                            Some((w, h)) => format!(
                                "[image {n}: {}x{} PNG, downscaled from {w}x{h}]",
                                img.width, img.height
                            ),
                            None => format!("[image {n}: {}x{} PNG]", img.width, img.height),
                        });
                        self.images.push(img);
                    }
                    Err(e) => {
                        self.images_dropped += 1;
                        text.push_str(&format!("[image left out: {e}]"));
                    }
                },
                Ok(_) => {
                    self.images_dropped += 1;
                    text.push_str(&format!(
                        "[image left out: a cell returns at most {MAX_IMAGES} images]"
                    ));
                }
                Err(e) => {
                    self.images_dropped += 1;
                    text.push_str(&format!("[image left out: bad base64: {e}]"));
                }
            }
        }
        if let Some(md) = data.get("text/markdown") {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(md);
        } else if let Some(plain) = data.get("text/plain")
            && (text.is_empty() || !data.contains_key("image/png"))
        {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(plain);
        }
        text
    }

    fn absorb(&mut self, msg: FromKernel) {
        match msg {
            FromKernel::Stream {
                text, cut_before, ..
            } => {
                if cut_before > 0 {
                    self.ensure_newline();
                    self.push(&format!(
                        "… [cut: {cut_before} characters of output not shown] …\n"
                    ));
                }
                self.push(&text);
            }
            FromKernel::Display { data } => {
                let text = self.add_bundle(&data);
                self.ensure_newline();
                self.push(&text);
                self.push("\n");
            }
            FromKernel::Result { data } => {
                let text = self.add_bundle(&data);
                self.result = Some(text);
            }
            FromKernel::Error {
                ename,
                evalue,
                traceback,
            } => {
                self.error = Some(CellError {
                    ename,
                    evalue,
                    traceback,
                });
            }
            FromKernel::Ready { .. } | FromKernel::ToolCall { .. } | FromKernel::Done { .. } => {}
        }
    }
}

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
                cmd.arg("-e").arg(JS_DRIVER);
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

    /// Runs one cell (magics already rewritten) under `settings`.
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
        let mut bridge: FuturesUnordered<BridgeFuture> = FuturesUnordered::new();
        let mut last_activity = Instant::now();
        let mut stopping: Option<(Instant, StopReason)> = None;
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
                    Some(Ok(FromKernel::Done { status, output_chars, cut_chars })) => {
                        run.output_chars = output_chars;
                        run.cut_chars = cut_chars;
                        run.end = match (&stopping, status.as_str()) {
                            (Some((_, StopReason::Idle(idle))), _) => CellEnd::Interrupted { idle: *idle },
                            (Some((_, StopReason::Cancel)), _) => CellEnd::Cancelled { killed: false },
                            _ => CellEnd::Finished,
                        };
                        break;
                    }
                    Some(Ok(FromKernel::ToolCall { id, name, args })) => {
                        last_activity = Instant::now();
                        let invoker = ctx.invoker.clone();
                        let progress = ctx.progress.clone();
                        bridge.push(Box::pin(async move {
                            let res = invoker.call_with_progress(&name, args, progress).await;
                            (id, name, res)
                        }));
                    }
                    Some(Ok(other)) => {
                        last_activity = Instant::now();
                        run.absorb(other);
                    }
                },
                Some((call_id, name, res)) = bridge.next(), if !bridge.is_empty() => {
                    last_activity = Instant::now();
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
                _ = ctx.cancel.cancelled(), if stopping.is_none() => {
                    // Dropping the pending bridge futures cancels those calls too.
                    bridge = FuturesUnordered::new();
                    tools_core::process::signal_group(self.child.pid(), libc::SIGINT);
                    stopping = Some((Instant::now(), StopReason::Cancel));
                }
                _ = tokio::time::sleep_until(grace_deadline), if stopping.is_some() => {
                    self.child.kill();
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

fn log_suffix(log: &str) -> String {
    let log = log.trim();
    if log.is_empty() {
        String::new()
    } else {
        format!("; its log ends with:\n{log}")
    }
}

async fn read_messages(receiver: pipe::Receiver, tx: mpsc::Sender<Result<FromKernel, String>>) {
    let mut reader = BufReader::new(receiver);
    loop {
        match tools_core::framing::read_frame_async(&mut reader).await {
            Ok(Some(body)) => {
                let msg = serde_json::from_slice::<FromKernel>(&body)
                    .map_err(|e| format!("bad message from the kernel: {e}"));
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

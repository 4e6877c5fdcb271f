//! One kernel: an interpreter child process running a driver shipped in this crate.
//!
//! The job is split by concern: [`start`] builds the process and installs its pipes,
//! [`channel`] carries the framed protocol over them, and [`execute`] runs one cell (output,
//! bridged calls, idle budget, cancel). This module holds the process itself: waiting for
//! the driver to be ready, telling how it died, and shutting it down.

pub(crate) mod channel;
mod execute;
#[cfg(all(test, unix))]
mod named_channel_tests;
mod start;

use std::sync::Arc;
use std::time::Duration;

use tools_core::platform::Interrupter;
use tools_core::process::ChildProcess;
use tools_core::{Run, ToolError};

use crate::Language;
use crate::cell::CellEnd;
use crate::discover::Interpreter;
use crate::protocol::{FromKernel, ToKernel};
use channel::KernelChannel;
use start::{describe_exit, log_suffix};

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
    /// Whether IPython is importable in the kernel's interpreter (so magics and display go
    /// through IPython's own machinery).
    pub ipython: bool,
    child: ChildProcess,
    channel: KernelChannel,
    interrupter: Interrupter,
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
        self.child.kill();
    }
}

impl KernelProcess {
    /// Starts a kernel and waits for its driver to say it is ready.
    pub async fn start(
        run: &Arc<Run>,
        language: Language,
        interpreter: Interpreter,
        start_timeout: Duration,
    ) -> Result<Self, ToolError> {
        let started = start::spawn(run, language, &interpreter)?;
        let mut child = started.child;
        let deadline = tokio::time::Instant::now() + start_timeout;
        // On Windows the driver opens its channel by name: a driver that dies or hangs
        // before it does must not hold the start up.
        let ends = tokio::select! {
            ends = started.channel.connect(child.pid()) => ends.map_err(|e| {
                ToolError::internal(format!(
                    "the {} kernel's channel could not be opened: {e}",
                    language.name()
                ))
            })?,
            status = child.wait() => {
                return Err(ended_while_starting(language, &interpreter, &child, status.ok()).await);
            }
            _ = tokio::time::sleep_until(deadline) => {
                return Err(ToolError::timed_out(format!(
                    "the {} kernel ({}) did not open its channel within {:.0} s{}",
                    language.name(),
                    interpreter.path.display(),
                    start_timeout.as_secs_f64(),
                    log_suffix(&child.stderr().last_lines(15)),
                )));
            }
        };
        let channel = KernelChannel::new(ends.commands, ends.messages);
        let mut kernel = KernelProcess {
            language,
            interpreter,
            version: String::new(),
            executable: String::new(),
            ipython: false,
            child,
            channel,
            interrupter: ends.interrupter,
            next_id: 1,
            in_flight: None,
            bridge_waiting: Vec::new(),
        };
        let ready = tokio::time::timeout_at(deadline, kernel.channel.recv()).await;
        match ready {
            Ok(Some(Ok(FromKernel::Ready {
                version,
                executable,
                ipython,
                language: _,
            }))) => {
                kernel.version = version;
                kernel.ipython = ipython;
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
                Err(
                    ended_while_starting(language, &kernel.interpreter, &kernel.child, status)
                        .await,
                )
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

    /// Asks the kernel to exit, then makes sure it has (kills its group after `grace`).
    pub async fn shutdown(mut self, grace: Duration) {
        let _ = tokio::time::timeout(grace, self.channel.send(&ToKernel::Shutdown)).await;
        self.child.shutdown(grace).await;
    }

    /// How the kernel ended, once its channel closed during a cell.
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
}

/// The error for a kernel process that ended before its driver was ready: how it ended and
/// the end of its log, once the log has had a moment to take its last lines.
async fn ended_while_starting(
    language: Language,
    interpreter: &Interpreter,
    child: &ChildProcess,
    status: Option<std::process::ExitStatus>,
) -> ToolError {
    tokio::time::sleep(Duration::from_millis(50)).await;
    ToolError::not_available(format!(
        "the {} kernel ({}, {}) {} while starting{}",
        language.name(),
        interpreter.path.display(),
        interpreter.why,
        describe_exit(status),
        log_suffix(&child.stderr().last_lines(15)),
    ))
}
